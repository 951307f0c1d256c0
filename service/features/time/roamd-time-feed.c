/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-link.h"
#include "roamd-links.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-gpsd.h"
#include "roamd-time-feed.h"
#include "roamd-time-chrony.h"
#include "roamd-time-saved.h"

static usec_t boottime(void)
{
        return clock_now_usec(CLOCK_BOOTTIME);
}

/* The lower edge of the agreed bound is safe to keep: the time is not earlier. */
static void feed_save(TimeFeed *f)
{
        const char *path = f->core->config->time.state_file;
        usec_t rt, err;
        int r;

        if (!path || time_bound_at(f->time, boottime(), &rt, &err) < 0 || rt <= err)
                return;
        r = time_saved_write(path, rt - err);
        if (r < 0)
                log_warning_errno(r, "Failed to save the last known good time to %s: %m", path);
        else
                log_debug("Saved the last known good time to %s", path);
}

static void feed_load(TimeFeed *f)
{
        const char *path = f->core->config->time.state_file;
        TimeSample s = {.kind = TIME_SOURCE_SAVED, .lower_bound = true};
        uint64_t v;
        int r;

        if (!path)
                return;
        r = time_saved_read(path, &v);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                log_warning_errno(r, "Ignoring the last known good time in %s: %m", path);
                return;
        }
        s.realtime = v;
        s.taken = boottime();
        snprintf(s.witness, sizeof(s.witness), "saved");
        snprintf(s.origin, sizeof(s.origin), "%s", path);
        r = time_add_sample(f->time, &s, s.taken);
        if (r < 0)
                log_warning_errno(r, "Ignoring the last known good time in %s: %m", path);
}

static int on_expiry(sd_event_source *s, uint64_t usec, void *userdata)
{
        TimeFeed *f = userdata;

        time_evaluate(f->time, boottime());
        time_bus_emit_changed(f, "State", "Bound", "Sources", "SourcesTaken", "SourcesAt",
                              "Reasons", NULL);
        return 0;
}

static void feed_arm(sd_event_source **s, TimeFeed *f, usec_t at, sd_event_time_handler_t fn)
{
        int r;

        if (at == 0) {
                if (*s)
                        (void)sd_event_source_set_enabled(*s, SD_EVENT_OFF);
                return;
        }
        if (*s) {
                r = sd_event_source_set_time(*s, at);
                if (r >= 0)
                        r = sd_event_source_set_enabled(*s, SD_EVENT_ONESHOT);
        } else
                r = sd_event_add_time(f->core->event, s, CLOCK_BOOTTIME, at, 0, fn, f);
        if (r < 0)
                log_warning_errno(r, "Failed to arm a time timer: %m");
}

static int on_gate(sd_event_source *s, uint64_t usec, void *userdata)
{
        TimeFeed *f = userdata;

        time_gate_tick(f->time, boottime());
        return 0;
}

/* How often chronyd hears the agreed time while it is settled. */
#define CHRONY_INTERVAL_USEC (2 * USEC_PER_SEC)

