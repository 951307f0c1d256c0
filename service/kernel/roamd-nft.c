/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/batch.h>
#include <libnftnl/chain.h>
#include <libnftnl/common.h>
#include <libnftnl/expr.h>
#include <libnftnl/gen.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <inttypes.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-fault.h"
#include "roamd-nft.h"

/* nftables' own datatype numbers, so `nft list table inet roam` prints readable types. */
#define NFT_TYPE_IPADDR   7
#define NFT_TYPE_IP6ADDR  8
#define NFT_TYPE_MARK     19
#define NFT_TYPE_IFINDEX  20
#define NFT_TYPE_CGROUPV2 46

#define SLOTS_MAX 128
/* The generation's answer comes at once; a silent kernel must not hold roamd. */
#define NFT_GENID_TIMEOUT_MS 5000
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
};

int nft_engine_new(const NftConfig *cfg, NftEngine **ret)
{
        NftEngine *e;
        int r, bufsz = 4 * 1024 * 1024;

        r = nft_mark_mask_valid(cfg->mark_mask);
        if (r < 0)
                return log_error_errno(-r, "Invalid firewall mark mask 0x%08x", cfg->mark_mask);

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->mask = cfg->mark_mask;
        e->shift = __builtin_ctz(cfg->mark_mask);
        e->seq = (uint32_t)time(NULL);
        e->nl = mnl_socket_open(NETLINK_NETFILTER);
        if (!e->nl) {
                r = negative_errno();
                free(e);
                return log_error_errno(-r, "Failed to open nfnetlink socket: %m");
        }
        if (mnl_socket_bind(e->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                r = negative_errno();
                nft_engine_free(e);
                return log_error_errno(-r, "Failed to bind nfnetlink socket: %m");
        }
        /* Errors of a large transaction arrive together; a big buffer keeps them. */
        if (setsockopt(mnl_socket_get_fd(e->nl), SOL_SOCKET, SO_RCVBUFFORCE, &bufsz,
                       sizeof(bufsz)) < 0)
                (void)setsockopt(mnl_socket_get_fd(e->nl), SOL_SOCKET, SO_RCVBUF, &bufsz,
                                 sizeof(bufsz));
        e->portid = mnl_socket_get_portid(e->nl);
        *ret = e;
        return 0;
}

NftEngine *nft_engine_free(NftEngine *e)
{
        if (!e)
                return NULL;
        /* The table stays: roamd exiting must not open the firewall. */
        if (e->nl)
                mnl_socket_close(e->nl);
        free(e);
        return NULL;
}

uint32_t nft_engine_mask(NftEngine *e)
{
        return e->mask;
}

void nft_engine_set_resync(NftEngine *e, nft_resync_t resync, void *userdata)
{
        e->resync = resync;
        e->resync_userdata = userdata;
}

static int on_gen(const struct nlmsghdr *nlh, void *data)
{
        struct nftnl_gen *gen = nftnl_gen_alloc();
        int r = MNL_CB_ERROR;

        if (!gen)
                return MNL_CB_ERROR;
        if (nftnl_gen_nlmsg_parse(nlh, gen) >= 0 && nftnl_gen_is_set(gen, NFTNL_GEN_ID)) {
                *(uint32_t *)data = nftnl_gen_get_u32(gen, NFTNL_GEN_ID);
                r = MNL_CB_STOP;
        }
        nftnl_gen_free(gen);
        return r;
}

/* The ruleset's generation (it moves with every committed transaction, anyone's). Answers
 * to earlier requests that arrive late are skipped by their sequence number. */
static int read_genid(NftEngine *e, uint32_t *ret)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh;
        uint32_t seq = e->seq++;
        int left_ms = NFT_GENID_TIMEOUT_MS;

        nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETGEN, AF_UNSPEC, 0, seq);
        if (mnl_socket_sendto(e->nl, nlh, nlh->nlmsg_len) < 0)
                return -errno;
        for (;;) {
                struct pollfd pfd = {.fd = mnl_socket_get_fd(e->nl), .events = POLLIN};
                ssize_t n;
                int len, r;

                r = poll(&pfd, 1, left_ms);
                if (r < 0 && errno == EINTR)
                        continue;
                if (r < 0)
                        return -errno;
                if (r == 0)
                        return -ETIMEDOUT;
                left_ms = 100; /* what remains of an answer comes at once */
                n = mnl_socket_recvfrom(e->nl, buf, sizeof(buf));
                if (n < 0)
                        return -errno;
                len = (int)n;
                for (nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
                     nlh = mnl_nlmsg_next(nlh, &len)) {
                        if (nlh->nlmsg_seq != seq)
                                continue;
                        if (nlh->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *err = mnl_nlmsg_get_payload(nlh);
                                return err->error < 0 ? err->error : -EPROTO;
                        }
                        if (on_gen(nlh, ret) == MNL_CB_STOP)
                                return 0;
                }
        }
}

/* After an unanswered commit: re-reads the generation, and when it moved (that commit, or
 * anyone's) has the owner rebuild the whole table from its model in one transaction. */
static int engine_settle(NftEngine *e)
{
        uint32_t genid;
        int r;

        if (!e->uncertain || e->resyncing)
                return 0;
        r = read_genid(e, &genid);
        if (r < 0)
                return log_warning_errno(-r, "Cannot read the nftables generation after an "
                                             "unanswered commit: %m");
        if (e->genid_known && genid == e->genid_sent) {
                log_notice("nftables generation unchanged (%" PRIu32 "): the unanswered commit "
                           "was not applied.",
                           genid);
                e->uncertain = false;
                return 0;
        }
        log_notice("nftables generation %" PRIu32 " -> %" PRIu32 " since the unanswered commit: "
                   "rebuilding table inet roam from what roamd wants.",
                   e->genid_sent, genid);
        if (!e->resync)
                return -ESTALE;
        e->resyncing = true;
        r = e->resync(e->resync_userdata);
        e->resyncing = false;
        if (r < 0)
                return log_warning_errno(-r, "Cannot rebuild table inet roam: %m");
        e->uncertain = false;
        return 0;
}

static void txn_next(NftTxn *t);

int nft_txn_new(NftEngine *e, NftTxn **ret)
{
        NftTxn *t;
        int r;

        /* Nothing is built on a state roamd does not know. */
        r = engine_settle(e);
        if (r < 0)
                return r;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->engine = e;
        t->batch = nftnl_batch_alloc(MNL_SOCKET_BUFFER_SIZE, MNL_SOCKET_BUFFER_SIZE);
        if (!t->batch) {
                free(t);
                return -ENOMEM;
        }
        t->first_seq = e->seq;
        nftnl_batch_begin(nftnl_batch_buffer(t->batch), e->seq++);
        txn_next(t);
        memcpy(t->levels, e->levels, sizeof(t->levels));
        memcpy(t->slots, e->slots, sizeof(t->slots));
        *ret = t;
        return 0;
}

NftTxn *nft_txn_free(NftTxn *t)
{
        if (!t)
                return NULL;
        if (t->batch)
                nftnl_batch_free(t->batch);
        free(t);
        return NULL;
}

size_t nft_txn_size(NftTxn *t)
{
        return t->n_msgs;
}

/* Starts one message in the batch. Only the last message asks for an ACK (set at commit):
 * the kernel reports errors of any message anyway, and one ACK tells the transaction ended. */
static struct nlmsghdr *txn_msg(NftTxn *t, uint16_t type, uint16_t flags)
{
        struct nlmsghdr *nlh;

