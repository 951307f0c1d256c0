/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <inttypes.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <time.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-links.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-nflog.h"
#include "roamd-nft-refused.h"
#include "roamd-probe.h"
#include "roamd-reconcile.h"
#include "roamd-sock-diag.h"
#include "roamd-stall-dns.h"
#include "roamd-stall-match.h"
#include "roamd-stall.h"

/* A link's rounds started by signals since it was last not online (the backoff). */
typedef struct StallLink {
        int ifindex;
        unsigned rounds;
        uint64_t probe_usec; /* when the last of them started (CLOCK_MONOTONIC) */
        StallSignal signal;  /* what started it */
        bool round_open;     /* ... and that round has not ended yet */
} StallLink;

struct StallWatch {
        Core *m;
        struct mnl_socket *nl;  /* NETLINK_SOCK_DIAG, opened on the first look */
        sd_event_source *timer; /* a look every StallInterval, when the kernel cannot wake us */
        /* The signs wake roamd instead (docs/connectivity.md, "Between re-checks"): rules in
         * the reconciler's `stall` part log an app's SYN sent again and a reset counted to
         * this NFLOG group; a look follows shortly after (kick), so a burst is one look. */
        NflogWatch *nflog;
        sd_event_source *kick;
        /* the kick's look reads the sockets too: a sign came (else it only notes the resets'
         * counts and the links online: the kernel's walk of every TCP socket of the host,
         * ~2 ms, is no part of a verdict change) */
        bool kick_sockets;
        bool installed; /* the rules are in the table (a full pass committed them) */
        int mode;       /* -1 not yet said, 0 the timer, 1 the kernel's signs */
        StallLink *lnk;
        size_t n_lnk;
        unsigned links_watch;
        uint32_t seq;
        /* refused connection attempts per link: the counts of the last look (primed: there
         * was one since the watch started, so a count not seen then is new) */
        NftRefused *refused;
        NftRefusedCount *refused_seen;
        size_t n_refused_seen;
        bool refused_primed;
        /* the links online since the last look (dropped when their verdict leaves online):
         * only a count that grew while its link stayed online from one look to the next is
         * news (roamd's own probes of a portal are refused too, and an app's attempts while
         * the link was a portal are no sign, also when it is online again by the next look) */
        int *online_seen;
        size_t n_online_seen;
        int part; /* reconcile_add_part() id (> 0): the reconciler installs the counting chain */
        StallDns *dns;
};

/* from a sign to the look (see stall_kick()) */
#define STALL_KICK_USEC (50 * USEC_PER_MSEC)

static const char *const stall_signal_table[_STALL_SIGNAL_MAX] = {
    [STALL_SIGNAL_SYN] = "unanswered-syn",
    [STALL_SIGNAL_RESET] = "reset",
    [STALL_SIGNAL_DNS] = "dns-private",
};

const char *stall_signal_to_string(StallSignal s)
{
        return s >= 0 && s < _STALL_SIGNAL_MAX ? stall_signal_table[s] : NULL;
}

static StallLink *stall_link(StallWatch *s, int ifindex, bool make)
{
        StallLink *n;

        for (size_t i = 0; i < s->n_lnk; i++)
                if (s->lnk[i].ifindex == ifindex)
                        return &s->lnk[i];
        if (!make)
                return NULL;
        n = reallocarray(s->lnk, s->n_lnk + 1, sizeof(*n));
        if (!n)
                return NULL;
        s->lnk = n;
        n[s->n_lnk] = (StallLink){.ifindex = ifindex, .signal = _STALL_SIGNAL_INVALID};
        return &n[s->n_lnk++];
}

static void stall_link_forget(StallWatch *s, int ifindex)
{
        StallLink *sl = stall_link(s, ifindex, false);

        if (sl)
                *sl = s->lnk[--s->n_lnk];
}

/* Every signal ends here: a round on l now, unless a round runs (it answers the question
 * too) or the backoff shared by all signals holds it back (a false alarm, from any of them,
 * doubles the wait). what: the log's words for what was seen; detail: more of it, for the
 * line that starts a round. Returns whether a round was started. */
