/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roamd-verdict.h"
#include "test.h"

/* Shorthands so that each row of the table fits on a line. */
#define UP         .carrier = true, .has_address = true, .has_usable = true, .has_route = true
#define GW         .gateway_answers = true
#define DNS(x)     .dns = DNS_OUTCOME_##x
#define HTTP(x)    .http = HTTP_OUTCOME_##x
#define HTTPS(x)   .https = HTTP_OUTCOME_##x
#define GARDEN(x)  .garden = HTTP_OUTCOME_##x
#define CAPPORT(x) .capport = CAPPORT_OUTCOME_##x
#define V(v, r)    VERDICT_##v, REASON_##r

static const struct {
        ProbeFacts facts;
        Verdict verdict;
        VerdictReason reason;
} rows[] = {
    /* 1. The link's own state, in this order, before any probe result. */
    {{}, V(OFFLINE, NO_CARRIER)},
    {{.has_address = true, .has_usable = true, .has_route = true, GW, DNS(OK), HTTP(OK), HTTPS(OK)},
     V(OFFLINE, NO_CARRIER)},
    {{.carrier = true}, V(OFFLINE, NO_ADDRESS)},
    {{.carrier = true, .has_usable = true, .has_route = true, HTTP(OK), HTTPS(OK)},
     V(OFFLINE, NO_ADDRESS)},
    {{.carrier = true, .has_address = true}, V(OFFLINE, LINK_LOCAL_ONLY)},
    {{.carrier = true, .has_address = true, .has_route = true, HTTP(OK), HTTPS(OK)},
     V(OFFLINE, LINK_LOCAL_ONLY)},
    {{.carrier = true, .has_address = true, .has_usable = true}, V(OFFLINE, NO_ROUTE)},
    {{.carrier = true, .has_address = true, .has_usable = true, CAPPORT(CAPTIVE), DNS(LIED)},
     V(OFFLINE, NO_ROUTE)},
    /* 2. The RFC 8908 API beats every probe. */
    {{UP, CAPPORT(CAPTIVE)}, V(PORTAL, CAPPORT)},
    {{UP, CAPPORT(CAPTIVE), DNS(OK), HTTP(OK), HTTPS(OK)}, V(PORTAL, CAPPORT)},
    {{UP, CAPPORT(CAPTIVE), DNS(LIED), HTTP(REDIRECT)}, V(PORTAL, CAPPORT)},
    /* 3. DNS lied. */
    {{UP, DNS(LIED)}, V(PORTAL, PORTAL_DNS)},
    {{UP, DNS(LIED), HTTP(OK), HTTPS(OK)}, V(PORTAL, PORTAL_DNS)},
    {{UP, DNS(LIED), HTTP(REDIRECT)}, V(PORTAL, PORTAL_DNS)},
    {{UP, DNS(LIED), CAPPORT(NOT_CAPTIVE), HTTPS(OK)}, V(PORTAL, PORTAL_DNS)},
    /* 4. HTTP redirected or wrong; only "not captive" plus a good HTTPS answer overrides. */
    {{UP, DNS(OK), HTTP(REDIRECT)}, V(PORTAL, PORTAL_REDIRECT)},
    {{UP, DNS(OK), HTTP(REDIRECT), HTTPS(OK)}, V(PORTAL, PORTAL_REDIRECT)},
    {{UP, DNS(OK), HTTP(REDIRECT), HTTPS(TIMEOUT)}, V(PORTAL, PORTAL_REDIRECT)},
    {{UP, DNS(OK), HTTP(WRONG)}, V(PORTAL, PORTAL_CONTENT)},
    {{UP, DNS(OK), HTTP(WRONG), HTTPS(OK)}, V(PORTAL, PORTAL_CONTENT)},
    {{UP, DNS(OK), HTTP(WRONG), HTTPS(FAILED)}, V(PORTAL, PORTAL_CONTENT)},
    {{UP, DNS(FAILED), HTTP(WRONG)}, V(PORTAL, PORTAL_CONTENT)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(REDIRECT), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(WRONG), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(WRONG), HTTPS(FAILED)}, V(PORTAL, PORTAL_CONTENT)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(REDIRECT), HTTPS(WRONG)}, V(PORTAL, PORTAL_REDIRECT)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(REDIRECT)}, V(PORTAL, PORTAL_REDIRECT)},
    /* 5. HTTP fine: online with HTTPS, partial without, whatever became of HTTPS. */
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, HTTP(OK), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(OK), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(WRONG)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(REDIRECT)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(TIMEOUT)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(FAILED)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(NOT_RUN)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, CAPPORT(NOT_CAPTIVE), HTTP(OK), HTTPS(FAILED)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, DNS(FAILED), HTTP(OK), HTTPS(FAILED)}, V(PARTIAL, HTTPS_FAILED)},
    /* 5a. A cache answered HTTP: HTTPS decides, and without it nothing reached the server. */
    {{UP, DNS(OK), HTTP(CACHED), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, DNS(OK), HTTP(CACHED), HTTPS(FAILED)}, V(PARTIAL, HTTP_CACHED)},
    {{UP, DNS(OK), HTTP(CACHED), HTTPS(TIMEOUT), GW}, V(PARTIAL, HTTP_CACHED)},
    {{UP, DNS(OK), HTTP(CACHED), HTTPS(CERTIFICATE)}, V(PARTIAL, HTTP_CACHED)},
    /* 5b. HTTPS answered without the check host's certificate: a portal intercepts it,
     * unless plain HTTP reached the check server (then HTTPS alone is broken). */
    {{UP, DNS(OK), HTTP(REDIRECT), HTTPS(CERTIFICATE)}, V(PORTAL, PORTAL_CERTIFICATE)},
    {{UP, DNS(OK), HTTP(WRONG), HTTPS(CERTIFICATE)}, V(PORTAL, PORTAL_CERTIFICATE)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(CERTIFICATE), GW}, V(PORTAL, PORTAL_CERTIFICATE)},
    {{UP, DNS(OK), HTTP(TIMEOUT), HTTPS(CERTIFICATE)}, V(PORTAL, PORTAL_CERTIFICATE)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(CERTIFICATE)}, V(PARTIAL, HTTPS_FAILED)},
    {{UP, DNS(LIED), HTTP(REDIRECT), HTTPS(CERTIFICATE)}, V(PORTAL, PORTAL_DNS)},
    /* 5c. The check answers, the garden probe does not: never online. */
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), GARDEN(OK)}, V(ONLINE, OK)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), GARDEN(REDIRECT)}, V(PORTAL, WALLED_GARDEN)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), GARDEN(WRONG)}, V(PORTAL, WALLED_GARDEN)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), GARDEN(FAILED)}, V(PORTAL, WALLED_GARDEN)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), GARDEN(TIMEOUT)}, V(PORTAL, WALLED_GARDEN)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(OK), GARDEN(TIMEOUT)}, V(PORTAL, WALLED_GARDEN)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(FAILED), GARDEN(FAILED)}, V(PARTIAL, HTTPS_FAILED)},
    /* 5d. The full-size transfer got nothing: partial (mtu), never online. */
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), .large_stalled = true}, V(PARTIAL, MTU)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(TIMEOUT), .large_stalled = true}, V(PARTIAL, MTU)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(OK), .large_stalled = true}, V(PARTIAL, MTU)},
    {{UP, DNS(OK), HTTP(OK), HTTPS(OK), GARDEN(REDIRECT), .large_stalled = true},
     V(PORTAL, WALLED_GARDEN)},
    {{UP, DNS(OK), HTTP(REDIRECT), .large_stalled = true}, V(PORTAL, PORTAL_REDIRECT)},
    /* 6. HTTPS fine while HTTP is blocked or did not run. */
    {{UP, DNS(OK), HTTP(TIMEOUT), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, DNS(OK), HTTP(NOT_RUN), HTTPS(OK)}, V(ONLINE, OK)},
    {{UP, DNS(FAILED), HTTP(FAILED), HTTPS(OK)}, V(ONLINE, OK)},
    /* 7. DNS failed: local when a neighbour answers. DNS is blamed before HTTP. */
    {{UP, DNS(FAILED), GW}, V(LOCAL, DNS_FAILED)},
    {{UP, DNS(FAILED)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    {{UP, DNS(TIMEOUT), GW}, V(LOCAL, DNS_FAILED)},
    {{UP, DNS(TIMEOUT)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    {{UP, DNS(FAILED), HTTP(FAILED), HTTPS(FAILED), GW}, V(LOCAL, DNS_FAILED)},
    {{UP, DNS(TIMEOUT), HTTP(TIMEOUT), HTTPS(TIMEOUT)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    /* 8. HTTP timed out or failed: local when the gateway answers. */
    {{UP, DNS(OK), HTTP(TIMEOUT), GW}, V(LOCAL, HTTP_TIMEOUT)},
    {{UP, DNS(OK), HTTP(TIMEOUT), HTTPS(TIMEOUT), GW}, V(LOCAL, HTTP_TIMEOUT)},
    {{UP, DNS(OK), HTTP(TIMEOUT), HTTPS(FAILED), GW}, V(LOCAL, HTTP_TIMEOUT)},
    {{UP, DNS(OK), HTTP(TIMEOUT), HTTPS(TIMEOUT)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    {{UP, HTTP(TIMEOUT), GW}, V(LOCAL, HTTP_TIMEOUT)},
    {{UP, DNS(OK), HTTP(FAILED), GW}, V(LOCAL, HTTP_FAILED)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(TIMEOUT), GW}, V(LOCAL, HTTP_FAILED)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(WRONG), GW}, V(LOCAL, HTTP_FAILED)},
    {{UP, DNS(OK), HTTP(FAILED), HTTPS(FAILED)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    /* ...and the HTTPS probe stands in when the HTTP one did not run. */
    {{UP, DNS(OK), HTTPS(TIMEOUT), GW}, V(LOCAL, HTTP_TIMEOUT)},
    {{UP, DNS(OK), HTTPS(TIMEOUT)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    {{UP, DNS(OK), HTTPS(FAILED), GW}, V(LOCAL, HTTP_FAILED)},
    {{UP, DNS(OK), HTTPS(WRONG), GW}, V(LOCAL, HTTP_FAILED)},
    {{UP, DNS(OK), HTTPS(REDIRECT)}, V(OFFLINE, GATEWAY_UNREACHABLE)},
    /* 9. Nothing ran (whatever else is known). */
    {{UP}, V(OFFLINE, NOT_PROBED)},
    {{UP, GW}, V(OFFLINE, NOT_PROBED)},
    {{UP, DNS(OK)}, V(OFFLINE, NOT_PROBED)},
    {{UP, DNS(OK), GW}, V(OFFLINE, NOT_PROBED)},
    {{UP, CAPPORT(NOT_CAPTIVE)}, V(OFFLINE, NOT_PROBED)},
};

TEST(verdict_decision_table)
{
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                VerdictResult v = verdict_decide(&rows[i].facts);

                if (v.verdict != rows[i].verdict || v.reason != rows[i].reason)
                        TEST_FAIL("row %zu: expected %s/%s, got %s/%s", i,
                                  verdict_to_string(rows[i].verdict),
                                  verdict_reason_to_string(rows[i].reason),
                                  strempty(verdict_to_string(v.verdict)),
                                  strempty(verdict_reason_to_string(v.reason)));
        }
}

/* The verdict each reason belongs to (docs/connectivity.md). */
static Verdict verdict_of_reason(VerdictReason r)
{
        switch (r) {
        case REASON_NOT_PROBED:
        case REASON_NO_CARRIER:
        case REASON_NO_ADDRESS:
        case REASON_LINK_LOCAL_ONLY:
        case REASON_NO_ROUTE:
        case REASON_GATEWAY_UNREACHABLE:
                return VERDICT_OFFLINE;
        case REASON_DNS_FAILED:
        case REASON_HTTP_TIMEOUT:
        case REASON_HTTP_FAILED:
                return VERDICT_LOCAL;
        case REASON_PORTAL_REDIRECT:
        case REASON_PORTAL_CONTENT:
        case REASON_PORTAL_DNS:
        case REASON_CAPPORT:
        case REASON_PORTAL_CERTIFICATE:
        case REASON_WALLED_GARDEN:
                return VERDICT_PORTAL;
        case REASON_HTTPS_FAILED:
        case REASON_HTTP_CACHED:
        case REASON_MTU:
                return VERDICT_PARTIAL;
        case REASON_OK:
                return VERDICT_ONLINE;
        case _REASON_MAX:
        case _REASON_INVALID:
                break;
        }
        return _VERDICT_INVALID;
}

/* Every combination of facts: a valid pair whose reason belongs to its verdict, and the link
 * state alone decides exactly when no probe is needed. */
TEST(verdict_every_combination)
{
        size_t n = 0;

        for (unsigned bits = 0; bits < 32; bits++)
                for (int d = 0; d < _DNS_OUTCOME_MAX; d++)
                        for (int h = 0; h < _HTTP_OUTCOME_MAX; h++)
                                for (int s = 0; s < _HTTP_OUTCOME_MAX; s++)
                                        for (int c = 0; c < _CAPPORT_OUTCOME_MAX; c++)
                                                for (int g = 0; g < _HTTP_OUTCOME_MAX; g++) {
                                                        ProbeFacts f = {
                                                            .carrier = bits & 1,
                                                            .has_address = bits & 2,
                                                            .has_usable = bits & 4,
                                                            .has_route = bits & 8,
                                                            .gateway_answers = bits & 16,
                                                            .dns = d,
                                                            .http = h,
                                                            .https = s,
                                                            .capport = c,
                                                            .garden = g,
                                                        };
                                                        VerdictResult v = verdict_decide(&f);
                                                        bool link_reason =
                                                            v.reason >= REASON_NO_CARRIER &&
                                                            v.reason <= REASON_NO_ROUTE;

                                                        ASSERT_TRUE(v.verdict >= 0 &&
                                                                    v.verdict < _VERDICT_MAX);
                                                        ASSERT_EQ(verdict_of_reason(v.reason),
                                                                  v.verdict);
                                                        ASSERT_EQ(verdict_needs_probe(&f),
                                                                  !link_reason);
                                                        /* Online needs a good HTTPS answer. */
                                                        if (v.verdict == VERDICT_ONLINE) {
                                                                ASSERT_EQ(f.https, HTTP_OUTCOME_OK);
                                                                ASSERT_TRUE(
                                                                    f.garden == HTTP_OUTCOME_OK ||
                                                                    f.garden ==
                                                                        HTTP_OUTCOME_NOT_RUN);
                                                        }
                                                        n++;
                                                }
        ASSERT_EQ(n, 32 * 5 * 8 * 8 * 3 * 8);
}

TEST(verdict_needs_probe)
{
        ProbeFacts f = {UP};

        ASSERT_TRUE(verdict_needs_probe(&f));
        f.carrier = false;
        ASSERT_TRUE(!verdict_needs_probe(&f));
        f = (ProbeFacts){UP};
        f.has_address = false;
        ASSERT_TRUE(!verdict_needs_probe(&f));
        f = (ProbeFacts){UP};
        f.has_usable = false;
        ASSERT_TRUE(!verdict_needs_probe(&f));
        f = (ProbeFacts){UP};
        f.has_route = false;
        ASSERT_TRUE(!verdict_needs_probe(&f));
        /* Probe results do not matter to it. */
        f = (ProbeFacts){UP, HTTP(OK), HTTPS(OK), GW};
        ASSERT_TRUE(verdict_needs_probe(&f));
}

TEST(verdict_best)
{
        for (int a = 0; a < _VERDICT_MAX; a++)
                for (int b = 0; b < _VERDICT_MAX; b++) {
                        ASSERT_EQ(verdict_best(a, b), MAX(a, b));
                        ASSERT_EQ(verdict_best(a, b), verdict_best(b, a));
                }
        ASSERT_EQ(verdict_best(VERDICT_ONLINE, VERDICT_OFFLINE), VERDICT_ONLINE);
        ASSERT_EQ(verdict_best(VERDICT_LOCAL, VERDICT_PORTAL), VERDICT_PORTAL);
        ASSERT_EQ(verdict_best(VERDICT_PARTIAL, VERDICT_PORTAL), VERDICT_PARTIAL);
        /* An invalid verdict never wins. */
        ASSERT_EQ(verdict_best(_VERDICT_INVALID, VERDICT_OFFLINE), VERDICT_OFFLINE);
        ASSERT_EQ(verdict_best(VERDICT_LOCAL, _VERDICT_INVALID), VERDICT_LOCAL);
        ASSERT_EQ(verdict_best(_VERDICT_MAX, VERDICT_OFFLINE), VERDICT_OFFLINE);
}

/* Early decisions: exactly the facts that prove a portal without the HTTPS answer, and always
 * what the full table says for them (the HTTPS answer can only refine). */
TEST(verdict_decide_early)
{
        VerdictResult v;
        ProbeFacts f = {UP, DNS(OK), HTTP(REDIRECT)};

        ASSERT_TRUE(verdict_decide_early(&f, &v));
        ASSERT_EQ(v.verdict, VERDICT_PORTAL);
        ASSERT_EQ(v.reason, REASON_PORTAL_REDIRECT);
        f = (ProbeFacts){UP, DNS(OK), HTTP(WRONG)};
        ASSERT_TRUE(verdict_decide_early(&f, &v));
        ASSERT_EQ(v.reason, REASON_PORTAL_CONTENT);
        f = (ProbeFacts){UP, DNS(LIED)};
        ASSERT_TRUE(verdict_decide_early(&f, &v));
        ASSERT_EQ(v.reason, REASON_PORTAL_DNS);
        f = (ProbeFacts){UP, CAPPORT(CAPTIVE)};
        ASSERT_TRUE(verdict_decide_early(&f, &v));
        ASSERT_EQ(v.reason, REASON_CAPPORT);
        /* Not proven: HTTP fine (HTTPS decides online or partial), nothing yet, a proxy. */
        f = (ProbeFacts){UP, DNS(OK), HTTP(OK)};
        ASSERT_TRUE(!verdict_decide_early(&f, &v));
        f = (ProbeFacts){UP};
        ASSERT_TRUE(!verdict_decide_early(&f, &v));
        f = (ProbeFacts){UP, DNS(OK), HTTP(REDIRECT), CAPPORT(NOT_CAPTIVE)};
        ASSERT_TRUE(!verdict_decide_early(&f, &v));
        /* The link's own state needs no early decision. */
        f = (ProbeFacts){.carrier = true, HTTP(REDIRECT)};
        ASSERT_TRUE(!verdict_decide_early(&f, &v));

        for (int d = 0; d < _DNS_OUTCOME_MAX; d++)
                for (int h = 0; h < _HTTP_OUTCOME_MAX; h++)
                        for (int c = 0; c < _CAPPORT_OUTCOME_MAX; c++)
                                for (int s = 0; s < _HTTP_OUTCOME_MAX; s++) {
                                        ProbeFacts e = {UP, .dns = d, .http = h, .capport = c};
                                        VerdictResult full;

                                        if (!verdict_decide_early(&e, &v))
                                                continue;
                                        ASSERT_EQ(v.verdict, VERDICT_PORTAL);
                                        /* Whatever HTTPS answers, a portal stays a portal
                                         * (only a not-captive API could overrule it). */
                                        e.https = s;
                                        full = verdict_decide(&e);
                                        ASSERT_EQ(full.verdict, VERDICT_PORTAL);
                                        /* (an HTTPS answer without the certificate refines
                                         * the HTTP probe's reason) */
                                        ASSERT_TRUE(full.reason == v.reason ||
                                                    (s == HTTP_OUTCOME_CERTIFICATE &&
                                                     full.reason == REASON_PORTAL_CERTIFICATE));
                                }
}

TEST(verdict_strings)
{
        static const char *const verdicts[] = {"offline", "checking", "local",
                                               "portal",  "partial",  "online"};
        static const char *const reasons[] = {
            "not-probed",
            "no-carrier",
            "no-address",
            "link-local-only",
            "no-route",
            "gateway-unreachable",
            "dns-failed",
            "http-timeout",
            "http-failed",
            "portal-redirect",
            "portal-content",
            "portal-dns",
            "capport",
            "https-failed",
            "portal-certificate",
            "http-cached",
            "walled-garden",
            "mtu",
            "ok",
        };
        static const char *const dns[] = {"not-run", "ok", "lied", "failed", "timeout"};
        static const char *const http[] = {"not-run", "ok",     "redirect", "wrong",
                                           "timeout", "failed", "cached",   "certificate"};

        ASSERT_EQ(ELEMENTSOF(verdicts), _VERDICT_MAX);
        for (int i = 0; i < _VERDICT_MAX; i++) {
                ASSERT_STREQ(verdict_to_string(i), verdicts[i]);
                ASSERT_EQ(verdict_from_string(verdicts[i]), i);
        }
        ASSERT_EQ(ELEMENTSOF(reasons), _REASON_MAX);
        for (int i = 0; i < _REASON_MAX; i++) {
                ASSERT_STREQ(verdict_reason_to_string(i), reasons[i]);
                ASSERT_EQ(verdict_reason_from_string(reasons[i]), i);
        }
        ASSERT_EQ(ELEMENTSOF(dns), _DNS_OUTCOME_MAX);
        for (int i = 0; i < _DNS_OUTCOME_MAX; i++) {
                ASSERT_STREQ(dns_outcome_to_string(i), dns[i]);
                ASSERT_EQ(dns_outcome_from_string(dns[i]), i);
        }
        ASSERT_EQ(ELEMENTSOF(http), _HTTP_OUTCOME_MAX);
        for (int i = 0; i < _HTTP_OUTCOME_MAX; i++) {
                ASSERT_STREQ(http_outcome_to_string(i), http[i]);
                ASSERT_EQ(http_outcome_from_string(http[i]), i);
        }

        ASSERT_TRUE(verdict_to_string(_VERDICT_MAX) == NULL);
        ASSERT_TRUE(verdict_to_string(_VERDICT_INVALID) == NULL);
        ASSERT_TRUE(verdict_reason_to_string(_REASON_MAX) == NULL);
        ASSERT_TRUE(dns_outcome_to_string(_DNS_OUTCOME_INVALID) == NULL);
        ASSERT_TRUE(http_outcome_to_string(_HTTP_OUTCOME_MAX) == NULL);
        ASSERT_EQ(verdict_from_string("Online"), _VERDICT_INVALID);
        ASSERT_EQ(verdict_from_string(""), _VERDICT_INVALID);
        ASSERT_EQ(verdict_from_string(NULL), _VERDICT_INVALID);
        ASSERT_EQ(verdict_reason_from_string("captive"), _REASON_INVALID);
        ASSERT_EQ(dns_outcome_from_string("lie"), _DNS_OUTCOME_INVALID);
        ASSERT_EQ(http_outcome_from_string("redirected"), _HTTP_OUTCOME_INVALID);
}
