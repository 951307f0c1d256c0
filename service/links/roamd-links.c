/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-dns.h"
#include "roamd-link-bus.h"
#include "roamd-link-facts.h"
#include "roamd-links.h"
#include "roamd-ndopt.h"
#include "roamd-netlink.h"
#include "roamd-probe.h"

static const char *const links_event_type_table[_LINKS_EVENT_MAX] = {
    [LINKS_EVENT_NEW] = "new",         [LINKS_EVENT_CHANGED] = "changed",
    [LINKS_EVENT_VERDICT] = "verdict", [LINKS_EVENT_CAPPORT] = "capport",
    [LINKS_EVENT_NETWORK] = "network", [LINKS_EVENT_GONE] = "gone",
    [LINKS_EVENT_BEST] = "best",       [LINKS_EVENT_SYNCED] = "synced",
    [LINKS_EVENT_PROBED] = "probed",   [LINKS_EVENT_LOCATION] = "location",
};

const char *links_event_type_to_string(LinksEventType t)
{
        return t >= 0 && t < _LINKS_EVENT_MAX ? links_event_type_table[t] : NULL;
}

static void dispatch(void *callback, void *userdata, void *ctx)
{
        void **c = ctx;

        ((LinksWatchFn)callback)(c[0], c[1], userdata);
}

static void links_notify(Links *l, const LinksEvent *ev)
{
        void *ctx[2] = {l, (void *)ev};

        watch_list_notify(&l->watches, dispatch, ctx);
}

unsigned links_watch_add(Links *l, LinksWatchFn fn, void *userdata, WatchDestroyFn destroy)
{
        return watch_list_add(&l->watches, (void *)fn, userdata, destroy);
}

void links_watch_remove(Links *l, unsigned id)
{
        if (l)
                (void)watch_list_remove(&l->watches, id);
}

static int on_sync(sd_event_source *s, void *userdata)
{
        (void)links_sync(userdata);
        return 0;
}

/* A VPN has no default route in the main table: roamd routes apps into it through the VPN
 * slot's table (docs/apps.md), which holds a default route into the VPN in use (the first
 * usable VPN link) for each family it has an address of. */
static Link *links_vpn(void *userdata)
{
        Links *l = userdata;

        for (size_t i = 0; i < l->n_links; i++) {
                Link *k = l->links[i];
                if (k->bearer != BEARER_VPN || !k->info.carrier ||
                    (!link_has_global(k, AF_INET) && !link_has_global(k, AF_INET6)))
                        continue;
                return k;
        }
        return NULL;
}

/* The prober is above the link: its owner frees it first. */
static Link *links_link_free(Link *link)
{
        if (!link)
                return NULL;
        link->prober = prober_free(link->prober);
        return link_free(link);
}

int links_new(Core *core, sd_event *event, Links **ret)
{
        _cleanup_free_ Links *l = calloc(1, sizeof(Links));
        int r;

        if (!l)
                return log_oom();
        l->core = core;
        l->event = event;
        l->state = "offline";
        l->views.vpn = links_vpn;
        l->views.vpn_userdata = l;
        r = link_facts_stage_new(core, &l->facts);
        if (r < 0)
                return log_oom();
        r = sd_event_add_defer(event, &l->sync_source, on_sync, l);
        if (r < 0) {
                link_facts_stage_free(l->facts);
                return log_error_errno(r, "Failed to allocate sync source: %m");
        }
        (void)sd_event_source_set_enabled(l->sync_source, SD_EVENT_OFF);
        (void)sd_event_source_set_description(l->sync_source, "sync");
        *ret = TAKE_PTR(l);
        return 0;
}

Links *links_free(Links *l)
{
        if (!l)
                return NULL;
        for (size_t i = 0; i < l->n_links; i++)
                links_link_free(l->links[i]);
        free(l->links);
        link_facts_stage_free(l->facts);
        watch_list_clear(&l->watches);
        sd_event_source_disable_unref(l->sync_source);
        sd_bus_slot_unref(l->bus_slot);
        sd_bus_slot_unref(l->probe_bus_slot);
        sd_bus_slot_unref(l->enum_slot);
        free(l);
        return NULL;
}

