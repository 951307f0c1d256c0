/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-app.h"
#include "roam-format.h"
#include "roam-screens.h"
#include "roam-tui-filter.h"
#include "roam-util.h"
#include "roam-words.h"

/* The apps: every app roamd knows (and `default` and `system` last) with its access, VPN rule
 * and state in words, and on a second line its route, bearers, handover and grant. Keys change
 * the selected app's policy; every change is an asynchronous call whose answer (done, or why
 * not) is said on the status line. Bearers are chosen in a small checklist dialog. Built from
 * the model on every frame, like the overview. */

/* Below this width the rows become sentences (as in the overview). The ID takes what the other
 * columns leave: 36 columns at 80. */
#define TABLE_MIN_COLUMNS 64
#define COL_ACCESS        7
#define COL_VPN           10
#define COL_STATE         25
/* Columns left of every row for the '>' of the selected one (as in the overview). */
#define GUTTER 2
/* An app's object path: the ID (at most 255 bytes) escaped, up to three bytes each. */
#define APP_PATH_MAX 1024
/* The dialog's width, and the smallest room in which it is drawn as a box. */
#define DIALOG_WIDTH 46
/* How long "o" puts an app online. */
#define ONLINE_FOR_USEC (10 * 60 * USEC_PER_SEC)

typedef struct AppsData {
        char selected[APP_PATH_MAX]; /* the selected app's path, "" for the first */
        int scroll;
        /* The bearer dialog, open while dialog_app is not "". */
        char dialog_app[APP_PATH_MAX];
        bool checked[ROAM_APP_N_BEARERS];
        int dialog_selected;
        int dialog_scroll;
        TuiFilter filter;
} AppsData;

/* The orders of s: roamd's (by ID, default and system last) first. "bearer": of the link the
 * app's new flows take now (IPv4's, else IPv6's), in the shared bearer table's order; apps
 * without a route last. */
static const char *const order_names[] = {"ID", "state", "access", "bearer"};
static int order_of_view;
static const RoamModel *model_of_view;

/* The link a route names (roamd gives a link's name, or its object path). */
static const RoamLink *route_link(const RoamModel *m, const char *route)
{
        if (!m || !*route)
                return NULL;
        if (route[0] == '/')
                return roam_model_find_link(m, route);
        for (size_t i = 0; i < m->n_links; i++)
                if (streq(m->links[i]->name, route))
                        return m->links[i];
        return NULL;
}

static int app_bearer_rank(const RoamApp *a)
{
        const RoamLink *l = route_link(model_of_view, *a->route4 ? a->route4 : a->route6);
        RoamBearer b;

        if (!l)
                return _ROAM_BEARER_MAX + 1;
        b = l->bearer ? roam_bearer_from_string(l->bearer) : _ROAM_BEARER_INVALID;
        return b < 0 ? _ROAM_BEARER_MAX : (int)b;
}

static int app_rank(const RoamApp *a)
{
        return order_of_view == 1   ? -roam_app_state_kind(a) /* online first, blocked last */
               : order_of_view == 2 ? (int)roam_access_from_string(a->access)
               : order_of_view == 3 ? app_bearer_rank(a)
                                    : 0;
}

static int app_compare(const void *x, const void *y)
{
        const RoamApp *a = *(const RoamApp *const *)x, *b = *(const RoamApp *const *)y;
        int c = app_rank(a) - app_rank(b);

        if (c != 0)
                return c;
        /* Ties keep roamd's order: by ID, default and system last. */
        if (roam_app_is_special(a) != roam_app_is_special(b))
                return roam_app_is_special(a) ? 1 : -1;
        return strcmp(a->id, b->id);
}

/* The apps shown: those the filter lets through (ID, state, access, VPN rule), in order. */
static size_t view_apps(Tui *t, AppsData *d, const RoamApp ***ret)
{
        const RoamModel *m = tui_model(t);
        const RoamApp **v = calloc(MAX(m->n_apps, (size_t)1), sizeof(RoamApp *));
        size_t n = 0;

        *ret = v;
        if (!v)
                return 0;
        for (size_t i = 0; i < m->n_apps; i++) {
                const RoamApp *a = m->apps[i];
                const char *fields[] = {a->id, a->state, a->access, a->vpn, NULL};

                if (tui_filter_match(&d->filter, fields))
                        v[n++] = a;
        }
        order_of_view = d->filter.order;
        model_of_view = m;
        qsort(v, n, sizeof(RoamApp *), app_compare);
        model_of_view = NULL;
        return n;
}

