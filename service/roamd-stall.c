/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <time.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-links.h"
#include "roamd-manager.h"
#include "roamd-probe.h"
#include "roamd-stall.h"
#include "roamd-stall-match.h"

struct StallWatch {
        Manager *m;
        struct mnl_socket *nl; /* NETLINK_SOCK_DIAG, opened on the first look */
        sd_event_source *timer;
        unsigned links_watch;
        uint32_t seq;
};

/* What one look found on a link: connections whose SYN was sent again, per family. */
typedef struct Stalled {
        Link *link;
        unsigned n[2];
        unsigned retrans; /* the most times one SYN was sent again */
        char example[INET6_ADDRSTRLEN + 8];
} Stalled;

typedef struct Look {
        StallWatch *s;
        Stalled *stalled;
        size_t n_stalled;
        int family;
} Look;

static Stalled *look_slot(Look *k, Link *l)
{
        Stalled *n;

        for (size_t i = 0; i < k->n_stalled; i++)
                if (k->stalled[i].link == l)
                        return &k->stalled[i];
        n = reallocarray(k->stalled, k->n_stalled + 1, sizeof(Stalled));
        if (!n)
                return NULL;
        k->stalled = n;
        n[k->n_stalled] = (Stalled){.link = l};
        return &n[k->n_stalled++];
}

static int on_sock(const struct nlmsghdr *nlh, void *userdata)
{
        Look *k = userdata;
        const struct inet_diag_msg *d = mnl_nlmsg_get_payload(nlh);
        Links *links = k->s->m->links;
        IpAddr src = {.family = d->idiag_family}, dst = {.family = d->idiag_family};

        if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY || mnl_nlmsg_get_payload_len(nlh) < sizeof(*d))
                return MNL_CB_OK;
        /* (asked for SYN-SENT only; retransmitted at least once: unanswered for a second) */
        if (d->idiag_state != TCP_SYN_SENT || d->idiag_retrans < 1 || d->idiag_family != k->family)
                return MNL_CB_OK;
        if (!inet_ntop(d->idiag_family, d->id.idiag_src, src.text, sizeof(src.text)) ||
            !inet_ntop(d->idiag_family, d->id.idiag_dst, dst.text, sizeof(dst.text)))
                return MNL_CB_OK;
        for (size_t i = 0; i < links->n_links; i++) {
                Link *l = links->links[i];
                Stalled *st;

                if (!stall_off_link(l->info.addrs, l->info.n_addrs, &src, &dst))
                        continue;
                st = look_slot(k, l);
                if (!st)
                        return MNL_CB_ERROR;
                st->n[k->family == AF_INET6]++;
                if (d->idiag_retrans > st->retrans) {
                        st->retrans = d->idiag_retrans;
                        snprintf(st->example, sizeof(st->example),
                                 k->family == AF_INET6 ? "[%s]:%u" : "%s:%u", dst.text,
                                 ntohs(d->id.idiag_dport));
                }
                break;
        }
        return MNL_CB_OK;
}

static int look_family(Look *k, int family)
{
        StallWatch *s = k->s;
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh;
        struct inet_diag_req_v2 *req;
        uint32_t seq = ++s->seq, portid = mnl_socket_get_portid(s->nl);
        int r;

        nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        nlh->nlmsg_seq = seq;
        req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
        req->sdiag_family = (uint8_t)family;
        req->sdiag_protocol = IPPROTO_TCP;
        req->idiag_states = 1u << TCP_SYN_SENT; /* the kernel filters: usually an empty dump */
        k->family = family;
        if (mnl_socket_sendto(s->nl, nlh, nlh->nlmsg_len) < 0)
                return negative_errno();
        for (;;) {
                ssize_t n = mnl_socket_recvfrom(s->nl, buf, sizeof(buf));
                if (n < 0)
                        return negative_errno();
                r = mnl_cb_run(buf, (size_t)n, seq, portid, on_sock, k);
                if (r < 0)
                        return errno > 0 ? -errno : -EIO;
                if (r == MNL_CB_STOP)
                        return 0;
        }
}

static bool family_online(const Link *l, int i)
{
        return (i ? l->verdict6 : l->verdict4).verdict == VERDICT_ONLINE;
}

