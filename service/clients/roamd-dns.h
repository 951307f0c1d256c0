/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roamd-config.h"
#include "roamd-dhcp-lease.h"
#include "roamd-link-info.h"

/* Per-link DNS servers, search domains and the captive portal API URL, from the first source
 * (in the configured order) that knows the link: a pin in the config, systemd-resolved or
 * NetworkManager over D-Bus, dhcpcd's lease files, /etc/resolv.conf. File sources are watched
 * with inotify, bus sources through their signals; a change calls the changed callback (which
 * schedules a sync). *config is read at each use: a reload replaces it. */

typedef struct Dns Dns;

int dns_new(sd_event *event, sd_bus *bus, Config *const *config, LinkChangedFn changed,
            void *userdata, Dns **ret);
Dns *dns_free(Dns *d);

/* Re-arms file watches after a reload changed their paths. */
int dns_reconfigure(Dns *d);

/* Asks the bus sources again (their data may change with link configuration). */
void dns_refresh_bus(Dns *d);

/* The link's DNS servers, domains, RFC 8910 URL and NTP servers, from the configured sources;
 * leases: the link's current leases (the links' facts stage read them). */
int dns_fill(Dns *d, int ifindex, LinkInfo *info, const DhcpLeases *leases);
