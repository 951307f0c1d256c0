/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-app.h"
#include "roam-client-bus.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-output.h"
#include "roam-time-cli.h"
#include "roam-time.h"
#include "roam-util.h"
#include "roam-words.h"

static int zone_to_json(const RoamTimeView *v, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        json_object *cands = NULL;

        if (!o || json_add_string(o, "zone", strempty(v->zone)) < 0 ||
            json_add_string(o, "state", strempty(v->zone_state)) < 0 ||
            json_add_string(o, "reason", strempty(v->zone_reason)) < 0 ||
            strv_to_json(v->zone_candidates, &cands) < 0 || json_add(o, "candidates", cands) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int print_json(const RoamTimeView *v)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        json_object *sources = json_object_new_array(), *reasons = NULL, *bound;
        int r;

        if (!doc || !sources)
                return log_oom();
        r = json_add(doc, "sources", sources);
        if (r < 0)
                return log_oom();
        if ((v->sources_at ? json_add_uint(doc, "sources_at_usec", v->sources_at)
                           : json_add_null(doc, "sources_at_usec")) < 0)
                return log_oom();
        if (json_add_string(doc, "state", v->state) < 0 ||
            json_add_string(doc, "gate", v->gate ? v->gate : "closed") < 0)
                return log_oom();
        /* null from a roamd without them */
        if ((v->clock_state ? json_add_string(doc, "clock_state", v->clock_state)
                            : json_add_null(doc, "clock_state")) < 0 ||
            (v->clock_reason ? json_add_string(doc, "clock_reason", v->clock_reason)
                             : json_add_null(doc, "clock_reason")) < 0)
                return log_oom();
        if (v->realtime) {
                bound = json_object_new_object();
                if (!bound || json_add(doc, "bound", bound) < 0 ||
                    json_add_uint(bound, "realtime_usec", v->realtime) < 0 ||
                    json_add_uint(bound, "error_usec", v->error) < 0)
                        return log_oom();
        } else if (json_add_null(doc, "bound") < 0)
                return log_oom();
        if (strv_to_json(v->reasons, &reasons) < 0 || json_add(doc, "reasons", reasons) < 0)
                return log_oom();
        /* null from a roamd without the zone */
        if (v->zone_state) {
                json_object *zone = NULL;

                if (zone_to_json(v, &zone) < 0 || json_add(doc, "zone", zone) < 0)
                        return log_oom();
        } else if (json_add_null(doc, "zone") < 0)
                return log_oom();
        for (size_t i = 0; i < v->n_sources; i++) {
                const RoamTimeSource *s = &v->sources[i];
                json_object *o = json_object_new_object();
                char name[96];

                roam_time_source_name(v, i, name, sizeof(name));
                /* realtime_usec: its interval's middle as roamd sent it (at sources_at_usec) */
                if (!o || json_append(sources, o) < 0 || json_add_string(o, "name", name) < 0 ||
                    json_add_string(o, "kind", s->kind) < 0 ||
                    json_add_string(o, "witness", s->witness) < 0 ||
                    json_add_string(o, "origin", s->origin) < 0 ||
                    (s->taken ? json_add_uint(o, "taken_usec", s->taken)
                              : json_add_null(o, "taken_usec")) < 0 ||
                    json_add_uint(o, "realtime_usec", s->realtime) < 0 ||
                    json_add_uint(o, "error_usec", s->error) < 0 ||
                    json_add_string(o, "verdict", s->verdict) < 0 ||
                    json_add_string(o, "reason", s->reason) < 0)
                        return log_oom();
        }
        return json_print(doc, stdout);
}

int roam_time_parse_date(const char *s, uint64_t *ret)
{
        struct tm tm = {};
        const char *end;
        time_t t;

        if (s[0] == '@') {
                char *e;
                unsigned long long v;

                if (s[1] < '0' || s[1] > '9')
                        return -EINVAL;
                errno = 0;
                v = strtoull(s + 1, &e, 10);
                if (errno || *e || v > UINT64_MAX / USEC_PER_SEC)
                        return -EINVAL;
                *ret = v * USEC_PER_SEC;
                return 0;
        }
        end = strptime(s, "%Y-%m-%d %H:%M", &tm);
        if (end && *end == ':')
                end = strptime(end + 1, "%S", &tm);
        if (!end || *end)
                return -EINVAL;
        t = timegm(&tm);
        if (t < 0)
                return -EINVAL;
        *ret = (uint64_t)t * USEC_PER_SEC;
        return 0;
}

int roam_time_check_args(char **args, unsigned n, bool json, char *buf, size_t size)
{
        uint64_t u;

        if (streq(args[0], "zone")) {
                if (n > 2) {
                        snprintf(buf, size, "'time zone' takes at most one zone");
                        return -EINVAL;
                }
                if (n == 2 && json) {
                        snprintf(buf, size, "--json goes with 'roam time' and 'roam time zone'");
                        return -EINVAL;
                }
                return 0;
        }
        if (streq(args[0], "set")) {
                if (json) {
                        snprintf(buf, size, "--json goes with 'roam time' and 'roam time zone'");
                        return -EINVAL;
                }
                if (n < 2) {
                        snprintf(buf, size,
                                 "'time set' needs the time: roam time set 'YYYY-MM-DD HH:MM[:SS]' "
                                 "(UTC) or @EPOCH, then its error (30s, 5m; 1m by default)");
                        return -EINVAL;
                }
                if (roam_time_parse_date(args[1], &u) < 0) {
                        snprintf(buf, size,
                                 "'%s' is not a time: give 'YYYY-MM-DD HH:MM[:SS]' (UTC) or "
                                 "@EPOCH",
                                 args[1]);
                        return -EINVAL;
                }
                if (n == 3 && (roam_app_parse_duration(args[2], &u) < 0 || u == UINT64_MAX)) {
                        snprintf(buf, size,
                                 "'%s' is not an error: give how far off it may be (30s, 5m, at "
                                 "most 24h)",
                                 args[2]);
                        return -EINVAL;
                }
                return 0;
        }
        snprintf(buf, size, "unknown 'time' command '%s' (zone, set)", args[0]);
        return -EINVAL;
}

static int print_zone(const RoamTimeView *v, bool json)
{
        char zone[256];

        if (!v->zone_state) {
                log_error("This roamd follows no time zone (no Time.ZoneState).");
                return -EOPNOTSUPP;
        }
        if (json) {
                _cleanup_(json_object_putp) json_object *doc = NULL;
                int r = zone_to_json(v, &doc);

                return r < 0 ? log_oom() : json_print(doc, stdout);
        }
        roam_time_zone_words(v, zone, sizeof(zone));
        printf("Zone: %s\n", zone);
        if (v->zone_candidates && v->zone_candidates[0]) {
                puts("Choose one with: roam time zone ZONE");
                STRV_FOREACH (c, v->zone_candidates)
                        printf("  %s\n", *c);
        }
        return 0;
}

static int call_time(sd_bus *bus, const char *method, const char *what, const char *types, ...)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, ROAM_TIME_PATH,
                                           ROAM_TIME_INTERFACE, method);
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(m, true);
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to build the call to roamd: %m");
        r = sd_bus_call(bus, m, 0, &error, NULL);
        if (r < 0)
                return roam_bus_log_call_error(&error, r, what);
        return 0;
}

