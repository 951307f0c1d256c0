/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-macro.h"
#include "roamd-fault.h"
#include "roamd-nft-stats.h"

/* nftables' datatype numbers (so `nft list` prints the keys readably) and its rule for
 * concatenated types: each type shifted in by 6 bits. */
#define TYPE_MARK     19
#define TYPE_IFINDEX  20
#define TYPE_CGROUPV2 46
#define TYPE_DIR      TYPE_MARK /* a 32-bit type nft prints (0 in, 1 out) */
#define TYPE_BITS     6

#define KEY_LEN  20 /* cgroup 8 . ifindex 4 . mark 4 . dir 4 */
#define SET_SIZE 262144
#define PRIO     300
#define LOOPBACK 1

/* The longest the loop waits for one answer of a dump: a kernel dump of 262,144 counters
 * takes well under a second; beyond this the read fails and is tried again later. */
#define NFT_STATS_WAIT_SEC 2

typedef struct Member {
        uint64_t id;
        unsigned level;
        bool installed;        /* the kernel accepted its element */
        bool gone;             /* its cgroup ended: the element leaves with the next pass */
        bool adding, removing; /* carried by the pass in flight */
} Member;

struct NftStats {
        uint32_t mask;
        bool installed;
        Member *members; /* sorted by id */
        size_t n_members;
        unsigned level_refs[NFT_LEVEL_MAX]; /* members not gone, by level */
        /* the levels the chains in the kernel look up; what the pass in flight carries */
        bool chain_levels[NFT_LEVEL_MAX], sync_levels[NFT_LEVEL_MAX];
        bool sync_chains;
        struct mnl_socket *nl; /* dumps only; transactions go through NftTxn */
        uint32_t seq;
};

int nft_stats_new(uint32_t mark_mask, NftStats **ret)
{
        NftStats *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->mask = mark_mask;
        s->seq = (uint32_t)time(NULL);
        *ret = s;
        return 0;
}

NftStats *nft_stats_free(NftStats *s)
{
        if (!s)
                return NULL;
        if (s->nl)
                mnl_socket_close(s->nl);
        free(s->members);
        free(s);
        return NULL;
}

static void member_drop(NftStats *s, size_t pos)
{
        memmove(&s->members[pos], &s->members[pos + 1], sizeof(Member) * (s->n_members - pos - 1));
        s->n_members--;
}

static void levels_wanted(NftStats *s, bool levels[NFT_LEVEL_MAX])
{
        for (int l = 0; l < NFT_LEVEL_MAX; l++)
                levels[l] = l > 0 && s->level_refs[l] > 0;
}

void nft_stats_set_installed(NftStats *s, bool installed)
{
        s->installed = installed;
        if (!installed)
                return;
        /* the install carried every member not gone, and the chains for their levels */
        for (size_t i = 0; i < s->n_members;) {
                Member *m = &s->members[i];

                m->adding = m->removing = false;
                if (m->gone) {
                        member_drop(s, i);
                        continue;
                }
                m->installed = true;
                i++;
        }
        levels_wanted(s, s->chain_levels);
        s->sync_chains = false;
}

/* ---- building ---- */

/* link, mark and direction into the registers after the cgroup, then update @stats */
static int e_count(struct nftnl_rule *r, NftStatsDir dir, uint32_t mask)
{
        uint32_t d = (uint32_t)dir, zero = 0;
        struct nftnl_expr *e;
        int k = 0;

        k |= nft_expr_meta(r, dir == NFT_STATS_OUT ? NFT_META_OIF : NFT_META_IIF, NFT_REG32_02);
        if (dir == NFT_STATS_OUT) {
                k |= nft_expr_meta(r, NFT_META_MARK, NFT_REG32_03);
                k |= nft_expr_and_u32(r, NFT_REG32_03, mask);
        } else
                k |= nft_expr_imm(r, NFT_REG32_03, &zero, sizeof(zero));
        k |= nft_expr_imm(r, NFT_REG32_04, &d, sizeof(d));
        e = nftnl_expr_alloc("dynset");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG32_00);
        nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_UPDATE);
        nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, NFT_STATS_SET);
        k |= nft_rule_add_expr(r, e);
        return k;
}

static struct nftnl_rule *rule_new(const char *chain)
{
        return nft_rule_new_in(NFT_STATS_TABLE, chain);
}

