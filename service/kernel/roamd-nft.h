/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* roamd's nftables engine: table `inet roam`, built with libnftnl and sent over libmnl, one
 * nfnetlink transaction per change. See docs/apps.md for the ruleset's shape.
 *
 * Apps are grouped into classes (one regular chain per distinct effective policy). A verdict map
 * per cgroup level (`socket cgroupv2 level N` -> jump class chain, with a counter per element)
 * sends every packet of every socket to its class: the per-packet cost is one lookup per level in
 * use, whatever the number of apps. */

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "roamd-nft-mark.h"

#define NFT_TABLE_NAME     "roam"
#define NFT_LEVEL_MAX      32
#define NFT_CLASS_NAME_MAX 32
/* A synchronous dump (GETRULE) waits this long for the kernel at most (socket_bound_recv). */
#define NFT_DUMP_WAIT_USEC (2 * USEC_PER_SEC)

typedef struct NftEngine NftEngine;
typedef struct NftTxn NftTxn;

typedef enum NftClassKind {
        NFT_CLASS_ACCEPT, /* everything, routed by the main table (the system policy) */
        NFT_CLASS_REJECT, /* nothing but loopback: TCP reset, ICMP admin-prohibited */
        NFT_CLASS_LAN,    /* only destinations in the lan sets, routed by the main table */
        NFT_CLASS_ROUTE,  /* allowed, marked for a per-link routing table */
        _NFT_CLASS_KIND_MAX,
        _NFT_CLASS_KIND_INVALID = -22,
} NftClassKind;

typedef struct NftFamilyRoute {
        /* the routing slot new flows take (0: none) and its link: packets the main table
         * already sends out of that link are only recorded in conntrack, not marked, so
         * the kernel does not route them a second time */
        uint32_t slot, slot_oif;
        /* not restricted: mark only packets the main table sends out of this link (LAN or
         * device-bound traffic keeps main's route) */
        uint32_t main_oif;
        /* main_oif is not the slot's link (traffic steered off a link that is not online):
         * packets to the lan sets (that link's LAN) keep main's route */
        bool keep_lan;
        /* mark every packet (bearer subset); slot 0 then rejects */
        bool restricted;
        /* also move packets the main table sends into a VPN (vpn=forbidden); slot 0: reject */
        bool around_vpn;
} NftFamilyRoute;

typedef struct NftClass {
        NftClassKind kind;
        bool sticky;           /* restore the mark of existing flows from conntrack */
        bool vpn_required;     /* ROUTE, LAN: every (LAN: every local) packet to the VPN slot;
                                * fam[f].slot != 0 when the VPN carries family f, else that
                                * family is rejected */
        NftFamilyRoute fam[2]; /* [0] IPv4, [1] IPv6 */
        /* DNS over loopback (a local stub or forwarder: systemd-resolved, dnsmasq) is refused:
         * the forwarder would carry the query out by a way the class does not allow. */
        bool local_dns_refused;
        /* Loopback other than DNS (the host's own addresses too: that traffic leaves on lo)
         * is refused; otherwise it always passes. The portal-login app's. */
        bool loopback_refused;
} NftClass;

typedef struct NftPrefix {
        int family;
        union {
                struct in_addr in;
                struct in6_addr in6;
        } addr;
        unsigned prefixlen;
} NftPrefix;

typedef struct NftConfig {
        uint32_t mark_mask; /* contiguous bits of the packet mark roamd owns */
} NftConfig;

int nft_engine_new(const NftConfig *cfg, NftEngine **ret);
NftEngine *nft_engine_free(NftEngine *e);
/* When a commit got no answer in time (-ETIMEDOUT), roamd assumes neither outcome: the next
 * nft_txn_new() reads the ruleset's generation again and, when it moved, calls resync (which
 * replaces the whole table with what roamd wants, in one transaction of its own) first; its
 * failure fails nft_txn_new(). */
typedef int (*nft_resync_t)(void *userdata);
void nft_engine_set_resync(NftEngine *e, nft_resync_t resync, void *userdata);
uint32_t nft_engine_mask(NftEngine *e);

int nft_txn_new(NftEngine *e, NftTxn **ret);
NftTxn *nft_txn_free(NftTxn *t);
static inline void nft_txn_freep(NftTxn **t)
{
        nft_txn_free(*t);
}
/* Sends the transaction and waits for the kernel's answer: 0, or the first error (the kernel
 * then applied nothing). Empty transactions are not sent. For start, exit and tools: on the
 * running loop use nft_txn_commit_async(). */
int nft_txn_commit(NftTxn *t);
/* The outcome of an asynchronous commit: what nft_txn_commit() would have returned. */
typedef void (*nft_commit_done_t)(NftTxn *t, int result, void *userdata);
/* Sends the transaction and returns at once: 1 when sent (done is called from the loop with
 * the outcome, once the kernel answered or after 5 s without answer), 0 when there was
 * nothing to send, or a negative errno (nothing sent; done is not called). -EBUSY: another
 * asynchronous commit of this engine awaits its answer (one at a time). Freeing t before
 * done cancels the wait; the kernel's outcome is then unknown, and the next nft_txn_new()
 * settles it by the ruleset's generation. */
