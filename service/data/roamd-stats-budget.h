/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Data budgets (docs/stats.md): the settings' words and the period arithmetic (pure: no I/O,
 * table-tested, fuzzed through the configuration parser). The kernel enforces a budget with
 * an nft quota (roamd-nft-stats.c); roamd-stats.c keeps it current. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "roamd-bearer.h"

/* What links a budget counts: a bearer (Bearer values), or these. */
#define STATS_BUDGET_ANY     (-1) /* every link */
#define STATS_BUDGET_ROAMING (-2) /* links roaming at the time */
#define STATS_BUDGET_METERED (-3) /* metered links: [Metered], else cellular ones */

typedef enum StatsBudgetPeriod {
        STATS_BUDGET_DAY,   /* UTC calendar day */
        STATS_BUDGET_WEEK,  /* UTC, Monday to Sunday */
        STATS_BUDGET_MONTH, /* UTC calendar month */
        STATS_BUDGET_SPAN,  /* a fixed length, periods counted from the epoch */
        _STATS_BUDGET_PERIOD_MAX,
        _STATS_BUDGET_PERIOD_INVALID = -EINVAL,
} StatsBudgetPeriod;

typedef enum StatsBudgetState {
        STATS_BUDGET_OK,
        STATS_BUDGET_WARNING, /* the warning fraction used */
        STATS_BUDGET_OVER,    /* used up: the kernel drops the app's packets on those links */
        _STATS_BUDGET_STATE_MAX,
        _STATS_BUDGET_STATE_INVALID = -EINVAL,
} StatsBudgetState;

typedef struct StatsBudget {
        char *app_id;
        int links;      /* a Bearer, STATS_BUDGET_ANY or STATS_BUDGET_ROAMING */
        uint64_t limit; /* bytes, both directions together */
        StatsBudgetPeriod period;
        uint64_t span_usec; /* STATS_BUDGET_SPAN */
} StatsBudget;

const char *stats_budget_state_to_string(StatsBudgetState s);
StatsBudgetState stats_budget_state_from_string(const char *s);
const char *stats_budget_period_to_string(StatsBudgetPeriod p);
/* "cellular", "roaming", "metered", "any" */
const char *stats_budget_links_to_string(int links);

/* "APP-ID LINKS LIMIT PERIOD": LINKS a bearer word, "roaming", "metered" or "any"; LIMIT bytes with
 * an optional k, M, G, T (powers of 1000) or KiB, MiB, GiB, TiB suffix (0: nothing at all); PERIOD
 * day, week, month, or a length from 1s to 366d ("30s", "12h", "7d"). -EINVAL on a bad value
 * (*ret_error names the field), -ENOMEM. */
int stats_budget_parse(const char *value, StatsBudget *ret, const char **ret_error);
void stats_budget_done(StatsBudget *b);

/* The budget's key in the saved state: its setting in canonical form ("org.example.Mail cellular
 * 500000000 month", "... 12s"), itself a valid value for stats_budget_parse(). */
int stats_budget_key(const StatsBudget *b, char **ret);

/* The period holding the wall-clock time real (µs since the epoch): a number that changes at
 * every period's end, its start and end (µs). */
void stats_budget_period_at(const StatsBudget *b, uint64_t real, uint64_t *ret_index,
                            uint64_t *ret_start, uint64_t *ret_end);

/* The state for used bytes, with the warning at warn_percent (1-100) of the limit. */
StatsBudgetState stats_budget_state(const StatsBudget *b, uint64_t used, unsigned warn_percent);
