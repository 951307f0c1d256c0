/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Usage counting in the kernel (docs/stats.md): two base chains of a table of their own,
 * inet usage_by_roamd (filter, output and input, priority 300, after roamd's own verdicts and
 * the usual filter tables), fill one dynamic set `stats` whose elements carry a counter. The
 * table is not replaced when roamd starts (table inet roam is): the set and its counters
 * outlive every roamd, so what was counted between two reads is never lost. Its key is
 * cgroup . link . mark . direction: the packet path adds an element the first time a key
 * is seen, userspace only dumps the set, once per flush.
 *
 * The cgroup of a packet is its socket's ancestor at the deepest level that is a member of
 * set `stats_cg` (apps, user slices, system services): one rule per level in use, deepest
 * first. Packets of no member (no full socket, the root cgroup) count as cgroup 0. Outbound
 * packets carry roamd's bits of the packet mark: the output hook's oif is the main table's
 * choice, and a marked packet is routed again, by its mark's slot, after the hook. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-nft.h"

#define NFT_STATS_TABLE   "usage_by_roamd"
#define NFT_STATS_SET     "stats"
#define NFT_STATS_MEMBERS "stats_cg"

typedef enum NftStatsDir {
        NFT_STATS_IN,
        NFT_STATS_OUT,
        _NFT_STATS_DIR_MAX,
        _NFT_STATS_DIR_INVALID = -22,
} NftStatsDir;

typedef struct NftStatsEntry {
        uint64_t cgroup;  /* 0: no member (no socket, root) */
        uint32_t ifindex; /* oif (out) or iif (in) */
        uint32_t mark;    /* out: packet mark & roamd's mask (0 for in) */
        NftStatsDir dir;
        uint64_t bytes, packets;
} NftStatsEntry;

typedef struct NftStats NftStats;

int nft_stats_new(uint32_t mark_mask, NftStats **ret);
NftStats *nft_stats_free(NftStats *s);

/* Adds the table, the sets and the chains to t where they are missing, keeping the counted set
 * (and its counters) when it exists; rewrites the chains and the member set from scratch. */
int nft_stats_txn_install(NftStats *s, NftTxn *t);
/* Removes the table (counting turned off), whether it exists or not. */
int nft_stats_txn_remove(NftTxn *t);
/* Records a member (add) or its end. Returns 1 when the kernel's table must follow (a
 * reconciler pass: nft_stats_txn_sync()), else 0, or -ENOMEM. A member ended counts as gone
 * from the kernel only once the pass removing it was accepted. */
int nft_stats_member(NftStats *s, uint64_t cgroup, unsigned level, bool add);
/* Into a pass's transaction: members the kernel lacks, both chains when a level came into or
 * went out of use, and the elements of members that ended. */
int nft_stats_txn_sync(NftStats *s, NftTxn *t);
/* After that pass's commit (ok: accepted; else what it carried stays to do). Returns whether
 * members that ended are still in the kernel (one added while its cgroup ended): another pass
 * is needed. */
bool nft_stats_txn_done(NftStats *s, bool ok);
/* Deletes the counters of these keys (a cgroup that is gone, read for the last time). */
int nft_stats_forget(NftStats *s, NftEngine *e, const NftStatsEntry *keys, size_t n);
/* Adds counters (at zero) for these keys; for benchmarks and tests of the reader. */
int nft_stats_add(NftStats *s, NftEngine *e, const NftStatsEntry *keys, size_t n);
/* Whether the objects are in the kernel (set once the table carrying them was committed:
 * every member not gone then counts as installed). */
void nft_stats_set_installed(NftStats *s, bool installed);

/* One dump of set stats (and the table's handle, which tells one table instance from the
 * next). -ENOENT when the table or the set does not exist. */
int nft_stats_read(NftStats *s, uint64_t *ret_table_handle, NftStatsEntry **ret, size_t *ret_n);

/* Budgets (docs/stats.md): table inet budget_by_roamd, chains budget_out and budget_in (filter,
 * priority 299: before counting, so a dropped packet is not counted), one named quota (flag
 * over) per budget and per period, and sets of the budget's cgroups and links. A packet of a
 * budget's cgroup on one of its links adds its length to the quota; once the quota is used up
 * the packet, and every later one, is dropped. */
#define NFT_BUDGET_TABLE "budget_by_roamd"

typedef struct NftBudget {
        const char *quota;        /* the quota's name (unique, at most 63 bytes) */
        uint64_t limit, consumed; /* consumed: what the period used so far (<= limit) */
        const uint64_t *cgroups;  /* the app's cgroups and their levels */
        const unsigned *levels;
        size_t n_cgroups;
        bool any_link;           /* every link but loopback */
        const uint32_t *ifindex; /* otherwise: these links, in; out when unmarked */
        size_t n_ifindex;
        const uint32_t *marks; /* out: marked packets (mark & mask) routed to those links */
        size_t n_marks;
} NftBudget;

typedef struct NftQuotaUse {
        char name[64];
        uint64_t consumed;
} NftQuotaUse;

/* Replaces the budget table in t with these budgets (none: removes it). */
int nft_budget_txn_replace(NftTxn *t, uint32_t mark_mask, const NftBudget *b, size_t n);
/* One dump of the budget table's quotas. -ENOENT when the table does not exist. */
int nft_budget_read(NftStats *s, NftQuotaUse **ret, size_t *ret_n);
