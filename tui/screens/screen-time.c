/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-bus.h"
#include "roam-format.h"
#include "roam-screens.h"
#include "roam-time.h"
#include "roam-props.h"
#include "roam-util.h"
#include "roam-words.h"

/* The time (org.roam1.Time, docs/time.md), key t on the overview: the state, the agreed
 * time and the gate in words, then the sources as a small timeline: each interval a bar on
 * one axis around the agreed time, the agreed span highlighted, every verdict in words
 * (never colour alone) and why. Read when the screen opens, on r and on every
 * PropertiesChanged of the time; the calls are asynchronous. */

typedef struct TimeData {
        Tui *tui;
        RoamTimeView view;
        bool loaded;
        char error[256];
        int selected, scroll;
        bool moved;            /* the person selected a source: on a small terminal its details show
                                * only then (they would push the time itself out of view) */
        RoamProps *watch;      /* the view follows org.roam1.Time while the screen is shown */
        sd_event_source *tick; /* while the screen is shown: the time moves on by itself */
} TimeData;

/* The selectable items: the sources, and on a small terminal the clock after them. */
static int n_items(const TimeData *d)
{
        return (int)d->view.n_sources + (COLS < 60 && d->view.clock_state ? 1 : 0);
}

static void on_loaded(RoamProps *w, const sd_bus_error *e, int r, void *userdata)
{
        TimeData *d = userdata;

        d->loaded = true;
        if (e)
                snprintf(d->error, sizeof(d->error), "%s", e->message ? e->message : e->name);
        else if (r < 0)
                snprintf(d->error, sizeof(d->error), "cannot read roamd's answer: %s",
                         strerror(-r));
        else {
                d->error[0] = 0;
                if (d->selected >= n_items(d))
                        d->selected = n_items(d) > 0 ? n_items(d) - 1 : 0;
        }
        tui_request_redraw(d->tui);
}

/* Once a second, on the second: the agreed time and the sources' ages are projected from
 * what roamd last said (roamd is not asked again). */
static int on_tick(sd_event_source *es, uint64_t usec, void *userdata)
{
        TimeData *d = userdata;

        (void)sd_event_source_set_time(es, usec + USEC_PER_SEC);
        (void)sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
        tui_request_redraw(d->tui);
        return 0;
}

static int time_enter(Tui *t, Screen *s)
{
        TimeData *d = s->data;
        sd_bus *bus = tui_bus(t);

        d->tui = t;
        if (!d->tick && tui_event(t))
                (void)sd_event_add_time_relative(tui_event(t), &d->tick, CLOCK_MONOTONIC,
                                                 USEC_PER_SEC, 0, on_tick, d);
        if (!bus)
                return 0;
        if (!d->watch)
                (void)roam_props_new(bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                     roam_time_view_replace, &d->view, on_loaded, d, &d->watch);
        else
                (void)roam_props_reload(d->watch);
        return 0;
}

static void time_leave(Tui *t, Screen *s)
{
        TimeData *d = s->data;

        d->watch = roam_props_free(d->watch);
        d->tick = sd_event_source_disable_unref(d->tick);
        roam_time_view_done(&d->view);
        d->view = (RoamTimeView){};
        d->loaded = false;
}

static ThemeRole state_role(const char *state)
{
        return streq_ptr(state, "settled")    ? THEME_OK
               : streq_ptr(state, "disputed") ? THEME_ERROR
                                              : THEME_WARNING;
}

static ThemeRole clock_role(const char *clock_state)
{
        switch (roam_clock_state_from_string(clock_state)) {
        case ROAM_CLOCK_STEPPED:
        case ROAM_CLOCK_AGREES:
                return THEME_OK;
        case ROAM_CLOCK_NO_TIMEDATED:
        case ROAM_CLOCK_REFUSED:
        case ROAM_CLOCK_LOWER_BOUND:
                return THEME_WARNING;
        case ROAM_CLOCK_OFF:
        case ROAM_CLOCK_UNSETTLED:
        case ROAM_CLOCK_DAEMON:
        case _ROAM_CLOCK_STATE_MAX:
        case _ROAM_CLOCK_STATE_INVALID:
                break;
        }
        return THEME_NORMAL;
}

