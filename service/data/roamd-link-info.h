/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the kernel adapters (netlink, ndopt, dns, wpa) gather about a link for the registry's
 * sync, and how they say that it changed: the data types below the links layer, so that an
 * adapter includes nothing above itself. */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "roamd-config.h"
#include "roamd-dns-source.h"

/* A kernel adapter says that something a sync reads changed; it is given this callback and
 * its userdata (the links registry) at construction. */
typedef void (*LinkChangedFn)(void *userdata);

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
        /* NTP servers of the link's dhcpcd leases (addresses or host names), whatever source
         * gives the DNS servers; NULL: none. */
        char **ntp_servers;
} LinkInfo;

void link_info_done(LinkInfo *i);
