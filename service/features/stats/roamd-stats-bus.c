/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.roam1.Usage on /org/roam1 (docs/dbus-api.md): usage totals and hourly history.
 * Everyone reads their own usage (owners user:UID and user:UID/app:ID of their uid); anything
 * else needs authorization for org.roam1.read-usage. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-bus-auth.h"
#include "roam-app-id.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-stats.h"

#define USAGE_INTERFACE "org.roam1.Usage"
#define READ_ACTION     "org.roam1.read-usage"

typedef struct Filter {
        char *app;
        uint32_t user;
        bool has_user, all;
        char *link;
        uint64_t since; /* seconds since the epoch */
} Filter;

static void filter_done(Filter *f)
{
        free(f->app);
        free(f->link);
}

/* The app and link filters keep a refused value, so the error can name it. */
static int set_filter_app(sd_bus_message *m, const char *key, void *field)
{
        int r = bus_map_string(m, key, field);

        return r < 0 ? r : app_id_is_valid(*(char **)field) ? 0 : -EINVAL;
}

static int set_filter_link(sd_bus_message *m, const char *key, void *field)
{
        const char *s;
        int r = bus_map_string(m, key, field);

        if (r < 0)
                return r;
        s = *(char **)field;
        return !*s || strlen(s) > 15 || strchr(s, '/') ? -EINVAL : 0;
}

static int set_filter_user(sd_bus_message *m, const char *key, void *field)
{
        Filter *f = field;

        f->has_user = true;
        return bus_map_u32(m, key, &f->user);
}

static const BusMapEntry filter_map[] = {
    {"app", "s", set_filter_app, offsetof(Filter, app)},
    {"user", "u", set_filter_user, 0},
    {"link", "s", set_filter_link, offsetof(Filter, link)},
    {"since", "t", bus_map_u64, offsetof(Filter, since)},
    {"all", "b", bus_map_bool, offsetof(Filter, all)},
    {},
};

static int read_filter(sd_bus_message *m, Filter *f, sd_bus_error *error)
{
        const char *key;
        int r;

        r = bus_map_read_flags(m, filter_map, BUS_MAP_REFUSE_UNKNOWN, f, &key);
        if (r >= 0 || !key)
                return r;
        if (r == -ENOKEY)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Unknown filter \"%s\" (app, user, link, since, all).",
                                         key);
        if (r == -EINVAL && streq(key, "app"))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Invalid app ID \"%s\".",
                                         f->app);
        if (r == -EINVAL && streq(key, "link"))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Invalid link name \"%s\".", f->link);
        if (r != -EBADMSG)
                return r;
        if (streq(key, "user"))
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "Filter user takes a uid (u).");
        if (streq(key, "since"))
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "Filter since takes seconds since the epoch (t).");
        if (streq(key, "all"))
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "Filter all takes a boolean.");
        return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Filter %s takes a string.", key);
}

/* Whose rows the caller may see: its own user's unless it is root or authorized. Without a
 * user filter (and without all=true) a caller sees its own. */
static int authorize(sd_bus_message *m, Filter *f, sd_bus_error *error)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return r;
        if (!f->has_user && !f->all && uid != 0) {
                f->has_user = true;
                f->user = uid;
        }
        if (uid == 0 || (f->has_user && f->user == uid && !f->all))
                return 0;
        return bus_check_authorized(m, READ_ACTION, error);
}

/* owner "app:ID", "user:U", "user:U/app:ID", "system", "other" against the filter */
static bool owner_matches(const Filter *f, const char *owner)
{
        const char *app = NULL;
        char prefix[32];

        if (f->has_user) {
                int n = snprintf(prefix, sizeof(prefix), "user:%" PRIu32, f->user);
                if (strncmp(owner, prefix, n) != 0 || (owner[n] != '\0' && owner[n] != '/'))
                        return false;
        }
        if (!f->app)
                return true;
        app = strstr(owner, "app:");
        return app && (app == owner || app[-1] == '/') && streq(app + 4, f->app);
}

static bool series_matches(const Filter *f, const StatsSeries *s)
{
        return owner_matches(f, s->owner) && (!f->link || streq(f->link, s->link));
}

/* The vtable is the Stats' own (its slot goes with it): it is there whenever this runs. */
static Stats *counting(Stats *s, sd_bus_error *error)
{
        if (!s)
                sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                 "Usage is not counted here ([Stats] Enable=no, or apps are not "
                                 "governed; see roamd's log).");
        return s;
}

