/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-format.h"
#include "roam-screens.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-words.h"

/* The ordered wake-up (docs/wake.md), key w on the overview: the queue's state in words, the
 * period, the time gate when it holds the queue, then every wake-listed app in turn order
 * with its priority, its state and why in words and how long it has waited or been awake.
 * Drawn from the live model (PropertiesChanged and App.Wake redraw it; the ages move with the
 * TUI's refresh timer, nothing polls). + and - move the selected app a place up or down by
 * giving it a priority past its neighbour's (SetAppPolicy wake=N, as `roam app ID set
 * wake=N`), n starts its turn now (WakeNow); roamd's answer is said on the status line. */

typedef struct WakeData {
        char *selected; /* the selected app's ID: the selection follows it when it moves */
        int scroll;
} WakeData;

#define COL_PRIO  5
#define COL_STATE 9
#define COL_FOR   8

static int selected_index(const WakeData *d, const RoamApp **v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(v[i]->id, d->selected))
                        return (int)i;
        return n > 0 ? 0 : -1;
}

static int select_app(WakeData *d, const RoamApp *a)
{
        char *id = strdup(a->id);

        if (!id)
                return -ENOMEM;
        free(d->selected);
        d->selected = id;
        return 0;
}

static ThemeRole state_role(const char *state)
{
        switch (roam_wake_from_string(state)) {
        case ROAM_WAKE_AWAKE:
                return THEME_OK;
        case ROAM_WAKE_WAITING:
        case ROAM_WAKE_OPENING:
                return THEME_WARNING;
        case ROAM_WAKE_DONE:
        case _ROAM_WAKE_MAX:
        case _ROAM_WAKE_INVALID:
                break;
        }
        return THEME_MUTED;
}

/* How long it has waited or been awake ("1m"), or when its turn ended ("3m ago"); the TUI's
 * refresh timer redraws when the text changes. */
static void how_long(Tui *t, const RoamApp *a, uint64_t now, char *buf, size_t size)
{
        uint64_t next;
        size_t len;

        if (a->wake_since == 0) {
                snprintf(buf, size, "-");
                return;
        }
        roam_format_age(a->wake_since, now, buf, size, &next);
        tui_refresh_in(t, next);
        len = strlen(buf);
        if (roam_wake_from_string(a->wake_state) != ROAM_WAKE_DONE && len > 4 &&
            streq(buf + len - 4, " ago"))
                buf[len - 4] = 0;
}

static int add_head(Tui *t, TuiDoc *doc, const RoamModel *m, size_t n)
{
        bool holds = streq(m->wake_queue, "time");
        int r;

        r = tui_doc_line(doc, -1, 2);
        if (r >= 0)
                r = tui_doc_spanf(doc, streq(m->wake_queue, "running") ? THEME_OK : THEME_TITLE, 0,
                                  "Wake queue: %s", roam_wake_queue_words(m->wake_queue));
        if (r >= 0 && (holds || (!m->time_gate && *m->time_gate_reason))) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_spanf(doc, holds ? THEME_WARNING : THEME_MUTED, 0,
                                          "Time gate %s: %s", m->time_gate ? "open" : "closed",
                                          *m->time_gate_reason ? m->time_gate_reason
                                                               : "roamd gave no reason");
        }
        if (r >= 0)
                r = tui_doc_line(doc, -1, 2);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "Period %" PRIu64 ", %zu app%s listed",
                                  m->wake_period, n, n == 1 ? "" : "s");
        return r;
}

