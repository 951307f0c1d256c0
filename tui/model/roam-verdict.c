/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-macro.h"
#include "roam-verdict.h"

const char *roam_verdict_word(const char *verdict)
{
        return *verdict ? verdict : "unknown";
}

static const char *link_label(const RoamLink *l)
{
        return *l->name ? l->name : l->path;
}

/* Where to log in: the portal URL roamd found, else the RFC 8908 user portal URL. */
static const char *portal_login_url(const RoamLink *l)
{
        if (*l->portal_url)
                return l->portal_url;
        if (l->capport.user_portal_url && *l->capport.user_portal_url)
                return l->capport.user_portal_url;
        return NULL;
}

char *roam_global_sentence(const RoamModel *m)
{
        /* State is the verdict of the link the default app's traffic takes: say that link */
        const RoamLink *l = roam_model_default_link(m);
        _cleanup_free_ char *s =
            roam_state_sentence(m->state, l ? link_label(l) : NULL, l ? l->bearer : NULL,
                                l ? l->connectivity_reason : NULL, l ? portal_login_url(l) : NULL);

        if (!s)
                return NULL;
        return roam_state_sentence_reason(m->state, s, m->state_reason);
}
