/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>

#include "roam-macro.h"
#include "roamd-time-step.h"

const char *time_clock_state_to_string(TimeClockState s)
{
        return s == TIME_CLOCK_PENDING ? "pending" : roam_clock_state_to_string((RoamClockState)s);
}

TimeClockState time_clock_state_from_string(const char *s)
{
        if (s && streq(s, "pending"))
                return TIME_CLOCK_PENDING;
        return (TimeClockState)roam_clock_state_from_string(s);
}

const char *time_signed_span_words(int64_t d, char *buf, size_t size)
{
        char a[32];

        snprintf(buf, size, "%s%s", d < 0 ? "-" : "+",
                 time_span_words(d < 0 ? (usec_t)-d : (usec_t)d, a, sizeof(a)));
        return buf;
}

TimeClockState time_clock_decide(bool settled, usec_t bound, usec_t error, usec_t clock,
                                 usec_t lower_bound, usec_t *ret_target, char *reason, size_t size)
{
        int64_t off = (int64_t)(bound - clock);
        usec_t dist = off < 0 ? (usec_t)-off : (usec_t)off;
        char a[32], b[32], c[40];

        if (!settled) {
                snprintf(reason, size, "the time is not settled");
                return TIME_CLOCK_UNSETTLED;
        }
        if (dist <= error + TIME_CLOCK_SLACK_USEC) {
                snprintf(reason, size,
                         "the clock is %s from the agreed time, within its ± %s and 1 s",
                         time_signed_span_words(-off, a, sizeof(a)),
                         time_span_words(error, b, sizeof(b)));
                return TIME_CLOCK_AGREES;
        }
        /* The consensus cuts its bound at the lower bound already; said here once more, as
         * the one rule a step must never break. */
        if (lower_bound > 0 && bound < lower_bound) {
                snprintf(reason, size,
                         "the agreed time is %s earlier than the last known good time %s",
                         time_span_words(lower_bound - bound, a, sizeof(a)),
                         time_format_utc(lower_bound, c, sizeof(c)));
                return TIME_CLOCK_LOWER_BOUND;
        }
        snprintf(reason, size, "the clock is %s from the agreed time, beyond its ± %s and 1 s",
                 time_signed_span_words(-off, a, sizeof(a)), time_span_words(error, b, sizeof(b)));
        *ret_target = bound;
        return TIME_CLOCK_PENDING;
}