        t->last_seq = t->engine->seq;
        nlh = nftnl_nlmsg_build_hdr(nftnl_batch_buffer(t->batch), type, NFPROTO_INET, flags,
                                    t->engine->seq++);
        t->n_msgs++;
        return nlh;
}

/* Ends a message: the batch moves to a new page when this one is full. Every message stays
 * well below the page's overrun room (element lists are split, ELEMS_PER_MSG). */
static void txn_next(NftTxn *t)
{
        if (nftnl_batch_update(t->batch) < 0 && t->error == 0)
                t->error = -ENOMEM;
}

struct nlmsghdr *nft_txn_msg(NftTxn *t, uint16_t type, uint16_t flags)
{
        return txn_msg(t, type, flags);
}

void nft_txn_msg_end(NftTxn *t)
{
        txn_next(t);
}

/* ---- expression helpers ---- */

static int add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
        if (!e)
                return -ENOMEM;
        nftnl_rule_add_expr(r, e);
        return 0;
}

/* meta or ct key: loaded into register 1, or set from it */
static int e_key(struct nftnl_rule *r, bool ct, uint32_t key, bool set)
{
        struct nftnl_expr *e = nftnl_expr_alloc(ct ? "ct" : "meta");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, ct ? NFTNL_EXPR_CT_KEY : NFTNL_EXPR_META_KEY, key);
        if (ct)
                nftnl_expr_set_u32(e, set ? NFTNL_EXPR_CT_SREG : NFTNL_EXPR_CT_DREG, NFT_REG_1);
        else
                nftnl_expr_set_u32(e, set ? NFTNL_EXPR_META_SREG : NFTNL_EXPR_META_DREG, NFT_REG_1);
        return add_expr(r, e);
}

#define e_meta_load(r, key) e_key(r, false, key, false)
#define e_meta_set(r, key)  e_key(r, false, key, true)
#define e_ct_load(r, key)   e_key(r, true, key, false)
#define e_ct_set(r, key)    e_key(r, true, key, true)

static int e_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
        return nft_expr_cmp(r, NFT_REG_1, op, data, len);
}

static int e_cmp_u8(struct nftnl_rule *r, uint32_t op, uint8_t v)
{
        return e_cmp(r, op, &v, sizeof(v));
}

static int e_cmp_u32(struct nftnl_rule *r, uint32_t op, uint32_t v)
{
        return e_cmp(r, op, &v, sizeof(v));
}

/* reg1 = (reg1 & mask) ^ xor, 4 bytes */
static int e_bitwise(struct nftnl_rule *r, uint32_t mask, uint32_t xor)
{
        struct nftnl_expr *e = nftnl_expr_alloc("bitwise");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, sizeof(uint32_t));
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, &mask, sizeof(mask));
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, &xor, sizeof(xor));
        return add_expr(r, e);
}

static int e_lookup(struct nftnl_rule *r, const char *set, bool vmap, bool invert)
{
        struct nftnl_expr *e = nftnl_expr_alloc("lookup");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
        nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
        if (vmap)
                nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_DREG, NFT_REG_VERDICT);
        if (invert)
                nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
        return add_expr(r, e);
}

static int e_verdict(struct nftnl_rule *r, int verdict, const char *chain)
{
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, verdict);
        if (chain)
                nftnl_expr_set_str(e, NFTNL_EXPR_IMM_CHAIN, chain);
        return add_expr(r, e);
}

static int e_reject(struct nftnl_rule *r, uint32_t type, uint8_t code)
{
        struct nftnl_expr *e = nftnl_expr_alloc("reject");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_REJECT_TYPE, type);
        nftnl_expr_set_u8(e, NFTNL_EXPR_REJECT_CODE, code);
        return add_expr(r, e);
}

static int e_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len)
{
        return nft_expr_payload(r, base, offset, len, NFT_REG_1);
}

/* ---- objects ---- */

static struct nftnl_rule *rule_new(const char *chain)
{
        struct nftnl_rule *r = nftnl_rule_alloc();
        if (!r)
                return NULL;
        nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
        nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
        nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
        return r;
}

/* Queues rule r (freed here); error: what building it returned, so a failed build is
 * dropped instead of sent. */
static int txn_add_rule(NftTxn *t, struct nftnl_rule *r, int error)
{
        struct nlmsghdr *nlh;

        if (!r || error < 0) {
                nftnl_rule_free(r);
                return -ENOMEM;
        }
        nlh = txn_msg(t, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND);
        nftnl_rule_nlmsg_build_payload(nlh, r);
        nftnl_rule_free(r);
        txn_next(t);
        return 0;
}

static int txn_flush_chain(NftTxn *t, const char *chain)
{
        struct nftnl_rule *r = rule_new(chain);
        struct nlmsghdr *nlh;

        if (!r)
                return -ENOMEM;
        nlh = txn_msg(t, NFT_MSG_DELRULE, 0);
        nftnl_rule_nlmsg_build_payload(nlh, r);
        nftnl_rule_free(r);
        txn_next(t);
        return 0;
}

int nft_txn_chain(NftTxn *t, uint16_t type, const char *name, const char *ctype, int hook, int prio)
{
        struct nftnl_chain *c = nftnl_chain_alloc();
        struct nlmsghdr *nlh;

        if (!c)
                return -ENOMEM;
        nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
        nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, NFT_TABLE_NAME);
        nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
        if (ctype) {
                nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, ctype);
                nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
                nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
                nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
        }
        nlh = txn_msg(t, type, type == NFT_MSG_NEWCHAIN ? NLM_F_CREATE | NLM_F_EXCL : 0);
        nftnl_chain_nlmsg_build_payload(nlh, c);
        nftnl_chain_free(c);
        txn_next(t);
        return 0;
}

static struct nftnl_set *set_new(const char *name)
{
        struct nftnl_set *s = nftnl_set_alloc();
        if (!s)
                return NULL;
        nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
        nftnl_set_set_str(s, NFTNL_SET_NAME, name);
        return s;
}

int nft_txn_new_set(NftTxn *t, const char *name, uint32_t key_type, uint32_t key_len,
                    uint32_t flags, uint32_t size, bool vmap, bool counter)
{
        struct nftnl_set *s = set_new(name);
        struct nlmsghdr *nlh;

        if (!s)
                return -ENOMEM;
        nftnl_set_set_u32(s, NFTNL_SET_KEY_TYPE, key_type);
        nftnl_set_set_u32(s, NFTNL_SET_KEY_LEN, key_len);
        nftnl_set_set_u32(s, NFTNL_SET_ID, t->engine->seq);
        if (vmap) {
                flags |= NFT_SET_MAP;
                nftnl_set_set_u32(s, NFTNL_SET_DATA_TYPE, NFT_DATA_VERDICT);
                nftnl_set_set_u32(s, NFTNL_SET_DATA_LEN, 0);
        }
        nftnl_set_set_u32(s, NFTNL_SET_FLAGS, flags);
        if (size)
                nftnl_set_set_u32(s, NFTNL_SET_DESC_SIZE, size);
        if (key_type != NFT_TYPE_IPADDR && key_type != NFT_TYPE_IP6ADDR) {
                /* Keys in host byte order: tell nft, so `nft list` prints them right. */
                struct nftnl_udata_buf *u = nftnl_udata_buf_alloc(64);
                if (!u) {
                        nftnl_set_free(s);
                        return -ENOMEM;
                }
                nftnl_udata_put_u32(u, NFTNL_UDATA_SET_KEYBYTEORDER, 1 /* host endian */);
                nftnl_set_set_data(s, NFTNL_SET_USERDATA, nftnl_udata_buf_data(u),
                                   nftnl_udata_buf_len(u));
                nftnl_udata_buf_free(u);
        }
        if (counter) {
                struct nftnl_expr *e = nftnl_expr_alloc("counter");
                if (!e) {
                        nftnl_set_free(s);
                        return -ENOMEM;
                }
                nftnl_set_set_data(s, NFTNL_SET_EXPR, e, 0);
        }
        nlh = txn_msg(t, NFT_MSG_NEWSET, NLM_F_CREATE | NLM_F_EXCL);
        nftnl_set_nlmsg_build_payload(nlh, s);
        nftnl_set_free(s);
        txn_next(t);
        return 0;
}