static int txn_chain_in(NftTxn *t, const char *table, const char *name, int hook, int prio,
                        bool create)
{
        struct nftnl_chain *c = nftnl_chain_alloc();
        struct nlmsghdr *nlh;

        if (!c)
                return -ENOMEM;
        nftnl_chain_set_u32(c, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
        nftnl_chain_set_str(c, NFTNL_CHAIN_TABLE, table);
        nftnl_chain_set_str(c, NFTNL_CHAIN_NAME, name);
        if (create) {
                nftnl_chain_set_str(c, NFTNL_CHAIN_TYPE, "filter");
                nftnl_chain_set_u32(c, NFTNL_CHAIN_HOOKNUM, hook);
                nftnl_chain_set_s32(c, NFTNL_CHAIN_PRIO, prio);
                nftnl_chain_set_u32(c, NFTNL_CHAIN_POLICY, NF_ACCEPT);
                /* no NLM_F_EXCL: the chain of an earlier roamd is kept as it is */
                nlh = nft_txn_msg(t, NFT_MSG_NEWCHAIN, NLM_F_CREATE);
                nftnl_chain_nlmsg_build_payload(nlh, c);
        } else {
                /* flush: a DELRULE naming only the chain */
                struct nftnl_rule *r = nft_rule_new_in(table, name);
                if (!r) {
                        nftnl_chain_free(c);
                        return -ENOMEM;
                }
                nlh = nft_txn_msg(t, NFT_MSG_DELRULE, 0);
                nftnl_rule_nlmsg_build_payload(nlh, r);
                nftnl_rule_free(r);
        }
        nftnl_chain_free(c);
        nft_txn_msg_end(t);
        return 0;
}

static int txn_chain(NftTxn *t, const char *name, int hook, bool create)
{
        return txn_chain_in(t, NFT_STATS_TABLE, name, hook, PRIO, create);
}

static int chain_rules(NftStats *s, NftTxn *t, NftStatsDir dir)
{
        const char *chain = dir == NFT_STATS_OUT ? "stats_out" : "stats_in";
        uint32_t lif = dir == NFT_STATS_OUT ? NFT_META_OIF : NFT_META_IIF;
        uint64_t none = 0;
        struct nftnl_rule *r;
        int k = 0;

        /* loopback is on no link */
        r = rule_new(chain);
        if (r) {
                k |= nft_expr_meta(r, lif, NFT_REG32_02);
                k |= nft_expr_cmp_eq_u32(r, NFT_REG32_02, LOOPBACK);
                k |= nft_expr_verdict(r, NF_ACCEPT);
        }
        if (nft_txn_add_rule(t, r, k) < 0)
                return -ENOMEM;
        /* deepest first: an app inside a user slice counts as the app */
        for (int l = NFT_LEVEL_MAX - 1; l >= 1; l--) {
                if (s->level_refs[l] == 0)
                        continue;
                k = 0;
                r = rule_new(chain);
                if (r) {
                        k |= nft_expr_socket_cgroup(r, l, NFT_REG32_00);
                        k |= nft_expr_lookup_in(r, NFT_REG32_00, NFT_STATS_MEMBERS);
                        k |= e_count(r, dir, s->mask);
                        k |= nft_expr_verdict(r, NF_ACCEPT);
                }
                if (nft_txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
        }
        k = 0;
        r = rule_new(chain);
        if (r) {
                k |= nft_expr_imm(r, NFT_REG32_00, &none, sizeof(none));
                k |= e_count(r, dir, s->mask);
        }
        return nft_txn_add_rule(t, r, k);
}

static int txn_set_in(NftTxn *t, const char *table, const char *name, uint32_t id,
                      uint32_t key_type, uint32_t key_len, bool counted)
{
        struct nftnl_set *set = nftnl_set_alloc();
        struct nftnl_udata_buf *u;
        struct nlmsghdr *nlh;

        if (!set)
                return -ENOMEM;
        nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(set, NFTNL_SET_TABLE, table);
        nftnl_set_set_str(set, NFTNL_SET_NAME, name);
        nftnl_set_set_u32(set, NFTNL_SET_KEY_TYPE, key_type);
        nftnl_set_set_u32(set, NFTNL_SET_KEY_LEN, key_len);
        /* the kernel wants an ID for a set made in a transaction (unique within it) */
        nftnl_set_set_u32(set, NFTNL_SET_ID, id);
        if (counted) {
                struct nftnl_expr *e = nftnl_expr_alloc("counter");
                if (!e) {
                        nftnl_set_free(set);
                        return -ENOMEM;
                }
                nftnl_set_set_u32(set, NFTNL_SET_FLAGS, NFT_SET_EVAL);
                nftnl_set_set_u32(set, NFTNL_SET_DESC_SIZE, SET_SIZE);
                nftnl_set_set_data(set, NFTNL_SET_EXPR, e, 0);
        } else
                nftnl_set_set_u32(set, NFTNL_SET_FLAGS, 0);
        u = nftnl_udata_buf_alloc(64);
        if (!u) {
                nftnl_set_free(set);
                return -ENOMEM;
        }
        nftnl_udata_put_u32(u, NFTNL_UDATA_SET_KEYBYTEORDER, 1 /* host endian */);
        nftnl_set_set_data(set, NFTNL_SET_USERDATA, nftnl_udata_buf_data(u),
                           nftnl_udata_buf_len(u));
        nftnl_udata_buf_free(u);
        /* no NLM_F_EXCL: the set of an earlier roamd is kept, counters included */
        nlh = nft_txn_msg(t, NFT_MSG_NEWSET, NLM_F_CREATE);
        nftnl_set_nlmsg_build_payload(nlh, set);
        nftnl_set_free(set);
        nft_txn_msg_end(t);
        return 0;
}

static int txn_set(NftTxn *t, const char *name, uint32_t key_type, uint32_t key_len, bool counted)
{
        return txn_set_in(t, NFT_STATS_TABLE, name, counted ? 0x5374a701 : 0x5374a702, key_type,
                          key_len, counted);
}

/* NEWTABLE (created when missing) or DELTABLE */
static int txn_table_in(NftTxn *t, const char *table, uint16_t type)
{
        struct nftnl_table *tb = nftnl_table_alloc();
        struct nlmsghdr *nlh;

        if (!tb)
                return -ENOMEM;
        nftnl_table_set_u32(tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
        nftnl_table_set_str(tb, NFTNL_TABLE_NAME, table);
        nlh = nft_txn_msg(t, type, type == NFT_MSG_NEWTABLE ? NLM_F_CREATE : 0);
        nftnl_table_nlmsg_build_payload(nlh, tb);
        nftnl_table_free(tb);
        nft_txn_msg_end(t);
        return 0;
}

static int txn_table(NftTxn *t, uint16_t type)
{
        return txn_table_in(t, NFT_STATS_TABLE, type);
}

/* A DELSETELEM without elements empties the set. */
static int txn_flush_set(NftTxn *t, const char *name)
{
        struct nftnl_set *set = nftnl_set_alloc();
        struct nlmsghdr *nlh;

        if (!set)
                return -ENOMEM;
        nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(set, NFTNL_SET_TABLE, NFT_STATS_TABLE);
        nftnl_set_set_str(set, NFTNL_SET_NAME, name);
        nlh = nft_txn_msg(t, NFT_MSG_DELSETELEM, 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, set);
        nftnl_set_free(set);
        nft_txn_msg_end(t);
        return 0;
}

int nft_stats_txn_remove(NftTxn *t)
{
        int r = txn_table(t, NFT_MSG_NEWTABLE); /* so that the delete finds one */

        return r < 0 ? r : txn_table(t, NFT_MSG_DELTABLE);
}

static int txn_members_msg(NftTxn *t, const uint64_t *ids, size_t n, bool add_them);

static int txn_members(NftTxn *t, const uint64_t *ids, size_t n, bool add_them)
{
        /* a message must fit one page of the batch: 128 ids of 8 bytes and their headers */
        for (size_t i = 0; i < n; i += 128) {
                int r = txn_members_msg(t, ids + i, MIN(n - i, (size_t)128), add_them);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int txn_members_msg(NftTxn *t, const uint64_t *ids, size_t n, bool add_them)
{
        struct nftnl_set *set;
        struct nlmsghdr *nlh;

        if (n == 0)
                return 0;
        set = nftnl_set_alloc();
        if (!set)
                return -ENOMEM;
        nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(set, NFTNL_SET_TABLE, NFT_STATS_TABLE);
        nftnl_set_set_str(set, NFTNL_SET_NAME, NFT_STATS_MEMBERS);
        for (size_t i = 0; i < n; i++) {
                struct nftnl_set_elem *e = nftnl_set_elem_alloc();
                if (!e) {
                        nftnl_set_free(set);
                        return -ENOMEM;
                }
                nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &ids[i], sizeof(ids[i]));
                nftnl_set_elem_add(set, e);
        }
        nlh = nft_txn_msg(t, add_them ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM,
                          add_them ? NLM_F_CREATE : 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, set);
        nftnl_set_free(set);
        nft_txn_msg_end(t);
        return 0;
}

int nft_stats_txn_install(NftStats *s, NftTxn *t)
{
        uint32_t key_type = (((TYPE_CGROUPV2 << TYPE_BITS | TYPE_IFINDEX) << TYPE_BITS) | TYPE_MARK)
                                << TYPE_BITS |
                            TYPE_DIR;
        _cleanup_free_ uint64_t *ids = NULL;
        int r;

        /* Everything but the counted set is made anew in this one transaction: packets meet
         * either the old rules and members or the new ones, and are counted either way. */
        r = txn_table(t, NFT_MSG_NEWTABLE);
        if (r >= 0)
                r = txn_set(t, NFT_STATS_MEMBERS, TYPE_CGROUPV2, sizeof(uint64_t), false);
        if (r >= 0)
                r = txn_flush_set(t, NFT_STATS_MEMBERS);
        if (r >= 0)
                r = txn_set(t, NFT_STATS_SET, key_type, KEY_LEN, true);
        if (r >= 0)
                r = txn_chain(t, "stats_out", NF_INET_LOCAL_OUT, true);
        if (r >= 0)
                r = txn_chain(t, "stats_out", 0, false);
        if (r >= 0)
                r = txn_chain(t, "stats_in", NF_INET_LOCAL_IN, true);
        if (r >= 0)
                r = txn_chain(t, "stats_in", 0, false);
        if (r >= 0)
                r = chain_rules(s, t, NFT_STATS_OUT);
        if (r >= 0)
                r = chain_rules(s, t, NFT_STATS_IN);
        if (r < 0)
                return r;
        ids = malloc(sizeof(uint64_t) * (s->n_members + 1));
        if (!ids)
                return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < s->n_members; i++)
                if (!s->members[i].gone)
                        ids[n++] = s->members[i].id;
        return txn_members(t, ids, n, true);
}

static Member *member_find(NftStats *s, uint64_t id, size_t *ret_pos)
{
        size_t lo = 0, hi = s->n_members;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->members[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (ret_pos)
                *ret_pos = lo;
        return lo < s->n_members && s->members[lo].id == id ? &s->members[lo] : NULL;
}

int nft_stats_member(NftStats *s, uint64_t cgroup, unsigned level, bool add_it)
{
        size_t pos;
        Member *m = member_find(s, cgroup, &pos);

        if (level == 0 || level >= NFT_LEVEL_MAX)
                return 0; /* level 0 is the root: packets of no member count as cgroup 0 */
        if (add_it) {
                if (m)
                        return 0;
                Member *n = realloc(s->members, sizeof(Member) * (s->n_members + 1));
                if (!n)
                        return -ENOMEM;
                s->members = n;
                memmove(&n[pos + 1], &n[pos], sizeof(Member) * (s->n_members - pos));
                n[pos] = (Member){.id = cgroup, .level = level};
                s->n_members++;
                s->level_refs[level]++;
                return s->installed;
        }
        if (!m || m->gone)
                return 0;
        s->level_refs[m->level]--;
        if (s->installed && (m->installed || m->adding)) {
                m->gone = true; /* in the kernel (or maybe, in flight): the pass removes it */
                return 1;
        }
        member_drop(s, pos);
        return 0;
}

int nft_stats_txn_sync(NftStats *s, NftTxn *t)
{
        _cleanup_free_ uint64_t *ids = NULL;
        size_t n = 0;
        int r;

        if (!s->installed)
                return 0;
        ids = malloc(sizeof(uint64_t) * (s->n_members + 1));
        if (!ids)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_members; i++) {
                Member *m = &s->members[i];
                if (m->installed || m->gone)
                        continue;
                ids[n++] = m->id;
                m->adding = true;
        }
        /* the members first, then the chains that look them up, then what leaves */
        r = txn_members(t, ids, n, true);
        if (r < 0)
                return r;
        levels_wanted(s, s->sync_levels);
        if (memcmp(s->sync_levels, s->chain_levels, sizeof(s->chain_levels)) != 0) {
                /* both chains rewritten in one transaction: counts stay in the set */
                s->sync_chains = true;
                r = txn_chain(t, "stats_out", 0, false);
                if (r >= 0)
                        r = chain_rules(s, t, NFT_STATS_OUT);
                if (r >= 0)
                        r = txn_chain(t, "stats_in", 0, false);
                if (r >= 0)
                        r = chain_rules(s, t, NFT_STATS_IN);
                if (r < 0)
                        return r;
        }
        n = 0;
        for (size_t i = 0; i < s->n_members; i++) {
                Member *m = &s->members[i];
                if (!m->gone || !m->installed)
                        continue;
                ids[n++] = m->id;
                m->removing = true;
        }
        return txn_members(t, ids, n, false);
}

bool nft_stats_txn_done(NftStats *s, bool ok)
{
        bool again = false;

        for (size_t i = 0; i < s->n_members;) {
                Member *m = &s->members[i];

                if (ok && m->adding)
                        m->installed = true;
                else if (ok && m->removing)
                        m->installed = false;
                m->adding = m->removing = false;
                if (m->gone && !m->installed) {
                        member_drop(s, i);
                        continue;
                }
                again = again || m->gone;
                i++;
        }
        if (ok && s->sync_chains)
                memcpy(s->chain_levels, s->sync_levels, sizeof(s->chain_levels));
        s->sync_chains = false;
        return ok && again;
}

/* A message must fit one page of the batch: elements go in chunks. */
#define ELEMS_PER_MSG 64

static int counters_msg(NftTxn *t, const NftStatsEntry *keys, size_t n, bool add_them)
{
        struct nftnl_set *set = nftnl_set_alloc();
        struct nlmsghdr *nlh;

        if (!set)
                return -ENOMEM;
        nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(set, NFTNL_SET_TABLE, NFT_STATS_TABLE);
        nftnl_set_set_str(set, NFTNL_SET_NAME, NFT_STATS_SET);
        for (size_t i = 0; i < n; i++) {
                struct nftnl_set_elem *el = nftnl_set_elem_alloc();
                uint8_t key[KEY_LEN];
                uint32_t dir = (uint32_t)keys[i].dir;
                if (!el) {
                        nftnl_set_free(set);
                        return -ENOMEM;
                }
                memcpy(key, &keys[i].cgroup, 8);
                memcpy(key + 8, &keys[i].ifindex, 4);
                memcpy(key + 12, &keys[i].mark, 4);
                memcpy(key + 16, &dir, 4);
                nftnl_set_elem_set(el, NFTNL_SET_ELEM_KEY, key, KEY_LEN);
                nftnl_set_elem_add(set, el);
        }
        nlh = nft_txn_msg(t, add_them ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM,
                          add_them ? NLM_F_CREATE : 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, set);
        nftnl_set_free(set);
        nft_txn_msg_end(t);
        return 0;
}

static int txn_counters(NftStats *s, NftEngine *e, const NftStatsEntry *keys, size_t n,
                        bool add_them)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        int r;

        if (!s->installed || !e || n == 0)
                return 0;
        r = nft_txn_new(e, &t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i += ELEMS_PER_MSG) {
                r = counters_msg(t, keys + i, MIN(n - i, (size_t)ELEMS_PER_MSG), add_them);
                if (r < 0)
                        return r;
        }
        return nft_txn_commit(t);
}

int nft_stats_forget(NftStats *s, NftEngine *e, const NftStatsEntry *keys, size_t n)
{
        return txn_counters(s, e, keys, n, false);
}

int nft_stats_add(NftStats *s, NftEngine *e, const NftStatsEntry *keys, size_t n)
{
        return txn_counters(s, e, keys, n, true);
}

/* ---- reading ---- */

typedef struct DumpCtx {
        NftStatsEntry *entries;
        size_t n, allocated;
        uint64_t handle;
        int error;
} DumpCtx;

static int entry_push(DumpCtx *c, const uint8_t *key, uint64_t bytes, uint64_t packets)
{
        NftStatsEntry *x;
        uint32_t dir;

        if (c->n == c->allocated) {
                size_t na = MAX(c->allocated * 2, (size_t)64);
                NftStatsEntry *ne = realloc(c->entries, sizeof(NftStatsEntry) * na);
                if (!ne)
                        return -ENOMEM;
                c->entries = ne, c->allocated = na;
        }
        x = &c->entries[c->n++];
        memcpy(&x->cgroup, key, 8);
        memcpy(&x->ifindex, key + 8, 4);
        memcpy(&x->mark, key + 12, 4);
        memcpy(&dir, key + 16, 4);
        x->dir = dir == NFT_STATS_OUT ? NFT_STATS_OUT : NFT_STATS_IN;
        x->bytes = bytes;
        x->packets = packets;
        return 0;
}

/* The attributes are walked with libmnl directly: libnftnl would build an object per
 * element and per counter, which costs more than the dump itself at 10,000 apps. */
static void parse_counter(const struct nlattr *expr, uint64_t *bytes, uint64_t *packets)
{
        const struct nlattr *a, *b;
        bool counter = false;

        mnl_attr_for_each_nested(a, expr)
        {
                if (mnl_attr_get_type(a) == NFTA_EXPR_NAME)
                        counter = streq(mnl_attr_get_str(a), "counter");
                else if (mnl_attr_get_type(a) == NFTA_EXPR_DATA && counter)
                        mnl_attr_for_each_nested(b, a)
                        {
                                if (mnl_attr_get_type(b) == NFTA_COUNTER_BYTES)
                                        *bytes = be64toh(mnl_attr_get_u64(b));
                                else if (mnl_attr_get_type(b) == NFTA_COUNTER_PACKETS)
                                        *packets = be64toh(mnl_attr_get_u64(b));
                        }
        }
}

static int on_elems_msg(const struct nlmsghdr *nlh, void *userdata)
{
        DumpCtx *c = userdata;
        const struct nlattr *a, *el, *f, *v;

        if (fault_check(FAULT_NFT_DUMP) < 0) {
                c->error = -EIO;
                return MNL_CB_ERROR;
        }
        mnl_attr_for_each(a, nlh, sizeof(struct nfgenmsg))
        {
                if (mnl_attr_get_type(a) != NFTA_SET_ELEM_LIST_ELEMENTS)
                        continue;
                mnl_attr_for_each_nested(el, a)
                {
                        const uint8_t *key = NULL;
                        uint64_t bytes = 0, packets = 0;
                        mnl_attr_for_each_nested(f, el)
                        {
                                if (mnl_attr_get_type(f) == NFTA_SET_ELEM_KEY) {
                                        mnl_attr_for_each_nested(
                                            v, f) if (mnl_attr_get_type(v) == NFTA_DATA_VALUE &&
                                                      mnl_attr_get_payload_len(v) == KEY_LEN) key =
                                            mnl_attr_get_payload(v);
                                } else if (mnl_attr_get_type(f) == NFTA_SET_ELEM_EXPR)
                                        parse_counter(f, &bytes, &packets);
                        }
                        if (key && entry_push(c, key, bytes, packets) < 0) {
                                c->error = -ENOMEM;
                                return MNL_CB_ERROR;
                        }
                }
        }
        return MNL_CB_OK;
}

static int on_table_msg(const struct nlmsghdr *nlh, void *userdata)
{
        DumpCtx *c = userdata;
        struct nftnl_table *tb = nftnl_table_alloc();

        if (!tb)
                return MNL_CB_ERROR;
        if (nftnl_table_nlmsg_parse(nlh, tb) >= 0)
                c->handle = nftnl_table_get_u64(tb, NFTNL_TABLE_HANDLE);
        nftnl_table_free(tb);
        return MNL_CB_OK;
}

static void socket_close(NftStats *s)
{
        if (s->nl)
                mnl_socket_close(s->nl);
        s->nl = NULL;
}

static int request_cb_once(NftStats *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data, int *error)
{
        _cleanup_free_ char *buf = malloc((64 * 1024));
        uint32_t seq = nlh->nlmsg_seq;
        ssize_t n;
        int r;

        if (!buf)
                return -ENOMEM;
        if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
                return -errno;
        for (;;) {
                n = mnl_socket_recvfrom(s->nl, buf, (64 * 1024));
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        /* SO_RCVTIMEO ran out: the kernel owes an answer it never gave */
                        return errno == EAGAIN ? -ETIMEDOUT : -errno;
                }
                r = mnl_cb_run(buf, n, seq, mnl_socket_get_portid(s->nl), cb, data);
                if (r < 0)
                        return *error < 0 ? *error : -errno;
                if (r == MNL_CB_STOP)
                        return 0;
        }
}

/* Any failure may leave the rest of a dump (or its NLMSG_DONE/ACK) queued on the socket, and
 * the next request would read it as its own answer and fail in turn, for ever. A fresh socket
 * is in step by construction: the next request opens one. */
static int request_cb(NftStats *s, struct nlmsghdr *nlh, mnl_cb_t cb, void *data, int *error)
{
        int r = request_cb_once(s, nlh, cb, data, error);

        if (r < 0)
                socket_close(s);
        return r;
}

static int request(NftStats *s, struct nlmsghdr *nlh, mnl_cb_t cb, DumpCtx *c)
{
        return request_cb(s, nlh, cb, c, &c->error);
}

static int socket_open(NftStats *s)
{
        int r;

        if (s->nl)
                return 0;
        s->nl = mnl_socket_open(NETLINK_NETFILTER);
        if (!s->nl)
                return -errno;
        if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
            socket_bound_recv(mnl_socket_get_fd(s->nl), NFT_STATS_WAIT_SEC * USEC_PER_SEC) < 0) {
                r = -errno;
                socket_close(s);
                return r;
        }
        return 0;
}

