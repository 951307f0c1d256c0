/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The time consensus in roamd (docs/time.md): feeds it the HTTPS probes' Date samples (read
 * from the links on their verdict and probe events: the probes never call up), the saved
 * last known good time and the manual setting; runs its timers (samples' expiry, the gate's
 * bounded wait from the first online global state, handed over by the manager); saves the time when
 * it settles and at exit; org.roam1.Time (roamd-time-feed-bus.c). The clock is set by its own
 * watcher (roamd-time-clock.c).
 */

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-words.h"
#include "roamd-client-chrony.h"
#include "roamd-client-mm.h"
#include "roamd-client-ofono.h"
#include "roamd-client-gpsd.h"
#include "roamd-client-timesyncd.h"
#include "roamd-time-clock.h"
#include "roamd-time.h"

typedef struct Core Core;

typedef struct TimeFeed {
        Core *core;
        Time *time;
        unsigned links_watch;
        /* the modems' NITZ samples; the clients belong to the zone service */
        MMClient *mm;
        OfonoClient *ofono;
        unsigned mm_watch, ofono_watch;
        sd_event_source *expiry;    /* the next sample's expiry (CLOCK_BOOTTIME) */
        sd_event_source *gate;      /* the gate's bounded wait (CLOCK_BOOTTIME) */
        sd_event_source *chrony;    /* while settled: a sample to chronyd's SOCK refclock */
        int chrony_error;           /* the last send's, said once; 1 before the first */
        TimesyncdClient *timesyncd; /* the NTP state of systemd-timesyncd, when it runs */
        ChronyClient *cmdmon;       /* chronyd's command socket: its tracking, its reloads */
        GpsdClient *gpsd;           /* gpsd's fix time, when it runs and is configured */
        TimeClock *clock;           /* sets the clock through timedated without a clock daemon */
        sd_bus_slot *slot;
} TimeFeed;

int time_feed_new(Core *core, TimeFeed **ret);
/* Saves the time when settled. Accepts NULL. */
TimeFeed *time_feed_free(TimeFeed *f);
/* The configuration was reloaded: follows a changed [Time] GpsdAddress=, reads chronyd's
 * tracking at [Time] ChronyCommandSocket= at once. */
void time_feed_reload(TimeFeed *f);

RoamTimeGate time_feed_gate(const TimeFeed *f);
/* The global state (Manager.State: the route apps' traffic takes, not the best link) reads
 * online: the first time starts the gate's bounded wait ([Time] GateTimeout=), so the time
 * sources get that long from when apps could really get out. Accepts NULL. */
void time_feed_online(TimeFeed *f);
/* The gate in words for the wake queue and the status line: why it is open or closed. */
const char *time_feed_gate_reason(const TimeFeed *f, char *buf, size_t size);
/* Takes the modems' NITZ samples (ModemManager's and oFono's clients, which must outlive
 * the feed or be dropped first with time_feed_follow_modems(f, NULL, NULL)). */
int time_feed_follow_modems(TimeFeed *f, MMClient *mm, OfonoClient *ofono);
/* A manual setting (replacing the previous one): realtime ± error, now. */
int time_feed_set_manual(TimeFeed *f, uint64_t realtime, uint64_t error, const char *who);

int time_bus_setup(TimeFeed *f);
void time_bus_emit_changed(TimeFeed *f, const char *first, ...);