static int view_index(AppsData *d, const RoamApp **view, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (streq(view[i]->path, d->selected))
                        return (int)i;
        return n > 0 ? 0 : -1;
}

static const RoamApp *selected_app(Tui *t, AppsData *d)
{
        _cleanup_free_ const RoamApp **view = NULL;
        size_t n = view_apps(t, d, &view);
        int i = view ? view_index(d, view, n) : -1;

        return i < 0 ? NULL : view[i];
}

static void select_app(AppsData *d, const RoamApp *a)
{
        snprintf(d->selected, sizeof(d->selected), "%s", a ? a->path : "");
}

static ThemeRole state_role(const RoamApp *a)
{
        switch (roam_app_state_kind(a)) {
        case 1:
        case 2:
                return THEME_OK;
        case 0:
                return THEME_WARNING;
        default:
                return THEME_ERROR;
        }
}

/* One family's route: the link and its bearer in words, "wlan0 (wifi)", so that the order by
 * bearer can be seen. */
static void route_words(const RoamModel *m, const char *route, char *buf, size_t size)
{
        const RoamLink *l = route_link(m, route);

        if (!*route)
                snprintf(buf, size, "none");
        else if (l && l->bearer && *l->bearer)
                snprintf(buf, size, "%s (%s)", roam_model_route_name(m, route), l->bearer);
        else
                snprintf(buf, size, "%s", roam_model_route_name(m, route));
}

static char *route_text(const RoamModel *m, const RoamApp *a)
{
        char v4[96], v6[96];
        char *s;

        if (!*a->route4 && !*a->route6)
                return roam_app_route_text(m, a); /* "local networks only" or "none" */
        route_words(m, a->route4, v4, sizeof(v4));
        route_words(m, a->route6, v6, sizeof(v6));
        return asprintf(&s, "v4 %s, v6 %s", v4, v6) < 0 ? NULL : s;
}

/* The second line: route, bearers, handover, grant. */
static int add_details(TuiDoc *doc, const RoamModel *m, const RoamApp *a, int item)
{
        _cleanup_free_ char *bearers = roam_app_bearers_text(a, ", "), *route = route_text(m, a),
                            *s = NULL;
        char until[32];
        int r;

        if (!bearers || !route)
                return -ENOMEM;
        roam_app_until_text(a, until, sizeof(until));
        if (asprintf(&s, "  route %s; bearers %s; handover %s%s%s%s", route, bearers, a->handover,
                     *until ? "; online " : "", until,
                     streq(a->source, "runtime") ? "; changed at runtime" : "") < 0)
                return -ENOMEM;
        r = tui_doc_line(doc, item, 4);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0, s);
        return r;
}

static int id_width(Tui *t)
{
        return tui_columns(t) - GUTTER - COL_ACCESS - COL_VPN - COL_STATE;
}

/* A cell of a column: cut to leave one space before the next. */
static int cell(TuiDoc *doc, ThemeRole role, int width, const char *text)
{
        int r;

        r = tui_doc_span(doc, role, width - 1, text);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, 1, " ");
        return r;
}

