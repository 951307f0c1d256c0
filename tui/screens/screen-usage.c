/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-bus.h"
#include "roam-format.h"
#include "roam-screens.h"
#include "roam-tui-filter.h"
#include "roam-usage.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* Usage (org.roam1.Usage, docs/stats.md): per owner, home and roaming side by side, each a
 * bar with its number; the last 24 hours as a sparkline; the data budgets in words. Read when
 * the screen opens, on `r` and on every BudgetChanged; the calls are asynchronous. Everyone's
 * usage when roamd allows it, else the user's own (said on screen). */

#define HOURS 24

typedef enum UsageSort {
        SORT_TOTAL,
        SORT_HOME,
        SORT_ROAMING,
        SORT_NAME,
        _SORT_MAX,
} UsageSort;

static const char *const sort_words[_SORT_MAX] = {
    [SORT_TOTAL] = "total",
    [SORT_HOME] = "not roaming",
    [SORT_ROAMING] = "roaming",
    [SORT_NAME] = "name",
};

typedef struct UsageRow {
        char *owner;
        uint64_t home, roaming; /* bytes, both directions */
} UsageRow;

typedef struct UsageData {
        Tui *tui;
        UsageRow *rows;
        size_t n_rows;
        uint64_t hours[HOURS]; /* the last 24 hours, oldest first */
        RoamBudget *budgets;
        size_t n_budgets;
        bool loaded, own_only;
        char error[256];
        UsageSort sort;
        TuiFilter filter; /* `/`: the owners whose name contains the text */
        int selected, scroll;
        size_t n_shown; /* the rows the filter lets through, as last drawn */
        sd_bus_slot *get_usage, *get_history, *get_budgets, *match;
} UsageData;

static void rows_free(UsageData *d)
{
        for (size_t i = 0; i < d->n_rows; i++)
                free(d->rows[i].owner);
        free(d->rows);
        d->rows = NULL;
        d->n_rows = 0;
}

static void budgets_free(UsageData *d)
{
        roam_budgets_free(d->budgets, d->n_budgets);
        d->budgets = NULL;
        d->n_budgets = 0;
}

static void load(UsageData *d);

static int on_usage(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        UsageData *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        RoamUsageRow *rows = NULL;
        size_t n = 0;
        int r;

        d->get_usage = sd_bus_slot_unref(d->get_usage);
        if (e) {
                if (!d->own_only && sd_bus_error_has_name(e, ROAM_ERROR_ACCESS_DENIED)) {
                        /* not allowed to see everyone's: the user's own */
                        d->own_only = true;
                        load(d);
                        return 0;
                }
                snprintf(d->error, sizeof(d->error), "%s", e->message ? e->message : e->name);
                d->loaded = true;
                tui_request_redraw(d->tui);
                return 0;
        }
        rows_free(d);
        d->error[0] = 0;
        r = roam_usage_rows_read(m, &rows, &n);
        for (size_t k = 0; r >= 0 && k < n; k++) {
                UsageRow *row = NULL;
                for (size_t i = 0; i < d->n_rows; i++)
                        if (streq(d->rows[i].owner, rows[k].owner))
                                row = &d->rows[i];
                if (!row) {
                        UsageRow *nr = realloc(d->rows, sizeof(*nr) * (d->n_rows + 1));
                        if (!nr) {
                                r = -ENOMEM;
                                break;
                        }
                        d->rows = nr;
                        row = &nr[d->n_rows];
                        *row = (UsageRow){.owner = strdup(rows[k].owner)};
                        if (!row->owner) {
                                r = -ENOMEM;
                                break;
                        }
                        d->n_rows++;
                }
                if (rows[k].roaming)
                        row->roaming += rows[k].bytes_in + rows[k].bytes_out;
                else
                        row->home += rows[k].bytes_in + rows[k].bytes_out;
        }
        roam_usage_rows_free(rows, n);
        if (r < 0)
                snprintf(d->error, sizeof(d->error), "cannot read roamd's answer: %s",
                         strerror(-r));
        d->loaded = true;
        tui_request_redraw(d->tui);
        return 0;
}

static int on_history(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        UsageData *d = userdata;
        uint64_t first = roam_now() / 1000000 / 3600 - (HOURS - 1);
        _cleanup_free_ RoamUsageHour *hours = NULL;
        size_t n = 0;

        d->get_history = sd_bus_slot_unref(d->get_history);
        if (sd_bus_message_get_error(m))
                return 0; /* the totals say what went wrong */
        memset(d->hours, 0, sizeof(d->hours));
        (void)roam_usage_history_read(m, &hours, &n);
        for (size_t i = 0; i < n; i++)
                if (hours[i].start / 3600 >= first && hours[i].start / 3600 < first + HOURS)
                        d->hours[hours[i].start / 3600 - first] +=
                            hours[i].bytes_in + hours[i].bytes_out;
        tui_request_redraw(d->tui);
        return 0;
}