static ThemeRole verdict_role(const char *verdict)
{
        return streq_ptr(verdict, "truechimer")    ? THEME_OK
               : streq_ptr(verdict, "falseticker") ? THEME_ERROR
                                                   : THEME_MUTED;
}

/* The axis: a centre and the half-width it shows, in µs. Around the agreed time when there
 * is one, else the middle of the sources; wide enough for every source that is believed
 * (falsetickers far away are drawn at the edge, pointing where they are). */
static void axis(const RoamTimeView *v, uint64_t now, uint64_t *ret_centre, uint64_t *ret_half)
{
        uint64_t centre = roam_time_bound_now(v, now), half = v->error;
        size_t n = 0;

        if (!centre) {
                uint64_t lo = UINT64_MAX, hi = 0;
                for (size_t i = 0; i < v->n_sources; i++) {
                        lo = MIN(lo, roam_time_source_now(v, &v->sources[i], now));
                        hi = MAX(hi, roam_time_source_now(v, &v->sources[i], now));
                }
                centre = v->n_sources ? lo + (hi - lo) / 2 : 0;
        }
        for (size_t i = 0; i < v->n_sources; i++) {
                const RoamTimeSource *s = &v->sources[i];
                uint64_t mid = roam_time_source_now(v, s, now);
                uint64_t off = mid > centre ? mid - centre : centre - mid;
                if (v->realtime && streq(s->verdict, "falseticker"))
                        continue;
                half = MAX(half, off + s->error);
                n++;
        }
        *ret_centre = centre;
        *ret_half = MAX(half + half / 5, (uint64_t)1000000);
}

/* One bar of width cells: the interval [mid - err, mid + err] on the axis; a lower bound
 * (open_right) reaches to the right end. */
static int span_interval(Tui *t, TuiDoc *doc, int width, uint64_t centre, uint64_t half,
                         uint64_t mid, uint64_t err, bool open_right, ThemeRole role)
{
        const char *full = tui_utf8(t) ? "\u2588" : "#", *empty = tui_utf8(t) ? "\u00b7" : ".";
        double lo_at = ((double)mid - (double)err - ((double)centre - (double)half)) /
                       (2.0 * (double)half) * width,
               hi_at = ((double)mid + (double)err - ((double)centre - (double)half)) /
                       (2.0 * (double)half) * width;
        char bar[512] = "";
        int lo = lo_at < -1 ? -1 : (int)lo_at, hi = open_right ? width : (int)hi_at;

        for (int i = 0; i < width; i++) {
                const char *c = empty;
                if (hi < 0 && i == 0)
                        c = "<";
                else if (lo >= width && i == width - 1)
                        c = ">";
                else if (i >= lo && i <= hi)
                        c = full;
                strncat(bar, c, sizeof(bar) - strlen(bar) - 1);
        }
        return tui_doc_span(doc, role, width, bar);
}

