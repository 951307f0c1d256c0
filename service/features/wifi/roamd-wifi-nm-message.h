/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* NetworkManager's D-Bus messages as the NM backend (roamd-wifi-client-nm.c) reads and writes
 * them: access points' and profiles' properties, secrets, Update2 of one connection key, and the
 * connection dict of a join (research wifi-join.md §1.a). No state, no calls. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "roamd-wifi-backend.h"

/* NM80211ApFlags / NM80211ApSecurityFlags (nm-dbus-interface.h) */
#define NM_AP_PRIVACY     0x1u
#define NM_KM_PSK         0x100u
#define NM_KM_8021X       0x200u
#define NM_KM_SAE         0x400u
#define NM_KM_OWE         0x800u
#define NM_KM_SUITE_B     0x2000u
#define NM_SYSTEM_CA_FILE "/etc/ssl/certs/ca-certificates.crt"

typedef struct NmAp {
        char *path;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        uint32_t flags, wpa, rsn, freq;
        uint8_t strength;
} NmAp;

typedef struct NmKnown {
        char *path;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        char *key_mgmt;
        bool hidden, autoconnect;
        int32_t priority;
        uint64_t timestamp;       /* seconds */
        sd_bus_message *settings; /* GetSettings' reply, for Update2 */
} NmKnown;

int nm_read_paths(sd_bus_message *m, char ***ret, size_t *n);
/* Properties.GetAll of an AccessPoint */
int nm_read_ap(sd_bus_message *m, NmAp *ap);
/* Settings.Connection.GetSettings; is_wifi: an 802-11-wireless profile */
int nm_read_known(sd_bus_message *m, NmKnown *k, bool *is_wifi);
WifiSecurity nm_known_security(const NmKnown *k);
/* Update2's arguments: the settings as read with connection.KEY replaced (type 'b': *(int *),
 * 'i': *(int32_t *)), flags 0, no arguments */
int nm_append_update(sd_bus_message *u, sd_bus_message *settings, const char *key, char type,
                     const void *value);
/* GetSecrets of 802-11-wireless-security: the psk */
int nm_read_share(sd_bus_message *m, WifiShare *s);
/* A join's connection dict: never key-mgmt for a visible network (NM picks wpa-psk or sae from
 * the AP), everything for a hidden one, the 802-1x setting for PEAP/TTLS. */
int nm_append_connection(sd_bus_message *m, const WifiJoinRequest *q, WifiSecurity sec);

/* NM's AP Strength (percent, nm_wifi_utils_level_to_quality()) back to dBm, and an AP's flags
 * to a security word. */
int32_t wifi_nm_strength_to_dbm(uint8_t strength);
WifiSecurity wifi_nm_security(uint32_t flags, uint32_t wpa_flags, uint32_t rsn_flags);
