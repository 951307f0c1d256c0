/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-links.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-probe.h"
#include "roamd-resolve.h"
#include "roamd-stall-dns.h"
#include "roamd-stall-match.h"

/* What the watch knows of one link. */
typedef struct DnsLook {
        StallDns *d;
        int ifindex;
        Resolve *resolve; /* the lookup in flight */
        int family;
        IpAddr was;   /* the last public answer, family 0: none */
        IpAddr shown; /* the private answer a round was started for (not news again) */
} DnsLook;

struct StallDns {
        Core *m;
        stall_dns_moved_t moved;
        void *userdata;
        sd_event_source *timer;
        DnsLook **looks;
        size_t n_looks;
};

static DnsLook *look_get(StallDns *d, const Link *l, bool create)
{
        DnsLook *k, **n;

        for (size_t i = 0; i < d->n_looks; i++)
                if (d->looks[i]->ifindex == l->ifindex)
                        return d->looks[i];
        if (!create)
                return NULL;
        k = calloc(1, sizeof(*k));
        if (!k)
                return NULL;
        n = reallocarray(d->looks, d->n_looks + 1, sizeof(*n));
        if (!n) {
                free(k);
                return NULL;
        }
        *k = (DnsLook){.d = d, .ifindex = l->ifindex};
        d->looks = n;
        d->looks[d->n_looks++] = k;
        return k;
}

void stall_dns_forget(StallDns *d, const Link *l)
{
        for (size_t i = 0; d && i < d->n_looks; i++)
                if (d->looks[i]->ifindex == l->ifindex) {
                        resolve_free(d->looks[i]->resolve);
                        free(d->looks[i]);
                        memmove(d->looks + i, d->looks + i + 1,
                                (d->n_looks - i - 1) * sizeof(*d->looks));
                        d->n_looks--;
                        return;
                }
}

static char *check_host(const Config *c)
{
        CURLU *u = curl_url();
        char *host = NULL, *ret = NULL;

        if (u && c->probe.http_url &&
            curl_url_set(u, CURLUPART_URL, c->probe.http_url, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
                ret = strdup(host);
        curl_free(host);
        curl_url_cleanup(u);
        return ret;
}

static void on_resolved(Resolve *res, DnsOutcome outcome, const IpAddr *addrs, size_t n,
                        void *userdata)
{
        DnsLook *k = userdata;
        StallDns *d = k->d;
        Link *l = links_get(d->m->links, k->ifindex);
        bool private = n > 0;

        k->resolve = resolve_free(k->resolve);
        if (!l || l->verdict.verdict != VERDICT_ONLINE ||
            (outcome != DNS_OUTCOME_OK && outcome != DNS_OUTCOME_LIED) || n == 0)
                return; /* no answer says nothing: a lost query is not a portal */
        for (size_t i = 0; i < n; i++)
        private = private && stall_dns_private(l->info.addrs, l->info.n_addrs, &addrs[i]);
        if (!private) {
                k->was = addrs[0];
                k->shown = (IpAddr){};
                return;
        }
        log_debug("%s: the check host's name resolves to %s (was %s)", strempty(l->info.name),
                  addrs[0].text, k->was.family ? k->was.text : "not known");
        if (k->was.family == 0 ||
            (k->shown.family == addrs[0].family && streq(k->shown.text, addrs[0].text)))
                return;
        if (d->moved(l, &k->was, &addrs[0], d->userdata))
                k->shown = addrs[0];
}

static void look_start(StallDns *d, Link *l, const char *host)
{
        int family = l->verdict4.verdict == VERDICT_ONLINE ? AF_INET : AF_INET6;
        DnsLook *k;
        int r;

        if (l->info.n_dns == 0 || !l->prober || prober_round_running(l->prober))
                return; /* a round looks the host up itself */
        k = look_get(d, l, true);
        if (!k) {
                log_oom();
                return;
        }
        if (k->resolve)
                return;
        /* the last round's answer is the first thing to compare with */
        if (k->was.family != family) {
                k->was = (IpAddr){};
                if (prober_known_http(l->prober, family, &k->was) >= 0 &&
                    stall_dns_private(l->info.addrs, l->info.n_addrs, &k->was))
                        k->was = (IpAddr){};
        }
        k->family = family;
        r = resolve_start(d->m->event, l->info.name, l->info.dns, l->info.n_dns, host, family,
                          probe_mark(l, family), d->m->config->probe.dns_timeout_usec, on_resolved,
                          k, &k->resolve);
        if (r < 0)
                log_debug_errno(r, "%s: cannot look the check host up: %m", strempty(l->info.name));
}

static bool any_online(const StallDns *d)
{
        const Links *links = d->m->links;

        for (size_t i = 0; i < links->n_links; i++)
                if (links->links[i]->verdict.verdict == VERDICT_ONLINE)
                        return true;
        return false;
}

void stall_dns_arm(StallDns *d)
{
        uint64_t interval = d->m->config->probe.dns_watch_interval_usec;
        int enabled = SD_EVENT_OFF;

        if (interval == 0 || !any_online(d)) {
                (void)sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
                return;
        }
        if (sd_event_source_get_enabled(d->timer, &enabled) >= 0 && enabled != SD_EVENT_OFF)
                return;
        if (sd_event_source_set_time_relative(d->timer, interval) < 0 ||
            sd_event_source_set_enabled(d->timer, SD_EVENT_ONESHOT) < 0)
                log_warning("Cannot schedule the look at the check host's DNS answers.");
}

void stall_dns_rearm(StallDns *d)
{
        if (!d)
                return;
        (void)sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
        stall_dns_arm(d);
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        StallDns *d = userdata;
        _cleanup_free_ char *host = check_host(d->m->config);
        Links *links = d->m->links;

        for (size_t i = 0; host && i < links->n_links; i++) {
                Link *l = links->links[i];

                if (l->verdict.verdict == VERDICT_ONLINE && l->bearer != BEARER_VIRTUAL)
                        look_start(d, l, host);
        }
        stall_dns_arm(d);
        return 0;
}

int stall_dns_new(Core *m, stall_dns_moved_t moved, void *userdata, StallDns **ret)
{
        StallDns *d;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        *d = (StallDns){.m = m, .moved = moved, .userdata = userdata};
        r = sd_event_add_time_relative(m->event, &d->timer, CLOCK_MONOTONIC, 0, USEC_PER_SEC,
                                       on_timer, d);
        if (r < 0) {
                free(d);
                return r;
        }
        (void)sd_event_source_set_enabled(d->timer, SD_EVENT_OFF);
        (void)sd_event_source_set_description(d->timer, "stall-dns");
        *ret = d;
        return 0;
}

StallDns *stall_dns_free(StallDns *d)
{
        if (!d)
                return NULL;
        for (size_t i = 0; i < d->n_looks; i++) {
                resolve_free(d->looks[i]->resolve);
                free(d->looks[i]);
        }
        free(d->looks);
        sd_event_source_disable_unref(d->timer);
        free(d);
        return NULL;
}
