/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"

struct BusNameWatch {
        char *name;
        char *owner; /* unique name; NULL: none (or not known yet) */
        BusNameWatchFlags flags;
        bool changed; /* a NameOwnerChanged came: it is newer than GetNameOwner's answer */
        sd_bus_slot *match, *query;
        BusNameWatchFn fn;
        void *userdata;
};

/* owner: "" when none */
static int set_owner(BusNameWatch *w, const char *owner)
{
        if (!!w->owner != !!*owner)
                log_debug("bus name %s: %s", w->name, *owner ? "owned" : "gone");
        if (!*owner) {
                free(w->owner);
                w->owner = NULL;
                return 0;
        }
        return free_and_strdup(&w->owner, owner) < 0 ? -ENOMEM : 0;
}

static int on_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        BusNameWatch *w = userdata;
        const char *name, *old, *new;

        if (sd_bus_message_read(m, "sss", &name, &old, &new) < 0 || strcmp(name, w->name) != 0)
                return 0;
        w->changed = true;
        if (set_owner(w, new) < 0)
                return log_oom();
        return w->fn ? w->fn(w, new, w->userdata) : 0;
}

static int on_get_owner(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        BusNameWatch *w = userdata;
        const char *owner = "";

        w->query = sd_bus_slot_unref(w->query);
        if (w->changed)
                return 0;
        /* NameHasNoOwner is the error of a name without an owner */
        if (!sd_bus_message_is_method_error(m, NULL) && sd_bus_message_read(m, "s", &owner) < 0)
                owner = "";
        if (set_owner(w, owner) < 0)
                return log_oom();
        if (!(w->flags & BUS_NAME_WATCH_TELL_FIRST) || !w->fn)
                return 0;
        return w->fn(w, owner, w->userdata);
}

int bus_name_watch_new(sd_bus *bus, const char *name, BusNameWatchFn fn, void *userdata,
                       BusNameWatch **ret)
{
        return bus_name_watch_new_full(bus, name, 0, fn, userdata, ret);
}

int bus_name_watch_new_full(sd_bus *bus, const char *name, BusNameWatchFlags flags,
                            BusNameWatchFn fn, void *userdata, BusNameWatch **ret)
{
        _cleanup_free_ BusNameWatch *w = calloc(1, sizeof(*w));
        int r;

        if (!w)
                return -ENOMEM;
        w->name = strdup(name);
        if (!w->name)
                return -ENOMEM;
        w->flags = flags;
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
        free(w->owner);
        free(w->name);
        free(w);
        return NULL;
}

bool bus_name_watch_has_owner(const BusNameWatch *w)
{
        return w && w->owner;
}

const char *bus_name_watch_owner(const BusNameWatch *w)
{
        return w ? w->owner : NULL;
}