static int add_app(Tui *t, TuiDoc *doc, const RoamApp *a, int item, bool table)
{
        const char *id = *a->id ? a->id : a->path;
        const char *state = *a->state ? a->state : "unknown";
        int r;

        if (!table) {
                r = tui_doc_line(doc, item, 2);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s: ", id);
                if (r >= 0)
                        r = tui_doc_span(doc, state_role(a), 0, state);
                if (r >= 0)
                        r = tui_doc_line(doc, item, 4);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "  access %s, VPN %s", a->access,
                                          a->vpn);
        } else {
                r = tui_doc_line(doc, item, 4);
                _cleanup_free_ char *cut = NULL;

                /* Cut in the middle: IDs differ at their end as often as at their start
                 * ("org.spam.AAAA...01", "...02"). */
                if (r >= 0)
                        r = roam_text_cut_middle(id, (size_t)MAX(id_width(t) - 1, 1), tui_utf8(t),
                                                 &cut);
                if (r >= 0)
                        r = cell(doc, THEME_NORMAL, id_width(t), cut);
                if (r >= 0)
                        r = cell(doc, THEME_NORMAL, COL_ACCESS, a->access);
                if (r >= 0)
                        r = cell(doc, THEME_NORMAL, COL_VPN, a->vpn);
                if (r >= 0)
                        r = tui_doc_span(doc, state_role(a), 0, state);
        }
        /* A wake-listed app: where it is in the ordered wake-up, as roam apps says it. */
        if (r >= 0 && *a->wake_state)
                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "; wake: %s",
                                  roam_wake_words(a->wake_state));
        if (r >= 0)
                r = add_details(doc, tui_model(t), a, item);
        return r;
}

static int add_headings(Tui *t, TuiDoc *h)
{
        int r;

        r = tui_doc_line(h, -1, 0);
        if (r >= 0)
                r = cell(h, THEME_TITLE, id_width(t), "App");
        if (r >= 0)
                r = cell(h, THEME_TITLE, COL_ACCESS, "Access");
        if (r >= 0)
                r = cell(h, THEME_TITLE, COL_VPN, "VPN");
        if (r >= 0)
                r = tui_doc_span(h, THEME_TITLE, COL_STATE, "State");
        return r;
}

/* The bearer checklist, drawn over the list: a box when there is room, else the whole body. */
static void draw_dialog(Tui *t, AppsData *d, const RoamApp *a, int top, int height)
{
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;
        int r, n_checked = 0;

        if (tui_doc_new(&doc) < 0)
                return;
        /* The keys first: on a small terminal the end of the dialog may be out of view. */
        r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0, "Bearers %s may use", a->id);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0, "Space checks, Enter applies, Esc cancels.");
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        for (int i = 0; r >= 0 && i < ROAM_APP_N_BEARERS; i++) {
                n_checked += d->checked[i];
                r = tui_doc_line(doc, i, 4);
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "[%c] %s",
                                          d->checked[i] ? 'x' : ' ', roam_app_bearers[i]);
        }
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0,
                                 n_checked == 0 ? "None checked: every bearer."
                                                : "Only these; none checked: every bearer.");
        if (r < 0)
                return;

        tui_doc_draw_dialog(t, doc, top, height, DIALOG_WIDTH, d->dialog_selected,
                            &d->dialog_scroll);
}

static void apps_draw(Tui *t, Screen *s, int top, int height)
{
        AppsData *d = s->data;
        const RoamModel *m = tui_model(t);
        _cleanup_(tui_doc_freep) TuiDoc *head = NULL, *list = NULL;
        bool table = tui_columns(t) >= TABLE_MIN_COLUMNS;
        _cleanup_free_ const RoamApp **view = NULL;
        const RoamApp *dialog;
        int r, rows, zero = 0, body_top = top, body_height = height;
        size_t n_real = 0, n_shown = 0, n;

        if (tui_doc_new(&head) < 0 || tui_doc_new(&list) < 0)
                return;

        /* default and system are policies, not apps: not counted, here and in the filter's
         * line alike, so both say the same "N of M apps". */
        n = view_apps(t, d, &view);
        if (!view)
                return;
        for (size_t i = 0; i < m->n_apps; i++)
                n_real += !roam_app_is_special(m->apps[i]);
        for (size_t i = 0; i < n; i++)
                n_shown += !roam_app_is_special(view[i]);
        r = tui_doc_line(head, -1, 0);
        if (r >= 0 && n_shown != n_real)
                r = tui_doc_spanf(head, THEME_NORMAL, 0, "%zu of ", n_shown);
        if (r >= 0)
                r = tui_doc_spanf(head, THEME_NORMAL, 0,
                                  "%zu app%s; default: processes in no app; system: roamd and "
                                  "system services.",
                                  n_real, n_real == 1 ? "" : "s");
        if (r < 0)
                return;
        rows = MIN(tui_doc_rows(t, head), 2);
        tui_doc_draw(t, head, top, rows, -1, &zero);
        top += rows + 1;
        height -= rows + 1;

        if (table) {
                _cleanup_(tui_doc_freep) TuiDoc *h = NULL;

                if (tui_doc_new(&h) < 0 || add_headings(t, h) < 0)
                        return;
                tui_doc_draw(t, h, top, 1, -1, &zero);
                top++;
                height--;
        }

        {
                _cleanup_(tui_doc_freep) TuiDoc *f = NULL;
                int frow = top - 1 - table;

                if (tui_doc_new(&f) < 0)
                        return;
                if (tui_filter_line(t, &d->filter, f, n_shown, n_real, "apps", order_names) > 0)
                        tui_doc_draw(t, f, frow, 1, -1, &zero);
        }
        for (size_t i = 0; i < n; i++)
                if (add_app(t, list, view[i], (int)i, table) < 0)
                        return;
        tui_doc_draw(t, list, top, height, view_index(d, view, n), &d->scroll);
        if (d->filter.editing)
                tui_set_cursor(t, top - 1 - table, 10 + (int)strlen(d->filter.text));

        dialog = *d->dialog_app ? roam_model_find_app(m, d->dialog_app) : NULL;
        if (dialog)
                draw_dialog(t, d, dialog, body_top, body_height);
}

