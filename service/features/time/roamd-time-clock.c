/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-timedated.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-time-clock.h"
#include "roamd-time.h"
#include "roamd-time-step.h"

#define TIMEDATED_PATH  "/org/freedesktop/timedate1"
#define TIMEDATED_IFACE "org.freedesktop.timedate1"

/* The one place the clock's state changes: logs old -> new with the reason. */
static void clock_set(TimeClock *c, TimeClockState s, const char *fmt, ...) _printf_(3, 4);
static void clock_set(TimeClock *c, TimeClockState s, const char *fmt, ...)
{
        char reason[sizeof(c->reason)];
        bool changed = c->state != s;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(reason, sizeof(reason), fmt, ap);
        va_end(ap);
        if (!changed && streq(reason, c->reason))
                return;
        if (s == TIME_CLOCK_STEPPED)
                ; /* said by the step itself, old -> new time */
        else if (changed)
                log_info("Time: clock %s -> %s (%s)", time_clock_state_to_string(c->state),
                         time_clock_state_to_string(s), reason);
        else
                log_debug("Time: clock %s (%s)", time_clock_state_to_string(s), reason);
        c->state = s;
        snprintf(c->reason, sizeof(c->reason), "%s", reason);
        c->changed(c->userdata);
}

/* The saved last known good time as the last evaluation aged it (its drift only lowers it). */
static usec_t lower_bound(const Time *t)
{
        usec_t lb = 0;

        for (size_t i = 0; i < t->n_sources; i++)
                if (t->sources[i].sample.lower_bound)
                        lb = MAX(lb, t->sources[i].lo);
        return lb;
}

/* TIME_CLOCK_PENDING with the target and the clock now, or the refusal (set). */
static TimeClockState clock_target(TimeClock *c, usec_t *ret_target, usec_t *ret_clock)
{
        Time *t = c->time;
        usec_t rt = 0, err = 0, clock;
        bool settled = t->state == TIME_STATE_SETTLED &&
                       time_bound_at(t, clock_now_usec(CLOCK_BOOTTIME), &rt, &err) >= 0;
        char reason[sizeof(c->reason)], why[sizeof(c->reason) + sizeof(t->reason)];
        TimeClockState s;

        clock = clock_now_usec(CLOCK_REALTIME);
        s = time_clock_decide(settled, rt, err, clock, lower_bound(t), ret_target, reason,
                              sizeof(reason));
        if (s == TIME_CLOCK_UNSETTLED) {
                /* the consensus's own words: what is missing, or whom it does not believe */
                snprintf(why, sizeof(why), "the time is %s: %s", time_state_to_string(t->state),
                         t->reason);
                clock_set(c, s, "%s", why);
        } else if (s != TIME_CLOCK_PENDING)
                clock_set(c, s, "%s", reason);
        *ret_clock = clock;
        return s;
}

static void clock_decide(TimeClock *c);

static int on_set_time(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimeClock *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        char from[40], to[40], off[32], reason[sizeof(c->reason)];
        Core *mgr = c->core;
        int r;

        (void)err;
        c->set = sd_bus_slot_unref(c->set);
        if (e)
                clock_set(c, TIME_CLOCK_REFUSED, "timedated refused SetTime: %s",
                          e->message ? e->message : e->name);
        else {
                snprintf(reason, sizeof(reason), "the clock was %s off the agreed time (%s)",
                         time_signed_span_words(-c->offset, off, sizeof(off)), c->time->reason);
                log_info("Time: clock stepped %s -> %s (%s)",
                         time_format_utc(c->from, from, sizeof(from)),
                         time_format_utc(c->to, to, sizeof(to)), reason);
                clock_set(c, TIME_CLOCK_STEPPED, "stepped %s -> %s: %s", from, to, reason);
                r = sd_bus_emit_signal(mgr->bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                       "ClockStepped", "xs", c->offset, reason);
                if (r < 0)
                        log_debug_errno(r, "Failed to emit ClockStepped: %m");
        }
        if (c->again)
                clock_decide(c);
        return 0;
}

typedef struct TimedatedFlags {
        bool ntp, synced;
} TimedatedFlags;

static const BusMapEntry timedated_map[] = {
    {"NTP", "b", bus_map_bool, offsetof(TimedatedFlags, ntp)},
    {"NTPSynchronized", "b", bus_map_bool, offsetof(TimedatedFlags, synced)},
    {},
};