static int txn_new_set(NftTxn *t, const char *name, uint32_t key_type, uint32_t key_len,
                       uint32_t flags, bool vmap, bool counter)
{
        return nft_txn_new_set(t, name, key_type, key_len, flags, 0, vmap, counter);
}

static int txn_del_set(NftTxn *t, const char *name)
{
        struct nftnl_set *s = set_new(name);
        struct nlmsghdr *nlh;

        if (!s)
                return -ENOMEM;
        nlh = txn_msg(t, NFT_MSG_DELSET, 0);
        nftnl_set_nlmsg_build_payload(nlh, s);
        nftnl_set_free(s);
        txn_next(t);
        return 0;
}

/* Sends the elements of s (added or deleted); an empty DELSETELEM flushes the set. */
static int txn_elems(NftTxn *t, struct nftnl_set *s, uint16_t type)
{
        struct nlmsghdr *nlh;

        nlh = txn_msg(t, type, type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, s);
        txn_next(t);
        return 0;
}

static int txn_table(NftTxn *t, uint16_t type)
{
        struct nftnl_table *tb = nftnl_table_alloc();
        struct nlmsghdr *nlh;

        if (!tb)
                return -ENOMEM;
        nftnl_table_set_u32(tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
        nftnl_table_set_str(tb, NFTNL_TABLE_NAME, NFT_TABLE_NAME);
        nlh = txn_msg(t, type, type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0);
        nftnl_table_nlmsg_build_payload(nlh, tb);
        nftnl_table_free(tb);
        txn_next(t);
        return 0;
}

/* ---- rules ---- */

/* Refuses packets of family (AF_UNSPEC: all) whose destination is not in lan_set, or that the
 * main table sends out of a member of oif_set, when given. TCP gets a reset (connect() fails
 * at once, a live stream dies), the rest an ICMP administratively-prohibited, so nothing
 * waits for a timeout. */
static int rule_reject(NftTxn *t, const char *chain, int family, const char *lan_set,
                       const char *oif_set)
{
        for (int tcp = 1; tcp >= 0; tcp--) {
                struct nftnl_rule *r = rule_new(chain);
                int k = 0;
                if (!r)
                        return -ENOMEM;
                if (family != AF_UNSPEC)
                        k |= nft_expr_nfproto(r, family);
                if (lan_set) {
                        k |= e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 16 : 24,
                                       family == AF_INET ? 4 : 16);
                        k |= e_lookup(r, lan_set, false, true);
                }
                if (oif_set) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= e_lookup(r, oif_set, false, false);
                }
                if (tcp) {
                        k |= e_meta_load(r, NFT_META_L4PROTO);
                        k |= e_cmp_u8(r, NFT_CMP_EQ, IPPROTO_TCP);
                        k |= e_reject(r, NFT_REJECT_TCP_RST, 0);
                } else
                        k |= e_reject(r, NFT_REJECT_ICMPX_UNREACH,
                                      NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
                if (txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* meta mark (ct false) or ct mark: our bits = value, the others' bits kept. */
static int exprs_assign_mark(NftTxn *t, struct nftnl_rule *r, bool ct, uint32_t value)
{
        return e_key(r, ct, ct ? NFT_CT_MARK : NFT_META_MARK, false) |
               e_bitwise(r, ~t->engine->mask, value) |
               e_key(r, ct, ct ? NFT_CT_MARK : NFT_META_MARK, true);
}

/* meta mark, and with save the flow's ct mark too */
static int exprs_set_mark(NftTxn *t, struct nftnl_rule *r, uint32_t value, bool save)
{
        int k = exprs_assign_mark(t, r, false, value);

        if (save)
                k |= exprs_assign_mark(t, r, true, value);
        return k < 0 ? -ENOMEM : 0;
}

/* Marks packets of family (those leaving through oif or a member of oif_set, when given; with
 * lan_set only those to destinations outside it) for slot: meta mark and conntrack. A packet
 * the main table already sends out of the slot's own link (slot_oif) only gets the conntrack
 * mark: setting meta mark would make the kernel route every such packet a second time for
 * nothing. */
static int rule_mark(NftTxn *t, const char *chain, int family, uint32_t oif, const char *oif_set,
                     const char *lan_set, uint32_t slot, uint32_t slot_oif, bool save)
{
        for (int reroute = 0; reroute < 2; reroute++) {
                struct nftnl_rule *r;
                uint32_t mark = nft_slot_mark(t->engine->mask, slot);
                int k = 0;

                if (!reroute && (!slot_oif || !save || (oif && oif != slot_oif) || oif_set))
                        continue; /* those packets cannot be on the slot's link already */
                r = rule_new(chain);
                if (!r)
                        return -ENOMEM;
                k |= nft_expr_nfproto(r, family);
                if (oif) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= e_cmp_u32(r, NFT_CMP_EQ, oif);
                } else if (slot_oif && save) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= e_cmp_u32(r, reroute ? NFT_CMP_NEQ : NFT_CMP_EQ, slot_oif);
                }
                if (oif_set) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= e_lookup(r, oif_set, false, false);
                }
                if (lan_set) {
                        k |= e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, family == AF_INET ? 16 : 24,
                                       family == AF_INET ? 4 : 16);
                        k |= e_lookup(r, lan_set, false, true);
                }
                if (reroute)
                        k |= exprs_set_mark(t, r, mark, save);
                else
                        k |= exprs_assign_mark(t, r, true, mark);
                if (txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
                if (!reroute && oif)
                        break; /* oif == slot_oif: every packet of this rule is on its link */
        }
        return 0;
}

static int rule_verdict(NftTxn *t, const char *chain, int verdict)
{
        struct nftnl_rule *r = rule_new(chain);

        return txn_add_rule(t, r, r ? e_verdict(r, verdict, NULL) : -ENOMEM);
}

/* Families the VPN does not carry are refused; everything else goes into the VPN's table,
 * whose rule never falls through to main. No conntrack save: the VPN slot is the same for
 * every flow. */
static int rules_vpn_required(NftTxn *t, const char *name, const NftClass *c)
{
        static const int families[2] = {AF_INET, AF_INET6};
        uint32_t vpn = nft_slot_mark(t->engine->mask, nft_slot_vpn(t->engine->mask));
        struct nftnl_rule *rl;
        int r;

        for (int f = 0; f < 2; f++)
                if (c->fam[f].slot == 0) {
                        r = rule_reject(t, name, families[f], NULL, NULL);
                        if (r < 0)
                                return r;
                }
        rl = rule_new(name);
        return txn_add_rule(t, rl, rl ? exprs_set_mark(t, rl, vpn, false) : -ENOMEM);
}

