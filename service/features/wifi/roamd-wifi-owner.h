/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Who owns a Wi-Fi interface, decided in this order (docs/wifi.md):
 *   1. NetworkManager manages it (a Wi-Fi device, Managed, not UNMANAGED) -> NetworkManager,
 *      even when NM itself uses iwd or a wpa_supplicant with a control socket underneath
 *      (Debian starts NM's supplicant with -O DIR=/run/wpa_supplicant: a socket there proves
 *      nothing about who owns the interface, so the socket is asked last);
 *   2. iwd has a Device in station mode with a Station on it -> iwd;
 *   3. ConnMan runs Wi-Fi -> ConnMan, which roamd names and does not join through (not
 *      supported yet: the reason says so and names connmanctl);
 *   4. a wpa_supplicant control socket answers for it -> wpa_supplicant;
 *   5. none, with the reason (each owner's own answer) in words.
 * [WiFi] Backend=networkmanager|iwd|wpa_supplicant asks that owner only: it is the owner when
 * it answers for the interface, else none with its reason (roamd never joins through an owner
 * that does not run the interface). Backend=auto (the default) is the order above.
 *
 * The decision is pure (wifi_owner_decide() in roamd-wifi-owner.c, table-tested);
 * wifi_owner_detect() (roamd-wifi-owner-detect.c) asks the
 * probes in order on the loop and stops at the first that manages the interface. */

#include "roamd-wifi-backend.h"

/* What one owner's probe answered. */
typedef struct WifiOwnerAnswer {
        bool asked;   /* false: not asked (an earlier owner won, or the override skipped it) */
        int error;    /* <0: the probe itself failed (the owner's daemon did not answer) */
        bool manages; /* meaningful when asked and error == 0 */
        char why[WIFI_WORDS_MAX];
} WifiOwnerAnswer;

/* forced: _WIFI_OWNER_INVALID for auto, else the owner [WiFi] Backend= names. The order of
 * detection is the table's; answers[o] for each owner. Returns the owner and writes the
 * reason in words to why (the chosen owner's answer, or every refusal joined when none). */
WifiOwner wifi_owner_decide(WifiOwner forced, const WifiOwnerAnswer answers[_WIFI_OWNER_MAX],
                            char *why, size_t why_size);

/* The order in which owners are asked (without WIFI_OWNER_NONE). */
extern const WifiOwner wifi_owner_order[_WIFI_OWNER_MAX - 1];

/* The probes, one per owner (NULL: that owner cannot be asked here: treated as not
 * managing, with words saying so). */
typedef struct WifiOwnerProbes {
        WifiBackendProbeFn probe[_WIFI_OWNER_MAX];
        /* how a probe's op is cancelled (its backend's ops->cancel) */
        void (*cancel[_WIFI_OWNER_MAX])(WifiOp *op);
} WifiOwnerProbes;

typedef struct WifiOwnerDetect WifiOwnerDetect;
typedef void (*WifiOwnerFn)(WifiOwner owner, const char *why, void *userdata);

/* Asks the probes in order (only the forced one when forced is not _WIFI_OWNER_INVALID) and
 * calls cb once with the decision. The probes table must outlive the detection. */
int wifi_owner_detect(Core *core, const char *ifname, WifiOwner forced,
                      const WifiOwnerProbes *probes, WifiOwnerFn cb, void *userdata,
                      WifiOwnerDetect **ret);
/* Stops a detection: cb never runs. NULL-safe; returns NULL. */
WifiOwnerDetect *wifi_owner_detect_free(WifiOwnerDetect *d);
