/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The ordered wake-up in roamd (docs/wake.md): the queue (roamd-wake.c) fed by the global
 * state (the default route's, handed over by the manager), the apps' wake policy and counters, its
 * gate in table inet roam as a part of the reconciler's pass, and its slice of the bus
 * (roamd-wake-run-bus.c). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-watch.h"
#include "roamd-wake.h"

typedef struct Apps Apps;
typedef struct Core Core;
typedef struct Stats Stats;
typedef struct WakeReg WakeReg;
typedef struct WakeOpen WakeOpen;

typedef struct WakeRun {
        Core *core;
        Apps *apps;   /* their wake policy, cgroups and bus objects */
        Stats *stats; /* their counters; NULL without usage counting */
        Wake *queue;
        sd_event_source *timer;
        unsigned links_watch;
        int link;            /* the link the apps' traffic takes (Manager.DefaultLink), 0 none */
        unsigned apps_watch; /* apps_cgroup_watch_add(): a registration's app gains a cgroup */
        int part;            /* reconcile_add_part() id: the gate's set */
        uint64_t *installed; /* cgroup IDs in set wake_gate */
        size_t n_installed;
        uint64_t *pending; /* what the pass's transaction puts there */
        size_t n_pending;
        bool pending_valid;
        WakeOpen **opens; /* opening apps, each waiting for the pass that opens its gate */
        size_t n_opens;
        WakeReg **regs; /* Register()ed apps, each followed by sd_bus_track */
        size_t n_regs;
        sd_bus_slot *manager_slot, *app_slot;
        WatchList watches; /* told after the bus heard of a turn's or the queue's change */
} WakeRun;

/* After apps_start(): registers with the links, the reconciler and the bus. */
int wake_run_new(Core *core, Apps *apps, Stats *stats, WakeRun **ret);
WakeRun *wake_run_free(WakeRun *w);
/* [Wake] changed. */
void wake_run_reload(WakeRun *w);
/* The global state (Manager.State) is online or not, and the link the default route's traffic
 * takes (Manager.DefaultLink, 0 none): the queue runs only while apps' traffic really gets
 * out, and that link's bearer and probe RTT set the cap. Accepts NULL. */
void wake_run_set_state(WakeRun *w, bool online, int ifindex);

/* roamd-wake-run-bus.c */
int wake_bus_setup(WakeRun *w);
void wake_bus_app_changed(WakeRun *w, const char *id, WakeAppState old, WakeAppState new,
                          WakeReason why, uint64_t generation);
/* The app came onto the list or left it (its WakeState, WakeReason, WakeSince). */
void wake_bus_app_listed(WakeRun *w, const char *id);
void wake_bus_queue_changed(WakeRun *w);
void wake_bus_cap_changed(WakeRun *w);
int wake_reg_drop(WakeRun *w, const char *id);
/* A cgroup of app id appeared in uid's subtree (UID_INVALID: outside every user's): a
 * registration made from another user's subtree no longer speaks for the app. */
void wake_reg_cgroup_added(WakeRun *w, const char *id, uid_t uid);
void wake_regs_free(WakeRun *w);
/* Told after an app's turn changed (id: its ID) or the queue's state did (id NULL), once the
 * bus was told: what an app hears through others (its GLib network monitor, roamd-monitor.c)
 * follows its turn. Returns the watcher's id (> 0), or 0 when out of memory. */
typedef void (*WakeRunFn)(WakeRun *w, const char *id, void *userdata);
unsigned wake_run_watch_add(WakeRun *w, WakeRunFn fn, void *userdata);
void wake_run_watch_remove(WakeRun *w, unsigned id);
