/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bus.h"
#include "roam-format.h"
#include "roam-plain-usage.h"
#include "roam-usage.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* The budgets are read when roamd appears (silently: what is, is not news) and again at every
 * BudgetChanged; a budget whose state differs from the last reading is one line. "usage"
 * asks GetUsage, then GetBudgets, and answers when both replies are in. */

struct PlainUsage {
        RoamLive *live;
        sd_bus *bus;
        sd_bus_slot *match, *watch_slot, *usage_slot, *budgets_slot;
        bool loaded; /* the budgets have been read once */
        RoamBudget *budgets;
        size_t n_budgets;
        char *app; /* what the "usage" in flight asked for (NULL: everything) */
        bool all;  /* ... and whether everyone's ("usage --all") */
};

const char plain_usage_help[] =
    "  usage [APP]    your traffic counted per owner, not roaming and roaming,\n"
    "                 and the data budgets (of APP only)\n"
    "  usage --all [APP]   the same for everyone: every user's apps and processes,\n"
    "                 system services and the rest (needs authorization)\n";

/* "1 Jan", with the time when the period does not end at midnight (UTC, as roamd counts). The
 * month in English whatever the locale: the rest of the sentence is. */
static void format_until(uint64_t end, char *buf, size_t size)
{
        static const char *const months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
        time_t t = (time_t)end;
        struct tm tm;

        if (!gmtime_r(&t, &tm)) {
                snprintf(buf, size, "@%" PRIu64, end);
                return;
        }
        if (tm.tm_hour == 0 && tm.tm_min == 0)
                snprintf(buf, size, "%d %s", tm.tm_mday, months[tm.tm_mon]);
        else
                snprintf(buf, size, "%d %s %02d:%02d UTC", tm.tm_mday, months[tm.tm_mon],
                         tm.tm_hour, tm.tm_min);
}

/* "org.example.Video: over budget on cellular: blocked until 1 Jan" */
static void announce(const RoamBudget *b)
{
        char until[48], used[32], limit[32];

        format_until(b->end, until, sizeof(until));
        roam_format_bytes(b->used, used, sizeof(used));
        roam_format_bytes(b->limit, limit, sizeof(limit));
        roam_print_stamp();
        if (streq(b->state, "over"))
                printf("%s: over budget on %s: blocked until %s.\n", b->app, b->links, until);
        else if (streq(b->state, "warning"))
                printf("%s: budget on %s nearly used up: %s of %s until %s.\n", b->app, b->links,
                       used, limit, until);
        else if (b->limit == 0)
                printf("%s: within budget on %s: nothing allowed until %s.\n", b->app, b->links,
                       until);
        else
                printf("%s: within budget on %s: %s of %s until %s.\n", b->app, b->links, used,
                       limit, until);
}

static const RoamBudget *find(const RoamBudget *list, size_t n, const char *app, const char *links)
{
        for (size_t i = 0; i < n; i++)
                if (streq(list[i].app, app) && streq(list[i].links, links))
                        return &list[i];
        return NULL;
}

/* Keeps the reading; says what changed since the last one. */
static void budgets_take(PlainUsage *pu, RoamBudget *now, size_t n)
{
        if (pu->loaded)
                for (size_t i = 0; i < n; i++) {
                        const RoamBudget *was =
                            find(pu->budgets, pu->n_budgets, now[i].app, now[i].links);
                        if (!was || !streq(was->state, now[i].state))
                                announce(&now[i]);
                }
        roam_budgets_free(pu->budgets, pu->n_budgets);
        pu->budgets = now;
        pu->n_budgets = n;
        pu->loaded = true;
}

static int on_watch_budgets(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainUsage *pu = userdata;
        RoamBudget *b;
        size_t n;

        pu->watch_slot = sd_bus_slot_unref(pu->watch_slot);
        if (sd_bus_message_is_method_error(m, NULL) || roam_budgets_read(m, &b, &n) < 0)
                return 0; /* a roamd without budgets: nothing to say */
        budgets_take(pu, b, n);
        fflush(stdout);
        return 0;
}

static void load(PlainUsage *pu)
{
        if (!pu->bus)
                return;
        pu->watch_slot = sd_bus_slot_unref(pu->watch_slot);
        (void)sd_bus_call_method_async(pu->bus, &pu->watch_slot, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                       ROAM_USAGE_INTERFACE, "GetBudgets", on_watch_budgets, pu,
                                       "");
}

static int on_budget_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        load(userdata);
        return 0;
}

