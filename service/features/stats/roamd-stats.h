/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Usage statistics (docs/stats.md): the kernel counts (roamd-nft-stats.c), this reads the
 * counters once per flush interval and before every change that moves a byte's attribution
 * (link slots, cgroups going away), adds the differences to the hourly history
 * (roamd-stats-history.c) and saves it crash-safe together with the counters it last read,
 * so a restart, even after kill -9, carries on exactly where the kernel is. */

#include <stdint.h>
#include <systemd/sd-bus.h>

#include "roamd-cgroup.h"
#include "roamd-nft.h"
#include "roamd-stats-account.h"
#include "roamd-stats-budget.h"
#include "roamd-stats-history.h"

typedef struct Apps Apps;
typedef struct Core Core;
typedef struct Link Link;
typedef struct Stats Stats;

int stats_new(Core *core, Stats **ret);
/* Saves a last time (counters read first). NULL-safe. */
Stats *stats_free(Stats *s);

/* Loads the history and takes over the counters an earlier roamd left (they are kept when
 * the tables are installed). */
int stats_start(Stats *s);

/* The apps, once they exist (NULL: gone): the owners of cgroups (followed through their
 * cgroup watch) and the routing slots. NULL-safe for s. */
int stats_set_apps(Stats *s, Apps *apps);

/* The reconciler's side (NULL-safe for s): */
int stats_txn_install(Stats *s, NftTxn *t);
void stats_installed(Stats *s);

/* Reads the counters into the history (no save): before the link slots change. */
int stats_read(Stats *s);
/* Registers usage's part with the reconciler; s NULL (counting off): the install removes
 * what an earlier roamd counted with. Returns the part's id, which the caller removes
 * (reconcile_remove_part()) before it frees s. */
typedef struct Reconcile Reconcile;
int stats_register(Stats *s, Reconcile *rc);
/* Reads and saves (the history file, the Prometheus export). */
int stats_save(Stats *s);

const StatsHistory *stats_history(Stats *s);

/* Data budgets (docs/stats.md). */
/* (StatsBudgetInfo: roamd-stats-account.h) */

/* The budgets, their use read from the kernel first. */
size_t stats_budgets(Stats *s, const StatsBudgetInfo **ret);
/* One dump of the quotas; logs and signals state changes. */
int stats_budgets_read(Stats *s);
/* The configuration was reloaded. */
int stats_budgets_changed(Stats *s);
/* roamd-stats-bus.c: signal BudgetChanged(app, links, state). */
void stats_bus_emit_budget(Stats *s, const char *app_id, const char *links, const char *state);
/* roamd-stats-bus.c: org.roam1.Usage on the manager's path. */
int stats_bus_setup(Stats *s, sd_bus_slot **ret);
/* For the bus glue */
Core *stats_core(Stats *s);
/* Whether app_id's traffic on l is metered, for its network monitor (docs/apps-hear.md): a
 * metered link ([Metered]=, else cellular), a Bluetooth tether, a roaming link, or a budget of
 * the app that counts l at its warning or over. s NULL (no usage counting): cellular or
 * Bluetooth. */
bool stats_link_metered_for(Stats *s, const Link *l, const char *app_id);

/* The owner word of a cgroup ("app:ID", "user:UID/app:ID", "user:UID", "system"). */
int stats_owner_of(const CgroupNode *n, char **ret);
