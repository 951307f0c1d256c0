/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libgioroam.so: the GIO module GLib loads from its module directory (giomodule.cache, kept by
 * gio-querymodules) for the gio-network-monitor extension point. */
#include <gio/gio.h>

#include "roam-network-monitor.h"

/* GIO's module entry points, declared here as GIO looks them up by name. */
G_MODULE_EXPORT void g_io_module_load(GIOModule *module);
G_MODULE_EXPORT void g_io_module_unload(GIOModule *module);
G_MODULE_EXPORT char **g_io_module_query(void);

void g_io_module_load(GIOModule *module)
{
        /* a registered type cannot be unregistered: the module stays loaded */
        g_type_module_use(G_TYPE_MODULE(module));
        roam_network_monitor_register(module);
}

void g_io_module_unload(GIOModule *module)
{
}

char **g_io_module_query(void)
{
        char *eps[] = {(char *)G_NETWORK_MONITOR_EXTENSION_POINT_NAME, NULL};

        return g_strdupv(eps);
}
