/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

/* Above NetworkManager's monitor (30), below the sandbox portal's (35): inside a sandbox the
 * portal answers, as it must; elsewhere roamd does when it runs. */
#define ROAM_NETWORK_MONITOR_PRIORITY 32

#define ROAM_TYPE_NETWORK_MONITOR (roam_network_monitor_get_type())
G_DECLARE_FINAL_TYPE(RoamNetworkMonitor, roam_network_monitor, ROAM, NETWORK_MONITOR, GObject)

void roam_network_monitor_register(GIOModule *module);

G_END_DECLS
