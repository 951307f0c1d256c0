/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* DPP enrollment through a bare wpa_supplicant's control socket (roamd-wifi-dpp.h). */

#include "roamd-wifi-dpp.h"

int wifi_wpa_enroll(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                    WifiEnroll **ret);
