/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "roamd-bearer.h"
#include "roamd-config.h"
#include "roamd-dns-source.h"

typedef struct Manager Manager;

typedef enum LinkState {
        LINK_STATE_NO_CARRIER,
        LINK_STATE_NO_ADDRESS,
        LINK_STATE_LINK_LOCAL,
        LINK_STATE_ADDRESSED,
        LINK_STATE_ROUTABLE,
        _LINK_STATE_MAX,
        _LINK_STATE_INVALID = -EINVAL,
} LinkState;

const char *link_state_to_string(LinkState s);
LinkState link_state_from_string(const char *s);

typedef enum AddrScope {
        ADDR_SCOPE_GLOBAL,
        ADDR_SCOPE_SITE,
        ADDR_SCOPE_LINK,
        ADDR_SCOPE_HOST,
        _ADDR_SCOPE_MAX,
        _ADDR_SCOPE_INVALID = -EINVAL,
} AddrScope;

const char *addr_scope_to_string(AddrScope s);
AddrScope addr_scope_from_string(const char *s);

typedef struct LinkAddress {
        IpAddr addr;
        unsigned prefixlen;
        AddrScope scope;
} LinkAddress;

/* Everything roamd knows about a link, as gathered by one sync; compared field by field
 * with the previous one to emit exactly the properties that changed. */
typedef struct LinkInfo {
        char *name;
        char *kind;
        char *driver;
        char *hwaddr;
        char *oper_state;
        unsigned mtu;
        bool admin_up;
        bool carrier;
        LinkAddress *addrs;
        size_t n_addrs;
        IpAddr *gateways; /* text "" for a device route without gateway */
        size_t n_gateways;
        IpAddr *dns;
        size_t n_dns;
        DnsSource dns_source;
        char **domains;
        char *captive_portal_url;
} LinkInfo;

void link_info_done(LinkInfo *i);

typedef struct Link {
        Manager *manager;
        int ifindex;
        char *path;
        Bearer bearer;
        bool bearer_from_config;
        LinkState state;
        LinkInfo info;
        bool seen;      /* marked during a sync; unseen links are gone */
        bool announced; /* InterfacesAdded sent, visible on the bus */
} Link;

int link_new(Manager *m, int ifindex, Link **ret);
Link *link_free(Link *l);

/* Applies a freshly gathered LinkInfo (taking ownership of its contents), reclassifying the
 * bearer when the name changed, and emits PropertiesChanged for what differs. */
int link_update(Link *l, LinkInfo *info, bool force_classify);

/* Re-runs bearer classification (config override first, then sysfs). Returns 1 if changed. */
int link_classify(Link *l);

/* The one place a link's state changes: logs old -> new and emits PropertiesChanged. */
void link_set_state(Link *l, LinkState s);

bool link_is_usable(const Link *l);
