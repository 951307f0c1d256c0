/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <syslog.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-apps.h"
#include "roamd-bt.h"
#include "roamd-client-mm.h"
#include "roamd-client-ofono.h"
#include "roamd-firewall.h"
#include "roamd-link-bus.h"
#include "roamd-manager.h"
#include "roamd-monitor.h"
#include "roamd-ntp-dhcp.h"
#include "roamd-p2p.h"
#include "roamd-portal.h"
#include "roamd-reconcile.h"
#include "roamd-stall.h"
#include "roamd-stats.h"
#include "roamd-time-feed.h"
#include "roamd-timezone-bus.h"
#include "roamd-wake-run.h"
#include "roamd-wifi.h"
#include "roamd-wpa.h"

typedef enum FeatureFailure {
        FEATURE_FATAL,    /* roamd does not start */
        FEATURE_OPTIONAL, /* logged (off_level, off_message), stopped; roamd runs on */
} FeatureFailure;

typedef struct Feature {
        const char *name;
        bool (*enabled)(const Config *c); /* NULL: always */
        /* NULL: none. Its members of org.roam1.Manager, from manager_bus_setup() on, also while
         * it is off or not yet started (they then answer that it is off). */
        int (*bus)(Manager *m);
        int (*start)(Manager *m);   /* builds it from the core and the features above */
        void (*reload)(Manager *m); /* NULL: nothing to re-read */
        void (*stop)(Manager *m);   /* NULL: nothing to undo; safe when never started */
        FeatureFailure failure;
        int off_level;
        const char *off_message; /* ": %m" follows when off_errno */
        bool off_errno;
} Feature;

/* ---- modems: the one ModemManager and the one oFono client (roaming for the usage, NITZ and
 * the network's zone for the time and the time zone), in the Core; made first, freed last ---- */

/* The links' facts stage reads a link's registration here: ModemManager's, then oFono's. */
static int link_roaming(const char *ifname, void *userdata)
{
        Manager *m = userdata;
        int r = mm_client_roaming(m->core.mm, ifname);

        return r >= 0 ? r : ofono_client_roaming(m->core.ofono, ifname);
}

/* A modem's registration is about to change: the links' facts take it in at the next sync
 * (the usage's own before-change watch counts what came so far under the old state). */
static void on_mm_change(MMClient *c, void *userdata)
{
        links_schedule_sync(userdata);
}

static void on_ofono_change(OfonoClient *c, void *userdata)
{
        links_schedule_sync(userdata);
}

static int modems_start(Manager *m)
{
        int r;

        if (!m->core.bus)
                return 0;
        r = mm_client_new(m->core.bus, &m->core.mm);
        if (r < 0)
                return log_error_errno(r, "Cannot watch ModemManager: %m");
        r = ofono_client_new(m->core.bus, &m->core.ofono);
        if (r < 0)
                return log_error_errno(r, "Cannot watch oFono: %m");
        /* the links outlive the clients (freed after the features): no watch to remove */
        if (mm_client_change_watch_add(m->core.mm, on_mm_change, m->core.links) == 0 ||
            ofono_client_change_watch_add(m->core.ofono, on_ofono_change, m->core.links) == 0)
                return log_oom();
        m->core.links->views.roaming = link_roaming;
        m->core.links->views.roaming_userdata = m;
        return 0;
}

static void modems_stop(Manager *m)
{
        if (m->core.links)
                m->core.links->views.roaming = NULL;
        m->core.mm = mm_client_free(m->core.mm);
        m->core.ofono = ofono_client_free(m->core.ofono);
}

/* ---- p2p: WiFi Direct; its bus slice is the first feature's on the manager's path ---- */

static int p2p_start(Manager *m)
{
        if (p2p_new(&m->core, &m->p2p) < 0)
                return log_oom();
        return p2p_bus_setup(m->p2p);
}

static void p2p_stop(Manager *m)
{
        m->p2p = p2p_free(m->p2p); /* its bus slice goes with it */
}

