/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <net/if.h>
#include <netlink/socket.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-ndopt-parse.h"
#include "roamd-ndopt.h"

typedef struct NdPortal {
        int ifindex;
        char *uri;
        bool conflict_logged; /* a lease announces another URL: said once per RA URI */
} NdPortal;

struct NdOpt {
        LinkChangedFn changed;
        void *userdata;
        struct nl_sock *sock;
        sd_event_source *io;
        NdPortal *portals;
        size_t n_portals;
};

static NdPortal *find(NdOpt *n, int ifindex)
{
        for (size_t i = 0; i < n->n_portals; i++)
                if (n->portals[i].ifindex == ifindex)
                        return &n->portals[i];
        return NULL;
}

void ndopt_forget(NdOpt *n, int ifindex)
{
        NdPortal *p;

        if (!n || !(p = find(n, ifindex)))
                return;
        free(p->uri);
        *p = n->portals[--n->n_portals];
}

/* For the log only: the kernel's name now. */
static const char *link_name(int ifindex, char buf[static IF_NAMESIZE])
{
        return ifindex > 0 && if_indextoname((unsigned)ifindex, buf) ? buf : "?";
}

static int remember(NdOpt *n, const NdUserOpt *o)
{
        char src[INET6_ADDRSTRLEN] = "?", ifname[IF_NAMESIZE];
        NdPortal *p = find(n, o->ifindex), *np;
        char *uri;

        if (p && streq(p->uri, o->portal))
                return 0; /* the periodic RA of the same router */
        uri = strdup(o->portal);
        if (!uri)
                return -ENOMEM;
        if (!p) {
                np = realloc(n->portals, sizeof(*np) * (n->n_portals + 1));
                if (!np) {
                        free(uri);
                        return -ENOMEM;
                }
                n->portals = np;
                p = &n->portals[n->n_portals++];
                *p = (NdPortal){.ifindex = o->ifindex};
        }
        free(p->uri);
        p->uri = uri;
        p->conflict_logged = false;
        if (o->has_src)
                (void)inet_ntop(AF_INET6, &o->src, src, sizeof(src));
        log_info("%s: router %s announced the captive portal API %s (RA option 37)",
                 link_name(o->ifindex, ifname), src, uri);
        n->changed(n->userdata);
        return 0;
}

static void on_message(NdOpt *n, const struct nlmsghdr *h)
{
        const char *reason = NULL;
        char ifname[IF_NAMESIZE];
        NdUserOpt o;
        int r;

        if (h->nlmsg_type != RTM_NEWNDUSEROPT)
                return;
        r = ndopt_parse(NLMSG_DATA(h), h->nlmsg_len - NLMSG_HDRLEN, &o, &reason);
        if (r < 0) {
                /* o.ifindex is set once the header was readable. */
                log_warning("%s: ignoring a router advertisement option: %s",
                            link_name(o.ifindex, ifname), reason);
                return;
        }
        if (o.has_portal && remember(n, &o) < 0)
                log_oom();
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        NdOpt *n = userdata;
        struct sockaddr_nl from = {};
        unsigned char *buf = NULL;
        int len;

        len = nl_recv(n->sock, &from, &buf, NULL);
        if (len < 0) {
                /* ENOBUFS: options were lost; routers repeat their RAs. */
                log_debug("nd user options: %s", nl_geterror(len));
                return 0;
        }
        /* Only the kernel speaks for the routers: a process could send to the group too. */
        if (len > 0 && from.nl_pid == 0) {
                struct nlmsghdr *h = (struct nlmsghdr *)buf;
                int left = len;

                for (; nlmsg_ok(h, left); h = nlmsg_next(h, &left))
                        on_message(n, h);
        } else if (len > 0)
                log_warning("ignoring nd user options sent by process %u, not the kernel",
                            from.nl_pid);
        free(buf);
        return 0;
}

NdOpt *ndopt_free(NdOpt *n)
{
        if (!n)
                return NULL;
        sd_event_source_disable_unref(n->io);
        if (n->sock)
                nl_socket_free(n->sock);
        for (size_t i = 0; i < n->n_portals; i++)
                free(n->portals[i].uri);
        free(n->portals);
        free(n);
        return NULL;
}

int ndopt_new(sd_event *event, LinkChangedFn changed, void *userdata, NdOpt **ret)
{
        NdOpt *n;
        int r;

        n = calloc(1, sizeof(*n));
        if (!n)
                return log_oom();
        n->changed = changed;
        n->userdata = userdata;
        n->sock = nl_socket_alloc();
        if (!n->sock) {
                ndopt_free(n);
                return log_oom();
        }
        nl_socket_disable_seq_check(n->sock);
        r = nl_connect(n->sock, NETLINK_ROUTE);
        if (r >= 0)
                r = nl_socket_add_membership(n->sock, RTNLGRP_ND_USEROPT);
        if (r >= 0)
                r = nl_socket_set_nonblocking(n->sock);
        if (r < 0) {
                ndopt_free(n);
                return log_error_errno(EIO, "Failed to listen for router advertisement options: %s",
                                       nl_geterror(r));
        }
        r = sd_event_add_io(event, &n->io, nl_socket_get_fd(n->sock), EPOLLIN, on_io, n);
        if (r < 0) {
                ndopt_free(n);
                return log_error_errno(r, "Failed to watch router advertisement options: %m");
        }
        (void)sd_event_source_set_description(n->io, "nd-useropt");
        *ret = n;
        return 0;
}

static bool has_ipv6_address(const LinkInfo *info)
{
        for (size_t i = 0; i < info->n_addrs; i++)
                if (info->addrs[i].addr.family == AF_INET6)
                        return true;
        return false;
}

int ndopt_fill(NdOpt *n, int ifindex, LinkInfo *info)
{
        NdPortal *p;

        if (!n || !(p = find(n, ifindex)))
                return 0;
        if (!info->carrier || !has_ipv6_address(info)) {
                log_info("%s: %s, forgetting the captive portal API of its router advertisements",
                         strempty(info->name), info->carrier ? "no IPv6 address" : "no carrier");
                ndopt_forget(n, ifindex);
                return 0;
        }
        if (info->captive_portal_url) {
                /* DHCPv4 option 114, then DHCPv6 option 103, come first. Sources that
                 * disagree are a network configuration error to log (RFC 8910 2). */
                if (!streq(info->captive_portal_url, p->uri) && !p->conflict_logged) {
                        log_warning("%s: the DHCP lease announces the captive portal API %s, "
                                    "router advertisements %s: using the lease's",
                                    strempty(info->name), info->captive_portal_url, p->uri);
                        p->conflict_logged = true;
                }
                return 0;
        }
        info->captive_portal_url = strdup(p->uri);
        return info->captive_portal_url ? 0 : -ENOMEM;
}
