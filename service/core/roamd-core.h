/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

typedef struct Config Config;
typedef struct Links Links;
typedef struct Reconcile Reconcile;
typedef struct CurlGlue CurlGlue;
typedef struct Netlink Netlink;
typedef struct Wpa Wpa;
typedef struct MMClient MMClient;
typedef struct OfonoClient OfonoClient;

/* What every feature may use: the loop, the bus, the configuration, the links registry, the
 * reconciler and the curl glue. The manager (the composition root) owns it and hands a
 * pointer to each feature at construction; a feature never sees the manager. Only types are
 * declared here: a feature includes the headers of the parts it calls. */
typedef struct Core {
        sd_event *event;
        sd_bus *bus; /* NULL before the manager connects */
        /* Replaced by a reload: read it through the Core each time, never keep it. */
        Config *config;
        bool initial_netns;

        Links *links;         /* the link table, best link and global state */
        Reconcile *reconcile; /* passes over kernel state */
        CurlGlue *curl;
        Netlink *netlink; /* the kernel's links, addresses and routes */
        Wpa *wpa;         /* wpa_supplicant's interfaces; NULL with [WiFi] Enable=no */
        /* The one ModemManager and the one oFono client (roaming, NITZ, the network's zone),
         * made by the composition root before the features that use them (usage, time zone,
         * time feed) and freed after them; NULL without a bus. */
        MMClient *mm;
        OfonoClient *ofono;
        /* The apps' slots and their routing tables exist: probes of a VPN carry its mark. */
        bool apps_enforced;

        sd_event_source *trim_source; /* malloc_trim() once the loop is idle */
} Core;

/* Free heap pages go back to the kernel when the loop is next idle (c->trim_source, made by
 * core_trim_setup(), unreferenced by the owner of the Core). */
int core_trim_setup(Core *c);
void core_schedule_trim(Core *c);

/* PropertiesChanged of org.roam1.Manager for these names (NULL-terminated): a feature whose
 * share of the manager's properties changed says so here, not to the manager. */
void core_emit_manager_changed(Core *c, const char *first, ...);
