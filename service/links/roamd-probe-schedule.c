/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* When a link's next probe round runs: backoff while a family is not online, the re-check
 * while online, a failing family retried alone while the other keeps its re-check time. */
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-probe-internal.h"

static void prober_schedule(Prober *p, uint64_t usec);

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

        probe_needs(l, &needing, &failing);
        if (needing && !failing) {
                /* A round that left an online family alone (a retry of the other, or the
                 * other's facts changed: a new link-local address) keeps that family's
                 * re-check: the families' times are independent. */
                if ((needing & ~p->round_families) == 0 || p->recheck_at <= now)
                        p->recheck_at = now + c->recheck_usec;
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
