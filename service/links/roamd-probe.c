/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-text.h"
#include "roamd-capport.h"
#include "roamd-curl.h"
#include "roamd-http-answer.h"
#include "roamd-http-date.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-nat64-parse.h"
#include "roamd-nft.h"
#include "roamd-ping.h"
#include "roamd-pmtu.h"
#include "roamd-probe-answer.h"
#include "roamd-probe-internal.h"
#include "roamd-probe.h"
#include "roamd-reconcile.h"
#include "roamd-resolve.h"

/* (PROBE_LARGE_BYTES and PROBE_LARGE_SEGMENT: roamd-probe-answer.h) */
/* How long the large transfer may stay silent once the small probes answered: a lost
 * full-size segment is sent again within a second (RTO), several times in this. */
#define PROBE_LARGE_SILENCE_USEC (3 * USEC_PER_SEC)

static const char *family_name(int family)
{
        return family == AF_INET6 ? "IPv6" : "IPv4";
}

/* Whether the answer received so far can still be the expected one. A wrong status (not a
 * redirect, whose Location the whole answer gives), a Content-Length other than the expected
 * body's, or bytes that depart from it decide the answer without the rest of the body:
 * a login page served in place of the check body may be large and the link slow. */
static bool answer_can_match(Fetch *f, const char *ptr, size_t n)
{
        const ProbeConfig *c = &f->prober->link->core->config->probe;
        curl_off_t length = -1;
        long status = 0;
        size_t want;

        if (f->kind != FETCH_HTTP && f->kind != FETCH_GARDEN)
                return true;
        (void)curl_easy_getinfo(f->easy, CURLINFO_RESPONSE_CODE, &status);
        if (status != c->expect_status)
                return status >= 300 && status <= 399;
        /* A 204 has no content (RFC 9110 15.3.5); no ExpectBody: any body. */
        if (!c->expect_body || c->expect_status == 204)
                return true;
        want = strlen(c->expect_body);
        if (curl_easy_getinfo(f->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) == CURLE_OK &&
            length >= 0 && (uint64_t)length != want)
                return false;
        return f->body.size + n <= want && memcmp(c->expect_body + f->body.size, ptr, n) == 0;
}

static size_t body_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        Fetch *f = userdata;
        Body *b = &f->body;
        size_t n = size * nmemb, room = b->max - b->size;
        char *nd;

        /* The large transfer only counts bytes: enough of them is the answer. */
        if (f->kind == FETCH_LARGE) {
                b->size += n;
                if (b->size < PROBE_LARGE_BYTES)
                        return n;
                b->decided = true;
                return 0;
        }
        if (!answer_can_match(f, ptr, n)) {
                b->decided = true;
                return 0; /* aborts the transfer: the answer is decided */
        }
        if (n > room) {
                b->truncated = true;
                return 0; /* aborts the transfer: the answer is hostile or not ours */
        }
        nd = realloc(b->data, b->size + n + 1);
        if (!nd)
                return 0;
        b->data = nd;
        memcpy(b->data + b->size, ptr, n);
        b->size += n;
        b->data[b->size] = 0;
        return n;
}

/* The curl side of a fetch (the handle must be out of the multi handle already). */
static void fetch_release_transfer(Fetch *f)
{
        if (f->easy) {
                curl_easy_cleanup(f->easy);
                f->easy = NULL;
        }
        curl_slist_free_all(f->connect_to);
        curl_slist_free_all(f->headers);
        f->connect_to = f->headers = NULL;
        free(f->body.data);
        f->body = (Body){};
}

/* A transfer started before DNS answered, to an address DNS did not confirm: undone. */
static void fetch_abort_transfer(Fetch *f)
{
        if (f->easy)
                curl_glue_remove(f->prober->link->core->curl, f->easy);
        fetch_release_transfer(f);
        free(f->portal_url);
        f->portal_url = NULL;
        f->outcome = HTTP_OUTCOME_NOT_RUN;
        f->connect_usec = 0;
        f->speculative = f->transfer_done = false;
}

static void fetch_cancel(Fetch *f)
{
        Core *m = f->prober->link->core;

        f->resolve = resolve_free(f->resolve);
        if (f->easy) {
                curl_glue_remove(m->curl, f->easy);
                curl_easy_cleanup(f->easy);
                f->easy = NULL;
        }
        curl_slist_free_all(f->connect_to);
        curl_slist_free_all(f->headers);
        f->connect_to = f->headers = NULL;
        free(f->body.data);
        f->body = (Body){};
        free(f->portal_url);
        free(f->url);
        free(f->host);
        f->portal_url = f->url = f->host = NULL;
        f->running = f->done = false;
        f->speculative = f->transfer_done = f->shares_lookup = false;
        f->early = (IpAddr){};
        f->connect_usec = 0;
        f->dns = DNS_OUTCOME_NOT_RUN;
        f->outcome = HTTP_OUTCOME_NOT_RUN;
}

static void family_cancel(ProbeFamily *pf)
{
        fetch_cancel(&pf->fetch[FETCH_HTTP]);
        fetch_cancel(&pf->fetch[FETCH_HTTPS]);
        fetch_cancel(&pf->fetch[FETCH_GARDEN]);
        fetch_cancel(&pf->fetch[FETCH_LARGE]);
        pf->stall = sd_event_source_disable_unref(pf->stall);
        pf->ping = ping_free(pf->ping);
        pf->grace = sd_event_source_disable_unref(pf->grace);
        pf->dns_wait = sd_event_source_disable_unref(pf->dns_wait);
        pf->pass = reconcile_wait_free(pf->pass);
        pf->active = pf->settled = pf->partial = pf->opening = false;
}

static void prober_cancel(Prober *p)
{
        family_cancel(&p->fam[0]);
        family_cancel(&p->fam[1]);
        fetch_cancel(&p->capport);
        p->capport_active = false;
}

Prober *prober_free(Prober *p)
{
        if (!p)
                return NULL;
        prober_cancel(p);
        pmtu_search_free(p->fam[0].pmtu);
        pmtu_search_free(p->fam[1].pmtu);
        resolve_free(p->nat64);
        sd_event_source_disable_unref(p->timer);
        sd_event_source_disable_unref(p->rest);
        if (p->tls_share)
                curl_share_cleanup(p->tls_share); /* its transfers went with prober_cancel() */
        free(p->tls_network);
        free(p->portal_network);
        free(p);
        return NULL;
}

/* The share of TLS sessions for the link's network now (Link.NetworkId): a re-check resumes
 * the first contact's session (no certificate chain, one round trip less), never one of
 * another network (the server there would learn where this device was). NULL: none, the
 * fetch does a full handshake. */
