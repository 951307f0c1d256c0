/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-nflog.h"

/* a config request's ack comes from the kernel at once */
#define NFLOG_ACK_WAIT_USEC (2 * USEC_PER_SEC)

struct NflogWatch {
        struct mnl_socket *nl;
        sd_event_source *io;
        uint16_t group;
        uint32_t seq;
        nflog_cb_t cb;
        void *userdata;
};

/* One NFULNL_MSG_CONFIG request for the group, answered with an ack (or the kernel's
 * error: EBUSY when another socket has bound the group). */
static int nflog_config(NflogWatch *w, const void *attr, uint16_t type, size_t len)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct nfgenmsg *g;
        uint32_t seq = ++w->seq;
        ssize_t n;
        int r;

        nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        nlh->nlmsg_seq = seq;
        g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
        g->nfgen_family = AF_UNSPEC;
        g->version = NFNETLINK_V0;
        g->res_id = htons(w->group);
        mnl_attr_put(nlh, type, len, attr);
        if (mnl_socket_sendto(w->nl, nlh, nlh->nlmsg_len) < 0)
                return negative_errno();
        for (;;) {
                n = mnl_socket_recvfrom(w->nl, buf, sizeof(buf));
                if (n < 0)
                        return errno == EAGAIN ? -ETIMEDOUT : negative_errno();
                r = mnl_cb_run(buf, (size_t)n, seq, mnl_socket_get_portid(w->nl), NULL, NULL);
                if (r < 0)
                        return negative_errno();
                if (r == MNL_CB_STOP)
                        return 0;
        }
}

static int on_io(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        NflogWatch *w = userdata;
        char buf[MNL_SOCKET_BUFFER_SIZE];
        bool any = false;

        /* all that is queued, then one call: a burst of logged packets is one wake-up */
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

                if (n > 0 || (n < 0 && errno == ENOBUFS)) {
                        any = true; /* ENOBUFS: some were lost, which still says "some" */
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                break;
        }
        if (any) {
                w->cb(w->userdata);
        }
        return 0;
}

int nflog_watch_new(sd_event *e, uint16_t group, nflog_cb_t cb, void *userdata, NflogWatch **ret)
{
        struct nfulnl_msg_config_cmd bind = {.command = NFULNL_CFG_CMD_BIND};
        /* the metadata only: nothing of the packet is read */
        struct nfulnl_msg_config_mode mode = {.copy_range = 0, .copy_mode = NFULNL_COPY_META};
        NflogWatch *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->group = group;
        w->cb = cb;
        w->userdata = userdata;
        w->seq = (uint32_t)clock_now_usec(CLOCK_MONOTONIC);
        w->nl = mnl_socket_open(NETLINK_NETFILTER);
        if (!w->nl) {
                r = negative_errno();
                goto fail;
        }
        if (mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0 ||
            socket_bound_recv(mnl_socket_get_fd(w->nl), NFLOG_ACK_WAIT_USEC) < 0) {
                r = negative_errno();
                goto fail;
        }
        r = nflog_config(w, &bind, NFULA_CFG_CMD, sizeof(bind));
        if (r >= 0)
                r = nflog_config(w, &mode, NFULA_CFG_MODE, sizeof(mode));
        if (r >= 0)
                r = sd_event_add_io(e, &w->io, mnl_socket_get_fd(w->nl), EPOLLIN, on_io, w);
        if (r < 0)
                goto fail;
        (void)sd_event_source_set_description(w->io, "nflog");
        *ret = w;
        return 0;
fail:
        nflog_watch_free(w);
        return r;
}

NflogWatch *nflog_watch_free(NflogWatch *w)
{
        if (!w)
                return NULL;
        sd_event_source_disable_unref(w->io);
        if (w->nl)
                mnl_socket_close(w->nl); /* the kernel unbinds the group with it */
        free(w);
        return NULL;
}