/* ---- portal, stall, time, ntp-dhcp: watching the links from their first sync ---- */

static int portal_start(Manager *m)
{
        if (portal_new(&m->core, &portal_transport_curl, &m->portal) < 0)
                return log_oom();
        return portal_bus_setup(m->portal);
}

static void portal_stop(Manager *m)
{
        m->portal = portal_free(m->portal);
}

static int stall_start(Manager *m)
{
        if (stall_watch_new(&m->core, &m->stall) < 0)
                return log_oom();
        return 0;
}

static void stall_reload(Manager *m)
{
        stall_watch_reload(m->stall); /* [Probe] StallInterval=, DNSWatchInterval= */
}

static void stall_stop(Manager *m)
{
        m->stall = stall_watch_free(m->stall);
}

static void on_time(Time *t, TimeChange ev, void *userdata)
{
        switch (ev) {
        case TIME_CHANGE_STATE: /* unverified may be verified now */
        case TIME_CHANGE_GATE:
                manager_follow_time(userdata);
                break;
        case TIME_CHANGE_SOURCES:
        case _TIME_CHANGE_MAX:
        case _TIME_CHANGE_INVALID:
                break;
        }
}

static int time_start(Manager *m)
{
        int r;

        if (time_feed_new(&m->core, &m->time) < 0)
                return log_oom();
        r = time_bus_setup(m->time);
        if (r < 0)
                return r;
        if (time_watch_add(m->time->time, on_time, m, NULL) == 0)
                return log_oom();
        return 0;
}

static void time_reload(Manager *m)
{
        time_feed_reload(m->time); /* [Time] GpsdAddress=, chronyd's tracking read anew */
}

static void time_stop(Manager *m)
{
        m->time = time_feed_free(m->time); /* saves the time */
}

static int ntp_dhcp_start(Manager *m)
{
        if (ntp_dhcp_new(&m->core, m->time->cmdmon, &m->ntp_dhcp) < 0)
                return log_oom();
        return 0;
}

static void ntp_dhcp_stop(Manager *m)
{
        m->ntp_dhcp = ntp_dhcp_free(m->ntp_dhcp); /* before the time: it borrows its chronyd */
}

/* ---- the first sync: the first state is complete before the name is taken ---- */

static int first_sync_start(Manager *m)
{
        return links_sync(m->core.links);
}

/* ---- wifi: wpa_supplicant, once the links are known (whose sockets are ours) ---- */

static bool wifi_enabled(const Config *c)
{
        return c->wifi.enable;
}

static void on_wpa_changed(void *userdata)
{
        Manager *m = userdata;

        links_changed(m->core.links);
}

static void on_wpa_station(const char *ifname, char **names, void *userdata)
{
        Manager *m = userdata;

        /* a link fact: the sync reads it and signals what changed (roamd-link-facts.c) */
        if (links_get_by_name(m->core.links, ifname))
                links_changed(m->core.links);
        /* the join service follows the control sockets (it starts after wpa) */
        if (m->wifi)
                wifi_service_wpa_news(m->wifi, ifname);
}

static bool wpa_has_link(const char *ifname, void *userdata)
{
        Manager *m = userdata;

        return links_get_by_name(m->core.links, ifname) != NULL;
}

static void on_p2p_device(WpaClient *client, const char *prefix, const char *ifname, void *userdata)
{
        Manager *m = userdata;

        p2p_set_device(m->p2p, client, prefix, ifname);
}

/* Link.WiFi*: wpa_supplicant's station facts, for the links' bus objects. */
static const WpaStation *link_station(const char *ifname, void *userdata)
{
        return wpa_station(userdata, ifname);
}

static int wifi_start(Manager *m)
{
        static const WpaHooks hooks = {on_wpa_changed, on_wpa_station, wpa_has_link, on_p2p_device};

        /* sockets found now are attached asynchronously */
        if (wpa_new(m->core.event, &m->core.config, m->core.initial_netns, &hooks, m,
                    &m->core.wpa) < 0)
                return log_oom();
        m->core.links->views.station = link_station;
        m->core.links->views.station_userdata = m->core.wpa;
        return wpa_start(m->core.wpa);
}

