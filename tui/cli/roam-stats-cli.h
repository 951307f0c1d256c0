/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "roam-usage.h"

/* `roam stats`: usage from roamd's org.roam1.Usage (docs/stats.md). */
typedef RoamUsageQuery RoamStatsQuery;

/* "--since": a duration back from now ("2h", "7d", "30m", "90s") or seconds since the epoch
 * ("@1700000000"). -EINVAL otherwise. */
int roam_stats_parse_since(const char *s, uint64_t now, uint64_t *ret);
int roam_stats_run(const RoamStatsQuery *q, bool json);