/* -ENOENT when the table does not exist (a dump filtered by table name finds nothing but
 * says nothing either). */
static int table_handle(NftStats *s, const char *name, uint64_t *ret)
{
        char hdrbuf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh;
        DumpCtx c = {};
        int r;

        struct nftnl_table *tb = nftnl_table_alloc();
        if (!tb)
                return -ENOMEM;
        nftnl_table_set_u32(tb, NFTNL_TABLE_FAMILY, NFPROTO_INET);
        nftnl_table_set_str(tb, NFTNL_TABLE_NAME, name);
        nlh = nftnl_nlmsg_build_hdr(hdrbuf, NFT_MSG_GETTABLE, NFPROTO_INET, NLM_F_ACK, ++s->seq);
        nftnl_table_nlmsg_build_payload(nlh, tb);
        nftnl_table_free(tb);
        r = request(s, nlh, on_table_msg, &c);
        if (r < 0)
                return r;
        *ret = c.handle;
        return 0;
}

int nft_stats_read(NftStats *s, uint64_t *ret_table_handle, NftStatsEntry **ret, size_t *ret_n)
{
        char hdrbuf[MNL_SOCKET_BUFFER_SIZE];
        DumpCtx c = {};
        struct nlmsghdr *nlh;
        int r;

        r = socket_open(s);
        if (r < 0)
                return r;

        /* the table's handle: a new table instance starts its counters at zero */
        r = table_handle(s, NFT_STATS_TABLE, &c.handle);
        if (r < 0)
                return r;

        /* one dump of every element with its counter */
        struct nftnl_set *set = nftnl_set_alloc();
        if (!set)
                return -ENOMEM;
        nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(set, NFTNL_SET_TABLE, NFT_STATS_TABLE);
        nftnl_set_set_str(set, NFTNL_SET_NAME, NFT_STATS_SET);
        nlh = nftnl_nlmsg_build_hdr(hdrbuf, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP, ++s->seq);
        nftnl_set_elems_nlmsg_build_payload(nlh, set);
        nftnl_set_free(set);
        r = request(s, nlh, on_elems_msg, &c);
        if (r < 0) {
                free(c.entries);
                return r;
        }
        *ret_table_handle = c.handle;
        *ret = c.entries;
        *ret_n = c.n;
        return 0;
}