static int build(Tui *t, TimeData *d, TuiDoc *doc)
{
        const RoamTimeView *v = &d->view;
        bool narrow = COLS < 60;
        int name_w = narrow ? 0 : 16, verdict_w = 12, bar_w;
        uint64_t centre, half, now = roam_now();
        char head[128], ends[64], clock[512], zone[256], name[96], taken[64];
        int r;

        r = tui_doc_line(doc, -1, 0);
        if (!d->loaded)
                return r < 0 ? r
                             : tui_doc_span(doc, THEME_MUTED, 0, "Reading the time from roamd...");
        if (d->error[0])
                return r < 0 ? r
                             : tui_doc_spanf(doc, THEME_ERROR, 0, "No time to show: %s", d->error);

        roam_time_headline(v, head, sizeof(head));
        if (r >= 0)
                r = tui_doc_span(doc, state_role(v->state), 0, head);
        if (r >= 0 && v->reasons && v->reasons[0])
                r = tui_doc_field(doc, -1, 6, "Why:", THEME_NORMAL, v->reasons[0]);
        if (r >= 0)
                r = tui_doc_field(doc, -1, 6,
                                  "Gate:", streq_ptr(v->gate, "open") ? THEME_OK : THEME_WARNING,
                                  roam_time_gate_words(v->gate));
        /* the clock under the time; on a small terminal after the sources, with the last one
         * (it would push them out of view) */
        roam_time_clock_words(v, clock, sizeof(clock));
        if (r >= 0 && *clock && (!narrow || v->n_sources == 0))
                r = tui_doc_field(doc, -1, 6, "Clock:", clock_role(v->clock_state), clock);
        /* the zone the networks agree on, or the ones to choose from (roam time zone ZONE) */
        roam_time_zone_words(v, zone, sizeof(zone));
        if (r >= 0 && *zone)
                r = tui_doc_field(
                    doc, -1, 6,
                    "Zone:", streq_ptr(v->zone_state, "settled") ? THEME_NORMAL : THEME_WARNING,
                    zone);
        if (r >= 0 && v->zone_candidates && v->zone_candidates[0]) {
                char list[512] = "";
                size_t len = 0;

                STRV_FOREACH (c, v->zone_candidates)
                        len += (size_t)snprintf(list + len,
                                                len < sizeof(list) ? sizeof(list) - len : 0, "%s%s",
                                                c == v->zone_candidates ? "" : ", ", *c);
                if (len < sizeof(list))
                        snprintf(list + len, sizeof(list) - len, " (roam time zone ZONE)");
                r = tui_doc_field(doc, -1, 6, "Pick:", THEME_NORMAL, list);
        }
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && v->n_sources == 0)
                return tui_doc_span(doc, THEME_MUTED, 0, "No source has said the time yet.");

        axis(v, now, &centre, &half);
        bar_w = COLS - 4 - (narrow ? 0 : name_w + 1 + verdict_w + 1);
        if (bar_w < 10)
                bar_w = 10;
        if (r >= 0)
                r = tui_doc_span(doc, THEME_TITLE, narrow ? 0 : name_w + 1, "Sources");
        /* the axis' ends, relative to its centre */
        snprintf(ends, sizeof(ends), "-%.1f s .. +%.1f s", half / 1e6, half / 1e6);
        if (r >= 0 && !narrow)
                r = tui_doc_spanf(doc, THEME_MUTED, 0, "%s", ends);
        if (r >= 0 && v->realtime) {
                /* the agreed span, highlighted on the same axis */
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0 && !narrow)
                        r = tui_doc_span(doc, THEME_NORMAL, name_w + 1, "agreed");
                if (r >= 0)
                        r = span_interval(t, doc, bar_w, centre, half, roam_time_bound_now(v, now),
                                          v->error, false, THEME_SELECTED);
                if (r >= 0 && !narrow)
                        r = tui_doc_span(doc, THEME_NORMAL, 0, " bound");
        }
        for (size_t i = 0; i < v->n_sources && r >= 0; i++) {
                const RoamTimeSource *s = &v->sources[i];
                ThemeRole role = verdict_role(s->verdict);
                uint64_t mid = roam_time_source_now(v, s, now); /* aged as the bound is */

                roam_time_source_name(v, i, name, sizeof(name));
                r = tui_doc_line(doc, (int)i, 4);
                if (r >= 0 && narrow) {
                        /* the whole witness and the verdict on a line, the bar under it */
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s: ", name);
                        if (r >= 0)
                                r = tui_doc_span(doc, role, 0, s->verdict);
                        if (r >= 0)
                                r = tui_doc_line(doc, (int)i, 4);
                        if (r >= 0)
                                r = span_interval(t, doc, bar_w, centre, half, mid, s->error,
                                                  streq(s->verdict, "lower-bound"), role);
                } else if (r >= 0) {
                        r = tui_doc_span(doc, THEME_NORMAL, name_w + 1, name);
                        if (r >= 0)
                                r = span_interval(t, doc, bar_w, centre, half, mid, s->error,
                                                  streq(s->verdict, "lower-bound"), role);
                        if (r >= 0)
                                r = tui_doc_span(doc, THEME_NORMAL, 1, " ");
                        if (r >= 0)
                                r = tui_doc_span(doc, role, 0, s->verdict);
                }
                /* the selected source in full: where it comes from and why */
                if (r >= 0 && (int)i == d->selected && (d->moved || !narrow)) {
                        r = tui_doc_line(doc, (int)i, 6);
                        roam_time_taken_words(s, now, taken, sizeof(taken));
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_MUTED, 0, "    %s from %s%s%s",
                                                  s->kind, s->origin, *taken ? ", " : "", taken);
                        if (r >= 0 && *s->reason) {
                                r = tui_doc_line(doc, (int)i, 6);
                                if (r >= 0)
                                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "    why: %s",
                                                          s->reason);
                        }
                }
        }
        if (r >= 0 && *clock && narrow) {
                /* an item of its own after the sources: selected, it scrolls into view */
                int item = (int)v->n_sources;
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_field(doc, item, 6, "Clock:", clock_role(v->clock_state),
                                          clock);
        }
        return r;
}

