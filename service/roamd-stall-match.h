/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "roamd-config.h"
#include "roamd-link.h"

/* Whether an app's connection from src to dst whose SYN got no answer says something about
 * the way out of a link with these addresses: src is one of the link's global (or site)
 * addresses and dst is off the link (not in one of its prefixes, not loopback, link-local or
 * multicast). A printer that is off on the LAN says nothing about the portal's gate. */
bool stall_off_link(const LinkAddress *addrs, size_t n, const IpAddr *src, const IpAddr *dst);
