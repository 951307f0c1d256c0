/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
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
                                                     err};
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

/* Keys a newer roamd adds (the zone's, say) are skipped. */
static const BusMapEntry time_map[] = {
    {"State", "s", bus_map_string, offsetof(RoamTimeView, state)},
    {"Gate", "s", bus_map_string, offsetof(RoamTimeView, gate)},
    {"ClockState", "s", bus_map_string, offsetof(RoamTimeView, clock_state)},
    {"ClockReason", "s", bus_map_string, offsetof(RoamTimeView, clock_reason)},
    {"Bound", "(tt)", set_bound, 0},
    {"Reasons", "as", bus_map_strv, offsetof(RoamTimeView, reasons)},
    {"Sources", "a(sssttss)", set_sources, 0},
    {},
};

int roam_time_view_read(sd_bus_message *reply, RoamTimeView *v)
{
        int r = bus_map_read(reply, time_map, v);

        if (r < 0)
                return r;
        return v->state ? 0 : -EBADMSG;
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
        if (v->clock_reason && *v->clock_reason)
                snprintf(buf, size, "%s (%s)", words, v->clock_reason);
        else
                snprintf(buf, size, "%s", words);
}

void roam_time_headline(const RoamTimeView *v, char *buf, size_t size)
{
        char a[48], b[32];

        if (v->realtime)
                snprintf(buf, size, "Time: %s, %s %s", v->state, utc(v->realtime, a, sizeof(a)),
                         plusminus(v->error, b, sizeof(b)));
        else
                snprintf(buf, size, "Time: %s", v->state);
}

void roam_time_print_text(const RoamTimeView *v)
{
        char a[48], b[32], head[128], clock[512];

        roam_time_headline(v, head, sizeof(head));
        puts(head);
        if (v->reasons && v->reasons[0])
                printf("Why: %s\n", v->reasons[0]);
        printf("Gate: %s\n", roam_time_gate_words(v->gate));
        roam_time_clock_words(v, clock, sizeof(clock));
        if (*clock)
                printf("Clock: %s\n", clock);
        if (v->n_sources == 0) {
                puts("Sources: none yet");
                return;
        }
        puts("Sources:");
        for (size_t i = 0; i < v->n_sources; i++) {
                const RoamTimeSource *s = &v->sources[i];

                printf("  %s: %s, %s, %s %s\n", s->witness, s->verdict, s->kind,
                       utc(s->realtime, a, sizeof(a)), plusminus(s->error, b, sizeof(b)));
                printf("    from %s\n", s->origin);
                if (*s->reason)
                        printf("    why: %s\n", s->reason);
        }
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
        for (size_t i = 0; i < v->n_sources; i++) {
                const RoamTimeSource *s = &v->sources[i];
                json_object *o = json_object_new_object();

                if (!o || json_append(sources, o) < 0 || json_add_string(o, "kind", s->kind) < 0 ||
                    json_add_string(o, "witness", s->witness) < 0 ||
                    json_add_string(o, "origin", s->origin) < 0 ||
                    json_add_uint(o, "realtime_usec", s->realtime) < 0 ||
                    json_add_uint(o, "error_usec", s->error) < 0 ||
                    json_add_string(o, "verdict", s->verdict) < 0 ||
                    json_add_string(o, "reason", s->reason) < 0)
                        return log_oom();
        }
        return json_print(doc, stdout);
}

int roam_time_run(bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        RoamTimeView v = {};
        int r;

        r = roam_output_clean_stdout();
        if (r < 0)
                return r;
        r = roam_bus_connect(&bus);
        if (r < 0)
                return r;
        r = time_view_load(bus, &v);
        if (r >= 0)
                r = json ? print_json(&v) : (roam_time_print_text(&v), 0);
        roam_time_view_done(&v);
        return r;
}