/* oif lo [l4proto proto] [th dport (!=|==) 53] <verdict>; verdict NF_DROP means refused
 * (TCP: a reset, else ICMP admin-prohibited: the caller fails at once). */
static int rule_loopback(NftTxn *t, const char *name, uint8_t proto, int dns_op, int verdict)
{
        const uint16_t dns_port = htons(53);
        struct nftnl_rule *rl = rule_new(name);
        int k = 0;

        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_OIF);
        k |= e_cmp_u32(rl, NFT_CMP_EQ, 1 /* LOOPBACK_IFINDEX */);
        if (proto) {
                k |= e_meta_load(rl, NFT_META_L4PROTO);
                k |= e_cmp_u8(rl, NFT_CMP_EQ, proto);
        }
        if (dns_op >= 0) {
                k |= e_payload(rl, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
                k |= e_cmp(rl, (uint32_t)dns_op, &dns_port, sizeof(dns_port));
        }
        if (verdict == NF_ACCEPT)
                k |= e_verdict(rl, NF_ACCEPT, NULL);
        else if (proto == IPPROTO_TCP)
                k |= e_reject(rl, NFT_REJECT_TCP_RST, 0);
        else
                k |= e_reject(rl, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
        return txn_add_rule(t, rl, k) < 0 ? -ENOMEM : 0;
}

/* Loopback first in every class chain, before marks and the LAN sets (the host's own
 * addresses are in them, and its traffic to them leaves on lo too). DNS (TCP and UDP to port
 * 53) on loopback reaches a local stub or forwarder that would carry it out: a class that
 * keeps its apps off the internet refuses it. Other loopback traffic passes (deny = nothing
 * but loopback), except for the portal-login app (loopback_refused): the login browser gets
 * the local stub and nothing else on the host, so a hostile portal page cannot reach local
 * services (CUPS, databases, roamd's own metrics). */
static int class_loopback_rules(NftTxn *t, const char *name, const NftClass *c)
{
        bool refuse_dns = c->kind == NFT_CLASS_REJECT || c->local_dns_refused;
        struct nftnl_rule *rl;
        int r = 0, k = 0;

        if (c->loopback_refused) {
                if (!refuse_dns) {
                        r = rule_loopback(t, name, IPPROTO_TCP, NFT_CMP_EQ, NF_ACCEPT);
                        if (r >= 0)
                                r = rule_loopback(t, name, IPPROTO_UDP, NFT_CMP_EQ, NF_ACCEPT);
                }
                if (c->kind == NFT_CLASS_REJECT)
                        return r; /* the chain refuses everything anyway */
                if (r >= 0)
                        r = rule_loopback(t, name, IPPROTO_TCP, -1, NF_DROP);
                if (r >= 0)
                        r = rule_loopback(t, name, 0, -1, NF_DROP);
                return r;
        }
        if (!refuse_dns)
                return rule_loopback(t, name, 0, -1, NF_ACCEPT);
        /* not TCP or UDP, or not to port 53: not DNS */
        rl = rule_new(name);
        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_OIF);
        k |= e_cmp_u32(rl, NFT_CMP_EQ, 1 /* LOOPBACK_IFINDEX */);
        k |= e_meta_load(rl, NFT_META_L4PROTO);
        k |= e_cmp_u8(rl, NFT_CMP_NEQ, IPPROTO_TCP);
        k |= e_cmp_u8(rl, NFT_CMP_NEQ, IPPROTO_UDP);
        k |= e_verdict(rl, NF_ACCEPT, NULL);
        r = txn_add_rule(t, rl, k) < 0 ? -ENOMEM : 0;
        if (r >= 0)
                r = rule_loopback(t, name, 0, NFT_CMP_NEQ, NF_ACCEPT);
        if (r < 0 || c->kind == NFT_CLASS_REJECT)
                return r; /* its DNS meets the chain's reject */
        r = rule_loopback(t, name, IPPROTO_TCP, -1, NF_DROP);
        if (r >= 0)
                r = rule_loopback(t, name, 0, -1, NF_DROP);
        return r;
}

static int class_rules(NftTxn *t, const char *name, const NftClass *c)
{
        static const int families[2] = {AF_INET, AF_INET6};
        int r;

        r = class_loopback_rules(t, name, c);
        if (r < 0)
                return r;
        switch (c->kind) {
        case NFT_CLASS_ACCEPT:
                break;
        case NFT_CLASS_REJECT:
                return rule_reject(t, name, AF_UNSPEC, NULL, NULL);
        case NFT_CLASS_LAN:
                r = rule_reject(t, name, AF_INET, "lan4", NULL);
                if (r < 0)
                        return r;
                r = rule_reject(t, name, AF_INET6, "lan6", NULL);
                if (r < 0)
                        return r;
                if (c->vpn_required) {
                        r = rules_vpn_required(t, name, c);
                        if (r < 0)
                                return r;
                }
                break;
        case NFT_CLASS_ROUTE:
                if (c->vpn_required) {
                        r = rules_vpn_required(t, name, c);
                        if (r < 0)
                                return r;
                        break;
                }
                if (c->sticky) {
                        /* Existing flows keep the link they started on. */
                        struct nftnl_rule *rl = rule_new(name);
                        int k = 0;
                        uint32_t st =
                            NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);
                        if (!rl)
                                return -ENOMEM;
                        k |= e_ct_load(rl, NFT_CT_STATE);
                        k |= e_bitwise(rl, st, 0);
                        k |= e_cmp_u32(rl, NFT_CMP_NEQ, 0);
                        k |= e_ct_load(rl, NFT_CT_MARK);
                        k |= e_bitwise(rl, t->engine->mask, 0);
                        k |= e_lookup(rl, "restore", true, false);
                        if (txn_add_rule(t, rl, k) < 0)
                                return -ENOMEM;
                }
                for (int f = 0; f < 2; f++) {
                        const NftFamilyRoute *fr = &c->fam[f];
                        if (fr->restricted) {
                                r = fr->slot ? rule_mark(t, name, families[f], 0, NULL, NULL,
                                                         fr->slot, fr->slot_oif, true)
                                             : rule_reject(t, name, families[f], NULL, NULL);
                                if (r < 0)
                                        return r;
                                continue;
                        }
                        if (fr->around_vpn) {
                                r = fr->slot ? rule_mark(t, name, families[f], 0, "vpnifs", NULL,
                                                         fr->slot, fr->slot_oif, true)
                                             : rule_reject(t, name, families[f], NULL, "vpnifs");
                                if (r < 0)
                                        return r;
                        }
                        if (fr->slot && fr->main_oif) {
                                /* Steered off main's link: its own LAN stays on it. */
                                r = rule_mark(t, name, families[f], fr->main_oif, NULL,
                                              fr->keep_lan ? (f ? "lan6" : "lan4") : NULL, fr->slot,
                                              fr->slot_oif, true);
                                if (r < 0)
                                        return r;
                        }
                }
                break;
        case _NFT_CLASS_KIND_MAX:
        case _NFT_CLASS_KIND_INVALID:
                return -EINVAL;
        }
        return rule_verdict(t, name, NF_ACCEPT);
}

int nft_txn_put_class(NftTxn *t, const char *name, const NftClass *c, bool exists)
{
        int r;

        if (exists)
                r = txn_flush_chain(t, name);
        else
                r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, name, NULL, 0, 0);
        if (r < 0)
                return r;
        return class_rules(t, name, c);
}

