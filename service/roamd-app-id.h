/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#define APP_ID_MAX 255

/* The two policies that are not apps: processes in no known app, and the system (roamd,
 * DHCP/RA, VPN transport, system services such as sshd). */
#define APP_ID_DEFAULT "default"
#define APP_ID_SYSTEM  "system"

/* An app ID names a cgroup directory and a D-Bus object, so it is kept to a safe alphabet:
 * 1-255 characters of [A-Za-z0-9._-], starting with a letter or digit, no "..". Reverse-DNS
 * IDs (org.example.Mail) and desktop-file IDs fit. */
bool app_id_is_valid(const char *id);

/* "default" or "system" */
bool app_id_is_special(const char *id);
