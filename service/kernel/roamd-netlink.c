/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <sys/stat.h>
#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <linux/if.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-netlink.h"

struct Netlink {
        LinkChangedFn changed;
        void *userdata;
        struct nl_cache_mngr *mngr;
        struct nl_sock *resync_sock; /* synchronous dumps after an overflow */
        struct nl_cache *links, *addrs, *routes;
        struct nl_cache *neighs; /* gateways' MAC addresses: network identity */
        sd_event_source *io_source;
        unsigned long overflows;
        /* bumped by every change of the routes cache: the syncs' LinkInfo holds only the
         * default routes, the reconciler copies every route of the main table */
        unsigned long routes_generation;
};

/* A large receive buffer so bursts (hundreds of links at once) rarely overflow; when they do
 * anyway, the caches are refilled from a fresh dump. */
#define NETLINK_RCVBUF (8 * 1024 * 1024)

static void on_change(struct nl_cache *cache, struct nl_object *obj, int action, void *userdata)
{
        Netlink *n = userdata;

        if (cache == n->routes)
                n->routes_generation++;
        n->changed(n->userdata);
}

unsigned long netlink_routes_generation(Netlink *n)
{
        return n ? n->routes_generation : 0;
}

/* Neighbours change state all the time (reachable, stale, probe): only an entry that gains or
 * loses its link-layer address can change a network's identity. */
static void on_neigh_change(struct nl_cache *cache, struct nl_object *obj, int action,
                            void *userdata)
{
        struct rtnl_neigh *ne = (struct rtnl_neigh *)obj;
        int state = rtnl_neigh_get_state(ne);
        Netlink *n = userdata;

        if (action == NL_ACT_CHANGE &&
            (state & (NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_INCOMPLETE)) != 0)
                return;
        n->changed(n->userdata);
}

int netlink_neigh_lladdr(Netlink *n, int ifindex, const IpAddr *addr, char *buf, size_t size)
{
        struct nl_addr *dst = NULL, *ll;
        struct rtnl_neigh *ne;
        int r = -ENOENT;

        if (!n || !n->neighs || !addr->text[0])
                return -ENOENT;
        if (nl_addr_parse(addr->text, addr->family, &dst) < 0)
                return -EINVAL;
        ne = rtnl_neigh_get(n->neighs, ifindex, dst);
        nl_addr_put(dst);
        if (!ne)
                return -ENOENT;
        ll = rtnl_neigh_get_lladdr(ne);
        if (ll && nl_addr_get_len(ll) == 6 &&
            !(rtnl_neigh_get_state(ne) & (NUD_INCOMPLETE | NUD_FAILED))) {
                const uint8_t *b = nl_addr_get_binary_addr(ll);
                snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4],
                         b[5]);
                r = 0;
        }
        rtnl_neigh_put(ne);
        return r;
}

static int netlink_resync(Netlink *n)
{
        struct nl_cache *caches[] = {n->links, n->addrs, n->routes, n->neighs};
        int r;

        n->overflows++;
        n->routes_generation++; /* whatever was lost may have been a route */
        log_warning("rtnetlink notifications lost (overflow #%lu), refilling caches", n->overflows);
        for (size_t i = 0; i < ELEMENTSOF(caches); i++) {
                r = nl_cache_refill(n->resync_sock, caches[i]);
                if (r < 0)
                        return log_error_errno(EIO, "Failed to refill netlink cache: %s",
                                               nl_geterror(r));
        }
        n->changed(n->userdata);
        return 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Netlink *n = userdata;
        int r;

        r = nl_cache_mngr_data_ready(n->mngr);
        if (r < 0) {
                /* ENOBUFS surfaces as NLE_NOMEM: the kernel dropped messages. */
                log_debug("nl_cache_mngr_data_ready: %s", nl_geterror(r));
                (void)netlink_resync(n);
        }
        return 0;
}

Netlink *netlink_free(Netlink *n)
{
        if (!n)
                return NULL;
        sd_event_source_disable_unref(n->io_source);
        if (n->mngr)
                nl_cache_mngr_free(n->mngr); /* frees the caches it owns */
        if (n->resync_sock)
                nl_socket_free(n->resync_sock);
        free(n);
        return NULL;
}

