/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The links' facts stage: in the sync, each input about a link's network is read once, by one
 * owner, and kept in the link (Link.facts) for every feature: dhcpcd's leases (one cache, the
 * stale-lease rule written here once), the gateway's MAC from the netlink neighbour cache, the
 * wpa_supplicant station (Link.WiFi*), a cellular link's modem registration (views.roaming: the
 * Core's ModemManager and oFono clients), and the network identity made of them (Link.NetworkId,
 * docs/firewall.md). A new input is one more read in link_facts_update() and one more
 * LINK_CHANGE_* kind in its answer. */

#include <stdbool.h>

#include "roamd-dhcp-lease.h"
#include "roamd-link-info.h"
#include "roamd-link.h"

typedef struct Core Core;
typedef struct Netlink Netlink;
typedef struct LeaseCache LeaseCache;

typedef struct LinkFactsStage {
        Core *core;         /* its configuration (the lease directory) */
        Netlink *netlink;   /* its neighbour cache, attached with the links' adapters */
        LeaseCache *leases; /* dhcpcd's lease files, read again only after they change */
} LinkFactsStage;

int link_facts_stage_new(Core *core, LinkFactsStage **ret);
LinkFactsStage *link_facts_stage_free(LinkFactsStage *s);

/* How many times a lease file was read and parsed (the bench and tests count them). */
unsigned link_facts_stage_lease_reads(const LinkFactsStage *s);

/* First, before the adapters fill info from them: the link's current leases. A lease counts
 * only while one of its addresses is on the link: dhcpcd keeps the files of old networks, and
 * a stale lease must not describe a new one. */
int link_facts_read_leases(LinkFactsStage *s, const LinkInfo *info, DhcpLeases *ret);

/* Then, once link_update() took the new LinkInfo: the leases go into link->facts and the
 * network identity is made anew (PropertiesChanged NetworkId, NetworkIdentity for what
 * differs). The modem's registration is read again (logged old -> new), and a Wi-Fi link's
 * station (Link.WiFi*, emitted in the sync's PropertiesChanged). Returns the kinds that
 * changed (LINK_CHANGE_LEASE, LINK_CHANGE_IDENTITY, LINK_CHANGE_MODEM, LINK_CHANGE_WIFI);
 * *ret_other_network: the link is on another network under the same addressing (no carrier
 * loss since its last one), which its probes must judge again. */
unsigned link_facts_update(LinkFactsStage *s, Link *link, const DhcpLeases *leases,
                           bool *ret_other_network);