int nft_txn_del_class(NftTxn *t, const char *name)
{
        return nft_txn_chain(t, NFT_MSG_DELCHAIN, name, NULL, 0, 0);
}

/* socket cgroupv2 level l vmap @app_l<l>; with user_socket only for packets of a socket
 * with a file (a process's, not the kernel's). */
static int level_lookup_rule(NftTxn *t, unsigned l, bool user_socket)
{
        struct nftnl_rule *r = rule_new("output");
        char map[16];
        int k = 0;

        if (!r)
                return -ENOMEM;
        if (user_socket) {
                k |= e_meta_load(r, NFT_META_SKUID);
                k |= e_cmp_u32(r, NFT_CMP_GTE, 0);
        }
        snprintf(map, sizeof(map), "app_l%u", l);
        k |= nft_expr_socket_cgroup(r, l, NFT_REG_1);
        k |= e_lookup(r, map, true, false);
        return txn_add_rule(t, r, k);
}

static int output_chain_rules(NftTxn *t, const bool levels[NFT_LEVEL_MAX])
{
        struct nftnl_rule *r;

        /* Loopback is handled in each class chain (class_loopback_rules()): the portal-login
         * app is kept off it. What no class takes (no app, no default policy) passes.
         * Deepest level first: an app inside a slice wins over the slice. Class chains end
         * in a verdict, so the first match decides. Packets without a full socket (TCP resets
         * of time-wait sockets, ICMP errors, neighbour discovery) match nothing and pass. */
        for (int l = NFT_LEVEL_MAX - 1; l >= 0; l--) {
                if (l == 0) {
                        /* A process's socket (one with a file: meta skuid loads for it, ICMP
                         * and raw sockets included) meets the default policy before anything
                         * passes. */
                        if (levels[0] && level_lookup_rule(t, 0, true) < 0)
                                return -ENOMEM;
                        /* What is left is the kernel's own (ICMP errors and echo replies,
                         * neighbour discovery, MLD, IGMP: its sockets have no file): it
                         * passes before the root's default policy. */
                        static const uint8_t protos[] = {IPPROTO_ICMP, IPPROTO_ICMPV6,
                                                         IPPROTO_IGMP};
                        for (size_t i = 0; i < ELEMENTSOF(protos); i++) {
                                int kk = 0;
                                r = rule_new("output");
                                if (!r)
                                        return -ENOMEM;
                                kk |= e_meta_load(r, NFT_META_L4PROTO);
                                kk |= e_cmp_u8(r, NFT_CMP_EQ, protos[i]);
                                kk |= e_verdict(r, NF_ACCEPT, NULL);
                                if (txn_add_rule(t, r, kk) < 0)
                                        return -ENOMEM;
                        }
                }
                if (!levels[l])
                        continue;
                if (level_lookup_rule(t, (unsigned)l, false) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int nft_txn_set_levels(NftTxn *t, const bool levels[NFT_LEVEL_MAX])
{
        bool changed = false;
        int r;

        for (int l = 0; l < NFT_LEVEL_MAX; l++) {
                char map[16];
                if (levels[l] == t->levels[l])
                        continue;
                changed = true;
                snprintf(map, sizeof(map), "app_l%d", l);
                if (levels[l]) {
                        r = txn_new_set(t, map, NFT_TYPE_CGROUPV2, sizeof(uint64_t), 0, true, true);
                        if (r < 0)
                                return r;
                }
        }
        if (!changed)
                return 0;
        /* Rewrite the output chain in the same transaction, then drop maps no rule uses. */
        r = txn_flush_chain(t, "output");
        if (r < 0)
                return r;
        r = output_chain_rules(t, levels);
        if (r < 0)
                return r;
        for (int l = 0; l < NFT_LEVEL_MAX; l++) {
                char map[16];
                if (t->levels[l] && !levels[l]) {
                        snprintf(map, sizeof(map), "app_l%d", l);
                        r = txn_del_set(t, map);
                        if (r < 0)
                                return r;
                }
        }
        memcpy(t->levels, levels, sizeof(t->levels));
        t->set_levels = true;
        return 0;
}

int nft_txn_elem(NftTxn *t, unsigned level, uint64_t cgroup_id, const char *class_name, bool add)
{
        struct nftnl_set *s;
        struct nftnl_set_elem *e;
        char map[16];

        if (level >= NFT_LEVEL_MAX || !t->levels[level])
                return -EINVAL;
        snprintf(map, sizeof(map), "app_l%u", level);
        s = set_new(map);
        e = nftnl_set_elem_alloc();
        if (!s || !e) {
                nftnl_set_free(s);
                nftnl_set_elem_free(e);
                return -ENOMEM;
        }
        nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &cgroup_id, sizeof(cgroup_id));
        if (add) {
                nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, NFT_JUMP);
                nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, class_name);
        }
        nftnl_set_elem_add(s, e);
        txn_elems(t, s, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
        nftnl_set_free(s);
        return 0;
}

/* ---- lan sets: prefixes merged into ranges [start, end) ---- */

typedef struct Range {
        uint8_t start[16], end[16];
        bool end_wraps; /* the range runs to the top of the address space */
} Range;

static int range_cmp(const void *a, const void *b)
{
        return memcmp(((const Range *)a)->start, ((const Range *)b)->start, 16);
}

static void prefix_to_range(const NftPrefix *p, size_t alen, Range *ret)
{
        const uint8_t *a =
            p->family == AF_INET ? (const uint8_t *)&p->addr.in : (const uint8_t *)&p->addr.in6;
        unsigned plen = MIN(p->prefixlen, alen * 8);
        int carry = 1;

        memset(ret, 0, sizeof(*ret));
        for (size_t i = 0; i < alen; i++) {
                unsigned bits = plen > i * 8 ? MIN(8u, plen - i * 8) : 0;
                uint8_t m = bits == 0 ? 0 : (uint8_t)(0xff << (8 - bits));
                ret->start[i] = a[i] & m;
                ret->end[i] = ret->start[i] | (uint8_t)~m;
        }
        for (size_t i = alen; i-- > 0 && carry;) {
                ret->end[i]++;
                carry = ret->end[i] == 0;
        }
        ret->end_wraps = carry;
}

int nft_txn_set_lan(NftTxn *t, int family, const NftPrefix *p, size_t n)
{
        size_t alen = family == AF_INET ? 4 : 16, m = 0;
        _cleanup_free_ Range *rg = NULL;
        struct nftnl_set *s;
        const char *name = family == AF_INET ? "lan4" : "lan6";

        rg = calloc(n ? n : 1, sizeof(Range));
        if (!rg)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (p[i].family == family)
                        prefix_to_range(&p[i], alen, &rg[m++]);
        qsort(rg, m, sizeof(Range), range_cmp);
        /* merge overlapping and adjacent ranges */
        size_t k = 0;
        for (size_t i = 0; i < m; i++) {
                if (k > 0 &&
                    (rg[k - 1].end_wraps || memcmp(rg[i].start, rg[k - 1].end, alen) <= 0)) {
                        if (rg[i].end_wraps ||
                            (!rg[k - 1].end_wraps && memcmp(rg[i].end, rg[k - 1].end, alen) > 0)) {
                                memcpy(rg[k - 1].end, rg[i].end, alen);
                                rg[k - 1].end_wraps = rg[i].end_wraps;
                        }
                        continue;
                }
                rg[k++] = rg[i];
        }

        s = set_new(name);
        if (!s)
                return -ENOMEM;
        txn_elems(t, s, NFT_MSG_DELSETELEM); /* flush, then the new contents: one transaction */
        for (size_t i = 0, in_msg = 0; i < k; i++) {
                struct nftnl_set_elem *e;

                if (in_msg + 2 > ELEMS_PER_MSG) {
                        /* one message holds a page at most: send these, start the next */
                        txn_elems(t, s, NFT_MSG_NEWSETELEM);
                        nftnl_set_free(s);
                        s = set_new(name);
                        if (!s)
                                return -ENOMEM;
                        in_msg = 0;
                }
                in_msg += 2;
                e = nftnl_set_elem_alloc();
                if (!e) {
                        nftnl_set_free(s);
                        return -ENOMEM;
                }
                nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, rg[i].start, alen);
                nftnl_set_elem_add(s, e);
                if (!rg[i].end_wraps) {
                        e = nftnl_set_elem_alloc();
                        if (!e) {
                                nftnl_set_free(s);
                                return -ENOMEM;
                        }
                        nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, rg[i].end, alen);
                        nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_FLAGS, NFT_SET_ELEM_INTERVAL_END);
                        nftnl_set_elem_add(s, e);
                }
        }
        if (k > 0)
                txn_elems(t, s, NFT_MSG_NEWSETELEM);
        nftnl_set_free(s);
        return 0;
}

