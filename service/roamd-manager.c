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
#include "roamd-firewall.h"
#include "roamd-link-bus.h"
#include "roamd-manager.h"
#include "roamd-time-feed.h"
#include "roamd-polkit.h"
#include "roamd-ndopt.h"
#include "roamd-netlink.h"
#include "roamd-probe.h"
#include "roamd-reconcile.h"
#include "roamd-wake-run.h"
#include "roamd-wpa.h"

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
        return sd_event_exit(m->core.event, 0);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        (void)manager_reload(userdata);
        return 0;
}

static int on_trim(sd_event_source *s, void *userdata)
{
        (void)malloc_trim(0);
        return 0;
}

static void on_degraded_changed(void *userdata)
{
        Manager *m = userdata;

        core_emit_manager_changed(&m->core, "Degraded", "DegradedSince", NULL);
}

/* A pass waits (20 ms at most) while a new link's first probe answer is due. */
static bool links_await_first_answer(void *userdata)
{
        Manager *m = userdata;

        for (size_t i = 0; i < m->core.links->n_links; i++)
                if (link_awaits_first_answer(m->core.links->links[i]))
                        return true;
        return false;
}

/* systemd's status line: the global state, "online" in the time gate's words. */
static void manager_notify_status(Manager *m)
{
        Links *links = m->core.links;
        const char *state = links->state;

        if (streq(state, "online") && m->time)
                state = roam_time_gate_online_words(time_feed_gate(m->time));
        (void)sd_notifyf(false, "STATUS=%s%s%s", state, links->best ? " via " : "",
                         links->best ? links->best->info.name : "");
}

/* The time gate is an input of the wake queue and of the status line: the composition root
 * hands it over (the time feed knows neither). */
void manager_follow_time(Manager *m)
{
        char why[256];

        manager_notify_status(m);
        if (m->wake && m->time)
                wake_set_time_gate(m->wake->queue, time_feed_gate(m->time) != ROAM_TIME_GATE_CLOSED,
                                   time_feed_gate_reason(m->time, why, sizeof(why)));
}