int netlink_new(sd_event *event, LinkChangedFn changed, void *userdata, Netlink **ret)
{
        Netlink *n;
        int r, fd, sz = NETLINK_RCVBUF;

        n = calloc(1, sizeof(*n));
        if (!n)
                return -ENOMEM;
        n->changed = changed;
        n->userdata = userdata;

        r = nl_cache_mngr_alloc(NULL, NETLINK_ROUTE, NL_AUTO_PROVIDE, &n->mngr);
        if (r < 0) {
                netlink_free(n);
                return log_error_errno(EIO, "Failed to allocate netlink cache manager: %s",
                                       nl_geterror(r));
        }
        fd = nl_cache_mngr_get_fd(n->mngr);
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
                (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));

        if ((r = nl_cache_mngr_add(n->mngr, "route/link", on_change, n, &n->links)) < 0 ||
            (r = nl_cache_mngr_add(n->mngr, "route/addr", on_change, n, &n->addrs)) < 0 ||
            (r = nl_cache_mngr_add(n->mngr, "route/route", on_change, n, &n->routes)) < 0 ||
            (r = nl_cache_mngr_add(n->mngr, "route/neigh", on_neigh_change, n, &n->neighs)) < 0) {
                netlink_free(n);
                return log_error_errno(EIO, "Failed to set up netlink caches: %s", nl_geterror(r));
        }

        n->resync_sock = nl_socket_alloc();
        /* the refill after an overflow is synchronous: bound each read */
        if (!n->resync_sock || nl_connect(n->resync_sock, NETLINK_ROUTE) < 0 ||
            socket_bound_recv(nl_socket_get_fd(n->resync_sock), 2 * USEC_PER_SEC) < 0) {
                netlink_free(n);
                return log_error_errno(EIO, "Failed to open netlink socket.");
        }

        r = sd_event_add_io(event, &n->io_source, fd, EPOLLIN, on_io, n);
        if (r < 0) {
                netlink_free(n);
                return log_error_errno(r, "Failed to watch netlink socket: %m");
        }
        (void)sd_event_source_set_description(n->io_source, "netlink");
        *ret = n;
        return 0;
}

typedef struct Entry {
        int ifindex;
        LinkInfo info;
} Entry;

typedef struct Collect {
        Entry *entries;
        size_t n, alloc;
        int error;
} Collect;

