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
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <inttypes.h>
#include <stdlib.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-fault.h"
#include "roamd-nft-internal.h"
#include "roamd-nft.h"

/* The generation's answer comes at once; a silent kernel must not hold roamd. */
#define NFT_GENID_TIMEOUT_MS 5000

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
        /* The table stays: roamd exiting must not open the firewall. A commit in flight
         * stays its owner's to free; it no longer has an engine. */
        if (e->inflight) {
                e->inflight->engine = NULL;
                e->inflight->timer = sd_event_source_disable_unref(e->inflight->timer);
        }
        sd_event_source_disable_unref(e->io);
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
static int engine_read(NftEngine *e);
static void engine_tell_soon(NftEngine *e);

int nft_txn_new(NftEngine *e, NftTxn **ret)
{
        NftTxn *t;
        int r;

        /* An asynchronous commit's answer is in the socket already (nfnetlink answers inside
         * sendmsg()): this transaction builds on what the kernel said. */
        if (e->inflight)
                (void)engine_read(e);
        engine_tell_soon(e);
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
        /* Freed while its answer is awaited: the kernel may hold it or not. The next
         * transaction settles that by the generation (engine_settle()). */
        if (t->engine && t->engine->inflight == t) {
                t->engine->inflight = NULL;
                if (!t->answered)
                        t->engine->uncertain = true;
        }
        sd_event_source_disable_unref(t->timer);
        sd_event_source_disable_unref(t->hold);
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

/* ---- objects ---- */

struct nftnl_rule *nft_rule_new(const char *chain)
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
int nft_txn_add_rule(NftTxn *t, struct nftnl_rule *r, int error)
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

int nft_txn_flush_chain(NftTxn *t, const char *chain)
{
        struct nftnl_rule *r = nft_rule_new(chain);
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

struct nftnl_set *nft_set_new(const char *name)
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
        struct nftnl_set *s = nft_set_new(name);
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

int nft_txn_del_set(NftTxn *t, const char *name)
{
        struct nftnl_set *s = nft_set_new(name);
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
int nft_txn_elems(NftTxn *t, struct nftnl_set *s, uint16_t type)
{
        struct nlmsghdr *nlh;

        nlh = txn_msg(t, type, type == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0);
        nftnl_set_elems_nlmsg_build_payload(nlh, s);
        txn_next(t);
        return 0;
}

int nft_txn_table(NftTxn *t, uint16_t type)
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
 * silent socket means something went wrong (a lost ACK). */
#define NFT_ANSWER_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* After an error the kernel may stop answering (a batch aborted for lack of memory): what
 * else it has to say is already on its way. */
#define NFT_AFTER_ERROR_USEC (1 * USEC_PER_SEC)

/* Ends the batch, asks for an ACK on its last real message only (errors come for any
 * message anyway) and sends it in one sendmsg(). Returns the batch-end's sequence number, or
 * a negative errno (logged). */
static int64_t txn_send(NftTxn *t)
{
        NftEngine *e = t->engine;
        uint32_t end_seq;

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
        return end_seq;
}

/* The kernel's outcome of a sent transaction is known (or given up on): logs it, and what
 * the engine knows of the table (levels, slots) follows only an accepted one. */
static void txn_settle(NftTxn *t, int result)
{
        NftEngine *e = t->engine;

        t->answered = true;
        t->result = result;
        if (result == -ETIMEDOUT) {
                e->uncertain = true;
                t->result =
                    log_error_errno(ETIMEDOUT,
                                    "nftables did not answer the transaction (%zu "
                                    "messages) within %d ms: %m",
                                    t->n_msgs, (int)(NFT_ANSWER_TIMEOUT_USEC / USEC_PER_MSEC));
                return;
        }
        if (result < 0) {
                /* the answers were lost (ENOBUFS): the ACK may have been among them */
                e->uncertain = true;
                t->result = log_error_errno(-result, "Failed to read nftables answer: %m");
                return;
        }
        if (t->first_error == 0 && fault_check(FAULT_NFT_COMMIT_LOST) < 0) {
                /* applied, but roamd acts as if the answer never came */
                e->uncertain = true;
                t->result = log_error_errno(ETIMEDOUT,
                                            "nftables did not answer the transaction (%zu "
                                            "messages; fault injection: answer lost): %m",
                                            t->n_msgs);
                return;
        }
        if (t->first_error < 0) {
                if (t->error_seq == t->first_seq || t->error_seq == t->end_seq)
                        t->result = log_error_errno(-t->first_error,
                                                    "nftables refused the whole transaction%s: %m",
                                                    refusal_hint(-t->first_error));
                else
                        t->result = log_error_errno(-t->first_error,
                                                    "nftables refused the transaction (%zu "
                                                    "messages, at message %u)%s: %m",
                                                    t->n_msgs, t->error_seq - t->first_seq,
                                                    refusal_hint(-t->first_error));
                return;
        }
        if (t->set_levels)
                memcpy(e->levels, t->levels, sizeof(e->levels));
        if (t->set_slots)
                memcpy(e->slots, t->slots, sizeof(e->slots));
}

/* One answer of the kernel's, for t if in its sequence range: the generation read before
 * the batch, an error, or the last message's ACK. */
static void txn_feed(NftTxn *t, const struct nlmsghdr *nlh)
{
        const struct nlmsgerr *err;

        if (!t || !t->sent || t->answered)
                return;
        if (t->gen_seq != 0 && nlh->nlmsg_seq == t->gen_seq) {
                if (nlh->nlmsg_type != NLMSG_ERROR &&
                    on_gen(nlh, &t->engine->genid_sent) == MNL_CB_STOP)
                        t->engine->genid_known = true;
                return;
        }
        /* Answers to an earlier transaction (one that timed out) are not this one's: only
         * the batch's own sequence range counts. */
        if (nlh->nlmsg_type != NLMSG_ERROR || nlh->nlmsg_seq < t->first_seq ||
            nlh->nlmsg_seq > t->end_seq || nlh->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                return;
        err = mnl_nlmsg_get_payload(nlh);
        if (err->error != 0 && t->first_error == 0) {
                t->first_error = err->error;
                t->error_seq = nlh->nlmsg_seq;
        }
        /* The kernel refuses a whole batch (no CAP_NET_ADMIN, no nf_tables) with one error
         * for the batch-begin message and nothing more. */
        if (nlh->nlmsg_seq == t->last_seq ||
            (err->error != 0 && (nlh->nlmsg_seq == t->first_seq || nlh->nlmsg_seq == t->end_seq)))
                txn_settle(t, 0);
}

/* Reads what the socket holds now, without waiting, and hands each answer to the commits
 * awaiting one (the asynchronous one, and a synchronous one). Returns 0, or a negative errno
 * (those commits then settle with it). */
static int engine_read(NftEngine *e)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];

        for (;;) {
                ssize_t n = recv(mnl_socket_get_fd(e->nl), buf, sizeof(buf), MSG_DONTWAIT);
                int len;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n < 0) {
                        int r = -errno;
                        if (e->inflight && e->inflight->sent && !e->inflight->answered)
                                txn_settle(e->inflight, r);
                        if (e->sync && !e->sync->answered)
                                txn_settle(e->sync, r);
                        return r;
                }
                len = (int)n;
                for (struct nlmsghdr *nlh = (struct nlmsghdr *)buf; mnl_nlmsg_ok(nlh, len);
                     nlh = mnl_nlmsg_next(nlh, &len)) {
                        txn_feed(e->inflight, nlh);
                        txn_feed(e->sync, nlh);
                }
        }
}

/* An asynchronous commit whose answer was read outside its own source (by a synchronous
 * commit, or a new transaction) is told on a turn of the loop of its own, never inside
 * another module's call: its timer fires at once. */
static void engine_tell_soon(NftEngine *e)
{
        NftTxn *t = e ? e->inflight : NULL;

        if (!t || !t->answered || !t->timer)
                return;
        if (sd_event_source_set_time(t->timer, 1) >= 0)
                (void)sd_event_source_set_enabled(t->timer, SD_EVENT_ONESHOT);
}

/* Everything up to the send, shared by both ways to commit: 0 when there is nothing to send
 * (an empty transaction), 1 when sent, else a negative errno (logged; nothing was sent). */
static int txn_start(NftTxn *t)
{
        NftEngine *e = t->engine;
        int64_t r64;
        int r;

        if (!e)
                return -ESHUTDOWN;
        if (t->sent)
                return -EALREADY;
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

        if (fault_check(FAULT_NFT_COMMIT_UNSENT) < 0) {
                r = read_genid(e, &e->genid_sent);
                e->genid_known = r >= 0;
                e->uncertain = true;
                return log_error_errno(ETIMEDOUT,
                                       "nftables did not answer the transaction (%zu messages; "
                                       "fault injection: never sent): %m",
                                       t->n_msgs);
        }

        /* The generation before sending, asked for without waiting (the kernel answers in
         * order, before the batch's): should the batch's answer not come, the next
         * transaction learns from it whether the kernel applied this one. */
        e->genid_known = false;
        {
                char buf[NLMSG_HDRLEN + 64];
                struct nlmsghdr *nlh;

                t->gen_seq = e->seq++;
                nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETGEN, AF_UNSPEC, 0, t->gen_seq);
                if (mnl_socket_sendto(e->nl, nlh, nlh->nlmsg_len) < 0)
                        t->gen_seq = 0; /* the batch's own answer names the cause */
        }

        r64 = txn_send(t);
        if (r64 < 0)
                return (int)r64;
        t->end_seq = (uint32_t)r64;
        t->sent = true;
        return 1;
}