/* ---- budgets ---- */

#define BUDGET_PRIO 299 /* before counting: a dropped packet is not counted */

static int txn_elems_in(NftTxn *t, const char *table, const char *name, const uint8_t *keys,
                        size_t key_len, size_t n)
{
        for (size_t i = 0; i < n; i += ELEMS_PER_MSG) {
                struct nftnl_set *set = nftnl_set_alloc();
                struct nlmsghdr *nlh;
                if (!set)
                        return -ENOMEM;
                nftnl_set_set_u32(set, NFTNL_SET_FAMILY, NFPROTO_INET);
                nftnl_set_set_str(set, NFTNL_SET_TABLE, table);
                nftnl_set_set_str(set, NFTNL_SET_NAME, name);
                for (size_t j = i; j < n && j < i + ELEMS_PER_MSG; j++) {
                        struct nftnl_set_elem *el = nftnl_set_elem_alloc();
                        if (!el) {
                                nftnl_set_free(set);
                                return -ENOMEM;
                        }
                        nftnl_set_elem_set(el, NFTNL_SET_ELEM_KEY, keys + j * key_len, key_len);
                        nftnl_set_elem_add(set, el);
                }
                nlh = nft_txn_msg(t, NFT_MSG_NEWSETELEM, NLM_F_CREATE);
                nftnl_set_elems_nlmsg_build_payload(nlh, set);
                nftnl_set_free(set);
                nft_txn_msg_end(t);
        }
        return 0;
}

