/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
                if (m.reply_message)
                        for (const char *p = m.reply_message; *p; p++)
                                if ((unsigned char)*p < 0x20)
                                        abort();
                if (m.login_url) {
                        char *h = wispr_url_host(m.login_url);
                        char *hosts[] = {h, NULL};
                        if (!h || !wispr_login_url_allowed(m.login_url, hosts, true))
                                abort();
                        free(h);
                }
        } else if (r != -ENOMSG && r != -EFBIG && r != -EBADMSG && r != -EPROTO)
                abort();
        (void)wispr_error_to_string(r);
        wispr_message_done(&m);
        return 0;
}
