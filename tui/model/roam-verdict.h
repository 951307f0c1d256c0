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
