/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roamd-dns-internal.h"

/* systemd-resolved (org.freedesktop.resolve1 Manager DNS/Domains) and NetworkManager
 * (DnsManager.Configuration) as DNS sources, followed through NameOwnerChanged and
 * PropertiesChanged. Absent services simply contribute nothing. */

int dns_client_init(Dns *d);
void dns_client_done(Dns *d);
/* Returns 1 if the source knew the link (info filled), 0 if not. */
int dns_client_fill(Dns *d, DnsSource source, int ifindex, LinkInfo *info);
