/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ares.h>
#include <arpa/inet.h>
#include <netdb.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-resolve.h"

#define RESOLVE_MAX_FDS 4

struct Resolve {
        sd_event *event;
        ares_channel channel;
        sd_event_source *io[RESOLVE_MAX_FDS];
        int fds[RESOLVE_MAX_FDS];
        sd_event_source *timer;    /* c-ares' own retransmission timeout */
        sd_event_source *deadline; /* the overall limit */
        sd_event_source *finish;   /* reports the result outside c-ares' callbacks */
        ResolveDoneFn done;
        void *userdata;
        uint32_t mark; /* SO_MARK of the query sockets, 0: none */
        DnsOutcome outcome;
        IpAddr addrs[RESOLVE_MAX_ADDRS];
        size_t n_addrs;
        bool completed;
};

static void resolve_arm_timer(Resolve *r);

static int on_finish(sd_event_source *s, void *userdata)
{
        Resolve *r = userdata;

        r->done(r, r->outcome, r->addrs, r->n_addrs, r->userdata);
        return 0;
}

/* Completes at most once; the callback runs from a defer source so the caller may free the
 * Resolve (and with it the c-ares channel) from inside it. */
static void resolve_complete(Resolve *r, DnsOutcome outcome)
{
        if (r->completed)
                return;
        r->completed = true;
        r->outcome = outcome;
        r->timer = sd_event_source_disable_unref(r->timer);
        r->deadline = sd_event_source_disable_unref(r->deadline);
        for (size_t i = 0; i < RESOLVE_MAX_FDS; i++)
                if (r->io[i])
                        (void)sd_event_source_set_enabled(r->io[i], SD_EVENT_OFF);
        if (sd_event_add_defer(r->event, &r->finish, on_finish, r) < 0)
                log_warning("Failed to report a DNS result.");
        else
                (void)sd_event_source_set_priority(r->finish, SD_EVENT_PRIORITY_IMPORTANT);
}

