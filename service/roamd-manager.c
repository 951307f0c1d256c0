/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The composition root: the loop, the bus, the links registry, the reconciler and the kernel
 * adapters; then the features from their table (roamd-manager-features.c). */
#include <systemd/sd-daemon.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-config-check.h"
#include "roamd-curl.h"
#include "roamd-dns.h"
#include "roamd-firewall.h"
#include "roamd-manager.h"
#include "roamd-ndopt.h"
#include "roamd-netlink.h"
#include "roamd-polkit.h"
#include "roamd-reconcile.h"

/* A pass over kernel state follows a sync and every verdict (it reads the byte counters
 * first). */
/* The pass a sync asked for runs at its end, after every feature took the sync in and while
 * the links' signals are held: one PropertiesChanged per link says the sync and what the pass
 * put in force (the firewall's Location). Its commit is asynchronous, but the kernel applies
 * an nftables batch inside sendmsg(), so its answer is already queued: settling reads it
 * without waiting and the pass ends here. Only an answer not there (lost, or held by a test)
 * ends it later, in a PropertiesChanged of its own, never before the kernel accepted it.
 * Held for a new link's first answer, it runs later. */
static void on_sync_end(void *userdata)
{
        Manager *m = userdata;

        if (reconcile_run_scheduled(m->core.reconcile))
                reconcile_settle(m->core.reconcile);
}

static void on_links_for_reconcile(Links *links, const LinksEvent *ev, void *userdata)
{
        Manager *m = userdata;

        /* A pass only when something its parts use changed: a link's addresses, default
         * routes, state, name, bearer, DNS or network (its location), any route (the apps'
         * tables copy them), a link gone, a verdict. A renewed lease that says the same,
         * neighbour churn, NTP servers, a modem's registration (the usage and the app
         * monitor follow it themselves), a Wi-Fi station's signal or association (its SSID
         * and BSSID, the part a location uses, come as IDENTITY): none. */
        if ((ev->type == LINKS_EVENT_SYNCED &&
             ((ev->mask & ~(unsigned)(LINK_CHANGE_LEASE | LINK_CHANGE_NTP | LINK_CHANGE_MODEM |
                                      LINK_CHANGE_WIFI)) ||
              ev->n_gone || ev->routes_changed)) ||
            ev->type == LINKS_EVENT_VERDICT)
                reconcile_schedule(m->core.reconcile);
}

Manager *manager_free(Manager *m)
{
        if (!m)
                return NULL;
        features_stop(m); /* the last started first (roamd-manager-features.c) */
        dns_free(m->dns);
        ndopt_free(m->ndopt);
        netlink_free(m->core.netlink);
        m->core.reconcile = reconcile_free(m->core.reconcile); /* after its parts' owners */
        m->core.links = links_free(m->core.links); /* after the features: they watch it */
        manager_status_done(m);
        curl_glue_free(m->core.curl); /* after the links: their probes hold handles */
        sd_event_source_disable_unref(m->core.trim_source);
        sd_bus_slot_unref(m->manager_slot);
        sd_bus_slot_unref(m->object_manager_slot);
        sd_bus_slot_unref(m->apps_bus_slot);
        sd_bus_slot_unref(m->firewall_bus_slot);
        polkit_flush();
        sd_bus_flush_close_unref(m->core.bus);
        sd_event_unref(m->core.event);
        config_free(m->core.config);
        free(m->config_path);
        free(m);
        return NULL;
}