static void wifi_stop(Manager *m)
{
        /* WiFi Direct lets go of the P2P device's client first: it is wpa's */
        p2p_set_device(m->p2p, NULL, NULL, NULL);
        if (m->core.wpa) /* started: the links exist and hold its view */
                m->core.links->views.station = NULL;
        m->core.wpa = wpa_free(m->core.wpa);
}

/* ---- wifi-join: joining networks through the owner of each Wi-Fi link (docs/wifi.md) ---- */

static int wifi_join_start(Manager *m)
{
        int r = wifi_service_new(&m->core, &m->wifi);

        if (r < 0)
                return log_oom();
        return wifi_service_start(m->wifi);
}

static void wifi_join_stop(Manager *m)
{
        m->wifi = wifi_service_free(m->wifi); /* before wpa: a join's network is removed */
}

/* ---- firewall: its model before the apps, whose start transaction carries its chains ---- */

static bool firewall_enabled(const Config *c)
{
        return c->firewall.enable;
}

static int firewall_bus(Manager *m)
{
        return firewall_bus_manager_setup(m->core.bus, &m->firewall, &m->firewall_bus_slot);
}

/* Link.NetworkId, Location...: the firewall's view of a link, for the links' bus objects. */
static void link_identity(int ifindex, LinkIdentityView *ret, void *userdata)
{
        firewall_link_view(userdata, ifindex, ret);
}

static int firewall_start_feature(Manager *m)
{
        int r;

        if (firewall_new(&m->core, &m->firewall) < 0)
                return log_oom();
        m->core.links->views.identity = link_identity;
        m->core.links->views.identity_userdata = m->firewall;
        r = firewall_start(m->firewall);
        if (r < 0)
                return r;
        if (!m->core.config->apps.enforce)
                log_warning("[Apps] Enforce=no: the firewall's rules are not installed "
                            "(they live in table inet roam).");
        return 0;
}

static void firewall_reload_feature(Manager *m)
{
        /* a broken firewall file is refused: the rules in force stay (FirewallError) */
        (void)firewall_reload(m->firewall);
}

static void firewall_stop(Manager *m)
{
        if (m->firewall) /* started: the links exist and hold its view */
                m->core.links->views.identity = NULL;
        m->firewall = firewall_free(m->firewall); /* its chains stay: fail closed */
}

/* ---- apps, stats, wake: built, then the apps' start replaces table inet roam ---- */

static bool apps_enabled(const Config *c)
{
        return c->apps.enforce;
}

static int apps_bus(Manager *m)
{
        return apps_bus_manager_setup(m->core.bus, &m->apps, &m->apps_bus_slot);
}

static int apps_start_feature(Manager *m)
{
        if (apps_new(&m->core, m->portal, &m->apps) < 0)
                return log_oom();
        return 0;
}

static void apps_reload_feature(Manager *m)
{
        (void)apps_reload(m->apps); /* malformed drop-ins are skipped and logged */
}

static void apps_stop(Manager *m)
{
        manager_status_unfollow_apps(m);
        (void)firewall_set_apps(m->firewall, NULL);
        m->apps = apps_free(m->apps);
}

static bool stats_enabled(const Config *c)
{
        return c->apps.enforce && c->stats.enable;
}

static int stats_start_feature(Manager *m)
{
        int r;

        r = stats_new(&m->core, &m->stats);
        if (r < 0)
                return r;
        /* before the apps' start replaces the table: takes over what the old one counted */
        return stats_start(m->stats);
}

static void stats_reload(Manager *m)
{
        (void)stats_budgets_changed(m->stats); /* [Stats] Budget= lines */
}

