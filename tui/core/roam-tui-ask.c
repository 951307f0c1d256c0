/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-tui-internal.h"
#include "roam-tui.h"
#include "roam-util.h"

/* A question that comes by itself (the first-join question, a Bluetooth pairing, an NFC tag)
 * takes no key for this long after it first shows: keys typed for the screen below (a "3"
 * then "/chrome" right after start) must not answer it. One second is longer than a burst of
 * typing runs on after the eye sees a dialog, and short enough not to feel stuck. */
#define QUESTION_GRACE_USEC (1 * USEC_PER_SEC)

static void confirm_close(TuiAsk *a);

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
        confirm_close(a);
        *a = (TuiAsk){};
}

/* The y/N question before a destructive action. It comes from the person's own key, so it
 * needs no grace period; only y acts, so no key typed ahead can do harm. */
static void confirm_close(TuiAsk *a)
{
        free(a->confirm_question);
        free(a->confirm_subject);
        free(a->confirm_not_done);
        free(a->confirm_grace_id);
        a->confirm_question = a->confirm_subject = a->confirm_not_done = NULL;
        a->confirm_grace_id = NULL;
        a->confirm_yes = NULL;
        a->confirm_userdata = NULL;
}

int tui_confirm(Tui *t, const char *subject, TuiConfirmFn yes, void *userdata, const char *question,
                const char *not_done)
{
        TuiAsk *a = tui_ask(t);
        char *q = NULL;

        confirm_close(a);
        if (asprintf(&q, "%s (y/N)", question) < 0)
                return -ENOMEM;
        a->confirm_question = q;
        a->confirm_subject = strdup(subject);
        a->confirm_not_done = strdup(not_done);
        if (!a->confirm_subject || !a->confirm_not_done) {
                confirm_close(a);
                return -ENOMEM;
        }
        a->confirm_yes = yes;
        a->confirm_userdata = userdata;
        log_debug("Asking: %s", question);
        return REACTION_REDRAW;
}

int tui_confirm_deliberate(Tui *t, const char *subject, TuiConfirmFn yes, void *userdata,
                           const char *question, const char *not_done)
{
        TuiAsk *a = tui_ask(t);
        int r;

        r = tui_confirm(t, subject, yes, userdata, question, not_done);
        if (r < 0)
                return r;
        if (asprintf(&a->confirm_grace_id, "confirm:%u", ++a->confirm_count) < 0) {
                confirm_close(a);
                return -ENOMEM;
        }
        (void)tui_question_settling(t, a->confirm_grace_id); /* its grace starts now */
        return r;
}

bool tui_confirm_is_deliberate(Tui *t)
{
        return tui_ask(t)->confirm_grace_id;
}

bool tui_confirm_settling(Tui *t)
{
        TuiAsk *a = tui_ask(t);

        return a->confirm_grace_id && tui_question_settling(t, a->confirm_grace_id);
}

const char *tui_confirm_question(Tui *t)
{
        return tui_ask(t)->confirm_question;
}

const KeyHelp *tui_confirm_keys(Tui *t)
{
        static const KeyHelp keys[] = {
            {"y", "yes", "Do it"},
            {"n", "no", "Do not (also Esc, Enter or any other key)"},
            {},
        };

        return tui_ask(t)->confirm_question ? keys : NULL;
}

int tui_confirm_key(Tui *t, int key)
{
        TuiAsk *a = tui_ask(t);
        _cleanup_free_ char *subject = NULL, *not_done = NULL;
        TuiConfirmFn yes = a->confirm_yes;
        void *userdata = a->confirm_userdata;
        bool deliberate;

        if (!a->confirm_question)
                return REACTION_UNHANDLED;
        /* Resizes and redraws are the terminal's, not an answer. */
        if (key == TUI_KEY(KEY_RESIZE) || key == 12 /* Ctrl-L */)
                return REACTION_UNHANDLED;
        /* A key typed ahead of a deliberate question answers nothing, but no: n or Esc is never
         * harmful, and the user who just asked to quit may change their mind at once. */
        if (tui_confirm_settling(t) && key != 'n' && key != 'N' && key != TUI_KEY_ESCAPE)
                return REACTION_NONE;
        deliberate = a->confirm_grace_id;
        subject = TAKE_PTR(a->confirm_subject);
        not_done = TAKE_PTR(a->confirm_not_done);
        confirm_close(a);
        if (key == 'y' || key == 'Y')
                return yes(t, userdata, subject);
        tui_message(t, THEME_STATUS, "%s", not_done);
        /* The hint bar keeps "? help" and "q quit": they answer no and still do their part;
         * a deliberate question (quitting) offers neither: they answer no, and that is all. */
        if (deliberate)
                return REACTION_REDRAW;
        if (key == 'q' || key == 'Q' || key == '?' || key == TUI_KEY(KEY_F(1)) ||
            key == TUI_KEY(KEY_F(10)))
                return REACTION_UNHANDLED;
        return REACTION_REDRAW;
}
