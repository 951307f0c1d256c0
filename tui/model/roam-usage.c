/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-usage.h"
#include "roam-util.h"

int roam_usage_parse_user(const char *s, uint32_t *ret)
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

int roam_usage_new_call(sd_bus *bus, const char *method, const RoamUsageQuery *q,
                        sd_bus_message **ret)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                           ROAM_USAGE_INTERFACE, method);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
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

                r = roam_usage_parse_user(q->user, &uid);
                if (r >= 0)
                        r = sd_bus_message_append(m, "{sv}", "user", "u", uid);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

void roam_usage_rows_free(RoamUsageRow *rows, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(rows[i].owner);
                free(rows[i].link);
        }
        free(rows);
}

int roam_usage_rows_read(sd_bus_message *m, RoamUsageRow **ret, size_t *ret_n)
{
        RoamUsageRow *rows = NULL;
        const char *owner, *link;
        uint64_t bi, bo, pi, po;
        size_t n = 0;
        int roaming, r;

        r = sd_bus_message_enter_container(m, 'a', "(ssbtttt)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssbtttt)", &owner, &link, &roaming, &bi, &bo,
                                                  &pi, &po)) > 0) {
                RoamUsageRow *nr = reallocarray(rows, n + 1, sizeof(*nr));

                if (!nr) {
                        r = -ENOMEM;
                        break;
                }
                rows = nr;
                rows[n++] = (RoamUsageRow){
                    .owner = strdup(owner),
                    .link = strdup(link),
                    .roaming = roaming,
                    .bytes_in = bi,
                    .bytes_out = bo,
                    .packets_in = pi,
                    .packets_out = po,
                };
                if (!rows[n - 1].owner || !rows[n - 1].link)
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                roam_usage_rows_free(rows, n);
                return r;
        }
        *ret = rows;
        *ret_n = n;
        return 0;
}

int roam_usage_history_read(sd_bus_message *m, RoamUsageHour **ret, size_t *ret_n)
{
        _cleanup_free_ RoamUsageHour *hours = NULL;
        uint64_t start, bi, bo, pi, po;
        size_t n = 0;
        int roaming, r;

        r = sd_bus_message_enter_container(m, 'a', "(tbtttt)");
        while (r >= 0 &&
               (r = sd_bus_message_read(m, "(tbtttt)", &start, &roaming, &bi, &bo, &pi, &po)) > 0) {
                RoamUsageHour *nh = reallocarray(hours, n + 1, sizeof(*nh));

                if (!nh)
                        return -ENOMEM;
                hours = nh;
                hours[n++] = (RoamUsageHour){
                    .start = start,
                    .roaming = roaming,
                    .bytes_in = bi,
                    .bytes_out = bo,
                    .packets_in = pi,
                    .packets_out = po,
                };
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(hours);
        *ret_n = n;
        return 0;
}

void roam_budgets_free(RoamBudget *b, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                free(b[i].app);
                free(b[i].links);
                free(b[i].state);
        }
        free(b);
}

int roam_budgets_read(sd_bus_message *m, RoamBudget **ret, size_t *ret_n)
{
        RoamBudget *list = NULL;
        const char *app, *links, *state;
        uint64_t limit, used, start, end, warn;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(ssttttts)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssttttts)", &app, &links, &limit, &used,
                                                  &start, &end, &warn, &state)) > 0) {
                RoamBudget *nl = reallocarray(list, n + 1, sizeof(*nl));

                if (!nl) {
                        r = -ENOMEM;
                        break;
                }
                list = nl;
                list[n++] = (RoamBudget){
                    .app = strdup(app),
                    .links = strdup(links),
                    .state = strdup(state),
                    .limit = limit,
                    .used = used,
                    .start = start,
                    .end = end,
                    .warn = warn,
                };
                if (!list[n - 1].app || !list[n - 1].links || !list[n - 1].state)
                        r = -ENOMEM;
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r < 0) {
                roam_budgets_free(list, n);
                return r;
        }
        *ret = list;
        *ret_n = n;
        return 0;
}

const char *roam_budget_state_words(const char *state)
{
        if (streq_ptr(state, "over"))
                return "over budget: blocked";
        if (streq_ptr(state, "warning"))
                return "warning: nearly used up";
        return "within budget";
}
