/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Usage accounting (docs/stats.md), apart from the kernel and the links (pure): one dump of
 * the kernel's counters against the last one (the history's baseline) -> the differences in
 * the hourly history, per owner (app, user, system), link and home/roaming; and the budgets'
 * quota use -> their states. roamd-stats.c hands in the dump and answers the questions about
 * cgroups and links through StatsAccountOps; tests/unit/test-stats-account.c hands in fakes. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-nft-stats.h"
#include "roamd-stats-budget.h"
#include "roamd-stats-history.h"

typedef struct StatsAccountOps {
        /* The owner word ("app:ID", "user:UID", "system"...) of a live cgroup; NULL: unknown. */
        const char *(*owner)(void *userdata, uint64_t cgroup);
        /* Whether link ifindex still exists. */
        bool (*link_exists)(void *userdata, uint32_t ifindex);
        /* The name of the link a packet counted on (ifindex, mark) really took (buf for a made
         * up one). */
        const char *(*link_name)(void *userdata, uint32_t ifindex, uint32_t mark,
                                 char buf[static 16]);
        /* Whether link name is roaming now. */
        bool (*roaming)(void *userdata, const char *link);
} StatsAccountOps;

/* A count whose cgroup's owner is not known yet (at start, before the cgroup tree is scanned). */
typedef struct StatsPending {
        uint64_t cgroup;
        char *link;
        uint32_t hour;
        StatsCount c;
} StatsPending;

/* Accounts one dump (e, n) of epoch (the counted set's instance: another one than the
 * baseline's means every counter is new) into h at hour: each counter's difference from its
 * baseline goes to its owner (the live cgroup's, else the baseline's, "other" for cgroup 0,
 * "gone"), on its link, home or roaming; the dump becomes the baseline. With defer_unknown, a
 * counter of a cgroup known neither live nor from the baseline is appended to *pending
 * instead. All or nothing: on failure h and *pending are unchanged. Takes over nothing. */
int stats_account(StatsHistory *h, const char *epoch, const NftStatsEntry *e, size_t n,
                  uint32_t hour, bool defer_unknown, const StatsAccountOps *ops, void *userdata,
                  StatsPending **pending, size_t *n_pending);

/* The baseline's order (dir, cgroup, ifindex, mark). */
int stats_baseline_cmp(const void *x, const void *y);

/* A data budget in force: its setting, its current period, its quota and what it used. */
typedef struct StatsBudgetInfo {
        StatsBudget spec;
        uint64_t period, start, end; /* the current period (µs since the epoch) */
        uint64_t used;               /* bytes its quota saw this period, as last read */
        StatsBudgetState state;
        char quota[64]; /* the quota object's name in table inet budget_by_roamd */
} StatsBudgetInfo;

/* One dump of the quotas (q, n): b's use from its own quota (none in the dump: b->used stays)
 * and the state that follows, warning at warn_percent of the limit. b->state is left for the
 * caller, who announces a change. */
StatsBudgetState stats_budget_apply_quotas(StatsBudgetInfo *b, const NftQuotaUse *q, size_t n,
                                           unsigned warn_percent);
