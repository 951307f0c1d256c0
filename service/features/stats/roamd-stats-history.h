/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Usage history (pure: no I/O, table-tested and fuzzed): hourly buckets per series, a series
 * being one owner (app:ID, user:UID, system, other) on one link, home or roaming. Plus the
 * baseline: the kernel counters last read, so that a restart (even after kill -9) counts
 * exactly what the kernel counted since the last save, and nothing twice.
 *
 * The file (docs/stats.md) is the header "ROAMSTA1" followed by blocks, each framed as
 * magic "RSB1", type (1 byte), payload length (u32 LE), CRC-32 of type and payload (u32 LE),
 * payload. Numbers in payloads are LEB128 varints, strings a varint length then the bytes.
 * A block whose frame or CRC is wrong is skipped and counted; the parser resynchronises at the
 * next magic, so one damaged block loses only itself (one series, or one budget's use). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STATS_STRING_MAX 1024

typedef struct StatsCount {
        uint64_t bytes_in, bytes_out, packets_in, packets_out;
} StatsCount;

typedef struct StatsBucket {
        uint32_t hour; /* hours since the epoch (UTC) */
        StatsCount c;
} StatsBucket;

typedef struct StatsSeries {
        char *owner; /* "app:ID", "user:UID", "system", "other" */
        char *link;  /* interface name */
        bool roaming;
        StatsBucket *buckets; /* sorted by hour, unique */
        size_t n, allocated;
} StatsSeries;

typedef struct StatsBaselineEntry {
        uint8_t dir; /* NftStatsDir */
        uint64_t cgroup;
        uint32_t ifindex, mark;
        uint64_t bytes, packets;
        char *owner, *link; /* what it was attributed to when last read */
} StatsBaselineEntry;

/* What a data budget's quota had used in one period: the kernel's budget table does not
 * survive a reboot, this does. */
typedef struct StatsBudgetUse {
        char *key;      /* the budget as configured: "APP-ID LINKS LIMIT PERIOD" */
        uint64_t start; /* its period's start, seconds since the epoch */
        uint64_t used;  /* bytes */
} StatsBudgetUse;

typedef struct StatsHistory {
        StatsSeries *series; /* sorted by owner, link, roaming */
        size_t n_series;
        char *epoch; /* which kernel table the baseline belongs to (boot id + table handle) */
        StatsBaselineEntry *base;
        size_t n_base;
        StatsBudgetUse *budgets; /* one block each in the file */
        size_t n_budgets;
} StatsHistory;

void stats_history_done(StatsHistory *h);

void stats_count_add(StatsCount *a, const StatsCount *b);
bool stats_count_is_zero(const StatsCount *c);

/* Adds c to the bucket (owner, link, roaming, hour), creating what is missing. */
int stats_history_add(StatsHistory *h, const char *owner, const char *link, bool roaming,
                      uint32_t hour, const StatsCount *c);
/* Makes the series and bucket that stats_history_add() would need, so that adding to them
 * afterwards cannot fail: a whole dump is accounted in one step or not at all. */
int stats_history_reserve(StatsHistory *h, const char *owner, const char *link, bool roaming,
                          uint32_t hour);
const StatsSeries *stats_history_find(const StatsHistory *h, const char *owner, const char *link,
                                      bool roaming);
/* Drops buckets older than min_hour (and series left empty); returns how many buckets. */
size_t stats_history_prune(StatsHistory *h, uint32_t min_hour);

/* Sums buckets with hour >= since over series matching owner and link (NULL: any); roaming:
 * -1 any, 0 home, 1 roaming. */
StatsCount stats_history_sum(const StatsHistory *h, const char *owner, const char *link,
                             int roaming, uint32_t since);

/* Sums every bucket of app_id's series: owner "app:ID" and each user's "user:U/app:ID". */
StatsCount stats_history_sum_app(const StatsHistory *h, const char *app_id);

/* The baseline: replaced as a whole. Entries are copied. */
/* Takes epoch and e (their strings too): cannot fail. */
void stats_history_baseline_take(StatsHistory *h, char *epoch, StatsBaselineEntry *e, size_t n);
int stats_history_set_baseline(StatsHistory *h, const char *epoch, const StatsBaselineEntry *e,
                               size_t n);
const StatsBaselineEntry *stats_history_baseline_find(const StatsHistory *h, uint8_t dir,
                                                      uint64_t cgroup, uint32_t ifindex,
                                                      uint32_t mark);

/* The budgets' use: replaced as a whole. Entries are copied. */
int stats_history_set_budgets(StatsHistory *h, const StatsBudgetUse *u, size_t n);
const StatsBudgetUse *stats_history_budget_find(const StatsHistory *h, const char *key);

int stats_history_serialize(const StatsHistory *h, uint8_t **ret, size_t *ret_size);
/* The totals per series in Prometheus' text exposition format (roam_bytes_total and
 * roam_packets_total by owner, link, direction and roaming), label values escaped. */
int stats_history_prometheus(const StatsHistory *h, char **ret, size_t *ret_size);
/* Parses what serialize wrote. -EBADMSG when the header is wrong (nothing kept); otherwise 0
 * and *ret_bad the number of damaged blocks skipped (their loss is reported by the caller). */
int stats_history_parse(const uint8_t *data, size_t size, StatsHistory *ret, unsigned *ret_bad);

/* Clock jumps. Counts come from kernel counters, never from time, so a jump loses or doubles
 * nothing; it only decides the hour usage goes to, and pruning. */
typedef struct StatsClock {
        uint64_t last_real, last_boot; /* µs of the previous reading; 0: none */
        uint64_t hold_prune_until;     /* boot clock µs */
} StatsClock;

#define STATS_CLOCK_JUMP_USEC (60ULL * 1000000ULL)
#define STATS_CLOCK_HOLD_USEC (24ULL * 3600ULL * 1000000ULL)

/* One reading of the wall and boot clocks (µs). Returns how far (µs) the wall clock moved
 * apart from the boot clock since the last reading when that is more than a minute either
 * way (then nothing is pruned for a day of boot time), else 0. */
int64_t stats_clock_observe(StatsClock *c, uint64_t real, uint64_t boot);
/* The oldest hour to keep (retention_days before the wall clock's hour); 0, keep everything,
 * while pruning is held. */
uint32_t stats_clock_prune_hour(const StatsClock *c, uint64_t real, uint64_t boot,
                                unsigned retention_days);