static CURLSH *prober_tls_share(Prober *p)
{
        const char *id = p->link->facts.network_id;

        if (p->tls_share && !p->tls_stale && streq(p->tls_network, id))
                return p->tls_share;
        /* The first contact often runs before the network is known (its gateway's address
         * not resolved yet): those sessions were made on the network that is known now, as
         * a share is made anew whenever the network the link was known on changes. */
        if (p->tls_share && !p->tls_stale && !p->tls_network[0]) {
                char *t = strdup(id);

                if (!t)
                        return NULL;
                free(p->tls_network);
                p->tls_network = t;
                return p->tls_share;
        }
        if (p->tls_share) {
                /* in use by a transfer on the old network: this one goes without */
                if (curl_share_cleanup(p->tls_share) != CURLSHE_OK)
                        return NULL;
                p->tls_share = NULL;
                free(p->tls_network);
                p->tls_network = NULL;
        }
        p->tls_stale = false;
        p->tls_network = strdup(id);
        if (!p->tls_network)
                return NULL;
        p->tls_share = curl_tls_share_new();
        if (!p->tls_share) {
                free(p->tls_network);
                p->tls_network = NULL;
        }
        return p->tls_share;
}

static void prober_maybe_finish(Prober *p);

/* A VPN has no default route in the main table: roamd routes apps into it through the VPN
 * slot's table (docs/apps.md), which holds a default route into the VPN in use (the first
 * usable VPN link) for each family it has an address of. Probes of that link carry the slot's
 * mark, so they take the same table as the apps. 0: the main table decides. */
uint32_t probe_mark(const Link *l, int family)
{
        const Core *m = l->core;
        uint32_t mask = m->config->apps.mark_mask;
        const LinkViews *v = l->views;

        if (!m->apps_enforced || l->bearer != BEARER_VPN || !mask || !link_has_global(l, family))
                return 0;
        if (!v || !v->vpn || v->vpn(v->vpn_userdata) != l)
                return 0;
        return nft_slot_mark(mask, nft_slot_vpn(mask));
}

static void family_after_fetches(ProbeFamily *pf);
static void large_wait(ProbeFamily *pf);
static void family_progress(ProbeFamily *pf);

static void fetch_finished(Fetch *f)
{
        Prober *p = f->prober;

        f->running = false;
        f->done = true;
        if (f->family) {
                family_after_fetches(f->family);
                return;
        }
        /* The capport fetch: an answer, usable or not, was already recorded by
         * capport_classify(); here only the fetches that got no answer. */
        if (f->outcome != HTTP_OUTCOME_OK && f->outcome != HTTP_OUTCOME_WRONG)
                link_set_capport(p->link, NULL,
                                 f->dns == DNS_OUTCOME_OK || f->dns == DNS_OUTCOME_LIED
                                     ? "the captive portal API did not answer"
                                     : "the captive portal API's host did not resolve");
        /* "captive": true decides the families still waiting for their HTTPS probe. */
        for (int i = 0; i < 2; i++)
                family_progress(&p->fam[i]);
        prober_maybe_finish(p);
}

static void capport_classify(Fetch *f, long status)
{
        Link *l = f->prober->link;
        CapportInfo info = {};
        char *ctype = NULL;
        int r;

        curl_easy_getinfo(f->easy, CURLINFO_CONTENT_TYPE, &ctype);
        if (status != 200) {
                link_set_capport(l, NULL, "the captive portal API answered with an error status");
                f->outcome = HTTP_OUTCOME_WRONG;
                return;
        }
        if (f->body.truncated) {
                link_set_capport(l, NULL, "the captive portal API's answer is too large");
                f->outcome = HTTP_OUTCOME_WRONG;
                return;
        }
        if (!capport_content_type_ok(ctype)) {
                link_set_capport(l, NULL,
                                 "the captive portal API's answer is not application/captive+json");
                f->outcome = HTTP_OUTCOME_WRONG;
                return;
        }
        r = capport_parse(f->body.data ? f->body.data : "", f->body.size, &info);
        if (r < 0) {
                link_set_capport(l, NULL, "the captive portal API's answer is malformed");
                f->outcome = HTTP_OUTCOME_WRONG;
                return;
        }
        link_set_capport(l, &info, NULL);
        capport_info_done(&info);
        f->outcome = HTTP_OUTCOME_OK;
}

/* The expected HTTPS answer, TLS validated: its Date is a time sample (docs/time.md). The
 * server wrote it between our request and its first byte, to the second: Date + 0.5 s, within
 * 0.5 s + half the round trip, at the round trip's middle. */
static void fetch_record_date(Fetch *f, CURL *easy)
{
        Link *l = f->prober->link;
        _cleanup_free_ char *name = NULL;
        struct curl_header *h = NULL;
        curl_off_t pre = 0, first = 0, total = 0;
        long verify = -1;
        uint64_t date, now, rtt, first_at;
        TimeSample *s = &l->https_date[f->family->family == AF_INET6];

        if (curl_easy_getinfo(easy, CURLINFO_SSL_VERIFYRESULT, &verify) != CURLE_OK || verify != 0)
                return;
        if (curl_easy_header(easy, "Date", 0, CURLH_HEADER, -1, &h) != CURLHE_OK)
                return;
        if (http_date_parse(h->value, strlen(h->value), &date) < 0) {
                log_debug("%s: %s HTTPS answer's Date is not a date: ignored",
                          strempty(l->info.name), family_name(f->family->family));
                return;
        }
        if (curl_easy_getinfo(easy, CURLINFO_PRETRANSFER_TIME_T, &pre) != CURLE_OK ||
            curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &first) != CURLE_OK ||
            curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &total) != CURLE_OK || first < pre ||
            total < first)
                return;
        /* an interface name may hold any byte: the sample is said on the bus */
        if (roam_text_clean_str(strempty(l->info.name), 0, &name) < 0)
                return;
        rtt = (uint64_t)(first - pre);
        now = clock_now_usec(CLOCK_BOOTTIME);
        first_at = now - MIN(now, (uint64_t)(total - first));
        *s = (TimeSample){
            .kind = TIME_SOURCE_HTTPS_DATE,
            .realtime = date + 500 * USEC_PER_MSEC,
            .error = 500 * USEC_PER_MSEC + rtt / 2,
            .taken = first_at - MIN(first_at, rtt / 2),
        };
        snprintf(s->witness, sizeof(s->witness), "link:%s", name);
        snprintf(s->origin, sizeof(s->origin), "%s via %s (%s)", f->url, name,
                 family_name(f->family->family));
}

/* Connected, and not one full-size segment of the answer came (see large_stop()). */
static bool large_stalled(const Fetch *f, CURL *easy)
{
        curl_off_t connected = 0;

        (void)curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &connected);
        return probe_large_stalled(connected > 0, f->body.size);
}