static int add_row(Tui *t, TuiDoc *doc, const RoamApp *a, int item, uint64_t now)
{
        _cleanup_free_ char *id = NULL;
        bool narrow = tui_columns(t) < 64;
        int why_w, id_w, r;
        char prio[8], age[32];

        how_long(t, a, now, age, sizeof(age));
        snprintf(prio, sizeof(prio), "%d", a->wake);
        if (narrow) {
                /* Two lines: the rank and the whole ID, then the state, how long and why. */
                id_w = MAX(8, tui_columns(t) - 2 - COL_PRIO);
                r = roam_text_cut_middle(a->id, (size_t)id_w, tui_utf8(t), &id);
                if (r < 0)
                        return r;
                r = tui_doc_line(doc, item, COL_PRIO);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_NORMAL, COL_PRIO, prio);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_NORMAL, 0, id);
                if (r >= 0)
                        r = tui_doc_line(doc, item, COL_PRIO);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_NORMAL, COL_PRIO, "");
                if (r >= 0)
                        r = tui_doc_spanf(doc, state_role(a->wake_state), 0, "%s %s", a->wake_state,
                                          age);
                if (r >= 0 && *a->wake_reason)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, ": %s",
                                          roam_wake_reason_words(a->wake_reason));
                return r;
        }
        id_w = (tui_columns(t) - 2 - COL_PRIO - COL_STATE - COL_FOR) * 45 / 100;
        why_w = tui_columns(t) - 2 - COL_PRIO - id_w - 1 - COL_STATE - COL_FOR;
        r = roam_text_cut_middle(a->id, (size_t)id_w, tui_utf8(t), &id);
        if (r < 0)
                return r;
        r = tui_doc_line(doc, item, 2 + COL_PRIO + id_w + 1 + COL_STATE);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, COL_PRIO, prio);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, id_w + 1, id);
        if (r >= 0)
                r = tui_doc_span(doc, state_role(a->wake_state), COL_STATE, a->wake_state);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, why_w,
                                 *a->wake_reason ? roam_wake_reason_words(a->wake_reason) : "");
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%*s", COL_FOR, age);
        return r;
}

static int build(Tui *t, WakeData *d, TuiDoc *doc, const RoamApp **v, size_t n)
{
        const RoamModel *m = tui_model(t);
        uint64_t now = roam_now();
        int r, id_w;

        if (!*m->wake_queue) {
                r = tui_doc_line(doc, -1, 2);
                return r < 0 ? r
                             : tui_doc_span(doc, THEME_MUTED, 0,
                                            "This roamd has no ordered wake-up (WakeQueue).");
        }
        r = add_head(t, doc, m, n);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && n == 0) {
                r = tui_doc_line(doc, -1, 2);
                return r < 0 ? r
                             : tui_doc_span(doc, THEME_MUTED, 0,
                                            "No app is wake-listed. Give one a priority: roam "
                                            "app ID set wake=80.");
        }
        if (r >= 0 && tui_columns(t) >= 64) {
                id_w = (tui_columns(t) - 2 - COL_PRIO - COL_STATE - COL_FOR) * 45 / 100;
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_PRIO, "Prio");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, id_w + 1, "App");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_STATE, "State");
                if (r >= 0)
                        r = tui_doc_span(
                            doc, THEME_TITLE,
                            tui_columns(t) - 2 - COL_PRIO - id_w - 1 - COL_STATE - COL_FOR, "Why");
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_TITLE, 0, "%*s", COL_FOR, "For");
        }
        for (size_t i = 0; i < n && r >= 0; i++)
                r = add_row(t, doc, v[i], (int)i, now);
        return r;
}

static void wake_draw(Tui *t, Screen *s, int top, int height)
{
        WakeData *d = s->data;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;
        _cleanup_free_ const RoamApp **v = NULL;
        size_t n;

        v = roam_model_wake_order(tui_model(t), &n);
        if (tui_doc_new(&doc) < 0 || build(t, d, doc, v, n) < 0)
                return;
        tui_doc_draw(t, doc, top, height, selected_index(d, v, n), &d->scroll);
}

/* A priority that moves the app one place: past its neighbour's (up: one more, down: one
 * less), within 0-100. -ERANGE when the bound is reached (a tie at 100 or 0 cannot be
 * broken by priority). */
static int move_priority(const RoamApp **v, size_t n, int i, int direction)
{
        int to = i + direction, want;

        if (to < 0 || to >= (int)n)
                return -EDOM; /* first or last already */
        want = v[to]->wake + (direction < 0 ? 1 : -1);
        if (want > 100 || want < 0)
                return -ERANGE;
        return want;
}

static int ask_result(Tui *t, const RoamApp *a, const char *action, int r)
{
        if (r == -ENOENT)
                tui_message(t, THEME_WARNING, "%s is gone.", a->id);
        else if (r < 0)
                tui_message(t, THEME_ERROR, "Cannot ask roamd to change %s: %s", a->id,
                            strerror(-r));
        else
                tui_message(t, THEME_STATUS, "Asking roamd: %s %s%s", a->id, action,
                            tui_glyph_ellipsis(t));
        return REACTION_REDRAW;
}