static bool stall_signal(StallWatch *s, Link *l, StallSignal sig, const char *what,
                         const char *detail)
{
        const ProbeConfig *c = &s->m->config->probe;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC), wait;
        StallLink *sl;

        if (!l->prober || prober_round_running(l->prober))
                return false;
        sl = stall_link(s, l->ifindex, true);
        if (!sl)
                return false;
        wait = stall_wait_usec(c->stall_reprobe_min_usec, c->recheck_usec, sl->rounds);
        if (sl->rounds > 0 && now - sl->probe_usec < wait) {
                log_debug("%s: %s; probed for that %.0f s ago, next in %.0f s at the earliest",
                          strempty(l->info.name), what, (double)(now - sl->probe_usec) / 1e6,
                          (double)(wait - (now - sl->probe_usec)) / 1e6);
                return false;
        }
        sl->probe_usec = now;
        sl->rounds++;
        sl->signal = sig;
        sl->round_open = true;
        log_notice("%s: %s%s: the way out may have closed (a portal's session ended?), probing "
                   "now instead of at the next re-check (signal %s)",
                   strempty(l->info.name), what, strempty(detail), stall_signal_to_string(sig));
        (void)link_reprobe(l);
        return true;
}

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
        k->family = family;
        /* SYN_SENT only, filtered by the kernel: usually an empty dump */
        return sock_diag_dump_tcp(k->s->nl, ++k->s->seq, family, 1u << TCP_SYN_SENT, on_sock, k);
}

static bool family_online(const Link *l, int i)
{
        return (i ? l->verdict6 : l->verdict4).verdict == VERDICT_ONLINE;
}

static void stalled_act(StallWatch *s, const Stalled *st)
{
        Link *l = st->link;
        char what[64], detail[INET6_ADDRSTRLEN + 64];
        unsigned n = 0;

        for (int i = 0; i < 2; i++)
                if (family_online(l, i))
                        n += st->n[i];
        /* Only an online family can have lost its way out. */
        if (n == 0)
                return;
        snprintf(what, sizeof(what), "%u connection(s) of apps get no answer", n);
        snprintf(detail, sizeof(detail), " (SYN to %s sent again %u times)", st->example,
                 st->retrans);
        (void)stall_signal(s, l, STALL_SIGNAL_SYN, what, detail);
}

static uint64_t refused_before(const StallWatch *s, uint32_t ifindex, int family)
{
        for (size_t i = 0; i < s->n_refused_seen; i++)
                if (s->refused_seen[i].ifindex == ifindex && s->refused_seen[i].family == family)
                        return s->refused_seen[i].packets;
        return 0;
}

static bool was_online(const StallWatch *s, int ifindex)
{
        for (size_t i = 0; i < s->n_online_seen; i++)
                if (s->online_seen[i] == ifindex)
                        return true;
        return false;
}

/* A link that leaves online between two looks: what was counted for it until the next look
 * came (at least partly) while it was not online. The round a reset signal starts meets the
 * resetting portal too, and its refused probes are counted; a login right after can bring the
 * link back online before the next look, which then saw it online at both ends. */
static void online_forget(StallWatch *s, int ifindex)
{
        for (size_t i = 0; i < s->n_online_seen; i++)
                if (s->online_seen[i] == ifindex) {
                        s->online_seen[i] = s->online_seen[--s->n_online_seen];
                        return;
                }
}

static int online_note(StallWatch *s)
{
        const Links *links = s->m->links;
        int *n = reallocarray(NULL, MAX(links->n_links, (size_t)1), sizeof(int));

        if (!n)
                return -ENOMEM;
        free(s->online_seen);
        s->online_seen = n;
        s->n_online_seen = 0;
        for (size_t i = 0; i < links->n_links; i++)
                if (links->links[i]->verdict.verdict == VERDICT_ONLINE)
                        n[s->n_online_seen++] = links->links[i]->ifindex;
        return 0;
}

/* Apps' connection attempts refused with a reset since the last look, per link online since
 * the last look. */