static void on_fetch_done(CURL *easy, CURLcode result, void *userdata)
{
        Fetch *f = userdata;
        const ProbeConfig *c = &f->prober->link->core->config->probe;
        long status = 0;
        char *redirect = NULL;

        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(easy, CURLINFO_REDIRECT_URL, &redirect);
        if (log_get_max_level() >= LOG_DEBUG) {
                /* where the time went: connected, TLS done, first byte, end (µs from start) */
                curl_off_t t[4] = {};
                curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &t[0]);
                curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &t[1]);
                curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &t[2]);
                curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &t[3]);
                log_debug(
                    "%s: %s probe %s: %s, status %ld, %zu bytes%s (connect %" CURL_FORMAT_CURL_OFF_T
                    " tls %" CURL_FORMAT_CURL_OFF_T " first byte %" CURL_FORMAT_CURL_OFF_T
                    " end %" CURL_FORMAT_CURL_OFF_T " us)",
                    strempty(f->prober->link->info.name),
                    f->family ? family_name(f->family->family) : "capport", f->url,
                    f->body.decided ? "not the expected answer" : curl_easy_strerror(result),
                    status, f->body.size,
                    f->body.truncated ? " (cut at the limit)"
                    : f->body.decided ? " (decided before the body ended)"
                                      : "",
                    t[0], t[1], t[2], t[3]);
        }

        if (f->kind == FETCH_CAPPORT &&
            (result == CURLE_OK ||
             (result == CURLE_WRITE_ERROR && (f->body.truncated || f->body.decided))))
                capport_classify(f, status);
        else if (f->kind != FETCH_CAPPORT) {
                struct curl_header *age = NULL;
                char *portal_url = NULL;
                ProbeAnswer a = {
                    .kind = f->kind,
                    .transfer = result == CURLE_OK || (result == CURLE_WRITE_ERROR &&
                                                       (f->body.truncated || f->body.decided))
                                    ? PROBE_TRANSFER_ANSWERED
                                : result == CURLE_OPERATION_TIMEDOUT ? PROBE_TRANSFER_TIMEOUT
                                : result == CURLE_PEER_FAILED_VERIFICATION
                                    ? PROBE_TRANSFER_CERTIFICATE
                                    : PROBE_TRANSFER_FAILED,
                    .http =
                        {
                            .status = status,
                            .location = redirect,
                            .body = f->body.data ? f->body.data : "",
                            .body_size = f->body.size,
                            /* a body cut early is never the expected one */
                            .truncated = f->body.truncated || f->body.decided,
                            .url = f->url,
                        },
                };
                HttpExpect e = {.status = c->expect_status, .body = c->expect_body};

                if (a.transfer == PROBE_TRANSFER_ANSWERED)
                        a.age_header =
                            curl_easy_header(easy, "Age", 0, CURLH_HEADER, -1, &age) == CURLHE_OK;
                f->outcome = probe_answer_outcome(&a, &e, &portal_url);
                if (portal_url) {
                        free(f->portal_url);
                        f->portal_url = portal_url;
                }
                if (f->outcome == HTTP_OUTCOME_CACHED)
                        log_info("%s: %s probe %s was answered from a cache (Age: %s)",
                                 strempty(f->prober->link->info.name),
                                 family_name(f->family->family), f->url, age->value);
                else if (f->outcome == HTTP_OUTCOME_CERTIFICATE)
                        log_info("%s: %s HTTPS probe %s: the certificate does not validate (%s)",
                                 strempty(f->prober->link->info.name),
                                 family_name(f->family->family), f->url,
                                 f->error[0] ? f->error : curl_easy_strerror(result));
                else if (f->outcome == HTTP_OUTCOME_OK && f->kind == FETCH_HTTPS)
                        fetch_record_date(f, easy);
                /* the whole probe timeout ran out before the stall timer (large_wait()) */
                if (f->kind == FETCH_LARGE && f->family && a.transfer == PROBE_TRANSFER_TIMEOUT)
                        f->family->facts.large_stalled = large_stalled(f, easy);
        } else if (result == CURLE_OPERATION_TIMEDOUT)
                f->outcome = HTTP_OUTCOME_TIMEOUT;
        else
                f->outcome = HTTP_OUTCOME_FAILED;
        if (f->kind == FETCH_HTTP) {
                curl_off_t t = 0;
                if (curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &t) == CURLE_OK && t > 0) {
                        f->connect_usec = (uint64_t)t;
                        /* set before the verdict it leads to is published: whoever reacts
                         * to the link going online sees this round's measure */
                        f->prober->link->probe_rtt_usec = f->connect_usec;
                }
        }

        /* Everything the transfer needed goes now, not at the next round: with ten links
         * these are forty easy handles with their buffers. */
        fetch_release_transfer(f);
        f->transfer_done = true;
        if (f->speculative) {
                log_debug("%s: %s probe %s ended before DNS answered: held until it confirms "
                          "%s",
                          strempty(f->prober->link->info.name), family_name(f->family->family),
                          f->url, f->early.text);
                return;
        }
        fetch_finished(f);
}

static uint64_t probe_nonce(void)
{
        uint64_t v;

        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
                v = clock_now_usec(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 40);
        return v;
}

static int fetch_start_transfer(Fetch *f, const IpAddr *addr)
{
        Link *l = f->prober->link;
        Core *m = l->core;
        const ProbeConfig *c = &m->config->probe;
        /* Plain HTTP passes transparent caches: ask them not to answer, with a query no cache
         * has seen (the URL the answer is judged against stays the configured one). */
        bool bust = (f->kind == FETCH_HTTP || f->kind == FETCH_GARDEN || f->kind == FETCH_LARGE) &&
                    !strchr(f->url, '#');
        _cleanup_free_ char *nonced = NULL;
        int r;

        if (bust && asprintf(&nonced, "%s%croam-nonce=%016" PRIx64, f->url,
                             strchr(f->url, '?') ? '&' : '?', probe_nonce()) < 0)
                return -ENOMEM;
        f->body.max = c->max_body;
        r = curl_easy_link_new(
            &(const CurlLinkFetch){.url = nonced ?: f->url,
                                   .host = f->host,
                                   .port = f->port,
                                   .family = addr->family,
                                   .addr_text = addr->text,
                                   .ifname = l->info.name,
                                   .ifindex = l->ifindex,
                                   .timeout_ms = (long)(c->timeout_usec / USEC_PER_MSEC),
                                   .ca_file = c->ca_file,
                                   .user_agent = "roamd/" ROAM_VERSION,
                                   .write = body_write,
                                   .write_data = f,
                                   .mark = f->mark,
                                   .share = prober_tls_share(f->prober)},
            &f->easy, &f->connect_to);
        if (r < 0)
                return r;
        f->error[0] = 0;
        curl_easy_setopt(f->easy, CURLOPT_ERRORBUFFER, f->error);
        if (bust) {
                struct curl_slist *h;

                f->headers = curl_slist_append(NULL, "Cache-Control: no-cache");
                if (!f->headers)
                        return -ENOMEM;
                h = curl_slist_append(f->headers, "Pragma: no-cache");
                if (!h)
                        return -ENOMEM; /* (f->headers goes with the fetch) */
                curl_easy_setopt(f->easy, CURLOPT_HTTPHEADER, f->headers);
        }
        if (f->kind == FETCH_CAPPORT) {
                f->headers = curl_slist_append(NULL, "Accept: application/captive+json");
                curl_easy_setopt(f->easy, CURLOPT_HTTPHEADER, f->headers);
        }
        r = curl_glue_add(m->curl, f->easy, on_fetch_done, f);
        if (r < 0)
                return r;
        return 0;
}

