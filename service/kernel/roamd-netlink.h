/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-event.h>

#include "roamd-link-info.h"

/* rtnetlink through libnl-route caches with change notifications on sd-event. A change only
 * calls the changed callback (a sync is scheduled); the sync reads the caches. */

typedef struct Netlink Netlink;
struct nl_cache;

int netlink_new(sd_event *event, LinkChangedFn changed, void *userdata, Netlink **ret);
Netlink *netlink_free(Netlink *n);

/* Fills each known link's LinkInfo from the caches: calls fn for each non-loopback link. */
typedef int (*NetlinkLinkFn)(void *userdata, int ifindex, LinkInfo *info);
int netlink_collect(Netlink *n, NetlinkLinkFn fn, void *userdata);
/* A number that changes whenever a route of any table changed (the caches' notifications). */
unsigned long netlink_routes_generation(Netlink *n);

/* Whether addr (in_addr / in6_addr of family) is this machine's: a local or broadcast route
 * of the kernel's local table covers it, or a link has it. */
/* userdata: the Netlink (a CurlIsLocalFn). */
bool netlink_address_is_local(int family, const void *addr, void *userdata);
/* Whether roamd runs in the initial network namespace (outside it, veths and macvlans may be
 * the uplinks). */
bool netns_is_initial(void);
/* The route cache (every table), for the policy routing mirror. */
struct nl_cache *netlink_route_cache(Netlink *n);
/* The link-layer address of neighbour addr on ifindex ("02:00:..", lowercase) when the
 * neighbour table knows it; -ENOENT when not (yet). */
int netlink_neigh_lladdr(Netlink *n, int ifindex, const IpAddr *addr, char *buf, size_t size);