static int txn_quota(NftTxn *t, const NftBudget *b)
{
        struct nftnl_obj *o = nftnl_obj_alloc();
        struct nlmsghdr *nlh;

        if (!o)
                return -ENOMEM;
        nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
        nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, NFT_BUDGET_TABLE);
        nftnl_obj_set_str(o, NFTNL_OBJ_NAME, b->quota);
        nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_QUOTA);
        nftnl_obj_set_u64(o, NFTNL_OBJ_QUOTA_BYTES, b->limit);
        /* the kernel refuses consumed > bytes */
        nftnl_obj_set_u64(o, NFTNL_OBJ_QUOTA_CONSUMED, MIN(b->consumed, b->limit));
        nftnl_obj_set_u32(o, NFTNL_OBJ_QUOTA_FLAGS, NFT_QUOTA_F_INV); /* matches once over */
        nlh = nft_txn_msg(t, NFT_MSG_NEWOBJ, NLM_F_CREATE);
        nftnl_obj_nlmsg_build_payload(nlh, o);
        nftnl_obj_free(o);
        nft_txn_msg_end(t);
        return 0;
}

/* the quota (matches once used up), then drop */
static int e_quota_drop(struct nftnl_rule *r, const char *quota)
{
        struct nftnl_expr *e = nftnl_expr_alloc("objref");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_QUOTA);
        nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, quota);
        if (nft_rule_add_expr(r, e) < 0)
                return -ENOMEM;
        return nft_expr_verdict(r, NF_DROP);
}