int nft_txn_set_vpn_ifaces(NftTxn *t, const uint32_t *ifindex, size_t n)
{
        struct nftnl_set *s = set_new("vpnifs");

        if (!s)
                return -ENOMEM;
        txn_elems(t, s, NFT_MSG_DELSETELEM);
        for (size_t i = 0; i < n; i++) {
                struct nftnl_set_elem *e;

                if (i > 0 && i % ELEMS_PER_MSG == 0) {
                        txn_elems(t, s, NFT_MSG_NEWSETELEM);
                        nftnl_set_free(s);
                        s = set_new("vpnifs");
                        if (!s)
                                return -ENOMEM;
                }
                e = nftnl_set_elem_alloc();
                if (!e) {
                        nftnl_set_free(s);
                        return -ENOMEM;
                }
                nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &ifindex[i], sizeof(uint32_t));
                nftnl_set_elem_add(s, e);
        }
        if (n > 0)
                txn_elems(t, s, NFT_MSG_NEWSETELEM);
        nftnl_set_free(s);
        return 0;
}

static int restore_elem(NftTxn *t, uint32_t slot, bool add)
{
        struct nftnl_set *s = set_new("restore");
        struct nftnl_set_elem *e = nftnl_set_elem_alloc();
        uint32_t key = nft_slot_mark(t->engine->mask, slot);
        char chain[16];

        if (!s || !e) {
                nftnl_set_free(s);
                nftnl_set_elem_free(e);
                return -ENOMEM;
        }
        snprintf(chain, sizeof(chain), "restore_%u", slot);
        nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &key, sizeof(key));
        if (add) {
                nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, NFT_JUMP);
                nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, chain);
        }
        nftnl_set_elem_add(s, e);
        txn_elems(t, s, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
        nftnl_set_free(s);
        return 0;
}

static int restore_chain_rules(NftTxn *t, const char *chain, uint32_t slot, uint32_t oif)
{
        struct nftnl_rule *rl;
        int k = 0;

        /* A flow the main table still sends out of its link needs no second route lookup. */
        rl = rule_new(chain);
        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_OIF);
        k |= e_cmp_u32(rl, NFT_CMP_EQ, oif);
        k |= e_verdict(rl, NF_ACCEPT, NULL);
        if (txn_add_rule(t, rl, k) < 0)
                return -ENOMEM;
        rl = rule_new(chain);
        if (!rl)
                return -ENOMEM;
        k = exprs_set_mark(t, rl, nft_slot_mark(t->engine->mask, slot), false);
        k |= e_verdict(rl, NF_ACCEPT, NULL);
        return txn_add_rule(t, rl, k);
}

int nft_txn_set_slots(NftTxn *t, const uint32_t *slot_oif, size_t n_slots)
{
        int r;

        for (uint32_t i = 1; i < SLOTS_MAX; i++) {
                uint32_t want = i < n_slots ? slot_oif[i] : 0;
                char chain[16];

                if (want == t->slots[i])
                        continue;
                snprintf(chain, sizeof(chain), "restore_%u", i);
                if (want && t->slots[i]) {
                        /* the slot passed to another link: rewrite its chain */
                        r = txn_flush_chain(t, chain);
                        if (r >= 0)
                                r = restore_chain_rules(t, chain, i, want);
                } else if (want) {
                        r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, chain, NULL, 0, 0);
                        if (r >= 0)
                                r = restore_chain_rules(t, chain, i, want);
                        if (r >= 0)
                                r = restore_elem(t, i, true);
                } else {
                        r = restore_elem(t, i, false);
                        if (r >= 0)
                                r = nft_txn_chain(t, NFT_MSG_DELCHAIN, chain, NULL, 0, 0);
                }
                if (r < 0)
                        return r;
                t->slots[i] = want;
        }
        t->set_slots = true;
        return 0;
}

