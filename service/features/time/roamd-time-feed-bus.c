/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.roam1.Time at /org/roam1/time (docs/dbus-api.md, docs/time.md). */
#include <stdarg.h>
#include <stdio.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-time-feed.h"

/* A manual setting further than this from the epoch's sane range is refused. */
#define MANUAL_MIN_USEC       (946684800ULL * USEC_PER_SEC)  /* 2000-01-01 */
#define MANUAL_MAX_USEC       (4102444800ULL * USEC_PER_SEC) /* 2100-01-01 */
#define MANUAL_MAX_ERROR_USEC (86400ULL * USEC_PER_SEC)

static int property_state(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error)
{
        TimeFeed *f = userdata;

        return sd_bus_message_append(reply, "s", time_state_to_string(f->time->state));
}

static int property_gate(sd_bus *bus, const char *path, const char *interface, const char *property,
                         sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        TimeFeed *f = userdata;

        return sd_bus_message_append(reply, "s", roam_time_gate_to_string(time_feed_gate(f)));
}

static int property_bound(sd_bus *bus, const char *path, const char *interface,
                          const char *property, sd_bus_message *reply, void *userdata,
                          sd_bus_error *error)
{
        TimeFeed *f = userdata;
        usec_t rt = 0, err = 0;

        /* (0, 0) while not settled */
        (void)time_bound_at(f->time, clock_now_usec(CLOCK_BOOTTIME), &rt, &err);
        return sd_bus_message_append(reply, "(tt)", rt, err);
}

static int property_sources(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error)
{
        TimeFeed *f = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sssttss)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < f->time->n_sources; i++) {
                const TimeSource *s = &f->time->sources[i];
                /* the interval as the last evaluation aged it: its middle and half-width */
                r = sd_bus_message_append(
                    reply, "(sssttss)", time_source_kind_to_string(s->sample.kind),
                    s->sample.witness, s->sample.origin, s->lo + (s->hi - s->lo) / 2,
                    (s->hi - s->lo + 1) / 2, time_verdict_to_string(s->verdict), s->reason);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* A CLOCK_BOOTTIME instant on this machine's CLOCK_REALTIME, as every time on the bus (0: 0). */
static uint64_t boottime_to_realtime(uint64_t at)
{
        uint64_t boot = clock_now_usec(CLOCK_BOOTTIME), real = clock_now_usec(CLOCK_REALTIME);

        if (at == 0)
                return 0;
        return at >= boot ? real : real > boot - at ? real - (boot - at) : 1;
}

/* When each sample of Sources was taken, in its order: clients say "taken N s ago". */
static int property_sources_taken(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error)
{
        TimeFeed *f = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "t");
        for (size_t i = 0; r >= 0 && i < f->time->n_sources; i++)
                r = sd_bus_message_append(reply, "t",
                                          boottime_to_realtime(f->time->sources[i].sample.taken));
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* The moment Sources' intervals hold (the last evaluation): clients age them from there to
 * draw them against Bound, which is projected to the moment it is read. */
static int property_sources_at(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error)
{
        TimeFeed *f = userdata;

        return sd_bus_message_append(reply, "t", boottime_to_realtime(f->time->evaluated_at));
}

static int property_reasons(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error)
{
        TimeFeed *f = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        r = sd_bus_message_append(reply, "s", f->time->reason);
        for (size_t i = 0; r >= 0 && i < f->time->n_sources; i++) {
                const TimeSource *s = &f->time->sources[i];
                char line[sizeof(s->sample.witness) + sizeof(s->reason) + 32];

                if (s->verdict != TIME_VERDICT_FALSETICKER && s->verdict != TIME_VERDICT_EXPIRED)
                        continue;
                snprintf(line, sizeof(line), "%s is a %s: %s", s->sample.witness,
                         time_verdict_to_string(s->verdict), s->reason);
                r = sd_bus_message_append(reply, "s", line);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static int property_clock_state(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        TimeFeed *f = userdata;

        return sd_bus_message_append(reply, "s", time_clock_state_to_string(f->clock->state));
}

static int property_clock_reason(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error)
{
        TimeFeed *f = userdata;

        return sd_bus_message_append(reply, "s", f->clock->reason);
}

static int method_set_manual(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        TimeFeed *f = userdata;
        uint64_t rt, err;
        uid_t uid = 0;
        char who[32];
        int r;

        r = sd_bus_message_read(msg, "tt", &rt, &err);
        if (r < 0)
                return r;
        if (rt < MANUAL_MIN_USEC || rt > MANUAL_MAX_USEC)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "The time must lie between 2000 and 2100.");
        if (err > MANUAL_MAX_ERROR_USEC)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "The error must be at most a day.");
        r = bus_check_authorized(msg, "org.roam1.set-time", error);
        if (r != 0)
                return r;
        {
                _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
                if (sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds) >= 0)
                        (void)sd_bus_creds_get_euid(creds, &uid);
        }
        snprintf(who, sizeof(who), "uid %u", (unsigned)uid);
        r = time_feed_set_manual(f, rt, err, who);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Failed to take the manual time: %m");
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable time_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("State", "s", property_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Gate", "s", property_gate, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Bound", "(tt)", property_bound, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Sources", "a(sssttss)", property_sources, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SourcesTaken", "at", property_sources_taken, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("SourcesAt", "t", property_sources_at, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Reasons", "as", property_reasons, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("SetManual", SD_BUS_ARGS("t", realtime, "t", error), SD_BUS_NO_RESULT,
                            method_set_manual, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_PROPERTY("ClockState", "s", property_clock_state, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ClockReason", "s", property_clock_reason, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_SIGNAL_WITH_ARGS("ClockStepped", SD_BUS_ARGS("x", offset_usec, "s", reason), 0),
    SD_BUS_VTABLE_END,
};

int time_bus_setup(TimeFeed *f)
{
        int r;

        if (!f->core->bus)
                return 0;
        r = sd_bus_add_object_vtable(f->core->bus, &f->slot, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                     time_vtable, f);
        if (r < 0)
                return log_error_errno(r, "Failed to add the time object: %m");
        return 0;
}

void time_bus_emit_changed(TimeFeed *f, const char *first, ...)
{
        const char *names[8];
        size_t n = 0;
        va_list ap;
        int r;

        if (!f || !f->core->bus || !f->slot)
                return;
        va_start(ap, first);
        for (const char *s = first; s && n < ELEMENTSOF(names) - 1; s = va_arg(ap, const char *))
                names[n++] = s;
        va_end(ap);
        names[n] = NULL;
        r = sd_bus_emit_properties_changed_strv(f->core->bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                                (char **)names);
        if (r < 0)
                log_debug_errno(r, "Failed to emit time PropertiesChanged: %m");
}
