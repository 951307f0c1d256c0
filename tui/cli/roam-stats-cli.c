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

#define USAGE_INTERFACE "org.roam1.Usage"

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

static int parse_user(const char *s, uint32_t *ret)
{
        char *end;
        unsigned long uid;

        errno = 0;
        uid = strtoul(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || *s == '+' || uid >= UINT32_MAX)
                return -EINVAL;
        *ret = (uint32_t)uid;
        return 0;
}

static int append_filter(sd_bus_message *m, const RoamStatsQuery *q)
{
        int r = sd_bus_message_open_container(m, 'a', "{sv}");

        if (r >= 0 && q->app)
                r = sd_bus_message_append(m, "{sv}", "app", "s", q->app);
        if (r >= 0 && q->link)
                r = sd_bus_message_append(m, "{sv}", "link", "s", q->link);
        if (r >= 0 && q->since)
                r = sd_bus_message_append(m, "{sv}", "since", "t", q->since);
        if (r >= 0 && q->user && streq(q->user, "all"))
                r = sd_bus_message_append(m, "{sv}", "all", "b", 1);
        else if (r >= 0 && q->user) {
                uint32_t uid;
                r = parse_user(q->user, &uid);
                if (r >= 0)
                        r = sd_bus_message_append(m, "{sv}", "user", "u", uid);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

const char *roam_budget_state_words(const char *state)
{
        if (streq_ptr(state, "over"))
                return "over budget: blocked";
        if (streq_ptr(state, "warning"))
                return "warning: nearly used up";
        return "within budget";
}

static int budget_json(json_object *arr, const char *app, const char *links, uint64_t limit,
                       uint64_t used, uint64_t start, uint64_t end, uint64_t warn,
                       const char *state)
{
        json_object *o = json_object_new_object();

        if (!o || json_add_string(o, "app", app) < 0 || json_add_string(o, "links", links) < 0 ||
            json_add_uint(o, "limit_bytes", limit) < 0 ||
            json_add_uint(o, "used_bytes", used) < 0 ||
            json_add_uint(o, "period_start", start) < 0 ||
            json_add_uint(o, "period_end", end) < 0 || json_add_uint(o, "warn_percent", warn) < 0 ||
            json_add_string(o, "state", state) < 0 ||
            json_add_string(o, "state_words", roam_budget_state_words(state)) < 0 ||
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
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *app, *links, *state;
        uint64_t limit, used, start, end, warn;
        bool header = false;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, USAGE_INTERFACE, "GetBudgets",
                               &error, &reply, "");
        if (r < 0) /* an older roamd: no budgets to show */
                return 0;
        r = sd_bus_message_enter_container(reply, 'a', "(ssttttts)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ssttttts)", &app, &links, &limit, &used,
                                                  &start, &end, &warn, &state)) > 0) {
                char u[32], l[32], until[32], words[64];

                if (q->app && !streq(q->app, app))
                        continue;
                if (arr) {
                        r = budget_json(arr, app, links, limit, used, start, end, warn, state);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!header) {
                        printf("\n%-36s %-10s %21s  %-16s %s\n", "BUDGET", "LINKS", "USED",
                               "UNTIL (UTC)", "STATE");
                        header = true;
                }
                roam_format_bytes(used, u, sizeof(u));
                roam_format_bytes(limit, l, sizeof(l));
                snprintf(words, sizeof(words), "%s of %s", u, l);
                roam_format_utc_minute(end, until, sizeof(until));
                printf("%-36s %-10s %21s  %-16s %s\n", app, links, words, until,
                       roam_budget_state_words(state));
        }
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        return 0;
}

static int get_usage(sd_bus *bus, const RoamStatsQuery *q, sd_bus_message **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &call, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                           USAGE_INTERFACE, "GetUsage");
        if (r < 0)
                return log_oom();
        r = append_filter(call, q);
        if (r < 0) /* -EINVAL: a filter sd-bus refuses (not UTF-8), not memory */
                return log_error_errno(r, "Cannot ask roamd for the usage: %m");
        r = sd_bus_call(bus, call, 0, &error, ret);
        if (r < 0)
                return roam_bus_log_call_error(&error, r, "read usage");
        return 0;
}

/* --link with no rows: a link roamd has now, or one it counted traffic on in the past (a phone
 * tethered last week), shows an empty table; any other name is a mistake, said as such. */