static void fetch_resolved(Fetch *f, DnsOutcome outcome, const IpAddr *addrs, size_t n)
{
        const ProbeConfig *c = &f->prober->link->core->config->probe;
        IpAddr first = {};
        bool confirmed = false;
        int r;

        /* addrs lives in the Resolve: take what is needed before freeing it. */
        f->dns = probe_dns_outcome(c, f->kind, outcome, addrs, n);
        if (n > 0)
                first = addrs[0];
        log_debug("%s: %s DNS for %s: %s%s%s", strempty(f->prober->link->info.name),
                  f->family ? family_name(f->family->family) : "capport", f->host,
                  dns_outcome_to_string(f->dns), n ? " " : "", n ? first.text : "");
        for (size_t i = 0; f->speculative && f->dns == DNS_OUTCOME_OK && i < n; i++)
                confirmed = confirmed || (addrs[i].family == f->early.family &&
                                          streq(addrs[i].text, f->early.text));
        f->resolve = resolve_free(f->resolve);
        if (f->speculative) {
                if (confirmed) {
                        f->speculative = false;
                        if (f->transfer_done)
                                fetch_finished(f);
                        return;
                }
                log_debug("%s: %s DNS did not confirm %s: probing again",
                          strempty(f->prober->link->info.name), family_name(f->family->family),
                          f->early.text);
                fetch_abort_transfer(f);
        }
        if (f->family && f->dns == DNS_OUTCOME_OK)
                f->family->known[f->kind] = first;
        if (n == 0) {
                fetch_finished(f);
                return;
        }
        /* The API's URL comes from the network (DHCP, RA): never this machine's own. */
        if (f->kind == FETCH_CAPPORT) {
                const char *why =
                    curl_glue_target_refusal(f->prober->link->core->curl, first.family, first.text);
                if (why) {
                        _cleanup_free_ char *msg = NULL;
                        log_warning("%s: refused to open the captive portal API %s: %s is at %s, "
                                    "%s",
                                    strempty(f->prober->link->info.name), f->url, f->host,
                                    first.text, why);
                        if (asprintf(&msg, "the captive portal API's address %s is %s: refused",
                                     first.text, why) >= 0)
                                link_set_capport(f->prober->link, NULL, msg);
                        /* an answer of sorts: recorded above, not "did not answer" */
                        f->outcome = HTTP_OUTCOME_WRONG;
                        fetch_finished(f);
                        return;
                }
        }
        /* A lying DNS proves a portal already; the transfer still runs for its URL. */
        if (f->dns == DNS_OUTCOME_LIED && f->family)
                family_progress(f->family);
        r = fetch_start_transfer(f, &first);
        if (r < 0) {
                log_warning_errno(r, "%s: cannot start probe: %m",
                                  strempty(f->prober->link->info.name));
                f->outcome = HTTP_OUTCOME_FAILED;
                fetch_finished(f);
        }
}

/* The HTTP probe's lookup also answers the HTTPS probe when both URLs name the same host:
 * one query and one c-ares channel per host, family and round. */
static void on_fetch_resolved(Resolve *res, DnsOutcome outcome, const IpAddr *addrs, size_t n,
                              void *userdata)
{
        Fetch *f = userdata, *sibling = NULL;
        IpAddr copy[RESOLVE_MAX_ADDRS];
        unsigned round = 0;

        n = MIN(n, ELEMENTSOF(copy));
        memcpy(copy, addrs, n * sizeof(IpAddr)); /* addrs goes with the Resolve */
        if (f->family && f->kind == FETCH_HTTP && f->family->fetch[FETCH_HTTPS].shares_lookup) {
                sibling = &f->family->fetch[FETCH_HTTPS];
                round = f->family->round;
        }
        fetch_resolved(f, outcome, copy, n);
        /* (unless what the first answer set off started a new round meanwhile) */
        if (sibling && sibling->shares_lookup && sibling->family->round == round) {
                sibling->shares_lookup = false;
                fetch_resolved(sibling, outcome, copy, n);
        }
}

/* Sets the fetch up and, where the last round knew the check host's address, opens its
 * transfer to it: that SYN goes out before anything else of the round. The lookup follows
 * in fetch_lookup(). */
static void fetch_open(Prober *p, Fetch *f, ProbeFamily *pf, FetchKind kind, const char *url,
                       int family)
{
        Link *l = p->link;

        fetch_cancel(f);
        f->prober = p;
        f->family = pf;
        f->kind = kind;
        f->mark = pf ? probe_mark(l, family) : 0;
        f->running = true;
        f->url = strdup(url);
        if (!f->url || curl_url_host_port(url, &f->host, &f->port) < 0) {
                f->outcome = HTTP_OUTCOME_FAILED;
                fetch_finished(f);
                return;
        }
        /* The check host's address of the last round: connect to it while DNS runs, saving
         * the DNS round trip. The answer counts only if the link's DNS confirms the address
         * (else this transfer is undone and the normal one starts). */
        if (pf && pf->known[kind].family == family) {
                f->early = pf->known[kind];
                if (fetch_start_transfer(f, &f->early) >= 0) {
                        f->speculative = true;
                        log_debug("%s: %s probe %s to %s while DNS runs", strempty(l->info.name),
                                  family_name(family), url, f->early.text);
                } else
                        fetch_abort_transfer(f);
        }
}

static int fetch_lookup(Fetch *f)
{
        Link *l = f->prober->link;
        const Config *c = l->core->config;
        ProbeFamily *pf = f->family;
        int family = pf ? pf->family : AF_UNSPEC;

        if (!f->running || f->resolve || f->shares_lookup)
                return 0; /* ended already (an unusable URL), or looking up */
        if (pf && f->kind == FETCH_HTTPS && pf->fetch[FETCH_HTTP].resolve &&
            pf->fetch[FETCH_HTTP].mark == f->mark &&
            strcasecmp(pf->fetch[FETCH_HTTP].host, f->host) == 0) {
                f->shares_lookup = true;
                return 0;
        }
        return resolve_start(l->core->event, l->info.name, l->info.dns, l->info.n_dns, f->host,
                             family, f->mark, c->probe.dns_timeout_usec, on_fetch_resolved, f,
                             &f->resolve);
}

static const IpAddr *first_gateway(const Link *l, int family)
{
        for (size_t i = 0; i < l->info.n_gateways; i++)
                if (l->info.gateways[i].family == family && l->info.gateways[i].text[0])
                        return &l->info.gateways[i];
        return NULL;
}

static void family_settle(ProbeFamily *pf)
{
        pf->settled = true;
        prober_maybe_finish(pf->prober);
}

static void on_ping(Ping *ping, bool answered, void *userdata)
{
        ProbeFamily *pf = userdata;

        pf->ping = ping_free(pf->ping);
        pf->facts.gateway_answers = probe_gateway_answers(&pf->facts, answered);
        log_debug("%s: %s gateway %s", strempty(pf->prober->link->info.name),
                  family_name(pf->family), answered ? "answers" : "is silent");
        family_settle(pf);
}