/* timedated's answer: whether a clock daemon keeps the clock; if not, the step. */
static int on_query(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
        TimeClock *c = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        bool ntp = false, synced = false;
        Core *mgr = c->core;
        usec_t target, clock;
        int r;

        (void)err;
        c->query = sd_bus_slot_unref(c->query);
        if (e) {
                clock_set(c, TIME_CLOCK_NO_TIMEDATED, "timedated did not answer: %s",
                          e->message ? e->message : e->name);
                goto done;
        }
        TimedatedFlags flags = {};
        r = bus_map_read(m, timedated_map, &flags);
        ntp = flags.ntp;
        synced = flags.synced;
        if (r < 0) {
                clock_set(c, TIME_CLOCK_NO_TIMEDATED, "timedated's properties are malformed");
                goto done;
        }
        if (mgr->config->time.set_clock == TIME_SET_CLOCK_AUTO && (ntp || synced)) {
                clock_set(c, TIME_CLOCK_DAEMON,
                          "a clock daemon keeps the clock (timedated: NTP %s, NTPSynchronized %s)",
                          ntp ? "yes" : "no", synced ? "yes" : "no");
                goto done;
        }
        /* time went by while timedated answered: decided afresh */
        if (clock_target(c, &target, &clock) != TIME_CLOCK_PENDING)
                goto done;
        c->offset = (int64_t)(target - clock);
        c->from = clock;
        c->to = target;
        c->again = false;
        /* relative false: the agreed time itself; interactive false: no user to ask */
        r = sd_bus_call_method_async(mgr->bus, &c->set, TIMEDATED_BUS_NAME, TIMEDATED_PATH,
                                     TIMEDATED_IFACE, "SetTime", on_set_time, c, "xbb",
                                     (int64_t)target, 0, 0);
        if (r < 0)
                clock_set(c, TIME_CLOCK_NO_TIMEDATED, "cannot call timedated's SetTime: %s",
                          strerror(-r));
        return 0;
done:
        if (c->again)
                clock_decide(c);
        return 0;
}

static void clock_decide(TimeClock *c)
{
        Core *m = c->core;
        usec_t target, clock;
        int r;

        if (c->query || c->set) {
                c->again = true; /* decided again when the call returns */
                return;
        }
        c->again = false;
        if (m->config->time.set_clock == TIME_SET_CLOCK_NO) {
                clock_set(c, TIME_CLOCK_OFF, "SetClock=no");
                return;
        }
        if (clock_target(c, &target, &clock) != TIME_CLOCK_PENDING)
                return;
        if (!m->bus) {
                clock_set(c, TIME_CLOCK_NO_TIMEDATED, "no system bus");
                return;
        }
        r = sd_bus_call_method_async(m->bus, &c->query, TIMEDATED_BUS_NAME, TIMEDATED_PATH,
                                     "org.freedesktop.DBus.Properties", "GetAll", on_query, c, "s",
                                     TIMEDATED_IFACE);
        if (r < 0)
                clock_set(c, TIME_CLOCK_NO_TIMEDATED, "cannot ask timedated: %s", strerror(-r));
}

static void on_time(Time *t, TimeChange ev, void *userdata)
{
        TimeClock *c = userdata;

        switch (ev) {
        case TIME_CHANGE_STATE:
        case TIME_CHANGE_SOURCES:
                clock_decide(c);
                break;
        case TIME_CHANGE_GATE:
        case _TIME_CHANGE_MAX:
        case _TIME_CHANGE_INVALID:
                break;
        }
}

int time_clock_new(Core *core, Time *time, void (*changed)(void *userdata), void *userdata,
                   TimeClock **ret)
{
        TimeClock *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->core = core;
        c->time = time;
        c->changed = changed;
        c->userdata = userdata;
        c->state = TIME_CLOCK_UNSETTLED;
        snprintf(c->reason, sizeof(c->reason), "the time is not settled");
        c->watch = time_watch_add(time, on_time, c, NULL);
        if (c->watch == 0) {
                free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

TimeClock *time_clock_free(TimeClock *c)
{
        if (!c)
                return NULL;
        if (c->watch)
                time_watch_remove(c->time, c->watch);
        sd_bus_slot_unref(c->query);
        sd_bus_slot_unref(c->set);
        free(c);
        return NULL;
}
