/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>
#include <linux/if_arp.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-nft-refused.h"
#include "roamd-nft.h"

#define REFUSED_SET   "refused"  /* IPv4 */
#define REFUSED_SET6  "refused6" /* IPv6: a count is news only while its family is online */
#define REFUSED_CHAIN "refused"
/* Before the usual filter tables (0) and the firewall's chains: a reset counts even when a
 * later chain drops it. */
#define REFUSED_PRIO          (-160)
#define REFUSED_SET_SIZE      1024
#define NFT_TYPE_IFINDEX      20
#define NFT_TYPE_INET_SERVICE 13
#define SYNWATCH_CHAIN        "synwatch"
#define SYNSEEN_SET           "synseen"
/* A SYN sent again within this of the last one from the same port is a retransmission: TCP
 * sends its first ones 1, 2 and 4 s apart; later ones (8 s and more) have had their look. */
#define SYNSEEN_TIMEOUT_MS 5000
#define SYNSEEN_SIZE       4096
/* At most this many wake-ups a second from each rule that logs (a burst of them is read as
 * one anyway): a portal that refuses a busy machine's every connection costs no more. */
#define SIGN_LOG_RATE    4
#define TCP_FLAGS_OFFSET 13
#define TCP_SEQ_OFFSET   4
#define TH_FIN           0x01
#define TH_SYN           0x02
#define TH_RST           0x04
#define TH_ACK           0x10

struct NftRefused {
        struct mnl_socket *nl;
        uint32_t seq;
};

static int e_count(struct nftnl_rule *r, const char *set)
{
        struct nftnl_expr *e;
        int k = nft_expr_meta(r, NFT_META_IIF, NFT_REG_1);

        e = nftnl_expr_alloc("dynset");
        if (!e)
                return -ENOMEM;
        nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
        nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_UPDATE);
        nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
        return k | nft_rule_add_expr(r, e);
}

/* The rule's packet wakes roamd (NFLOG group NFT_SIGN_LOG_GROUP), a few times a second at
 * most. */
static int e_log(struct nftnl_rule *r)
{
        struct nftnl_expr *l = nftnl_expr_alloc("limit"), *g;

        if (!l)
                return -ENOMEM;
        nftnl_expr_set_u64(l, NFTNL_EXPR_LIMIT_RATE, SIGN_LOG_RATE);
        nftnl_expr_set_u64(l, NFTNL_EXPR_LIMIT_UNIT, 1); /* per second */
        nftnl_expr_set_u32(l, NFTNL_EXPR_LIMIT_BURST, SIGN_LOG_RATE);
        nftnl_expr_set_u32(l, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
        if (nft_rule_add_expr(r, l) < 0)
                return -ENOMEM;
        g = nftnl_expr_alloc("log");
        if (!g)
                return -ENOMEM;
        nftnl_expr_set_u16(g, NFTNL_EXPR_LOG_GROUP, NFT_SIGN_LOG_GROUP);
        return nft_rule_add_expr(r, g);
}

/* TCP, flags SYN alone (a connection's first packet, or the same sent again), its source
 * port in register 1. */
static int syn_match(struct nftnl_rule *r)
{
        uint8_t tcp = IPPROTO_TCP, flags = TH_SYN, mask = TH_RST | TH_SYN | TH_ACK | TH_FIN;
        int k = 0;

        k |= nft_expr_meta(r, NFT_META_L4PROTO, NFT_REG_1);
        k |= nft_expr_cmp_eq(r, NFT_REG_1, &tcp, sizeof(tcp));
        k |= nft_expr_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, TCP_FLAGS_OFFSET, 1, NFT_REG_1);
        k |= nft_expr_and(r, NFT_REG_1, &mask, sizeof(mask));
        k |= nft_expr_cmp_eq(r, NFT_REG_1, &flags, sizeof(flags));
        k |= nft_expr_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 2, NFT_REG_1); /* sport */
        return k;
}

/* Chain `synwatch` (output): a SYN from a port that sent one less than SYNSEEN_TIMEOUT_MS
 * ago is the same connection's SYN sent again, unanswered for a second at least: logged,
 * which wakes roamd to look at the sockets waiting for an answer. Every SYN then (re)starts
 * its port's timeout in set `synseen`. The ports of a connection that was answered linger
 * there for the timeout and are never seen again with SYN alone, unless the port is used
 * again at once: a look that finds nothing, no harm. */
