/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What wpa_supplicant says about the station of one interface (roamd-wpa.c keeps it): a
 * type of its own, so that the links' bus glue can show it without including the adapter. */

#include <stdint.h>

typedef struct WpaStation {
        char *wpa_state; /* "COMPLETED", "DISCONNECTED", ... */
        char *ssid;
        char *bssid;
        char *key_mgmt;
        uint32_t freq;
        char *p2p_device_address;
        /* SIGNAL_POLL while associated: 0 when unknown (not associated, or a driver that
         * reports no signal, like the wired one). */
        int32_t signal_dbm;
        uint32_t link_speed; /* Mbit/s */
} WpaStation;
