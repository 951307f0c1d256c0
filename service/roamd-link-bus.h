/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

#include "roamd-link.h"

extern const sd_bus_vtable link_vtable[];

int link_bus_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                  void **found, sd_bus_error *error);
int link_bus_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                       sd_bus_error *error);

/* No-ops until the link is announced, so a link's first sync emits nothing but
 * InterfacesAdded. */
void link_bus_emit_changed(Link *l, const char *first, ...);
void link_bus_emit_changed_strv(Link *l, char **names);
int link_bus_announce(Link *l);
int link_bus_withdraw(Link *l);