static int apps_enter(Tui *t, Screen *s)
{
        AppsData *d = s->data;

        if (tui_model(t)->n_apps == 0)
                return -ENOENT;
        d->dialog_app[0] = 0;
        return 0;
}

/* Asks roamd for a change; the answer comes later (roam-tui.c says it on the status line). */
static int ask(Tui *t, const RoamApp *a, const char *action, int r)
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

static int set_policy(Tui *t, const RoamApp *a, const char *key, const char *value,
                      const char *action)
{
        _cleanup_free_ char *setting = NULL;
        char *settings[2] = {};

        if (asprintf(&setting, "%s=%s", key, value) < 0)
                return -ENOMEM;
        settings[0] = setting;
        return ask(t, a, action, roam_live_set_app_policy(tui_live(t), a->id, settings, action));
}

static int set_cycled(Tui *t, const RoamApp *a, const char *key, const char *label,
                      const char *value)
{
        _cleanup_free_ char *action = NULL;

        if (asprintf(&action, "%s %s", label, value) < 0)
                return -ENOMEM;
        return set_policy(t, a, key, value, action);
}

static void open_dialog(AppsData *d, const RoamApp *a)
{
        snprintf(d->dialog_app, sizeof(d->dialog_app), "%s", a->path);
        for (int i = 0; i < ROAM_APP_N_BEARERS; i++)
                d->checked[i] = strv_contains(a->bearers, roam_app_bearers[i]);
        d->dialog_selected = 0;
        d->dialog_scroll = 0;
}

static int apply_dialog(Tui *t, AppsData *d, const RoamApp *a)
{
        char value[128] = "", words[160];
        size_t len = 0;

        for (int i = 0; i < ROAM_APP_N_BEARERS; i++)
                if (d->checked[i])
                        len += (size_t)snprintf(value + len, sizeof(value) - len, "%s%s",
                                                len > 0 ? "," : "", roam_app_bearers[i]);
        d->dialog_app[0] = 0;
        if (len == 0)
                snprintf(value, sizeof(value), "all");
        snprintf(words, sizeof(words), "bearers %s", value);
        return set_policy(t, a, "bearers", value, words);
}

