/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The fake kernel of the usage tests: table inet budget_by_roamd as the kernel holds it (each
 * quota with what it matches and what it consumed), replaced only by a committed transaction,
 * and the counting table's calls taken without counting anything. It stands in at link time
 * for roamd-nft-stats.c and the transactions of roamd-nft.c, and gives the reconciler its
 * transactions (fake_budget_txn_ops). A commit can be made to fail (nothing changes). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-nft-stats.h"
#include "roamd-reconcile.h"

#define FAKE_BUDGET_MAX 8

typedef struct FakeQuota {
        char name[64];
        uint64_t limit, consumed;
        bool any_link;
        uint64_t cgroups[FAKE_BUDGET_MAX];
        unsigned levels[FAKE_BUDGET_MAX];
        size_t n_cgroups;
        uint32_t ifindex[FAKE_BUDGET_MAX];
        size_t n_ifindex;
        uint32_t marks[FAKE_BUDGET_MAX];
        size_t n_marks;
} FakeQuota;

typedef struct FakeBudgetTable {
        bool exists; /* gone after a reboot */
        FakeQuota quotas[FAKE_BUDGET_MAX];
        size_t n;
} FakeBudgetTable;

typedef struct FakeBudgetKernel {
        FakeBudgetTable table;
        unsigned commits, refused, fail_next;
        int fail_error;
        unsigned replaced; /* committed transactions that replaced the budget table */
} FakeBudgetKernel;

/* The one kernel (the engine the reconciler and usage share). */
extern FakeBudgetKernel fake_budget;
extern const ReconcileTxnOps fake_budget_txn_ops;

/* The quota of the configuration's i-th budget (its name starts "q<i>_"), NULL none. */
FakeQuota *fake_budget_quota(size_t i);
/* A quota's matches as "c100/4,c101/4 i4,i5 m1000000,..." ("any" for any link). */
const char *fake_quota_matches(const FakeQuota *q);
