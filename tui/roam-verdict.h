/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "roam-bus-model.h"
#include "roam-words.h"

/* Connectivity verdicts and reasons (docs/connectivity.md) in words, shared by every way the
 * client shows them: the TUI, plain mode and `roam status`. A verdict is always a word; colour
 * (a theme role) only repeats it. */

/* The verdicts, reasons and their phrases come from the shared table (shared/roam-words.h). */

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
