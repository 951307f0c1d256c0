/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the parts of roamd's nftables engine share, not for other modules: roamd-nft.c (the
 * engine, its transactions and the objects they carry), roamd-nft-expr.c (expressions) and
 * roamd-nft-apps.c (what table inet roam holds for the apps). */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "roamd-nft.h"

struct mnl_socket;
struct nftnl_batch;
struct nftnl_expr;
struct nftnl_rule;
struct nftnl_set;

/* nftables' own datatype numbers, so `nft list table inet roam` prints readable types. */
#define NFT_TYPE_IPADDR   7
#define NFT_TYPE_IP6ADDR  8
#define NFT_TYPE_MARK     19
#define NFT_TYPE_IFINDEX  20
#define NFT_TYPE_CGROUPV2 46

#define SLOTS_MAX 128
/* Set elements per message: an IPv6 interval element takes about 40 bytes, so a message stays
 * near 2.5 KiB, far below the batch page's overrun room (MNL_SOCKET_BUFFER_SIZE). */
#define ELEMS_PER_MSG 64

struct NftEngine {
        struct mnl_socket *nl;
        uint32_t portid;
        uint32_t seq;
        uint32_t mask;
        unsigned shift;
        bool levels[NFT_LEVEL_MAX];
        uint32_t slots[SLOTS_MAX]; /* the link of each slot with a restore chain, 0 none */
        /* A commit got no answer in time: the kernel may or may not hold it. Before the next
         * transaction the ruleset's generation is read again; when it moved, resync (the
         * owner's full rebuild) replaces the table with what roamd wants. */
        bool uncertain, resyncing;
        uint32_t genid_sent; /* the generation before the unanswered commit was sent */
        bool genid_known;
        nft_resync_t resync;
        void *resync_userdata;
        /* Answers are read by this source (created with the first asynchronous commit) and
         * handed to the commits awaiting one by sequence number: the asynchronous one (one at a
         * time) and a synchronous one (start, exit, the parts not yet asynchronous). */
        sd_event_source *io;
        NftTxn *inflight, *sync;
};

struct NftTxn {
        NftEngine *engine;
        struct nftnl_batch *batch;
        size_t n_msgs;
        int error; /* the batch could not grow: the transaction is never sent */
        uint32_t first_seq, last_seq;
        /* applied to the engine when the kernel accepted the transaction */
        bool set_levels, set_slots;
        bool levels[NFT_LEVEL_MAX];
        uint32_t slots[SLOTS_MAX];
        /* the commit: sent, then answered (result) from the answers in [first_seq, end_seq]
         * and the generation's (gen_seq, asked for just before) */
        bool sent, answered;
        uint32_t gen_seq, end_seq, error_seq;
        int first_error, result;
        /* asynchronous: the deadline (also tells an answer read by a synchronous commit on a
         * turn of its own), a test's hold, whom to tell */
        sd_event_source *timer, *hold;
        bool held, error_deadline;
        nft_commit_done_t done;
        void *userdata;
};

/* roamd-nft.c: objects of table inet roam, queued into t */
struct nftnl_rule *nft_rule_new(const char *chain);
int nft_txn_flush_chain(NftTxn *t, const char *chain);
struct nftnl_set *nft_set_new(const char *name);
int nft_txn_del_set(NftTxn *t, const char *name);
int nft_txn_elems(NftTxn *t, struct nftnl_set *s, uint16_t type);
int nft_txn_table(NftTxn *t, uint16_t type);

/* roamd-nft-expr.c: expressions on register 1 */
int nft_add_expr(struct nftnl_rule *r, struct nftnl_expr *e);
int nft_e_key(struct nftnl_rule *r, bool ct, uint32_t key, bool set);
#define e_meta_load(r, key) nft_e_key(r, false, key, false)
#define e_meta_set(r, key)  nft_e_key(r, false, key, true)
#define e_ct_load(r, key)   nft_e_key(r, true, key, false)
#define e_ct_set(r, key)    nft_e_key(r, true, key, true)
int nft_e_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len);
int nft_e_cmp_u8(struct nftnl_rule *r, uint32_t op, uint8_t v);
int nft_e_cmp_u32(struct nftnl_rule *r, uint32_t op, uint32_t v);
int nft_e_bitwise(struct nftnl_rule *r, uint32_t mask, uint32_t xor);
int nft_e_lookup(struct nftnl_rule *r, const char *set, bool vmap, bool invert);
int nft_e_verdict(struct nftnl_rule *r, int verdict, const char *chain);
int nft_e_reject(struct nftnl_rule *r, uint32_t type, uint8_t code);
int nft_e_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len);