int nft_txn_set_vpn_dns(NftTxn *t, const struct in_addr *v4, const struct in6_addr *v6)
{
        uint32_t vpn_mark = nft_slot_mark(t->engine->mask, nft_slot_vpn(t->engine->mask));
        int r;

        r = txn_flush_chain(t, "vpn_dns");
        if (r < 0)
                return r;
        for (int f = 0; f < 2; f++) {
                const void *addr = f == 0 ? (const void *)v4 : (const void *)v6;
                if (!addr)
                        continue;
                for (int tcp = 0; tcp < 2; tcp++) {
                        struct nftnl_rule *rl = rule_new("vpn_dns");
                        struct nftnl_expr *imm, *nat;
                        uint16_t port = htons(53);
                        int k = 0;

                        if (!rl)
                                return -ENOMEM;
                        k |= nft_expr_nfproto(rl, f == 0 ? AF_INET : AF_INET6);
                        k |= e_meta_load(rl, NFT_META_MARK);
                        k |= e_bitwise(rl, t->engine->mask, 0);
                        k |= e_cmp_u32(rl, NFT_CMP_EQ, vpn_mark);
                        k |= e_meta_load(rl, NFT_META_L4PROTO);
                        k |= e_cmp_u8(rl, NFT_CMP_EQ, tcp ? IPPROTO_TCP : IPPROTO_UDP);
                        k |= e_payload(rl, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
                        k |= e_cmp(rl, NFT_CMP_EQ, &port, sizeof(port));
                        imm = nftnl_expr_alloc("immediate");
                        nat = nftnl_expr_alloc("nat");
                        if (k < 0 || !imm || !nat) {
                                nftnl_expr_free(imm);
                                nftnl_expr_free(nat);
                                nftnl_rule_free(rl);
                                return -ENOMEM;
                        }
                        nftnl_expr_set_u32(imm, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
                        nftnl_expr_set(imm, NFTNL_EXPR_IMM_DATA, addr, f == 0 ? 4 : 16);
                        nftnl_rule_add_expr(rl, imm);
                        nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
                        nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_FAMILY,
                                           f == 0 ? NFPROTO_IPV4 : NFPROTO_IPV6);
                        nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
                        nftnl_rule_add_expr(rl, nat);
                        if (txn_add_rule(t, rl, 0) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

int nft_txn_replace_table(NftTxn *t)
{
        bool none[NFT_LEVEL_MAX] = {};
        struct nftnl_rule *rl;
        int r, k = 0;

        /* add + delete + add in one transaction: the old table (maybe left by a roamd that
         * crashed) stays in force until the new one replaces it at commit. */
        r = txn_table(t, NFT_MSG_NEWTABLE);
        if (r >= 0)
                r = txn_table(t, NFT_MSG_DELTABLE);
        if (r >= 0)
                r = txn_table(t, NFT_MSG_NEWTABLE);
        if (r < 0)
                return r;
        memset(t->levels, 0, sizeof(t->levels));
        memset(t->slots, 0, sizeof(t->slots));

        if ((r = txn_new_set(t, "lan4", NFT_TYPE_IPADDR, 4, NFT_SET_INTERVAL, false, false)) < 0 ||
            (r = txn_new_set(t, "lan6", NFT_TYPE_IP6ADDR, 16, NFT_SET_INTERVAL, false, false)) <
                0 ||
            (r = txn_new_set(t, "vpnifs", NFT_TYPE_IFINDEX, 4, 0, false, false)) < 0 ||
            (r = txn_new_set(t, "restore", NFT_TYPE_MARK, 4, 0, true, false)) < 0)
                return r;

        /* route hook, mangle priority: conntrack (-200) has run, so ct state/mark are known;
         * a changed mark makes the kernel route the packet again. */
        r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, "output", "route", NF_INET_LOCAL_OUT, -150);
        if (r < 0)
                return r;
        r = output_chain_rules(t, none);
        if (r < 0)
                return r;

        /* DNS of vpn=required apps to the VPN's servers (nat output, after the mark is set). */
        r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, "vpn_dns", "nat", NF_INET_LOCAL_OUT, -100);
        if (r < 0)
                return r;

        /* A socket picks its source address before the output chain reroutes it: flows that
         * roamd marked leave with the address of the link they really take. (socket cgroupv2
         * is not available here: the mark carries the decision.) */
        r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, "postrouting", "nat", NF_INET_POST_ROUTING, 100);
        if (r < 0)
                return r;
        rl = rule_new("postrouting");
        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_MARK);
        k |= e_bitwise(rl, t->engine->mask, 0);
        k |= e_cmp_u32(rl, NFT_CMP_NEQ, 0);
        k |= add_expr(rl, nftnl_expr_alloc("masq"));
        if (txn_add_rule(t, rl, k) < 0)
                return -ENOMEM;

        t->set_levels = t->set_slots = true;
        return 0;
}

/* Why the kernel refused a whole batch, in words a person can act on. */
static const char *refusal_hint(int error)
{
        switch (error) {
        case EPERM:
                return " (roamd needs CAP_NET_ADMIN)";
        case EOPNOTSUPP:
        case EPROTONOSUPPORT:
        case EAFNOSUPPORT:
                return " (is the kernel's nf_tables available?)";
        case ENOMEM:
        case ENOBUFS:
                return " (the kernel is short of memory)";
        default:
                return "";
        }
}

/* Waits at most this long for the kernel's answer: nfnetlink answers a batch at once, so a
 * silent socket means something went wrong (a lost ACK), and roamd must not sit in recv
 * where signals cannot reach it. */
#define NFT_ANSWER_TIMEOUT_MS 5000

int nft_txn_commit(NftTxn *t)
{
        NftEngine *e = t->engine;
        char buf[MNL_SOCKET_BUFFER_SIZE];
        int first_error = 0, r;
        uint32_t begin_seq = t->first_seq, end_seq, error_seq = 0;
        bool done = false;
        struct timespec deadline;

        if (t->n_msgs == 0)
                return 0;
        if (t->error < 0)
                return log_error_errno(-t->error, "nftables transaction not built: %m");

        r = fault_check(FAULT_NFT_COMMIT);
        if (r < 0)
                return log_error_errno(-r,
                                       "nftables transaction (%zu messages) failed by fault "
                                       "injection: %m",
                                       t->n_msgs);

        /* The generation before sending: should the answer not come, the next transaction
         * learns from it whether the kernel applied this one. */
        r = read_genid(e, &e->genid_sent);
        e->genid_known = r >= 0; /* else the commit's own answer names the cause */
        if (fault_check(FAULT_NFT_COMMIT_UNSENT) < 0) {
                e->uncertain = true;
                return log_error_errno(ETIMEDOUT,
                                       "nftables did not answer the transaction (%zu messages; "
                                       "fault injection: never sent): %m",
                                       t->n_msgs);
        }

        /* Only the last message asks for an ACK: errors come for any message anyway. */
        end_seq = e->seq;
        nftnl_batch_end(nftnl_batch_buffer(t->batch), e->seq++);
        if (nftnl_batch_update(t->batch) < 0)
                return log_error_errno(ENOMEM, "nftables batch: out of memory: %m");

        /* Find the last real message to set NLM_F_ACK: walk the iovecs. */
        int iovlen = nftnl_batch_iovec_len(t->batch);
        struct iovec iov[iovlen];
        nftnl_batch_iovec(t->batch, iov, iovlen);
        for (int i = 0; i < iovlen; i++) {
                size_t off = 0;
                while (off + sizeof(struct nlmsghdr) <= iov[i].iov_len) {
                        struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)iov[i].iov_base + off);
                        if (nlh->nlmsg_seq == t->last_seq)
                                nlh->nlmsg_flags |= NLM_F_ACK;
                        off += NLMSG_ALIGN(nlh->nlmsg_len);
                }
        }

        /* A large transaction (the whole table of 10,000 apps at start) is one sendmsg():
         * the send buffer must hold it, or the kernel refuses it as too long. */
        size_t total = 0;
        for (int i = 0; i < iovlen; i++)
                total += iov[i].iov_len;
        if (total > 200 * 1024) {
                int sz = (int)MIN(total + 4096, (size_t)INT32_MAX);
                if (setsockopt(mnl_socket_get_fd(e->nl), SOL_SOCKET, SO_SNDBUFFORCE, &sz,
                               sizeof(sz)) < 0)
                        (void)setsockopt(mnl_socket_get_fd(e->nl), SOL_SOCKET, SO_SNDBUF, &sz,
                                         sizeof(sz));
        }

        struct sockaddr_nl snl = {.nl_family = AF_NETLINK};
        struct msghdr msg = {
            .msg_name = &snl,
            .msg_namelen = sizeof(snl),
            .msg_iov = iov,
            .msg_iovlen = iovlen,
        };
        if (sendmsg(mnl_socket_get_fd(e->nl), &msg, 0) < 0)
                return log_error_errno(errno, "Failed to send nftables transaction: %m");

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += NFT_ANSWER_TIMEOUT_MS / 1000;
        while (!done) {
                struct pollfd pfd = {.fd = mnl_socket_get_fd(e->nl), .events = POLLIN};
                struct timespec now;
                long left_ms;
                ssize_t n;
                int len;

                clock_gettime(CLOCK_MONOTONIC, &now);
                left_ms = (deadline.tv_sec - now.tv_sec) * 1000 +
                          (deadline.tv_nsec - now.tv_nsec) / 1000000;
                if (left_ms <= 0 && first_error != 0)
                        break;
                if (left_ms <= 0) {
                        e->uncertain = true;
                        return log_error_errno(ETIMEDOUT,
                                               "nftables did not answer the transaction (%zu "
                                               "messages) within %d ms: %m",
                                               t->n_msgs, NFT_ANSWER_TIMEOUT_MS);
                }
                r = poll(&pfd, 1, (int)left_ms);
                if (r < 0 && errno != EINTR)
                        return log_error_errno(errno, "Failed to wait for nftables: %m");
                if (r <= 0)
                        continue;
                n = mnl_socket_recvfrom(e->nl, buf, sizeof(buf));
                if (n < 0) {
                        if (errno == EINTR || errno == EAGAIN)
                                continue;
                        /* ENOBUFS: answers were lost; the ACK may be among them. */
                        return log_error_errno(errno, "Failed to read nftables answer: %m");
                }
                len = (int)n;
                for (struct nlmsghdr *nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
                     nlh = mnl_nlmsg_next(nlh, &len)) {
                        const struct nlmsgerr *err;

                        /* Answers to an earlier transaction (one that timed out) are not
                         * this one's: only the batch's own sequence range counts. */
                        if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_seq < begin_seq ||
                            nlh->nlmsg_seq > end_seq ||
                            nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                                continue;
                        err = mnl_nlmsg_get_payload(nlh);
                        if (err->error != 0 && first_error == 0) {
                                first_error = err->error;
                                error_seq = nlh->nlmsg_seq;
                        }
                        /* The kernel refuses a whole batch (no CAP_NET_ADMIN, no nf_tables)
                         * with one error for the batch-begin message and nothing more. */
                        if (nlh->nlmsg_seq == t->last_seq ||
                            (err->error != 0 &&
                             (nlh->nlmsg_seq == begin_seq || nlh->nlmsg_seq == end_seq)))
                                done = true;
                }
                /* After an error the kernel may stop answering (a batch aborted for lack
                 * of memory): what else it has to say is already on its way. */
                if (first_error != 0 && !done) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (deadline.tv_sec > now.tv_sec + 1)
                                deadline = (struct timespec){now.tv_sec + 1, now.tv_nsec};
                }
        }
        if (first_error == 0 && fault_check(FAULT_NFT_COMMIT_LOST) < 0) {
                /* applied, but roamd acts as if the answer never came */
                e->uncertain = true;
                return log_error_errno(ETIMEDOUT,
                                       "nftables did not answer the transaction (%zu messages; "
                                       "fault injection: answer lost): %m",
                                       t->n_msgs);
        }
        if (first_error < 0) {
                if (error_seq == begin_seq || error_seq == end_seq)
                        return log_error_errno(-first_error,
                                               "nftables refused the whole transaction%s: %m",
                                               refusal_hint(-first_error));
                return log_error_errno(-first_error,
                                       "nftables refused the transaction (%zu messages, at "
                                       "message %u)%s: %m",
                                       t->n_msgs, error_seq - begin_seq,
                                       refusal_hint(-first_error));
        }

        if (t->set_levels)
                memcpy(e->levels, t->levels, sizeof(e->levels));
        if (t->set_slots)
                memcpy(e->slots, t->slots, sizeof(e->slots));
        return 0;
}

