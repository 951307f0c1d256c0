/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-firewall-nft.h"

#define FW_PRIO          0
#define NFT_TYPE_IFINDEX 20
#define LOOPBACK_IFINDEX 1

/* ---- matches built from roamd-nft-expr.c's expressions, through register 1 ---- */

static int e_meta(struct nftnl_rule *r, uint32_t key)
{
        return nft_expr_meta(r, key, NFT_REG_1);
}

static int e_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
        return nft_expr_cmp(r, NFT_REG_1, op, data, len);
}

static int e_cmp_u8(struct nftnl_rule *r, uint8_t v)
{
        return e_cmp(r, NFT_CMP_EQ, &v, 1);
}

static int e_payload(struct nftnl_rule *r, uint32_t base, uint32_t offset, uint32_t len)
{
        return nft_expr_payload(r, base, offset, len, NFT_REG_1);
}

static int e_ct_state(struct nftnl_rule *r, uint32_t bits)
{
        uint32_t zero = 0;

        return nft_expr_ct_load(r, NFT_CT_STATE) | nft_expr_and_u32(r, NFT_REG_1, bits) |
               e_cmp(r, NFT_CMP_NEQ, &zero, 4);
}

static int e_l4proto(struct nftnl_rule *r, uint8_t proto)
{
        return e_meta(r, NFT_META_L4PROTO) | e_cmp_u8(r, proto);
}

/* transport port at offset (0 source, 2 destination) in [lo, hi] */
static int e_port(struct nftnl_rule *r, uint32_t offset, uint16_t lo, uint16_t hi)
{
        uint16_t nlo = htons(lo), nhi = htons(hi);
        int k = e_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, offset, 2);

        if (lo == hi)
                return k | e_cmp(r, NFT_CMP_EQ, &nlo, 2);
        return k | e_cmp(r, NFT_CMP_GTE, &nlo, 2) | e_cmp(r, NFT_CMP_LTE, &nhi, 2);
}

static int e_reject(struct nftnl_rule *r, bool tcp)
{
        return nft_expr_reject(r, tcp ? NFT_REJECT_TCP_RST : NFT_REJECT_ICMPX_UNREACH,
                               tcp ? 0 : NFT_REJECT_ICMPX_PORT_UNREACH);
}

static int e_cgroup(struct nftnl_rule *r, unsigned level, uint64_t id)
{
        return nft_expr_socket_cgroup(r, level, NFT_REG_1) |
               nft_expr_cmp_eq(r, NFT_REG_1, &id, sizeof(id));
}

/* ---- objects ---- */

static struct nftnl_rule *rule_new(const char *chain, const char *id)
{
        struct nftnl_rule *r = nftnl_rule_alloc();
        struct nftnl_udata_buf *u;

        if (!r)
                return NULL;
        nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
        nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
        nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, chain);
        /* the rule id as nft's own comment: `nft list` shows it, counters are read by it */
        u = nftnl_udata_buf_alloc(FW_NFT_ID_MAX + 8);
        if (!u || !nftnl_udata_put_strz(u, NFTNL_UDATA_RULE_COMMENT, id)) {
                nftnl_udata_buf_free(u);
                nftnl_rule_free(r);
                return NULL;
        }
        nftnl_rule_set_data(r, NFTNL_RULE_USERDATA, nftnl_udata_buf_data(u),
                            nftnl_udata_buf_len(u));
        nftnl_udata_buf_free(u);
        return r;
}

/* type NFT_MSG_NEWCHAIN (base chain when hook >= 0), NFT_MSG_DELCHAIN, or NFT_MSG_DELRULE
 * (flush) */