static int synwatch_rules(NftTxn *t)
{
        struct nftnl_rule *r = nft_rule_new_in(NFT_TABLE_NAME, SYNWATCH_CHAIN);
        struct nftnl_expr *e;
        int k;

        if (!r)
                return -ENOMEM;
        k = syn_match(r);
        k |= nft_expr_lookup_in(r, NFT_REG_1, SYNSEEN_SET);
        k |= e_log(r);
        k = nft_txn_add_rule(t, r, k);
        if (k < 0)
                return k;
        r = nft_rule_new_in(NFT_TABLE_NAME, SYNWATCH_CHAIN);
        if (!r)
                return -ENOMEM;
        k = syn_match(r);
        e = nftnl_expr_alloc("dynset");
        if (e) {
                nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
                nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_UPDATE);
                nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, SYNSEEN_SET);
                nftnl_expr_set_u64(e, NFTNL_EXPR_DYNSET_TIMEOUT, SYNSEEN_TIMEOUT_MS);
        }
        k |= nft_rule_add_expr(r, e);
        return nft_txn_add_rule(t, r, k);
}

/* One rule per family: TCP, RST|ACK without SYN, sequence 0, source off the LAN sets. */
static int refused_rule(NftTxn *t, int family)
{
        struct nftnl_rule *r = nft_rule_new_in(NFT_TABLE_NAME, REFUSED_CHAIN);
        uint8_t tcp = IPPROTO_TCP, flags = TH_RST | TH_ACK, mask = TH_RST | TH_SYN | TH_ACK;
        uint16_t loopback = ARPHRD_LOOPBACK; /* iiftype: host byte order, 2 bytes */
        uint32_t zero = 0;
        int k = 0;

        if (!r)
                return -ENOMEM;
        k |= nft_expr_nfproto(r, family);
        /* not loopback: a local client refused by a local port (roamd's own gpsd client,
         * every 30 s while gpsd does not run) says nothing of a link, and would wake roamd */
        k |= nft_expr_meta(r, NFT_META_IIFTYPE, NFT_REG_1);
        k |= nft_expr_cmp(r, NFT_REG_1, NFT_CMP_NEQ, &loopback, sizeof(loopback));
        k |= nft_expr_meta(r, NFT_META_L4PROTO, NFT_REG_1);
        k |= nft_expr_cmp_eq(r, NFT_REG_1, &tcp, sizeof(tcp));
        k |= nft_expr_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, TCP_FLAGS_OFFSET, 1, NFT_REG_1);
        k |= nft_expr_and(r, NFT_REG_1, &mask, sizeof(mask));
        k |= nft_expr_cmp_eq(r, NFT_REG_1, &flags, sizeof(flags));
        k |= nft_expr_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, TCP_SEQ_OFFSET, 4, NFT_REG_1);
        k |= nft_expr_cmp_eq(r, NFT_REG_1, &zero, sizeof(zero));
        if (family == AF_INET)
                k |= nft_expr_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 12, 4,
                                      NFT_REG_1); /* ip saddr */
        else
                k |= nft_expr_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 8, 16,
                                      NFT_REG_1); /* ip6 saddr */
        k |= nft_expr_lookup_not_in(r, NFT_REG_1, family == AF_INET ? "lan4" : "lan6");
        k |= e_count(r, family == AF_INET ? REFUSED_SET : REFUSED_SET6);
        k |= e_log(r);
        return nft_txn_add_rule(t, r, k);
}

int nft_refused_install(NftTxn *t)
{
        int r;

        /* filled from the packet path (dynset), each element with a counter */
        r = nft_txn_new_set(t, REFUSED_SET, NFT_TYPE_IFINDEX, sizeof(uint32_t), NFT_SET_EVAL,
                            REFUSED_SET_SIZE, false, true);
        if (r >= 0)
                r = nft_txn_new_set(t, REFUSED_SET6, NFT_TYPE_IFINDEX, sizeof(uint32_t),
                                    NFT_SET_EVAL, REFUSED_SET_SIZE, false, true);
        if (r >= 0)
                r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, REFUSED_CHAIN, "filter", NF_INET_LOCAL_IN,
                                  REFUSED_PRIO);
        if (r >= 0)
                r = refused_rule(t, AF_INET);
        if (r >= 0)
                r = refused_rule(t, AF_INET6);
        if (r >= 0)
                r = nft_txn_new_set(t, SYNSEEN_SET, NFT_TYPE_INET_SERVICE, sizeof(uint16_t),
                                    NFT_SET_EVAL | NFT_SET_TIMEOUT, SYNSEEN_SIZE, false, false);
        if (r >= 0)
                r = nft_txn_chain(t, NFT_MSG_NEWCHAIN, SYNWATCH_CHAIN, "filter", NF_INET_LOCAL_OUT,
                                  REFUSED_PRIO);
        if (r >= 0)
                r = synwatch_rules(t);
        return r;
}

