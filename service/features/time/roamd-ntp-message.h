/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* systemd-timesyncd's last NTP packet (org.freedesktop.timesync1's NTPMessage) as a time
 * sample (docs/time.md, "Sources"). Pure: the clocks' readings are given. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-time-sample.h"

/* timesyncd steps the clock beyond this offset and slews below it (its NTP_MAX_ADJUST). */
#define NTP_MAX_ADJUST_USEC ((usec_t)400000)

typedef struct NtpMessage {
        uint32_t leap, version, mode, stratum;
        int32_t precision;                  /* log2 seconds */
        usec_t root_delay, root_dispersion; /* µs */
        /* T1 origin and T4 destination: the local clock at send and receipt; T2 receive and
         * T3 transmit: the server's clock (µs since the epoch) */
        usec_t origin, receive, transmit, destination;
        bool spike;
        uint64_t packet_count;
        usec_t jitter;
} NtpMessage;

/* The sample (kind ntp, witness "ntp", no origin) for the realtime and boottime clocks read
 * now. -ENODATA: no packet yet; -EINVAL: refused, with the reason in words. */
int ntp_message_to_sample(const NtpMessage *m, usec_t root_distance_max, usec_t realtime_now,
                          usec_t boottime_now, TimeSample *ret, char *reason, size_t size);
