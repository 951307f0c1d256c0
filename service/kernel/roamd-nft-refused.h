/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Refused connection attempts per link, counted in table inet roam (docs/connectivity.md,
 * "Between re-checks"): chain `refused` (input) adds every inbound TCP reset that answers a
 * SYN (flags RST|ACK, sequence number 0, as RFC 9293 3.10.7.1 makes such a reset) from
 * outside the LAN sets, not on loopback, to the dynamic set `refused` (IPv4; `refused6`:
 * IPv6), keyed by the incoming interface, each element with a counter. A portal whose session ran
 * out often answers apps' connections this way; a reset of an established connection (sequence not
 * 0) is not counted. */

/* The signs wake roamd instead of being polled: the reset rule logs its packets to NFLOG group
 * NFT_SIGN_LOG_GROUP (a few a second at most), and so does chain `synwatch` (output) for an
 * outgoing SYN sent again from the same port within 5 s (set `synseen`: every SYN's source
 * port, for 5 s), i.e. a connection attempt unanswered for a second, TCP's first
 * retransmission. roamd then looks at the sockets and the counts (roamd-stall.c). */
#define NFT_SIGN_LOG_GROUP 7266

#include <stddef.h>
#include <stdint.h>

typedef struct NftTxn NftTxn;
typedef struct NftRefused NftRefused;

typedef struct NftRefusedCount {
        uint32_t ifindex;
        int family; /* AF_INET (set `refused`), AF_INET6 (set `refused6`) */
        uint64_t packets;
} NftRefusedCount;

/* The sets and the chains, into a transaction that replaced the table. */
int nft_refused_install(NftTxn *t);

int nft_refused_new(NftRefused **ret);
NftRefused *nft_refused_free(NftRefused *r);
/* One dump of each set: a count per link and family that was ever refused since the table was made
 * (-ENOENT: no table or set, e.g. [Apps] Enforce=no). */
int nft_refused_read(NftRefused *r, NftRefusedCount **ret, size_t *ret_n);