typedef enum BudgetMatch {
        MATCH_ANY,      /* every link */
        MATCH_IIF,      /* in: iif in the links */
        MATCH_OIF_BARE, /* out: unmarked, oif in the links */
        MATCH_MARK,     /* out: the mark's slot is one of the links' */
} BudgetMatch;

static int budget_rule(NftTxn *t, const char *chain, size_t i, const NftBudget *b, unsigned level,
                       BudgetMatch match, uint32_t mask)
{
        char cg[32], links[32], marks[32];
        struct nftnl_rule *r = nft_rule_new_in(NFT_BUDGET_TABLE, chain);
        int k = 0;

        snprintf(cg, sizeof(cg), "b%zu_cg", i);
        snprintf(links, sizeof(links), "b%zu_if", i);
        snprintf(marks, sizeof(marks), "b%zu_mk", i);
        if (r) {
                k |= nft_expr_socket_cgroup(r, level, NFT_REG32_00);
                k |= nft_expr_lookup_in(r, NFT_REG32_00, cg);
                switch (match) {
                case MATCH_ANY:
                        break;
                case MATCH_IIF:
                        k |= nft_expr_meta(r, NFT_META_IIF, NFT_REG32_02);
                        k |= nft_expr_lookup_in(r, NFT_REG32_02, links);
                        break;
                case MATCH_OIF_BARE:
                case MATCH_MARK:
                        k |= nft_expr_meta(r, NFT_META_MARK, NFT_REG32_03);
                        k |= nft_expr_and_u32(r, NFT_REG32_03, mask);
                        if (match == MATCH_MARK)
                                k |= nft_expr_lookup_in(r, NFT_REG32_03, marks);
                        else {
                                k |= nft_expr_cmp_eq_u32(r, NFT_REG32_03, 0);
                                k |= nft_expr_meta(r, NFT_META_OIF, NFT_REG32_02);
                                k |= nft_expr_lookup_in(r, NFT_REG32_02, links);
                        }
                        break;
                }
                k |= e_quota_drop(r, b->quota);
        }
        return nft_txn_add_rule(t, r, k);
}