static void family_after_fetches(ProbeFamily *pf)
{
        Fetch *http = &pf->fetch[FETCH_HTTP], *https = &pf->fetch[FETCH_HTTPS],
              *garden = &pf->fetch[FETCH_GARDEN], *large = &pf->fetch[FETCH_LARGE];
        Link *l = pf->prober->link;
        ProbeFetchResult r[FETCH_CAPPORT];
        const IpAddr *gw;

        if (!http->done || !https->done || garden->running) {
                family_progress(pf);
                return;
        }
        pf->grace = sd_event_source_disable_unref(pf->grace);
        if (large->running) {
                large_wait(pf);
                return;
        }
        pf->stall = sd_event_source_disable_unref(pf->stall);

        for (int k = 0; k < FETCH_CAPPORT; k++)
                r[k] = (ProbeFetchResult){
                    .done = pf->fetch[k].done,
                    .dns = pf->fetch[k].dns,
                    .outcome = pf->fetch[k].outcome,
                };
        probe_facts_from_fetches(&pf->facts, r);

        /* Only when nothing out there answered does it matter whether the gateway does. */
        if (probe_facts_answered(&pf->facts)) {
                pf->facts.gateway_answers = true;
                family_settle(pf);
                return;
        }
        gw = first_gateway(l, pf->family);
        if (!gw ||
            ping_start(l->core->event, l->info.name, l->ifindex, gw,
                       l->core->config->probe.ping_timeout_usec, on_ping, pf, &pf->ping) < 0) {
                pf->facts.gateway_answers = probe_gateway_answers(&pf->facts, false);
                family_settle(pf);
        }
}

/* The large transfer ends now: stuck without one full-size segment of its answer on a
 * connection that was made is an MTU black hole; anything else (slow, lossy, refused) is
 * not. The headers may have come: servers send them in a short segment of their own. */
static void large_stop(ProbeFamily *pf)
{
        Fetch *f = &pf->fetch[FETCH_LARGE];
        Link *l = pf->prober->link;

        pf->stall = sd_event_source_disable_unref(pf->stall);
        if (!f->running)
                return;
        if (f->easy && !f->speculative)
                pf->facts.large_stalled = large_stalled(f, f->easy);
        log_info("%s: %s large transfer %s: %s", strempty(l->info.name), family_name(pf->family),
                 f->url,
                 pf->facts.large_stalled ? "no full-size segment came: full-size packets vanish"
                                         : "still running, not waited for");
        f->resolve = resolve_free(f->resolve);
        fetch_abort_transfer(f);
        f->outcome = HTTP_OUTCOME_TIMEOUT;
        fetch_finished(f); /* (goes on in family_after_fetches()) */
}

static int on_stall(sd_event_source *s, uint64_t usec, void *userdata)
{
        large_stop(userdata);
        return 0;
}

/* The small probes are in, the large transfer still runs. Only when the check answered does
 * it matter (a link that fails anyway is not held up): it gets a while to bring its first
 * bytes, then it is judged on what it got. */
static void large_wait(ProbeFamily *pf)
{
        Link *l = pf->prober->link;
        const Fetch *http = &pf->fetch[FETCH_HTTP], *https = &pf->fetch[FETCH_HTTPS];
        uint64_t budget = MAX(PROBE_LARGE_SILENCE_USEC, 8 * http->connect_usec);

        if (pf->stall)
                return;
        if (http->outcome != HTTP_OUTCOME_OK && https->outcome != HTTP_OUTCOME_OK) {
                large_stop(pf);
                return;
        }
        if (sd_event_add_time_relative(l->core->event, &pf->stall, CLOCK_MONOTONIC, budget,
                                       USEC_PER_MSEC, on_stall, pf) < 0) {
                large_stop(pf);
                return;
        }
        (void)sd_event_source_set_description(pf->stall, "probe-large");
}

void probe_base_facts(const Link *l, int family, ProbeFacts *f)
{
        *f = (ProbeFacts){.carrier = l->info.admin_up && l->info.carrier};
        for (size_t i = 0; i < l->info.n_addrs; i++) {
                const LinkAddress *a = &l->info.addrs[i];
                if (a->addr.family != family)
                        continue;
                f->has_address = true;
                if (a->scope == ADDR_SCOPE_GLOBAL || a->scope == ADDR_SCOPE_SITE)
                        f->has_usable = true;
        }
        for (size_t i = 0; i < l->info.n_gateways; i++)
                if (l->info.gateways[i].family == family)
                        f->has_route = true;
        /* The VPN's default route is in its slot's table. */
        if (!f->has_route && probe_mark(l, family))
                f->has_route = true;
}

static CapportOutcome capport_outcome(const Link *l)
{
        return !l->capport_valid    ? CAPPORT_OUTCOME_NONE
               : l->capport.captive ? CAPPORT_OUTCOME_CAPTIVE
                                    : CAPPORT_OUTCOME_NOT_CAPTIVE;
}

static DnsOutcome family_dns(const ProbeFamily *pf)
{
        return probe_family_dns(pf->fetch[FETCH_HTTP].dns, pf->fetch[FETCH_HTTPS].dns);
}

static void family_publish(ProbeFamily *pf, VerdictResult v)
{
        Link *l = pf->prober->link;
        const char *portal = NULL;

        if (v.reason == REASON_CAPPORT)
                portal = l->capport.user_portal_url;
        else if (v.reason == REASON_WALLED_GARDEN)
                portal = pf->fetch[FETCH_GARDEN].portal_url;
        else if (v.verdict == VERDICT_PORTAL)
                portal = pf->fetch[FETCH_HTTP].portal_url;
        link_set_verdict(l, pf->family, v, portal);
}

static int on_grace(sd_event_source *s, uint64_t usec, void *userdata)
{
        ProbeFamily *pf = userdata;
        const Link *l = pf->prober->link;

        pf->grace = sd_event_source_disable_unref(pf->grace);
        if (!pf->active || pf->settled || pf->fetch[FETCH_HTTPS].done)
                return 0;
        log_info("%s: %s HTTPS probe has not answered in time; partial while it still runs",
                 strempty(pf->prober->link->info.name), family_name(pf->family));
        pf->partial = true;
        /* Already partial (behind a black hole HTTPS's certificate vanishes too): its reason
         * stands until the round ends, or it would flap mtu -> https-failed -> mtu. */
        if ((pf->family == AF_INET6 ? &l->verdict6 : &l->verdict4)->verdict == VERDICT_PARTIAL)
                return 0;
        family_publish(pf, (VerdictResult){VERDICT_PARTIAL,
                                           pf->fetch[FETCH_HTTP].outcome == HTTP_OUTCOME_CACHED
                                               ? REASON_HTTP_CACHED
                                               : REASON_HTTPS_FAILED});
        return 0;
}

/* What is known before both probes ended: publish a verdict that is already proven, or,
 * once HTTP answered as expected, give HTTPS a budget measured on this link. */
