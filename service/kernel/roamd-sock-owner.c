/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-sock-diag.h"
#include "roamd-sock-owner.h"

typedef struct Match {
        int family;       /* of the address asked about */
        uint8_t addr[16]; /* its bytes (4 for IPv4) */
        uint16_t port;    /* host order */
        uid_t *uids;
        size_t max, n;
} Match;

static bool listener_matches(const Match *m, const struct inet_diag_msg *d)
{
        static const uint8_t zero[16] = {0};
        static const uint8_t v4mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        const uint8_t *src = (const uint8_t *)d->id.idiag_src;

        if (ntohs(d->id.idiag_sport) != m->port)
                return false;
        if (d->idiag_family == AF_INET)
                return m->family == AF_INET &&
                       (memcmp(src, m->addr, 4) == 0 || memcmp(src, zero, 4) == 0);
        if (d->idiag_family != AF_INET6)
                return false;
        if (memcmp(src, zero, 16) == 0)
                return true; /* [::]: IPv6, and IPv4 too unless IPV6_V6ONLY (not told here) */
        if (m->family == AF_INET6)
                return memcmp(src, m->addr, 16) == 0;
        return memcmp(src, v4mapped, 12) == 0 && memcmp(src + 12, m->addr, 4) == 0;
}

static int on_sock(const struct nlmsghdr *nlh, void *userdata)
{
        Match *m = userdata;
        const struct inet_diag_msg *d = mnl_nlmsg_get_payload(nlh);

        if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY || mnl_nlmsg_get_payload_len(nlh) < sizeof(*d))
                return MNL_CB_OK;
        if (d->idiag_state != TCP_LISTEN || !listener_matches(m, d))
                return MNL_CB_OK;
        if (m->n < m->max)
                m->uids[m->n] = (uid_t)d->idiag_uid;
        m->n++;
        return MNL_CB_OK;
}

int tcp_listener_uids(const struct sockaddr *sa, socklen_t len, uid_t *uids, size_t max,
                      size_t *ret_n)
{
        Match m = {.family = sa->sa_family, .uids = uids, .max = max};
        struct mnl_socket *nl;
        int r;

        if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
                memcpy(m.addr, &in->sin_addr, 4);
                m.port = ntohs(in->sin_port);
        } else if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
                memcpy(m.addr, &in6->sin6_addr, 16);
                m.port = ntohs(in6->sin6_port);
        } else
                return -EAFNOSUPPORT;
        nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
        if (!nl)
                return negative_errno();
        if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                r = negative_errno();
                mnl_socket_close(nl);
                return r;
        }
        r = sock_diag_dump_tcp(nl, 1, AF_INET, 1u << TCP_LISTEN, on_sock, &m);
        if (r >= 0)
                r = sock_diag_dump_tcp(nl, 2, AF_INET6, 1u << TCP_LISTEN, on_sock, &m);
        mnl_socket_close(nl);
        if (r < 0)
                return r;
        *ret_n = m.n;
        return 0;
}
