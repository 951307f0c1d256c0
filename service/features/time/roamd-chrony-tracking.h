/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* chronyd's tracking report (REQ_TRACKING, roamd-chrony-cmd.h) as a time sample of kind
 * chrony, witness "ntp" (docs/time.md, "Sources"). Pure: the clocks' readings are given. */

#include <stddef.h>

#include "roamd-chrony-cmd.h"
#include "roamd-time-sample.h"

/* The refid of roamd's own reference clock in chronyd (data/examples/chrony/roam.conf:
 * `refclock SOCK /run/chrony.roam.sock refid ROAM`). */
#define CHRONY_REFID_ROAM 0x524F414DU
/* chronyd's refid while it serves its own clock (`local stratum N`): "LOCL" as 127.127.1.1 */
#define CHRONY_REFID_LOCAL 0x7F7F0101U
/* Beyond this root distance (root delay / 2 + root dispersion) the report is refused: NTP's
 * own MAXDIST (RFC 5905); chronyd selects no source beyond its maxdistance of 3 s. */
#define CHRONY_MAX_DISTANCE_USEC ((usec_t)16000000)

/* The sample for the report that came between the realtime clock's reading sent_realtime and
 * realtime_now (boottime_now then): the true time lies within the clock's reading + chronyd's
 * current correction. -EINVAL: refused, with the reason in words. The origin is left empty:
 * the caller knows chronyd's socket. */
int chrony_tracking_to_sample(const ChronyTracking *t, usec_t sent_realtime, usec_t realtime_now,
                              usec_t boottime_now, TimeSample *ret, char *reason, size_t size);

/* The reference in words for the user: "192.0.2.1, stratum 3" or "GPS, stratum 1". */
const char *chrony_tracking_reference(const ChronyTracking *t, char *buf, size_t size);

/* What roamd learns from chronyd's sources (REQ_SOURCE_DATA, one by one): how its own
 * reference clock (refid ROAM) takes part in chronyd's time, and the NTP sources. */
typedef struct ChronySources {
        ChronySourceState roam; /* roamd's refclock; _CHRONY_SOURCE_STATE_INVALID: none */
        unsigned ntp;           /* NTP servers and peers */
        unsigned ntp_used;      /* of them selected or combined */
} ChronySources;

#define CHRONY_SOURCES_NONE ((ChronySources){.roam = _CHRONY_SOURCE_STATE_INVALID})

/* Adds one source to what is known. */
void chrony_sources_add(ChronySources *s, const ChronySource *src);

/* Whether chronyd's tracking is a witness beside roamd, given its sources: -EINVAL with the
 * reason in words when roamd's own reference clock is selected or combined (docs/time.md). */
int chrony_sources_check(const ChronySources *s, char *reason, size_t size);

/* The sources in words for the sample's origin: "1 NTP source" or "3 NTP sources, 2 used". */
const char *chrony_sources_to_string(const ChronySources *s, char *buf, size_t size);