static int check_link(sd_bus *bus, const RoamStatsQuery *q)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        RoamStatsQuery ever = {.user = q->user, .link = q->link};
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetLinkByName", &error, NULL, "s", q->link);
        if (r >= 0)
                return 0;
        if (!sd_bus_error_has_names(&error, ROAM_ERROR_NO_SUCH_LINK, ROAM_ERROR_INVALID_ARGS))
                return roam_bus_log_call_error(&error, r, "look the link up");
        r = get_usage(bus, &ever, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(ssbtttt)");
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        if (sd_bus_message_at_end(reply, false) > 0) {
                log_error("no link '%s': roamd has none and counted no traffic on one (roam "
                          "status lists the links)",
                          q->link);
                return -ENOENT;
        }
        return 0;
}

/* --app with no rows, the same: an app roamd has now, or one it counted traffic for in the
 * past, shows an empty table; any other ID is a mistake (a typo), not zeros. */
static int check_app(sd_bus *bus, const RoamStatsQuery *q)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        RoamStatsQuery ever = {.user = q->user, .app = q->app};
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetApp", &error, NULL, "s", q->app);
        if (r >= 0)
                return 0;
        if (!sd_bus_error_has_names(&error, ROAM_ERROR_NO_SUCH_APP, ROAM_ERROR_INVALID_ARGS))
                return roam_bus_log_call_error(&error, r, "look the app up");
        r = get_usage(bus, &ever, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_enter_container(reply, 'a', "(ssbtttt)");
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        if (sd_bus_message_at_end(reply, false) > 0) {
                log_error("no app '%s': roamd has none and counted no traffic for one (roam apps "
                          "lists them)",
                          q->app);
                return -ENOENT;
        }
        return 0;
}

int roam_stats_run(const RoamStatsQuery *q, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *arr = NULL;
        const char *owner, *link;
        uint64_t bi, bo, pi, po, tin = 0, tout = 0;
        int roaming, r;

        uint32_t uid;

        if (q->user && !streq(q->user, "all") && parse_user(q->user, &uid) < 0)
                return roam_usage_error("stats", "--user takes a uid or \"all\", got \"%s\".",
                                        q->user);
        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        r = get_usage(bus, q, &reply);
        if (r < 0)
                return r;
        if (q->link || q->app) {
                r = sd_bus_message_enter_container(reply, 'a', "(ssbtttt)");
                if (r >= 0 && sd_bus_message_at_end(reply, false) > 0 && q->link)
                        r = check_link(bus, q);
                if (r >= 0 && sd_bus_message_at_end(reply, false) > 0 && q->app)
                        r = check_app(bus, q);
                if (r >= 0)
                        r = sd_bus_message_rewind(reply, true);
                if (r < 0)
                        return r;
        }
        if (json) {
                arr = json_object_new_array();
                if (!arr)
                        return log_oom();
        } else
                /* roaming in the carrier's sense (a visited network), not the firewall's home
                 * location: yes or no, never "home" */
                printf("%-36s %-10s %-8s %12s %12s\n", "OWNER", "LINK", "ROAMING", "RECEIVED",
                       "SENT");
        r = sd_bus_message_enter_container(reply, 'a', "(ssbtttt)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ssbtttt)", &owner, &link, &roaming, &bi,
                                                  &bo, &pi, &po)) > 0) {
                tin += bi, tout += bo;
                if (json) {
                        json_object *o = json_object_new_object();
                        if (!o || json_add_string(o, "owner", owner) < 0 ||
                            json_add_string(o, "link", link) < 0 ||
                            json_add_bool(o, "roaming", roaming) < 0 ||
                            json_add_uint(o, "bytes_in", bi) < 0 ||
                            json_add_uint(o, "bytes_out", bo) < 0 ||
                            json_add_uint(o, "packets_in", pi) < 0 ||
                            json_add_uint(o, "packets_out", po) < 0 || json_append(arr, o) < 0) {
                                json_object_put(o);
                                return log_oom();
                        }
                } else {
                        char a[32], b[32];
                        roam_format_bytes(bi, a, sizeof(a));
                        roam_format_bytes(bo, b, sizeof(b));
                        printf("%-36s %-10s %-8s %12s %12s\n", owner, link, roaming ? "yes" : "no",
                               a, b);
                }
        }
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        if (json) {
                _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
                json_object *budgets; /* owned by doc once added */

                if (!doc || json_add(doc, "usage", TAKE_PTR(arr)) < 0)
                        return log_oom();
                budgets = json_object_new_array();
                if (json_add(doc, "budgets", budgets) < 0)
                        return log_oom();
                r = print_budgets(bus, q, budgets);
                if (r < 0)
                        return r;
                return json_print(doc, stdout);
        }
        char a[32], b[32];
        roam_format_bytes(tin, a, sizeof(a));
        roam_format_bytes(tout, b, sizeof(b));
        printf("%-36s %-10s %-8s %12s %12s\n", "total", "", "", a, b);
        return print_budgets(bus, q, NULL);
}
