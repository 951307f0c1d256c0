/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The links registry: the table of links (sorted by ifindex), the sync that rebuilds it from
 * the kernel adapters' caches, the best link and the global state. Whoever needs to know about
 * links subscribes with links_watch_add() and is told, in registration order, with typed
 * events; the adapters below only say "something changed" (links_changed(), their changed
 * callback), which schedules one sync. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-watch.h"
#include "roamd-link.h"

typedef struct Core Core;
typedef struct Netlink Netlink;
typedef struct NdOpt NdOpt;
typedef struct Dns Dns;
typedef struct LinkFactsStage LinkFactsStage;

typedef enum LinksEventType {
        LINKS_EVENT_NEW,      /* a link appeared (already announced on the bus) */
        LINKS_EVENT_CHANGED,  /* a sync changed a link: mask says what */
        LINKS_EVENT_VERDICT,  /* a link's connectivity changed */
        LINKS_EVENT_CAPPORT,  /* a link's RFC 8908 data changed */
        LINKS_EVENT_NETWORK,  /* a link is on another network under the same addressing */
        LINKS_EVENT_GONE,     /* a link went away; freed after the watchers return */
        LINKS_EVENT_BEST,     /* the best link or the global state changed: mask says which */
        LINKS_EVENT_SYNCED,   /* a sync finished: the table is complete and consistent */
        LINKS_EVENT_PROBED,   /* a link's probe round ended (its verdict may be unchanged) */
        LINKS_EVENT_LOCATION, /* the location in force on a link changed (views.identity) */
        _LINKS_EVENT_MAX,
        _LINKS_EVENT_INVALID = -EINVAL,
} LinksEventType;

const char *links_event_type_to_string(LinksEventType t);

/* LINKS_EVENT_CHANGED's mask: LINK_CHANGE_* (roamd-link.h) */

/* LINKS_EVENT_BEST's mask */
enum {
        LINKS_BEST_LINK = 1 << 0,
        LINKS_BEST_STATE = 1 << 1,
};

typedef struct LinksEvent {
        LinksEventType type;
        Link *link;    /* NULL for BEST and SYNCED */
        unsigned mask; /* CHANGED, BEST; SYNCED: every link's kinds together (0 nothing) */
        /* SYNCED: some link's addresses changed; some route (of any table: the links' hold
         * only the default ones) changed; how many links went away */
        bool addresses_changed;
        bool routes_changed;
        size_t n_gone;
} LinksEvent;

typedef struct Links Links;
typedef void (*LinksWatchFn)(Links *links, const LinksEvent *ev, void *userdata);

struct Links {
        Core *core; /* handed to each new Link (its prober reaches the curl glue) */
        sd_event *event;
        /* the adapters a sync reads, attached once they exist */
        Netlink *netlink;
        NdOpt *ndopt;
        Dns *dns;
        /* each input about a link's network, read once per sync (roamd-link-facts.c) */
        LinkFactsStage *facts;
        /* what its links ask above themselves (each link points here): the identity and
         * station hooks are filled in by the manager, the VPN in use by the registry */
        LinkViews views;

        Link **links; /* sorted by ifindex */
        size_t n_links;
        Link *best;
        const char *state; /* global state word */

        /* Run after the watchers of SYNCED, while the links' signals are still held (the
         * manager's: the reconcile pass the sync asked for, so what it puts in force goes out
         * in the same PropertiesChanged); NULL none. */
        void (*after_sync)(void *userdata);
        void *after_sync_userdata;

        sd_event_source *sync_source;
        sd_bus_slot *bus_slot, *probe_bus_slot, *enum_slot; /* org.roam1.Link objects */
        WatchList watches;
        bool addresses_changed;          /* during a sync */
        unsigned sync_mask;              /* during a sync: the kinds that changed, of all links */
        unsigned long routes_generation; /* netlink's, as of the last sync */
};

int links_new(Core *core, sd_event *event, Links **ret);
Links *links_free(Links *l);
void links_attach(Links *l, Netlink *netlink, NdOpt *ndopt, Dns *dns);

/* Returns the watcher's id (> 0), or 0 when out of memory. */
unsigned links_watch_add(Links *l, LinksWatchFn fn, void *userdata, WatchDestroyFn destroy);
void links_watch_remove(Links *l, unsigned id);

/* An adapter's changed callback (userdata: the Links): one sync on the next iteration. */
void links_changed(void *userdata);
void links_schedule_sync(Links *l);
int links_sync(Links *l);
/* The configuration was replaced: each link's bearer override and pinned DNS are read anew
 * (PropertiesChanged of what moved), then a sync. */
void links_reload(Links *l);
/* The reconciler's hold (userdata: the Links): a new link's first probe answer is due. */
bool links_await_first_answer(void *userdata);

Link *links_get(Links *l, int ifindex);
Link *links_get_by_name(Links *l, const char *name);

/* org.roam1.Link objects (userdata: the Links), in roamd-links-bus.c: an announced link by
 * its path, and the paths of all of them. */
int links_bus_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                   void **found, sd_bus_error *error);
int links_bus_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                        sd_bus_error *error);
/* The objects (org.roam1.Link and the prober's Reprobe beside it) and their enumerator. */
int links_bus_setup(Links *l, sd_bus *bus);

/* The firewall put another location in force on the link (what views.identity says). */
void links_link_location_changed(Links *l, Link *link);
