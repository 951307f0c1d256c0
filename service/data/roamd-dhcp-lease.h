/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-config.h"

/* What roamd takes from a DHCP lease as dhcpcd stores it (the raw BOOTP reply in
 * IFNAME.lease, the raw DHCPv6 reply in IFNAME.lease6). The file is outside input: every
 * length is checked and anything malformed makes the parse fail. */

#define DHCP_LEASE_MAX_ADDRS   8
#define DHCP_LEASE_MAX_DNS     16
#define DHCP_LEASE_MAX_DOMAINS 8
#define DHCP_LEASE_DOMAIN_MAX  256
#define DHCP_LEASE_URL_MAX     1024
#define DHCP_LEASE_TZ_MAX      256
#define DHCP_LEASE_MAX_NTP     8

typedef struct DhcpLease {
        int family;
        IpAddr addrs[DHCP_LEASE_MAX_ADDRS]; /* yiaddr, or the IA_NA addresses */
        size_t n_addrs;
        IpAddr dns[DHCP_LEASE_MAX_DNS];
        size_t n_dns;
        char domains[DHCP_LEASE_MAX_DOMAINS][DHCP_LEASE_DOMAIN_MAX];
        size_t n_domains;
        /* RFC 8910 captive portal API URL: DHCPv4 option 114, DHCPv6 option 103. */
        char captive_portal[DHCP_LEASE_URL_MAX];
        /* DHCPv4 option 54, the server identifier (family 0 when absent): part of a network's
         * identity (roamd-netid.h). */
        IpAddr server_id;
        /* DHCPv4 option 3: the network has a router. Until the link's gateway route is in
         * place, the network is not known by its router yet (roamd-firewall.c waits). */
        bool has_router;
        /* RFC 4833 time zone of the network, "" when absent or malformed (a bad option is
         * dropped, the lease is kept): the IANA tzdb name (DHCPv4 option 101, DHCPv6 option
         * 42) and the POSIX TZ string (DHCPv4 option 100, DHCPv6 option 41). */
        char tz_name[64];
        char tz_posix[DHCP_LEASE_TZ_MAX];
        /* NTP servers, addresses as text or host names: DHCPv4 option 42 (RFC 2132), DHCPv6
         * option 56's server address and FQDN suboptions (RFC 5908) and option 31 (SNTP, RFC
         * 4075). A malformed option is dropped, the lease kept; multicast addresses are left
         * out (a client is told of servers). */
        char ntp[DHCP_LEASE_MAX_NTP][DHCP_LEASE_DOMAIN_MAX];
        size_t n_ntp;
} DhcpLease;

/* A link's leases now, as the links' facts stage read them (roamd-link-facts.c): [0] DHCPv4,
 * [1] DHCPv6; has[k] false when there is none, or only a stale one (its address is not on the
 * link). */
typedef struct DhcpLeases {
        DhcpLease lease[2];
        bool has[2];
} DhcpLeases;

int dhcp_lease_parse_v4(const uint8_t *buf, size_t len, DhcpLease *ret);
int dhcp_lease_parse_v6(const uint8_t *buf, size_t len, DhcpLease *ret);
