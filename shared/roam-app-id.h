/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#define APP_ID_MAX 255

/* The two policies that are not apps: processes in no known app, and the system (roamd,
 * DHCP/RA, VPN transport, system services such as sshd). */
#define APP_ID_DEFAULT "default"
#define APP_ID_SYSTEM  "system"
/* The policies of users' own processes (docs/apps.md, "Users"): "user" for every user,
 * "user:UID" for one. They cap what anything below user-UID.slice may do, apps included. */
#define APP_ID_USER        "user"
#define APP_ID_USER_PREFIX "user:"

/* An app ID names a cgroup directory and a D-Bus object, so it is kept to a safe alphabet:
 * 1-255 characters of [A-Za-z0-9._-], starting with a letter or digit, no "..". Reverse-DNS
 * IDs (org.example.Mail) and desktop-file IDs fit. */
bool app_id_is_valid(const char *id);

/* "default", "system", "user" or "user:UID": policies, not apps */
bool app_id_is_special(const char *id);
/* A decimal uid as systemd accepts it (the n bytes at s): no sign, no leading zeros, not
 * (uid_t)-1 nor the 16-bit (uid_t)-1. ret may be NULL. */
bool uid_from_decimal(const char *s, size_t n, uid_t *ret);
/* "user:UID" (a decimal uid as systemd writes it in user-UID.slice): true and *ret. */
bool app_id_user_uid(const char *id, uid_t *ret);
/* An ID a policy may have: an app ID or "user:UID". */
bool app_policy_id_is_valid(const char *id);
