/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The bare wpa_supplicant as a Wi-Fi owner: its control socket (roamd-wpa.c's client for the
 * interface). docs/wifi.md says what it allows and what not. */

#include "roamd-wifi-backend.h"

extern const WifiBackendOps wifi_wpa_ops;

/* manages: wpa_supplicant's control socket for ifname is attached. */
int wifi_wpa_probe(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret);
int wifi_wpa_new(Core *core, const char *ifname, int ifindex, const WifiBackendEvents *events,
                 void *userdata, WifiBackend **ret);
/* Whether the control socket the backend was made for still runs the interface (false: the
 * owner is to be decided again). */
bool wifi_wpa_current(WifiBackend *b);
