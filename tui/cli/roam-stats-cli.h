/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* `roam stats`: usage from roamd's org.roam1.Usage (docs/stats.md). NULL/0: no filter. */
typedef struct RoamStatsQuery {
        const char *app;
        const char *user; /* a uid, or "all" */
        const char *link;
        uint64_t since; /* seconds since the epoch */
} RoamStatsQuery;

/* "--since": a duration back from now ("2h", "7d", "30m", "90s") or seconds since the epoch
 * ("@1700000000"). -EINVAL otherwise. */
int roam_stats_parse_since(const char *s, uint64_t now, uint64_t *ret);
int roam_stats_run(const RoamStatsQuery *q, bool json);

/* A budget's state ("ok", "warning", "over" on the bus) in the words `roam stats`, the usage
 * screen and plain mode show. */
const char *roam_budget_state_words(const char *state);