static int txn_chain(NftTxn *t, uint16_t type, const char *name, int hook)
{
        struct nlmsghdr *nlh;

        if (type == NFT_MSG_DELRULE) {
                struct nftnl_rule *r = nftnl_rule_alloc();
                if (!r)
                        return -ENOMEM;
                nftnl_rule_set_u32(r, NFTNL_RULE_FAMILY, NFPROTO_INET);
                nftnl_rule_set_str(r, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
                nftnl_rule_set_str(r, NFTNL_RULE_CHAIN, name);
                nlh = nft_txn_msg(t, NFT_MSG_DELRULE, 0);
                nftnl_rule_nlmsg_build_payload(nlh, r);
                nftnl_rule_free(r);
                nft_txn_msg_end(t);
                return 0;
        }
        return nft_txn_chain(t, type, name, hook >= 0 ? "filter" : NULL, hook, FW_PRIO);
}

static const char *link_chain(int ifindex, FwDirection dir, char buf[static 32])
{
        snprintf(buf, 32, "%s_%d", dir == FW_DIRECTION_IN ? "fwi" : "fwo", ifindex);
        return buf;
}

/* A simple built-in rule: match built by fn, counter, verdict. */
static int builtin(NftTxn *t, const char *chain, const char *id, int verdict,
                   int (*fn)(struct nftnl_rule *, const void *), const void *arg)
{
        struct nftnl_rule *r = rule_new(chain, id);
        int k;

        if (!r)
                return -ENOMEM;
        k = fn(r, arg);
        k |= nft_expr_counter(r);
        k |= nft_expr_verdict(r, verdict);
        return nft_txn_add_rule(t, r, k);
}

static int m_loopback(struct nftnl_rule *r, const void *arg)
{
        return e_meta(r, *(const bool *)arg ? NFT_META_OIF : NFT_META_IIF) |
               nft_expr_cmp_eq_u32(r, NFT_REG_1, LOOPBACK_IFINDEX);
}

static int m_ct(struct nftnl_rule *r, const void *arg)
{
        return e_ct_state(r, *(const uint32_t *)arg);
}

typedef struct IcmpMatch {
        int family;
        uint8_t type;
} IcmpMatch;

static int m_icmp(struct nftnl_rule *r, const void *arg)
{
        const IcmpMatch *m = arg;
        return nft_expr_nfproto(r, m->family) |
               e_l4proto(r, m->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6) |
               e_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1) | e_cmp_u8(r, m->type);
}

static int m_dhcp(struct nftnl_rule *r, const void *arg)
{
        int family = *(const int *)arg;
        bool v4 = family == AF_INET;
        return nft_expr_nfproto(r, family) | e_l4proto(r, IPPROTO_UDP) |
               e_port(r, 0, v4 ? 67 : 547, v4 ? 67 : 547) |
               e_port(r, 2, v4 ? 68 : 546, v4 ? 68 : 546);
}

static int m_none(struct nftnl_rule *r, const void *arg)
{
        return 0;
}

static int vmap_rule(NftTxn *t, const char *chain, bool out)
{
        struct nftnl_rule *r = rule_new(chain, out ? "built-in:links-out" : "built-in:links");
        int k;

        if (!r)
                return -ENOMEM;
        k = e_meta(r, out ? NFT_META_OIF : NFT_META_IIF);
        k |= nft_expr_lookup_vmap(r, out ? "fw_out" : "fw_in");
        return nft_txn_add_rule(t, r, k);
}

