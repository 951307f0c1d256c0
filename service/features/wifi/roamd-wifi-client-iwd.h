/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Wi-Fi through iwd (roamd-wifi-client-iwd.c): the WifiBackend of an interface iwd runs as a
 * station (whether it does: wifi_probe_iwd(), roamd-wifi-probe.c). Secrets reach iwd through
 * roamd's own net.connman.iwd.Agent, which answers only iwd's unique name and only for the
 * networks roamd is joining (iwd asks the agent of Connect()'s caller). */

#include "roamd-wifi-backend.h"

int wifi_iwd_new(Core *core, const char *ifname, int ifindex, const WifiBackendEvents *events,
                 void *userdata, WifiBackend **ret);
/* Cancels any iwd backend operation (the backend's ops->cancel). */
void wifi_iwd_cancel(WifiOp *op);
/* Where iwd keeps its profiles (/var/lib/iwd; the tests point it elsewhere). */
void wifi_iwd_set_state_directory(const char *dir);