void links_attach(Links *l, Netlink *netlink, NdOpt *ndopt, Dns *dns)
{
        l->netlink = netlink;
        l->ndopt = ndopt;
        l->dns = dns;
        l->facts->netlink = netlink;
}

void links_schedule_sync(Links *l)
{
        if (l && l->sync_source)
                (void)sd_event_source_set_enabled(l->sync_source, SD_EVENT_ONESHOT);
}

void links_changed(void *userdata)
{
        links_schedule_sync(userdata);
}

void links_reload(Links *l)
{
        for (size_t i = 0; i < l->n_links; i++) {
                Link *link = l->links[i];
                const char *names[3];
                size_t n = 0;

                if (link_classify(link, names, &n) > 0) {
                        names[n] = NULL;
                        link_bus_emit_changed_strv(link, (char **)names);
                }
        }
        links_schedule_sync(l);
}

bool links_await_first_answer(void *userdata)
{
        Links *l = userdata;

        for (size_t i = 0; i < l->n_links; i++)
                if (link_awaits_first_answer(l->links[i]))
                        return true;
        return false;
}

static size_t link_position(Links *l, int ifindex, bool *found)
{
        size_t lo = 0, hi = l->n_links;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (l->links[mid]->ifindex < ifindex)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        *found = lo < l->n_links && l->links[lo]->ifindex == ifindex;
        return lo;
}

Link *links_get(Links *l, int ifindex)
{
        bool found;
        size_t i;

        if (!l)
                return NULL;
        i = link_position(l, ifindex, &found);
        return found ? l->links[i] : NULL;
}

Link *links_get_by_name(Links *l, const char *name)
{
        for (size_t i = 0; l && i < l->n_links; i++)
                if (streq_ptr(l->links[i]->info.name, name))
                        return l->links[i];
        return NULL;
}

static void on_link_note(Link *link, LinkNote note, void *userdata);

static int links_add(Links *l, int ifindex, Link **ret)
{
        Link **nl, *link;
        bool found;
        size_t pos = link_position(l, ifindex, &found);
        int r;

        r = link_new(l->core, ifindex, &link);
        if (r < 0)
                return r;
        link->note = on_link_note;
        link->note_userdata = l;
        link->views = &l->views;
        nl = realloc(l->links, sizeof(Link *) * (l->n_links + 1));
        if (!nl) {
                link_free(link);
                return -ENOMEM;
        }
        l->links = nl;
        memmove(nl + pos + 1, nl + pos, sizeof(Link *) * (l->n_links - pos));
        nl[pos] = link;
        l->n_links++;
        *ret = link;
        return 0;
}

static bool addrs_differ(const LinkInfo *a, const LinkInfo *b)
{
        return a->n_addrs != b->n_addrs ||
               (b->n_addrs && memcmp(a->addrs, b->addrs, sizeof(LinkAddress) * b->n_addrs) != 0);
}

/* What of old -> new a watcher may care about (the bus names are link_update()'s business). */
static unsigned change_mask(const LinkInfo *old, const LinkInfo *new)
{
        unsigned m = 0;

        if (!streq_ptr(old->name, new->name))
                m |= LINK_CHANGE_NAME;
        if (old->carrier != new->carrier || old->admin_up != new->admin_up)
                m |= LINK_CHANGE_CARRIER;
        if (addrs_differ(old, new))
                m |= LINK_CHANGE_ADDRESSES;
        if (old->n_gateways != new->n_gateways ||
            (new->n_gateways &&memcmp(old->gateways, new->gateways,
                                      sizeof(IpAddr) * new->n_gateways) != 0))
                m |= LINK_CHANGE_GATEWAYS;
        if (old->n_dns != new->n_dns ||
            (new->n_dns &&memcmp(old->dns, new->dns, sizeof(IpAddr) * new->n_dns) != 0) ||
            old->dns_source != new->dns_source || !strv_equal(old->domains, new->domains) ||
            !streq_ptr(old->captive_portal_url, new->captive_portal_url))
                m |= LINK_CHANGE_DNS;
        if (!strv_equal(old->ntp_servers, new->ntp_servers))
                m |= LINK_CHANGE_NTP;
        return m;
}