int manager_new(const char *config_path, bool config_missing_ok, Manager **ret)
{
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return log_oom();
        m->config_missing_ok = config_missing_ok;
        m->config_path = strdup(config_path);
        if (!m->config_path)
                return log_oom();

        r = config_load(m->config_path, config_missing_ok, &m->core.config);
        if (r < 0)
                return log_error_errno(r, "%s: invalid configuration, refusing to start.",
                                       m->config_path);
        log_set_max_level(m->core.config->log_level);
        m->core.initial_netns = netns_is_initial();

        r = sd_event_default(&m->core.event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");
        r = links_new(&m->core, m->core.event, &m->core.links);
        if (r < 0)
                return r;
        /* The first watchers: the bus and systemd hear of the best link before any feature. */
        if (manager_status_setup(m) < 0 ||
            links_watch_add(m->core.links, on_links_for_reconcile, m, NULL) == 0)
                return log_oom();
        /* Kernel state (routes, rules, table inet roam): passes, once the parts register. */
        r = reconcile_new(m->core.event, manager_degraded_changed, m, &m->core.reconcile);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the reconciler: %m");
        reconcile_set_hold(m->core.reconcile, links_await_first_answer, m->core.links);
        m->core.links->after_sync = on_sync_end;
        m->core.links->after_sync_userdata = m;
        r = core_trim_setup(&m->core);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate trim source: %m");

        *ret = TAKE_PTR(m);
        return 0;
}

int manager_reload(Manager *m, char **ret_error)
{
        _cleanup_free_ char *error = NULL;
        ConfigPart part;
        Config *c = NULL;
        int r;

        (void)sd_notify(false, "RELOADING=1");
        log_info("Reloading configuration from %s", m->config_path);
        /* every file first: a reload applies all of them or none */
        r = config_check_all(m->config_path, m->config_missing_ok, &c, &error, &part);
        if (r < 0) {
                if (part == CONFIG_PART_FIREWALL)
                        firewall_refused(m->firewall, error);
                (void)sd_notify(false, "READY=1");
                log_error("%s; the configuration in force stays.",
                          error ? error : "invalid configuration");
                if (ret_error)
                        *ret_error = TAKE_PTR(error);
                return r;
        }
        config_free(m->core.config);
        m->core.config = c;
        log_set_max_level(c->log_level);
        (void)dns_reconfigure(m->dns);
        links_reload(m->core.links); /* the bearers first (the sync it schedules comes later) */
        features_reload(m);
        /* what the new files say goes into the kernel, whether or not a link changed */
        reconcile_schedule(m->core.reconcile);
        (void)sd_notify(false, "READY=1");
        return 0;
}

int manager_start(Manager *m)
{
        int r;

        r = sd_bus_open_system(&m->core.bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        r = sd_bus_attach_event(m->core.bus, m->core.event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach bus to event loop: %m");
        r = manager_bus_setup(m);
        if (r < 0)
                return r;

        r = curl_glue_new(m->core.event, &m->core.curl);
        if (r < 0)
                return log_error_errno(r, "Failed to set up libcurl: %m");
        /* The kernel adapters only say "changed" (a sync of the links follows). */
        r = netlink_new(m->core.event, links_changed, m->core.links, &m->core.netlink);
        if (r < 0)
                return r;
        curl_glue_set_is_local(m->core.curl, netlink_address_is_local, m->core.netlink);
        r = ndopt_new(m->core.event, links_changed, m->core.links, &m->ndopt);
        if (r < 0)
                return r;
        r = dns_new(m->core.event, m->core.bus, &m->core.config, links_changed, m->core.links,
                    &m->dns);
        if (r < 0)
                return r;
        links_attach(m->core.links, m->core.netlink, m->ndopt, m->dns);
        /* The features, in the order of the table (roamd-manager-features.c). */
        r = features_start(m);
        if (r < 0)
                return r;
        manager_follow_time(m);  /* the wake queue's first time gate */
        manager_follow_state(m); /* and its first global state */

        r = sd_bus_request_name(m->core.bus, ROAM_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r,
                                       "Failed to acquire bus name %s (is another roamd "
                                       "running?): %m",
                                       ROAM_BUS_NAME);
        log_info("roamd %s running, %zu links", ROAM_VERSION, m->core.links->n_links);
        (void)sd_notify(false, "READY=1");
        return 0;
}