static void family_progress(ProbeFamily *pf)
{
        Link *l = pf->prober->link;
        const ProbeConfig *c = &l->core->config->probe;
        Fetch *http = &pf->fetch[FETCH_HTTP], *https = &pf->fetch[FETCH_HTTPS];
        ProbeFacts f = pf->facts;
        VerdictResult v;
        uint64_t budget;

        if (!pf->active || pf->settled || https->done)
                return;
        f.dns = family_dns(pf);
        f.http = http->done ? http->outcome : HTTP_OUTCOME_NOT_RUN;
        f.https = HTTP_OUTCOME_NOT_RUN;
        f.capport = capport_outcome(l);
        if (verdict_decide_early(&f, &v)) {
                log_debug("%s: %s decided before the HTTPS probe ended", strempty(l->info.name),
                          family_name(pf->family));
                family_publish(pf, v);
                return;
        }
        if ((f.http != HTTP_OUTCOME_OK && f.http != HTTP_OUTCOME_CACHED) || pf->grace ||
            pf->partial)
                return;
        /* HTTPS needs one or two round trips more than HTTP (the TLS handshake): four times
         * the measured TCP handshake is plenty, within the configured bounds. */
        budget = MIN(MAX(4 * http->connect_usec, c->https_grace_min_usec), c->https_grace_max_usec);
        log_debug("%s: %s HTTP answered (TCP handshake %.1f ms); HTTPS has %.0f ms more",
                  strempty(l->info.name), family_name(pf->family), (double)http->connect_usec / 1e3,
                  (double)budget / 1e3);
        if (sd_event_add_time_relative(l->core->event, &pf->grace, CLOCK_MONOTONIC, budget,
                                       USEC_PER_MSEC, on_grace, pf) < 0) {
                log_warning("%s: cannot time the HTTPS probe.", strempty(l->info.name));
                return;
        }
        (void)sd_event_source_set_description(pf->grace, "probe-https-grace");
}

static void on_pmtu_done(PmtuSearch *s, uint32_t mtu, void *userdata)
{
        ProbeFamily *pf = userdata;

        pf->pmtu = pmtu_search_free(pf->pmtu);
        link_set_working_mtu(pf->prober->link, pf->family, mtu);
}

/* Behind a black hole, the size that still passes is searched once while the verdict stays
 * mtu (a partial link's rounds come every few seconds; its path does not change with them).
 * Any other verdict ends the search and forgets what it found. */
static void family_follow_mtu(ProbeFamily *pf, VerdictResult v)
{
        Link *l = pf->prober->link;
        const Fetch *large = &pf->fetch[FETCH_LARGE];
        int r;

        if (v.reason != REASON_MTU) {
                pf->pmtu = pmtu_search_free(pf->pmtu);
                pf->pmtu_searched = false;
                link_set_working_mtu(l, pf->family, 0);
                return;
        }
        if (pf->pmtu || pf->pmtu_searched || pf->known[FETCH_LARGE].family != pf->family ||
            !large->url || !large->host)
                return;
        pf->pmtu_searched = true;
        r = pmtu_search_start(
            l->core->curl,
            &(PmtuTarget){
                .url = large->url,
                .host = large->host,
                .port = large->port,
                .addr = pf->known[FETCH_LARGE],
                .ifname = strempty(l->info.name),
                .ifindex = l->ifindex,
                .mark = large->mark,
                .link_mtu = l->info.mtu,
                /* a lost segment is sent again within this (RTO);
                 * the first handshake after carrier-up may have waited
                 * for the neighbour: at most the large one's silence */
                .attempt_usec = MIN(
                    MIN(MAX(PROBE_LARGE_SILENCE_USEC / 2, 8 * pf->fetch[FETCH_HTTP].connect_usec),
                        PROBE_LARGE_SILENCE_USEC),
                    l->core->config->probe.timeout_usec),
                .ca_file = l->core->config->probe.ca_file,
            },
            on_pmtu_done, pf, &pf->pmtu);
        if (r < 0)
                log_debug_errno(r, "%s: %s path MTU not searched: %m", strempty(l->info.name),
                                family_name(pf->family));
}

/* Each family's verdict is set as soon as its own facts are in (IPv6 may wait a second for
 * neighbour discovery while IPv4 is long done); the round ends with the last of them. */
static void prober_maybe_finish(Prober *p)
{
        Link *l = p->link;
        bool decided = false;

        if (p->starting || (p->capport_active && !p->capport.done))
                return;

        for (int i = 0; i < 2; i++) {
                ProbeFamily *pf = &p->fam[i];
                VerdictResult v;

                if (!pf->active || !pf->settled)
                        continue;
                pf->facts.capport = capport_outcome(l);
                v = verdict_decide(&pf->facts);
                if (pf->partial && v.verdict == VERDICT_ONLINE)
                        log_info("%s: %s HTTPS probe answered late: online", strempty(l->info.name),
                                 family_name(pf->family));
                family_publish(pf, v);
                family_follow_mtu(pf, v);
                pf->active = false;
                decided = true;
        }
        if (!decided || p->fam[0].active || p->fam[1].active)
                return;

        /* A round that needed no probe (no carrier...) is no probe: LastProbe stays. */
        if (p->probed) {
                l->last_probe_usec = clock_now_usec(CLOCK_REALTIME);
                l->probe_duration_usec = clock_now_usec(CLOCK_MONOTONIC) - p->round_start;
                link_probe_finished(l);
                /* A round's TLS handshakes leave freed chunks all over the heap: give those
                 * pages back, so what stays resident is what roamd keeps. */
                core_schedule_trim(l->core);
        }

        prober_schedule_next(p);
}

/* Reasons that come from the link's state alone: a probe started now is the first answer. */
static bool reason_is_link_state(VerdictReason r)
{
        return r >= REASON_NOT_PROBED && r <= REASON_NO_ROUTE;
}

int prober_known_http(const Prober *p, int family, IpAddr *ret)
{
        const IpAddr *a;

        if (!p || (family != AF_INET && family != AF_INET6))
                return -EINVAL;
        a = &p->fam[family == AF_INET6].known[FETCH_HTTP];
        if (a->family != family)
                return -ENOENT;
        *ret = *a;
        return 0;
}

const void *prober_family(const Prober *p, int family)
{
        return &p->fam[family == AF_INET6];
}

bool prober_round_running(const Prober *p)
{
        return p && (p->starting || p->fam[0].active || p->fam[1].active);
}

bool link_awaits_first_answer(const Link *l)
{
        const VerdictResult *v[2] = {&l->verdict4, &l->verdict6};
        bool checking = false;

        for (size_t i = 0; i < 2; i++) {
                /* (a round still starting publishes `checking` in a moment) */
                const ProbeFamily *pf = l->prober ? &l->prober->fam[i] : NULL;
                if (v[i]->verdict == VERDICT_CHECKING || (pf && pf->opening && pf->checking))
                        checking = true;
                else if (!reason_is_link_state(v[i]->reason))
                        return false;
        }
        return checking;
}

static void family_fail(ProbeFamily *pf, int r)
{
        log_warning_errno(r, "%s: cannot start %s probe: %m", pf->prober->link->info.name,
                          family_name(pf->family));
        family_cancel(pf);
        pf->active = pf->settled = true;
}

static void on_pass_done(Reconcile *rc, int result, void *userdata);

/* The garden probe's URL: a leading "*." of its host becomes a random name, one no garden
 * can have on its list (the domain's DNS answers every name). */
static char *garden_url(const char *url)
{
        const char *star = strchr(url, '*');
        char *u;

        if (!star)
                return strdup(url);
        if (asprintf(&u, "%.*sr%012" PRIx64 "%s", (int)(star - url), url,
                     probe_nonce() & UINT64_C(0xffffffffffff), star + 1) < 0)
                return NULL;
        return u;
}

