/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Wi-Fi Easy Connect (DPP) as an enrollee (docs/wifi.md "Enroll"): roamd shows this device's
 * DPP URI, a configurator (a phone on the network) scans it and sends the network's
 * credential. How each owner does it: roamd-wifi-wpa-dpp.c (DPP_BOOTSTRAP_GEN, DPP_LISTEN, the
 * DPP-CONF* events; roamd then joins what was received through the ordinary join),
 * roamd-wifi-iwd-dpp.c (DeviceProvisioning.StartEnrollee; iwd joins by itself). The core
 * (roamd-wifi-enroll.c) runs an enrollment as a join: the same id, JoinStep, JoinDone and
 * JoinCancel. Also the pure readers of what wpa_supplicant sends (table-tested in
 * tests/unit/test-wifi-dpp.c, fuzzed by fuzz-wifi-dpp). */

#include "roamd-wifi-backend.h"

/* What a configurator gave: a network with a passphrase (or a 64-hex PSK). */
typedef struct WifiDppCredential {
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        WifiSecurity security; /* from the AKM: psk wpa2, sae wpa3, psk+sae wpa2/wpa3 */
        char passphrase[65];   /* 8..63 printable characters, or 64 hex digits (a PSK) */
        size_t passphrase_len;
} WifiDppCredential;

void wifi_dpp_credential_erase(WifiDppCredential *c);

/* How an enrollment reports (userdata is the core's). uri() first, once; then exactly one of
 * received() (the owner has the credential and stopped: the core joins it) or done() (the owner
 * joined by itself, CONNECTED, or the enrollment failed). After either the backend drops the
 * enrollment by itself; freeing it before stops it at the owner. */
struct WifiEnrollReport {
        void (*uri)(const char *uri, void *userdata);
        void (*received)(const WifiDppCredential *c, void *userdata);
        void (*done)(WifiJoinResult result, const char *words, void *userdata);
};

/* Each owner's enrollment starts with this; wifi_enroll_free() stops and frees it. */
struct WifiEnroll {
        void (*free)(WifiEnroll *e);
        /* a configurator's: the passphrase its needs_secret asked for (NULL: asks none) */
        int (*secret)(WifiEnroll *e, const WifiSecrets *s);
};

static inline WifiEnroll *wifi_enroll_free(WifiEnroll *e)
{
        if (e)
                e->free(e);
        return NULL;
}

/* DPP-CONFOBJ-AKM's word (hostap's dpp_akm_str()) as a security roamd joins with a
 * passphrase; -EOPNOTSUPP for a DPP-connector or 802.1X network ("dpp", "dot1x", ...). */
int wifi_dpp_akm_security(const char *akm, WifiSecurity *ret);

/* DPP-CONFOBJ-PASS (the passphrase in hex) into c: -EBADMSG unless it is 8 to 63 printable
 * ASCII characters once decoded. */
int wifi_dpp_pass_decode(const char *hex, WifiDppCredential *c);
/* DPP-CONFOBJ-PSK (32 bytes in hex) into c as its 64 hex digits: -EBADMSG otherwise. */
int wifi_dpp_psk_decode(const char *hex, WifiDppCredential *c);
/* DPP-CONFOBJ-SSID (wpa_ssid_txt()'s printf_encode form) into c: -EBADMSG for a malformed
 * text, an empty SSID, or one that is not valid UTF-8 (DPP's configuration object carries
 * the SSID as JSON text). */
int wifi_dpp_ssid_decode(const char *text, size_t len, WifiDppCredential *c);
