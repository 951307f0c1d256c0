/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h> /* before libnftnl's headers, which use FILE */
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-nft-internal.h"

/* What table inet roam holds for the apps (docs/apps.md): the table itself, replaced whole;
 * a chain per class and its rules; a verdict map per cgroup level and the output chain that
 * looks them up; the sets lan4, lan6 and vpnifs; the restore map and the restore chain of each
 * link slot; vpn_dns and postrouting. */

static int txn_new_set(NftTxn *t, const char *name, uint32_t key_type, uint32_t key_len,
                       uint32_t flags, bool vmap, bool counter)
{
        return nft_txn_new_set(t, name, key_type, key_len, flags, 0, vmap, counter);
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
                struct nftnl_rule *r = nft_rule_new(chain);
                int k = 0;
                if (!r)
                        return -ENOMEM;
                if (family != AF_UNSPEC)
                        k |= nft_expr_nfproto(r, family);
                if (lan_set) {
                        k |= nft_e_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
                                           family == AF_INET ? 16 : 24, family == AF_INET ? 4 : 16);
                        k |= nft_e_lookup(r, lan_set, false, true);
                }
                if (oif_set) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= nft_e_lookup(r, oif_set, false, false);
                }
                if (tcp) {
                        k |= e_meta_load(r, NFT_META_L4PROTO);
                        k |= nft_e_cmp_u8(r, NFT_CMP_EQ, IPPROTO_TCP);
                        k |= nft_e_reject(r, NFT_REJECT_TCP_RST, 0);
                } else
                        k |= nft_e_reject(r, NFT_REJECT_ICMPX_UNREACH,
                                          NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
                if (nft_txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* meta mark (ct false) or ct mark: our bits = value, the others' bits kept. */
static int exprs_assign_mark(NftTxn *t, struct nftnl_rule *r, bool ct, uint32_t value)
{
        return nft_e_key(r, ct, ct ? NFT_CT_MARK : NFT_META_MARK, false) |
               nft_e_bitwise(r, ~t->engine->mask, value) |
               nft_e_key(r, ct, ct ? NFT_CT_MARK : NFT_META_MARK, true);
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
                r = nft_rule_new(chain);
                if (!r)
                        return -ENOMEM;
                k |= nft_expr_nfproto(r, family);
                if (oif) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= nft_e_cmp_u32(r, NFT_CMP_EQ, oif);
                } else if (slot_oif && save) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= nft_e_cmp_u32(r, reroute ? NFT_CMP_NEQ : NFT_CMP_EQ, slot_oif);
                }
                if (oif_set) {
                        k |= e_meta_load(r, NFT_META_OIF);
                        k |= nft_e_lookup(r, oif_set, false, false);
                }
                if (lan_set) {
                        k |= nft_e_payload(r, NFT_PAYLOAD_NETWORK_HEADER,
                                           family == AF_INET ? 16 : 24, family == AF_INET ? 4 : 16);
                        k |= nft_e_lookup(r, lan_set, false, true);
                }
                if (reroute)
                        k |= exprs_set_mark(t, r, mark, save);
                else
                        k |= exprs_assign_mark(t, r, true, mark);
                if (nft_txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
                if (!reroute && oif)
                        break; /* oif == slot_oif: every packet of this rule is on its link */
        }
        return 0;
}

static int rule_verdict(NftTxn *t, const char *chain, int verdict)
{
        struct nftnl_rule *r = nft_rule_new(chain);

        return nft_txn_add_rule(t, r, r ? nft_e_verdict(r, verdict, NULL) : -ENOMEM);
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
        rl = nft_rule_new(name);
        return nft_txn_add_rule(t, rl, rl ? exprs_set_mark(t, rl, vpn, false) : -ENOMEM);
}

/* oif lo [l4proto proto] [th dport (!=|==) 53] <verdict>; verdict NF_DROP means refused
 * (TCP: a reset, else ICMP admin-prohibited: the caller fails at once). */