void plain_usage_watch(PlainUsage *pu)
{
        sd_bus *bus = roam_live_get_bus(pu->live);

        if (bus != pu->bus) {
                pu->match = sd_bus_slot_unref(pu->match);
                pu->watch_slot = sd_bus_slot_unref(pu->watch_slot);
                pu->usage_slot = sd_bus_slot_unref(pu->usage_slot);
                pu->budgets_slot = sd_bus_slot_unref(pu->budgets_slot);
                pu->bus = sd_bus_unref(pu->bus);
                pu->loaded = false;
                roam_budgets_free(pu->budgets, pu->n_budgets);
                pu->budgets = NULL;
                pu->n_budgets = 0;
                if (!bus)
                        return;
                pu->bus = sd_bus_ref(bus);
                (void)sd_bus_match_signal_async(bus, &pu->match, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                                ROAM_USAGE_INTERFACE, "BudgetChanged",
                                                on_budget_changed, NULL, pu);
        }
        load(pu);
}

static bool startswith(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Whose traffic, in words (docs/stats.md's owners). */
static void owner_words(const char *owner, char *buf, size_t size)
{
        const char *slash = strchr(owner, '/');

        if (startswith(owner, "app:"))
                snprintf(buf, size, "%s", owner + 4);
        else if (startswith(owner, "user:") && slash && startswith(slash, "/app:"))
                snprintf(buf, size, "%s (user %.*s)", slash + 5, (int)(slash - owner - 5),
                         owner + 5);
        else if (startswith(owner, "user:"))
                snprintf(buf, size, "user %s, in no app", owner + 5);
        else if (streq(owner, "system"))
                snprintf(buf, size, "system services");
        else if (streq(owner, "other"))
                snprintf(buf, size, "other (no app's socket)");
        else
                snprintf(buf, size, "%s", owner);
}

static bool owner_is_app(const char *owner, const char *app)
{
        const char *p = strstr(owner, "app:");

        return p && (p == owner || p[-1] == '/') && streq(p + 4, app);
}

typedef struct OwnerSum {
        const char *owner;
        uint64_t in[2], out[2]; /* [roaming] */
} OwnerSum;

static void print_totals(const char *who, const uint64_t in[2], const uint64_t out[2])
{
        char a[32], b[32];

        roam_format_bytes(in[0], a, sizeof(a));
        roam_format_bytes(out[0], b, sizeof(b));
        printf("%s: not roaming %s received, %s sent; ", who, a, b);
        if (in[1] == 0 && out[1] == 0)
                puts("roaming nothing.");
        else {
                roam_format_bytes(in[1], a, sizeof(a));
                roam_format_bytes(out[1], b, sizeof(b));
                printf("roaming %s received, %s sent.\n", a, b);
        }
}

static int on_usage(sd_bus_message *m, void *userdata, sd_bus_error *ret_error);

static int on_command_budgets(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainUsage *pu = userdata;
        RoamBudget *b;
        size_t n, shown = 0;

        pu->budgets_slot = sd_bus_slot_unref(pu->budgets_slot);
        if (sd_bus_message_is_method_error(m, NULL) || roam_budgets_read(m, &b, &n) < 0) {
                puts("No data budgets (roamd does not report any).");
                goto done;
        }
        for (size_t i = 0; i < n; i++) {
                char used[32], limit[32], until[48];

                if (pu->app && !streq(b[i].app, pu->app))
                        continue;
                roam_format_bytes(b[i].used, used, sizeof(used));
                roam_format_bytes(b[i].limit, limit, sizeof(limit));
                format_until(b[i].end, until, sizeof(until));
                if (b[i].limit == 0)
                        printf("Budget: %s on %s: nothing allowed, %s, until %s.\n", b[i].app,
                               b[i].links, roam_budget_state_words(b[i].state), until);
                else
                        printf("Budget: %s on %s: %s of %s, %s, until %s.\n", b[i].app, b[i].links,
                               used, limit, roam_budget_state_words(b[i].state), until);
                shown++;
        }
        if (shown == 0)
                printf("No data budget%s%s.\n", pu->app ? " for " : "", pu->app ?: "");
        /* The answer is also the newest reading: later changes compare with it. */
        budgets_take(pu, b, n);
done:
        free(pu->app);
        pu->app = NULL;
        fflush(stdout);
        return 0;
}

static int on_usage(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainUsage *pu = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        _cleanup_free_ OwnerSum *sums = NULL;
        size_t n = 0;
        uint64_t tin[2] = {}, tout[2] = {};
        RoamUsageRow *rows = NULL;
        size_t n_rows = 0;
        int r;

        pu->usage_slot = sd_bus_slot_unref(pu->usage_slot);
        if (e) {
                printf("Cannot read the usage: %s\n", e->message ? e->message : e->name);
                free(pu->app);
                pu->app = NULL;
                fflush(stdout);
                return 0;
        }
        r = roam_usage_rows_read(m, &rows, &n_rows);
        for (size_t k = 0; r >= 0 && k < n_rows; k++) {
                const RoamUsageRow *row = &rows[k];
                size_t i;

                if (pu->app && !owner_is_app(row->owner, pu->app))
                        continue;
                for (i = 0; i < n && !streq(sums[i].owner, row->owner); i++)
                        ;
                if (i == n) {
                        OwnerSum *ns = realloc(sums, sizeof(*ns) * (n + 1));
                        if (!ns) {
                                r = -ENOMEM;
                                break;
                        }
                        sums = ns;
                        sums[n++] = (OwnerSum){.owner = row->owner};
                }
                sums[i].in[row->roaming] += row->bytes_in;
                sums[i].out[row->roaming] += row->bytes_out;
                tin[row->roaming] += row->bytes_in;
                tout[row->roaming] += row->bytes_out;
        }
        if (r < 0)
                printf("Unexpected answer from roamd: %s\n", strerror(-r));
        else if (n == 0)
                printf("No traffic counted%s%s.\n", pu->app ? " for " : "", pu->app ?: "");
        else if (pu->all)
                printf("Everyone's usage%s%s: %zu owner%s.\n", pu->app ? " of " : "", pu->app ?: "",
                       n, n == 1 ? "" : "s");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                char who[256];

                owner_words(sums[i].owner, who, sizeof(who));
                print_totals(who, sums[i].in, sums[i].out);
        }
        if (r >= 0 && n > 1)
                print_totals("Total", tin, tout);
        roam_usage_rows_free(rows, n_rows);
        r = pu->bus ? sd_bus_call_method_async(pu->bus, &pu->budgets_slot, ROAM_BUS_NAME,
                                               ROAM_MANAGER_PATH, ROAM_USAGE_INTERFACE,
                                               "GetBudgets", on_command_budgets, pu, "")
                    : -ENOTCONN;
        if (r < 0) {
                free(pu->app);
                pu->app = NULL;
        }
        fflush(stdout);
        return 0;
}

int plain_usage_command(PlainUsage *pu, char **words)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        int r;

        bool all;

        if (!streq(words[0], "usage"))
                return 0;
        all = words[1] && streq(words[1], "--all");
        if (all)
                words++;
        if (words[1] && (words[2] || words[1][0] == '-')) {
                puts("usage takes --all and one app id at most: usage [--all] [APP]");
                return 1;
        }
        if (!pu->bus) {
                puts("roamd is not running: no usage to read.");
                return 1;
        }
        if (pu->usage_slot || pu->budgets_slot) {
                puts("Still reading the usage; ask again in a moment.");
                return 1;
        }
        free(pu->app);
        pu->app = words[1] ? strdup(words[1]) : NULL;
        if (words[1] && !pu->app)
                return -ENOMEM;
        pu->all = all;
        r = roam_usage_new_call(pu->bus, "GetUsage",
                                &(RoamUsageQuery){.app = pu->app, .user = all ? "all" : NULL},
                                &call);
        if (r >= 0)
                r = sd_bus_call_async(pu->bus, &pu->usage_slot, call, on_usage, pu, 0);
        if (r < 0)
                printf("Cannot ask roamd: %s\n", strerror(-r));
        return 1;
}

int plain_usage_new(RoamLive *live, PlainUsage **ret)
{
        PlainUsage *pu = calloc(1, sizeof(*pu));

        if (!pu)
                return -ENOMEM;
        pu->live = live;
        *ret = pu;
        return 0;
}

PlainUsage *plain_usage_free(PlainUsage *pu)
{
        if (!pu)
                return NULL;
        sd_bus_slot_unref(pu->match);
        sd_bus_slot_unref(pu->watch_slot);
        sd_bus_slot_unref(pu->usage_slot);
        sd_bus_slot_unref(pu->budgets_slot);
        sd_bus_unref(pu->bus);
        roam_budgets_free(pu->budgets, pu->n_budgets);
        free(pu->app);
        free(pu);
        return NULL;
}