/* The manager's own share of link events: the bus properties and systemd's status line. */
static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        Manager *m = userdata;

        switch (ev->type) {
        case LINKS_EVENT_BEST:
                if (ev->mask & LINKS_BEST_LINK)
                        core_emit_manager_changed(&m->core, "BestLink", NULL);
                if (ev->mask & LINKS_BEST_STATE) {
                        core_emit_manager_changed(&m->core, "State", NULL);
                        manager_notify_status(m);
                }
                break;
        case LINKS_EVENT_SYNCED:
                /* Links went away: give the freed heap back instead of keeping the peak of a
                 * burst. */
                if (ev->n_gone > 0)
                        core_schedule_trim(&m->core);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_GONE:
        case LINKS_EVENT_PROBED:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

/* A pass over kernel state follows a sync and every verdict (it reads the byte counters
 * first). */
static void on_links_for_reconcile(Links *links, const LinksEvent *ev, void *userdata)
{
        Manager *m = userdata;

        if (ev->type == LINKS_EVENT_SYNCED || ev->type == LINKS_EVENT_VERDICT)
                reconcile_schedule(m->core.reconcile);
}

Manager *manager_free(Manager *m)
{
        if (!m)
                return NULL;
        features_stop(m); /* the last started first (roamd-features.c) */
        dns_free(m->dns);
        ndopt_free(m->ndopt);
        netlink_free(m->core.netlink);
        m->core.reconcile = reconcile_free(m->core.reconcile); /* after its parts' owners */
        m->core.links = links_free(m->core.links); /* after the features: they watch it */
        curl_glue_free(m->core.curl);              /* after the links: their probes hold handles */
        sd_event_source_disable_unref(m->core.trim_source);
        sd_event_source_disable_unref(m->sigterm_source);
        sd_event_source_disable_unref(m->sigint_source);
        sd_event_source_disable_unref(m->sighup_source);
        sd_bus_slot_unref(m->manager_slot);
        sd_bus_slot_unref(m->object_manager_slot);
        sd_bus_slot_unref(m->link_slot);
        sd_bus_slot_unref(m->link_probe_slot);
        sd_bus_slot_unref(m->link_enum_slot);
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
        sigset_t mask;
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
        m->core.initial_netns = in_initial_netns();

        r = sd_event_default(&m->core.event);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate event loop: %m");

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Failed to block signals: %m");
        if ((r = sd_event_add_signal(m->core.event, &m->sigterm_source, SIGTERM, on_exit_signal,
                                     m)) < 0 ||
            (r = sd_event_add_signal(m->core.event, &m->sigint_source, SIGINT, on_exit_signal, m)) <
                0 ||
            (r = sd_event_add_signal(m->core.event, &m->sighup_source, SIGHUP, on_sighup, m)) < 0)
                return log_error_errno(r, "Failed to watch signals: %m");

        r = links_new(&m->core, m->core.event, &m->core.links);
        if (r < 0)
                return r;
        /* The first watcher: the bus and systemd hear of the best link before any feature. */
        if (links_watch_add(m->core.links, on_links, m, NULL) == 0 ||
            links_watch_add(m->core.links, on_links_for_reconcile, m, NULL) == 0)
                return log_oom();
        /* Kernel state (routes, rules, table inet roam): passes, once the parts register. */
        r = reconcile_new(m->core.event, on_degraded_changed, m, &m->core.reconcile);
        if (r < 0)
                return log_error_errno(r, "Failed to set up the reconciler: %m");
        reconcile_set_hold(m->core.reconcile, links_await_first_answer, m);

        /* Giving the heap's free pages back takes ~1 ms after a round with TLS: when nothing
         * else is pending, never ahead of a verdict, an answer or a carrier change. */
        r = sd_event_add_defer(m->core.event, &m->core.trim_source, on_trim, m);
        if (r < 0)
                return log_error_errno(r, "Failed to allocate trim source: %m");
        (void)sd_event_source_set_enabled(m->core.trim_source, SD_EVENT_OFF);
        (void)sd_event_source_set_priority(m->core.trim_source, SD_EVENT_PRIORITY_IDLE);
        (void)sd_event_source_set_description(m->core.trim_source, "trim");

        *ret = TAKE_PTR(m);
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
        config_free(m->core.config);
        m->core.config = c;
        log_set_max_level(c->log_level);
        (void)dns_reconfigure(m->dns);

        for (size_t i = 0; i < m->core.links->n_links; i++) {
                Link *l = m->core.links->links[i];
                const char *names[3];
                size_t n = 0;

                if (link_classify(l, names, &n) > 0) {
                        names[n] = NULL;
                        link_bus_emit_changed_strv(l, (char **)names);
                }
        }
        features_reload(m);
        links_schedule_sync(m->core.links);
        (void)sd_notify(false, "READY=1");
        return 0;
}

static bool manager_address_is_local(int family, const void *addr, void *userdata)
{
        Manager *m = userdata;

        return netlink_address_is_local(m->core.netlink, family, addr);
}

/* Link.WiFi*: wpa_supplicant's station facts, for the links' bus objects. */
static const WpaStation *link_station(const char *ifname, void *userdata)
{
        Manager *m = userdata;

        return wpa_station(m->core.wpa, ifname);
}

/* Link.NetworkId, Location...: the firewall's view of a link, for the links' bus objects. */
static void link_identity(int ifindex, LinkIdentityView *ret, void *userdata)
{
        Manager *m = userdata;

        firewall_link_view(m->firewall, ifindex, ret);
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
        curl_glue_set_is_local(m->core.curl, manager_address_is_local, m);
        r = ndopt_new(m->core.event, links_changed, m->core.links, &m->ndopt);
        if (r < 0)
                return r;
        r = dns_new(m->core.event, m->core.bus, &m->core.config, links_changed, m->core.links,
                    &m->dns);
        if (r < 0)
                return r;
        links_attach(m->core.links, m->core.netlink, m->ndopt, m->dns);
        m->core.links->views.identity = link_identity; /* m->firewall, NULL: no identities */
        m->core.links->views.identity_userdata = m;
        m->core.links->views.station = link_station; /* m->core.wpa, NULL: none */
        m->core.links->views.station_userdata = m;
        /* The features, in the order of the table (roamd-features.c). */
        r = features_start(m);
        if (r < 0)
                return r;
        manager_follow_time(m); /* the wake queue's first time gate */

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

int manager_run(Manager *m)
{
        return sd_event_loop(m->core.event);
}