int nft_txn_commit_async(NftTxn *t, sd_event *event, nft_commit_done_t done, void *userdata);
/* Whether an asynchronous commit awaits its answer. */
bool nft_engine_busy(NftEngine *e);
/* The asynchronous commit's answer, when the socket holds it (nfnetlink answers inside
 * sendmsg(), so it does unless lost or held by a test), is told now, its done called before
 * this returns. For an owner whose next step must not interleave with that commit's outcome.
 * Returns whether it was told. */
bool nft_engine_settle(NftEngine *e);
size_t nft_txn_size(NftTxn *t);

/* Replaces table inet roam as a whole (add, delete, add: one transaction, no unfiltered
 * moment): fixed sets and chains, no classes, no levels. Call first at start. */
int nft_txn_replace_table(NftTxn *t);
/* Creates (exists=false) or rewrites (exists=true) a class chain. */
int nft_txn_put_class(NftTxn *t, const char *name, const NftClass *c, bool exists);
int nft_txn_del_class(NftTxn *t, const char *name);
/* The levels with a map: creates/deletes maps and rewrites the output chain (deepest first). */
int nft_txn_set_levels(NftTxn *t, const bool levels[NFT_LEVEL_MAX]);
int nft_txn_elem(NftTxn *t, unsigned level, uint64_t cgroup_id, const char *class_name, bool add);
/* Replaces the contents of set lan4 (family AF_INET) or lan6. */
int nft_txn_set_lan(NftTxn *t, int family, const NftPrefix *p, size_t n);
int nft_txn_set_vpn_ifaces(NftTxn *t, const uint32_t *ifindex, size_t n);
/* The link slots in use (slot_oif[s]: the slot's link, 0 when free): restore map elements and
 * their chains. */
int nft_txn_set_slots(NftTxn *t, const uint32_t *slot_oif, size_t n_slots);
/* DNS of vpn=required apps goes to these servers (NULL: left alone). */
int nft_txn_set_vpn_dns(NftTxn *t, const struct in_addr *v4, const struct in6_addr *v6);

/* For modules that add objects of their own to table inet roam (roamd-nft-stats.c): starts
 * one message (family inet) of the transaction; build its payload, then nft_txn_msg_end(). */
struct nlmsghdr;
struct nlmsghdr *nft_txn_msg(NftTxn *t, uint16_t type, uint16_t flags);
void nft_txn_msg_end(NftTxn *t);

/* Building blocks for modules with tables of their own (roamd-nft-stats.c): a rule of family
 * inet in table/chain; queued into t (freed; error: what building it returned, a failed build
 * is dropped, -ENOMEM); expressions with explicit registers, each 0 or -ENOMEM. */
struct nftnl_rule;
struct nftnl_expr;
struct nftnl_rule *nft_rule_new_in(const char *table, const char *chain);
int nft_txn_add_rule(NftTxn *t, struct nftnl_rule *r, int error);
/* A chain of table inet roam: type NFT_MSG_NEWCHAIN (created, an error if it exists) or
 * NFT_MSG_DELCHAIN; with ctype (e.g. "filter") a base chain on hook at prio, policy accept. */
int nft_txn_chain(NftTxn *t, uint16_t type, const char *name, const char *ctype, int hook,
                  int prio);
/* A new set (vmap: a verdict map) of table inet roam; size 0: no size hint; counter: each
 * element with a counter. Keys other than addresses are in host byte order. */
int nft_txn_new_set(NftTxn *t, const char *name, uint32_t key_type, uint32_t key_len,
                    uint32_t flags, uint32_t size, bool vmap, bool counter);
int nft_rule_add_expr(struct nftnl_rule *r, struct nftnl_expr *e); /* e NULL: -ENOMEM */
int nft_expr_meta(struct nftnl_rule *r, uint32_t key, uint32_t dreg);
int nft_expr_imm(struct nftnl_rule *r, uint32_t dreg, const void *data, uint32_t len);
int nft_expr_verdict(struct nftnl_rule *r, int verdict);
int nft_expr_cmp(struct nftnl_rule *r, uint32_t sreg, uint32_t op, const void *data, uint32_t len);
int nft_expr_cmp_eq(struct nftnl_rule *r, uint32_t sreg, const void *data, uint32_t len);
int nft_expr_cmp_eq_u32(struct nftnl_rule *r, uint32_t sreg, uint32_t v);
int nft_expr_ct_load(struct nftnl_rule *r, uint32_t key); /* into register 1 */
int nft_expr_reject(struct nftnl_rule *r, uint32_t type, uint8_t code);
int nft_expr_jump(struct nftnl_rule *r, const char *chain);
/* the socket's cgroup v2 ancestor id at `level` */
int nft_expr_socket_cgroup(struct nftnl_rule *r, uint32_t level, uint32_t dreg);
int nft_expr_and_u32(struct nftnl_rule *r, uint32_t reg, uint32_t mask); /* reg &= mask */
int nft_expr_and(struct nftnl_rule *r, uint32_t reg, const void *mask, uint32_t len); /* <= 16 */
int nft_expr_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len,
                     uint32_t dreg);
/* through register 1: meta nfproto is family's (AF_INET or AF_INET6) */
int nft_expr_nfproto(struct nftnl_rule *r, int family);
int nft_expr_counter(struct nftnl_rule *r);
/* the verdict map's element for the key in register 1 */
int nft_expr_lookup_vmap(struct nftnl_rule *r, const char *map);
int nft_expr_lookup_in(struct nftnl_rule *r, uint32_t sreg, const char *set);
int nft_expr_lookup_not_in(struct nftnl_rule *r, uint32_t sreg, const char *set);