/* ---- building blocks for modules with tables of their own (roamd-nft-stats.c) ---- */

struct nftnl_rule *nft_rule_new_in(const char *table, const char *chain)
{
        struct nftnl_rule *r = nftnl_rule_alloc();
        if (!r)
                return NULL;
        nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
        nftnl_rule_set_str(r, NFTNL_RULE_TABLE, table);
        nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
        return r;
}

int nft_txn_add_rule(NftTxn *t, struct nftnl_rule *r, int error)
{
        return txn_add_rule(t, r, error);
}

int nft_expr_meta(struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("meta");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
        nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
        return add_expr(r, e);
}

int nft_expr_imm(struct nftnl_rule *r, uint32_t dreg, const void *data, uint32_t len)
{
        struct nftnl_expr *e = nftnl_expr_alloc("immediate");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, dreg);
        nftnl_expr_set(e, NFTNL_EXPR_IMM_DATA, data, len);
        return add_expr(r, e);
}

int nft_expr_verdict(struct nftnl_rule *r, int verdict)
{
        return e_verdict(r, verdict, NULL);
}

int nft_expr_cmp(struct nftnl_rule *r, uint32_t sreg, uint32_t op, const void *data, uint32_t len)
{
        struct nftnl_expr *e = nftnl_expr_alloc("cmp");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, sreg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
        nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len);
        return add_expr(r, e);
}

int nft_expr_cmp_eq(struct nftnl_rule *r, uint32_t sreg, const void *data, uint32_t len)
{
        return nft_expr_cmp(r, sreg, NFT_CMP_EQ, data, len);
}

int nft_expr_cmp_eq_u32(struct nftnl_rule *r, uint32_t sreg, uint32_t v)
{
        return nft_expr_cmp_eq(r, sreg, &v, sizeof(v));
}

int nft_expr_ct_load(struct nftnl_rule *r, uint32_t key)
{
        return e_ct_load(r, key);
}

int nft_expr_reject(struct nftnl_rule *r, uint32_t type, uint8_t code)
{
        return e_reject(r, type, code);
}

int nft_expr_jump(struct nftnl_rule *r, const char *chain)
{
        return e_verdict(r, NFT_JUMP, chain);
}

int nft_expr_socket_cgroup(struct nftnl_rule *r, uint32_t level, uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("socket");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_KEY, NFT_SOCKET_CGROUPV2);
        nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_DREG, dreg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_SOCKET_LEVEL, level);
        return add_expr(r, e);
}

int nft_expr_and(struct nftnl_rule *r, uint32_t reg, const void *mask, uint32_t len)
{
        static const uint8_t zero[16] = {};
        struct nftnl_expr *e;

        if (len > sizeof(zero))
                return -EINVAL;
        e = nftnl_expr_alloc("bitwise");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_SREG, reg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_DREG, reg);
        nftnl_expr_set_u32(e, NFTNL_EXPR_BITWISE_LEN, len);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_MASK, mask, len);
        nftnl_expr_set(e, NFTNL_EXPR_BITWISE_XOR, zero, len);
        return add_expr(r, e);
}

int nft_expr_and_u32(struct nftnl_rule *r, uint32_t reg, uint32_t mask)
{
        return nft_expr_and(r, reg, &mask, sizeof(mask));
}

int nft_expr_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len,
                     uint32_t dreg)
{
        struct nftnl_expr *e = nftnl_expr_alloc("payload");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, offset);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
        nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
        return add_expr(r, e);
}

int nft_expr_nfproto(struct nftnl_rule *r, int family)
{
        return e_meta_load(r, NFT_META_NFPROTO) |
               e_cmp_u8(r, NFT_CMP_EQ, family == AF_INET ? NFPROTO_IPV4 : NFPROTO_IPV6);
}

int nft_expr_counter(struct nftnl_rule *r)
{
        return add_expr(r, nftnl_expr_alloc("counter"));
}

int nft_expr_lookup_vmap(struct nftnl_rule *r, const char *map)
{
        return e_lookup(r, map, true, false);
}

static int lookup_in(struct nftnl_rule *r, uint32_t sreg, const char *set, bool invert)
{
        struct nftnl_expr *e = nftnl_expr_alloc("lookup");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, sreg);
        nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
        if (invert)
                nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
        return add_expr(r, e);
}

int nft_expr_lookup_in(struct nftnl_rule *r, uint32_t sreg, const char *set)
{
        return lookup_in(r, sreg, set, false);
}

int nft_expr_lookup_not_in(struct nftnl_rule *r, uint32_t sreg, const char *set)
{
        return lookup_in(r, sreg, set, true);
}

int nft_rule_add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
        return add_expr(r, e);
}
