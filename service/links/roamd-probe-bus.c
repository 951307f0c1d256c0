/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The prober's share of org.roam1.Link: Reprobe(), a vtable of its own on the links' objects
 * (sd-bus merges several vtables of one interface), so a link's bus glue knows nothing of
 * its prober. */
#include "roamd-bus-auth.h"
#include "roamd-probe.h"

static int method_reprobe(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Link *l = userdata;
        int r;

        r = bus_check_authorized(msg, "org.roam1.manage", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = link_reprobe(l);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

const sd_bus_vtable probe_link_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Reprobe", NULL, NULL, method_reprobe, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};
