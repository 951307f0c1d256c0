/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-stats-cli.h"
#include "roam-util.h"

int roam_stats_parse_since(const char *s, uint64_t now, uint64_t *ret)
{
        static const struct {
                const char *suffix;
                uint64_t sec;
        } units[] = {{"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}};
        unsigned long long v;
        char *end;

        if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
                return -EINVAL;
        errno = 0;
        if (*s == '@') {
                v = strtoull(s + 1, &end, 10);
                if (errno || end == s + 1 || *end)
                        return -EINVAL;
                if (v > now) /* nothing was counted in the future: not zeros, a mistake */
                        return -ERANGE;
                *ret = v;
                return 0;
        }
        v = strtoull(s, &end, 10);
        if (errno || end == s)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(end, units[i].suffix)) {
                        if (v > now / units[i].sec)
                                return -ERANGE;
                        *ret = now - v * units[i].sec;
                        return 0;
                }
        return -EINVAL;
}

static int budget_json(json_object *arr, const RoamBudget *b)
{
        json_object *o = json_object_new_object();

        if (!o || json_add_string(o, "app", b->app) < 0 ||
            json_add_string(o, "links", b->links) < 0 ||
            json_add_uint(o, "limit_bytes", b->limit) < 0 ||
            json_add_uint(o, "used_bytes", b->used) < 0 ||
            json_add_uint(o, "period_start", b->start) < 0 ||
            json_add_uint(o, "period_end", b->end) < 0 ||
            json_add_uint(o, "warn_percent", b->warn) < 0 ||
            json_add_string(o, "state", b->state) < 0 ||
            json_add_string(o, "state_words", roam_budget_state_words(b->state)) < 0 ||
            json_append(arr, o) < 0) {
                json_object_put(o);
                return log_oom();
        }
        return 0;
}

/* The budgets, in words: "over budget" is the state a person looks for. With a JSON array
 * given, they are appended to it instead. */
static int print_budgets(sd_bus *bus, const RoamStatsQuery *q, json_object *arr)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        RoamBudget *budgets = NULL;
        bool header = false;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_USAGE_INTERFACE,
                               "GetBudgets", NULL, &reply, "");
        if (r < 0) /* an older roamd: no budgets to show */
                return 0;
        r = roam_budgets_read(reply, &budgets, &n);
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const RoamBudget *b = &budgets[i];
                char u[32], l[32], until[32], words[64];

                if (q->app && !streq(q->app, b->app))
                        continue;
                if (arr) {
                        r = budget_json(arr, b);
                        continue;
                }
                if (!header) {
                        printf("\n%-36s %-10s %21s  %-16s %s\n", "BUDGET", "LINKS", "USED",
                               "UNTIL (UTC)", "STATE");
                        header = true;
                }
                roam_format_bytes(b->used, u, sizeof(u));
                roam_format_bytes(b->limit, l, sizeof(l));
                snprintf(words, sizeof(words), "%s of %s", u, l);
                roam_format_utc_minute(b->end, until, sizeof(until));
                printf("%-36s %-10s %21s  %-16s %s\n", b->app, b->links, words, until,
                       roam_budget_state_words(b->state));
        }
        roam_budgets_free(budgets, n);
        return r;
}

/* Reads the usage rows q asks for. */
static int get_usage(sd_bus *bus, const RoamStatsQuery *q, RoamUsageRow **ret, size_t *ret_n)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = roam_usage_new_call(bus, "GetUsage", q, &call);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0) /* -EINVAL: a filter sd-bus refuses (not UTF-8), not memory */
                return log_error_errno(r, "Cannot ask roamd for the usage: %m");
        r = sd_bus_call(bus, call, 0, &error, &reply);
        if (r < 0)
                return roam_bus_log_call_error(&error, r, "read usage");
        r = roam_usage_rows_read(reply, ret, ret_n);
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        return 0;
}

/* --link or --app with no rows: a link (an app) roamd has now, or one it counted traffic on
 * (for) in the past (a phone tethered last week), shows an empty table; any other name is a
 * mistake (a typo), said as such, not zeros. lookup is the Manager's method that knows it
 * now, unknown the error it answers when it does not; ever the query of its past traffic. */