static uint64_t mono_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

int nft_txn_commit(NftTxn *t)
{
        NftEngine *e = t->engine;
        struct pollfd pfd;
        uint64_t deadline;
        int r;

        /* The answer of an asynchronous commit is in the socket already (nfnetlink answers
         * inside sendmsg()): read first, so this one builds on what the kernel said. */
        if (e && e->inflight)
                (void)engine_read(e);
        engine_tell_soon(e);
        r = txn_start(t);
        if (r <= 0)
                return r;
        e->sync = t;
        pfd = (struct pollfd){.fd = mnl_socket_get_fd(e->nl), .events = POLLIN};
        deadline = mono_usec() + NFT_ANSWER_TIMEOUT_USEC;
        while (!t->answered) {
                uint64_t n = mono_usec();

                if (t->first_error != 0)
                        deadline = MIN(deadline, n + NFT_AFTER_ERROR_USEC);
                if (n >= deadline) {
                        txn_settle(t, t->first_error != 0 ? 0 : -ETIMEDOUT);
                        break;
                }
                r = poll(&pfd, 1, (int)((deadline - n + USEC_PER_MSEC - 1) / USEC_PER_MSEC));
                if (r < 0 && errno != EINTR) {
                        txn_settle(t, -errno);
                        break;
                }
                if (r > 0)
                        (void)engine_read(e);
        }
        e->sync = NULL;
        engine_tell_soon(e);
        return t->result;
}

