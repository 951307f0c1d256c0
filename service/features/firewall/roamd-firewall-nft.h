/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The firewall's objects in table inet roam (docs/firewall.md), built into the reconciler's
 * transactions (NftTxn of roamd-nft.h):
 *
 *   chain fw_input  (filter input, priority 0): loopback, established/related, invalid drop,
 *                   ICMP/ICMPv6 essentials, DHCP/DHCPv6 replies, then
 *                   `iif vmap @fw_in` (ifindex -> jump fwi_IFINDEX), then drop
 *   chain fw_output (filter output, priority 0): established/related, `oif vmap @fw_out`
 *   chain fwi_N / fwo_N: link N's rules from its location, then the location's default
 *
 * Every rule has a counter and its rule id as comment, so `nft list table inet roam` reads like
 * GetFirewallRules and the counters can be read back by id. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-firewall-conf.h"
#include "roamd-nft.h"

#define FW_NFT_ID_MAX 96

typedef struct FwNftRule {
        char id[FW_NFT_ID_MAX];
        FwAction action;
        FwProto proto;
        uint16_t port_min, port_max; /* 0: any */
        int family;                  /* AF_UNSPEC: both */
        bool has_addr;
        NftPrefix addr; /* the remote end: source inbound, destination outbound */
        bool has_local;
        NftPrefix local; /* our end: destination inbound (a multicast group), source outbound */
        bool has_cgroup; /* only packets of sockets in this cgroup (socket cgroupv2) */
        unsigned cgroup_level;
        uint64_t cgroup_id;
} FwNftRule;

/* Base chains and maps; t has just replaced the table (nft_txn_replace_table). */
int fw_nft_install(NftTxn *t);
/* Creates (exists=false) or rewrites link ifindex's chain of direction dir: rules, then the
 * final verdict (final_id names it) for what no rule matched. */
int fw_nft_put_link(NftTxn *t, int ifindex, FwDirection dir, const FwNftRule *rules, size_t n,
                    FwAction final, const char *final_id, bool exists);
/* The map element sending ifindex's packets to its chain (add) or removing it. */
int fw_nft_link_elem(NftTxn *t, int ifindex, FwDirection dir, bool add);
int fw_nft_del_link(NftTxn *t, int ifindex, FwDirection dir);

/* The counters of every firewall rule, summed by chain and id. */
typedef struct FwNftCounter {
        char chain[32];
        char id[FW_NFT_ID_MAX];
        uint64_t packets, bytes;
} FwNftCounter;
int fw_nft_counters(FwNftCounter **ret, size_t *ret_n);