static void stalled_act(StallWatch *s, const Stalled *st)
{
        const ProbeConfig *c = &s->m->config->probe;
        Link *l = st->link;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC), wait;
        unsigned n = 0;

        for (int i = 0; i < 2; i++)
                if (family_online(l, i))
                        n += st->n[i];
        /* Only an online family can have lost its way out; a round in flight answers it. */
        if (n == 0 || !l->prober || prober_round_running(l->prober))
                return;
        wait = stall_wait_usec(c->stall_reprobe_min_usec, c->recheck_usec, l->stall_rounds);
        if (l->stall_rounds > 0 && now - l->stall_probe_usec < wait) {
                log_debug("%s: %u connection(s) of apps get no answer; probed for that %.0f s "
                          "ago, next in %.0f s at the earliest",
                          strempty(l->info.name), n, (double)(now - l->stall_probe_usec) / 1e6,
                          (double)(wait - (now - l->stall_probe_usec)) / 1e6);
                return;
        }
        l->stall_probe_usec = now;
        l->stall_rounds++;
        log_notice("%s: %u connection(s) of apps get no answer (SYN to %s sent again %u "
                   "times): the way out may have closed (a portal's session ended?), probing "
                   "now instead of at the next re-check",
                   strempty(l->info.name), n, st->example, st->retrans);
        (void)link_reprobe(l);
}

static int stall_look(StallWatch *s)
{
        _cleanup_free_ Stalled *stalled = NULL;
        Look k = {.s = s};
        int r;

        if (!s->nl) {
                s->nl = mnl_socket_open(NETLINK_SOCK_DIAG);
                if (!s->nl)
                        return negative_errno();
                if (mnl_socket_bind(s->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
                        r = negative_errno();
                        mnl_socket_close(s->nl);
                        s->nl = NULL;
                        return r;
                }
        }
        r = look_family(&k, AF_INET);
        if (r >= 0)
                r = look_family(&k, AF_INET6);
        stalled = k.stalled;
        if (r < 0) {
                /* a dump cut short leaves the socket out of step: start afresh next time */
                mnl_socket_close(s->nl);
                s->nl = NULL;
                return r;
        }
        for (size_t i = 0; i < k.n_stalled; i++)
                stalled_act(s, &stalled[i]);
        return 0;
}

static bool any_online(const StallWatch *s)
{
        const Links *links = s->m->links;

        for (size_t i = 0; i < links->n_links; i++)
                if (links->links[i]->verdict.verdict == VERDICT_ONLINE)
                        return true;
        return false;
}

/* The watch runs while a link is online (only such a link can lose its way out unnoticed),
 * and not at all with StallInterval=0. */
static void stall_arm(StallWatch *s)
{
        uint64_t interval = s->m->config->probe.stall_interval_usec;
        int enabled = SD_EVENT_OFF;

        if (interval == 0 || !any_online(s)) {
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
                return;
        }
        if (sd_event_source_get_enabled(s->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(s->timer, interval) < 0 ||
            sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule the look at stalled connections.");
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        StallWatch *s = userdata;
        int r;

        r = stall_look(s);
        if (r < 0)
                log_warning_errno(r, "Cannot look at the TCP connections waiting for an answer: "
                                     "%m");
        stall_arm(s);
        return 0;
}

static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        switch (ev->type) {
        case LINKS_EVENT_VERDICT:
                /* Not online (found closed, or anything else): the next time it is online,
                 * the first stall is probed at once again. */
                if (ev->link && ev->link->verdict.verdict != VERDICT_ONLINE)
                        ev->link->stall_rounds = 0;
                stall_arm(userdata);
                break;
        case LINKS_EVENT_GONE:
        case LINKS_EVENT_SYNCED:
                stall_arm(userdata);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_PROBED:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

int stall_watch_new(Manager *m, StallWatch **ret)
{
        StallWatch *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->m = m;
        s->seq = (uint32_t)time(NULL);
        /* A look every few seconds need not be punctual: let the loop batch its wake-ups. */
        r = sd_event_add_time_relative(m->event, &s->timer, CLOCK_MONOTONIC, 0, USEC_PER_SEC / 2,
                                       on_timer, s);
        if (r < 0) {
                free(s);
                return r;
        }
        (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        (void)sd_event_source_set_description(s->timer, "stall-watch");
        s->links_watch = links_watch_add(m->links, on_links, s, NULL);
        if (s->links_watch == 0) {
                stall_watch_free(s);
                return -ENOMEM;
        }
        *ret = s;
        return 0;
}

StallWatch *stall_watch_free(StallWatch *s)
{
        if (!s)
                return NULL;
        if (s->links_watch)
                links_watch_remove(s->m->links, s->links_watch);
        sd_event_source_disable_unref(s->timer);
        if (s->nl)
                mnl_socket_close(s->nl);
        free(s);
        return NULL;
}
