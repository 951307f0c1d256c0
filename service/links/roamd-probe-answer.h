/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What one probe round's answers mean, apart from the transfers that fetched them (pure: no
 * I/O, no link, no curl handle): a fetch's end -> its HttpOutcome, a DNS answer -> its
 * DnsOutcome, a family's fetches -> its ProbeFacts. roamd-probe.c reads curl and calls these;
 * tests/unit/test-probe-answer.c drives them with hand-made answers. */

#include <stdbool.h>
#include <stddef.h>

#include "roamd-config.h"
#include "roamd-http-answer.h"
#include "roamd-verdict.h"

/* What the large transfer must bring: a few full-size packets of any link's MTU. */
#define PROBE_LARGE_BYTES 8192
/* Below this much answer body the large transfer brought no full-size segment (which on any
 * link with an MTU of at least 1280, IPv6's minimum, carries 1220 bytes or more): a black hole
 * lets through at most the headers and a short first write, while a working path, even a
 * lossy one (TCP sends lost segments again), brings a full one within its budget. */
#define PROBE_LARGE_SEGMENT 1200

typedef enum FetchKind {
        FETCH_HTTP,
        FETCH_HTTPS,
        FETCH_GARDEN, /* plain HTTP to a destination outside the check host */
        FETCH_LARGE,  /* a full-size transfer (path MTU black holes) */
        FETCH_CAPPORT,
        _FETCH_KIND_MAX,
} FetchKind;

/* How a transfer ended, as far as the outcome cares. */
typedef enum ProbeTransfer {
        PROBE_TRANSFER_ANSWERED,    /* an answer came: whole, cut at the limit, or decided early */
        PROBE_TRANSFER_TIMEOUT,     /* the probe's time ran out */
        PROBE_TRANSFER_CERTIFICATE, /* TLS: the peer's certificate does not validate */
        PROBE_TRANSFER_FAILED,      /* refused, reset, unreachable, any other error */
        _PROBE_TRANSFER_MAX,
        _PROBE_TRANSFER_INVALID = -EINVAL,
} ProbeTransfer;

typedef struct ProbeAnswer {
        FetchKind kind; /* not FETCH_CAPPORT: the API's answer is judged by roamd-capport.c */
        ProbeTransfer transfer;
        HttpAnswer http; /* status, Location, body (ANSWERED) */
        bool age_header; /* the answer carries Age: a cache answered (RFC 9111 5.1) */
} ProbeAnswer;

/* The outcome of one fetch; *ret_portal_url as http_answer_classify() gives it (NULL when it
 * names none). */
HttpOutcome probe_answer_outcome(const ProbeAnswer *a, const HttpExpect *e, char **ret_portal_url);

/* The DNS outcome of a fetch's lookup: an answer for the check host (HTTP, HTTPS) outside the
 * configured addresses ([Probe] ExpectAddresses=) is a lie. */
DnsOutcome probe_dns_outcome(const ProbeConfig *c, FetchKind kind, DnsOutcome outcome,
                             const IpAddr *addrs, size_t n);

/* The large transfer connected and got not one full-size segment: an MTU black hole. */
bool probe_large_stalled(bool connected, size_t body_size);

/* What a family's fetch gave. */
typedef struct ProbeFetchResult {
        bool done; /* ended (not running, not skipped) */
        DnsOutcome dns;
        HttpOutcome outcome;
} ProbeFetchResult;

/* The family's DNS fact: the HTTP probe's lookup, else the HTTPS probe's when only that one
 * got an answer. */
DnsOutcome probe_family_dns(DnsOutcome http, DnsOutcome https);

/* Fills f's dns, http, https and garden from the fetches (indexed by FetchKind, FETCH_HTTP to
 * FETCH_LARGE); the link's own facts, large_stalled, capport and gateway_answers stay. */
void probe_facts_from_fetches(ProbeFacts *f, const ProbeFetchResult r[static FETCH_CAPPORT]);

/* Something beyond the link answered (or DNS lied): the gateway need not be asked. */
bool probe_facts_answered(const ProbeFacts *f);

/* Whether the link's neighbours answer: the gateway's ping (ping_answered; false also when
 * there is no gateway to ask), or a DNS server that answered, even with NXDOMAIN. */
bool probe_gateway_answers(const ProbeFacts *f, bool ping_answered);
