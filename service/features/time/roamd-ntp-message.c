/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "roamd-ntp-message.h"

#define USEC_PER_SEC_NTP ((usec_t)1000000)
/* 2200-01-01; a day: far beyond what a sane packet says, far below what overflows */
#define NTP_MAX_TIME_USEC (7258118400ULL * USEC_PER_SEC_NTP)
#define NTP_MAX_SPAN_USEC (86400ULL * USEC_PER_SEC_NTP)

static int refuse(char *reason, size_t size, const char *why)
{
        snprintf(reason, size, "%s", why);
        return -EINVAL;
}

int ntp_message_to_sample(const NtpMessage *m, usec_t root_distance_max, usec_t realtime_now,
                          usec_t boottime_now, TimeSample *ret, char *reason, size_t size)
{
        int64_t t1 = (int64_t)m->origin, t2 = (int64_t)m->receive, t3 = (int64_t)m->transmit,
                t4 = (int64_t)m->destination, theta, delta, elapsed;
        usec_t error, ambiguity, precision, distance;

        if (m->destination == 0 || m->packet_count == 0)
                return -ENODATA;
        if (m->leap == 3)
                return refuse(reason, size, "the server's clock is not synchronised (leap 3)");
        if (m->mode != 4)
                return refuse(reason, size, "not a server's answer (mode is not 4)");
        if (m->stratum == 0 || m->stratum > 15)
                return refuse(reason, size, "the server's stratum is not 1 to 15");
        if (m->spike)
                return refuse(reason, size, "timesyncd called the packet a spike");
        /* outside text: every value in range before any arithmetic */
        if (m->origin > NTP_MAX_TIME_USEC || m->receive > NTP_MAX_TIME_USEC ||
            m->transmit > NTP_MAX_TIME_USEC || m->destination > NTP_MAX_TIME_USEC ||
            realtime_now > NTP_MAX_TIME_USEC || m->root_delay > NTP_MAX_SPAN_USEC ||
            m->root_dispersion > NTP_MAX_SPAN_USEC || m->jitter > NTP_MAX_SPAN_USEC)
                return refuse(reason, size, "its values are out of range");
        if (t1 == 0 || t2 == 0 || t3 == 0 || t4 < t1 || t3 < t2)
                return refuse(reason, size, "its timestamps are out of order");
        /* RFC 5905: the offset and the round trip less the server's own time */
        theta = ((t2 - t1) + (t3 - t4)) / 2;
        delta = (t4 - t1) - (t3 - t2);
        if (delta < 0)
                delta = 0;
        distance = m->root_delay / 2 + m->root_dispersion + (usec_t)delta / 2;
        if (root_distance_max > 0 && distance > root_distance_max)
                return refuse(reason, size, "its root distance is beyond timesyncd's maximum");
        precision = m->precision >= 0 || m->precision < -40
                        ? USEC_PER_SEC_NTP
                        : USEC_PER_SEC_NTP >> (unsigned)-m->precision;
        /* When this packet came the true time was T4 + θ. timesyncd stepped the clock by θ
         * then (beyond NTP_MAX_ADJUST) or slews it by θ: the time since is the clock now less
         * T4 + θ, uncertain by θ while it slews. */
        ambiguity = (usec_t)(theta < 0 ? -theta : theta);
        if (ambiguity > NTP_MAX_ADJUST_USEC)
                ambiguity = 0;
        elapsed = (int64_t)realtime_now - (t4 + theta);
        if (elapsed < 0 && (usec_t)-elapsed <= ambiguity)
                elapsed = 0;
        if (elapsed < 0 || (usec_t)elapsed > boottime_now)
                return refuse(reason, size, "the packet is from the future of the clock");
        error = distance + precision + m->jitter + ambiguity;
        *ret = (TimeSample){
            .kind = TIME_SOURCE_NTP,
            .realtime = (usec_t)(t4 + theta),
            .error = error,
            .taken = boottime_now - (usec_t)elapsed,
        };
        snprintf(ret->witness, sizeof(ret->witness), "ntp");
        return 0;
}
