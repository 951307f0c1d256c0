/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* roamd's use of wpa_supplicant: which interfaces it runs (control sockets found in the
 * [WiFi] ControlDirectory, or the INTERFACES of the global socket), each one's station facts
 * from STATUS (refreshed on its CTRL-EVENT-* events) for the link's network identity, its
 * signal from SIGNAL_POLL while associated (on CTRL-EVENT-SIGNAL-CHANGE and every [WiFi]
 * SignalInterval=, 10 s: modest, the driver is not woken often), and which interface carries P2P
 * (handed to roamd-p2p.c). */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "roamd-config.h"
#include "roamd-links.h"

typedef struct Wpa Wpa;
typedef struct WpaClient WpaClient;

/* What wpa_supplicant's news go to (userdata given to wpa_new()). */
typedef struct WpaHooks {
        /* station facts changed, or an interface came or went: a sync reads them */
        LinkChangedFn changed;
        /* a link's station facts changed (names: its Link properties, NULL-terminated): the
         * bus glue above emits them */
        void (*station)(Link *l, char **names, void *userdata);
        /* the interface that carries P2P (NULLs: none) */
        void (*p2p_device)(WpaClient *client, const char *prefix, const char *ifname,
                           void *userdata);
} WpaHooks;

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

/* *config is read at each use (a reload replaces it); links names the links wpa_supplicant
 * runs (their WiFi properties; outside the initial namespace, which sockets are ours). */
int wpa_new(sd_event *event, Config *const *config, Links *links, bool initial_netns,
            const WpaHooks *hooks, void *userdata, Wpa **ret);
int wpa_start(Wpa *w);
Wpa *wpa_free(Wpa *w);

/* The station facts of the interface, or NULL when wpa_supplicant does not run it. */
const WpaStation *wpa_station(Wpa *w, const char *ifname);

/* For other parts of roamd that ask wpa_supplicant something about ifname (WSC credentials,
 * ...): the attached client that reaches it and the IFNAME= prefix to pass with requests
 * (NULL on a per-interface socket). NULL when wpa_supplicant does not run ifname now. */
WpaClient *wpa_client_for(Wpa *w, const char *ifname, const char **ret_prefix);

/* The interface a network from outside (an NFC tag) is added to: of the station interfaces
 * wpa_supplicant runs now (not P2P devices or groups), the first by name. NULL when none. */
const char *wpa_station_ifname(Wpa *w);
