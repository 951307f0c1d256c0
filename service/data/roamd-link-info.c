/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-link-info.h"

static const char *const addr_scope_table[_ADDR_SCOPE_MAX] = {
    [ADDR_SCOPE_GLOBAL] = "global",
    [ADDR_SCOPE_SITE] = "site",
    [ADDR_SCOPE_LINK] = "link",
    [ADDR_SCOPE_HOST] = "host",
};
DEFINE_STRING_TABLE_LOOKUP(addr_scope, AddrScope)

void link_info_done(LinkInfo *i)
{
        free(i->name);
        free(i->kind);
        free(i->driver);
        free(i->hwaddr);
        free(i->oper_state);
        free(i->addrs);
        free(i->gateways);
        free(i->dns);
        strv_free(i->domains);
        strv_free(i->ntp_servers);
        free(i->captive_portal_url);
        *i = (LinkInfo){};
}
