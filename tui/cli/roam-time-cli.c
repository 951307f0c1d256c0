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
#include "roam-util.h"
#include "roam-words.h"

void roam_time_view_done(RoamTimeView *v)
{
        free(v->state);
        free(v->gate);
        free(v->clock_state);
        free(v->clock_reason);
        strv_free(v->reasons);
        free(v->zone);
        free(v->zone_state);
        free(v->zone_reason);
        strv_free(v->zone_candidates);
        for (size_t i = 0; i < v->n_sources; i++) {
                RoamTimeSource *s = &v->sources[i];
                free(s->kind);
                free(s->witness);
                free(s->origin);
                free(s->verdict);
                free(s->reason);
        }
        free(v->sources);
}

static int read_sources(sd_bus_message *m, RoamTimeView *v)
{
        const char *kind, *witness, *origin, *verdict, *reason;
        uint64_t rt, err;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "(sssttss)");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "(sssttss)", &kind, &witness, &origin, &rt, &err,
                                        &verdict, &reason)) > 0) {
                RoamTimeSource *n = realloc(v->sources, sizeof(*n) * (v->n_sources + 1));
                if (!n)
                        return -ENOMEM;
                v->sources = n;
                n[v->n_sources++] = (RoamTimeSource){strdup(kind),
                                                     strdup(witness),
                                                     strdup(origin),
                                                     strdup(verdict),
                                                     strdup(reason),
                                                     rt,
                                                     err,
                                                     0};
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int set_bound(sd_bus_message *m, const char *key, void *field)
{
        RoamTimeView *v = field;

        return sd_bus_message_read(m, "(tt)", &v->realtime, &v->error);
}

static int set_sources(sd_bus_message *m, const char *key, void *field)
{
        return read_sources(m, field);
}

/* Read after Sources (a{sv} keeps roamd's order: its vtable's), or before: then kept for
 * them. */
static int set_sources_taken(sd_bus_message *m, const char *key, void *field)
{
        RoamTimeView *v = field;
        const uint64_t *a;
        size_t size;
        int r;

        r = sd_bus_message_read_array(m, 't', (const void **)&a, &size);
        if (r < 0)
                return r;
        for (size_t i = 0; i < v->n_sources && i < size / sizeof(uint64_t); i++)
                v->sources[i].taken = a[i];
        return 0;
}

/* Keys a newer roamd adds are skipped. */
static const BusMapEntry time_map[] = {
    {"State", "s", bus_map_string, offsetof(RoamTimeView, state)},
    {"Gate", "s", bus_map_string, offsetof(RoamTimeView, gate)},
    {"ClockState", "s", bus_map_string, offsetof(RoamTimeView, clock_state)},
    {"ClockReason", "s", bus_map_string, offsetof(RoamTimeView, clock_reason)},
    {"Bound", "(tt)", set_bound, 0},
    {"Reasons", "as", bus_map_strv, offsetof(RoamTimeView, reasons)},
    {"Sources", "a(sssttss)", set_sources, 0},
    {"SourcesTaken", "at", set_sources_taken, 0},
    {"SourcesAt", "t", bus_map_u64, offsetof(RoamTimeView, sources_at)},
    {"Zone", "s", bus_map_string, offsetof(RoamTimeView, zone)},
    {"ZoneState", "s", bus_map_string, offsetof(RoamTimeView, zone_state)},
    {"ZoneReason", "s", bus_map_string, offsetof(RoamTimeView, zone_reason)},
    {"ZoneCandidates", "as", bus_map_strv, offsetof(RoamTimeView, zone_candidates)},
    {},
};

int roam_time_view_read(sd_bus_message *reply, RoamTimeView *v)
{
        int r = bus_map_read(reply, time_map, v);

        if (r < 0)
                return r;
        v->read_at = roam_now();
        return v->state ? 0 : -EBADMSG;
}

uint64_t roam_time_bound_now(const RoamTimeView *v, uint64_t now)
{
        if (!v->realtime)
                return 0;
        return v->realtime + (now > v->read_at ? now - v->read_at : 0);
}

uint64_t roam_time_source_now(const RoamTimeView *v, const RoamTimeSource *s, uint64_t now)
{
        /* a roamd without SourcesAt: as it sent them */
        if (!v->sources_at)
                return s->realtime;
        return s->realtime + (now > v->sources_at ? now - v->sources_at : 0);
}

void roam_time_source_name(const RoamTimeView *v, size_t i, char *buf, size_t size)
{
        const RoamTimeSource *s = &v->sources[i];
        const char *family = NULL;
        size_t n = strlen(s->origin);
        bool shared = false;

        for (size_t j = 0; j < v->n_sources; j++)
                if (j != i && streq(v->sources[j].witness, s->witness))
                        shared = true;
        if (shared && n >= 6 && streq(s->origin + n - 6, "(IPv4)"))
                family = "IPv4";
        else if (shared && n >= 6 && streq(s->origin + n - 6, "(IPv6)"))
                family = "IPv6";
        if (family)
                snprintf(buf, size, "%s %s", s->witness, family);
        else
                snprintf(buf, size, "%s", s->witness);
}

void roam_time_zone_words(const RoamTimeView *v, char *buf, size_t size)
{
        const char *reason;

        if (!v->zone_state) {
                buf[0] = 0;
                return;
        }
        reason = v->zone_reason && *v->zone_reason ? roam_zone_reason_words(v->zone_reason) : "";
        snprintf(buf, size, "%s (%s%s%s)", v->zone && *v->zone ? v->zone : "not known yet",
                 roam_zone_state_words(v->zone_state), *reason ? ": " : "", reason);
}

void roam_time_taken_words(const RoamTimeSource *s, uint64_t now, char *buf, size_t size)
{
        uint64_t sec = now > s->taken ? (now - s->taken) / USEC_PER_SEC : 0;

        if (!s->taken)
                buf[0] = 0;
        else if (sec < 120)
                snprintf(buf, size, "taken %" PRIu64 " s ago", sec);
        else if (sec < 7200)
                snprintf(buf, size, "taken %" PRIu64 " min ago", sec / 60);
        else
                snprintf(buf, size, "taken %" PRIu64 " h ago", sec / 3600);
}

static int time_view_load(sd_bus *bus, RoamTimeView *v)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_TIME_PATH,
                               "org.freedesktop.DBus.Properties", "GetAll", &error, &reply, "s",
                               ROAM_TIME_INTERFACE);
        if (r < 0)
                return roam_bus_log_call_error(&error, r, "read roamd's time");
        r = roam_time_view_read(reply, v);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's time: %m");
        return 0;
}

