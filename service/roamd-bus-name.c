/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-bus-name.h"

struct BusNameWatch {
        char *name;
        bool has_owner;
        bool changed; /* a NameOwnerChanged came: it is newer than GetNameOwner's answer */
        sd_bus_slot *match, *query;
        BusNameWatchFn fn;
        void *userdata;
};

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        BusNameWatch *w = userdata;
        const char *name, *old, *new;

        if (sd_bus_message_read(m, "sss", &name, &old, &new) < 0 || strcmp(name, w->name) != 0)
                return 0;
        w->changed = true;
        if (w->has_owner != (new[0] != '\0'))
                log_debug("bus name %s: %s", w->name, new[0] ? "owned" : "gone");
        w->has_owner = new[0] != '\0';
        return w->fn ? w->fn(w, new, w->userdata) : 0;
}

static int on_get_owner(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        BusNameWatch *w = userdata;

        w->query = sd_bus_slot_unref(w->query);
        if (!w->changed) /* NameHasNoOwner is the error of a name without an owner */
                w->has_owner = !sd_bus_message_is_method_error(m, NULL);
        return 0;
}

int bus_name_watch_new(sd_bus *bus, const char *name, BusNameWatchFn fn, void *userdata,
                       BusNameWatch **ret)
{
        _cleanup_free_ BusNameWatch *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->name = strdup(name);
        if (!w->name)
                return -ENOMEM;
        w->fn = fn;
        w->userdata = userdata;
        /* The match first: a change after the query's answer is never missed. */
        _cleanup_free_ char *match = NULL;

        if (asprintf(&match,
                     "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                     "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='%s'",
                     name) < 0)
                return -ENOMEM;
        r = sd_bus_add_match_async(bus, &w->match, match, on_owner_changed, NULL, w);
        if (r >= 0)
                r = sd_bus_call_method_async(bus, &w->query, "org.freedesktop.DBus",
                                             "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                             "GetNameOwner", on_get_owner, w, "s", name);
        if (r < 0) {
                bus_name_watch_free(TAKE_PTR(w));
                return r;
        }
        *ret = TAKE_PTR(w);
        return 0;
}

BusNameWatch *bus_name_watch_free(BusNameWatch *w)
{
        if (!w)
                return NULL;
        sd_bus_slot_unref(w->match);
        sd_bus_slot_unref(w->query);
        free(w->name);
        free(w);
        return NULL;
}

bool bus_name_watch_has_owner(const BusNameWatch *w)
{
        return w && w->has_owner;
}