/* RFC 7050 NAT64 prefix discovery: a fact of the link, not part of the verdict. It runs
 * beside each IPv6 round through the link's DNS servers and holds nothing up; a timeout keeps
 * what the last answer said, any other answer replaces it. */
static void on_nat64_resolved(Resolve *res, DnsOutcome outcome, const IpAddr *addrs, size_t n,
                              void *userdata)
{
        Prober *p = userdata;
        Link *l = p->link;
        struct in6_addr a[RESOLVE_MAX_ADDRS];
        char buf[NAT64_PREFIX_STRLEN];
        const char *why = NULL;
        Nat64Prefix prefix;
        size_t k = 0;

        for (size_t i = 0; i < n && k < ELEMENTSOF(a); i++)
                if (addrs[i].family == AF_INET6 && inet_pton(AF_INET6, addrs[i].text, &a[k]) == 1)
                        k++;
        p->nat64 = resolve_free(p->nat64); /* addrs goes with it: copied above */
        if (outcome == DNS_OUTCOME_TIMEOUT)
                return;
        if (nat64_prefix_find(a, k, &prefix, &why) < 0) {
                if (why)
                        log_warning("%s: ignoring the NAT64 prefix of ipv4only.arpa's answer: %s",
                                    strempty(l->info.name), why);
                link_set_nat64_prefix(l, NULL);
                return;
        }
        link_set_nat64_prefix(l, nat64_prefix_to_string(&prefix, buf));
}

static void nat64_start(Prober *p)
{
        Link *l = p->link;
        int r;

        p->nat64 = resolve_free(p->nat64);
        r = resolve_start(l->core->event, l->info.name, l->info.dns, l->info.n_dns, "ipv4only.arpa",
                          AF_INET6, probe_mark(l, AF_INET6),
                          l->core->config->probe.dns_timeout_usec, on_nat64_resolved, p, &p->nat64);
        if (r < 0)
                log_debug_errno(r, "%s: cannot look for a NAT64 prefix: %m",
                                strempty(l->info.name));
}

static void nat64_stop(Prober *p)
{
        p->nat64 = resolve_free(p->nat64);
        link_set_nat64_prefix(p->link, NULL);
}

static void family_open_fetches(ProbeFamily *pf)
{
        Prober *p = pf->prober;
        const ProbeConfig *c = &p->link->core->config->probe;
        _cleanup_free_ char *garden = NULL;

        fetch_open(p, &pf->fetch[FETCH_HTTP], pf, FETCH_HTTP, c->http_url, pf->family);
        fetch_open(p, &pf->fetch[FETCH_HTTPS], pf, FETCH_HTTPS, c->https_url, pf->family);
        if (c->large_url)
                fetch_open(p, &pf->fetch[FETCH_LARGE], pf, FETCH_LARGE, c->large_url, pf->family);
        if (!c->garden_url)
                return;
        garden = garden_url(c->garden_url);
        if (!garden) {
                log_oom();
                return;
        }
        fetch_open(p, &pf->fetch[FETCH_GARDEN], pf, FETCH_GARDEN, garden, pf->family);
}

/* The first half of a family's round start: its probes' transfers to the last round's
 * addresses. Returns whether one was opened (a request may be ready to go). */
static bool family_open(ProbeFamily *pf, bool facts_changed)
{
        Prober *p = pf->prober;
        Link *l = p->link;
        const VerdictResult *cur = pf->family == AF_INET6 ? &l->verdict6 : &l->verdict4;

        family_cancel(pf);
        pf->round++;
        probe_base_facts(l, pf->family, &pf->facts);
        pf->active = true;
        if (!verdict_needs_probe(&pf->facts)) {
                /* The link's own state decides: no waiting for any probe. */
                pf->settled = true;
                if (pf->family == AF_INET6)
                        nat64_stop(p);
                return false;
        }
        p->probed = true;
        log_debug("%s: %s probe round starts", strempty(l->info.name), family_name(pf->family));
        /* Until the first answer on new facts the old verdict is not known to hold. */
        pf->checking = facts_changed || reason_is_link_state(cur->reason);
        pf->before = *cur;
        pf->opening = true;
        /* A VPN is probed through its slot's table: the probes wait for the pass that puts
         * the VPN's routes there (scheduled: a round starts inside a sync, whose link list is
         * only half updated, and a pass never runs there). */
        if (probe_mark(l, pf->family)) {
                int r = reconcile_wait(l->core->reconcile, on_pass_done, pf, NULL, &pf->pass);
                if (r >= 0)
                        return false;
                log_warning_errno(r, "%s: cannot wait for the routing pass: %m",
                                  strempty(l->info.name));
        }
        family_open_fetches(pf);
        return pf->fetch[FETCH_HTTP].speculative || pf->fetch[FETCH_HTTPS].speculative ||
               pf->fetch[FETCH_GARDEN].speculative || pf->fetch[FETCH_LARGE].speculative;
}

/* The probes' lookups (and NAT64's beside an IPv6 round). */
static void family_lookups(ProbeFamily *pf)
{
        int r;

        r = fetch_lookup(&pf->fetch[FETCH_HTTP]);
        if (r >= 0)
                r = fetch_lookup(&pf->fetch[FETCH_HTTPS]);
        if (r >= 0)
                r = fetch_lookup(&pf->fetch[FETCH_GARDEN]);
        if (r >= 0)
                r = fetch_lookup(&pf->fetch[FETCH_LARGE]);
        if (r < 0) {
                family_fail(pf, r);
                return;
        }
        if (pf->family == AF_INET6)
                nat64_start(pf->prober);
}

/* No DNS server came within a lookup's time: the lookups run now, and fail. */
static int on_dns_wait(sd_event_source *s, uint64_t usec, void *userdata)
{
        ProbeFamily *pf = userdata;
        Prober *p = pf->prober;

        pf->dns_wait = sd_event_source_disable_unref(pf->dns_wait);
        log_debug("%s: %s: no DNS server known: the lookups fail", strempty(p->link->info.name),
                  family_name(pf->family));
        p->starting = true; /* (what failing at once decides is published once) */
        family_lookups(pf);
        p->starting = false;
        prober_maybe_finish(p);
        return 0;
}

/* The second half: the lookups, then `checking` (unless starting already decided
 * something). */
