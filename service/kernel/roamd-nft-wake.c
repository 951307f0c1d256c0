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
#include <sys/socket.h>

#include "roam-macro.h"
#include "roamd-nft-wake.h"
#include "roamd-nft.h"

#define WAKE_SET    "wake_gate"
#define WAKE_CHAIN  "wake_gate"
#define WAKE_REFUSE "wake_refuse"
/* Before the class chains (-150): a gated app is refused whatever its class would do. */
#define WAKE_PRIO         (-160)
#define NFT_TYPE_CGROUPV2 46
#define LOOPBACK_IFINDEX  1

static struct nftnl_set *set_new(void)
{
        struct nftnl_set *s = nftnl_set_alloc();

        if (!s)
                return NULL;
        nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
        nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
        nftnl_set_set_str(s, NFTNL_SET_NAME, WAKE_SET);
        return s;
}

/* TCP gets a reset (connect() fails at once with ECONNREFUSED), the rest an ICMP
 * administratively-prohibited (EHOSTUNREACH/EACCES), so nothing waits for a timeout. */
static int refuse_rules(NftTxn *t)
{
        for (int tcp = 1; tcp >= 0; tcp--) {
                struct nftnl_rule *r = nft_rule_new_in(NFT_TABLE_NAME, WAKE_REFUSE);
                uint8_t proto = IPPROTO_TCP;
                int k = 0;

                if (!r)
                        return -ENOMEM;
                if (tcp) {
                        k |= nft_expr_meta(r, NFT_META_L4PROTO, NFT_REG_1);
                        k |= nft_expr_cmp_eq(r, NFT_REG_1, &proto, sizeof(proto));
                        k |= nft_expr_reject(r, NFT_REJECT_TCP_RST, 0);
                } else
                        k |= nft_expr_reject(r, NFT_REJECT_ICMPX_UNREACH,
                                             NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
                if (nft_txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int nft_wake_gate_install(NftTxn *t)
{
        struct nftnl_rule *r;
        int k = 0;

        if (nft_txn_new_set(t, WAKE_SET, NFT_TYPE_CGROUPV2, sizeof(uint64_t), 0, 0, false, false) <
                0 ||
            nft_txn_chain(t, NFT_MSG_NEWCHAIN, WAKE_REFUSE, NULL, 0, 0) < 0 ||
            nft_txn_chain(t, NFT_MSG_NEWCHAIN, WAKE_CHAIN, "filter", NF_INET_LOCAL_OUT, WAKE_PRIO) <
                0 ||
            refuse_rules(t) < 0)
                return -ENOMEM;

        /* Loopback stays open (a local resolver, the app's own IPC). */
        r = nft_rule_new_in(NFT_TABLE_NAME, WAKE_CHAIN);
        if (!r)
                return -ENOMEM;
        k |= nft_expr_meta(r, NFT_META_OIF, NFT_REG_1);
        k |= nft_expr_cmp_eq_u32(r, NFT_REG_1, LOOPBACK_IFINDEX);
        k |= nft_expr_verdict(r, NF_ACCEPT);
        if (nft_txn_add_rule(t, r, k) < 0)
                return -ENOMEM;

        /* Only new connections: an app keeps what it had (the gate closes again at a new
         * period while its flows may still run). */
        r = nft_rule_new_in(NFT_TABLE_NAME, WAKE_CHAIN);
        if (!r)
                return -ENOMEM;
        k = nft_expr_ct_load(r, NFT_CT_STATE);
        k |= nft_expr_and_u32(r, NFT_REG_1, NF_CT_STATE_BIT(IP_CT_NEW));
        k |= nft_expr_cmp_eq_u32(r, NFT_REG_1, 0);
        k |= nft_expr_verdict(r, NF_ACCEPT);
        if (nft_txn_add_rule(t, r, k) < 0)
                return -ENOMEM;

        /* An app's cgroup may sit at any depth: one lookup per level, the set is the same.
         * (socket cgroupv2 level N ends the rule for a socket in a shallower cgroup.) */
        for (uint32_t l = 1; l < NFT_LEVEL_MAX; l++) {
                r = nft_rule_new_in(NFT_TABLE_NAME, WAKE_CHAIN);
                if (!r)
                        return -ENOMEM;
                k = nft_expr_socket_cgroup(r, l, NFT_REG_1);
                k |= nft_expr_lookup_in(r, NFT_REG_1, WAKE_SET);
                k |= nft_expr_jump(r, WAKE_REFUSE);
                if (nft_txn_add_rule(t, r, k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int nft_wake_gate_elem(NftTxn *t, uint64_t cgroup_id, bool add)
{
        struct nftnl_set *s = set_new();
        struct nftnl_set_elem *e = nftnl_set_elem_alloc();
        struct nlmsghdr *nlh;

        if (!s || !e) {
                nftnl_set_free(s);
                nftnl_set_elem_free(e);
                return -ENOMEM;
        }
        nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &cgroup_id, sizeof(cgroup_id));
        nftnl_set_elem_add(s, e);
        nlh = nft_txn_msg(t, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM, add ? NLM_F_CREATE : 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, s);
        nftnl_set_free(s);
        nft_txn_msg_end(t);
        return 0;
}
