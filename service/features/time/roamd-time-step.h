/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether to step the clock to the agreed time (docs/time.md "Setting the clock"); pure, no
 * clock reads: roamd-time-clock.c asks it and talks to timedated. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roam-words.h"
#include "roamd-time.h"

/* The clock is left alone while it lies within the bound's error plus this. */
#define TIME_CLOCK_SLACK_USEC (1 * TIME_USEC_PER_SEC)

/* The states said on the bus are the shared words' (roam-words.h, RoamClockState); PENDING is
 * roamd's own. */
typedef enum TimeClockState {
        TIME_CLOCK_STEPPED = ROAM_CLOCK_STEPPED,
        TIME_CLOCK_OFF = ROAM_CLOCK_OFF,
        TIME_CLOCK_UNSETTLED = ROAM_CLOCK_UNSETTLED,
        TIME_CLOCK_AGREES = ROAM_CLOCK_AGREES,
        TIME_CLOCK_LOWER_BOUND = ROAM_CLOCK_LOWER_BOUND,
        TIME_CLOCK_DAEMON = ROAM_CLOCK_DAEMON,
        TIME_CLOCK_NO_TIMEDATED = ROAM_CLOCK_NO_TIMEDATED,
        TIME_CLOCK_REFUSED = ROAM_CLOCK_REFUSED,
        TIME_CLOCK_PENDING = _ROAM_CLOCK_STATE_MAX, /* the decision: step (never on the bus) */
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