static int dialog_key(Tui *t, AppsData *d, int key)
{
        const RoamApp *a = roam_model_find_app(tui_model(t), d->dialog_app);

        if (!a) {
                d->dialog_app[0] = 0;
                return REACTION_REDRAW;
        }
        switch (key) {
        case TUI_KEY(KEY_UP):
        case 'k':
        case TUI_KEY(KEY_BTAB):
                d->dialog_selected =
                    (d->dialog_selected + ROAM_APP_N_BEARERS - 1) % ROAM_APP_N_BEARERS;
                return REACTION_REDRAW;
        case TUI_KEY(KEY_DOWN):
        case 'j':
        case '\t':
                d->dialog_selected = (d->dialog_selected + 1) % ROAM_APP_N_BEARERS;
                return REACTION_REDRAW;
        case TUI_KEY(KEY_HOME):
        case 'g':
                d->dialog_selected = 0;
                return REACTION_REDRAW;
        case TUI_KEY(KEY_END):
        case 'G':
                d->dialog_selected = ROAM_APP_N_BEARERS - 1;
                return REACTION_REDRAW;
        case ' ':
        case 'x':
                d->checked[d->dialog_selected] = !d->checked[d->dialog_selected];
                return REACTION_REDRAW;
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
                return apply_dialog(t, d, a);
        case TUI_KEY_ESCAPE:
        case TUI_KEY(KEY_BACKSPACE):
        case 127:
        case TUI_KEY(KEY_LEFT):
        case 'h':
                d->dialog_app[0] = 0;
                tui_message(t, THEME_STATUS, "Bearers of %s left as they were.", a->id);
                return REACTION_REDRAW;
        case 'q':
        case 'Q':
        case '?':
        case 12: /* Ctrl-L */
        case TUI_KEY(KEY_F(1)):
        case TUI_KEY(KEY_F(10)):
        case TUI_KEY(KEY_RESIZE):
                return REACTION_UNHANDLED;
        default:
                return REACTION_NONE; /* a dialog: nothing else reaches the list */
        }
}

/* Whether a key that changes the app cannot apply to it, and why, in words (roamd would
 * refuse it, or there is nothing to do): such keys are not offered in the hint bar and are
 * answered here, never sent to roamd to fail. */
static bool key_refused(const RoamApp *a, int key, char *why, size_t size)
{
        switch (key) {
        case 'o':
        case 'x':
                if (roam_app_is_special(a)) {
                        snprintf(why, size, "%s is not an app: online for a task is for one app.",
                                 a->id);
                        return true;
                }
                if (key == 'x' && a->online_until == 0) {
                        snprintf(why, size, "%s is not online for a task: nothing to release.",
                                 a->id);
                        return true;
                }
                return false;
        case 'v':
        case 'm':
        case 'b':
                if (streq(a->id, "system")) {
                        snprintf(why, size,
                                 "system has only an access: its traffic is routed by the main "
                                 "table, so it has no VPN rule, bearers or handover.");
                        return true;
                }
                return false;
        case 'R':
                if (!streq(a->source, "runtime")) {
                        snprintf(why, size,
                                 "%s has no changes made at runtime: its configured policy "
                                 "applies already.",
                                 a->id);
                        return true;
                }
                return false;
        default:
                return false;
        }
}

/* Denying an app cuts it off and a reset drops every change made at runtime at once: both ask
 * first (y/N). What they act on is found again by its ID when the answer comes. */
static int confirmed_deny(Tui *t, void *userdata, const char *id)
{
        const RoamApp *a = roam_model_find_app_by_id(tui_model(t), id);

        if (!a) {
                tui_message(t, THEME_WARNING, "%s is gone.", id);
                return REACTION_REDRAW;
        }
        return set_cycled(t, a, "access", "access", "deny");
}

static int confirmed_reset(Tui *t, void *userdata, const char *id)
{
        const RoamApp *a = roam_model_find_app_by_id(tui_model(t), id);

        if (!a) {
                tui_message(t, THEME_WARNING, "%s is gone.", id);
                return REACTION_REDRAW;
        }
        return ask(t, a, "policy reset",
                   roam_live_reset_app_policy(tui_live(t), a->id, "policy reset"));
}

static int confirm_app(Tui *t, const RoamApp *a, bool deny)
{
        _cleanup_free_ char *q = NULL, *no = NULL;
        int r;

        if (deny)
                r = asprintf(&q, "Deny %s all network access? Its connections stop now.", a->id);
        else
                r = asprintf(&q,
                             "Forget every change made to %s at runtime? Its configured policy "
                             "applies again.",
                             a->id);
        if (r < 0)
                return -ENOMEM;
        if (deny)
                r = asprintf(&no, "Not done: %s keeps access %s.", a->id, a->access);
        else
                r = asprintf(&no, "Not done: %s keeps its changes made at runtime.", a->id);
        if (r < 0)
                return -ENOMEM;
        return tui_confirm(t, a->id, deny ? confirmed_deny : confirmed_reset, NULL, q, no);
}