int fw_nft_install(NftTxn *t)
{
        /* ICMP that must work everywhere: errors (PMTU discovery, unreachable, time exceeded),
         * echo requests (a ping answered is how people check a box), and for IPv6 neighbour
         * discovery, router advertisements and MLD, without which IPv6 does not work at all */
        static const uint8_t icmp4[] = {3, 8, 11, 12};
        static const uint8_t icmp6[] = {1,   2,   3,   4,   128, 130, 131,
                                        132, 133, 134, 135, 136, 137, 143};
        uint32_t est = NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);
        uint32_t inv = NF_CT_STATE_INVALID_BIT;
        bool no = false, yes = true;
        int f4 = AF_INET, f6 = AF_INET6, r;

        if ((r = nft_txn_new_set(t, "fw_in", NFT_TYPE_IFINDEX, 4, 0, 0, true, false)) < 0 ||
            (r = nft_txn_new_set(t, "fw_out", NFT_TYPE_IFINDEX, 4, 0, 0, true, false)) < 0 ||
            (r = txn_chain(t, NFT_MSG_NEWCHAIN, "fw_input", NF_INET_LOCAL_IN)) < 0 ||
            (r = builtin(t, "fw_input", "built-in:loopback", NF_ACCEPT, m_loopback, &no)) < 0 ||
            (r = builtin(t, "fw_input", "built-in:established", NF_ACCEPT, m_ct, &est)) < 0 ||
            (r = builtin(t, "fw_input", "built-in:invalid", NF_DROP, m_ct, &inv)) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(icmp4); i++) {
                IcmpMatch m = {AF_INET, icmp4[i]};
                r = builtin(t, "fw_input", "built-in:icmp", NF_ACCEPT, m_icmp, &m);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(icmp6); i++) {
                IcmpMatch m = {AF_INET6, icmp6[i]};
                r = builtin(t, "fw_input", "built-in:icmpv6", NF_ACCEPT, m_icmp, &m);
                if (r < 0)
                        return r;
        }
        if ((r = builtin(t, "fw_input", "built-in:dhcp", NF_ACCEPT, m_dhcp, &f4)) < 0 ||
            (r = builtin(t, "fw_input", "built-in:dhcp", NF_ACCEPT, m_dhcp, &f6)) < 0 ||
            (r = vmap_rule(t, "fw_input", false)) < 0 ||
            /* a link without a location (no network named yet): nothing new comes in */
            (r = builtin(t, "fw_input", "built-in:no-location", NF_DROP, m_none, NULL)) < 0)
                return r;

        if ((r = txn_chain(t, NFT_MSG_NEWCHAIN, "fw_output", NF_INET_LOCAL_OUT)) < 0 ||
            (r = builtin(t, "fw_output", "built-in:loopback", NF_ACCEPT, m_loopback, &yes)) < 0 ||
            (r = builtin(t, "fw_output", "built-in:established", NF_ACCEPT, m_ct, &est)) < 0 ||
            (r = vmap_rule(t, "fw_output", true)) < 0)
                return r;
        return 0;
}

/* The packet's destination (dst) or source address is in prefix p. */
static int e_prefix(struct nftnl_rule *r, const NftPrefix *p, bool dst)
{
        bool v4 = p->family == AF_INET;
        uint32_t len = v4 ? 4 : 16;
        uint8_t mask[16] = {}, net[16];
        int k = 0;

        memcpy(net, &p->addr, len);
        for (unsigned b = 0; b < p->prefixlen; b++)
                mask[b / 8] |= (uint8_t)(0x80 >> (b % 8));
        k |= e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v4 ? (dst ? 16 : 12) : (dst ? 24 : 8), len);
        if (p->prefixlen < len * 8)
                k |= nft_expr_and(r, NFT_REG_1, mask, len);
        k |= e_cmp(r, NFT_CMP_EQ, net, len);
        return k;
}

static int rule_exprs(struct nftnl_rule *r, const FwNftRule *fr, bool out, int family, bool tcp)
{
        int k = 0;

        if (family != AF_UNSPEC)
                k |= nft_expr_nfproto(r, family);
        if (fr->has_addr)
                k |= e_prefix(r, &fr->addr, out);
        if (fr->has_local)
                k |= e_prefix(r, &fr->local, !out);
        switch (fr->proto) {
        case FW_PROTO_ANY:
                if (tcp)
                        k |= e_l4proto(r, IPPROTO_TCP);
                break;
        case FW_PROTO_TCP:
                k |= e_l4proto(r, IPPROTO_TCP);
                break;
        case FW_PROTO_UDP:
                k |= e_l4proto(r, IPPROTO_UDP);
                break;
        case FW_PROTO_ICMP:
                k |= e_l4proto(r, IPPROTO_ICMP);
                break;
        case FW_PROTO_ICMPV6:
                k |= e_l4proto(r, IPPROTO_ICMPV6);
                break;
        case _FW_PROTO_MAX:
        case _FW_PROTO_INVALID:
                return -EINVAL;
        }
        if (fr->port_min)
                k |= e_port(r, 2, fr->port_min, fr->port_max);
        if (fr->has_cgroup)
                k |= e_cgroup(r, fr->cgroup_level, fr->cgroup_id);
        k |= nft_expr_counter(r);
        return k;
}

