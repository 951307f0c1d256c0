/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-ntp-sources.h"

bool ntp_sources_verdict_allows(Verdict v, bool before)
{
        switch (v) {
        case VERDICT_LOCAL:
        case VERDICT_PARTIAL:
        case VERDICT_ONLINE:
                return true;
        case VERDICT_OFFLINE:
        case VERDICT_PORTAL:
                return false;
        case VERDICT_CHECKING:
                return before;
        case _VERDICT_MAX:
        case _VERDICT_INVALID:
                break;
        }
        return false;
}

static bool server_ok(const char *s)
{
        size_t n = strlen(s);

        if (n == 0 || n > 255)
                return false;
        return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789:.-") ==
                   n &&
               s[0] != '-';
}

bool ntp_sources_ifname_ok(const char *ifname)
{
        size_t n = ifname ? strlen(ifname) : 0;

        /* a kernel link name: 1 to 15 bytes, no '/', not "." or ".."; here also no space */
        return n > 0 && n < 16 && ifname[0] != '.' &&
               strspn(ifname,
                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.@:") == n;
}

int ntp_sources_text(const char *ifname, char *const *servers, char **ret)
{
        _cleanup_free_ char *text = NULL;
        size_t size = 0, n = 0;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, NTP_SOURCES_MARK " NTP servers of %s's DHCP lease (see roamd's docs/time.md)\n",
                ifname);
        for (size_t i = 0; servers && servers[i]; i++)
                if (server_ok(servers[i])) {
                        fprintf(f, "server %s iburst\n", servers[i]);
                        n++;
                }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = n > 0 ? TAKE_PTR(text) : NULL;
        return 0;
}
