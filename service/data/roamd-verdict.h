/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>

/* Connectivity verdicts: a closed set of states, each with a reason from a closed list, and
 * the pure function that decides them from probe results (no I/O here). */

typedef enum Verdict {
        VERDICT_OFFLINE,
        VERDICT_CHECKING, /* a probe runs, no answer of this family yet */
        VERDICT_LOCAL,
        VERDICT_PORTAL,
        VERDICT_PARTIAL,
        VERDICT_ONLINE,
        _VERDICT_MAX,
        _VERDICT_INVALID = -EINVAL,
} Verdict;

typedef enum VerdictReason {
        REASON_NOT_PROBED,          /* no probe has finished yet */
        REASON_NO_CARRIER,          /* link down or no carrier */
        REASON_NO_ADDRESS,          /* no address of this family */
        REASON_LINK_LOCAL_ONLY,     /* only link-local addresses */
        REASON_NO_ROUTE,            /* no default route of this family */
        REASON_GATEWAY_UNREACHABLE, /* neither the gateway nor the DNS servers answer */
        REASON_DNS_FAILED,          /* the link's DNS servers gave no usable answer */
        REASON_HTTP_TIMEOUT,        /* the HTTP probe timed out */
        REASON_HTTP_FAILED,         /* the HTTP probe failed (refused, unreachable, reset) */
        REASON_PORTAL_REDIRECT,     /* the HTTP probe was redirected */
        REASON_PORTAL_CONTENT,      /* the HTTP probe got a wrong status or body */
        REASON_PORTAL_DNS,          /* DNS answered with addresses other than the expected ones */
        REASON_CAPPORT,             /* the RFC 8908 API says the link is captive */
        REASON_HTTPS_FAILED,        /* HTTP works, HTTPS does not */
        REASON_PORTAL_CERTIFICATE,  /* HTTPS answered with a certificate that does not validate */
        REASON_HTTP_CACHED,         /* only a cache answered the HTTP probe, HTTPS does not work */
        REASON_WALLED_GARDEN,       /* the check answers, a destination outside it does not */
        REASON_MTU,                 /* small answers pass, a full-size transfer vanishes */
        REASON_OK,                  /* online */
        _REASON_MAX,
        _REASON_INVALID = -EINVAL,
} VerdictReason;

const char *verdict_to_string(Verdict v);
Verdict verdict_from_string(const char *s);
const char *verdict_reason_to_string(VerdictReason r);
VerdictReason verdict_reason_from_string(const char *s);

typedef enum DnsOutcome {
        DNS_OUTCOME_NOT_RUN,
        DNS_OUTCOME_OK,     /* answered with addresses (matching the expected ones, if set) */
        DNS_OUTCOME_LIED,   /* answered with addresses outside the expected set */
        DNS_OUTCOME_FAILED, /* NXDOMAIN, SERVFAIL, REFUSED, no servers, malformed */
        DNS_OUTCOME_TIMEOUT,
        _DNS_OUTCOME_MAX,
        _DNS_OUTCOME_INVALID = -EINVAL,
} DnsOutcome;

typedef enum HttpOutcome {
        HTTP_OUTCOME_NOT_RUN,
        HTTP_OUTCOME_OK,       /* the expected status and body */
        HTTP_OUTCOME_REDIRECT, /* a 3xx with a Location */
        HTTP_OUTCOME_WRONG,    /* another status, or another body, or a body cut at the limit */
        HTTP_OUTCOME_TIMEOUT,
        HTTP_OUTCOME_FAILED,      /* connection refused/reset/unreachable, TLS failure, etc. */
        HTTP_OUTCOME_CACHED,      /* the expected answer, from a cache that ignored no-cache */
        HTTP_OUTCOME_CERTIFICATE, /* TLS answered with a certificate that does not validate */
        _HTTP_OUTCOME_MAX,
        _HTTP_OUTCOME_INVALID = -EINVAL,
} HttpOutcome;

typedef enum CapportOutcome {
        CAPPORT_OUTCOME_NONE,        /* no API announced, or it failed (see its own error) */
        CAPPORT_OUTCOME_CAPTIVE,     /* "captive": true */
        CAPPORT_OUTCOME_NOT_CAPTIVE, /* "captive": false */
        _CAPPORT_OUTCOME_MAX,
        _CAPPORT_OUTCOME_INVALID = -EINVAL,
} CapportOutcome;

const char *dns_outcome_to_string(DnsOutcome o);
DnsOutcome dns_outcome_from_string(const char *s);
const char *http_outcome_to_string(HttpOutcome o);
HttpOutcome http_outcome_from_string(const char *s);

/* Everything known about one link and one address family when a probe round finishes. */
typedef struct ProbeFacts {
        bool carrier;
        bool has_address;     /* any address of this family */
        bool has_usable;      /* a global/site address of this family */
        bool has_route;       /* a default route of this family */
        bool gateway_answers; /* the gateway (or an on-link DNS server) answered */
        DnsOutcome dns;
        HttpOutcome http;
        HttpOutcome https;
        HttpOutcome garden; /* the probe outside the check host ([Probe] GardenURL=) */
        bool large_stalled; /* the full-size transfer ([Probe] LargeURL=) got not one byte */
        CapportOutcome capport;
} ProbeFacts;

typedef struct VerdictResult {
        Verdict verdict;
        VerdictReason reason;
} VerdictResult;

/* The decision table; documented in docs/connectivity.md. */
VerdictResult verdict_decide(const ProbeFacts *f);

/* Whether a probe round is needed at all for these link facts (carrier, addresses, route):
 * when not, verdict_decide() already gives the final answer from them alone. */
bool verdict_needs_probe(const ProbeFacts *f);

/* While the HTTPS probe still runs (f->https is HTTP_OUTCOME_NOT_RUN): whether what is known
 * already decides the verdict (the network's API says captive, DNS lied, the HTTP answer
 * proves a portal). Returns true and the verdict if so; the HTTPS answer may refine it
 * later. */
bool verdict_decide_early(const ProbeFacts *f, VerdictResult *ret);

/* The better of two verdicts (the link's overall verdict from its IPv4 and IPv6 ones). */
Verdict verdict_best(Verdict a, Verdict b);