/* One FwNftRule; a reject is a TCP reset for TCP and an ICMP port unreachable for the rest, so
 * without a protocol it is two nftables rules (TCP first). */
static int put_rule(NftTxn *t, const char *chain, const FwNftRule *fr, bool out)
{
        bool split = fr->action == FW_ACTION_REJECT && fr->proto == FW_PROTO_ANY;
        int r;

        for (int pass = split ? 0 : 1; pass < 2; pass++) {
                struct nftnl_rule *rl = rule_new(chain, fr->id);
                int k;

                if (!rl)
                        return -ENOMEM;
                k = rule_exprs(rl, fr, out, fr->family, pass == 0);
                switch (fr->action) {
                case FW_ACTION_ACCEPT:
                        k |= nft_expr_verdict(rl, NF_ACCEPT);
                        break;
                case FW_ACTION_DROP:
                        k |= nft_expr_verdict(rl, NF_DROP);
                        break;
                case FW_ACTION_REJECT:
                        k |= e_reject(rl, pass == 0 || fr->proto == FW_PROTO_TCP);
                        break;
                case _FW_ACTION_MAX:
                case _FW_ACTION_INVALID:
                        k = -EINVAL;
                        break;
                }
                r = nft_txn_add_rule(t, rl, k);
                if (r < 0)
                        return r;
        }
        return 0;
}

int fw_nft_put_link(NftTxn *t, int ifindex, FwDirection dir, const FwNftRule *rules, size_t n,
                    FwAction final, const char *final_id, bool exists)
{
        char chain[32];
        FwNftRule last = {.action = final, .proto = FW_PROTO_ANY, .family = AF_UNSPEC};
        int r;

        link_chain(ifindex, dir, chain);
        r = txn_chain(t, exists ? NFT_MSG_DELRULE : NFT_MSG_NEWCHAIN, chain, -1);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = put_rule(t, chain, &rules[i], dir == FW_DIRECTION_OUT);
        if (r < 0)
                return r;
        snprintf(last.id, sizeof(last.id), "%s", final_id);
        return put_rule(t, chain, &last, dir == FW_DIRECTION_OUT);
}

int fw_nft_link_elem(NftTxn *t, int ifindex, FwDirection dir, bool add_it)
{
        struct nftnl_set *s = nftnl_set_alloc();
        struct nftnl_set_elem *e = nftnl_set_elem_alloc();
        struct nlmsghdr *nlh;
        uint32_t key = (uint32_t)ifindex;
        char chain[32];

        if (!s || !e) {
                nftnl_set_free(s);
                nftnl_set_elem_free(e);
                return -ENOMEM;
        }
        nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
        nftnl_set_set_str(s, NFTNL_SET_NAME, dir == FW_DIRECTION_IN ? "fw_in" : "fw_out");
        nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &key, sizeof(key));
        if (add_it) {
                nftnl_set_elem_set_u32(e, NFTNL_SET_ELEM_VERDICT, NFT_JUMP);
                nftnl_set_elem_set_str(e, NFTNL_SET_ELEM_CHAIN, link_chain(ifindex, dir, chain));
        }
        nftnl_set_elem_add(s, e);
        nlh = nft_txn_msg(t, add_it ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM,
                          add_it ? NLM_F_CREATE : 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, s);
        nftnl_set_free(s);
        nft_txn_msg_end(t);
        return 0;
}

int fw_nft_del_link(NftTxn *t, int ifindex, FwDirection dir)
{
        char chain[32];

        return txn_chain(t, NFT_MSG_DELCHAIN, link_chain(ifindex, dir, chain), -1);
}

/* ---- counters ---- */

typedef struct DumpCtx {
        FwNftCounter *c;
        size_t n;
        int error;
} DumpCtx;

static int on_udata(const struct nftnl_udata *attr, void *data)
{
        const char **comment = data;

        if (nftnl_udata_type(attr) == NFTNL_UDATA_RULE_COMMENT && nftnl_udata_len(attr) > 0) {
                const char *s = nftnl_udata_get(attr);
                if (s[nftnl_udata_len(attr) - 1] == 0)
                        *comment = s;
        }
        return 0;
}

