/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-live.h"

/* The usage screen in plain mode (roam --plain, roam-plain-usage.c): "usage" and "usage APP"
 * say the traffic counted per owner, at home and roaming, and the data budgets in sentences;
 * when a budget changes state (org.roam1.Usage.BudgetChanged) one line says so
 * ("org.example.Video: over budget on cellular: blocked until 1 Jan"). */

typedef struct PlainUsage PlainUsage;

extern const char plain_usage_help[];

int plain_usage_new(RoamLive *live, PlainUsage **ret);
PlainUsage *plain_usage_free(PlainUsage *pu);
/* roamd is (again) there: follow its budgets on the live model's bus. */
void plain_usage_watch(PlainUsage *pu);
/* 1 when words were a usage command (answered), 0 when not. */
int plain_usage_command(PlainUsage *pu, char **words);