static int on_budgets(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        UsageData *d = userdata;

        d->get_budgets = sd_bus_slot_unref(d->get_budgets);
        if (sd_bus_message_get_error(m))
                return 0; /* an older roamd: no budgets */
        budgets_free(d);
        (void)roam_budgets_read(m, &d->budgets, &d->n_budgets);
        tui_request_redraw(d->tui);
        return 0;
}

static int call(UsageData *d, sd_bus_slot **slot, const char *method, bool all, uint64_t since,
                sd_bus_message_handler_t cb)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        sd_bus *bus = tui_bus(d->tui);
        int r;

        if (!bus)
                return -ENOTCONN;
        if (streq(method, "GetBudgets"))
                r = sd_bus_message_new_method_call(bus, &msg, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                                   ROAM_USAGE_INTERFACE, method);
        else
                r = roam_usage_new_call(
                    bus, method, &(RoamUsageQuery){.user = all ? "all" : NULL, .since = since},
                    &msg);
        if (r < 0)
                return r;
        *slot = sd_bus_slot_unref(*slot);
        return sd_bus_call_async(bus, slot, msg, cb, d, 0);
}

static void load(UsageData *d)
{
        uint64_t since = roam_now() / 1000000 / 3600 * 3600 - (HOURS - 1) * 3600;

        (void)call(d, &d->get_usage, "GetUsage", !d->own_only, 0, on_usage);
        (void)call(d, &d->get_history, "GetUsageHistory", !d->own_only, since, on_history);
        (void)call(d, &d->get_budgets, "GetBudgets", false, 0, on_budgets);
}

static int on_budget_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        load(userdata);
        return 0;
}

static int usage_enter(Tui *t, Screen *s)
{
        UsageData *d = s->data;
        sd_bus *bus = tui_bus(t);

        d->tui = t;
        if (!bus)
                return 0;
        if (!d->match)
                (void)sd_bus_match_signal_async(bus, &d->match, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                                ROAM_USAGE_INTERFACE, "BudgetChanged",
                                                on_budget_changed, NULL, d);
        load(d);
        return 0;
}

static void usage_leave(Tui *t, Screen *s)
{
        UsageData *d = s->data;

        d->match = sd_bus_slot_unref(d->match);
        d->get_usage = sd_bus_slot_unref(d->get_usage);
        d->get_history = sd_bus_slot_unref(d->get_history);
        d->get_budgets = sd_bus_slot_unref(d->get_budgets);
        rows_free(d);
        budgets_free(d);
        d->loaded = false;
}

static int row_cmp(const void *x, const void *y, void *userdata)
{
        const UsageRow *a = x, *b = y;
        UsageSort sort = *(const UsageSort *)userdata;
        uint64_t ka = 0, kb = 0;

        switch (sort) {
        case SORT_TOTAL:
                ka = a->home + a->roaming, kb = b->home + b->roaming;
                break;
        case SORT_HOME:
                ka = a->home, kb = b->home;
                break;
        case SORT_ROAMING:
                ka = a->roaming, kb = b->roaming;
                break;
        case SORT_NAME:
        case _SORT_MAX:
                break;
        }
        if (ka != kb)
                return ka > kb ? -1 : 1;
        return strcmp(a->owner, b->owner);
}

/* A bar of width cells for v of max, then its number: never the bar alone. */
static int span_bar(Tui *t, TuiDoc *doc, int width, uint64_t v, uint64_t max, ThemeRole role)
{
        char bar[256] = "", num[32];
        int fill = max ? (int)((v * (uint64_t)width + max - 1) / max) : 0;
        const char *full = tui_utf8(t) ? "\u2588" : "#", *empty = tui_utf8(t) ? "\u2591" : ".";
        int r;

        for (int i = 0; i < width; i++)
                strncat(bar, i < fill ? full : empty, sizeof(bar) - strlen(bar) - 1);
        roam_format_bytes(v, num, sizeof(num));
        r = tui_doc_span(doc, role, width, bar);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_NORMAL, 10, " %9s", num);
        return r;
}

static size_t count_matching(const UsageData *d)
{
        size_t n = 0;

        for (size_t i = 0; i < d->n_rows; i++) {
                const char *fields[] = {d->rows[i].owner, NULL};

                n += tui_filter_match(&d->filter, fields);
        }
        return n;
}

