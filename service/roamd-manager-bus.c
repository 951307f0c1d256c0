/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <grp.h>
#include <net/if.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-manager.h"
#include "roamd-reconcile.h"
#include "roamd-polkit.h"

static int property_get_string(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error)
{
        Manager *m = userdata;
        const char *v = "";

        if (streq(property, "Version"))
                v = ROAM_VERSION;
        else if (streq(property, "State"))
                v = m->state;
        else if (streq(property, "StateReason"))
                v = strempty(m->state_reason);
        else if (streq(property, "ConfigFile"))
                v = m->config_path;
        else if (streq(property, "Degraded"))
                v = reconcile_degraded(m->core.reconcile);
        return sd_bus_message_append(reply, "s", v);
}

static int property_get_degraded_since(sd_bus *bus, const char *path, const char *interface,
                                       const char *property, sd_bus_message *reply, void *userdata,
                                       sd_bus_error *error)
{
        Manager *m = userdata;

        return sd_bus_message_append(reply, "t", reconcile_degraded_since(m->core.reconcile));
}

static int property_get_best_link(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error)
{
        Manager *m = userdata;

        return sd_bus_message_append(reply, "o",
                                     m->core.links->best ? m->core.links->best->path : "/");
}

static int property_get_default_link(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply, void *userdata,
                                     sd_bus_error *error)
{
        Manager *m = userdata;
        Link *l = m->default_ifindex ? links_get(m->core.links, m->default_ifindex) : NULL;

        return sd_bus_message_append(reply, "o", l ? l->path : "/");
}

static int method_get_link_by_name(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        const char *name;
        Link *l;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        if (!*name || strlen(name) >= IFNAMSIZ || strpbrk(name, "/ \t\n:"))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Invalid interface name.");
        l = links_get_by_name(m->core.links, name);
        if (!l || !l->announced)
                return sd_bus_error_setf(error, ROAM_ERROR_NO_SUCH_LINK, "No link named %s.", name);
        return sd_bus_reply_method_return(msg, "o", l->path);
}

static int method_get_link_by_index(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Manager *m = userdata;
        int32_t idx;
        Link *l;
        int r;

        r = sd_bus_message_read(msg, "i", &idx);
        if (r < 0)
                return r;
        if (idx <= 0)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Interface index must be positive.");
        l = links_get(m->core.links, idx);
        if (!l || !l->announced)
                return sd_bus_error_setf(error, ROAM_ERROR_NO_SUCH_LINK, "No link with index %d.",
                                         idx);
        return sd_bus_reply_method_return(msg, "o", l->path);
}

static int method_reload(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_free_ char *why = NULL;
        Manager *m = userdata;
        int r;

        r = bus_check_authorized(msg, "org.roam1.manage", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = manager_reload(m, &why);
        if (r < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_CONFIG_INVALID,
                                         "%s; the previous configuration stays in force (roamd's "
                                         "log lists every error).",
                                         why ? why : m->config_path);
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Version", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("State", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("BestLink", "o", property_get_best_link, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("DefaultLink", "o", property_get_default_link, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("StateReason", "s", property_get_string, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("ConfigFile", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Degraded", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("DegradedSince", "t", property_get_degraded_since, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("GetLinkByName", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", link),
                            method_get_link_by_name, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetLinkByIndex", SD_BUS_ARGS("i", ifindex), SD_BUS_RESULT("o", link),
                            method_get_link_by_index, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Reload", NULL, NULL, method_reload, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int manager_bus_setup(Manager *m)
{
        int r;

        r = sd_bus_add_object_vtable(m->core.bus, &m->manager_slot, ROAM_MANAGER_PATH,
                                     ROAM_MANAGER_INTERFACE, manager_vtable, m);
        if (r < 0)
                return log_error_errno(r, "Failed to add manager object: %m");
        r = features_bus_setup(m);
        if (r < 0)
                return r;
        r = sd_bus_add_object_manager(m->core.bus, &m->object_manager_slot, ROAM_MANAGER_PATH);
        if (r < 0)
                return log_error_errno(r, "Failed to add object manager: %m");
        return links_bus_setup(m->core.links, m->core.bus);
}
