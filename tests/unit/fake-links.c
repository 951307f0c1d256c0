/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "fake-links.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-links.h"
#include "roamd-portal.h"
#include "roamd-reconcile.h"
#include "roamd-probe.h"
#include "roamd-wpa.h"

FakeLinks fake_links;

void fake_links_add(Link *l, Core *core, int ifindex, const char *name, Verdict v,
                    const char *portal_url)
{
        *l = (Link){.core = core, .ifindex = ifindex};
        l->info.name = (char *)name;
        l->verdict = l->verdict4 =
            (VerdictResult){v, v == VERDICT_PORTAL ? REASON_PORTAL_REDIRECT : REASON_OK};
        l->verdict6 = (VerdictResult){VERDICT_OFFLINE, REASON_NO_ADDRESS};
        l->portal_url = (char *)portal_url;
        if (fake_links.n < ELEMENTSOF(fake_links.links))
                fake_links.links[fake_links.n++] = l;
}

void fake_links_reset(void)
{
        fake_links = (FakeLinks){};
}

Link *links_get(Links *l, int ifindex)
{
        for (size_t i = 0; i < fake_links.n; i++)
                if (fake_links.links[i]->ifindex == ifindex)
                        return fake_links.links[i];
        return NULL;
}

Link *links_get_by_name(Links *l, const char *name)
{
        for (size_t i = 0; i < fake_links.n; i++)
                if (streq_ptr(fake_links.links[i]->info.name, name))
                        return fake_links.links[i];
        return NULL;
}

unsigned links_watch_add(Links *l, LinksWatchFn fn, void *userdata, WatchDestroyFn destroy)
{
        return ++fake_links.watches;
}

void links_watch_remove(Links *l, unsigned id)
{
        if (id != 0)
                fake_links.watches--;
}

int link_reprobe(Link *l)
{
        fake_links.reprobes++;
        return 0;
}

void reconcile_schedule(Reconcile *rc)
{
        fake_links.passes++;
}

const WpaStation *wpa_station(Wpa *w, const char *ifname)
{
        return NULL;
}

void portal_bus_emit_changed(Portal *p)
{
        fake_links.bus_changes++;
}
