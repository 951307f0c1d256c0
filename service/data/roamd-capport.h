/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 8908 captive portal API: the JSON object served at the URL of RFC 8910 (DHCP option
 * 114 / DHCPv6 option 103 / RA option 37), with media type application/captive+json. */

typedef struct CapportInfo {
        bool captive;
        char *user_portal_url; /* NULL when absent; must be https */
        char *venue_info_url;  /* NULL when absent */
        bool can_extend_session;
        bool has_seconds_remaining;
        uint64_t seconds_remaining;
        bool has_bytes_remaining;
        uint64_t bytes_remaining;
} CapportInfo;

void capport_info_done(CapportInfo *i);

/* Parses the body. Returns 0, or -EBADMSG for anything that is not a JSON object with a
 * boolean "captive" (the only required member), or whose members have the wrong types,
 * negative numbers, URLs that are not http(s) or contain control characters / spaces,
 * or that is larger than 64 KiB. Unknown members are ignored (the RFC allows extensions). */
int capport_parse(const char *body, size_t size, CapportInfo *ret);

/* Whether a Content-Type header value names application/captive+json (parameters such as
 * "; charset=utf-8" allowed, case-insensitive). */
bool capport_content_type_ok(const char *content_type);

/* RFC 8910 says the API URL must be https; it must also be free of spaces/control chars. */
bool capport_api_url_ok(const char *url);