static int budget_rules(NftTxn *t, size_t i, const NftBudget *b, uint32_t mask)
{
        bool levels[NFT_LEVEL_MAX] = {};
        int r = 0;

        for (size_t j = 0; j < b->n_cgroups; j++)
                if (b->levels[j] > 0 && b->levels[j] < NFT_LEVEL_MAX)
                        levels[b->levels[j]] = true;
        for (unsigned l = 1; l < NFT_LEVEL_MAX && r >= 0; l++) {
                if (!levels[l])
                        continue;
                if (b->any_link) {
                        r = budget_rule(t, "budget_out", i, b, l, MATCH_ANY, mask);
                        if (r >= 0)
                                r = budget_rule(t, "budget_in", i, b, l, MATCH_ANY, mask);
                        continue;
                }
                r = budget_rule(t, "budget_out", i, b, l, MATCH_OIF_BARE, mask);
                if (r >= 0)
                        r = budget_rule(t, "budget_out", i, b, l, MATCH_MARK, mask);
                if (r >= 0)
                        r = budget_rule(t, "budget_in", i, b, l, MATCH_IIF, mask);
        }
        return r;
}

static int loopback_rule(NftTxn *t, const char *chain, uint32_t meta)
{
        struct nftnl_rule *r = nft_rule_new_in(NFT_BUDGET_TABLE, chain);
        int k = 0;

        if (r) {
                k |= nft_expr_meta(r, meta, NFT_REG32_02);
                k |= nft_expr_cmp_eq_u32(r, NFT_REG32_02, LOOPBACK);
                k |= nft_expr_verdict(r, NF_ACCEPT);
        }
        return nft_txn_add_rule(t, r, k);
}

