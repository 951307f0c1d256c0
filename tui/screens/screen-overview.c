/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-firewall.h"
#include "roam-format.h"
#include "roam-screens.h"
#include "roam-enforcement.h"
#include "roam-tui-filter.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* The overview: the global verdict in words, then every link with its bearer, verdict, reason,
 * addresses, portal URL and probe age. Built from the model on every frame, so a link that
 * appears or vanishes can never leave a stale row. */

/* Below this width the link rows become sentences instead of a table. */
#define TABLE_MIN_COLUMNS 64
#define COL_NAME          16
#define COL_BEARER        12
#define COL_VERDICT       9
#define COL_PROBED        10
/* Reasons are short phrases: on a wide terminal the Why column stops growing, so Probed stays
 * beside them rather than at the far edge. */
#define COL_WHY_MAX 48
/* The global sentence never takes more rows than this (it may hold a long portal URL). */
#define SENTENCE_MAX_ROWS 3
/* Enforcement warnings (Degraded, mark conflicts) take at most this share of the height. */
#define NOTES_MAX_SHARE 2

typedef struct OverviewData {
        int scroll;
        TuiFilter filter;
} OverviewData;

/* The orders of s: roamd's (the interface index, as `ip link` lists them) first. */
static const char *const order_names[] = {"interface index", "name", "state", "bearer"};

/* The verdicts from the best down, for sorting by state. */
static int verdict_rank(const char *verdict)
{
        static const RoamVerdict best_first[] = {
            ROAM_VERDICT_ONLINE, ROAM_VERDICT_PARTIAL,  ROAM_VERDICT_PORTAL,
            ROAM_VERDICT_LOCAL,  ROAM_VERDICT_CHECKING, ROAM_VERDICT_OFFLINE,
        };
        RoamVerdict v = roam_verdict_from_string(verdict);

        for (size_t i = 0; i < ELEMENTSOF(best_first); i++)
                if (best_first[i] == v)
                        return (int)i;
        return (int)ELEMENTSOF(best_first);
}

static int order_of_view;

static int view_compare(const void *a, const void *b)
{
        const RoamLink *x = *(const RoamLink *const *)a, *y = *(const RoamLink *const *)b;
        int c = 0;

        switch (order_of_view) {
        case 1:
                c = strcmp(x->name, y->name);
                break;
        case 2:
                c = verdict_rank(x->connectivity) - verdict_rank(y->connectivity);
                break;
        case 3:
                c = strcmp(x->bearer, y->bearer);
                break;
        }
        /* Ties keep roamd's order: the list never shuffles between frames. */
        return c != 0 ? c : x->index - y->index;
}

/* The links shown: those the filter lets through, in the chosen order. */
static size_t view_links(Tui *t, const OverviewData *o, const RoamLink ***ret)
{
        const RoamModel *m = tui_model(t);
        const RoamLink **v = calloc(MAX(m->n_links, (size_t)1), sizeof(RoamLink *));
        size_t n = 0;

        if (!v) {
                *ret = NULL;
                return 0;
        }
        for (size_t i = 0; i < m->n_links; i++) {
                const RoamLink *l = m->links[i];
                const char *fields[] = {l->name, l->bearer, l->connectivity,
                                        roam_reason_short(l->connectivity_reason), NULL};

                if (tui_filter_match(&o->filter, fields))
                        v[n++] = l;
        }
        order_of_view = o->filter.order;
        qsort(v, n, sizeof(RoamLink *), view_compare);
        *ret = v;
        return n;
}

static int selected_index(Tui *t, const RoamLink **view, size_t n)
{
        const char *path = tui_selected_link(t);

        for (size_t i = 0; path && i < n; i++)
                if (streq(view[i]->path, path))
                        return (int)i;
        return n > 0 ? 0 : -1;
}

