/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Wi-Fi through NetworkManager (roamd-wifi-client-nm.c): the WifiBackend of an interface NM
 * manages (whether it does: wifi_probe_nm(), roamd-wifi-probe.c). Secrets reach NM through roamd's
 * own secret agent (org.freedesktop.NetworkManager.SecretAgent at
 * /org/freedesktop/NetworkManager/SecretAgent, roamd-wifi-nm-agent.c), which answers only NM's
 * unique name and only for the activations roamd started. */

#include "roamd-wifi-backend.h"

int wifi_nm_new(Core *core, const char *ifname, int ifindex, const WifiBackendEvents *events,
                void *userdata, WifiBackend **ret);
/* Cancels any NM backend operation (the backend's ops->cancel). */
void wifi_nm_cancel(WifiOp *op);
