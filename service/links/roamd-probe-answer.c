/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roamd-probe-answer.h"

HttpOutcome probe_answer_outcome(const ProbeAnswer *a, const HttpExpect *e, char **ret_portal_url)
{
        HttpOutcome o;

        *ret_portal_url = NULL;
        switch (a->transfer) {
        case PROBE_TRANSFER_ANSWERED:
                break;
        case PROBE_TRANSFER_TIMEOUT:
                return HTTP_OUTCOME_TIMEOUT;
        case PROBE_TRANSFER_CERTIFICATE:
                /* Someone answered for the check host without its certificate: evidence of
                 * an intercepting portal, not a failure of the probe. */
                return a->kind == FETCH_HTTPS ? HTTP_OUTCOME_CERTIFICATE : HTTP_OUTCOME_FAILED;
        case PROBE_TRANSFER_FAILED:
        case _PROBE_TRANSFER_MAX:
        case _PROBE_TRANSFER_INVALID:
                return HTTP_OUTCOME_FAILED;
        }
        if (a->kind == FETCH_LARGE)
                return a->http.status == 200 && a->http.body_size >= PROBE_LARGE_BYTES
                           ? HTTP_OUTCOME_OK
                           : HTTP_OUTCOME_WRONG;
        /* A proxy on the way that could not reach the check server (RFC 9110 15.6.3, 15.6.5; a
         * cache asked not to answer from its store whose upstream is gone): the probe failed,
         * no portal spoke. */
        if (a->kind != FETCH_HTTPS && (a->http.status == 502 || a->http.status == 504))
                return HTTP_OUTCOME_FAILED;
        o = http_answer_classify(&a->http, e, ret_portal_url);
        /* Plain HTTP asks caches not to answer (Cache-Control: no-cache, a query of its own):
         * an expected answer that still carries Age came from a cache that ignored that. */
        if (o == HTTP_OUTCOME_OK && a->age_header &&
            (a->kind == FETCH_HTTP || a->kind == FETCH_GARDEN))
                o = HTTP_OUTCOME_CACHED;
        return o;
}

static bool addr_expected(const ProbeConfig *c, const IpAddr *addrs, size_t n)
{
        if (c->n_expect_addrs == 0)
                return true;
        for (size_t i = 0; i < n; i++)
                for (size_t k = 0; k < c->n_expect_addrs; k++)
                        if (addrs[i].family == c->expect_addrs[k].family &&
                            streq(addrs[i].text, c->expect_addrs[k].text))
                                return true;
        return false;
}

DnsOutcome probe_dns_outcome(const ProbeConfig *c, FetchKind kind, DnsOutcome outcome,
                             const IpAddr *addrs, size_t n)
{
        if (outcome == DNS_OUTCOME_OK && (kind == FETCH_HTTP || kind == FETCH_HTTPS) &&
            !addr_expected(c, addrs, n))
                return DNS_OUTCOME_LIED;
        return outcome;
}

bool probe_large_stalled(bool connected, size_t body_size)
{
        return connected && body_size < PROBE_LARGE_SEGMENT;
}

DnsOutcome probe_family_dns(DnsOutcome http, DnsOutcome https)
{
        if (http != DNS_OUTCOME_OK && http != DNS_OUTCOME_LIED &&
            (https == DNS_OUTCOME_OK || https == DNS_OUTCOME_LIED))
                return https;
        return http;
}

void probe_facts_from_fetches(ProbeFacts *f, const ProbeFetchResult r[static FETCH_CAPPORT])
{
        const ProbeFetchResult *garden = &r[FETCH_GARDEN];

        f->dns = probe_family_dns(r[FETCH_HTTP].dns, r[FETCH_HTTPS].dns);
        f->http = r[FETCH_HTTP].outcome;
        f->https = r[FETCH_HTTPS].outcome;
        /* A name the garden's DNS does not give out is as telling as a blocked connection. */
        f->garden = !garden->done                   ? HTTP_OUTCOME_NOT_RUN
                    : garden->dns == DNS_OUTCOME_OK ? garden->outcome
                                                    : HTTP_OUTCOME_FAILED;
}

bool probe_facts_answered(const ProbeFacts *f)
{
        return f->http == HTTP_OUTCOME_OK || f->https == HTTP_OUTCOME_OK ||
               f->http == HTTP_OUTCOME_REDIRECT || f->http == HTTP_OUTCOME_WRONG ||
               f->http == HTTP_OUTCOME_CACHED || f->https == HTTP_OUTCOME_CERTIFICATE ||
               f->dns == DNS_OUTCOME_LIED;
}

bool probe_gateway_answers(const ProbeFacts *f, bool ping_answered)
{
        /* A DNS server that answered (even NXDOMAIN) is a neighbour that answers too. */
        return ping_answered || f->dns == DNS_OUTCOME_FAILED;
}
