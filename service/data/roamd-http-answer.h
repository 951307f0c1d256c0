/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "roamd-verdict.h"

/* Classifies what a probe server (or whatever is pretending to be it) answered. */

typedef struct HttpAnswer {
        long status;          /* HTTP status code, 0 if none */
        const char *location; /* Location header, NULL when absent */
        const char *body;     /* body as received (may contain NUL bytes) */
        size_t body_size;
        bool truncated;  /* the body was cut at the size limit */
        const char *url; /* the URL that was requested (base for a relative Location) */
} HttpAnswer;

typedef struct HttpExpect {
        long status;      /* e.g. 204, or 200 */
        const char *body; /* expected body when status is 200; NULL: any body */
} HttpExpect;

/* Returns HTTP_OUTCOME_OK, _REDIRECT (a 3xx with a usable Location), or _WRONG. On redirect
 * and wrong answers, *ret_portal_url receives a newly allocated URL of the portal: the
 * absolute Location for a redirect (relative ones resolved against url; a Location that is
 * not http(s), is too long (> 2048) or contains spaces/control characters makes the answer
 * _WRONG with the probe URL as portal URL), the probe URL itself for a wrong answer. */
HttpOutcome http_answer_classify(const HttpAnswer *a, const HttpExpect *e, char **ret_portal_url);

/* Whether url is an absolute http:// or https:// URL (only https:// when https_only) with a
 * host, at most 2048 bytes of printable ASCII without spaces. Also used for the URLs of the
 * captive portal API. */
bool http_url_ok(const char *url, bool https_only);

/* Why no fetch roamd makes through a link may go to addr (struct in_addr / in6_addr of
 * family), whatever the network named: "a loopback address", "the unspecified address", "a
 * multicast address", "the broadcast address" (IPv4-mapped and -compatible IPv6 judged as
 * IPv4); NULL when it is none of these. The machine's own other addresses are the caller's
 * part (roamd-curl.c). */
const char *http_target_special(int family, const void *addr);