static void stats_stop(Manager *m)
{
        reconcile_remove_part(m->core.reconcile, m->stats_part);
        m->stats_part = 0;
        m->stats = stats_free(m->stats); /* a last save while the apps still exist */
}

/* The usage's part of the passes, also without usage (its install then removes the counting
 * tables); the usage and the firewall follow the apps' cgroups from the first scan. */
static int apps_wiring_start(Manager *m)
{
        m->stats_part = stats_register(m->stats, m->core.reconcile);
        if (m->apps &&
            (stats_set_apps(m->stats, m->apps) < 0 || firewall_set_apps(m->firewall, m->apps) < 0))
                return log_oom();
        return 0;
}

static void apps_wiring_stop(Manager *m)
{
        reconcile_remove_part(m->core.reconcile, m->stats_part);
        m->stats_part = 0;
}

static int wake_start(Manager *m)
{
        int r;

        /* its gate set is a part of the apps' start transaction */
        r = wake_run_new(&m->core, m->apps, m->stats, &m->wake);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the wake queue: %m");
        return 0;
}

static void wake_reload(Manager *m)
{
        wake_run_reload(m->wake);
}

static void wake_stop(Manager *m)
{
        m->wake = wake_run_free(m->wake); /* it reads the apps and the stats */
}

static int apps_table_start(Manager *m)
{
        int r;

        if (!m->apps) {
                log_notice("[Apps] Enforce=no: no per-app policy; table inet roam left alone.");
                m->core.apps_enforced = false;
                return 0;
        }
        r = apps_start(m->apps);
        if (r == -ENOMEDIUM) {
                /* Nothing could be enforced without cgroup2: say so loudly, but keep managing
                 * connections. The app methods answer Failed. */
                log_error("No cgroup v2 hierarchy is mounted: apps are NOT governed.");
                wake_stop(m);
                stats_stop(m);
                apps_stop(m);
        } else if (r < 0)
                return r;
        m->core.apps_enforced = m->apps != NULL;
        return m->apps ? manager_status_follow_apps(m) : 0;
}

/* ---- monitor: the apps' GLib network monitors (gio/), once the apps govern ---- */

static int monitor_start(Manager *m)
{
        if (!m->apps) /* no cgroup v2: nothing to answer per app; GLib keeps its own monitor */
                return 0;
        return monitor_new(&m->core, m->apps, m->wake, m->stats, &m->monitor);
}

static void monitor_stop(Manager *m)
{
        /* before the wake-up, the usage and the apps it reads */
        m->monitor = monitor_free(m->monitor);
}

/* ---- bt: BlueZ's objects and the pairing agent follow BlueZ on the bus ---- */

static bool bt_enabled(const Config *c)
{
        return c->bluetooth.enable;
}

static int bt_start_feature(Manager *m)
{
        if (bt_new(&m->core, &m->bt) < 0)
                return log_oom();
        m->bt->wifi = m->wifi; /* NFC tags' networks go through the owner (it stops after) */
        return bt_start(m->bt);
}

static void bt_stop(Manager *m)
{
        m->bt = bt_free(m->bt);
}

/* ---- timezone: the time zone from the modems, whose network time the time feed follows ---- */

static int zone_start(Manager *m)
{
        return zone_service_new(&m->core, &m->zone);
}

static void zone_stop(Manager *m)
{
        m->zone = zone_service_free(m->zone);
}

static int time_modems_start(Manager *m)
{
        if ((m->core.mm || m->core.ofono) &&
            time_feed_follow_modems(m->time, m->core.mm, m->core.ofono) < 0)
                return log_oom();
        return 0;
}

static void time_modems_stop(Manager *m)
{
        /* the time feed lets go of the modems before the modems' row frees them */
        if (m->time)
                (void)time_feed_follow_modems(m->time, NULL, NULL);
}

