/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/fib_rules.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/rule.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-coexist.h"
#include "roamd-nft.h"

#define RTPROT_ROAM 82 /* roamd-route.c */
#define REGS        64

/* What a register holds, as far as mark bits go: loaded from a mark (only touched bits were
 * changed since) or anything else (every bit is new). */
typedef struct Reg {
        bool from_mark;
        uint32_t touched;
} Reg;

typedef struct Scan {
        uint32_t mask;
        CoexistReport *report;
        Reg regs[REGS];
        uint32_t meta_written, ct_written;
        int error;
} Scan;

static unsigned reg_index(uint32_t reg)
{
        /* NFT_REG_1..4 are 16-byte registers: their first 32-bit register */
        if (reg >= NFT_REG_1 && reg <= NFT_REG_4)
                return (reg - NFT_REG_1) * 4;
        if (reg >= NFT_REG32_00)
                return MIN(reg - NFT_REG32_00, (uint32_t)REGS - 1);
        return REGS - 1;
}

static void reg_set(Scan *s, uint32_t reg, bool from_mark, uint32_t touched)
{
        s->regs[reg_index(reg)] = (Reg){from_mark, touched};
}

static int on_expr(struct nftnl_expr *e, void *userdata)
{
        Scan *s = userdata;
        const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
        bool meta = streq(name, "meta"), ct = streq(name, "ct");

        if (meta || ct) {
                uint32_t key =
                    nftnl_expr_get_u32(e, meta ? NFTNL_EXPR_META_KEY : NFTNL_EXPR_CT_KEY);
                bool mark = meta ? key == NFT_META_MARK : key == NFT_CT_MARK;
                uint16_t dreg = meta ? NFTNL_EXPR_META_DREG : NFTNL_EXPR_CT_DREG;
                uint16_t sreg = meta ? NFTNL_EXPR_META_SREG : NFTNL_EXPR_CT_SREG;

                if (nftnl_expr_is_set(e, dreg))
                        reg_set(s, nftnl_expr_get_u32(e, dreg), mark, mark ? 0 : UINT32_MAX);
                else if (mark && nftnl_expr_is_set(e, sreg)) {
                        const Reg *rg = &s->regs[reg_index(nftnl_expr_get_u32(e, sreg))];
                        uint32_t bits = rg->from_mark ? rg->touched : UINT32_MAX;
                        if (meta)
                                s->meta_written |= bits;
                        else
                                s->ct_written |= bits;
                }
        } else if (streq(name, "bitwise")) {
                Reg src = s->regs[reg_index(nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_SREG))];
                uint32_t m = 0, x = 0, len;
                const void *p;
                bool boolean = !nftnl_expr_is_set(e, NFTNL_EXPR_BITWISE_OP) ||
                               nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_OP) == NFT_BITWISE_BOOL;

                p = nftnl_expr_get(e, NFTNL_EXPR_BITWISE_MASK, &len);
                if (p && len == 4)
                        memcpy(&m, p, 4);
                p = nftnl_expr_get(e, NFTNL_EXPR_BITWISE_XOR, &len);
                if (p && len == 4)
                        memcpy(&x, p, 4);
                if (src.from_mark && boolean && nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_LEN) == 4)
                        src.touched |= ~m | x;
                else
                        src = (Reg){false, UINT32_MAX};
                s->regs[reg_index(nftnl_expr_get_u32(e, NFTNL_EXPR_BITWISE_DREG))] = src;
        } else if (streq(name, "immediate")) {
                uint32_t dreg = nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_DREG);
                if (dreg != NFT_REG_VERDICT)
                        reg_set(s, dreg, false, UINT32_MAX);
        } else {
                /* any other expression with a destination register: its value is new */
                static const struct {
                        const char *name;
                        uint16_t attr;
                } dregs[] = {
                    {"payload", NFTNL_EXPR_PAYLOAD_DREG},
                    {"lookup", NFTNL_EXPR_LOOKUP_DREG},
                    {"socket", NFTNL_EXPR_SOCKET_DREG},
                };
                for (size_t i = 0; i < ELEMENTSOF(dregs); i++)
                        if (streq(name, dregs[i].name) && nftnl_expr_is_set(e, dregs[i].attr))
                                reg_set(s, nftnl_expr_get_u32(e, dregs[i].attr), false, UINT32_MAX);
        }
        return 0;
}

static const char *family_name(uint32_t f)
{
        switch (f) {
        case NFPROTO_INET:
                return "inet";
        case NFPROTO_IPV4:
                return "ip";
        case NFPROTO_IPV6:
                return "ip6";
        case NFPROTO_ARP:
                return "arp";
        case NFPROTO_BRIDGE:
                return "bridge";
        case NFPROTO_NETDEV:
                return "netdev";
        default:
                return "?";
        }
}

static int add_conflict(CoexistReport *rep, char *text)
{
        if (!text)
                return -ENOMEM;
        for (char **c = rep->conflicts; c && *c; c++)
                if (streq(*c, text)) {
                        free(text);
                        return 0;
                }
        return strv_push(&rep->conflicts, text);
}

