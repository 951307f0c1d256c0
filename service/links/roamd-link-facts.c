/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-core.h"
#include "roamd-lease-cache.h"
#include "roamd-link-bus.h"
#include "roamd-link-facts.h"
#include "roamd-netlink.h"

int link_facts_stage_new(Core *core, LinkFactsStage **ret)
{
        _cleanup_free_ LinkFactsStage *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        s->core = core;
        r = lease_cache_new(&s->leases);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

LinkFactsStage *link_facts_stage_free(LinkFactsStage *s)
{
        if (!s)
                return NULL;
        lease_cache_free(s->leases);
        free(s);
        return NULL;
}

unsigned link_facts_stage_lease_reads(const LinkFactsStage *s)
{
        return s ? lease_cache_reads(s->leases) : 0;
}

/* ---- leases ---- */

static bool link_has_address(const LinkInfo *info, const IpAddr *a)
{
        for (size_t i = 0; i < info->n_addrs; i++)
                if (info->addrs[i].addr.family == a->family &&
                    streq(info->addrs[i].addr.text, a->text))
                        return true;
        return false;
}

int link_facts_read_leases(LinkFactsStage *s, const LinkInfo *info, DhcpLeases *ret)
{
        static const int families[2] = {AF_INET, AF_INET6};

        ret->has[0] = ret->has[1] = false;
        if (!info->name)
                return 0;
        for (int k = 0; k < 2; k++) {
                DhcpLease *l = &ret->lease[k];
                int r = lease_cache_get(s->leases, s->core->config->dhcpcd_lease_dir, info->name,
                                        families[k], l);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        continue;
                /* the stale-lease rule: one of its addresses is on the link */
                for (size_t i = 0; i < l->n_addrs && !ret->has[k]; i++)
                        ret->has[k] = link_has_address(info, &l->addrs[i]);
        }
        return 0;
}

static bool leases_equal(const DhcpLeases *a, const DhcpLeases *b)
{
        for (int k = 0; k < 2; k++) {
                if (a->has[k] != b->has[k])
                        return false;
                /* parsed into zeroed structs (roamd-dhcp-lease.c) and copied whole */
                if (a->has[k] && memcmp(&a->lease[k], &b->lease[k], sizeof(DhcpLease)) != 0)
                        return false;
        }
        return true;
}

/* ---- the network identity ---- */

static bool hwaddr_real(const char *hw)
{
        if (!hw || !*hw)
                return false;
        for (; *hw; hw++)
                if (*hw != '0' && *hw != ':')
                        return true;
        return false;
}

/* The facts that name link's network now, into fact[] (allocated; NULL unknown). */
static int gather(LinkFactsStage *s, const Link *l, char *fact[_NETID_FACT_MAX], NetIdFacts *f)
{
        const WpaStation *st = &l->facts.wifi; /* wifi_update() read it first */
        const DhcpLease *v4 = l->facts.leases.has[0] ? &l->facts.leases.lease[0] : NULL;
        bool have_gw = l->info.n_gateways > 0, own_addr = false;

        for (size_t i = 0; i < l->info.n_addrs; i++)
                own_addr = own_addr || l->info.addrs[i].scope != ADDR_SCOPE_LINK;
        /* A link-local address alone (every link with carrier has one) names nothing: a link
         * without an address of its own and without a gateway is on no network we can tell
         * apart, and nobody should be asked where it is. */
        *f = (NetIdFacts){.has_network = l->info.carrier && (own_addr || have_gw)};
        if (l->info.name && !(fact[NETID_INTERFACE] = strdup(l->info.name)))
                return -ENOMEM;
        if (l->bearer >= 0 && !(fact[NETID_BEARER] = strdup(bearer_to_string(l->bearer))))
                return -ENOMEM;
        if (st && streq_ptr(st->wpa_state, "COMPLETED") && st->ssid && *st->ssid) {
                /* A roam (wpa_supplicant moves to another AP of the network it is on: the
                 * same SSID, the station never left it, the carrier held) is no other
                 * network: the identity keeps the AP the link joined by, so the id, the
                 * location and the routes stay and the roam is only a station change
                 * (LINK_CHANGE_WIFI). Link.WiFiBSSID says the AP of the moment. */
                const char *bssid = l->info.carrier &&
                                            streq_ptr(l->facts.fact[NETID_SSID], st->ssid) &&
                                            l->facts.fact[NETID_BSSID]
                                        ? l->facts.fact[NETID_BSSID]
                                        : st->bssid;

                if (!(fact[NETID_SSID] = strdup(st->ssid)))
                        return -ENOMEM;
                if (bssid && *bssid && !(fact[NETID_BSSID] = strdup(bssid)))
                        return -ENOMEM;
        }
        if (!f->has_network)
                return 0; /* nothing more to learn, and many idle links stay cheap */
        /* the gateway's MAC: IPv4 first, the IPv6 router else (the same box, mostly) */
        for (int pass = 0; pass < 2 && !fact[NETID_GATEWAY_MAC]; pass++)
                for (size_t i = 0; i < l->info.n_gateways; i++) {
                        const IpAddr *gw = &l->info.gateways[i];
                        char mac[32];
                        if (!gw->text[0] || gw->family != (pass == 0 ? AF_INET : AF_INET6))
                                continue;
                        if (netlink_neigh_lladdr(s->netlink, l->ifindex, gw, mac, sizeof(mac)) >=
                            0) {
                                if (!(fact[NETID_GATEWAY_MAC] = strdup(mac)))
                                        return -ENOMEM;
                                break;
                        }
                }
        if (v4 && v4->server_id.family && !(fact[NETID_DHCP_SERVER] = strdup(v4->server_id.text)))
                return -ENOMEM;
        if (v4 && v4->n_domains > 0)
                fact[NETID_DOMAIN] = strdup(v4->domains[0]);
        else if (l->info.domains && l->info.domains[0])
                fact[NETID_DOMAIN] = strdup(l->info.domains[0]);
        /* A link without link-layer addresses (a tunnel) has no neighbours to wait for. A lease
         * that names a router whose route is not in place yet (dhcpcd re-applying it after a
         * carrier returns: the address comes first) is no network without a gateway: wait
         * for it rather than name the network by its DHCP server for a moment. */
        f->gateway_pending = hwaddr_real(l->info.hwaddr) && !fact[NETID_GATEWAY_MAC] &&
                             (have_gw || (v4 && v4->has_router));
        return 0;
}

static unsigned identity_update(LinkFactsStage *s, Link *l, bool *ret_other_network)
{
        LinkFacts *lf = &l->facts;
        char *fact[_NETID_FACT_MAX] = {};
        char id[NETID_MAX];
        const char *names[3];
        size_t n = 0;
        NetIdFacts f;
        bool facts_changed = false;
        int r;

        r = gather(s, l, fact, &f);
        if (r < 0) {
                for (int k = 0; k < _NETID_FACT_MAX; k++)
                        free(fact[k]);
                log_oom();
                return 0; /* the identity stays as it was: the next sync tries again */
        }
        for (int k = 0; k < _NETID_FACT_MAX; k++) {
                if (streq_ptr(fact[k], lf->fact[k])) {
                        free(fact[k]);
                        continue;
                }
                free(lf->fact[k]);
                lf->fact[k] = fact[k];
                facts_changed = true;
        }
        for (int k = 0; k < _NETID_FACT_MAX; k++)
                f.fact[k] = lf->fact[k];
        lf->has_network = f.has_network;
        lf->gateway_pending = f.gateway_pending;
        netid_compose(&f, id);
        if (facts_changed)
                names[n++] = "NetworkIdentity";
        if (!streq(id, lf->network_id)) {
                log_info("%s: network %s -> %s", strempty(l->info.name),
                         lf->network_id[0] ? lf->network_id : "none", id[0] ? id : "none");
                snprintf(lf->network_id, sizeof(lf->network_id), "%s", id);
                names[n++] = "NetworkId";
        }
        if (!l->info.carrier)
                lf->carrier_lost = true;
        if (id[0] && !streq(id, lf->known_id)) {
                /* a first id: the first probe runs; after a carrier loss, the round the
                 * carrier's return started (a fast one may end before the gateway's MAC is
                 * learned: probing again then was a second round for one network) */
                *ret_other_network = lf->known_id[0] != 0 && !lf->carrier_lost;
                snprintf(lf->known_id, sizeof(lf->known_id), "%s", id);
        }
        if (id[0])
                lf->carrier_lost = false;
        names[n] = NULL;
        if (n > 0)
                link_bus_emit_changed_strv(l, (char **)names);
        return n > 0 ? LINK_CHANGE_IDENTITY : 0;
}

/* ---- the Wi-Fi station ---- */

static int dup_or_null(const char *v, char **ret)
{
        *ret = NULL;
        if (v && !(*ret = strdup(v)))
                return -ENOMEM;
        return 0;
}

/* wpa_supplicant's station of the link, asked through the views (the Core's client, the one
 * reader; NULL: it does not run the link, or Wi-Fi is off), copied into the facts. What
 * differs goes into the sync's one PropertiesChanged. An association's change (another AP or
 * network, connected or not) and a signal's are both LINK_CHANGE_WIFI; the reconciler ignores
 * it (roamd-manager.c): what it uses of a station is the identity's SSID and BSSID, which a
 * roam within the network leaves as they were (gather()). */
static unsigned wifi_update(Link *l)
{
        const LinkViews *w = l->views;
        const WpaStation *st =
            w && w->station && l->info.name ? w->station(l->info.name, w->station_userdata) : NULL;
        static const WpaStation none = {};
        WpaStation *cur = &l->facts.wifi, n = {};
        const char *names[8];
        size_t k = 0;

        if (!st)
                st = &none;
        if (!streq_ptr(cur->wpa_state, st->wpa_state) || !streq_ptr(cur->ssid, st->ssid) ||
            !streq_ptr(cur->bssid, st->bssid) || !streq_ptr(cur->key_mgmt, st->key_mgmt) ||
            cur->freq != st->freq) {
                if (dup_or_null(st->wpa_state, &n.wpa_state) < 0 ||
                    dup_or_null(st->ssid, &n.ssid) < 0 || dup_or_null(st->bssid, &n.bssid) < 0 ||
                    dup_or_null(st->key_mgmt, &n.key_mgmt) < 0) {
                        free(n.wpa_state);
                        free(n.ssid);
                        free(n.bssid);
                        free(n.key_mgmt);
                        log_oom();
                        return 0; /* the fact stays as it was: the next sync tries again */
                }
                free(cur->wpa_state);
                free(cur->ssid);
                free(cur->bssid);
                free(cur->key_mgmt);
                cur->wpa_state = n.wpa_state;
                cur->ssid = n.ssid;
                cur->bssid = n.bssid;
                cur->key_mgmt = n.key_mgmt;
                cur->freq = st->freq;
                names[k++] = "WiFiState";
                names[k++] = "WiFiSSID";
                names[k++] = "WiFiBSSID";
                names[k++] = "WiFiKeyMgmt";
                names[k++] = "WiFiFrequency";
        }
        if (cur->signal_dbm != st->signal_dbm || cur->link_speed != st->link_speed) {
                cur->signal_dbm = st->signal_dbm;
                cur->link_speed = st->link_speed;
                names[k++] = "WiFiSignal";
                names[k++] = "WiFiLinkSpeed";
        }
        names[k] = NULL;
        if (k == 0)
                return 0;
        link_bus_emit_changed_strv(l, (char **)names);
        return LINK_CHANGE_WIFI;
}

/* ---- modem ---- */

static const char *roaming_word(bool modem, bool roaming)
{
        return !modem ? "none" : roaming ? "roaming" : "home";
}

/* The modem clients' registration of the link, asked through the views (links/ includes no
 * feature): a change is LINK_CHANGE_MODEM, which the usage and the app monitor follow. */
static unsigned modem_update(Link *l)
{
        LinkFacts *lf = &l->facts;
        int r = l->views && l->views->roaming && l->info.name
                    ? l->views->roaming(l->info.name, l->views->roaming_userdata)
                    : -ENOENT;
        bool modem = r >= 0, roaming = r > 0;

        if (modem == lf->modem && roaming == lf->roaming)
                return 0;
        log_info("%s: modem registration %s -> %s", strempty(l->info.name),
                 roaming_word(lf->modem, lf->roaming), roaming_word(modem, roaming));
        lf->modem = modem;
        lf->roaming = roaming;
        return LINK_CHANGE_MODEM;
}

unsigned link_facts_update(LinkFactsStage *s, Link *link, const DhcpLeases *leases,
                           bool *ret_other_network)
{
        unsigned mask = modem_update(link) | wifi_update(link);

        *ret_other_network = false;
        if (!leases_equal(&link->facts.leases, leases)) {
                link->facts.leases = *leases;
                mask |= LINK_CHANGE_LEASE;
        }
        return mask | identity_update(s, link, ret_other_network);
}
