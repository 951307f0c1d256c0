/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-config.h"
#include "roamd-link.h"

/* Whether an app's connection from src to dst whose SYN got no answer says something about
 * the way out of a link with these addresses: src is one of the link's global (or site)
 * addresses and dst is off the link (not in one of its prefixes, not loopback, link-local or
 * multicast). A printer that is off on the LAN says nothing about the portal's gate. */
/* How long after the last round stalled connections started on a link the next may start:
 * none before the first (rounds 0), then min, doubling with every round that found the link
 * still online (a false alarm: a lossy link, a dead server, an app roamd's policy drops),
 * up to the re-check interval (never less than min): a link whose apps keep failing costs no
 * more rounds than its re-checks (a metered link pays for every round). */
uint64_t stall_wait_usec(uint64_t min, uint64_t recheck, unsigned rounds);

bool stall_off_link(const LinkAddress *addrs, size_t n, const IpAddr *src, const IpAddr *dst);

/* Whether an answer for the check host points where no check server can be: a private
 * (RFC 1918, RFC 6598 shared, ULA), link-local, loopback or unspecified address, or one in a
 * prefix of the link itself (a portal's DNS sends every name to its router). */
bool stall_dns_private(const LinkAddress *addrs, size_t n, const IpAddr *a);
