/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-bus-name.h"
#include "roamd-dns.h"

/* One server or domain a bus source reported, keyed by ifindex (resolved) or name (NM). */
typedef struct DnsBusEntry {
        int ifindex;
        char ifname[64];
        IpAddr server; /* family 0 for a domain entry */
        char domain[256];
} DnsBusEntry;

typedef struct DnsBusSource {
        Dns *dns;
        DnsSource source;
        const char *name, *path, *interface;
        BusNameWatch *owner; /* only while the name has an owner is it asked */
        sd_bus_slot *changed_slot, *call_slot;
        DnsBusEntry *entries;
        size_t n_entries;
        bool pending_again; /* a refresh was asked while a call was in flight */
} DnsBusSource;

struct Dns {
        sd_event *event;
        sd_bus *bus;
        Config *const *config; /* the owner's: a reload replaces *config */
        LinkChangedFn changed;
        void *userdata;
        sd_event_source *inotify_source;
        int lease_wd, resolv_wd, ra_wd; /* ra_wd: dhcpcd_ra_dir, once it exists */
        int inotify_fd;
        char *resolv_dir, *resolv_name;
        IpAddr *resolv_servers;
        size_t n_resolv_servers;
        char **resolv_domains;
        DnsBusSource resolved, nm;
};

static inline void *mfree(void *p)
{
        free(p);
        return NULL;
}