static int apps_key(Tui *t, Screen *s, int key)
{
        AppsData *d = s->data;
        _cleanup_free_ const RoamApp **view = NULL;
        const RoamApp *a;
        char buf[64], action[80], why[256];
        bool handled;
        size_t n;
        int i;

        if (*d->dialog_app)
                return dialog_key(t, d, key);
        i = tui_filter_key(t, &d->filter, key, (int)ELEMENTSOF(order_names), order_names);
        if (i != REACTION_UNHANDLED)
                return i;

        n = view_apps(t, d, &view);
        if (!view)
                return -ENOMEM;
        /* Space pages down too on this screen. */
        i = tui_list_key(key == ' ' ? TUI_KEY(KEY_NPAGE) : key, view_index(d, view, n), (int)n,
                         &handled);
        if (handled) {
                if (i < 0)
                        return REACTION_NONE;
                select_app(d, view[i]);
                return REACTION_REDRAW;
        }
        a = selected_app(t, d);
        switch (key) {
        case 'a':
        case 'v':
        case 'm':
        case 'b':
        case 'o':
        case 'x':
        case 'R':
                if (!a) {
                        tui_message(t, THEME_WARNING, "No app to change.");
                        return REACTION_REDRAW;
                }
                if (key_refused(a, key, why, sizeof(why))) {
                        tui_message(t, THEME_WARNING, "%s", why);
                        return REACTION_REDRAW;
                }
                switch (key) {
                case 'a':
                        if (streq(roam_app_next_access(a->access), "deny"))
                                return confirm_app(t, a, true);
                        return set_cycled(t, a, "access", "access",
                                          roam_app_next_access(a->access));
                case 'v':
                        return set_cycled(t, a, "vpn", "VPN", roam_app_next_vpn(a->vpn));
                case 'm':
                        return set_cycled(t, a, "handover", "handover",
                                          roam_app_next_handover(a->handover));
                case 'b':
                        open_dialog(d, a);
                        return REACTION_REDRAW;
                case 'o':
                        roam_app_format_duration(ONLINE_FOR_USEC, buf, sizeof(buf));
                        snprintf(action, sizeof(action), "online for %s", buf);
                        return ask(
                            t, a, action,
                            roam_live_app_online_for(tui_live(t), a->id, ONLINE_FOR_USEC, action));
                case 'x':
                        return ask(t, a, "grant released",
                                   roam_live_app_release(tui_live(t), a->id, "grant released"));
                default:
                        return confirm_app(t, a, false);
                }
        default:
                return REACTION_UNHANDLED;
        }
}

static int apps_click(Tui *t, Screen *s, int item)
{
        AppsData *d = s->data;
        _cleanup_free_ const RoamApp **view = NULL;
        size_t n;

        if (*d->dialog_app) {
                /* In the dialog: the bearer clicked is selected and checked or unchecked. */
                if (item < 0 || item >= ROAM_APP_N_BEARERS)
                        return REACTION_NONE;
                d->dialog_selected = item;
                d->checked[item] = !d->checked[item];
                return REACTION_REDRAW;
        }
        n = view_apps(t, d, &view);
        if (!view || item < 0 || (size_t)item >= n)
                return REACTION_NONE;
        select_app(d, view[item]);
        return REACTION_REDRAW;
}

static int apps_roamd_gone(Tui *t, Screen *s)
{
        AppsData *d = s->data;

        d->dialog_app[0] = 0;
        return REACTION_BACK;
}

static int apps_model_changed(Tui *t, Screen *s, const RoamLiveEvent *ev)
{
        AppsData *d = s->data;
        const RoamModel *m = tui_model(t);

        if (ev->type == ROAM_LIVE_EVENT_APP_REMOVED) {
                if (streq(ev->app->path, d->dialog_app)) {
                        d->dialog_app[0] = 0;
                        tui_message(t, THEME_WARNING, "%s vanished.", ev->app->id);
                }
                if (streq(ev->app->path, d->selected))
                        for (size_t i = 0; i < m->n_apps; i++)
                                if (m->apps[i] == ev->app) {
                                        select_app(d, i + 1 < m->n_apps ? m->apps[i + 1]
                                                      : i > 0           ? m->apps[i - 1]
                                                                        : NULL);
                                        break;
                                }
        }
        return REACTION_REDRAW;
}