static int build(Tui *t, UsageData *d, TuiDoc *doc)
{
        size_t n_match;
        static const char *const spark_utf8[] = {" ",      "\u2581", "\u2582", "\u2583", "\u2584",
                                                 "\u2585", "\u2586", "\u2587", "\u2588"};
        static const char *const spark_ascii[] = {" ", ".", ":", "-", "=", "+", "*", "#", "@"};
        const char *const *spark = tui_utf8(t) ? spark_utf8 : spark_ascii;
        bool narrow = COLS < 60;
        int name_w = COLS - 2 * 22 - 4, bar_w = 11;
        uint64_t peak = 0, max = 0, home = 0, roaming = 0;
        int peak_hour = 0, r;
        char buf[64], line[HOURS * 4 + 1] = "";

        if (name_w < 8)
                name_w = 8;
        r = tui_doc_line(doc, -1, 0);
        if (!d->loaded)
                return r < 0 ? r : tui_doc_span(doc, THEME_MUTED, 0, "Reading usage from roamd...");
        if (d->error[0])
                return r < 0 ? r
                             : tui_doc_spanf(doc, THEME_ERROR, 0, "No usage to show: %s", d->error);
        for (size_t i = 0; i < d->n_rows; i++) {
                home += d->rows[i].home, roaming += d->rows[i].roaming;
                max = MAX(max, MAX(d->rows[i].home, d->rows[i].roaming));
        }
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0, "%s, sorted by %s",
                                  d->own_only ? "Your usage" : "Usage of everyone",
                                  sort_words[d->sort]);
        /* totals in words */
        if (r >= 0)
                r = tui_doc_line(doc, -1, 2);
        roam_format_bytes(home, buf, sizeof(buf));
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "Not roaming %s", buf);
        roam_format_bytes(roaming, buf, sizeof(buf));
        if (r >= 0)
                r = tui_doc_spanf(doc, roaming ? THEME_WARNING : THEME_NORMAL, 0, ", roaming %s",
                                  buf);
        /* the last 24 hours, one cell per hour */
        for (int h = 0; h < HOURS; h++)
                if (d->hours[h] > peak)
                        peak = d->hours[h], peak_hour = h;
        for (int h = 0; h < HOURS; h++) {
                int level = peak ? (int)((d->hours[h] * 8 + peak - 1) / peak) : 0;
                strncat(line, spark[level], sizeof(line) - strlen(line) - 1);
        }
        if (r >= 0)
                r = tui_doc_line(doc, -1, 2);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, 0, "Last 24 h ");
        if (r >= 0)
                r = tui_doc_span(doc, THEME_OK, 0, line);
        if (r >= 0 && peak) {
                time_t at =
                    (time_t)((roam_now() / 1000000 / 3600 - (HOURS - 1) + peak_hour) * 3600);
                struct tm tm;
                gmtime_r(&at, &tm);
                roam_format_bytes(peak, buf, sizeof(buf));
                r = tui_doc_spanf(doc, THEME_NORMAL, 0, " peak %s at %02d:00 UTC", buf, tm.tm_hour);
        } else if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0, " nothing in the last day");

        d->n_shown = 0;
        if (r >= 0) {
                /* the sort order is in the title: the filter line says the filter only */
                TuiFilter f = d->filter;

                f.order = 0;
                n_match = count_matching(d);
                if (d->selected >= (int)n_match)
                        d->selected = n_match > 0 ? (int)n_match - 1 : 0;
                r = tui_filter_line(t, &f, doc, n_match, d->n_rows, "owners", sort_words);
        }
        /* the owners, home and roaming side by side */
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && narrow)
                r = tui_doc_span(doc, THEME_TITLE, 0, "Owners");
        else if (r >= 0) {
                r = tui_doc_span(doc, THEME_TITLE, name_w, "Owner");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, bar_w + 10, " Not roaming");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, 0, "   Roaming");
        }
        if (d->n_rows == 0 && r >= 0) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_MUTED, 0, "Nothing counted yet.");
        }
        qsort_r(d->rows, d->n_rows, sizeof(*d->rows), row_cmp, &d->sort);
        for (size_t j = 0, i = 0; j < d->n_rows && r >= 0; j++) {
                const UsageRow *row = &d->rows[j];
                const char *fields[] = {row->owner, NULL};

                if (!tui_filter_match(&d->filter, fields))
                        continue;
                i = d->n_shown++;
                r = tui_doc_line(doc, (int)i, 2);
                if (r >= 0 && narrow) {
                        /* the whole name on its line, the numbers in words under it */
                        char a[32], b[32];
                        roam_format_bytes(row->home, a, sizeof(a));
                        roam_format_bytes(row->roaming, b, sizeof(b));
                        r = tui_doc_span(doc, THEME_NORMAL, 0, row->owner);
                        if (r >= 0)
                                r = tui_doc_line(doc, (int)i, 4);
                        if (r >= 0) /* one line each: a number is never split from its unit */
                                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "not roaming %s", a);
                        if (r >= 0)
                                r = tui_doc_line(doc, (int)i, 4);
                        if (r >= 0)
                                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "roaming %s", b);
                } else if (r >= 0) {
                        r = tui_doc_span(doc, THEME_NORMAL, name_w, row->owner);
                        if (r >= 0)
                                r = span_bar(t, doc, bar_w, row->home, max, THEME_OK);
                        if (r >= 0)
                                r = tui_doc_span(doc, THEME_NORMAL, 1, " ");
                        if (r >= 0)
                                r = span_bar(t, doc, bar_w, row->roaming, max, THEME_WARNING);
                }
        }

        /* budgets, in words */
        if (d->n_budgets > 0 && r >= 0) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, 0, "Budgets");
        }
        for (size_t i = 0; i < d->n_budgets && r >= 0; i++) {
                const RoamBudget *b = &d->budgets[i];
                char used[32], limit[32], until[32];
                bool over = streq_ptr(b->state, "over"), warn = streq_ptr(b->state, "warning");

                roam_format_bytes(b->used, used, sizeof(used));
                roam_format_bytes(b->limit, limit, sizeof(limit));
                roam_format_utc_minute(b->end, until, sizeof(until));
                r = tui_doc_line(doc, -1, 4);
                if (r >= 0 && b->limit == 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s on %s: nothing allowed, ",
                                          b->app ?: "", b->links ?: "");
                else if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s on %s: %s of %s, ",
                                          b->app ?: "", b->links ?: "", used, limit);
                if (r >= 0)
                        r = tui_doc_span(doc,
                                         over   ? THEME_ERROR
                                         : warn ? THEME_WARNING
                                                : THEME_OK,
                                         0, roam_budget_state_words(b->state));
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, ", until %s UTC", until);
        }
        return r;
}

