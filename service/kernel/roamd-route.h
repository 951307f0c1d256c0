/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Policy routing for apps (libnl-route): every usable link gets a slot, a routing table
 * (table base + slot) holding copies of the main table's routes through it, and two ip rules:
 * "fwmark slot/mask lookup T" and, one priority later, "fwmark slot/mask prohibit", so a
 * marked packet never falls through to the main table. The VPN slot (all mask bits set)
 * has the same pair, permanently, with a default route into the best VPN link. roamd's rules
 * carry protocol 82, so a later roamd can tell them from other programs' rules. */

#include <stdbool.h>
#include <stdint.h>

struct nl_cache;

#include "roamd-nft.h"

typedef struct Manager Manager;
typedef struct RouteTables RouteTables;

typedef struct RouteConfig {
        uint32_t mark_mask;
        uint32_t table_base;    /* tables table_base + 1 ... table_base + slot_vpn */
        uint32_t rule_priority; /* lookups at this priority, prohibits at +1 */
} RouteConfig;

typedef struct RouteLinkInput {
        int ifindex;
        bool usable;
        bool vpn;
        bool global4, global6; /* has a global or site address of that family */
} RouteLinkInput;

int route_tables_new(const RouteConfig *cfg, struct nl_cache *routes, RouteTables **ret);
/* Leaves tables and rules in place: the nftables table stays too, and marked flows keep a
 * path (or none) rather than falling back to main. */
RouteTables *route_tables_free(RouteTables *rt);

/* Recomputes slots, table contents and rules from the main table and installs what is new
 * (a failed add is retried by the next sync). Nothing is removed here: see prune. A slot is
 * handed out (route_tables_slot, route_tables_slots) only once all its rules are installed. */
int route_tables_sync(RouteTables *rt, const RouteLinkInput *links, size_t n);
/* Removes the routes and rules the last sync no longer wants: call it after nftables stopped
 * marking packets for them. A freed slot keeps its prohibit rules, so flows that still carry
 * its mark are refused, never routed by the main table. */
int route_tables_prune(RouteTables *rt);

uint32_t route_tables_slot(RouteTables *rt, int ifindex); /* 0: none */
int route_tables_vpn_link(RouteTables *rt);               /* ifindex of the VPN in use, 0 */
/* The main table's default route per family: the link and its metric. */
int route_tables_main_default(RouteTables *rt, int family); /* ifindex or 0 */
uint32_t route_tables_default_metric(RouteTables *rt, int ifindex,
                                     int family); /* UINT32_MAX: none */
bool route_tables_vpn_carries(RouteTables *rt, int family);
/* The link (ifindex) of every slot, 0 for free ones. */
const uint32_t *route_tables_slots(RouteTables *rt, size_t *n);
/* The main table's on-link prefixes (routes without a gateway) of links that are not VPNs:
 * the local networks. */
const NftPrefix *route_tables_onlink(RouteTables *rt, size_t *n);