/* The list's keys first, then the dialog's (APPS_LIST_KEYS of them before); the hinted ones in
 * the order the hint bar gives up room (the most important first). */
#define APPS_LIST_KEYS 14
static const KeyHelp apps_keys[] = {
    {"a", "access",
     "Access of the selected app: allow, lan (local networks only), deny "
     "(loopback only), in turn"},
    {"v", "VPN", "VPN rule: any, required (only through a VPN), forbidden, in turn"},
    {"b", "bearers", "Choose the bearers the app may use (none checked: every bearer)"},
    {"o", "online",
     "Online for 10 minutes, even if its access denies it (a VPN rule still "
     "holds)"},
    {"x", "release", "End the online-for-a-task grant now"},
    {"R", "reset", "Forget the changes made at runtime: the configured policy applies again"},
    {"m", "handover", "Handover: sticky (flows finish on the old link) or move"},
    {"Esc", "back", "Back to the overview (first clears a filter)"},
    /* No room in the hint bar at 80 columns: in the help only. */
    {"/", NULL,
     "Show only the apps whose ID, state, access or VPN rule contains what you type (Enter "
     "keeps it, Esc clears it, Ctrl-U clears the text typed; / again starts a new filter)"},
    {"s", NULL, "Sort by ID, state (online first), access or bearer, in turn"},
    {"Up/Down", NULL, "Select the previous or next app (also k and j)"},
    {"Tab", NULL, "Select the next app, wrapping around (Shift-Tab: previous)"},
    {"PgUp/PgDn", NULL, "Move five apps up or down (also Space)"},
    {"Home/End", NULL, "Select the first or last app (also g and G)"},
    {"Enter", "apply", "In the bearer dialog: ask roamd for the checked bearers"},
    {"Esc", "cancel", "In the bearer dialog: close it, nothing changes"},
    {"Space", "check", "In the bearer dialog: check or uncheck the selected bearer (also x)"},
    {},
};

static bool apps_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        AppsData *d = s->data;
        const RoamApp *a = selected_app(t, d);
        bool dialog = *d->dialog_app;
        char why[256];

        if (k - apps_keys >= APPS_LIST_KEYS)
                return dialog;
        if (dialog)
                return false;
        if (streq(k->keys, "Esc"))
                return true;
        /* What cannot apply to this app is not offered. */
        return a && !key_refused(a, k->keys[0], why, sizeof(why));
}

static bool apps_typing(Tui *t, Screen *s)
{
        return ((AppsData *)s->data)->filter.editing;
}

static const char *apps_available(Tui *t, Screen *s, char *why, size_t size)
{
        if (tui_model(t)->n_apps > 0)
                return NULL;
        snprintf(why, size, "roamd has no apps (an older roamd, or [Apps] Enforce=no)");
        return "none";
}

const ScreenVTable apps_screen_vtable = {
    .name = "apps",
    .title = "Apps",
    .number = 3,
    .data_size = sizeof(AppsData),
    .enter = apps_enter,
    .draw = apps_draw,
    .key = apps_key,
    .model_changed = apps_model_changed,
    .roamd_gone = apps_roamd_gone,
    .keys = apps_keys,
    .key_active = apps_key_active,
    .click = apps_click,
    .about = "Every app roamd knows, then default (processes in no app) and system (roamd "
             "and system services): its access (allow, lan: local networks only, deny: "
             "loopback only), its VPN rule (any, required, forbidden), the link its new flows "
             "take (route, per address family) and its state in words; below, the bearers it "
             "may use, its handover, and until when it is online for a task. Changes go to "
             "roamd at once and need root, group netdev or polkit authorization; the status "
             "line says whether they were done.",
    .typing = apps_typing,
    .typing_keys = tui_filter_typing_keys,
    .available = apps_available,
};