int screen_addresses_text(const RoamLink *l, bool all, char **ret)
{
        _cleanup_free_ char *s = NULL;
        size_t len = 0;

        for (size_t i = 0; i < l->n_addresses; i++) {
                const RoamAddress *a = &l->addresses[i];
                char *n;

                /* The overview leaves out link-local addresses: they never make a link usable. */
                if (!all && (streq(a->scope, "link") || streq(a->scope, "host")))
                        continue;
                n = realloc(s, len + strlen(a->address) + 16);
                if (!n)
                        return -ENOMEM;
                s = n;
                len +=
                    (size_t)sprintf(s + len, "%s%s/%u", len > 0 ? ", " : "", a->address, a->prefix);
        }
        *ret = s ? TAKE_PTR(s) : strdup(all ? "none" : "no usable address");
        return *ret ? 0 : -ENOMEM;
}

static int why_width(Tui *t)
{
        return MIN(tui_columns(t) - 2 - COL_NAME - COL_BEARER - COL_VERDICT - COL_PROBED,
                   COL_WHY_MAX);
}

static int add_link(Tui *t, TuiDoc *d, const RoamLink *l, int item, bool table, uint64_t now)
{
        _cleanup_free_ char *addresses = NULL;
        const char *name = *l->name ? l->name : l->path, *url = roam_link_portal_url(l);
        ThemeRole role = tui_verdict_role(l->connectivity);
        char age[32];
        uint64_t next;
        int r, why;

        roam_format_age(l->last_probe, now, age, sizeof(age), &next);
        if (l->last_probe)
                tui_refresh_in(t, next);
        r = screen_addresses_text(l, false, &addresses);
        if (r < 0)
                return r;

        if (table) {
                why = why_width(t);
                r = tui_doc_line(d, item, 4);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_NORMAL, COL_NAME, name);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_NORMAL, COL_BEARER, l->bearer);
                if (r >= 0)
                        r = tui_doc_span(d, role, COL_VERDICT, roam_verdict_word(l->connectivity));
                if (r >= 0)
                        r = tui_doc_span(d, THEME_NORMAL, why,
                                         roam_reason_short(l->connectivity_reason));
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_MUTED, COL_PROBED, "%*s", COL_PROBED,
                                          l->last_probe ? age : "not yet");
        } else {
                r = tui_doc_line(d, item, 2);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_NORMAL, 0, "%s (%s): ", name, l->bearer);
                if (r >= 0)
                        r = tui_doc_span(d, role, 0, roam_verdict_word(l->connectivity));
                if (r >= 0)
                        r = tui_doc_line(d, item, 4);
                if (r >= 0 && l->last_probe)
                        r = tui_doc_spanf(d, THEME_NORMAL, 0, "  %s, probed %s",
                                          roam_reason_short(l->connectivity_reason), age);
                else if (r >= 0)
                        r = tui_doc_spanf(
                            d, THEME_NORMAL, 0, "  %s%s", roam_reason_short(l->connectivity_reason),
                            streq(l->connectivity_reason, "not-probed") ? "" : ", no probe yet");
        }
        if (r >= 0)
                r = tui_doc_line(d, item, 4);
        if (r >= 0)
                r = tui_doc_spanf(d, THEME_MUTED, 0, "  %s%s", addresses,
                                  roam_link_is_virtual(l) ? " (virtual: never counts)" : "");
        if (r >= 0 && *l->wifi_state) {
                char wifi[160];

                /* a Wi-Fi link's network and signal, in words (w on its link screen joins) */
                roam_link_wifi_text(l, wifi, sizeof(wifi));
                r = tui_doc_line(d, item, 4);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_NORMAL, 0, "  Wi-Fi %s", wifi);
        }
        if (r >= 0 && *l->network_id) {
                char where[256];

                /* The firewall's location in words; unknown networks stand out. */
                roam_fw_location_text(l, where, sizeof(where));
                r = tui_doc_line(d, item, 4);
                if (r >= 0)
                        r = tui_doc_spanf(d,
                                          roam_link_needs_location(l) ? THEME_WARNING : THEME_MUTED,
                                          0, "  location %s", where);
        }
        if (r >= 0 && url) {
                r = tui_doc_line(d, item, 4);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_PORTAL, 0, "  Log in at %s", url);
                if (r >= 0)
                        r = tui_doc_line(d, item, 4);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_PORTAL, 0, "  captive portal: press 4 to log in");
        }
        return r;
}

