/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <systemd/sd-bus.h>

/* The client's model of org.roam1.Usage (docs/stats.md, docs/dbus-api.md): the usage rows,
 * the hourly history and the data budgets as GetUsage, GetUsageHistory and GetBudgets return
 * them, read here for `roam stats`, the usage screen and plain mode, which only make the calls
 * (asynchronously, but for the CLI) and show what these readers give. */

#define ROAM_USAGE_INTERFACE "org.roam1.Usage"

/* A GetUsage / GetUsageHistory filter. NULL/0: no filter. */
typedef struct RoamUsageQuery {
        const char *app;
        const char *user; /* a uid, or "all" (everyone's) */
        const char *link;
        uint64_t since; /* seconds since the epoch */
} RoamUsageQuery;

/* A uid as --user and the filter take it; -EINVAL otherwise. */
int roam_usage_parse_user(const char *s, uint32_t *ret);
/* A new call of method (GetUsage, GetUsageHistory) with q's filter; -EINVAL for a filter
 * sd-bus refuses (not UTF-8) or a user that is no uid. */
int roam_usage_new_call(sd_bus *bus, const char *method, const RoamUsageQuery *q,
                        sd_bus_message **ret);

/* One row of GetUsage: an owner's traffic on a link, roaming or not. */
typedef struct RoamUsageRow {
        char *owner, *link;
        bool roaming;
        uint64_t bytes_in, bytes_out, packets_in, packets_out;
} RoamUsageRow;

/* One hour of GetUsageHistory. */
typedef struct RoamUsageHour {
        uint64_t start; /* seconds since the epoch */
        bool roaming;
        uint64_t bytes_in, bytes_out, packets_in, packets_out;
} RoamUsageHour;

/* One data budget of GetBudgets. */
typedef struct RoamBudget {
        char *app, *links;
        uint64_t limit, used; /* bytes */
        uint64_t start, end;  /* the period, seconds since the epoch */
        uint64_t warn;        /* percent */
        char *state;          /* ok, warning, over */
} RoamBudget;

/* Readers of the replies (the message at its array); *ret is malloc'd, freed with the _free
 * functions, NULL and 0 for an empty array. */
int roam_usage_rows_read(sd_bus_message *m, RoamUsageRow **ret, size_t *ret_n);
void roam_usage_rows_free(RoamUsageRow *rows, size_t n);
int roam_usage_history_read(sd_bus_message *m, RoamUsageHour **ret, size_t *ret_n);
int roam_budgets_read(sd_bus_message *m, RoamBudget **ret, size_t *ret_n);
void roam_budgets_free(RoamBudget *b, size_t n);

/* A budget's state ("ok", "warning", "over" on the bus) in the words `roam stats`, the usage
 * screen and plain mode show. */
const char *roam_budget_state_words(const char *state);
