/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <netinet/in.h>
#include <stddef.h>

/* RFC 7050 NAT64 prefix discovery: the AAAA answers a DNS64 gives for ipv4only.arpa (whose
 * only A records are the well-known 192.0.0.170 and 192.0.0.171) carry the network's NAT64
 * prefix; where the well-known address sits in an answer (RFC 6052 2.2) says the prefix's
 * length. The answers come from the network: nothing here trusts them. */

/* "2001:db8:122:344::/64": at most 39 characters of address, "/", 2 digits. */
#define NAT64_PREFIX_STRLEN (INET6_ADDRSTRLEN + 4)

typedef struct Nat64Prefix {
        struct in6_addr prefix; /* the bits past plen are zero */
        unsigned plen;          /* 32, 40, 48, 56, 64 or 96 */
} Nat64Prefix;

/* The prefix of one synthesized address: 0 and *ret when a well-known address sits at
 * exactly one of RFC 6052's positions (with the "u" octet, bits 64-71, zero where the
 * format has it); -ENOENT when at none, -EINVAL with *ret_reason when at several (RFC 7050
 * 3: the length is then not known) or when the prefix is one no NAT64 can use (multicast,
 * link-local, loopback, IPv4-mapped). */
int nat64_prefix_from_addr(const struct in6_addr *a, Nat64Prefix *ret, const char **ret_reason);

/* The first prefix found among n answers (RFC 7050 3: a node may use the first one); answers
 * without a prefix are skipped. -ENOENT: none had one; *ret_reason says why the last refused
 * answer was refused (NULL when none was). */
int nat64_prefix_find(const struct in6_addr *addrs, size_t n, Nat64Prefix *ret,
                      const char **ret_reason);

/* "prefix/plen" into buf (NAT64_PREFIX_STRLEN bytes). */
const char *nat64_prefix_to_string(const Nat64Prefix *p, char buf[static NAT64_PREFIX_STRLEN]);