/* The order is the order of construction: a feature after those it is built from or reads. */
static const Feature features[] = {
    {.name = "modems",
     .start = modems_start,
     .stop = modems_stop,
     .failure = FEATURE_OPTIONAL,
     .off_level = LOG_WARNING,
     .off_message = "Modems are not followed: no roaming, no network time from them"},
    {.name = "p2p", .start = p2p_start, .stop = p2p_stop},
    {.name = "portal", .start = portal_start, .stop = portal_stop},
    {.name = "stall", .start = stall_start, .reload = stall_reload, .stop = stall_stop},
    {.name = "time", .start = time_start, .reload = time_reload, .stop = time_stop},
    {.name = "ntp-dhcp", .start = ntp_dhcp_start, .stop = ntp_dhcp_stop},
    {.name = "first-sync", .start = first_sync_start},
    {.name = "wifi", .enabled = wifi_enabled, .start = wifi_start, .stop = wifi_stop},
    {.name = "wifi-join",
     .enabled = wifi_enabled,
     .start = wifi_join_start,
     .stop = wifi_join_stop},
    {.name = "firewall",
     .enabled = firewall_enabled,
     .bus = firewall_bus,
     .start = firewall_start_feature,
     .reload = firewall_reload_feature,
     .stop = firewall_stop},
    {.name = "apps",
     .enabled = apps_enabled,
     .bus = apps_bus,
     .start = apps_start_feature,
     .reload = apps_reload_feature,
     .stop = apps_stop},
    {.name = "stats",
     .enabled = stats_enabled,
     .start = stats_start_feature,
     .reload = stats_reload,
     .stop = stats_stop,
     .failure = FEATURE_OPTIONAL,
     .off_level = LOG_ERR,
     .off_message = "Usage statistics are off",
     .off_errno = true},
    {.name = "apps-wiring", .start = apps_wiring_start, .stop = apps_wiring_stop},
    {.name = "wake",
     .enabled = apps_enabled,
     .start = wake_start,
     .reload = wake_reload,
     .stop = wake_stop},
    {.name = "apps-table", .start = apps_table_start},
    {.name = "monitor",
     .enabled = apps_enabled,
     .start = monitor_start,
     .stop = monitor_stop,
     .failure = FEATURE_OPTIONAL,
     .off_level = LOG_WARNING,
     .off_message = "Apps' network monitors are not answered (GLib uses its own)",
     .off_errno = true},
    {.name = "bt", .enabled = bt_enabled, .start = bt_start_feature, .stop = bt_stop},
    {.name = "timezone",
     .start = zone_start,
     .stop = zone_stop,
     .failure = FEATURE_OPTIONAL,
     .off_level = LOG_WARNING,
     .off_message = "The time zone and the modems' network time are not followed (see above)."},
    {.name = "time-modems", .start = time_modems_start, .stop = time_modems_stop},
};

int features_bus_setup(Manager *m)
{
        for (size_t i = 0; i < ELEMENTSOF(features); i++) {
                int r = features[i].bus ? features[i].bus(m) : 0;
                if (r < 0)
                        return r;
        }
        return 0;
}

int features_start(Manager *m)
{
        for (size_t i = 0; i < ELEMENTSOF(features); i++) {
                const Feature *f = &features[i];
                int r;

                if (f->enabled && !f->enabled(m->core.config))
                        continue;
                log_debug("Starting %s.", f->name);
                r = f->start(m);
                if (r >= 0)
                        continue;
                if (f->failure == FEATURE_FATAL)
                        return r;
                if (f->off_errno)
                        log_full_errno(f->off_level, r, "%s: %m", f->off_message);
                else
                        log_full_errno(f->off_level, r, "%s", f->off_message);
                if (f->stop)
                        f->stop(m);
        }
        return 0;
}

void features_reload(Manager *m)
{
        for (size_t i = 0; i < ELEMENTSOF(features); i++)
                if (features[i].reload)
                        features[i].reload(m);
}

void features_stop(Manager *m)
{
        for (size_t i = ELEMENTSOF(features); i > 0; i--)
                if (features[i - 1].stop)
                        features[i - 1].stop(m);
}