static int method_get_usage(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(filter_done) Filter f = {};
        Stats *s = counting(userdata, error);
        const StatsHistory *h;
        int r;

        if (!s)
                return -EIO;
        r = read_filter(m, &f, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        r = authorize(m, &f, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        (void)stats_read(s); /* up to now */
        h = stats_history(s);
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssbtttt)");
        for (size_t i = 0; r >= 0 && i < h->n_series; i++) {
                const StatsSeries *se = &h->series[i];
                StatsCount c = {};
                if (!series_matches(&f, se))
                        continue;
                for (size_t j = 0; j < se->n; j++)
                        if ((uint64_t)se->buckets[j].hour * 3600 + 3599 >= f.since)
                                stats_count_add(&c, &se->buckets[j].c);
                if (stats_count_is_zero(&c))
                        continue;
                r = sd_bus_message_append(reply, "(ssbtttt)", se->owner, se->link, se->roaming,
                                          c.bytes_in, c.bytes_out, c.packets_in, c.packets_out);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int method_get_usage_history(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(filter_done) Filter f = {};
        _cleanup_(stats_history_done) StatsHistory sum = {};
        Stats *s = counting(userdata, error);
        const StatsHistory *h;
        int r;

        if (!s)
                return -EIO;
        r = read_filter(m, &f, error);
        if (r < 0 || sd_bus_error_is_set(error))
                return r;
        r = authorize(m, &f, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        (void)stats_read(s);
        h = stats_history(s);
        /* the matching series summed per hour and home/roaming */
        for (size_t i = 0; i < h->n_series; i++) {
                const StatsSeries *se = &h->series[i];
                if (!series_matches(&f, se))
                        continue;
                for (size_t j = 0; j < se->n; j++)
                        if ((uint64_t)se->buckets[j].hour * 3600 + 3599 >= f.since) {
                                r = stats_history_add(&sum, "", "", se->roaming,
                                                      se->buckets[j].hour, &se->buckets[j].c);
                                if (r < 0)
                                        return r;
                        }
        }
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(tbtttt)");
        for (size_t i = 0; r >= 0 && i < sum.n_series; i++)
                for (size_t j = 0; r >= 0 && j < sum.series[i].n; j++) {
                        const StatsBucket *b = &sum.series[i].buckets[j];
                        r = sd_bus_message_append(
                            reply, "(tbtttt)", (uint64_t)b->hour * 3600, sum.series[i].roaming,
                            b->c.bytes_in, b->c.bytes_out, b->c.packets_in, b->c.packets_out);
                }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

/* Budgets are settings of the machine, like app policies: everyone reads them. */
static int method_get_budgets(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Stats *s = counting(userdata, error);
        const StatsBudgetInfo *b;
        size_t n;
        int r;

        if (!s)
                return -EIO;
        n = stats_budgets(s, &b);
        r = sd_bus_message_new_method_return(m, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(ssttttts)");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(
                    reply, "(ssttttts)", b[i].spec.app_id,
                    stats_budget_links_to_string(b[i].spec.links), b[i].spec.limit,
                    MIN(b[i].used, b[i].spec.limit), b[i].start / USEC_PER_SEC,
                    b[i].end / USEC_PER_SEC,
                    (uint64_t)stats_core(s)->config->stats.budget_warn_percent,
                    stats_budget_state_to_string(b[i].state));
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

void stats_bus_emit_budget(Stats *s, const char *app_id, const char *links, const char *state)
{
        sd_bus *bus = stats_core(s)->bus;

        if (!bus)
                return;
        (void)sd_bus_emit_signal(bus, ROAM_MANAGER_PATH, USAGE_INTERFACE, "BudgetChanged", "sss",
                                 app_id, links, state);
}

static const sd_bus_vtable usage_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("GetUsage", SD_BUS_ARGS("a{sv}", filter),
                            SD_BUS_RESULT("a(ssbtttt)", usage), method_get_usage,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetUsageHistory", SD_BUS_ARGS("a{sv}", filter),
                            SD_BUS_RESULT("a(tbtttt)", hours), method_get_usage_history,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetBudgets", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssttttts)", budgets),
                            method_get_budgets, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("BudgetChanged", SD_BUS_ARGS("s", app, "s", links, "s", state), 0),
    SD_BUS_VTABLE_END,
};

int stats_bus_setup(Stats *s, sd_bus_slot **ret)
{
        return sd_bus_add_object_vtable(stats_core(s)->bus, ret, ROAM_MANAGER_PATH, USAGE_INTERFACE,
                                        usage_vtable, s);
}