/* What to say instead of links when roamd cannot be read. */
static int add_problem(Tui *t, TuiDoc *d)
{
        RoamLive *live = tui_live(t);
        int r = 0;

        switch (roam_live_get_state(live)) {
        case ROAM_LIVE_NOT_RUNNING:
                r = tui_doc_span(d, THEME_ERROR, 0, "roamd is not running.");
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_NORMAL, 0,
                                         "roam waits for it and shows the links as soon as it "
                                         "is back (org.roam1 on the system bus). Start it with: "
                                         "systemctl start roamd");
                break;
        case ROAM_LIVE_NO_BUS:
                r = tui_doc_span(d, THEME_ERROR, 0, "The system bus cannot be reached.");
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_NORMAL, 0, "%s. roam tries again by itself.",
                                          roam_live_get_problem(live));
                break;
        case ROAM_LIVE_FAILED:
                r = tui_doc_span(d, THEME_ERROR, 0, "roamd's answer could not be read.");
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_NORMAL, 0,
                                          "%s. Is roam older than roamd? roam reads again when "
                                          "roamd restarts.",
                                          roam_live_get_problem(live));
                break;
        case ROAM_LIVE_LOADING:
                r = tui_doc_span(d, THEME_NORMAL, 0, "Reading roamd's state.");
                break;
        case ROAM_LIVE_READY:
        case _ROAM_LIVE_STATE_MAX:
        case _ROAM_LIVE_STATE_INVALID:
                break;
        }
        return r;
}