/* Tells the asynchronous commit's owner its outcome, unless a test holds it back. */
static void txn_deliver(NftTxn *t)
{
        NftEngine *e = t->engine;

        if (!t->answered || t->held || !t->done)
                return;
        if (e && e->inflight == t)
                e->inflight = NULL;
        t->timer = sd_event_source_disable_unref(t->timer);
        t->done(t, t->result, t->userdata); /* may free t */
}

static int on_engine_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        NftEngine *e = userdata;
        NftTxn *t = e->inflight;

        (void)engine_read(e);
        if (!t)
                return 0;
        if (t->answered) {
                txn_deliver(t);
                return 0;
        }
        /* the deadline only ever comes closer: 1 s after the first error */
        if (t->first_error != 0 && t->timer && !t->error_deadline) {
                t->error_deadline = true;
                (void)sd_event_source_set_time_relative(t->timer, NFT_AFTER_ERROR_USEC);
        }
        return 0;
}

static int on_txn_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        NftTxn *t = userdata;

        if (!t->answered)
                txn_settle(t, t->first_error != 0 ? 0 : -ETIMEDOUT);
        if (t->held)
                return 0; /* a test's hold ends by its file, not by time */
        txn_deliver(t);
        return 0;
}

static int on_hold_released(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
        NftTxn *t = userdata;

        log_notice("Fault injection: the held nftables answer is read now.");
        t->held = false;
        t->hold = sd_event_source_disable_unref(t->hold);
        if (t->engine)
                (void)engine_read(t->engine);
        if (t->answered)
                txn_deliver(t);
        return 0;
}