static int rule_loopback(NftTxn *t, const char *name, uint8_t proto, int dns_op, int verdict)
{
        const uint16_t dns_port = htons(53);
        struct nftnl_rule *rl = nft_rule_new(name);
        int k = 0;

        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_OIF);
        k |= nft_e_cmp_u32(rl, NFT_CMP_EQ, 1 /* LOOPBACK_IFINDEX */);
        if (proto) {
                k |= e_meta_load(rl, NFT_META_L4PROTO);
                k |= nft_e_cmp_u8(rl, NFT_CMP_EQ, proto);
        }
        if (dns_op >= 0) {
                k |= nft_e_payload(rl, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
                k |= nft_e_cmp(rl, (uint32_t)dns_op, &dns_port, sizeof(dns_port));
        }
        if (verdict == NF_ACCEPT)
                k |= nft_e_verdict(rl, NF_ACCEPT, NULL);
        else if (proto == IPPROTO_TCP)
                k |= nft_e_reject(rl, NFT_REJECT_TCP_RST, 0);
        else
                k |= nft_e_reject(rl, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
        return nft_txn_add_rule(t, rl, k) < 0 ? -ENOMEM : 0;
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
        rl = nft_rule_new(name);
        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_OIF);
        k |= nft_e_cmp_u32(rl, NFT_CMP_EQ, 1 /* LOOPBACK_IFINDEX */);
        k |= e_meta_load(rl, NFT_META_L4PROTO);
        k |= nft_e_cmp_u8(rl, NFT_CMP_NEQ, IPPROTO_TCP);
        k |= nft_e_cmp_u8(rl, NFT_CMP_NEQ, IPPROTO_UDP);
        k |= nft_e_verdict(rl, NF_ACCEPT, NULL);
        r = nft_txn_add_rule(t, rl, k) < 0 ? -ENOMEM : 0;
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
                        struct nftnl_rule *rl = nft_rule_new(name);
                        int k = 0;
                        uint32_t st =
                            NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED);
                        if (!rl)
                                return -ENOMEM;
                        k |= e_ct_load(rl, NFT_CT_STATE);
                        k |= nft_e_bitwise(rl, st, 0);
                        k |= nft_e_cmp_u32(rl, NFT_CMP_NEQ, 0);
                        k |= e_ct_load(rl, NFT_CT_MARK);
                        k |= nft_e_bitwise(rl, t->engine->mask, 0);
                        k |= nft_e_lookup(rl, "restore", true, false);
                        if (nft_txn_add_rule(t, rl, k) < 0)
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
                r = nft_txn_flush_chain(t, name);
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
        struct nftnl_rule *r = nft_rule_new("output");
        char map[16];
        int k = 0;

        if (!r)
                return -ENOMEM;
        if (user_socket) {
                k |= e_meta_load(r, NFT_META_SKUID);
                k |= nft_e_cmp_u32(r, NFT_CMP_GTE, 0);
        }
        snprintf(map, sizeof(map), "app_l%u", l);
        k |= nft_expr_socket_cgroup(r, l, NFT_REG_1);
        k |= nft_e_lookup(r, map, true, false);
        return nft_txn_add_rule(t, r, k);
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
                                r = nft_rule_new("output");
                                if (!r)
                                        return -ENOMEM;
                                kk |= e_meta_load(r, NFT_META_L4PROTO);
                                kk |= nft_e_cmp_u8(r, NFT_CMP_EQ, protos[i]);
                                kk |= nft_e_verdict(r, NF_ACCEPT, NULL);
                                if (nft_txn_add_rule(t, r, kk) < 0)
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
        r = nft_txn_flush_chain(t, "output");
        if (r < 0)
                return r;
        r = output_chain_rules(t, levels);
        if (r < 0)
                return r;
        for (int l = 0; l < NFT_LEVEL_MAX; l++) {
                char map[16];
                if (t->levels[l] && !levels[l]) {
                        snprintf(map, sizeof(map), "app_l%d", l);
                        r = nft_txn_del_set(t, map);
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
        s = nft_set_new(map);
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
        nft_txn_elems(t, s, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
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

        s = nft_set_new(name);
        if (!s)
                return -ENOMEM;
        nft_txn_elems(t, s, NFT_MSG_DELSETELEM); /* flush, then the new contents: one transaction */
        for (size_t i = 0, in_msg = 0; i < k; i++) {
                struct nftnl_set_elem *e;

                if (in_msg + 2 > ELEMS_PER_MSG) {
                        /* one message holds a page at most: send these, start the next */
                        nft_txn_elems(t, s, NFT_MSG_NEWSETELEM);
                        nftnl_set_free(s);
                        s = nft_set_new(name);
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
                nft_txn_elems(t, s, NFT_MSG_NEWSETELEM);
        nftnl_set_free(s);
        return 0;
}

int nft_txn_set_vpn_ifaces(NftTxn *t, const uint32_t *ifindex, size_t n)
{
        struct nftnl_set *s = nft_set_new("vpnifs");

        if (!s)
                return -ENOMEM;
        nft_txn_elems(t, s, NFT_MSG_DELSETELEM);
        for (size_t i = 0; i < n; i++) {
                struct nftnl_set_elem *e;

                if (i > 0 && i % ELEMS_PER_MSG == 0) {
                        nft_txn_elems(t, s, NFT_MSG_NEWSETELEM);
                        nftnl_set_free(s);
                        s = nft_set_new("vpnifs");
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
                nft_txn_elems(t, s, NFT_MSG_NEWSETELEM);
        nftnl_set_free(s);
        return 0;
}

static int restore_elem(NftTxn *t, uint32_t slot, bool add)
{
        struct nftnl_set *s = nft_set_new("restore");
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
        nft_txn_elems(t, s, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM);
        nftnl_set_free(s);
        return 0;
}

static int restore_chain_rules(NftTxn *t, const char *chain, uint32_t slot, uint32_t oif)
{
        struct nftnl_rule *rl;
        int k = 0;

        /* A flow the main table still sends out of its link needs no second route lookup. */
        rl = nft_rule_new(chain);
        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_OIF);
        k |= nft_e_cmp_u32(rl, NFT_CMP_EQ, oif);
        k |= nft_e_verdict(rl, NF_ACCEPT, NULL);
        if (nft_txn_add_rule(t, rl, k) < 0)
                return -ENOMEM;
        rl = nft_rule_new(chain);
        if (!rl)
                return -ENOMEM;
        k = exprs_set_mark(t, rl, nft_slot_mark(t->engine->mask, slot), false);
        k |= nft_e_verdict(rl, NF_ACCEPT, NULL);
        return nft_txn_add_rule(t, rl, k);
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
                        r = nft_txn_flush_chain(t, chain);
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

        r = nft_txn_flush_chain(t, "vpn_dns");
        if (r < 0)
                return r;
        for (int f = 0; f < 2; f++) {
                const void *addr = f == 0 ? (const void *)v4 : (const void *)v6;
                if (!addr)
                        continue;
                for (int tcp = 0; tcp < 2; tcp++) {
                        struct nftnl_rule *rl = nft_rule_new("vpn_dns");
                        struct nftnl_expr *imm, *nat;
                        uint16_t port = htons(53);
                        int k = 0;

                        if (!rl)
                                return -ENOMEM;
                        k |= nft_expr_nfproto(rl, f == 0 ? AF_INET : AF_INET6);
                        k |= e_meta_load(rl, NFT_META_MARK);
                        k |= nft_e_bitwise(rl, t->engine->mask, 0);
                        k |= nft_e_cmp_u32(rl, NFT_CMP_EQ, vpn_mark);
                        k |= e_meta_load(rl, NFT_META_L4PROTO);
                        k |= nft_e_cmp_u8(rl, NFT_CMP_EQ, tcp ? IPPROTO_TCP : IPPROTO_UDP);
                        k |= nft_e_payload(rl, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2);
                        k |= nft_e_cmp(rl, NFT_CMP_EQ, &port, sizeof(port));
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
                        if (nft_txn_add_rule(t, rl, 0) < 0)
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
        r = nft_txn_table(t, NFT_MSG_NEWTABLE);
        if (r >= 0)
                r = nft_txn_table(t, NFT_MSG_DELTABLE);
        if (r >= 0)
                r = nft_txn_table(t, NFT_MSG_NEWTABLE);
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
        rl = nft_rule_new("postrouting");
        if (!rl)
                return -ENOMEM;
        k |= e_meta_load(rl, NFT_META_MARK);
        k |= nft_e_bitwise(rl, t->engine->mask, 0);
        k |= nft_e_cmp_u32(rl, NFT_CMP_NEQ, 0);
        k |= nft_add_expr(rl, nftnl_expr_alloc("masq"));
        if (nft_txn_add_rule(t, rl, k) < 0)
                return -ENOMEM;

        t->set_levels = t->set_slots = true;
        return 0;
}
