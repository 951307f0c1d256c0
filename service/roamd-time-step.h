/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether to step the clock to the agreed time (docs/time.md "Setting the clock"); pure, no
 * clock reads: roamd-time-clock.c asks it and talks to timedated. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-time.h"

/* The clock is left alone while it lies within the bound's error plus this. */
#define TIME_CLOCK_SLACK_USEC (1 * TIME_USEC_PER_SEC)

typedef enum TimeClockState {
        TIME_CLOCK_STEPPED,      /* the clock was stepped to the agreed time */
        TIME_CLOCK_OFF,          /* SetClock=no */
        TIME_CLOCK_UNSETTLED,    /* the time is not settled */
        TIME_CLOCK_AGREES,       /* the clock lies within the threshold */
        TIME_CLOCK_LOWER_BOUND,  /* the step would go before the saved lower bound */
        TIME_CLOCK_DAEMON,       /* a clock daemon keeps the clock */
        TIME_CLOCK_NO_TIMEDATED, /* timedated is not there (or no system bus) */
        TIME_CLOCK_REFUSED,      /* timedated refused SetTime */
        TIME_CLOCK_PENDING,      /* the decision: step (never the state said on the bus) */
        _TIME_CLOCK_STATE_MAX,
        _TIME_CLOCK_STATE_INVALID = -EINVAL,
} TimeClockState;

const char *time_clock_state_to_string(TimeClockState s);
TimeClockState time_clock_state_from_string(const char *s);

/* Pure: what to do with the clock now. The agreed bound (settled), the clock's reading and
 * the saved lower bound (0: none) in; TIME_CLOCK_PENDING (step to *ret_target) or a refusal,
 * with its words in `reason`. */
TimeClockState time_clock_decide(bool settled, usec_t bound, usec_t error, usec_t clock,
                                 usec_t lower_bound, usec_t *ret_target, char *reason, size_t size);

/* A signed span in words: "+1.250 s", "-60 min". */
const char *time_signed_span_words(int64_t d, char *buf, size_t size);
