/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* gpsd's JSON protocol (https://gpsd.io/gpsd_json.html), the part roamd reads: the daemon's
 * address and a TPV report's fix time as a time sample of kind gnss (docs/time.md). Pure:
 * the clock's reading is given. */

#include <stddef.h>
#include <sys/socket.h>

#include "roamd-time-sample.h"

#define GPSD_WITNESS  "gnss"
#define GPSD_WATCH    "?WATCH={\"enable\":true,\"json\":true};\n"
#define GPSD_LINE_MAX 8192 /* longer lines (a SKY of many satellites) are skipped */
/* the time between the fix and its TPV reaching roamd: the serial line and gpsd's cycle */
#define GPSD_LATENCY_USEC ((usec_t)500000)
#define GPSD_EPT_DEFAULT  ((usec_t)1000000) /* a TPV without ept */

/* "127.0.0.1:2947" or "[::1]:2947": numeric only, so that connecting never resolves (and
 * never blocks). -EINVAL otherwise. */
int gpsd_address_parse(const char *s, struct sockaddr_storage *ret, socklen_t *ret_len);

/* One line of gpsd's (without its newline) received at boottime_now. 0: a TPV with a 2D/3D
 * fix and its time, *ret filled (no origin); -ENODATA: nothing to take (another class, no
 * fix, no time); -EINVAL: refused, the reason in words. */
int gpsd_tpv_to_sample(const char *line, size_t len, usec_t boottime_now, TimeSample *ret,
                       char *reason, size_t size);
