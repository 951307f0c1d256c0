/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roamd-manager.h"

/* Per-link DNS servers, search domains and the captive portal API URL, from the first source
 * (in the configured order) that knows the link: a pin in the config, systemd-resolved or
 * NetworkManager over D-Bus, dhcpcd's lease files, /etc/resolv.conf. File sources are watched
 * with inotify, bus sources through their signals; a change schedules a manager sync. */

int dns_new(Manager *m, Dns **ret);
Dns *dns_free(Dns *d);

/* Re-arms file watches after a reload changed their paths. */
int dns_reconfigure(Dns *d);

/* Asks the bus sources again (their data may change with link configuration). */
void dns_refresh_bus(Dns *d);

int dns_fill(Dns *d, int ifindex, LinkInfo *info);
