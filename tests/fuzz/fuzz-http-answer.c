/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-http-answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Input layout (short inputs leave the later fields empty):
 *   bytes 0-1  status, big-endian, modulo 1000
 *   byte 2     flags: 0x01 body truncated, 0x02 a Location is present, 0x04 expect 204
 *              (else 200), 0x08 no expected body (any body), 0x10 no probe URL (NULL)
 *   then       Location '\n' probe URL '\n' body
 * Location and probe URL end at their '\n' and at the first NUL, as C strings would; the body
 * is the rest, raw, NULs included. */
enum {
        FLAG_TRUNCATED = 0x01,
        FLAG_LOCATION = 0x02,
        FLAG_EXPECT_204 = 0x04,
        FLAG_ANY_BODY = 0x08,
        FLAG_NO_URL = 0x10,
};

/* The next '\n'-terminated field of [*p, end) as a new C string; advances *p past it. */
static char *field(const uint8_t **p, const uint8_t *end)
{
        const uint8_t *nl = memchr(*p, '\n', end - *p);
        size_t n = (nl ? nl : end) - *p;
        char *s = malloc(n + 1);

        if (s) {
                memcpy(s, *p, n);
                s[n] = 0;
        }
        *p = nl ? nl + 1 : end;
        return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const uint8_t *p = data + (size < 3 ? size : 3), *end = data + size;
        uint8_t flags = size > 2 ? data[2] : 0;
        char *location, *url, *portal = (char *)"unset";
        HttpAnswer a = {};
        HttpExpect e = {
            .status = flags & FLAG_EXPECT_204 ? 204 : 200,
            .body = flags & FLAG_ANY_BODY ? NULL : "NetworkManager is online\n",
        };
        HttpOutcome o;

        location = field(&p, end);
        url = field(&p, end);
        if (!location || !url)
                goto out;

        a.status = size >= 2 ? ((data[0] << 8) | data[1]) % 1000 : 0;
        a.location = flags & FLAG_LOCATION ? location : NULL;
        a.url = flags & FLAG_NO_URL ? NULL : url;
        a.body = (const char *)p;
        a.body_size = end - p;
        a.truncated = flags & FLAG_TRUNCATED;

        o = http_answer_classify(&a, &e, &portal);
        switch (o) {
        case HTTP_OUTCOME_OK:
                if (portal || a.truncated || a.status != e.status)
                        abort();
                break;
        case HTTP_OUTCOME_REDIRECT:
                /* Allocation failures aside, a redirect always comes with a usable URL. */
                if (!portal || !http_url_ok(portal, false) || a.status < 300 || a.status > 399)
                        abort();
                break;
        case HTTP_OUTCOME_WRONG:
                if (portal && (!a.url || strcmp(portal, a.url) != 0))
                        abort();
                break;
        case HTTP_OUTCOME_NOT_RUN:
        case HTTP_OUTCOME_TIMEOUT:
        case HTTP_OUTCOME_FAILED:
        case HTTP_OUTCOME_CACHED:      /* (headers decide it, in roamd-probe.c) */
        case HTTP_OUTCOME_CERTIFICATE: /* (the TLS handshake decides it) */
        case _HTTP_OUTCOME_MAX:
        case _HTTP_OUTCOME_INVALID:
                abort();
        }
        free(portal);
out:
        free(location);
        free(url);
        return 0;
}
