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
#include "roam-format.h"
#include "roam-log.h"
#include "roam-time.h"
#include "roam-util.h"
#include "roam-props.h"
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

int roam_time_view_replace(sd_bus_message *reply, void *view)
{
        RoamTimeView *v = view, n = {};
        int r;

        r = roam_time_view_read(reply, &n);
        if (r < 0) {
                roam_time_view_done(&n);
                return r;
        }
        roam_time_view_done(v);
        *v = n;
        return 0;
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

/* "2026-12-06 00:12:03.250 UTC" */
const char *roam_time_utc(uint64_t usec, char *buf, size_t size)
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
                         roam_time_utc(roam_time_bound_now(v, roam_now()), a, sizeof(a)),
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
                       roam_time_utc(roam_time_source_now(v, s, now), a, sizeof(a)),
                       plusminus(s->error, b, sizeof(b)), *taken ? ", " : "", taken);
                printf("    from %s\n", s->origin);
                if (*s->reason)
                        printf("    why: %s\n", s->reason);
        }
}

int roam_time_load(sd_bus *bus, RoamTimeView *v)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = roam_props_get_all(bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE, roam_time_view_replace, v,
                               &error);
        if (r < 0 && sd_bus_error_is_set(&error))
                return roam_bus_log_call_error(&error, r, "read roamd's time");
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's time: %m");
        return 0;
}
