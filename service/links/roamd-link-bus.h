/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "roamd-link.h"

/* org.roam1.Link's properties; found and enumerated by the registry (roamd-links-bus.c), its
 * Reprobe method is the prober's (roamd-probe-bus.c). */
extern const sd_bus_vtable link_vtable[];

/* No-ops until the link is announced, so a link's first sync emits nothing but
 * InterfacesAdded. */
void link_bus_emit_changed(Link *l, const char *first, ...);
void link_bus_emit_changed_strv(Link *l, char **names);
/* One PropertiesChanged per link per sync (docs/ARCHITECTURE.md): between hold and release
 * the changed names are collected, the release sends them in one signal. Holds nest. */
void link_bus_hold(Link *l);
void link_bus_release(Link *l);
int link_bus_announce(Link *l);
int link_bus_withdraw(Link *l);