static int on_counter_expr(struct nftnl_expr *e, void *data)
{
        FwNftCounter *c = data;

        if (streq(nftnl_expr_get_str(e, NFTNL_EXPR_NAME), "counter")) {
                c->packets += nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_PACKETS);
                c->bytes += nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_BYTES);
        }
        return 0;
}

static int on_rule(const struct nlmsghdr *nlh, void *userdata)
{
        DumpCtx *c = userdata;
        struct nftnl_rule *r = nftnl_rule_alloc();
        const char *chain, *comment = NULL;
        const void *ud;
        uint32_t udlen = 0;
        FwNftCounter one = {};

        if (!r)
                return MNL_CB_ERROR;
        if (nftnl_rule_nlmsg_parse(nlh, r) < 0) {
                nftnl_rule_free(r);
                return MNL_CB_OK;
        }
        chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
        ud = nftnl_rule_get_data(r, NFTNL_RULE_USERDATA, &udlen);
        if (ud)
                (void)nftnl_udata_parse(ud, udlen, on_udata, &comment);
        if (!chain || !comment || strncmp(chain, "fw", 2) != 0) {
                nftnl_rule_free(r);
                return MNL_CB_OK;
        }
        snprintf(one.chain, sizeof(one.chain), "%s", chain);
        snprintf(one.id, sizeof(one.id), "%s", comment);
        nftnl_expr_foreach(r, on_counter_expr, &one);
        nftnl_rule_free(r);
        /* a rule split in two (reject) and the built-ins of one id add up */
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->c[i].chain, one.chain) && streq(c->c[i].id, one.id)) {
                        c->c[i].packets += one.packets;
                        c->c[i].bytes += one.bytes;
                        return MNL_CB_OK;
                }
        FwNftCounter *n = realloc(c->c, sizeof(FwNftCounter) * (c->n + 1));
        if (!n) {
                c->error = -ENOMEM;
                return MNL_CB_ERROR;
        }
        c->c = n;
        c->c[c->n++] = one;
        return MNL_CB_OK;
}

int fw_nft_counters(FwNftCounter **ret, size_t *ret_n)
{
        _cleanup_free_ char *buf = malloc(MNL_SOCKET_BUFFER_SIZE * 4);
        char hdr[MNL_SOCKET_BUFFER_SIZE];
        struct mnl_socket *nl;
        struct nftnl_rule *rl;
        struct nlmsghdr *nlh;
        uint32_t seq = (uint32_t)time(NULL), portid;
        DumpCtx c = {};
        int r = 0;

        if (!buf)
                return -ENOMEM;
        nl = mnl_socket_open(NETLINK_NETFILTER);
        if (!nl)
                return -errno;
        if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
            socket_bound_recv(mnl_socket_get_fd(nl), NFT_DUMP_WAIT_USEC) < 0) {
                r = -errno;
                mnl_socket_close(nl);
                return r;
        }
        portid = mnl_socket_get_portid(nl);
        rl = nftnl_rule_alloc();
        if (!rl) {
                mnl_socket_close(nl);
                return -ENOMEM;
        }
        nftnl_rule_set_u32(rl, NFTNL_RULE_FAMILY, NFPROTO_INET);
        nftnl_rule_set_str(rl, NFTNL_RULE_TABLE, NFT_TABLE_NAME);
        nlh = nftnl_nlmsg_build_hdr(hdr, NFT_MSG_GETRULE, NFPROTO_INET, NLM_F_DUMP, seq);
        nftnl_rule_nlmsg_build_payload(nlh, rl);
        nftnl_rule_free(rl);
        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                r = -errno;
        while (r == 0) {
                ssize_t n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE * 4);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        break;
                }
                int k = mnl_cb_run(buf, (size_t)n, seq, portid, on_rule, &c);
                if (k < 0)
                        r = c.error < 0 ? c.error : -errno;
                else if (k == MNL_CB_STOP)
                        break;
        }
        mnl_socket_close(nl);
        if (r < 0) {
                free(c.c);
                return r;
        }
        *ret = c.c;
        *ret_n = c.n;
        return 0;
}
