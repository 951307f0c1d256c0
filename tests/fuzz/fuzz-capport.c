/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-capport.h"
#include "roamd-http-answer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole input is the body of the answer; the same bytes, cut at the first NUL, also feed
 * the Content-Type and API URL checks. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        CapportInfo info = {};
        char *text;

        if (capport_parse((const char *)data, size, &info) >= 0) {
                /* What is accepted must keep the promises of the header. */
                if (info.user_portal_url && !http_url_ok(info.user_portal_url, true))
                        abort();
                if (info.venue_info_url && !http_url_ok(info.venue_info_url, false))
                        abort();
                if (size > 64 * 1024)
                        abort();
        }
        capport_info_done(&info);

        text = malloc(size + 1);
        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = 0;
        (void)capport_content_type_ok(text);
        (void)capport_api_url_ok(text);
        free(text);
        return 0;
}
