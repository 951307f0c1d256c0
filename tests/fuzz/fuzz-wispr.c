/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-text.h"
#include "roamd-http-answer.h"
#include "roamd-wispr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_url(const char *u)
{
        if (u && !http_url_ok(u, false))
                abort();
}

/* The whole input is a portal page. What is accepted must keep the header's promises. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        WisprMessage m = {};
        int r = wispr_parse((const char *)data, size, &m);

        if (r >= 0) {
                if (size > WISPR_BODY_MAX)
                        abort();
                if (!wispr_element_to_string(m.element) || !wispr_outcome_to_string(m.outcome))
                        abort();
                check_url(m.login_url);
                check_url(m.abort_login_url);
                check_url(m.next_url);
                check_url(m.login_results_url);
                check_url(m.logoff_url);
                if (m.outcome == WISPR_OUTCOME_LOGIN_OFFERED && !m.login_url)
                        abort();
                if (m.outcome == WISPR_OUTCOME_PENDING && !m.login_results_url)
                        abort();
                /* Every name goes on the bus: clean UTF-8 (roam-text.c) or nothing. */
                const char *names[] = {m.reply_message, m.location_name, m.access_location,
                                       m.access_procedure};
                for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                        if (names[i] && !roam_text_is_clean(names[i], 0))
                                abort();
                if (m.login_url) {
                        char *h = wispr_url_host(m.login_url);
                        char *hosts[] = {h, NULL};
                        if (!h || !wispr_login_url_allowed(m.login_url, hosts, true))
                                abort();
                        free(h);
                }
        } else if (r != -ENOMSG && r != -EFBIG && r != -EBADMSG && r != -EPROTO && r != -EILSEQ)
                abort();
        (void)wispr_error_to_string(r);
        wispr_message_done(&m);
        return 0;
}
