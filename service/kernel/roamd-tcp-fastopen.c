/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <stddef.h>
#include <linux/genetlink.h>
#include <linux/tcp.h>
#include <linux/tcp_metrics.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "roamd-tcp-fastopen.h"

static int on_family(const struct nlmsghdr *nlh, void *data)
{
        struct nlattr *a;

        mnl_attr_for_each(a, nlh, sizeof(struct genlmsghdr))
        {
                if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID &&
                    mnl_attr_validate(a, MNL_TYPE_U16) >= 0)
                        *(int *)data = mnl_attr_get_u16(a);
        }
        return MNL_CB_OK;
}

/* One request and its answers (cb for each; NULL: only the ACK). */
static int genl_call(struct mnl_socket *nl, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        unsigned portid = mnl_socket_get_portid(nl);
        ssize_t n;
        int r;

        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        nlh->nlmsg_seq = (unsigned)time(NULL);
        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                return -errno;
        do {
                n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
                if (n < 0)
                        return -errno;
                r = mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, cb, data);
        } while (r > 0);
        return r < 0 ? -errno : 0;
}

static struct nlmsghdr *genl_put(char *buf, int type, int cmd, int version)
{
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        struct genlmsghdr *g;

        nlh->nlmsg_type = type;
        g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
        g->cmd = cmd;
        g->version = version;
        return nlh;
}

/* TCP_METRICS_CMD_DEL for the destination (no source address: every source's entry goes).
 * The kernel answers it within the send: nothing here waits on the network. */
int tcp_fastopen_forget(int family, const void *addr)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct mnl_socket *nl;
        struct nlmsghdr *nlh;
        int id = -1, r;

        if (family != AF_INET && family != AF_INET6)
                return -EAFNOSUPPORT;
        nl = mnl_socket_open2(NETLINK_GENERIC, SOCK_CLOEXEC);
        if (!nl)
                return -errno;
        if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                r = -errno;
                goto out;
        }
        nlh = genl_put(buf, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
        mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, TCP_METRICS_GENL_NAME);
        r = genl_call(nl, nlh, on_family, &id);
        if (r < 0)
                goto out;
        if (id < 0) {
                r = -EPROTO;
                goto out;
        }
        nlh = genl_put(buf, id, TCP_METRICS_CMD_DEL, TCP_METRICS_GENL_VERSION);
        if (family == AF_INET)
                mnl_attr_put(nlh, TCP_METRICS_ATTR_ADDR_IPV4, sizeof(struct in_addr), addr);
        else
                mnl_attr_put(nlh, TCP_METRICS_ATTR_ADDR_IPV6, sizeof(struct in6_addr), addr);
        r = genl_call(nl, nlh, NULL, NULL);
        if (r == -ESRCH || r == -ENOENT) /* nothing kept for it */
                r = 0;
out:
        mnl_socket_close(nl);
        return r;
}

bool tcp_fastopen_syn_lost(int fd)
{
        struct tcp_info info;
        socklen_t len = sizeof(info);

        memset(&info, 0, sizeof(info));
        if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) < 0 ||
            len < offsetof(struct tcp_info, tcpi_rto))
                return false;
        if (info.tcpi_fastopen_client_fail == TFO_SYN_RETRANSMITTED)
                return true;
        /* No cookie kept: the SYN asked for one (an option some middleboxes drop SYNs for;
         * its retransmission goes without it). A retransmission later in the connection
         * looks the same here: taken as that loss too (Fast Open is only a speed-up). */
        return info.tcpi_fastopen_client_fail == TFO_COOKIE_UNAVAILABLE &&
               info.tcpi_total_retrans > 0;
}
