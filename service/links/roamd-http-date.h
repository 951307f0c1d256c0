/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* An HTTP Date header's value (RFC 9110 5.6.7) as µs since the epoch. The three forms a
 * server may send are accepted: IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT"), the obsolete
 * RFC 850 form ("Sunday, 06-Nov-94 08:49:37 GMT") and asctime ("Sun Nov  6 08:49:37 1994").
 * The shape is checked here and the date itself is read by libcurl's curl_getdate(), which
 * alone would take much more (relative words, other zones, bare numbers). -EINVAL for
 * anything else; -ERANGE for a date before 1970 or after 9999. */

#include <stddef.h>
#include <stdint.h>

int http_date_parse(const char *value, size_t size, uint64_t *ret_usec);
