/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* DPP enrollment through iwd's net.connman.iwd.DeviceProvisioning (roamd-wifi-dpp.h). */

#include "roamd-wifi-dpp.h"

int wifi_iwd_enroll(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                    WifiEnroll **ret);
/* -EOPNOTSUPP: iwd's ConfigureEnrollee reports no result (see why_not). */
int wifi_iwd_configure(WifiBackend *b, const char *uri, const WifiJoinReport *report,
                       void *userdata, WifiEnroll **ret);
