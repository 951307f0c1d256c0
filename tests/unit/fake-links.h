/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The fake core's links registry and neighbours for code that calls them by name
 * (roamd-portal.c): links_get() and friends over hand-made Link objects, link_reprobe(),
 * the reconciler's reconcile_schedule() and the portal's bus emission counted, no wpa
 * station. They replace roamd-links.c, roamd-link.c, roamd-reconcile.c, roamd-wpa.c and
 * roamd-portal-bus.c at link time in the unit tests that use them. */

#include "roamd-core.h"
#include "roamd-link.h"

typedef struct FakeLinks {
        Link *links[8];
        size_t n;
        unsigned reprobes;    /* link_reprobe() calls */
        unsigned passes;      /* reconcile_schedule() calls */
        unsigned bus_changes; /* portal_bus_emit_changed() calls */
        unsigned watches;     /* watchers registered and not removed */
} FakeLinks;

extern FakeLinks fake_links;

/* A link in the registry: ifindex, name, its verdict (both families) and portal URL. */
void fake_links_add(Link *l, Core *core, int ifindex, const char *name, Verdict v,
                    const char *portal_url);
void fake_links_reset(void);
