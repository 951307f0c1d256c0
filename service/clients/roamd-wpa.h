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
#include "roamd-link-info.h"
#include "roamd-wpa-station.h"

typedef struct Wpa Wpa;
typedef struct WpaClient WpaClient;

/* What wpa_supplicant's news go to (userdata given to wpa_new()). */
typedef struct WpaHooks {
        /* station facts changed, or an interface came or went: a sync reads them */
        LinkChangedFn changed;
        /* the station facts of interface ifname changed (names: its Link properties,
         * NULL-terminated): the links' facts stage above reads them in a sync */
        void (*station)(const char *ifname, char **names, void *userdata);
        /* whether a link of this name exists here (outside the initial namespace, which
         * sockets are ours) */
        bool (*has_link)(const char *ifname, void *userdata);
        /* the interface that carries P2P (NULLs: none) */
        void (*p2p_device)(WpaClient *client, const char *prefix, const char *ifname,
                           void *userdata);
} WpaHooks;

/* *config is read at each use (a reload replaces it). */
int wpa_new(sd_event *event, Config *const *config, bool initial_netns, const WpaHooks *hooks,
            void *userdata, Wpa **ret);
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