int nft_refused_new(NftRefused **ret)
{
        NftRefused *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->seq = (uint32_t)time(NULL);
        *ret = r;
        return 0;
}

static void socket_close(NftRefused *r)
{
        if (r->nl)
                mnl_socket_close(r->nl);
        r->nl = NULL;
}

NftRefused *nft_refused_free(NftRefused *r)
{
        if (!r)
                return NULL;
        socket_close(r);
        free(r);
        return NULL;
}

typedef struct Dump {
        NftRefusedCount *counts;
        size_t n;
        int family; /* of the set dumped now */
        int error;
} Dump;

static int on_elem(struct nftnl_expr *e, void *userdata)
{
        uint64_t *packets = userdata;
        const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

        if (name && streq(name, "counter"))
                *packets = nftnl_expr_get_u64(e, NFTNL_EXPR_CTR_PACKETS);
        return 0;
}

static int on_elems_msg(const struct nlmsghdr *nlh, void *userdata)
{
        Dump *d = userdata;
        struct nftnl_set *s = nftnl_set_alloc();
        struct nftnl_set_elems_iter *it;
        struct nftnl_set_elem *el;

        if (!s) {
                d->error = -ENOMEM;
                return MNL_CB_ERROR;
        }
        if (nftnl_set_elems_nlmsg_parse(nlh, s) < 0) {
                nftnl_set_free(s);
                d->error = -EBADMSG;
                return MNL_CB_ERROR;
        }
        it = nftnl_set_elems_iter_create(s);
        for (el = it ? nftnl_set_elems_iter_next(it) : NULL; el;
             el = nftnl_set_elems_iter_next(it)) {
                uint32_t len = 0;
                const void *key = nftnl_set_elem_get(el, NFTNL_SET_ELEM_KEY, &len);
                NftRefusedCount *n, c = {.family = d->family};

                if (!key || len != sizeof(uint32_t))
                        continue;
                memcpy(&c.ifindex, key, sizeof(c.ifindex));
                (void)nftnl_set_elem_expr_foreach(el, on_elem, &c.packets);
                n = reallocarray(d->counts, d->n + 1, sizeof(*n));
                if (!n) {
                        d->error = -ENOMEM;
                        break;
                }
                d->counts = n;
                n[d->n++] = c;
        }
        nftnl_set_elems_iter_destroy(it);
        nftnl_set_free(s);
        return d->error < 0 ? MNL_CB_ERROR : MNL_CB_OK;
}

static int request(NftRefused *r, struct nlmsghdr *nlh, Dump *d)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        uint32_t seq = nlh->nlmsg_seq;

        if (mnl_socket_sendto(r->nl, nlh, nlh->nlmsg_len) < 0)
                return -errno;
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(r->nl, buf, sizeof(buf));
                int k;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return errno == EAGAIN ? -ETIMEDOUT : -errno;
                }
                k = mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(r->nl), on_elems_msg, d);
                if (k < 0)
                        return d->error < 0 ? d->error : -errno;
                if (k == MNL_CB_STOP)
                        return 0;
        }
}

int nft_refused_read(NftRefused *r, NftRefusedCount **ret, size_t *ret_n)
{
        char hdr[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh;
        struct nftnl_set *s;
        Dump d = {};
        int k;

        if (!r->nl) {
                r->nl = mnl_socket_open(NETLINK_NETFILTER);
                if (!r->nl)
                        return -errno;
                if (mnl_socket_bind(r->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
                    socket_bound_recv(mnl_socket_get_fd(r->nl), NFT_DUMP_WAIT_USEC) < 0) {
                        k = -errno;
                        socket_close(r);
                        return k;
                }
        }
        for (int i = 0; i < 2; i++) {
                s = nftnl_set_alloc();
                if (!s) {
                        free(d.counts);
                        return -ENOMEM;
                }
                d.family = i ? AF_INET6 : AF_INET;
                nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
                nftnl_set_set_str(s, NFTNL_SET_TABLE, NFT_TABLE_NAME);
                nftnl_set_set_str(s, NFTNL_SET_NAME, i ? REFUSED_SET6 : REFUSED_SET);
                nlh = nftnl_nlmsg_build_hdr(hdr, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP,
                                            ++r->seq);
                nftnl_set_elems_nlmsg_build_payload(nlh, s);
                nftnl_set_free(s);
                k = request(r, nlh, &d);
                if (k < 0) {
                        /* the rest of a failed dump may still be queued: a fresh socket next
                         * time */
                        socket_close(r);
                        free(d.counts);
                        return k;
                }
        }
        *ret = d.counts;
        *ret_n = d.n;
        return 0;
}
