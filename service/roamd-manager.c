/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-curl.h"
#include "roamd-dns.h"
#include "roamd-link-bus.h"
#include "roamd-apps.h"
#include "roamd-stats.h"
#include "roamd-portal.h"
#include "roamd-bt.h"
#include "roamd-manager.h"
#include "roamd-polkit.h"
#include "roamd-ndopt.h"
#include "roamd-netlink.h"
#include "roamd-p2p.h"
#include "roamd-probe.h"
#include "roamd-reconcile.h"
#include "roamd-wpa.h"
#include "roamd-firewall.h"

static bool in_initial_netns(void)
{
        /* The kernel gives the initial network namespace a fixed inode (PROC_NET_INIT_INO). */
        const ino_t init_net_ino = 0xEFFFFFF9;
        struct stat a, b;

        if (stat("/proc/self/ns/net", &a) < 0)
                return true;
        if (stat("/proc/1/ns/net", &b) >= 0)
                return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
        /* pid 1 hidden from us (a locked-down init): fall back to the well-known inode. */
        return a.st_ino == init_net_ino;
}

static int on_exit_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        Manager *m = userdata;

        log_info("Received %s, shutting down.", strsignal((int)si->ssi_signo));
        (void)sd_notify(false, "STOPPING=1");
        return sd_event_exit(m->event, 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        (void)manager_reload(userdata);
        return 0;
}

static int on_sync(sd_event_source *s, void *userdata)
{
        (void)manager_sync(userdata);
        return 0;
}

static int on_trim(sd_event_source *s, void *userdata)
{
        (void)malloc_trim(0);
        return 0;
}

static void on_degraded_changed(void *userdata)
{
        manager_bus_emit_changed(userdata, "Degraded", "DegradedSince", NULL);
}

/* A pass waits (20 ms at most) while a new link's first probe answer is due. */
static bool links_await_first_answer(void *userdata)
{
        Manager *m = userdata;

        for (size_t i = 0; i < m->n_links; i++)
                if (link_awaits_first_answer(m->links[i]))
                        return true;
        return false;
}

Manager *manager_free(Manager *m)
{
        if (!m)
                return NULL;
        m->stats = stats_free(m->stats); /* a last save while the apps still exist */
        apps_free(m->apps);
        m->firewall = firewall_free(m->firewall); /* its chains stay: fail closed */
        m->portal = portal_free(m->portal);
        p2p_free(m->p2p);
        wpa_free(m->wpa);
        bt_free(m->bt);
        for (size_t i = 0; i < m->n_links; i++)
                link_free(m->links[i]);
        free(m->links);
        m->reconcile = reconcile_free(m->reconcile); /* after its parts' owners */
        dns_free(m->dns);
        ndopt_free(m->ndopt);
        netlink_free(m->netlink);
        curl_glue_free(m->curl);
        sd_event_source_disable_unref(m->sync_source);
        sd_event_source_disable_unref(m->trim_source);
        sd_event_source_disable_unref(m->sigterm_source);
        sd_event_source_disable_unref(m->sigint_source);
        sd_event_source_disable_unref(m->sighup_source);
        sd_bus_slot_unref(m->manager_slot);
        sd_bus_slot_unref(m->object_manager_slot);
        sd_bus_slot_unref(m->link_slot);
        sd_bus_slot_unref(m->link_enum_slot);
        sd_bus_slot_unref(m->peer_slot);
        sd_bus_slot_unref(m->peer_enum_slot);
        polkit_flush();
        sd_bus_flush_close_unref(m->bus);
        sd_event_unref(m->event);
        config_free(m->config);
        free(m->config_path);
        free(m);
        return NULL;
}