static int entry_cmp(const void *a, const void *b)
{
        const Entry *x = a, *y = b;

        return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

static Entry *collect_find(Collect *c, int ifindex)
{
        Entry key = {.ifindex = ifindex};

        if (c->n == 0)
                return NULL; /* entries may be NULL then, which bsearch must not get */
        return bsearch(&key, c->entries, c->n, sizeof(Entry), entry_cmp);
}

static int dup_or_null(const char *s, char **ret)
{
        *ret = NULL;
        if (!s || !*s)
                return 0;
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static void collect_link(struct nl_object *obj, void *userdata)
{
        struct rtnl_link *link = (struct rtnl_link *)obj;
        Collect *c = userdata;
        unsigned flags = rtnl_link_get_flags(link);
        struct nl_addr *hw = rtnl_link_get_addr(link);
        char buf[64];
        Entry *e;

        /* The link cache also holds per-family (AF_INET6...) objects for the same ifindex:
         * they carry protocol settings, not a link, and must not count twice. */
        if (c->error < 0 || (flags & IFF_LOOPBACK) || rtnl_link_get_family(link) != AF_UNSPEC)
                return;
        if (c->n == c->alloc) {
                size_t na = c->alloc ? c->alloc * 2 : 16;
                Entry *ne = realloc(c->entries, na * sizeof(Entry));
                if (!ne) {
                        c->error = -ENOMEM;
                        return;
                }
                c->entries = ne;
                c->alloc = na;
        }
        e = &c->entries[c->n++];
        *e = (Entry){.ifindex = rtnl_link_get_ifindex(link)};
        e->info.mtu = rtnl_link_get_mtu(link);
        e->info.admin_up = flags & IFF_UP;
        /* IFF_LOWER_UP rises at once, but the kernel starts the link's queues only when its
         * linkwatch work runs (up to a second later) and sets the operational state then:
         * probing before that loses packets. Carrier counts once both say so; it drops as
         * soon as either does. */
        {
                uint8_t op = rtnl_link_get_operstate(link);
                e->info.carrier = (flags & IFF_UP) && (flags & IFF_LOWER_UP) &&
                                  (op == IF_OPER_UP || op == IF_OPER_UNKNOWN);
        }
        rtnl_link_operstate2str(rtnl_link_get_operstate(link), buf, sizeof(buf));
        if (dup_or_null(rtnl_link_get_name(link), &e->info.name) < 0 ||
            dup_or_null(rtnl_link_get_type(link), &e->info.kind) < 0 ||
            dup_or_null(buf, &e->info.oper_state) < 0)
                c->error = -ENOMEM;
        if (hw && nl_addr_get_len(hw) > 0 && nl_addr_iszero(hw) == 0) {
                nl_addr2str(hw, buf, sizeof(buf));
                if (dup_or_null(buf, &e->info.hwaddr) < 0)
                        c->error = -ENOMEM;
        }
}

static int to_ipaddr(struct nl_addr *a, IpAddr *ret)
{
        int family = nl_addr_get_family(a);

        memset(ret, 0, sizeof(*ret));
        if (family != AF_INET && family != AF_INET6)
                return -EAFNOSUPPORT;
        if (nl_addr_get_len(a) != (family == AF_INET ? 4u : 16u))
                return -EINVAL;
        ret->family = family;
        if (!inet_ntop(family, nl_addr_get_binary_addr(a), ret->text, sizeof(ret->text)))
                return -EINVAL;
        return 0;
}

static AddrScope scope_from_rt(int scope)
{
        switch (scope) {
        case RT_SCOPE_UNIVERSE:
                return ADDR_SCOPE_GLOBAL;
        case RT_SCOPE_SITE:
                return ADDR_SCOPE_SITE;
        case RT_SCOPE_LINK:
                return ADDR_SCOPE_LINK;
        default:
                return ADDR_SCOPE_HOST;
        }
}

static void collect_addr(struct nl_object *obj, void *userdata)
{
        struct rtnl_addr *a = (struct rtnl_addr *)obj;
        Collect *c = userdata;
        struct nl_addr *local = rtnl_addr_get_local(a);
        unsigned flags = rtnl_addr_get_flags(a);
        LinkAddress *na, *la;
        Entry *e;

        if (c->error < 0 || !local)
                return;
        /* An address still doing (or failing) duplicate address detection is not usable. */
        if (flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED))
                return;
        e = collect_find(c, rtnl_addr_get_ifindex(a));
        if (!e)
                return;
        na = realloc(e->info.addrs, sizeof(LinkAddress) * (e->info.n_addrs + 1));
        if (!na) {
                c->error = -ENOMEM;
                return;
        }
        e->info.addrs = na;
        la = &na[e->info.n_addrs];
        memset(la, 0, sizeof(*la));
        if (to_ipaddr(local, &la->addr) < 0)
                return;
        la->prefixlen = (unsigned)rtnl_addr_get_prefixlen(a);
        la->scope = scope_from_rt(rtnl_addr_get_scope(a));
        e->info.n_addrs++;
}

static int add_gateway(Collect *c, int ifindex, struct nl_addr *gw, int family)
{
        IpAddr *ng, g;
        Entry *e = collect_find(c, ifindex);

        if (!e)
                return 0;
        memset(&g, 0, sizeof(g));
        g.family = family;
        if (gw && to_ipaddr(gw, &g) < 0)
                return 0;
        for (size_t i = 0; i < e->info.n_gateways; i++)
                if (memcmp(&e->info.gateways[i], &g, sizeof(g)) == 0)
                        return 0;
        ng = realloc(e->info.gateways, sizeof(IpAddr) * (e->info.n_gateways + 1));
        if (!ng)
                return -ENOMEM;
        e->info.gateways = ng;
        memcpy(&ng[e->info.n_gateways++], &g, sizeof(g));
        return 0;
}

static void collect_route(struct nl_object *obj, void *userdata)
{
        struct rtnl_route *rt = (struct rtnl_route *)obj;
        Collect *c = userdata;
        struct nl_addr *dst = rtnl_route_get_dst(rt);
        int family = rtnl_route_get_family(rt);

        if (c->error < 0)
                return;
        if (rtnl_route_get_table(rt) != RT_TABLE_MAIN || rtnl_route_get_type(rt) != RTN_UNICAST)
                return;
        if (family != AF_INET && family != AF_INET6)
                return;
        if (dst && nl_addr_get_prefixlen(dst) != 0)
                return;
        for (int i = 0; i < rtnl_route_get_nnexthops(rt); i++) {
                struct rtnl_nexthop *nh = rtnl_route_nexthop_n(rt, i);
                if (add_gateway(c, rtnl_route_nh_get_ifindex(nh), rtnl_route_nh_get_gateway(nh),
                                family) < 0)
                        c->error = -ENOMEM;
        }
}

static int addr_cmp(const void *a, const void *b)
{
        const LinkAddress *x = a, *y = b;
        int r;

        if (x->addr.family != y->addr.family)
                return x->addr.family - y->addr.family;
        r = strcmp(x->addr.text, y->addr.text);
        if (r != 0)
                return r;
        return (int)x->prefixlen - (int)y->prefixlen;
}

static int ip_cmp(const void *a, const void *b)
{
        const IpAddr *x = a, *y = b;

        if (x->family != y->family)
                return x->family - y->family;
        return strcmp(x->text, y->text);
}

int netlink_collect(Netlink *n, NetlinkLinkFn fn, void *userdata)
{
        Collect c = {};
        int r = 0;

        nl_cache_foreach(n->links, collect_link, &c);
        if (c.n > 0)
                qsort(c.entries, c.n, sizeof(Entry), entry_cmp);
        nl_cache_foreach(n->addrs, collect_addr, &c);
        nl_cache_foreach(n->routes, collect_route, &c);

        for (size_t i = 0; i < c.n; i++) {
                Entry *e = &c.entries[i];

                /* Stable order, so that a re-dump in another order is not a change. */
                if (e->info.n_addrs > 1)
                        qsort(e->info.addrs, e->info.n_addrs, sizeof(LinkAddress), addr_cmp);
                if (e->info.n_gateways > 1)
                        qsort(e->info.gateways, e->info.n_gateways, sizeof(IpAddr), ip_cmp);
                if (c.error >= 0 && r >= 0 && e->info.name)
                        r = fn(userdata, e->ifindex, &e->info);
                link_info_done(&e->info);
        }
        free(c.entries);
        return c.error < 0 ? c.error : r;
}

typedef struct LocalMatch {
        struct nl_addr *addr;
        bool found;
} LocalMatch;

static void match_local_route(struct nl_object *obj, void *userdata)
{
        struct rtnl_route *rt = (struct rtnl_route *)obj;
        struct nl_addr *dst = rtnl_route_get_dst(rt);
        LocalMatch *m = userdata;
        int type = rtnl_route_get_type(rt);

        if (m->found || rtnl_route_get_table(rt) != RT_TABLE_LOCAL || !dst ||
            (type != RTN_LOCAL && type != RTN_BROADCAST))
                return;
        if (nl_addr_get_family(dst) == nl_addr_get_family(m->addr) &&
            nl_addr_cmp_prefix(dst, m->addr) == 0)
                m->found = true;
}

static void match_local_addr(struct nl_object *obj, void *userdata)
{
        struct nl_addr *local = rtnl_addr_get_local((struct rtnl_addr *)obj);
        LocalMatch *m = userdata;

        if (!m->found && local && nl_addr_get_family(local) == nl_addr_get_family(m->addr) &&
            nl_addr_get_len(local) == nl_addr_get_len(m->addr) &&
            memcmp(nl_addr_get_binary_addr(local), nl_addr_get_binary_addr(m->addr),
                   nl_addr_get_len(local)) == 0)
                m->found = true;
}

bool netlink_address_is_local(int family, const void *addr, void *userdata)
{
        Netlink *n = userdata;
        LocalMatch m = {};

        if (!n)
                return false;
        m.addr = nl_addr_build(family, addr, family == AF_INET6 ? 16 : 4);
        if (!m.addr)
                return true; /* cannot tell: refuse */
        /* the kernel's local table: every address of every link, 127/8 and AnyIP ranges,
         * directed broadcasts; and the addresses themselves, in case a route lags */
        nl_cache_foreach(n->routes, match_local_route, &m);
        nl_cache_foreach(n->addrs, match_local_addr, &m);
        nl_addr_put(m.addr);
        return m.found;
}

struct nl_cache *netlink_route_cache(Netlink *n)
{
        return n->routes;
}

bool netns_is_initial(void)
{
        /* The kernel gives the initial network namespace a fixed inode (PROC_NET_INIT_INO). */
        const ino_t init_net_ino = 0xEFFFFFF9;
        struct stat a, b;

        if (stat("/proc/self/ns/net", &a) < 0)
                return true;
        if (stat("/proc/1/ns/net", &b) >= 0)
                return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
        /* pid 1 hidden from us (a locked-down init): fall back to the well-known inode. */
        return a.st_ino == init_net_ino;
}
