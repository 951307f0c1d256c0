/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-live.h"

/* The time in plain mode (roam --plain, roam-plain-time.c): "time" says what `roam time`
 * says; when the time's state or the online gate changes, one line says so ("Time: settled,
 * 2026-12-06 00:12:03.250 UTC ± 512 ms: 2 of 3 sources agree ...", "Time gate: open after the
 * wait: time unverified"). */

typedef struct PlainTime PlainTime;

extern const char plain_time_help[];

int plain_time_new(RoamLive *live, PlainTime **ret);
PlainTime *plain_time_free(PlainTime *pt);
/* roamd is (again) there: follow org.roam1.Time on the live model's bus. */
void plain_time_watch(PlainTime *pt);
/* 1 when words were a time command (answered), 0 when not. */
int plain_time_command(PlainTime *pt, char **words);