static void usage_draw(Tui *t, Screen *s, int top, int height)
{
        UsageData *d = s->data;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;

        d->tui = t;
        if (tui_doc_new(&doc) < 0 || build(t, d, doc) < 0)
                return;
        tui_doc_draw(t, doc, top, height, d->n_rows ? d->selected : -1, &d->scroll);
}

static int usage_key(Tui *t, Screen *s, int key)
{
        UsageData *d = s->data;
        bool handled;
        int i;

        /* `/` and the typing; s stays this screen's own (its orders are its title's) */
        if (key != 's' || d->filter.editing) {
                i = tui_filter_key(t, &d->filter, key, 1, sort_words);
                if (i != REACTION_UNHANDLED) {
                        d->selected = 0;
                        return i;
                }
        }
        switch (key) {
        case 's':
                d->sort = (d->sort + 1) % _SORT_MAX;
                tui_message(t, THEME_NORMAL, "Sorted by %s.", sort_words[d->sort]);
                return REACTION_REDRAW;
        case 'r':
                load(d);
                tui_message(t, THEME_NORMAL, "Reading usage again.");
                return REACTION_REDRAW;
        }
        i = tui_list_key(key, d->selected, (int)count_matching(d), &handled);
        if (!handled)
                return REACTION_UNHANDLED;
        if (i >= 0)
                d->selected = i;
        return REACTION_REDRAW;
}

static const KeyHelp usage_keys[] = {
    {"s", "sort", "Sort by total, not roaming, roaming or name (in turn)"},
    {"r", "refresh", "Read the usage from roamd again"},
    {"/", "filter",
     "Show only the owners (apps, users) whose name contains what you type (Enter keeps it, Esc "
     "clears it, Ctrl-U clears the text typed; / again starts a new filter)"},
    {"Up/Down", NULL, "Select the previous or next owner (also k and j)"},
    {"Esc", NULL, "Back to the overview (first clears a filter)"},
    {},
};

/* Bytes are counted all the time; only budgets send a signal: read again while shown. */
static int usage_tick(Tui *t, Screen *s)
{
        load(s->data);
        return REACTION_NONE; /* the answers draw */
}

const ScreenVTable usage_screen_vtable = {
    .name = "usage",
    .title = "Usage",
    .number = 5,
    .data_size = sizeof(UsageData),
    .enter = usage_enter,
    .leave = usage_leave,
    /* Leaving frees all it holds. */
    .done = usage_leave,
    .draw = usage_draw,
    .key = usage_key,
    .keys = usage_keys,
    .typing_keys = tui_filter_typing_keys,
    .tick = usage_tick,
    .about = "Data counted by roamd in the kernel, per app, user and the system: not roaming "
             "and roaming side by side (read again every 5 s), each with its number, the last 24 "
             "hours hour by hour, and "
             "the data budgets (over budget: the app's traffic on those links is blocked until "
             "the period ends). You see everyone's usage with root, group netdev or polkit "
             "authorization, otherwise your own.",
};