static void overview_draw(Tui *t, Screen *s, int top, int height)
{
        OverviewData *o = s->data;
        const RoamModel *m = tui_model(t);
        _cleanup_(tui_doc_freep) TuiDoc *head = NULL, *list = NULL;
        _cleanup_free_ char *sentence = NULL;
        _cleanup_free_ const RoamLink **view = NULL;
        bool table = tui_columns(t) >= TABLE_MIN_COLUMNS;
        uint64_t now = roam_now();
        int r, rows, zero = 0;
        size_t n;

        if (tui_doc_new(&head) < 0 || tui_doc_new(&list) < 0)
                return;

        if (roam_live_get_state(tui_live(t)) != ROAM_LIVE_READY) {
                if (add_problem(t, head) >= 0)
                        tui_doc_draw(t, head, top + 1, height - 1, -1, &zero);
                return;
        }

        sentence = roam_global_sentence(m);
        if (!sentence)
                return;
        r = tui_doc_line(head, -1, 0);
        if (r >= 0)
                r = tui_doc_span(head, tui_verdict_role(m->state), 0, sentence);
        if (r < 0)
                return;
        rows = MIN(tui_doc_rows(t, head), SENTENCE_MAX_ROWS);
        tui_doc_draw(t, head, top, rows, -1, &zero);
        top += rows + 1;
        height -= rows + 1;

        /* What keeps app enforcement from being whole, in words, above the links; the
         * short form when the whole would take more than its share of the screen. */
        for (int pass = 0; pass < 2; pass++) {
                _cleanup_(tui_doc_freep) TuiDoc *notes_doc = NULL;
                _cleanup_strv_free_ char **notes = NULL;
                int budget = MAX(height / NOTES_MAX_SHARE, 1);

                r = pass == 0 ? roam_enforcement_notes(m, &notes)
                              : roam_enforcement_summary(m, &notes);
                if (r < 0 || tui_doc_new(&notes_doc) < 0)
                        return;
                if (!notes)
                        break;
                STRV_FOREACH (note, notes) {
                        r = tui_doc_line(notes_doc, -1, 2);
                        if (r >= 0)
                                r = tui_doc_span(notes_doc,
                                                 note == notes && *m->degraded ? THEME_ERROR
                                                                               : THEME_WARNING,
                                                 0, *note);
                        if (r < 0)
                                return;
                }
                rows = tui_doc_rows(t, notes_doc);
                if (rows > budget && pass == 0)
                        continue;
                rows = MIN(rows, budget);
                tui_doc_draw(t, notes_doc, top - 1, rows, -1, &zero);
                top += rows;
                height -= rows;
                break;
        }

        if (m->n_links == 0) {
                if (tui_doc_span(list, THEME_NORMAL, 0, "No links (loopback is never shown).") >= 0)
                        tui_doc_draw(t, list, top, height, -1, &zero);
                return;
        }

        n = view_links(t, o, &view);
        if (!view)
                return;
        {
                _cleanup_(tui_doc_freep) TuiDoc *f = NULL;

                if (tui_doc_new(&f) < 0)
                        return;
                if (tui_filter_line(t, &o->filter, f, n, m->n_links, "links", order_names) > 0) {
                        tui_doc_draw(t, f, top - 1, 1, -1, &zero);
                        if (o->filter.editing)
                                tui_set_cursor(t, top - 1, 10 + (int)strlen(o->filter.text));
                }
        }

        if (table) {
                /* The headings stay put while the rows scroll. */
                TuiDoc *h = NULL;

                if (tui_doc_new(&h) < 0)
                        return;
                r = tui_doc_line(h, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(h, THEME_TITLE, COL_NAME, "Link");
                if (r >= 0)
                        r = tui_doc_span(h, THEME_TITLE, COL_BEARER, "Bearer");
                if (r >= 0)
                        r = tui_doc_span(h, THEME_TITLE, COL_VERDICT, "Verdict");
                if (r >= 0)
                        r = tui_doc_span(h, THEME_TITLE, why_width(t), "Why");
                if (r >= 0)
                        r = tui_doc_spanf(h, THEME_TITLE, COL_PROBED, "%*s", COL_PROBED, "Probed");
                if (r >= 0)
                        tui_doc_draw(t, h, top, 1, -1, &zero);
                tui_doc_free(h);
                top++;
                height--;
        }

        for (size_t i = 0; i < n; i++)
                if (add_link(t, list, view[i], (int)i, table, now) < 0)
                        return;
        tui_doc_draw(t, list, top, height, selected_index(t, view, n), &o->scroll);
        if (o->filter.editing) /* the cursor stays where the typing goes */
                tui_set_cursor(t, top - 1 - table, 10 + (int)strlen(o->filter.text));
}

static int overview_key(Tui *t, Screen *s, int key)
{
        OverviewData *o = s->data;
        _cleanup_free_ const RoamLink **view = NULL;
        size_t n;
        bool handled;
        int i, r;

        r = tui_filter_key(t, &o->filter, key, (int)ELEMENTSOF(order_names), order_names);
        if (r != REACTION_UNHANDLED)
                return r;
        n = view_links(t, o, &view);
        if (!view)
                return -ENOMEM;
        i = tui_list_key(key, selected_index(t, view, n), (int)n, &handled);
        if (handled) {
                if (i < 0)
                        return REACTION_NONE;
                tui_select_link(t, view[i]->path);
                return REACTION_REDRAW;
        }
        switch (key) {
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
        case TUI_KEY(KEY_RIGHT):
        case 'l':
                /* Only a link the filter shows: the selection may be hidden behind it. */
                if (n == 0) {
                        tui_message(t, THEME_WARNING, "No link to show.");
                        return REACTION_REDRAW;
                }
                tui_select_link(t, view[MAX(0, selected_index(t, view, n))]->path);
                if (tui_show(t, &link_screen_vtable) == -ENOENT)
                        tui_message(t, THEME_WARNING, "No link to show.");
                return REACTION_REDRAW;
        case 'r':
                return screen_reprobe(t, tui_selected_link(t));
        case 'c':
                return screen_copy_url(t, tui_selected_link(t));
        default:
                return REACTION_UNHANDLED;
        }
}

static int overview_click(Tui *t, Screen *s, int item)
{
        _cleanup_free_ const RoamLink **view = NULL;
        size_t n = view_links(t, s->data, &view);

        if (!view || item < 0 || (size_t)item >= n)
                return REACTION_NONE;
        tui_select_link(t, view[item]->path);
        return REACTION_REDRAW;
}

int screen_copy_url(Tui *t, const char *path)
{
        const RoamLink *l = path ? roam_model_find_link(tui_model(t), path) : NULL;
        const char *url = l ? roam_link_portal_url(l) : NULL;
        int r;

        if (!url) {
                tui_message(t, THEME_WARNING, "No login page to copy: %s is not behind a portal.",
                            l ? l->name : "no link");
                return REACTION_REDRAW;
        }
        r = tui_copy(t, url);
        if (r < 0)
                tui_message(t, THEME_ERROR, "Cannot copy the URL: %s", strerror(-r));
        else
                tui_message(t, THEME_OK,
                            "Copied %s to the clipboard (OSC 52; some terminals must allow it).",
                            url);
        return REACTION_REDRAW;
}

static bool overview_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        const char *path = tui_selected_link(t);
        const RoamLink *l = path ? roam_model_find_link(tui_model(t), path) : NULL;

        if (streq(k->keys, "c"))
                return l && roam_link_portal_url(l);
        return true;
}

