/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* D-Bus names shared by roamd and roam. Documented in docs/dbus-api.md. */

#define ROAM_BUS_NAME          "org.roam1"
#define ROAM_MANAGER_PATH      "/org/roam1"
#define ROAM_LINK_PATH_PREFIX  "/org/roam1/link"
#define ROAM_MANAGER_INTERFACE "org.roam1.Manager"
#define ROAM_LINK_INTERFACE    "org.roam1.Link"
#define ROAM_APP_PATH_PREFIX   "/org/roam1/app"
#define ROAM_APP_INTERFACE     "org.roam1.App"
#define ROAM_PORTAL_PATH       "/org/roam1/portal"
#define ROAM_PORTAL_INTERFACE  "org.roam1.Portal"
#define ROAM_TIME_PATH         "/org/roam1/time"
#define ROAM_TIME_INTERFACE    "org.roam1.Time"
#define ROAM_PEER_PATH_PREFIX  "/org/roam1/peer"
#define ROAM_PEER_INTERFACE    "org.roam1.Peer"
#define ROAM_MONITOR_PATH      "/org/roam1/monitor"
#define ROAM_MONITOR_INTERFACE "org.roam1.AppMonitor"

#define ROAM_BLUETOOTH_PATH       "/org/roam1/bluetooth"
#define ROAM_BLUETOOTH_INTERFACE  "org.roam1.Bluetooth"
#define ROAM_BLUETOOTH_AGENT_PATH "/org/roam1/bluetooth/agent"
#define ROAM_NFC_AGENT_PATH       "/org/roam1/nfc/agent"
#define ROAM_WIFI_INTERFACE       "org.roam1.WiFi"

#define ROAM_ERROR_NO_SUCH_LINK   "org.roam1.Error.NoSuchLink"
#define ROAM_ERROR_INVALID_ARGS   "org.roam1.Error.InvalidArguments"
#define ROAM_ERROR_CONFIG_INVALID "org.roam1.Error.ConfigInvalid"
#define ROAM_ERROR_ACCESS_DENIED  "org.roam1.Error.AccessDenied"
#define ROAM_ERROR_NO_SUCH_APP    "org.roam1.Error.NoSuchApp"
#define ROAM_ERROR_FAILED         "org.roam1.Error.Failed"
#define ROAM_ERROR_BUSY           "org.roam1.Error.Busy"
#define ROAM_ERROR_NOT_SUPPORTED  "org.roam1.Error.NotSupported"

/* The app a captive portal's login browser runs as (docs/portal.md). */
#define ROAM_APP_PORTAL_LOGIN "portal-login"