/* "2026-12-06 00:12:03.250 UTC" */
static const char *utc(uint64_t usec, char *buf, size_t size)
{
        time_t sec = (time_t)(usec / 1000000);
        struct tm tm;
        size_t n;

        if (!gmtime_r(&sec, &tm) || (n = strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm)) == 0) {
                snprintf(buf, size, "%" PRIu64 " µs", usec);
                return buf;
        }
        snprintf(buf + n, size - n, ".%03" PRIu64 " UTC", usec % 1000000 / 1000);
        return buf;
}

/* "± 512 ms", "± 3.2 s", "± 2.0 h" */
static const char *plusminus(uint64_t usec, char *buf, size_t size)
{
        if (usec < 10000000)
                snprintf(buf, size, "± %" PRIu64 " ms", usec / 1000);
        else if (usec < 7200000000ULL)
                snprintf(buf, size, "± %.1f s", usec / 1e6);
        else
                snprintf(buf, size, "± %.1f h", usec / 3.6e9);
        return buf;
}

const char *roam_time_gate_words(const char *gate)
{
        RoamTimeGate g = roam_time_gate_from_string(gate);

        switch (g) {
        case ROAM_TIME_GATE_CLOSED:
                return "closed: apps wait for the time to settle";
        case ROAM_TIME_GATE_OPEN:
                return "open: the time is verified";
        case ROAM_TIME_GATE_UNVERIFIED:
                return "open after the wait: time unverified";
        case _ROAM_TIME_GATE_MAX:
        case _ROAM_TIME_GATE_INVALID:
                break;
        }
        return gate ? gate : "unknown";
}

void roam_time_clock_words(const RoamTimeView *v, char *buf, size_t size)
{
        const char *words;

        if (!v->clock_state) {
                buf[0] = 0;
                return;
        }
        words = roam_clock_state_words(roam_clock_state_from_string(v->clock_state));
        if (!words)
                words = v->clock_state; /* a newer roamd's state: its own word */
        /* the clock left alone for the consensus's own reason: Why says it already */
        if (v->clock_reason && *v->clock_reason &&
            !(v->reasons && v->reasons[0] && *v->reasons[0] &&
              strstr(v->clock_reason, v->reasons[0])))
                snprintf(buf, size, "%s (%s)", words, v->clock_reason);
        else
                snprintf(buf, size, "%s", words);
}

void roam_time_headline(const RoamTimeView *v, char *buf, size_t size)
{
        char a[48], b[32];

        if (v->realtime)
                snprintf(buf, size, "Time: %s, %s %s", v->state,
                         utc(roam_time_bound_now(v, roam_now()), a, sizeof(a)),
                         plusminus(v->error, b, sizeof(b)));
        else
                snprintf(buf, size, "Time: %s", v->state);
}

void roam_time_print_text(const RoamTimeView *v)
{
        char a[48], b[32], head[128], clock[512], zone[256], name[96], taken[64];
        uint64_t now = roam_now();

        roam_time_headline(v, head, sizeof(head));
        puts(head);
        if (v->reasons && v->reasons[0])
                printf("Why: %s\n", v->reasons[0]);
        printf("Gate: %s\n", roam_time_gate_words(v->gate));
        roam_time_clock_words(v, clock, sizeof(clock));
        if (*clock)
                printf("Clock: %s\n", clock);
        roam_time_zone_words(v, zone, sizeof(zone));
        if (*zone)
                printf("Zone: %s\n", zone);
        if (v->zone_candidates && v->zone_candidates[0]) {
                printf("Zones to choose from (roam time zone ZONE):");
                STRV_FOREACH (c, v->zone_candidates)
                        printf(" %s", *c);
                putchar('\n');
        }
        if (v->n_sources == 0) {
                puts("Sources: none yet");
                return;
        }
        puts("Sources:");
        for (size_t i = 0; i < v->n_sources; i++) {
                const RoamTimeSource *s = &v->sources[i];

                roam_time_source_name(v, i, name, sizeof(name));
                roam_time_taken_words(s, now, taken, sizeof(taken));
                /* its interval now, aged as the agreed time is */
                printf("  %s: %s, %s, %s %s%s%s\n", name, s->verdict, s->kind,
                       utc(roam_time_source_now(v, s, now), a, sizeof(a)),
                       plusminus(s->error, b, sizeof(b)), *taken ? ", " : "", taken);
                printf("    from %s\n", s->origin);
                if (*s->reason)
                        printf("    why: %s\n", s->reason);
        }
}

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
                               utc(at, clock, sizeof(clock)),
                               (roam_format_duration(err, what, sizeof(what)), what));
                return r;
        }
        r = time_view_load(bus, &v);
        if (r >= 0 && args && args[0])
                r = print_zone(&v, json);
        else if (r >= 0)
                r = json ? print_json(&v) : (roam_time_print_text(&v), 0);
        roam_time_view_done(&v);
        return r;
}
