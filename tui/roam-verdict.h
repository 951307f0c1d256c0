/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "roam-bus-model.h"

/* Connectivity verdicts and reasons (docs/connectivity.md) in words, shared by every way the
 * client shows them: the TUI, plain mode and `roam status`. A verdict is always a word; colour
 * (a theme role) only repeats it. */

typedef enum RoamVerdict {
        ROAM_VERDICT_OFFLINE,
        ROAM_VERDICT_LOCAL,
        ROAM_VERDICT_PORTAL,
        ROAM_VERDICT_PARTIAL,
        ROAM_VERDICT_ONLINE,
        ROAM_VERDICT_CHECKING,
        _ROAM_VERDICT_MAX,
        _ROAM_VERDICT_INVALID = -EINVAL,
} RoamVerdict;

const char *roam_verdict_to_string(RoamVerdict v);
RoamVerdict roam_verdict_from_string(const char *s);

typedef enum RoamReason {
        ROAM_REASON_NOT_PROBED,
        ROAM_REASON_NO_CARRIER,
        ROAM_REASON_NO_ADDRESS,
        ROAM_REASON_LINK_LOCAL_ONLY,
        ROAM_REASON_NO_ROUTE,
        ROAM_REASON_GATEWAY_UNREACHABLE,
        ROAM_REASON_DNS_FAILED,
        ROAM_REASON_HTTP_TIMEOUT,
        ROAM_REASON_HTTP_FAILED,
        ROAM_REASON_PORTAL_REDIRECT,
        ROAM_REASON_PORTAL_CONTENT,
        ROAM_REASON_PORTAL_DNS,
        ROAM_REASON_CAPPORT,
        ROAM_REASON_HTTPS_FAILED,
        ROAM_REASON_OK,
        _ROAM_REASON_MAX,
        _ROAM_REASON_INVALID = -EINVAL,
} RoamReason;

const char *roam_reason_to_string(RoamReason r);
RoamReason roam_reason_from_string(const char *s);

/* A short phrase ("no carrier", "HTTP redirected to a login page") and a sentence for a
 * reason as roamd sent it; an unknown reason (a newer roamd) is shown as sent. */
const char *roam_reason_short(const char *reason);
const char *roam_reason_long(const char *reason);

/* The verdict as roamd sent it, or "unknown" when it sent none. */
const char *roam_verdict_word(const char *verdict);

/* The global verdict in one sentence ("Online via wlan0 (wifi)", "Behind a captive portal on
 * eth1: log in at http://..."). Returns a malloc'd string or NULL on OOM. */
char *roam_global_sentence(const RoamModel *m);

/* How long ago: "3s ago", "5m ago", "2h ago", "4d ago"; "never" when usec is 0. Also returns
 * (in *ret_next, when given) the µs from now at which the text changes next. */
void roam_format_age(uint64_t usec, uint64_t now, char *buf, size_t size, uint64_t *ret_next);

/* A duration of a probe round: "120 ms", "2.5 s". */
void roam_format_duration(uint64_t usec, char *buf, size_t size);

/* Wall clock time of day "14:02:11" in the local time zone. */
void roam_format_clock(uint64_t usec, char *buf, size_t size);

/* CLOCK_REALTIME in µs; $ROAM_TEST_NOW (µs) overrides it so screenshot tests are stable. */
uint64_t roam_now(void);