int manager_new(const char *config_path, bool config_missing_ok, Manager **ret)
{
        _cleanup_(manager_freep) Manager *m = NULL;
        sigset_t mask;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return log_oom();
        m->state = "offline";
        m->config_missing_ok = config_missing_ok;
        m->config_path = strdup(config_path);
        if (!m->config_path)
                return log_oom();

        r = config_load(m->config_path, config_missing_ok, &m->config);
        if (r < 0)
                return log_error_errno(r, "%s: invalid configuration, refusing to start.",
                                       m->config_path);
        log_set_max_level(m->config->log_level);
        m->initial_netns = in_initial_netns();

        r = sd_event_default(&m->event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        if ((r = sd_event_add_signal(m->event, &m->sigterm_source, SIGTERM, on_exit_signal, m)) <
                0 ||
            (r = sd_event_add_signal(m->event, &m->sigint_source, SIGINT, on_exit_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, &m->sighup_source, SIGHUP, on_sighup, m)) < 0)
                return log_error_errno(r, "Failed to watch signals: %m");

        r = sd_event_add_defer(m->event, &m->sync_source, on_sync, m);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate sync source: %m");
        (void)sd_event_source_set_enabled(m->sync_source, SD_EVENT_OFF);
        (void)sd_event_source_set_description(m->sync_source, "sync");
        /* Kernel state (routes, rules, table inet roam): passes, once the parts register. */
        r = reconcile_new(m->event, on_degraded_changed, m, &m->reconcile);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the reconciler: %m");
        reconcile_set_hold(m->reconcile, links_await_first_answer, m);

        /* Giving the heap's free pages back takes ~1 ms after a round with TLS: when nothing
         * else is pending, never ahead of a verdict, an answer or a carrier change. */
        r = sd_event_add_defer(m->event, &m->trim_source, on_trim, m);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate trim source: %m");
        (void)sd_event_source_set_enabled(m->trim_source, SD_EVENT_OFF);
        (void)sd_event_source_set_priority(m->trim_source, SD_EVENT_PRIORITY_IDLE);
        (void)sd_event_source_set_description(m->trim_source, "trim");

        *ret = TAKE_PTR(m);
        return 0;
}

void manager_schedule_trim(Manager *m)
{
        if (m->trim_source)
                (void)sd_event_source_set_enabled(m->trim_source, SD_EVENT_ONESHOT);
}

void manager_schedule_sync(Manager *m)
{
        if (m->sync_source)
                (void)sd_event_source_set_enabled(m->sync_source, SD_EVENT_ONESHOT);
}

static size_t link_position(Manager *m, int ifindex, bool *found)
{
        size_t lo = 0, hi = m->n_links;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (m->links[mid]->ifindex < ifindex)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < m->n_links && m->links[lo]->ifindex == ifindex;
        return lo;
}

Link *manager_get_link(Manager *m, int ifindex)
{
        bool found;
        size_t i = link_position(m, ifindex, &found);

        return found ? m->links[i] : NULL;
}

Link *manager_get_link_by_name(Manager *m, const char *name)
{
        for (size_t i = 0; i < m->n_links; i++)
                if (streq_ptr(m->links[i]->info.name, name))
                        return m->links[i];
        return NULL;
}

static int manager_add_link(Manager *m, int ifindex, Link **ret)
{
        Link **nl, *l;
        bool found;
        size_t pos = link_position(m, ifindex, &found);
        int r;

        r = link_new(m, ifindex, &l);
        if (r < 0)
                return r;
        nl = realloc(m->links, sizeof(Link *) * (m->n_links + 1));
        if (!nl) {
                link_free(l);
                return -ENOMEM;
        }
        m->links = nl;
        memmove(nl + pos + 1, nl + pos, sizeof(Link *) * (m->n_links - pos));
        nl[pos] = l;
        m->n_links++;
        *ret = l;
        return 0;
}

typedef struct SyncStats {
        bool addresses_changed;
} SyncStats;

static SyncStats sync_stats;

static int sync_one(Manager *m, int ifindex, LinkInfo *info)
{
        Link *l = manager_get_link(m, ifindex);
        bool is_new = !l;
        int r;

        if (!l) {
                r = manager_add_link(m, ifindex, &l);
                if (r < 0)
                        return log_oom();
                log_info("%s: new link (index %d)", info->name, ifindex);
        }
        l->seen = true;

        r = dns_fill(m->dns, ifindex, info);
        if (r >= 0)
                r = ndopt_fill(m->ndopt, ifindex, info); /* after the leases: they come first */
        if (r < 0)
                return log_oom();
        if (l->info.n_addrs != info->n_addrs ||
            (info->n_addrs &&
             memcmp(l->info.addrs, info->addrs, sizeof(LinkAddress) * info->n_addrs) != 0))
                sync_stats.addresses_changed = true;

        link_update(l, info, is_new);
        if (is_new) {
                (void)link_bus_announce(l);
                /* A new link gets a verdict even when nothing about it "changed". */
                if (!l->prober)
                        (void)link_reprobe(l);
        }
        return 0;
}

/* Is a better than b as the best link? Connectivity first, then how far the link is set up,
 * then the preferred bearer, then the lower index (the array order). */
static bool link_better(const Link *a, const Link *b)
{
        if (a->verdict.verdict != b->verdict.verdict)
                return a->verdict.verdict > b->verdict.verdict;
        if (a->state != b->state)
                return a->state > b->state;
        return bearer_preference(a->bearer) < bearer_preference(b->bearer);
}

static void manager_update_best(Manager *m)
{
        Link *best = NULL;
        const char *state;

        for (size_t i = 0; i < m->n_links; i++) {
                Link *l = m->links[i];

                /* Virtual links and VPNs (which ride on another link) never count. */
                if (!link_is_usable(l) || bearer_preference(l->bearer) < 0)
                        continue;
                if (!best || link_better(l, best))
                        best = l;
        }
        state = best ? verdict_to_string(best->verdict.verdict) : "offline";

        if (best != m->best) {
                log_info("Best link: %s -> %s", m->best ? m->best->info.name : "none",
                         best ? best->info.name : "none");
                m->best = best;
                manager_bus_emit_changed(m, "BestLink", NULL);
        }
        if (!streq(state, m->state)) {
                log_info("State: %s -> %s", m->state, state);
                m->state = state;
                manager_bus_emit_changed(m, "State", NULL);
                (void)sd_notifyf(false, "STATUS=%s%s%s", state, best ? " via " : "",
                                 best ? best->info.name : "");
        }
}

void manager_link_verdict_changed(Manager *m, Link *l)
{
        manager_update_best(m);
        reconcile_schedule(m->reconcile);
        portal_link_changed(m->portal, l);
}

void manager_link_capport_changed(Manager *m, Link *l)
{
        portal_link_changed(m->portal, l);
}

int manager_sync(Manager *m)
{
        size_t k = 0;
        int r;

        sync_stats = (SyncStats){};
        for (size_t i = 0; i < m->n_links; i++)
                m->links[i]->seen = false;

        r = netlink_collect(m->netlink, sync_one);
        if (r < 0)
                return log_error_errno(r, "Failed to read link state: %m");

        for (size_t i = 0; i < m->n_links; i++) {
                Link *l = m->links[i];

                if (l->seen) {
                        m->links[k++] = l;
                        continue;
                }
                log_info("%s: link removed (index %d)", strempty(l->info.name), l->ifindex);
                if (m->best == l)
                        m->best = NULL, manager_bus_emit_changed(m, "BestLink", NULL);
                (void)link_bus_withdraw(l);
                ndopt_forget(m->ndopt, l->ifindex);
                link_free(l);
        }
        /* Links went away: give the freed heap back instead of keeping the peak of a burst. */
        if (m->n_links - k >= 1)
                manager_schedule_trim(m);
        m->n_links = k;
        portal_links_changed(m->portal);

        manager_update_best(m);
        if (sync_stats.addresses_changed)
                dns_refresh_bus(m->dns);
        firewall_links_synced(m->firewall);
        reconcile_schedule(m->reconcile); /* (which reads the byte counters first) */
        return 0;
}

int manager_reload(Manager *m)
{
        Config *c = NULL;
        int r;

        (void)sd_notify(false, "RELOADING=1");
        log_info("Reloading configuration from %s", m->config_path);
        r = config_load(m->config_path, m->config_missing_ok, &c);
        if (r < 0) {
                (void)sd_notify(false, "READY=1");
                return log_error_errno(r, "%s: invalid configuration, keeping the old one.",
                                       m->config_path);
        }
        config_free(m->config);
        m->config = c;
        log_set_max_level(c->log_level);
        (void)dns_reconfigure(m->dns);

        for (size_t i = 0; i < m->n_links; i++) {
                Link *l = m->links[i];
                const char *names[3];
                size_t n = 0;

                if (link_classify(l, names, &n) > 0) {
                        names[n] = NULL;
                        link_bus_emit_changed_strv(l, (char **)names);
                }
        }
        /* Malformed drop-ins are skipped and logged; the others apply. */
        (void)apps_reload(m->apps);
        /* a broken firewall file is refused: the rules in force stay (FirewallError) */
        (void)firewall_reload(m->firewall);
        (void)stats_budgets_changed(m->stats); /* [Stats] Budget= lines */
        manager_schedule_sync(m);
        (void)sd_notify(false, "READY=1");
        return 0;
}

static bool manager_address_is_local(int family, const void *addr, void *userdata)
{
        Manager *m = userdata;

        return netlink_address_is_local(m->netlink, family, addr);
}

int manager_start(Manager *m)
{
        int r;

        r = sd_bus_open_system(&m->bus);
        if (r < 0)
                return log_error_errno(r, "Failed to connect to the system bus: %m");
        r = sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Failed to attach bus to event loop: %m");
        r = p2p_new(m, &m->p2p);
        if (r < 0)
                return log_oom();
        r = manager_bus_setup(m);
        if (r < 0)
                return r;

        r = curl_glue_new(m->event, &m->curl);
        if (r < 0)
                return log_error_errno(r, "Failed to set up libcurl: %m");
        r = netlink_new(m, &m->netlink);
        if (r < 0)
                return r;
        curl_glue_set_is_local(m->curl, manager_address_is_local, m);
        r = ndopt_new(m, &m->ndopt);
        if (r < 0)
                return r;
        r = dns_new(m, &m->dns);
        if (r < 0)
                return r;
        r = portal_new(m, &m->portal);
        if (r < 0)
                return log_oom();
        r = portal_bus_setup(m->portal);
        if (r < 0)
                return r;

        /* The first state is complete before the name is taken: no client sees a half one. */
        r = manager_sync(m);
        if (r < 0)
                return r;
        /* wpa_supplicant, once the links are known (whose sockets are ours); sockets found now
         * are attached asynchronously. */
        if (m->config->wifi.enable) {
                r = wpa_new(m, &m->wpa);
                if (r < 0)
                        return log_oom();
                r = wpa_start(m->wpa);
                if (r < 0)
                        return r;
        }

        /* Apps: the table replaces any left by an earlier roamd in one transaction. */
        if (m->config->apps.enforce && m->config->stats.enable) {
                /* before the table is replaced: takes over what the old one counted */
                r = stats_new(m, &m->stats);
                if (r >= 0)
                        r = stats_start(m->stats);
                if (r < 0) {
                        log_error_errno(r, "Usage statistics are off: %m");
                        m->stats = stats_free(m->stats);
                }
        }
        (void)stats_register(m->stats, m->reconcile);
        /* The firewall's model first: the apps' start transaction carries its chains. */
        if (m->config->firewall.enable) {
                r = firewall_new(m, &m->firewall);
                if (r < 0)
                        return log_oom();
                r = firewall_start(m->firewall);
                if (r < 0)
                        return r;
                if (!m->config->apps.enforce)
                        log_warning("[Apps] Enforce=no: the firewall's rules are not installed "
                                    "(they live in table inet roam).");
        }
        if (m->config->apps.enforce) {
                r = apps_new(m, &m->apps);
                if (r < 0)
                        return log_oom();
                r = apps_start(m->apps);
                if (r == -ENOMEDIUM) {
                        /* Nothing could be enforced without cgroup2: say so loudly, but keep
                         * managing connections. The app methods answer Failed. */
                        log_error("No cgroup v2 hierarchy is mounted: apps are NOT governed.");
                        m->stats = stats_free(m->stats);
                        m->apps = apps_free(m->apps);
                } else if (r < 0)
                        return r;
        } else
                log_notice("[Apps] Enforce=no: no per-app policy; table inet roam left alone.");

        /* Bluetooth: BlueZ's objects and the pairing agent follow BlueZ on the bus. */
        if (m->config->bluetooth.enable) {
                r = bt_new(m, &m->bt);
                if (r < 0)
                        return log_oom();
                r = bt_start(m->bt);
                if (r < 0)
                        return r;
        }

        r = sd_bus_request_name(m->bus, ROAM_BUS_NAME, 0);
        if (r < 0)
                return log_error_errno(r,
                                       "Failed to acquire bus name %s (is another roamd "
                                       "running?): %m",
                                       ROAM_BUS_NAME);
        log_info("roamd %s running, %zu links", ROAM_VERSION, m->n_links);
        (void)sd_notify(false, "READY=1");
        return 0;
}

int manager_run(Manager *m)
{
        return sd_event_loop(m->event);
}
