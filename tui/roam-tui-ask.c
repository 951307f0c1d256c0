/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-tui-internal.h"
#include "roam-util.h"

/* A question that comes by itself (the first-join question, a Bluetooth pairing, an NFC tag)
 * takes no key for this long after it first shows: keys typed for the screen below (a "3"
 * then "/chrome" right after start) must not answer it. One second is longer than a burst of
 * typing runs on after the eye sees a dialog, and short enough not to feel stuck. */
#define QUESTION_GRACE_USEC (1 * USEC_PER_SEC)

static int on_grace_over(sd_event_source *s, uint64_t usec, void *userdata)
{
        Tui *t = userdata;

        tui_grace_end(t);
        return 0;
}

void tui_grace_end(Tui *t)
{
        TuiAsk *a = tui_ask(t);

        if (!a->grace_id || a->grace_over)
                return;
        a->grace_over = true;
        (void)sd_event_source_set_enabled(a->grace_timer, SD_EVENT_OFF);
        log_debug("Question %s: grace period over, its keys work now.", a->grace_id);
        tui_request_redraw(t);
}

bool tui_question_settling(Tui *t, const char *id)
{
        TuiAsk *a = tui_ask(t);
        int r;

        if (streq_ptr(a->grace_id, id)) {
                a->frame_settling |= !a->grace_over;
                return !a->grace_over;
        }
        if (free_and_strdup(&a->grace_id, id) < 0) {
                log_oom();
                return true;
        }
        a->grace_over = false;
        /* A frozen clock (screenshot tests) ends the grace only when the test says so
         * (SIGUSR1: tui_grace_end()), so no test sleeps and none races the clock. */
        if (tui_clock_frozen(t))
                return (a->frame_settling = true);
        if (!a->grace_timer)
                r = sd_event_add_time_relative(tui_event(t), &a->grace_timer, CLOCK_MONOTONIC,
                                               QUESTION_GRACE_USEC, 0, on_grace_over, t);
        else {
                r = sd_event_source_set_time_relative(a->grace_timer, QUESTION_GRACE_USEC);
                if (r >= 0)
                        r = sd_event_source_set_enabled(a->grace_timer, SD_EVENT_ONESHOT);
        }
        if (r < 0) {
                /* Without a timer the question would never take keys: no grace then. */
                log_debug_errno(r, "Cannot arm the question's grace timer: %m");
                a->grace_over = true;
        }
        a->frame_settling |= !a->grace_over;
        return !a->grace_over;
}

void tui_ask_done(TuiAsk *a)
{
        if (!a)
                return;
        a->grace_timer = sd_event_source_disable_unref(a->grace_timer);
        free(a->grace_id);
        *a = (TuiAsk){};
}
