/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-words.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roam-bus-model.h"

/* Apps (org.roam1.App, docs/dbus-api.md) in words, shared by every way the client shows them:
 * `roam apps` and `roam app`, the TUI's apps screen and plain mode. Policies are shown as the
 * words roamd uses (allow, lan, deny, ...), each with what it means. */

/* OnlineFor() takes at most a day; UINT64_MAX means until released. */
#define ROAM_APP_ONLINE_FOR_MAX_USEC (24 * 3600 * USEC_PER_SEC)
#define ROAM_APP_UNTIL_RELEASED      UINT64_MAX

/* The bearers an app may be limited to, in roamd's order of preference: the shared table's,
 * all but "virtual" (its last). */
#define ROAM_APP_N_BEARERS ROAM_BEARER_VIRTUAL
#define roam_app_bearers   roam_bearer_table

/* The settings keys of SetAppPolicy, for messages: the shared table's. */
#define roam_app_settings_keys roam_app_keys_text

/* Parses "90s", "10m", "1h", "1h30m" (numbers with units s, m, h, summed) or "until-released"
 * (UINT64_MAX). Returns -EINVAL for anything else, -EDOM for no time at all, -ERANGE for more
 * than a day. */
int roam_app_parse_duration(const char *s, uint64_t *ret);
/* Why roam_app_parse_duration() refused s, as a sentence without the program name. */
void roam_app_duration_error(int r, const char *s, char *buf, size_t size);
/* "10 minutes", "1 hour 30 minutes", "until released" */
void roam_app_format_duration(uint64_t usec, char *buf, size_t size);

/* The next value when the TUI cycles a setting (allow -> lan -> deny -> allow, any -> required
 * -> forbidden -> any, sticky <-> move); an unknown value starts the cycle. */
const char *roam_app_next_access(const char *access);
const char *roam_app_next_vpn(const char *vpn);
const char *roam_app_next_handover(const char *handover);

/* What a value means: "local networks only", "only through a VPN", ... The value itself when
 * unknown (a newer roamd). */
const char *roam_app_access_words(const char *access);
const char *roam_app_vpn_words(const char *vpn);
const char *roam_app_handover_words(const char *handover);
const char *roam_app_source_words(const char *source);

/* "all" when the app may use every bearer, else the bearers joined by sep. NULL on OOM. */
char *roam_app_bearers_text(const RoamApp *a, const char *sep);
/* "v4 wifi0, v6 wifi0", "v4 wifi0, v6 none", or "none" when no link may carry new flows.
 * NULL on OOM. */
char *roam_app_route_text(const RoamModel *m, const RoamApp *a);
/* "until 14:05:00", "until released", or "" when the app has no online-for-a-task grant. */
void roam_app_until_text(const RoamApp *a, char *buf, size_t size);
/* The state in words with the grant's end: "online for a task until 14:05:00". NULL on OOM. */
char *roam_app_state_text(const RoamApp *a);

/* The wake keys in words: "priority 80, turns of at most 10 s, fetching about 2.0 MB", or
 * "not wake-listed" (docs/wake.md). */
void roam_app_wake_text(const RoamApp *a, char *buf, size_t size);

/* The policy in one phrase: "access allow, bearers all, VPN any, handover sticky". */
char *roam_app_policy_text(const RoamApp *a);

/* Kinds of state, for colour that repeats the words: 1 online, 0 limited (local networks
 * only), -1 blocked, and 2 for an online-for-a-task grant. */
int roam_app_state_kind(const RoamApp *a);

/* Checks "key=value" arguments before they go to roamd: every one has a '=' after a non-empty
 * key, and no key is given twice. On error, writes why into buf and returns -EINVAL. */
int roam_app_check_settings(char *const *args, char *buf, size_t size);