static int move_app(Tui *t, const RoamApp **v, size_t n, int i, int direction)
{
        const RoamApp *a = v[i];
        char setting[16], action[48];
        char *settings[] = {setting, NULL};
        int want = move_priority(v, n, i, direction);

        if (want == -EDOM) {
                tui_message(t, THEME_WARNING, "%s is %s in the queue already.", a->id,
                            direction < 0 ? "first" : "last");
                return REACTION_REDRAW;
        }
        if (want < 0) {
                tui_message(t, THEME_WARNING,
                            "Cannot move %s past %s: it has priority %d, the %s there is.", a->id,
                            v[i + direction]->id, v[i + direction]->wake,
                            direction < 0 ? "highest" : "lowest");
                return REACTION_REDRAW;
        }
        snprintf(setting, sizeof(setting), "wake=%d", want);
        snprintf(action, sizeof(action), "wake priority %d", want);
        return ask_result(t, a, action,
                          roam_live_set_app_policy(tui_live(t), a->id, settings, action));
}

static int wake_key(Tui *t, Screen *s, int key)
{
        WakeData *d = s->data;
        _cleanup_free_ const RoamApp **v = NULL;
        bool handled;
        size_t n;
        int i;

        v = roam_model_wake_order(tui_model(t), &n);
        if (!v)
                return -ENOMEM;
        i = tui_list_key(key, selected_index(d, v, n), (int)n, &handled);
        if (handled) {
                if (i >= 0 && select_app(d, v[i]) < 0)
                        return -ENOMEM;
                return REACTION_REDRAW;
        }
        if (key != '+' && key != '=' && key != '-' && key != 'n')
                return REACTION_UNHANDLED;
        i = selected_index(d, v, n);
        if (i < 0) {
                tui_message(t, THEME_WARNING, "No app is wake-listed.");
                return REACTION_REDRAW;
        }
        if (select_app(d, v[i]) < 0)
                return -ENOMEM;
        switch (key) {
        case '+':
        case '=':
                return move_app(t, v, n, i, -1);
        case '-':
                return move_app(t, v, n, i, +1);
        default:
                return ask_result(
                    t, v[i], "online now (its turn)",
                    roam_live_wake_now(tui_live(t), v[i]->id, "online now (its turn)"));
        }
}

static int wake_click(Tui *t, Screen *s, int item)
{
        _cleanup_free_ const RoamApp **v = NULL;
        size_t n;

        v = roam_model_wake_order(tui_model(t), &n);
        if (!v || item < 0 || (size_t)item >= n)
                return REACTION_NONE;
        return select_app(s->data, v[item]) < 0 ? -ENOMEM : REACTION_REDRAW;
}

static int wake_model_changed(Tui *t, Screen *s, const RoamLiveEvent *ev)
{
        /* A turn began: said in words too, so it is heard on the status line. */
        if (ev->type == ROAM_LIVE_EVENT_APP_WAKE)
                tui_message(t, THEME_OK, "Wake: %s's turn (%s).", ev->app->id,
                            roam_wake_reason_words(ev->wake_reason));
        return REACTION_REDRAW;
}

static bool wake_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        const RoamModel *m = tui_model(t);

        for (size_t i = 0; i < m->n_apps; i++)
                if (m->apps[i]->wake >= 0 && *m->apps[i]->wake_state)
                        return true;
        return !streq(k->keys, "+") && !streq(k->keys, "-") && !streq(k->keys, "n");
}

static void wake_done(Tui *t, Screen *s)
{
        WakeData *d = s->data;

        free(d->selected);
        d->selected = NULL;
}

static const KeyHelp wake_keys[] = {
    {"+", "raise",
     "Move the selected app a place up: a priority one above the app before it "
     "(SetAppPolicy wake=N; needs root, group netdev or polkit)"},
    {"-", "lower", "Move the selected app a place down: a priority one below the app after it"},
    {"n", "now", "Its turn now, over the cap: online for a task (WakeNow)"},
    {"Up/Down", NULL, "Select the previous or next app (also k and j)"},
    {"Esc", NULL, "Back to the overview"},
    {},
};

const ScreenVTable wake_screen_vtable = {
    .name = "wake",
    .title = "Wake queue",
    .short_title = "Wake",
    .number = 0,
    .letter = 'w',
    .data_size = sizeof(WakeData),
    .draw = wake_draw,
    .key = wake_key,
    .click = wake_click,
    .model_changed = wake_model_changed,
    .key_active = wake_key_active,
    .done = wake_done,
    .keys = wake_keys,
    .about = "The ordered wake-up (w on the overview): when the network comes, roamd gives it "
             "to the wake-listed apps one turn at a time, the highest priority first. The "
             "queue's state in words (offline, settling, waiting for the time, running, "
             "finished) and its period; then each app in turn order with its priority, its "
             "state (waiting, awake, done), why, and how long it has waited or been awake. "
             "Apps that are not wake-listed follow their policy as always.",
};
