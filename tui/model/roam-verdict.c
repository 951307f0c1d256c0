/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
        const RoamLink *best = roam_model_best_link(m);

        return roam_state_sentence(
            m->state, best ? link_label(best) : NULL, best ? best->bearer : NULL,
            best ? best->connectivity_reason : NULL, best ? portal_login_url(best) : NULL);
}