static void time_draw(Tui *t, Screen *s, int top, int height)
{
        TimeData *d = s->data;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;

        d->tui = t;
        if (tui_doc_new(&doc) < 0 || build(t, d, doc) < 0)
                return;
        tui_doc_draw(t, doc, top, height, n_items(d) && (d->moved || COLS >= 60) ? d->selected : -1,
                     &d->scroll);
}

static int time_key(Tui *t, Screen *s, int key)
{
        TimeData *d = s->data;
        bool handled;
        int i;

        if (key == 'r') {
                (void)roam_props_reload(d->watch);
                tui_message(t, THEME_NORMAL, "Reading the time again.");
                return REACTION_REDRAW;
        }
        i = tui_list_key(key, d->selected, n_items(d), &handled);
        if (!handled)
                return REACTION_UNHANDLED;
        if (i >= 0)
                d->selected = i;
        d->moved = true;
        return REACTION_REDRAW;
}

static int time_click(Tui *t, Screen *s, int item)
{
        TimeData *d = s->data;

        if (item < 0 || item >= n_items(d))
                return REACTION_NONE;
        d->selected = item;
        d->moved = true;
        return REACTION_REDRAW;
}

static void time_done(Tui *t, Screen *s)
{
        time_leave(t, s);
}

static const KeyHelp time_keys[] = {
    {"r", "refresh", "Read the time from roamd again"},
    {"Up/Down", NULL, "Select the previous or next source: its origin and why (also k and j)"},
    {"Esc", NULL, "Back to the overview"},
    {},
};

const ScreenVTable time_screen_vtable = {
    .name = "time",
    .title = "Time",
    .number = 0,
    .letter = 't',
    .data_size = sizeof(TimeData),
    .enter = time_enter,
    .leave = time_leave,
    .draw = time_draw,
    .key = time_key,
    .click = time_click,
    .done = time_done,
    .keys = time_keys,
    .about = "The time as roamd's sources agree on it (t on the overview): settled, settling, "
             "disputed or unknown, the agreed time with its error and whether apps were told "
             "\"online\". Each source is a bar on one axis around the agreed time (the agreed "
             "span first), with its verdict in words: truechimer, falseticker, lower-bound or "
             "expired. A source far off the axis points there with < or >. Clock: what roamd did "
             "with the clock and why (it steps it through timedated only when no clock daemon "
             "keeps it). Zone: the time zone the networks agree on, or the zones to pick from "
             "(roam time zone ZONE). The sources are aged to now as the agreed time is, and the "
             "time moves on while the screen is shown.",
};