int screen_reprobe(Tui *t, const char *path)
{
        const RoamLink *l = path ? roam_model_find_link(tui_model(t), path) : NULL;
        int r;

        if (!l) {
                tui_message(t, THEME_WARNING, "No link to re-probe.");
                return REACTION_REDRAW;
        }
        r = roam_live_reprobe(tui_live(t), path);
        if (r < 0)
                tui_message(t, THEME_ERROR, "Cannot ask roamd to re-probe %s: %s", l->name,
                            strerror(-r));
        else
                tui_message(t, THEME_STATUS, "Asking roamd to re-probe %s%s", l->name,
                            tui_glyph_ellipsis(t));
        return REACTION_REDRAW;
}

static const KeyHelp overview_keys[] = {
    {"Enter", "details", "Show the selected link in full (also Right or l)"},
    {"r", "re-probe", "Ask roamd to probe the selected link now"},
    {"c", "copy URL",
     "Copy the selected link's login page to the clipboard (OSC 52); the URL is a link the "
     "terminal opens on a click too (OSC 8)"},
    {"/", "filter",
     "Show only the links whose name, bearer, verdict or reason contains what you type "
     "(Enter keeps it, Esc clears it, Ctrl-U clears the text typed; / again starts a new "
     "filter)"},
    {"s", "sort", "Sort by interface index, name, state (the best first) or bearer, in turn"},
    {"t", "time",
     "The time as roamd's sources agree on it, and whom it does not believe (t from "
     "every screen)"},
    {"w", "wake",
     "The wake queue: which app's turn it is to go online, who waits, how long and why (w from "
     "every screen)"},
    {"Up/Down", NULL, "Select the previous or next link (also k and j)"},
    {"Tab", NULL, "Select the next link, wrapping around (Shift-Tab: previous)"},
    {"PgUp/PgDn", NULL, "Move five links up or down"},
    {"Home/End", NULL, "Select the first or last link (also g and G)"},
    {},
};

static bool overview_typing(Tui *t, Screen *s)
{
        return ((OverviewData *)s->data)->filter.editing;
}

const ScreenVTable overview_screen_vtable = {
    .without_roamd = true,
    .name = "overview",
    .title = "Overview",
    .number = 1,
    .data_size = sizeof(OverviewData),
    .draw = overview_draw,
    .key = overview_key,
    .keys = overview_keys,
    .key_active = overview_key_active,
    .click = overview_click,
    .about = "The first line says whether this machine reaches the Internet, and through "
             "which link. Below, every link roamd watches: its bearer, its verdict (online, "
             "partial, portal, local or offline) and why, when it was last probed, its "
             "addresses, and where to log in when a captive portal holds it.",
    .typing = overview_typing,
    .typing_keys = tui_filter_typing_keys,
};
