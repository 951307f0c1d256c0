/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* DPP enrollment through a bare wpa_supplicant's control socket (roamd-wifi-dpp.h). */

#include "roamd-wifi-dpp.h"

int wifi_wpa_enroll(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                    WifiEnroll **ret);
/* A configurator: the network the interface is on, sent to the device of uri (DPP_QR_CODE,
 * DPP_AUTH_INIT conf=sta-psk|sta-sae); its passphrase is asked (needs_secret): wpa_supplicant
 * never gives it back. */
int wifi_wpa_configure(WifiBackend *b, const char *uri, const WifiJoinReport *report,
                       void *userdata, WifiEnroll **ret);