static int refused_look(StallWatch *s)
{
        _cleanup_free_ NftRefusedCount *now = NULL;
        size_t n = 0;
        int r;

        if (s->part <= 0 || !reconcile_enforcing(s->m->reconcile))
                return 0; /* no table inet roam: nothing counts */
        if (!s->refused) {
                r = nft_refused_new(&s->refused);
                if (r < 0)
                        return r;
        }
        r = nft_refused_read(s->refused, &now, &n);
        if (r == -ENOENT)
                return 0; /* not installed (yet) */
        if (r < 0)
                return r;
        for (size_t i = 0; s->refused_primed && i < n; i++) {
                uint64_t before = refused_before(s, now[i].ifindex, now[i].family), d;
                Link *l = links_get(s->m->links, (int)now[i].ifindex);
                char what[96];

                /* fewer than before: the table was made again, counting from zero */
                d = now[i].packets >= before ? now[i].packets - before : now[i].packets;
                if (d == 0 || !l)
                        continue;
                if (l->verdict.verdict != VERDICT_ONLINE || !was_online(s, l->ifindex)) {
                        log_debug("%s: %" PRIu64 " connection attempt(s) refused with a reset "
                                  "while it was not online throughout since the last look "
                                  "(roamd's own probes of a portal, apps' tries): no sign",
                                  strempty(l->info.name), d);
                        continue;
                }
                /* Only an online family can have lost its way out; the resets of a family
                 * that is not are mostly roamd's own probes of it (a server that refuses
                 * IPv6 while IPv4 is online). */
                if (!family_online(l, now[i].family == AF_INET6)) {
                        log_debug("%s: %" PRIu64 " connection attempt(s) refused with a reset "
                                  "through %s, which is not online: no sign",
                                  strempty(l->info.name), d,
                                  now[i].family == AF_INET6 ? "IPv6" : "IPv4");
                        continue;
                }
                snprintf(what, sizeof(what),
                         "%" PRIu64 " connection attempt(s) of apps refused with a reset", d);
                (void)stall_signal(s, l, STALL_SIGNAL_RESET, what, NULL);
        }
        free(s->refused_seen);
        s->refused_seen = TAKE_PTR(now);
        s->n_refused_seen = n;
        s->refused_primed = true;
        return online_note(s);
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
        r = refused_look(s);
        if (r < 0)
                log_warning_errno(r, "Cannot read the count of refused connection attempts: %m");
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

static bool watching(const StallWatch *s)
{
        return s->m->config->probe.stall_interval_usec > 0 && any_online(s);
}

/* Whether the kernel wakes us for the signs: the group is ours and the rules are in force. */
static bool kernel_signs(StallWatch *s)
{
        return s->nflog && s->part && s->installed && reconcile_enforcing(s->m->reconcile);
}

/* A look shortly: a burst of signs is one look, and TCP has counted the SYN it just sent
 * again by then (the rule sees the packet before the socket counts it). sockets: a sign's
 * look, at the sockets too (a pending note-only look becomes one). */
static void stall_kick(StallWatch *s, bool sockets)
{
        int enabled = SD_EVENT_OFF;

        if (!watching(s))
                return;
        s->kick_sockets = s->kick_sockets || sockets;
        if (sd_event_source_get_enabled(s->kick, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(s->kick, STALL_KICK_USEC) < 0 ||
            sd_event_source_set_enabled(s->kick, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule the look at stalled connections.");
}

static void say_mode(StallWatch *s, int mode)
{
        if (s->mode == mode)
                return;
        s->mode = mode;
        if (mode)
                log_info("Stalled connections: looked at when the kernel logs a sign (NFLOG "
                         "group %u), not every StallInterval",
                         (unsigned)NFT_SIGN_LOG_GROUP);
        else
                log_info("Stalled connections: looked at every StallInterval (%.0f s)",
                         (double)s->m->config->probe.stall_interval_usec / 1e6);
}

/* The watch runs while a link is online (only such a link can lose its way out unnoticed),
 * and not at all with StallInterval=0: on the kernel's signs when it can give them, else
 * every StallInterval. */
static void stall_arm(StallWatch *s)
{
        uint64_t interval = s->m->config->probe.stall_interval_usec;
        int enabled = SD_EVENT_OFF;

        stall_dns_arm(s->dns);
        if (!watching(s)) {
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
                (void)sd_event_source_set_enabled(s->kick, SD_EVENT_OFF);
                /* resets counted while the watch rests are not news: the first look after
                 * it takes the counts as they are */
                s->refused_primed = false;
                return;
        }
        if (kernel_signs(s)) {
                say_mode(s, 1);
                (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
                /* the first look takes the counts the next signs are news against */
                if (!s->refused_primed)
                        stall_kick(s, false);
                return;
        }
        say_mode(s, 0);
        if (sd_event_source_get_enabled(s->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(s->timer, interval) < 0 ||
            sd_event_source_set_enabled(s->timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule the look at stalled connections.");
}

static int on_kick(sd_event_source *es, uint64_t usec, void *userdata)
{
        StallWatch *s = userdata;
        bool sockets = s->kick_sockets;
        int r;

        s->kick_sockets = false;
        if (!sockets) {
                r = refused_look(s);
                if (r < 0)
                        log_warning_errno(r, "Cannot read the count of refused connection "
                                             "attempts: %m");
                return 0;
        }
        r = stall_look(s);
        if (r < 0)
                log_warning_errno(r, "Cannot look at the TCP connections waiting for an answer: "
                                     "%m");
        return 0;
}

static void on_sign(void *userdata)
{
        stall_kick(userdata, true);
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
        StallWatch *s = userdata;

        switch (ev->type) {
        case LINKS_EVENT_VERDICT:
                /* Not online (found closed, or anything else): the next time it is online,
                 * the first stall is probed at once again, and its DNS answers start over. */
                if (ev->link && ev->link->verdict.verdict != VERDICT_ONLINE) {
                        StallLink *sl = stall_link(s, ev->link->ifindex, false);

                        if (sl && sl->round_open)
                                log_info("%s: %s after a round signal %s started",
                                         strempty(ev->link->info.name),
                                         verdict_to_string(ev->link->verdict.verdict),
                                         stall_signal_to_string(sl->signal));
                        stall_link_forget(s, ev->link->ifindex);
                        stall_dns_forget(s->dns, ev->link);
                        online_forget(s, ev->link->ifindex);
                }
                stall_arm(s);
                /* On signs, the looks note which links are online: a note now, so that a
                 * link that came online is known to be before its first sign (the sockets
                 * wait for a sign: an app's SYN sent again logs one). */
                if (ev->link && kernel_signs(s))
                        stall_kick(s, false);
                break;
        case LINKS_EVENT_GONE:
                if (ev->link) {
                        stall_link_forget(s, ev->link->ifindex);
                        stall_dns_forget(s->dns, ev->link);
                        online_forget(s, ev->link->ifindex);
                }
                stall_arm(s);
                break;
        case LINKS_EVENT_PROBED:
                if (ev->link) {
                        StallLink *sl = stall_link(s, ev->link->ifindex, false);

                        if (sl)
                                sl->round_open = false;
                }
                break;
        case LINKS_EVENT_SYNCED:
                stall_arm(userdata);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_LOCATION:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

static bool on_dns_moved(Link *l, const IpAddr *was, const IpAddr *now, void *userdata)
{
        char what[2 * INET6_ADDRSTRLEN + 64];

        snprintf(what, sizeof(what), "the check host's name resolves to %s, not %s", now->text,
                 was->text);
        return stall_signal(userdata, l, STALL_SIGNAL_DNS, what, NULL);
}

static int part_install(void *userdata, NftTxn *t)
{
        return nft_refused_install(t);
}

static void part_done(void *userdata, Reconcile *rc, int result, bool full)
{
        StallWatch *s = userdata;

        /* a new table counts from zero: the next look takes the counts as they are */
        if (full && result >= 0) {
                s->refused_primed = false;
                s->installed = true;
                stall_arm(s);
        }
}

static const ReconcilePart stall_part = {
    .install = part_install,
    .done = part_done,
};

int stall_watch_new(Core *m, StallWatch **ret)
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
        s->mode = -1;
        r = sd_event_add_time_relative(m->event, &s->kick, CLOCK_MONOTONIC, STALL_KICK_USEC,
                                       USEC_PER_MSEC * 10, on_kick, s);
        if (r < 0) {
                stall_watch_free(s);
                return r;
        }
        (void)sd_event_source_set_enabled(s->kick, SD_EVENT_OFF);
        (void)sd_event_source_set_description(s->kick, "stall-look");
        r = nflog_watch_new(m->event, NFT_SIGN_LOG_GROUP, on_sign, s, &s->nflog);
        if (r < 0)
                log_info_errno(r,
                               "Cannot bind NFLOG group %u (%m): stalled connections are "
                               "looked at every StallInterval",
                               (unsigned)NFT_SIGN_LOG_GROUP);
        r = stall_dns_new(m, on_dns_moved, s, &s->dns);
        if (r < 0) {
                stall_watch_free(s);
                return r;
        }
        s->links_watch = links_watch_add(m->links, on_links, s, NULL);
        if (s->links_watch == 0) {
                stall_watch_free(s);
                return -ENOMEM;
        }
        s->part = reconcile_add_part(m->reconcile, &stall_part, s);
        *ret = s;
        return 0;
}

void stall_watch_reload(StallWatch *s)
{
        if (!s)
                return;
        (void)sd_event_source_set_enabled(s->timer, SD_EVENT_OFF);
        s->mode = -1;
        stall_dns_rearm(s->dns);
        stall_arm(s);
}

StallWatch *stall_watch_free(StallWatch *s)
{
        if (!s)
                return NULL;
        if (s->links_watch)
                links_watch_remove(s->m->links, s->links_watch);
        reconcile_remove_part(s->m->reconcile, s->part);
        stall_dns_free(s->dns);
        nft_refused_free(s->refused);
        free(s->refused_seen);
        free(s->online_seen);
        sd_event_source_disable_unref(s->timer);
        sd_event_source_disable_unref(s->kick);
        nflog_watch_free(s->nflog);
        free(s->lnk);
        if (s->nl)
                mnl_socket_close(s->nl);
        free(s);
        return NULL;
}