/* Test hook (fault nft-answer-hold): the outcome of this commit is told only once the fault
 * file is written again, so a test can show the loop serving others meanwhile, by events. */
static void txn_hold(NftTxn *t, sd_event *event)
{
        const char *file = fault_file_path();
        int r;

        if (!file || fault_check(FAULT_NFT_ANSWER_HOLD) >= 0)
                return;
        r = sd_event_add_inotify(event, &t->hold, file, IN_CLOSE_WRITE | IN_MOVED_TO,
                                 on_hold_released, t);
        if (r < 0) {
                log_warning_errno(r, "Fault injection: cannot watch %s: %m", file);
                return;
        }
        t->held = true;
        log_notice("Fault injection: the nftables answer is held until %s is written.", file);
}

int nft_txn_commit_async(NftTxn *t, sd_event *event, nft_commit_done_t done, void *userdata)
{
        NftEngine *e = t->engine;
        int r;

        if (!e || !event || !done)
                return -EINVAL;
        if (e->inflight)
                return -EBUSY;
        if (!e->io) {
                r = sd_event_add_io(event, &e->io, mnl_socket_get_fd(e->nl), EPOLLIN, on_engine_io,
                                    e);
                if (r < 0)
                        return log_error_errno(r, "Cannot watch the nfnetlink socket: %m");
                (void)sd_event_source_set_description(e->io, "nft-answer");
                /* The answer is queued by the time sendmsg() returns: told before the bus and
                 * netlink are read (the reconciler's own priority), so what a client reads
                 * next already says the kernel's outcome, as when the commit waited. */
                (void)sd_event_source_set_priority(e->io, SD_EVENT_PRIORITY_IMPORTANT + 1);
        }
        /* the deadline's source exists before the send: nothing sent goes unwatched */
        r = sd_event_add_time_relative(event, &t->timer, CLOCK_MONOTONIC, NFT_ANSWER_TIMEOUT_USEC,
                                       0, on_txn_timer, t);
        if (r < 0)
                return log_error_errno(r, "Cannot time the nftables commit: %m");
        (void)sd_event_source_set_description(t->timer, "nft-answer-timeout");
        r = txn_start(t);
        if (r <= 0) {
                t->timer = sd_event_source_disable_unref(t->timer);
                return r;
        }
        t->done = done;
        t->userdata = userdata;
        e->inflight = t;
        txn_hold(t, event);
        return 1;
}

bool nft_engine_settle(NftEngine *e)
{
        NftTxn *t = e ? e->inflight : NULL;

        if (!t || t->held)
                return false;
        (void)engine_read(e);
        if (!t->answered)
                return false;
        txn_deliver(t);
        return true;
}

bool nft_engine_busy(NftEngine *e)
{
        return e && e->inflight;
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