static int check_known(sd_bus *bus, const char *lookup, const char *name, const char *unknown,
                       const RoamStatsQuery *ever, const char *what, const char *lists)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        RoamUsageRow *rows = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               lookup, &error, NULL, "s", name);
        if (r >= 0)
                return 0;
        if (!sd_bus_error_has_names(&error, unknown, ROAM_ERROR_INVALID_ARGS)) {
                char why[64];

                snprintf(why, sizeof(why), "look the %s up", what);
                return roam_bus_log_call_error(&error, r, why);
        }
        r = get_usage(bus, ever, &rows, &n);
        if (r < 0)
                return r;
        roam_usage_rows_free(rows, n);
        if (n == 0) {
                log_error("no %s '%s': roamd has none and counted no traffic %s one (%s)", what,
                          name, streq(what, "link") ? "on" : "for", lists);
                return -ENOENT;
        }
        return 0;
}

int roam_stats_run(const RoamStatsQuery *q, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(json_object_putp) json_object *arr = NULL;
        RoamUsageRow *rows = NULL;
        uint64_t tin = 0, tout = 0;
        size_t n = 0;
        int r;

        uint32_t uid;

        if (q->user && !streq(q->user, "all") && roam_usage_parse_user(q->user, &uid) < 0)
                return roam_usage_error("stats", "--user takes a uid or \"all\", got \"%s\".",
                                        q->user);
        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        r = get_usage(bus, q, &rows, &n);
        if (r < 0)
                return r;
        if (n == 0 && q->link)
                r = check_known(bus, "GetLinkByName", q->link, ROAM_ERROR_NO_SUCH_LINK,
                                &(RoamStatsQuery){.user = q->user, .link = q->link}, "link",
                                "roam status lists the links");
        if (r >= 0 && n == 0 && q->app)
                r = check_known(bus, "GetApp", q->app, ROAM_ERROR_NO_SUCH_APP,
                                &(RoamStatsQuery){.user = q->user, .app = q->app}, "app",
                                "roam apps lists them");
        if (r < 0)
                goto finish;
        if (json) {
                arr = json_object_new_array();
                if (!arr) {
                        r = log_oom();
                        goto finish;
                }
        } else
                /* roaming in the carrier's sense (a visited network), not the firewall's home
                 * location: yes or no, never "home" */
                printf("%-36s %-10s %-8s %12s %12s\n", "OWNER", "LINK", "ROAMING", "RECEIVED",
                       "SENT");
        for (size_t i = 0; i < n; i++) {
                const RoamUsageRow *u = &rows[i];

                tin += u->bytes_in, tout += u->bytes_out;
                if (json) {
                        json_object *o = json_object_new_object();
                        if (!o || json_add_string(o, "owner", u->owner) < 0 ||
                            json_add_string(o, "link", u->link) < 0 ||
                            json_add_bool(o, "roaming", u->roaming) < 0 ||
                            json_add_uint(o, "bytes_in", u->bytes_in) < 0 ||
                            json_add_uint(o, "bytes_out", u->bytes_out) < 0 ||
                            json_add_uint(o, "packets_in", u->packets_in) < 0 ||
                            json_add_uint(o, "packets_out", u->packets_out) < 0 ||
                            json_append(arr, o) < 0) {
                                json_object_put(o);
                                r = log_oom();
                                goto finish;
                        }
                } else {
                        char a[32], b[32];
                        roam_format_bytes(u->bytes_in, a, sizeof(a));
                        roam_format_bytes(u->bytes_out, b, sizeof(b));
                        printf("%-36s %-10s %-8s %12s %12s\n", u->owner, u->link,
                               u->roaming ? "yes" : "no", a, b);
                }
        }
        if (json) {
                _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
                json_object *budgets; /* owned by doc once added */

                if (!doc || json_add(doc, "usage", TAKE_PTR(arr)) < 0 ||
                    !(budgets = json_object_new_array()) || json_add(doc, "budgets", budgets) < 0) {
                        r = log_oom();
                        goto finish;
                }
                r = print_budgets(bus, q, budgets);
                if (r >= 0)
                        r = json_print(doc, stdout);
                goto finish;
        }
        char a[32], b[32];
        roam_format_bytes(tin, a, sizeof(a));
        roam_format_bytes(tout, b, sizeof(b));
        printf("%-36s %-10s %-8s %12s %12s\n", "total", "", "", a, b);
        r = print_budgets(bus, q, NULL);
finish:
        roam_usage_rows_free(rows, n);
        return r;
}
