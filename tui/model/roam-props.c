/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-util.h"
#include "roam-props.h"

struct RoamProps {
        sd_bus *bus;
        sd_bus_slot *match, *load;
        char *path, *interface;
        RoamPropsReadFn read;
        void *model;
        RoamPropsDoneFn done;
        void *userdata;
        bool loaded;
};

RoamProps *roam_props_free(RoamProps *w)
{
        if (!w)
                return NULL;
        sd_bus_slot_unref(w->match);
        sd_bus_slot_unref(w->load);
        sd_bus_unref(w->bus);
        free(w->path);
        free(w->interface);
        free(w);
        return NULL;
}

static int on_loaded(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamProps *w = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        int r = 0;

        w->load = sd_bus_slot_unref(w->load);
        if (!e)
                r = w->read(m, w->model);
        w->loaded = true;
        /* the owner may free it in its handler: nothing of w is used after this */
        w->done(w, e, r, w->userdata);
        return 0;
}

int roam_props_reload(RoamProps *w)
{
        if (!w)
                return -ENOTCONN;
        w->load = sd_bus_slot_unref(w->load);
        return sd_bus_call_method_async(w->bus, &w->load, ROAM_BUS_NAME, w->path,
                                        "org.freedesktop.DBus.Properties", "GetAll", on_loaded, w,
                                        "s", w->interface);
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamProps *w = userdata;
        const char *iface;

        if (sd_bus_message_read(m, "s", &iface) >= 0 && streq(iface, w->interface))
                (void)roam_props_reload(w);
        return 0;
}

int roam_props_new(sd_bus *bus, const char *path, const char *interface, RoamPropsReadFn read,
                   void *model, RoamPropsDoneFn done, void *userdata, RoamProps **ret)
{
        _cleanup_(roam_props_freep) RoamProps *w = NULL;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->bus = sd_bus_ref(bus);
        w->path = strdup(path);
        w->interface = strdup(interface);
        if (!w->path || !w->interface)
                return -ENOMEM;
        w->read = read;
        w->model = model;
        w->done = done;
        w->userdata = userdata;
        r = sd_bus_match_signal_async(bus, &w->match, ROAM_BUS_NAME, path,
                                      "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                      on_changed, NULL, w);
        if (r >= 0)
                r = roam_props_reload(w);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(w);
        return 0;
}

sd_bus *roam_props_get_bus(const RoamProps *w)
{
        return w ? w->bus : NULL;
}

bool roam_props_loaded(const RoamProps *w)
{
        return w && w->loaded;
}

int roam_props_get_all(sd_bus *bus, const char *path, const char *interface, RoamPropsReadFn read,
                       void *model, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, path, "org.freedesktop.DBus.Properties",
                               "GetAll", error, &reply, "s", interface);
        if (r < 0)
                return r;
        return read(reply, model);
}