static void links_link_network_changed(Links *l, Link *link);

static int sync_one(void *userdata, int ifindex, LinkInfo *info)
{
        Links *l = userdata;
        Link *link = links_get(l, ifindex);
        bool is_new = !link;
        LinkState state;
        unsigned mask, families;
        bool other_network;
        int r, n;
        /* static: a sync runs one link at a time, and two leases are no stack's business */
        static DhcpLeases leases;

        if (!link) {
                r = links_add(l, ifindex, &link);
                if (r < 0)
                        return log_oom();
                link_bus_hold(link); /* released at the end of the sync, as the others */
                log_info("%s: new link (index %d)", info->name, ifindex);
        }
        link->seen = true;

        /* the facts stage reads the leases first: the DNS, NTP and RFC 8910 URL come from them */
        r = link_facts_read_leases(l->facts, info, &leases);
        if (r >= 0)
                r = dns_fill(l->dns, ifindex, info, &leases);
        if (r >= 0)
                r = ndopt_fill(l->ndopt, ifindex, info); /* after the leases: they come first */
        if (r < 0)
                return log_oom();
        mask = change_mask(&link->info, info);
        if (mask & LINK_CHANGE_ADDRESSES)
                l->addresses_changed = true;

        state = link->state;
        n = link_update(link, info, is_new, &families);
        if (families)
                (void)link_reprobe_families(link, families);
        if (link->state != state)
                mask |= LINK_CHANGE_STATE;
        if (n > 0 && mask == 0)
                mask = LINK_CHANGE_OTHER;
        mask |= link_facts_update(l->facts, link, &leases, &other_network);
        /* The same addressing on another network (home -> a captive café on the same /24):
         * the verdict was about the old one. */
        if (other_network && !is_new)
                links_link_network_changed(l, link);
        link->sync_changed = mask;
        l->sync_mask |= mask;
        if (is_new) {
                (void)link_bus_announce(link);
                /* A new link gets a verdict even when nothing about it "changed". */
                if (!link->prober)
                        (void)link_reprobe(link);
                links_notify(l, &(LinksEvent){.type = LINKS_EVENT_NEW, .link = link});
        } else if (mask)
                links_notify(
                    l, &(LinksEvent){.type = LINKS_EVENT_CHANGED, .link = link, .mask = mask});
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

static void links_update_best(Links *l)
{
        Link *best = NULL;
        const char *state;
        unsigned mask = 0;

        for (size_t i = 0; i < l->n_links; i++) {
                Link *k = l->links[i];

                /* Virtual links and VPNs (which ride on another link) never count. */
                if (!link_is_usable(k) || bearer_preference(k->bearer) < 0)
                        continue;
                if (!best || link_better(k, best))
                        best = k;
        }
        state = best ? verdict_to_string(best->verdict.verdict) : "offline";

        if (best != l->best) {
                log_info("Best link: %s -> %s", l->best ? l->best->info.name : "none",
                         best ? best->info.name : "none");
                l->best = best;
                mask |= LINKS_BEST_LINK;
        }
        if (!streq(state, l->state)) {
                log_info("State: %s -> %s", l->state, state);
                l->state = state;
                mask |= LINKS_BEST_STATE;
        }
        if (mask)
                links_notify(l, &(LinksEvent){.type = LINKS_EVENT_BEST, .mask = mask});
}

static void links_link_verdict_changed(Links *l, Link *link)
{
        if (!l)
                return;
        links_update_best(l);
        links_notify(l, &(LinksEvent){.type = LINKS_EVENT_VERDICT, .link = link});
}

static void links_link_probed(Links *l, Link *link)
{
        if (l)
                links_notify(l, &(LinksEvent){.type = LINKS_EVENT_PROBED, .link = link});
}

static void links_link_capport_changed(Links *l, Link *link)
{
        if (l)
                links_notify(l, &(LinksEvent){.type = LINKS_EVENT_CAPPORT, .link = link});
}

static void on_link_note(Link *link, LinkNote note, void *userdata)
{
        Links *l = userdata;

        switch (note) {
        case LINK_NOTE_VERDICT:
                links_link_verdict_changed(l, link);
                break;
        case LINK_NOTE_PROBED:
                links_link_probed(l, link);
                break;
        case LINK_NOTE_CAPPORT:
                links_link_capport_changed(l, link);
                break;
        case _LINK_NOTE_MAX:
        case _LINK_NOTE_INVALID:
                break;
        }
}

static void links_link_network_changed(Links *l, Link *link)
{
        if (!l)
                return;
        /* Another network with the same addressing (home -> a captive café on the same /24):
         * nothing the probes depend on changed, but their verdict was about the old network.
         * A round that runs already started after the move that brought the new addresses. */
        if (!prober_round_running(link->prober)) {
                log_info("%s: another network, probing again", strempty(link->info.name));
                (void)link_reprobe_families(link, PROBE_IPV4 | PROBE_IPV6);
        }
        links_notify(l, &(LinksEvent){.type = LINKS_EVENT_NETWORK, .link = link});
}

void links_link_location_changed(Links *l, Link *link)
{
        if (l)
                links_notify(l, &(LinksEvent){.type = LINKS_EVENT_LOCATION, .link = link});
}

int links_sync(Links *l)
{
        _cleanup_free_ Link **gone = NULL;
        size_t k = 0, n_gone = 0;
        bool routes_changed;
        int r;

        l->addresses_changed = false;
        l->sync_mask = 0;
        for (size_t i = 0; i < l->n_links; i++) {
                l->links[i]->seen = false;
                link_bus_hold(l->links[i]); /* one PropertiesChanged per link per sync */
        }

        r = netlink_collect(l->netlink, sync_one, l);
        if (r >= 0) {
                /* The table is made whole first: a watcher told that a link is gone may look
                 * others up. */
                gone = calloc(l->n_links + 1, sizeof(Link *));
                if (!gone)
                        r = -ENOMEM;
        }
        if (r < 0) {
                for (size_t i = 0; i < l->n_links; i++)
                        link_bus_release(l->links[i]);
                return log_error_errno(r, "Failed to read link state: %m");
        }
        for (size_t i = 0; i < l->n_links; i++) {
                Link *link = l->links[i];

                if (link->seen)
                        l->links[k++] = link;
                else
                        gone[n_gone++] = link;
        }
        l->n_links = k;

        for (size_t i = 0; i < n_gone; i++) {
                Link *link = gone[i];

                log_info("%s: link removed (index %d)", strempty(link->info.name), link->ifindex);
                if (l->best == link) {
                        l->best = NULL;
                        links_notify(
                            l, &(LinksEvent){.type = LINKS_EVENT_BEST, .mask = LINKS_BEST_LINK});
                }
                (void)link_bus_withdraw(link);
                ndopt_forget(l->ndopt, link->ifindex);
                links_notify(l, &(LinksEvent){.type = LINKS_EVENT_GONE, .link = link});
                links_link_free(link);
        }

        links_update_best(l);
        if (l->addresses_changed)
                dns_refresh_bus(l->dns); /* their data may follow the addresses */
        if (l->sync_mask || n_gone || netlink_routes_generation(l->netlink) != l->routes_generation)
                log_debug(
                    "Sync: kinds 0x%x changed, %zu link(s) gone, routes %s", l->sync_mask, n_gone,
                    netlink_routes_generation(l->netlink) != l->routes_generation ? "changed"
                                                                                  : "unchanged");
        else
                log_debug("Sync: nothing changed");
        routes_changed = netlink_routes_generation(l->netlink) != l->routes_generation;
        l->routes_generation = netlink_routes_generation(l->netlink);
        links_notify(l, &(LinksEvent){.type = LINKS_EVENT_SYNCED,
                                      .mask = l->sync_mask,
                                      .addresses_changed = l->addresses_changed,
                                      .routes_changed = routes_changed,
                                      .n_gone = n_gone});
        if (l->after_sync)
                l->after_sync(l->after_sync_userdata);
        for (size_t i = 0; i < l->n_links; i++)
                link_bus_release(l->links[i]);
        return 0;
}
