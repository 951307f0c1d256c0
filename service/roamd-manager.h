/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-link.h"
#include "roamd-links.h"

typedef struct Manager Manager;
typedef struct Netlink Netlink;
typedef struct NdOpt NdOpt;
typedef struct Dns Dns;
typedef struct CurlGlue CurlGlue;
typedef struct Apps Apps;
typedef struct Stats Stats;
typedef struct Portal Portal;
typedef struct StallWatch StallWatch;
typedef struct Wpa Wpa;
typedef struct P2p P2p;
typedef struct Bt Bt;
typedef struct WifiService WifiService;
typedef struct Firewall Firewall;
typedef struct Reconcile Reconcile;
typedef struct TimeFeed TimeFeed;

typedef struct ZoneService ZoneService;
typedef struct NtpDhcp NtpDhcp;
typedef struct WakeRun WakeRun;
typedef struct Monitor Monitor;

struct Manager {
        Core core; /* what the features get */
        char *config_path;
        bool config_missing_ok;

        NdOpt *ndopt; /* RA option 37 (RFC 8910) */
        Dns *dns;
        Apps *apps; /* NULL with [Apps] Enforce=no */
        /* NULL with [Stats] Enable=no or without apps */
        Stats *stats;
        int stats_part; /* its part of the passes (also without it): stats_register() */
        Portal *portal;
        P2p *p2p;
        Bt *bt;            /* NULL with [Bluetooth] Enable=no */
        WifiService *wifi; /* joining Wi-Fi networks; NULL with [WiFi] Enable=no */
        /* NULL with [Firewall] Enable=no */
        Firewall *firewall;
        ZoneService *zone; /* the time zone from the modems; NULL when it could not start */
        WakeRun *wake;     /* the ordered wake-up; NULL without apps */
        Monitor *monitor;  /* what apps' network monitors hear; NULL without apps */
        StallWatch *stall; /* apps' stalled connections start probe rounds */

        TimeFeed *time;    /* the time consensus and the online gate (docs/time.md) */
        NtpDhcp *ntp_dhcp; /* the leases' NTP servers handed to chronyd */

        /* The global state as the bus says it (roamd-manager-status.c): the verdict of the
         * route the default app takes, its link, and why it is not the best link's; changed
         * only by manager_state_update(). */
        const char *state;
        int default_ifindex; /* 0: none */
        char *state_reason;  /* "" when the default route's link is the best one */
        unsigned apps_default_watch;

        sd_bus_slot *manager_slot, *object_manager_slot;
        sd_bus_slot *apps_bus_slot, *firewall_bus_slot; /* their members of org.roam1.Manager */
};

int manager_new(const char *config_path, bool config_missing_ok, Manager **ret);
Manager *manager_free(Manager *m);
static inline void manager_freep(Manager **m)
{
        manager_free(*m);
}

/* Connects to the bus, starts the adapters and the features, takes the name. The caller
 * runs the loop (m->core.event) and watches the signals (roamd.c). */
int manager_start(Manager *m);

/* Re-reads the configuration (every file of it: roamd-config-check.h). A broken one is refused
 * as a whole and the old one stays: -EINVAL, and *ret_error (may be NULL) the first
 * "FILE:LINE: message". */
int manager_reload(Manager *m, char **ret_error);

/* roamd-manager-status.c: the manager's own PropertiesChanged and systemd's status line. The
 * links watch (State, BestLink, the status line); the reconciler's Degraded (userdata: the
 * manager); the time gate handed to the wake queue and the status line (the time feed's
 * watch). */
int manager_status_setup(Manager *m);
void manager_status_done(Manager *m);
/* The apps started (or stop): the global state follows the route of their default app. */
int manager_status_follow_apps(Manager *m);
void manager_status_unfollow_apps(Manager *m);
void manager_degraded_changed(void *userdata);
void manager_follow_time(Manager *m);
/* Hands the global state and its link to the wake queue and the time gate (both accept none). */
void manager_follow_state(Manager *m);

/* org.roam1.Manager's own members (those of the features are theirs: features_bus_setup()),
 * the ObjectManager, the links' objects (roamd-manager-bus.c). */
int manager_bus_setup(Manager *m);

/* The features, one table (roamd-manager-features.c): started in its order (a feature after those
 * it is built from), reloaded in its order, stopped in the reverse order. A fatal feature's failure
 * is returned (the caller frees the manager, which stops what started); an optional one's is logged
 * and roamd runs on without it. */
int features_start(Manager *m);
/* Each feature's members of org.roam1.Manager (sd-bus merges the vtables of one interface). */
int features_bus_setup(Manager *m);
/* Each feature re-reads the configuration (m->core.config, already replaced). */
void features_reload(Manager *m);
/* Every feature, the last started first; safe after a partial start. */
void features_stop(Manager *m);