static void family_start_rest(ProbeFamily *pf)
{
        Link *l = pf->prober->link;
        const VerdictResult *cur = pf->family == AF_INET6 ? &l->verdict6 : &l->verdict4;
        uint64_t wait = l->core->config->probe.dns_timeout_usec;

        if (!pf->opening || pf->pass)
                return; /* (waiting for the pass: on_pass_done() goes on) */
        pf->opening = false;
        /* An RA's address and route come a moment before its DNS server (RDNSS) is known: a
         * round that looked up through no server would publish `local (dns-failed)`, undone
         * as soon as the server comes. It waits for a server as long as a lookup may take;
         * the server's arrival starts a new round (the link's facts changed). */
        if (l->info.n_dns == 0 && wait > 0 &&
            sd_event_add_time_relative(l->core->event, &pf->dns_wait, CLOCK_MONOTONIC, wait, 0,
                                       on_dns_wait, pf) >= 0) {
                (void)sd_event_source_set_description(pf->dns_wait, "probe-dns-wait");
                log_debug("%s: %s: no DNS server known yet: waiting for one",
                          strempty(l->info.name), family_name(pf->family));
        } else
                family_lookups(pf);
        if (pf->checking && cur->verdict == pf->before.verdict && cur->reason == pf->before.reason)
                link_set_verdict(l, pf->family,
                                 (VerdictResult){VERDICT_CHECKING, REASON_NOT_PROBED}, NULL);
}

/* The pass a VPN's probes waited for ran (whatever its outcome: a slot without routes shows
 * as a failed probe): the round goes on. */
static void on_pass_done(Reconcile *rc, int result, void *userdata)
{
        ProbeFamily *pf = userdata;
        Prober *p = pf->prober;

        pf->pass = reconcile_wait_free(pf->pass);
        family_open_fetches(pf);
        family_start_rest(pf);
        prober_maybe_finish(p);
}

static void capport_start(Prober *p)
{
        Link *l = p->link;
        int r;

        fetch_cancel(&p->capport);
        p->capport_active = false;
        if (!link_needs_probe(l)) {
                if (l->capport_valid || l->capport_error)
                        link_set_capport(l, NULL, NULL);
                return;
        }
        p->capport_started = true;
        if (!l->info.captive_portal_url) {
                if (l->capport_valid || l->capport_error)
                        link_set_capport(l, NULL, NULL);
                return;
        }
        /* RFC 8910 section 2: this URN says the network has no captive portal. */
        if (streq(l->info.captive_portal_url, "urn:ietf:params:capport:unrestricted")) {
                CapportInfo open = {.captive = false};
                link_set_capport(l, &open, NULL);
                return;
        }
        if (link_capport_url_rejected(l)) {
                link_set_capport(l, NULL,
                                 "the announced captive portal API URL is not a valid https URL");
                return;
        }
        p->capport_active = true;
        fetch_open(p, &p->capport, NULL, FETCH_CAPPORT, l->info.captive_portal_url, AF_UNSPEC);
        r = fetch_lookup(&p->capport);
        if (r < 0) {
                fetch_cancel(&p->capport);
                p->capport_active = false;
        }
}

static void prober_start_rest(Prober *p)
{
        (void)sd_event_source_set_enabled(p->rest, SD_EVENT_OFF);
        family_start_rest(&p->fam[0]);
        family_start_rest(&p->fam[1]);
        if (p->rest_capport)
                capport_start(p);
        p->rest_capport = false;
        p->starting = false;
        /* What settled while starting (an unusable URL, a family without probes). */
        prober_maybe_finish(p);
}

static int on_rest(sd_event_source *s, void *userdata)
{
        prober_start_rest(userdata);
        return 0;
}

/* families: PROBE_IPV4 | PROBE_IPV6. A round of both also looks at the portal API again.
 * Where a probe's transfer opened at once (to the last round's address), the rest of the
 * start (lookups, the portal API, publishing `checking`) waits for the loop's next turn:
 * on a link that answers at once (a LAN, veth) the handshake is done by then and the
 * request goes first, not after ~2 ms of the other family's set-up and D-Bus signals. */
void prober_start(Prober *p, unsigned families, bool facts_changed)
{
        /* capport_active stays set once its fetch is done (prober_maybe_finish() asks for
         * both): a done fetch is no running round, or every later round's clock would
         * start at the first one's. */
        bool idle =
            !p->fam[0].active && !p->fam[1].active && !(p->capport_active && !p->capport.done);
        bool opened = false;

        (void)sd_event_source_set_enabled(p->timer, SD_EVENT_OFF);
        /* The network's identity is learned after the first packets (its gateway's address):
         * the first contact after carrier-up must not take the last network's sessions. */
        if (!(p->link->info.admin_up && p->link->info.carrier))
                p->tls_stale = true;
        if (idle) {
                p->round_start = clock_now_usec(CLOCK_MONOTONIC);
                p->probed = false;
                p->round_families = 0;
        }
        p->round_families |= families;
        p->starting = true;
        if (families & PROBE_IPV4)
                opened = family_open(&p->fam[0], facts_changed) || opened;
        if (families & PROBE_IPV6)
                opened = family_open(&p->fam[1], facts_changed) || opened;
        if (families == (PROBE_IPV4 | PROBE_IPV6) || !p->capport_started)
                p->rest_capport = true;
        if (opened && sd_event_source_set_enabled(p->rest, SD_EVENT_ONESHOT) >= 0)
                return;
        prober_start_rest(p);
}

int prober_new(Link *l, Prober **ret)
{
        Prober *p;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->link = l;
        p->fam[0] = (ProbeFamily){.prober = p, .family = AF_INET};
        p->fam[1] = (ProbeFamily){.prober = p, .family = AF_INET6};
        for (int i = 0; i < 2; i++) {
                p->fam[i].fetch[FETCH_HTTP].prober = p;
                p->fam[i].fetch[FETCH_HTTPS].prober = p;
                p->fam[i].fetch[FETCH_GARDEN].prober = p;
                p->fam[i].fetch[FETCH_LARGE].prober = p;
        }
        p->capport.prober = p;
        r = sd_event_add_time_relative(l->core->event, &p->timer, CLOCK_MONOTONIC, 0, 0,
                                       prober_on_timer, p);
        if (r < 0) {
                free(p);
                return r;
        }
        (void)sd_event_source_set_enabled(p->timer, SD_EVENT_OFF);
        (void)sd_event_source_set_description(p->timer, "probe");
        r = sd_event_add_defer(l->core->event, &p->rest, on_rest, p);
        if (r < 0) {
                prober_free(p);
                return r;
        }
        (void)sd_event_source_set_enabled(p->rest, SD_EVENT_OFF);
        (void)sd_event_source_set_description(p->rest, "probe-start");
        *ret = p;
        return 0;
}

int link_reprobe_families(Link *l, unsigned families)
{
        if (l->bearer == BEARER_VIRTUAL || !l->prober)
                return link_reprobe(l);
        prober_restart(l->prober, families);
        return 0;
}

int link_reprobe(Link *l)
{
        int r;

        /* Virtual links never count for connectivity: they are not probed. */
        if (l->bearer == BEARER_VIRTUAL) {
                l->prober = prober_free(l->prober);
                link_set_verdict(l, AF_INET, (VerdictResult){VERDICT_OFFLINE, REASON_NOT_PROBED},
                                 NULL);
                link_set_verdict(l, AF_INET6, (VerdictResult){VERDICT_OFFLINE, REASON_NOT_PROBED},
                                 NULL);
                return 0;
        }
        if (!l->prober) {
                r = prober_new(l, &l->prober);
                if (r < 0)
                        return log_warning_errno(r, "%s: cannot create prober: %m",
                                                 strempty(l->info.name));
        }
        prober_trigger(l->prober);
        return 0;
}
