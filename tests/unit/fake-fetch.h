/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The prober's ways out, faked at link time for roamd-probe.c (they replace roamd-resolve.c,
 * roamd-curl.c, roamd-ping.c, roamd-pmtu.c, roamd-link-bus.c and the reconciler's waits): each
 * DNS lookup, transfer and gateway ping the prober starts is recorded, and the test answers
 * it the way the network would (a DNS answer or timeout, an HTTP status and body, a transfer
 * error). A transfer's HTTP status reaches the prober through curl_easy_getinfo(), wrapped
 * at link time (-Wl,--wrap=curl_easy_getinfo). */

#include <curl/curl.h>
#include <stdbool.h>

#include "roamd-verdict.h"

typedef struct FakeFetch {
        unsigned lookups;   /* resolve_start() calls */
        unsigned cancelled; /* lookups freed before they were answered */
        unsigned transfers; /* curl_glue_add() calls */
        unsigned removed;   /* transfers taken out of the multi handle before their end */
        unsigned pings;     /* ping_start() calls */
        unsigned bus_emits; /* link_bus_emit_changed*() calls */
        unsigned trims;     /* core_schedule_trim() calls */
} FakeFetch;

extern FakeFetch fake_fetch;

void fake_fetch_reset(void);
/* Lookups of family (AF_UNSPEC: any) and transfers waiting for an answer. */
unsigned fake_fetch_pending_lookups(int family);
unsigned fake_fetch_pending_transfers(void);
/* Answers every waiting lookup of family: with address addr (NULL: outcome, no address). */
void fake_fetch_answer_dns(int family, DnsOutcome outcome, const char *addr);
/* Ends every waiting transfer whose URL starts with url_prefix: curl's result, and for
 * CURLE_OK the HTTP status and body. Returns how many. */
unsigned fake_fetch_answer_http(const char *url_prefix, CURLcode result, long status,
                                const char *body);
/* Answers the waiting gateway pings. */
void fake_fetch_answer_ping(bool answered);
