/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The registry's share of org.roam1.Link: which object a path names, and the list of them
 * (what a link's own bus glue cannot know: the table). */
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-util.h"
#include "roam-log.h"
#include "roamd-link-bus.h"
#include "roamd-links.h"
#include "roamd-probe.h"

int links_bus_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                   void **found, sd_bus_error *error)
{
        Links *links = userdata;
        const char *e = path + strlen(ROAM_LINK_PATH_PREFIX);
        char *end;
        long idx;
        Link *l;

        if (strncmp(path, ROAM_LINK_PATH_PREFIX "/", strlen(ROAM_LINK_PATH_PREFIX) + 1) != 0)
                return 0;
        e++;
        idx = strtol(e, &end, 10);
        if (end == e || *end || idx <= 0 || idx > INT32_MAX)
                return 0;
        l = links_get(links, (int)idx);
        if (!l || !l->announced)
                return 0;
        *found = l;
        return 1;
}

int links_bus_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                        sd_bus_error *error)
{
        Links *links = userdata;
        _cleanup_strv_free_ char **l = NULL;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < links->n_links; i++) {
                if (!links->links[i]->announced)
                        continue;
                if (strv_extend(&l, links->links[i]->path) < 0)
                        return -ENOMEM;
        }
        *nodes = TAKE_PTR(l);
        return 1;
}

int links_bus_setup(Links *l, sd_bus *bus)
{
        int r;

        r = sd_bus_add_fallback_vtable(bus, &l->bus_slot, ROAM_LINK_PATH_PREFIX,
                                       ROAM_LINK_INTERFACE, link_vtable, links_bus_find, l);
        if (r >= 0)
                r = sd_bus_add_fallback_vtable(bus, &l->probe_bus_slot, ROAM_LINK_PATH_PREFIX,
                                               ROAM_LINK_INTERFACE, probe_link_vtable,
                                               links_bus_find, l);
        if (r < 0)
                return log_error_errno(r, "Failed to add link objects: %m");
        r = sd_bus_add_node_enumerator(bus, &l->enum_slot, ROAM_LINK_PATH_PREFIX,
                                       links_bus_enumerate, l);
        if (r < 0)
                return log_error_errno(r, "Failed to add link enumerator: %m");
        return 0;
}