int nft_budget_txn_replace(NftTxn *t, uint32_t mark_mask, const NftBudget *b, size_t n)
{
        int r;

        /* add + delete (+ add): the old budgets stay in force until the new ones replace them */
        r = txn_table_in(t, NFT_BUDGET_TABLE, NFT_MSG_NEWTABLE);
        if (r >= 0)
                r = txn_table_in(t, NFT_BUDGET_TABLE, NFT_MSG_DELTABLE);
        if (r < 0 || n == 0)
                return r;
        r = txn_table_in(t, NFT_BUDGET_TABLE, NFT_MSG_NEWTABLE);
        for (size_t i = 0; i < n && r >= 0; i++) {
                char name[32];

                snprintf(name, sizeof(name), "b%zu_cg", i);
                r = txn_set_in(t, NFT_BUDGET_TABLE, name, 0x42750000 + (uint32_t)i * 4,
                               TYPE_CGROUPV2, sizeof(uint64_t), false);
                if (r >= 0)
                        r = txn_elems_in(t, NFT_BUDGET_TABLE, name, (const uint8_t *)b[i].cgroups,
                                         sizeof(uint64_t), b[i].n_cgroups);
                snprintf(name, sizeof(name), "b%zu_if", i);
                if (r >= 0)
                        r = txn_set_in(t, NFT_BUDGET_TABLE, name, 0x42750001 + (uint32_t)i * 4,
                                       TYPE_IFINDEX, sizeof(uint32_t), false);
                if (r >= 0)
                        r = txn_elems_in(t, NFT_BUDGET_TABLE, name, (const uint8_t *)b[i].ifindex,
                                         sizeof(uint32_t), b[i].n_ifindex);
                snprintf(name, sizeof(name), "b%zu_mk", i);
                if (r >= 0)
                        r = txn_set_in(t, NFT_BUDGET_TABLE, name, 0x42750002 + (uint32_t)i * 4,
                                       TYPE_MARK, sizeof(uint32_t), false);
                if (r >= 0)
                        r = txn_elems_in(t, NFT_BUDGET_TABLE, name, (const uint8_t *)b[i].marks,
                                         sizeof(uint32_t), b[i].n_marks);
                if (r >= 0)
                        r = txn_quota(t, &b[i]);
        }
        if (r >= 0)
                r = txn_chain_in(t, NFT_BUDGET_TABLE, "budget_out", NF_INET_LOCAL_OUT, BUDGET_PRIO,
                                 true);
        if (r >= 0)
                r = txn_chain_in(t, NFT_BUDGET_TABLE, "budget_in", NF_INET_LOCAL_IN, BUDGET_PRIO,
                                 true);
        if (r >= 0)
                r = loopback_rule(t, "budget_out", NFT_META_OIF);
        if (r >= 0)
                r = loopback_rule(t, "budget_in", NFT_META_IIF);
        for (size_t i = 0; i < n && r >= 0; i++)
                r = budget_rules(t, i, &b[i], mark_mask);
        return r;
}

typedef struct QuotaCtx {
        NftQuotaUse *q;
        size_t n;
        int error;
} QuotaCtx;

static int on_obj_msg(const struct nlmsghdr *nlh, void *userdata)
{
        QuotaCtx *c = userdata;
        struct nftnl_obj *o = nftnl_obj_alloc();
        NftQuotaUse *nq;

        if (!o) {
                c->error = -ENOMEM;
                return MNL_CB_ERROR;
        }
        if (nftnl_obj_nlmsg_parse(nlh, o) < 0 ||
            nftnl_obj_get_u32(o, NFTNL_OBJ_TYPE) != NFT_OBJECT_QUOTA ||
            !streq(nftnl_obj_get_str(o, NFTNL_OBJ_TABLE) ?: "", NFT_BUDGET_TABLE)) {
                nftnl_obj_free(o);
                return MNL_CB_OK;
        }
        nq = realloc(c->q, sizeof(*nq) * (c->n + 1));
        if (!nq) {
                nftnl_obj_free(o);
                c->error = -ENOMEM;
                return MNL_CB_ERROR;
        }
        c->q = nq;
        snprintf(nq[c->n].name, sizeof(nq[c->n].name), "%s",
                 nftnl_obj_get_str(o, NFTNL_OBJ_NAME) ?: "");
        nq[c->n].consumed = nftnl_obj_get_u64(o, NFTNL_OBJ_QUOTA_CONSUMED);
        c->n++;
        nftnl_obj_free(o);
        return MNL_CB_OK;
}

int nft_budget_read(NftStats *s, NftQuotaUse **ret, size_t *ret_n)
{
        char hdrbuf[MNL_SOCKET_BUFFER_SIZE];
        struct nftnl_obj *o;
        struct nlmsghdr *nlh;
        QuotaCtx c = {};
        uint64_t handle;
        int r;

        r = socket_open(s);
        if (r < 0)
                return r;
        r = table_handle(s, NFT_BUDGET_TABLE, &handle);
        if (r < 0)
                return r;
        o = nftnl_obj_alloc();
        if (!o)
                return -ENOMEM;
        nftnl_obj_set_u32(o, NFTNL_OBJ_FAMILY, NFPROTO_INET);
        nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, NFT_BUDGET_TABLE);
        nftnl_obj_set_u32(o, NFTNL_OBJ_TYPE, NFT_OBJECT_QUOTA);
        nlh = nftnl_nlmsg_build_hdr(hdrbuf, NFT_MSG_GETOBJ, NFPROTO_INET, NLM_F_DUMP, ++s->seq);
        nftnl_obj_nlmsg_build_payload(nlh, o);
        nftnl_obj_free(o);
        r = request_cb(s, nlh, on_obj_msg, &c, &c.error);
        if (r < 0) {
                free(c.q);
                return r;
        }
        *ret = c.q;
        *ret_n = c.n;
        return 0;
}