static void on_addrinfo(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
        Resolve *r = arg;

        if (status == ARES_SUCCESS && res) {
                for (struct ares_addrinfo_node *n = res->nodes; n && r->n_addrs < RESOLVE_MAX_ADDRS;
                     n = n->ai_next) {
                        const void *raw;
                        IpAddr *a = &r->addrs[r->n_addrs];

                        memset(a, 0, sizeof(*a));
                        if (n->ai_family == AF_INET)
                                raw = &((struct sockaddr_in *)n->ai_addr)->sin_addr;
                        else if (n->ai_family == AF_INET6)
                                raw = &((struct sockaddr_in6 *)n->ai_addr)->sin6_addr;
                        else
                                continue;
                        a->family = n->ai_family;
                        if (inet_ntop(n->ai_family, raw, a->text, sizeof(a->text)))
                                r->n_addrs++;
                }
        }
        if (res)
                ares_freeaddrinfo(res);
        if (status == ARES_EDESTRUCTION)
                return;
        if (status != ARES_SUCCESS)
                log_debug("DNS lookup failed: %s", ares_strerror(status));
        if (r->n_addrs > 0)
                resolve_complete(r, DNS_OUTCOME_OK);
        else
                resolve_complete(r, status == ARES_ETIMEOUT ? DNS_OUTCOME_TIMEOUT
                                                            : DNS_OUTCOME_FAILED);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Resolve *r = userdata;
        ares_socket_t rfd = (revents & (EPOLLIN | EPOLLERR | EPOLLHUP)) ? fd : ARES_SOCKET_BAD;
        ares_socket_t wfd = (revents & EPOLLOUT) ? fd : ARES_SOCKET_BAD;

        ares_process_fd(r->channel, rfd, wfd);
        resolve_arm_timer(r);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        Resolve *r = userdata;

        ares_process_fd(r->channel, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
        resolve_arm_timer(r);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
        resolve_complete(userdata, DNS_OUTCOME_TIMEOUT);
        return 0;
}

static void resolve_arm_timer(Resolve *r)
{
        struct timeval tv, *tvp;
        uint64_t now;

        if (r->completed)
                return;
        tvp = ares_timeout(r->channel, NULL, &tv);
        if (!tvp) {
                if (r->timer)
                        (void)sd_event_source_set_enabled(r->timer, SD_EVENT_OFF);
                return;
        }
        if (sd_event_now(r->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        now += (uint64_t)tvp->tv_sec * 1000000 + (uint64_t)tvp->tv_usec;
        if (!r->timer) {
                if (sd_event_add_time(r->event, &r->timer, CLOCK_MONOTONIC, now, 0, on_timer, r) >=
                    0)
                        (void)sd_event_source_set_description(r->timer, "dns-retry");
                return;
        }
        (void)sd_event_source_set_time(r->timer, now);
        (void)sd_event_source_set_enabled(r->timer, SD_EVENT_ONESHOT);
}

static void sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
        Resolve *r = data;
        uint32_t events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
        size_t i, slot = RESOLVE_MAX_FDS;

        for (i = 0; i < RESOLVE_MAX_FDS; i++) {
                if (r->io[i] && r->fds[i] == fd)
                        break;
                if (!r->io[i] && slot == RESOLVE_MAX_FDS)
                        slot = i;
        }
        if (i < RESOLVE_MAX_FDS) {
                if (!events) {
                        r->io[i] = sd_event_source_disable_unref(r->io[i]);
                        return;
                }
                (void)sd_event_source_set_io_events(r->io[i], events);
                return;
        }
        if (!events)
                return;
        if (slot == RESOLVE_MAX_FDS ||
            sd_event_add_io(r->event, &r->io[slot], fd, events, on_io, r) < 0) {
                log_warning("Cannot watch a DNS socket; the lookup will time out.");
                return;
        }
        r->fds[slot] = fd;
        /* as the probes' curl sockets: answers go before pending resyncs */
        (void)sd_event_source_set_priority(r->io[slot], SD_EVENT_PRIORITY_IMPORTANT);
        (void)sd_event_source_set_description(r->io[slot], "dns-socket");
}

Resolve *resolve_free(Resolve *r)
{
        if (!r)
                return NULL;
        r->completed = true; /* ares_destroy() calls back with ARES_EDESTRUCTION */
        if (r->channel)
                ares_destroy(r->channel);
        for (size_t i = 0; i < RESOLVE_MAX_FDS; i++)
                sd_event_source_disable_unref(r->io[i]);
        sd_event_source_disable_unref(r->timer);
        sd_event_source_disable_unref(r->deadline);
        sd_event_source_disable_unref(r->finish);
        sd_event_unref(r->event);
        free(r);
        return NULL;
}

/* The query sockets take a routing slot's table (the VPN's) by their mark. */
static int on_ares_socket(ares_socket_t fd, int type, void *userdata)
{
        Resolve *r = userdata;

        if (r->mark && setsockopt(fd, SOL_SOCKET, SO_MARK, &r->mark, sizeof(r->mark)) < 0)
                return -1;
        return 0;
}

/* host's family when it is an IPv4 or IPv6 address (ret: it, in its canonical text), else
 * AF_UNSPEC. */
static int ip_literal_family(const char *host, IpAddr *ret)
{
        static const int families[] = {AF_INET, AF_INET6};
        unsigned char raw[sizeof(struct in6_addr)];

        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if (inet_pton(families[i], host, raw) == 1 &&
                    inet_ntop(families[i], raw, ret->text, sizeof(ret->text))) {
                        ret->family = families[i];
                        return families[i];
                }
        return AF_UNSPEC;
}

int resolve_start(sd_event *event, const char *ifname, const IpAddr *servers, size_t n_servers,
                  const char *host, int family, uint32_t mark, uint64_t timeout_usec,
                  ResolveDoneFn done, void *userdata, Resolve **ret)
{
        static bool initialized;
        struct ares_options opts = {};
        struct ares_addrinfo_hints hints = {};
        struct ares_addr_node *nodes;
        Resolve *r;
        uint64_t now;
        int k;

        if (!initialized) {
                if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
                        return -EIO;
                initialized = true;
        }
        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->event = sd_event_ref(event);
        r->done = done;
        r->userdata = userdata;
        *ret = r;

        /* An address, not a name (a URL's host "[2001:db8::1]", its brackets gone): it is
         * what it says, whatever the network's DNS would answer for it as a name. Of the
         * other family than the one asked: no address. */
        if (ip_literal_family(host, &r->addrs[0]) != AF_UNSPEC) {
                if (family == AF_UNSPEC || family == r->addrs[0].family) {
                        r->n_addrs = 1;
                        resolve_complete(r, DNS_OUTCOME_OK);
                } else
                        resolve_complete(r, DNS_OUTCOME_FAILED);
                return 0;
        }

        if (n_servers == 0) {
                resolve_complete(r, DNS_OUTCOME_FAILED);
                return 0;
        }

        /* No search domains, no hosts file, no system resolv.conf: only these servers. */
        opts.sock_state_cb = sock_state_cb;
        opts.sock_state_cb_data = r;
        opts.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
        opts.timeout = 1000;
        opts.tries = 3;
        opts.lookups = (char *)"b";
        k = ares_init_options(&r->channel, &opts,
                              ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS |
                                  ARES_OPT_TRIES | ARES_OPT_LOOKUPS);
        if (k != ARES_SUCCESS) {
                resolve_free(r);
                *ret = NULL;
                return log_warning_errno(EIO, "c-ares init failed: %s", ares_strerror(k));
        }
        ares_set_local_dev(r->channel, ifname);
        r->mark = mark;
        if (mark)
                ares_set_socket_callback(r->channel, on_ares_socket, r);
        nodes = calloc(n_servers, sizeof(*nodes));
        if (!nodes) {
                resolve_free(r);
                *ret = NULL;
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_servers; i++) {
                nodes[i].family = servers[i].family;
                nodes[i].next = i + 1 < n_servers ? &nodes[i + 1] : NULL;
                if (inet_pton(servers[i].family, servers[i].text, &nodes[i].addr) != 1)
                        nodes[i].family = AF_UNSPEC;
        }
        k = ares_set_servers(r->channel, nodes);
        free(nodes);
        if (k != ARES_SUCCESS) {
                log_debug("Cannot use the DNS servers of %s: %s", ifname, ares_strerror(k));
                resolve_complete(r, DNS_OUTCOME_FAILED);
                return 0;
        }

        if (sd_event_now(event, CLOCK_MONOTONIC, &now) >= 0)
                (void)sd_event_add_time(event, &r->deadline, CLOCK_MONOTONIC, now + timeout_usec, 0,
                                        on_deadline, r);

        hints.ai_family = family;
        hints.ai_flags = ARES_AI_NOSORT;
        ares_getaddrinfo(r->channel, host, NULL, &hints, on_addrinfo, r);
        resolve_arm_timer(r);
        return 0;
}
