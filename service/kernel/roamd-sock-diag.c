/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>

#include "roam-util.h"
#include "roamd-sock-diag.h"

int sock_diag_dump_tcp(struct mnl_socket *nl, uint32_t seq, int family, uint32_t states,
                       mnl_cb_t cb, void *data)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh;
        struct inet_diag_req_v2 *req;
        uint32_t portid = mnl_socket_get_portid(nl);
        int r;

        nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        nlh->nlmsg_seq = seq;
        req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
        req->sdiag_family = (uint8_t)family;
        req->sdiag_protocol = IPPROTO_TCP;
        req->idiag_states = states;
        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                return negative_errno();
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
                if (n < 0)
                        return negative_errno();
                r = mnl_cb_run(buf, (size_t)n, seq, portid, cb, data);
                if (r < 0)
                        return errno > 0 ? -errno : -EIO;
                if (r == MNL_CB_STOP)
                        return 0;
        }
}