static int on_rule(const struct nlmsghdr *nlh, void *userdata)
{
        Scan *s = userdata;
        struct nftnl_rule *r = nftnl_rule_alloc();
        const char *table, *chain;
        uint32_t family;
        char *text = NULL;

        if (!r || nftnl_rule_nlmsg_parse(nlh, r) < 0) {
                nftnl_rule_free(r);
                return MNL_CB_OK;
        }
        table = nftnl_rule_get_str(r, NFTNL_RULE_TABLE);
        chain = nftnl_rule_get_str(r, NFTNL_RULE_CHAIN);
        family = nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY);
        if (!table || !chain || (family == NFPROTO_INET && streq(table, NFT_TABLE_NAME))) {
                nftnl_rule_free(r);
                return MNL_CB_OK;
        }
        memset(s->regs, 0, sizeof(s->regs));
        s->meta_written = s->ct_written = 0;
        nftnl_expr_foreach(r, on_expr, s);
        s->report->used |= s->meta_written | s->ct_written;
        for (int ct = 0; ct < 2; ct++) {
                uint32_t bits = (ct ? s->ct_written : s->meta_written) & s->mask;
                if (!bits)
                        continue;
                if (asprintf(&text, "table %s %s chain %s writes %s mark bits 0x%08x",
                             family_name(family), table, chain, ct ? "ct" : "meta", bits) < 0)
                        text = NULL;
                if (add_conflict(s->report, text) < 0)
                        s->error = -ENOMEM;
        }
        nftnl_rule_free(r);
        return MNL_CB_OK;
}

static int scan_nft(Scan *s)
{
        struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
        char buf[MNL_SOCKET_BUFFER_SIZE];
        uint32_t seq = (uint32_t)time(NULL), portid;
        struct nlmsghdr *nlh;
        int r;

        if (!nl)
                return negative_errno();
        if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
            socket_bound_recv(mnl_socket_get_fd(nl), NFT_DUMP_WAIT_USEC) < 0) {
                r = negative_errno();
                mnl_socket_close(nl);
                return r;
        }
        portid = mnl_socket_get_portid(nl);
        nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETRULE, NFPROTO_UNSPEC, NLM_F_DUMP, seq);
        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
                r = negative_errno();
                mnl_socket_close(nl);
                return r;
        }
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
                if (n < 0) {
                        r = negative_errno();
                        break;
                }
                r = mnl_cb_run(buf, (size_t)n, seq, portid, on_rule, s);
                if (r <= 0) {
                        r = r < 0 ? negative_errno() : 0;
                        break;
                }
        }
        mnl_socket_close(nl);
        return r < 0 ? r : s->error;
}

static int scan_rules(Scan *s, uint32_t rule_priority)
{
        struct nl_sock *sk = nl_socket_alloc();
        struct nl_cache *rules = NULL;
        int r;

        if (!sk)
                return -ENOMEM;
        r = nl_connect(sk, NETLINK_ROUTE);
        if (r >= 0)
                r = rtnl_rule_alloc_cache(sk, AF_UNSPEC, &rules);
        if (r < 0) {
                nl_socket_free(sk);
                return -EIO;
        }
        for (struct nl_object *o = nl_cache_get_first(rules); o; o = nl_cache_get_next(o)) {
                struct rtnl_rule *ru = (struct rtnl_rule *)o;
                uint32_t mark = rtnl_rule_get_mark(ru), m = rtnl_rule_get_mask(ru);
                uint32_t prio = rtnl_rule_get_prio(ru);
                uint8_t proto = 0;
                char *text = NULL;

                (void)rtnl_rule_get_protocol(ru, &proto);
                if (mark == 0 && m == 0)
                        continue; /* no fwmark */
                if (m == 0)
                        m = UINT32_MAX; /* fwmark without a mask: the whole mark */
                /* roamd's own (and an earlier roamd's, which it adopts) */
                if ((prio == rule_priority || prio == rule_priority + 1) &&
                    (proto == RTPROT_ROAM || m == s->mask))
                        continue;
                s->report->used |= m;
                if (!(m & s->mask))
                        continue;
                if (asprintf(&text, "ip rule priority %u fwmark 0x%x/0x%x matches bits 0x%08x",
                             prio, mark, m, m & s->mask) < 0)
                        text = NULL;
                if (add_conflict(s->report, text) < 0)
                        s->error = -ENOMEM;
        }
        nl_cache_free(rules);
        nl_socket_free(sk);
        return s->error;
}

int coexist_scan(uint32_t mask, uint32_t rule_priority, CoexistReport *ret)
{
        Scan s = {.mask = mask, .report = ret};
        int r;

        *ret = (CoexistReport){};
        r = scan_nft(&s);
        if (r >= 0)
                r = scan_rules(&s, rule_priority);
        if (r < 0) {
                coexist_report_done(ret);
                return r;
        }
        if (ret->conflicts)
                ret->suggest = nft_free_mask(ret->used, (unsigned)__builtin_popcount(mask));
        return 0;
}

void coexist_report_done(CoexistReport *r)
{
        r->conflicts = strv_free(r->conflicts);
        r->used = r->suggest = 0;
}