int roam_time_run(char **args, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        RoamTimeView v = {};
        uint64_t at, err = 60 * USEC_PER_SEC;
        char what[128], clock[48];
        int r;

        r = roam_output_clean_stdout();
        if (r < 0)
                return r;
        r = roam_bus_connect(&bus);
        if (r >= 0 && args && args[0] &&
            (streq(args[0], "set") || (streq(args[0], "zone") && args[1])))
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        if (args && args[0] && streq(args[0], "zone") && args[1]) {
                snprintf(what, sizeof(what), "set the time zone to %s", args[1]);
                r = call_time(bus, "SetZone", what, "s", args[1]);
                if (r >= 0)
                        printf("The time zone is now %s (your choice).\n", args[1]);
                return r;
        }
        if (args && args[0] && streq(args[0], "set")) {
                if (roam_time_parse_date(args[1], &at) < 0 ||
                    (args[2] && roam_app_parse_duration(args[2], &err) < 0))
                        return -EINVAL; /* checked by roam_time_check_args() */
                r = call_time(bus, "SetManual", "set the time by hand", "tt", at, err);
                if (r >= 0)
                        printf("roamd takes %s ± %s as a source (manual).\n",
                               roam_time_utc(at, clock, sizeof(clock)),
                               (roam_format_duration(err, what, sizeof(what)), what));
                return r;
        }
        r = roam_time_load(bus, &v);
        if (r >= 0 && args && args[0])
                r = print_zone(&v, json);
        else if (r >= 0)
                r = json ? print_json(&v) : (roam_time_print_text(&v), 0);
        roam_time_view_done(&v);
        return r;
}
