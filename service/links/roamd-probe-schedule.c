/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When a link's next probe round runs: backoff while a family is not online, the re-check
 * while online, a failing family retried alone while the other keeps its re-check time. */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-probe-internal.h"

static void prober_schedule(Prober *p, uint64_t usec);

/* The first re-check on a network a portal was met on, when how long its sessions last is
 * not known (and the least after the expected end): a session that ends while nobody sends
 * anything (no app's SYN goes unanswered, the portal's DNS tells the truth) is found within
 * this plus a round, not RecheckInterval. Each such re-check that finds the link online
 * doubles the next, up to RecheckInterval: a long session costs a handful more rounds. */
#define PORTAL_RECHECK_USEC (30 * USEC_PER_SEC)

/* The link's network (Link.NetworkId); "" not known. */
static const char *prober_network(const Prober *p)
{
        return p->link->facts.network_id;
}

static bool on_portal_network(const Prober *p)
{
        return p->portal_network && streq(p->portal_network, prober_network(p));
}

/* After each round: a portal on a known network is remembered, the round that finds that
 * network online after it starts a session, and the round that finds the portal again ends
 * it (its length, up to when it was found, is what the next session is expected to last). */
static void portal_follow(Prober *p, uint64_t now)
{
        Link *l = p->link;
        Verdict v = l->verdict.verdict;
        const char *id = prober_network(p);

        if (v == VERDICT_PORTAL && id[0]) {
                if (!on_portal_network(p)) {
                        char *t = strdup(id);

                        if (!t)
                                return;
                        free(p->portal_network);
                        p->portal_network = t;
                        p->session_usec = 0;
                } else if (p->session_start_usec) {
                        p->session_usec = now - p->session_start_usec;
                        log_info("%s: the portal's session on this network lasted %.0f s at "
                                 "most: the next one is re-checked then",
                                 strempty(l->info.name), (double)p->session_usec / 1e6);
                }
                p->session_start_usec = 0;
        } else if (v == VERDICT_ONLINE && p->last_verdict != VERDICT_ONLINE &&
                   on_portal_network(p)) {
                p->session_start_usec = now;
                p->session_checks = 0;
        } else if (v != VERDICT_ONLINE && v != VERDICT_CHECKING)
                p->session_start_usec = 0; /* offline, local, partial: no session runs */
        p->last_verdict = v;
}

/* How long an online link waits for its re-check: RecheckInterval, sooner on the network a
 * portal was met on while a session runs there (at the end the last session had, else
 * PORTAL_RECHECK_USEC, then doubling), unless the portal's API says the time is over. */
static uint64_t recheck_usec(Prober *p, uint64_t now)
{
        const ProbeConfig *c = &p->link->core->config->probe;
        uint64_t d, end;

        if (!p->session_start_usec || !on_portal_network(p))
                return c->recheck_usec;
        /* An RFC 8908 API that says the session's time is over: the portal's own rounds
         * follow it, spaced when it says so again and again; a re-check here would only add
         * to them. */
        if (p->link->capport_valid && p->link->capport.has_seconds_remaining &&
            p->link->capport.seconds_remaining == 0)
                return c->recheck_usec;
        end = p->session_start_usec + p->session_usec;
        if (p->session_usec && now + PORTAL_RECHECK_USEC / 2 < end)
                d = end - now;
        else {
                d = PORTAL_RECHECK_USEC << MIN(p->session_checks, 16u);
                p->session_checks++;
        }
        d = MIN(d, c->recheck_usec);
        if (d < c->recheck_usec)
                log_info("%s: a portal was met on this network: re-checked in %.0f s, not %.0f s",
                         strempty(p->link->info.name), (double)d / 1e6,
                         (double)c->recheck_usec / 1e6);
        return d;
}

/* The families whose verdict a probe decides (PROBE_IPV4/6), and of those the ones that
 * are not online. */
static void probe_needs(const Link *l, unsigned *ret_needing, unsigned *ret_failing)
{
        unsigned needing = 0, failing = 0;
        ProbeFacts f;

        for (int i = 0; i < 2; i++) {
                unsigned bit = i ? PROBE_IPV6 : PROBE_IPV4;

                probe_base_facts(l, i ? AF_INET6 : AF_INET, &f);
                if (!verdict_needs_probe(&f))
                        continue;
                needing |= bit;
                if ((i ? l->verdict6 : l->verdict4).verdict != VERDICT_ONLINE)
                        failing |= bit;
        }
        *ret_needing = needing;
        *ret_failing = failing;
}

/* Online everywhere it can be: the next round at the re-check interval. A family that is
 * not online is tried again with backoff, also while the other family is online (an IPv6
 * that failed once would otherwise wait for IPv4's re-check); those rounds leave the online
 * family alone until its own re-check is due. */
void prober_schedule_next(Prober *p)
{
        Link *l = p->link;
        const ProbeConfig *c = &l->core->config->probe;
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC), d = c->backoff_min_usec;
        unsigned needing, failing;

        portal_follow(p, now);
        probe_needs(l, &needing, &failing);
        if (needing && !failing) {
                /* A round that left an online family alone (a retry of the other, or the
                 * other's facts changed: a new link-local address) keeps that family's
                 * re-check: the families' times are independent. */
                if ((needing & ~p->round_families) == 0 || p->recheck_at <= now)
                        p->recheck_at = now + recheck_usec(p, now);
                p->failures = 0;
                p->retry = 0;
                prober_schedule(p, p->recheck_at - now);
                return;
        }
        if (!needing && l->verdict.verdict == VERDICT_ONLINE) {
                p->failures = 0;
                p->retry = 0;
                prober_schedule(p, c->recheck_usec);
                return;
        }
        for (unsigned k = 0; k < p->failures && d < c->backoff_max_usec; k++)
                d *= 2;
        d = MIN(d, c->backoff_max_usec);
        p->failures++;
        p->retry = 0;
        if (needing & ~failing) {
                /* a family is online: its re-check is due a full interval after the round
                 * that found it so (a retry of the other family alone leaves it as it is) */
                if (p->recheck_at <= now)
                        p->recheck_at = now + c->recheck_usec;
                p->retry = failing;
                d = MIN(d, p->recheck_at - now);
        }
        prober_schedule(p, d);
}

int prober_on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        Prober *p = userdata;
        unsigned families = PROBE_IPV4 | PROBE_IPV6;

        if (p->retry && clock_now_usec(CLOCK_MONOTONIC) < p->recheck_at)
                families = p->retry;
        prober_start(p, families, false);
        return 0;
}

static void prober_schedule(Prober *p, uint64_t usec)
{
        Link *l = p->link;

        log_debug("%s: next probe in %.1f s", strempty(l->info.name), (double)usec / 1e6);
        if (sd_event_source_set_time_relative(p->timer, usec) < 0 ||
            sd_event_source_set_enabled(p->timer, SD_EVENT_ONESHOT) < 0)
                log_warning("%s: cannot schedule the next probe.", strempty(l->info.name));
}

void prober_trigger(Prober *p)
{
        p->failures = 0;
        prober_start(p, PROBE_IPV4 | PROBE_IPV6, false);
}

void prober_restart(Prober *p, unsigned families)
{
        if (families == 0)
                return;
        p->failures = 0;
        prober_start(p, families, true);
}

bool link_needs_probe(const Link *l)
{
        unsigned needing, failing;

        probe_needs(l, &needing, &failing);
        return needing != 0;
}
