/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether NetworkManager, iwd or ConnMan runs an interface (WifiBackendProbeFn each), asked on
 * the system bus and only read: NetworkManager's device for it is Wi-Fi, Managed and not
 * UNMANAGED; iwd has a Device of that Name with a Station on it; ConnMan has a wifi
 * technology. A daemon not on the bus answers "not running". */

#include "roamd-wifi-backend.h"

int wifi_probe_nm(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret);
int wifi_probe_iwd(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret);
int wifi_probe_connman(Core *core, const char *ifname, WifiProbeFn cb, void *userdata,
                       WifiOp **ret);
/* Drops a probe: its callback never runs. NULL-safe. */
void wifi_probe_cancel(WifiOp *op);