static int on_chrony(sd_event_source *s, uint64_t usec, void *userdata)
{
        TimeFeed *f = userdata;
        const char *path = f->core->config->time.chrony_socket;
        usec_t rt, err, real;
        int r;

        if (!path || time_bound_at(f->time, boottime(), &rt, &err) < 0) {
                /* not settled: chronyd hears nothing until it is again */
                (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        real = clock_now_usec(CLOCK_REALTIME);
        r = chrony_sock_send(path, real, (int64_t)(rt - real));
        /* a full queue loses this sample only: chronyd is there, just busy */
        if (r != f->chrony_error && r != -EAGAIN) {
                if (r < 0)
                        log_debug_errno(r, "chronyd's reference clock socket %s: %m", path);
                else
                        log_info("Time: feeding chronyd's reference clock at %s", path);
                f->chrony_error = r;
        }
        (void)sd_event_source_set_time(s, usec + CHRONY_INTERVAL_USEC);
        (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;
}

static void chrony_follow(TimeFeed *f)
{
        int r;

        if (f->time->state != TIME_STATE_SETTLED || !f->core->config->time.chrony_socket) {
                if (f->chrony)
                        (void)sd_event_source_set_enabled(f->chrony, SD_EVENT_OFF);
                return;
        }
        if (!f->chrony) {
                r = sd_event_add_time(f->core->event, &f->chrony, CLOCK_BOOTTIME, 0, 0, on_chrony,
                                      f);
                if (r < 0)
                        log_warning_errno(r, "Failed to add the chrony timer: %m");
                return;
        }
        (void)sd_event_source_set_time(f->chrony, 0); /* at once, then every interval */
        (void)sd_event_source_set_enabled(f->chrony, SD_EVENT_ONESHOT);
}

static void on_time(Time *t, TimeChange ev, void *userdata)
{
        TimeFeed *f = userdata;

        switch (ev) {
        case TIME_CHANGE_STATE:
                if (t->state == TIME_STATE_SETTLED)
                        feed_save(f);
                chrony_follow(f);
                time_bus_emit_changed(f, "State", "Bound", "Reasons", "Gate", NULL);
                break;
        case TIME_CHANGE_SOURCES:
                feed_arm(&f->expiry, f, time_next_expiry(t), on_expiry);
                time_bus_emit_changed(f, "Bound", "Sources", "SourcesTaken", "SourcesAt", "Reasons",
                                      NULL);
                break;
        case TIME_CHANGE_GATE:
                if (f->gate)
                        (void)sd_event_source_set_enabled(f->gate, SD_EVENT_OFF);
                time_bus_emit_changed(f, "Gate", NULL);
                break;
        case _TIME_CHANGE_MAX:
        case _TIME_CHANGE_INVALID:
                break;
        }
}

/* What the link's last probes' Date headers said; never a portal's (its TLS could not be
 * validated for the check server anyway, but its verdict says more). */
static void feed_link(TimeFeed *f, Link *l)
{
        usec_t now = boottime();

        if (l->verdict.verdict == VERDICT_PORTAL)
                return;
        for (size_t i = 0; i < ELEMENTSOF(l->https_date); i++) {
                const TimeSample *s = &l->https_date[i];
                int r;

                if (s->realtime == 0)
                        continue;
                r = time_add_sample(f->time, s, now);
                if (r < 0)
                        log_debug_errno(r, "%s: ignoring a Date sample: %m",
                                        strempty(l->info.name));
        }
}

/* A modem's NITZ: a sample of its own witness ("modem:PATH"); a modem gone takes its samples.
 * timesyncd's last NTP packet likewise (witness "ntp"), and gpsd's fix time ("gnss"). */
static void on_modem_time(const TimeEvent *ev, void *userdata)
{
        TimeFeed *f = userdata;
        int r;

        switch (ev->type) {
        case TIME_EVENT_SAMPLE:
                r = time_add_sample(f->time, ev->sample, boottime());
                if (r < 0)
                        log_debug_errno(r, "Ignoring a network time sample of %s: %m", ev->witness);
                break;
        case TIME_EVENT_GONE:
                (void)time_remove_witness(f->time, ev->witness, boottime());
                break;
        case TIME_EVENT_HINT: /* the zone service's */
        case _TIME_EVENT_TYPE_MAX:
        case _TIME_EVENT_TYPE_INVALID:
                break;
        }
}

/* chronyd's tracking: its sample replaces the last; chronyd silent or refused, it goes
 * (only chronyd's: timesyncd's samples share the witness "ntp", both being the NTP servers). */
static void on_chrony_time(const TimeEvent *ev, void *userdata)
{
        TimeFeed *f = userdata;

        if (ev->type == TIME_EVENT_GONE) {
                (void)time_remove_kind(f->time, TIME_SOURCE_CHRONY, boottime());
                return;
        }
        on_modem_time(ev, userdata);
}

int time_feed_follow_modems(TimeFeed *f, MMClient *mm, OfonoClient *ofono)
{
        if (f->mm_watch)
                mm_client_time_watch_remove(f->mm, f->mm_watch);
        if (f->ofono_watch)
                ofono_client_time_watch_remove(f->ofono, f->ofono_watch);
        f->mm_watch = f->ofono_watch = 0;
        f->mm = mm;
        f->ofono = ofono;
        if (mm) {
                f->mm_watch = mm_client_time_watch_add(mm, on_modem_time, f, NULL);
                if (f->mm_watch == 0)
                        return -ENOMEM;
        }
        if (ofono) {
                f->ofono_watch = ofono_client_time_watch_add(ofono, on_modem_time, f, NULL);
                if (f->ofono_watch == 0)
                        return -ENOMEM;
        }
        return 0;
}

static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        TimeFeed *f = userdata;
        char witness[sizeof(((TimeSample *)NULL)->witness)];

        switch (ev->type) {
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_PROBED:
                feed_link(f, ev->link);
                break;
        case LINKS_EVENT_GONE:
                snprintf(witness, sizeof(witness), "link:%s", strempty(ev->link->info.name));
                (void)time_remove_witness(f->time, witness, boottime());
                break;
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_SYNCED:
        case LINKS_EVENT_LOCATION:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

static void on_clock_changed(void *userdata)
{
        time_bus_emit_changed(userdata, "ClockState", "ClockReason", NULL);
}

int time_feed_new(Core *m, TimeFeed **ret)
{
        TimeFeed *f = calloc(1, sizeof(*f));
        int r;

        if (!f)
                return -ENOMEM;
        f->core = m;
        f->chrony_error = 1; /* nothing sent yet: the first answer is said */
        r = time_new(m->config->time.gate_timeout_usec, &f->time);
        if (r < 0) {
                free(f);
                return r;
        }
        if (time_watch_add(f->time, on_time, f, NULL) == 0) {
                time_feed_free(f);
                return -ENOMEM;
        }
        r = time_clock_new(f->core, f->time, on_clock_changed, f, &f->clock);
        if (r < 0) {
                time_feed_free(f);
                return r;
        }
        feed_load(f);
        /* roamd runs on without timesyncd's NTP state */
        if (m->bus && timesyncd_client_new(m->bus, on_modem_time, f, &f->timesyncd) < 0)
                log_warning("systemd-timesyncd's NTP state is not followed");
        r = chrony_client_new(m->event, on_chrony_time, f, &f->cmdmon);
        if (r < 0) {
                time_feed_free(f);
                return r;
        }
        time_feed_reload(f);
        f->links_watch = links_watch_add(m->links, on_links, f, NULL);
        if (f->links_watch == 0) {
                time_feed_free(f);
                return -ENOMEM;
        }
        *ret = f;
        return 0;
}

void time_feed_reload(TimeFeed *f)
{
        const char *want, *have;

        if (!f)
                return;
        if (chrony_client_follow(f->cmdmon, f->core->config->time.chrony_command_socket) < 0)
                log_warning("chronyd's tracking is not read");
        want = f->core->config->time.gpsd_address;
        have = gpsd_client_address(f->gpsd);
        if ((!want && !have) || (want && have && streq(want, have)))
                return;
        if (f->gpsd) {
                f->gpsd = gpsd_client_free(f->gpsd);
                (void)time_remove_witness(f->time, GPSD_WITNESS, boottime());
        }
        /* roamd runs on without gpsd's time */
        if (want && gpsd_client_new(f->core->event, want, on_modem_time, f, &f->gpsd) < 0)
                log_warning("gpsd's GNSS time is not followed");
}

TimeFeed *time_feed_free(TimeFeed *f)
{
        if (!f)
                return NULL;
        feed_save(f);
        f->clock = time_clock_free(f->clock);
        f->timesyncd = timesyncd_client_free(f->timesyncd);
        f->gpsd = gpsd_client_free(f->gpsd);
        f->cmdmon = chrony_client_free(f->cmdmon);
        (void)time_feed_follow_modems(f, NULL, NULL);
        if (f->links_watch)
                links_watch_remove(f->core->links, f->links_watch);
        sd_event_source_disable_unref(f->expiry);
        sd_event_source_disable_unref(f->gate);
        sd_event_source_disable_unref(f->chrony);
        sd_bus_slot_unref(f->slot);
        time_free(f->time);
        free(f);
        return NULL;
}

RoamTimeGate time_feed_gate(const TimeFeed *f)
{
        if (!f || !time_gate_open(f->time))
                return ROAM_TIME_GATE_CLOSED;
        /* Opened by the wait's end, and still not settled: unverified. */
        return f->time->gate_timed_out && f->time->state != TIME_STATE_SETTLED
                   ? ROAM_TIME_GATE_UNVERIFIED
                   : ROAM_TIME_GATE_OPEN;
}

void time_feed_online(TimeFeed *f)
{
        /* The gate's wait counts from the first online global state. */
        if (!f || f->time->gate_deadline != 0)
                return;
        /* the configuration in force now (a reload may have changed it) */
        f->time->gate_wait = f->core->config->time.gate_timeout_usec;
        time_gate_online(f->time, boottime());
        if (!time_gate_open(f->time))
                feed_arm(&f->gate, f, f->time->gate_deadline, on_gate);
}

const char *time_feed_gate_reason(const TimeFeed *f, char *buf, size_t size)
{
        switch (time_feed_gate(f)) {
        case ROAM_TIME_GATE_OPEN:
                snprintf(buf, size, "time settled: %s", f->time->reason);
                break;
        case ROAM_TIME_GATE_UNVERIFIED:
                snprintf(buf, size, "time unverified: %s, the wait of %" PRIu64 " ms ended",
                         f->time->reason, f->time->gate_wait / USEC_PER_MSEC);
                break;
        case ROAM_TIME_GATE_CLOSED:
                snprintf(buf, size, "waiting for the time: %s", f->time->reason);
                break;
        case _ROAM_TIME_GATE_MAX:
        case _ROAM_TIME_GATE_INVALID:
                snprintf(buf, size, "time gate unknown");
                break;
        }
        return buf;
}

int time_feed_set_manual(TimeFeed *f, uint64_t realtime, uint64_t error, const char *who)
{
        TimeSample s = {.kind = TIME_SOURCE_MANUAL, .realtime = realtime, .error = error};
        usec_t now = boottime();

        s.taken = now;
        snprintf(s.witness, sizeof(s.witness), "manual");
        snprintf(s.origin, sizeof(s.origin), "set by %s", who);
        (void)time_remove_kind(f->time, TIME_SOURCE_MANUAL, now);
        log_info("Time: a manual setting %s: %" PRIu64 " ± %" PRIu64 " us", s.origin, realtime,
                 error);
        return time_add_sample(f->time, &s, now);
}
