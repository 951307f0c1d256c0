/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-stats-budget.h"

#define USEC_PER_DAY (86400ULL * 1000000ULL)

static const char *const state_table[_STATS_BUDGET_STATE_MAX] = {
    [STATS_BUDGET_OK] = "ok",
    [STATS_BUDGET_WARNING] = "warning",
    [STATS_BUDGET_OVER] = "over",
};

static const char *const period_table[_STATS_BUDGET_PERIOD_MAX] = {
    [STATS_BUDGET_DAY] = "day",
    [STATS_BUDGET_WEEK] = "week",
    [STATS_BUDGET_MONTH] = "month",
    [STATS_BUDGET_SPAN] = "span",
};

const char *stats_budget_state_to_string(StatsBudgetState s)
{
        return s >= 0 && s < _STATS_BUDGET_STATE_MAX ? state_table[s] : NULL;
}

StatsBudgetState stats_budget_state_from_string(const char *s)
{
        for (int i = 0; s && i < _STATS_BUDGET_STATE_MAX; i++)
                if (streq(state_table[i], s))
                        return i;
        return _STATS_BUDGET_STATE_INVALID;
}

const char *stats_budget_period_to_string(StatsBudgetPeriod p)
{
        return p >= 0 && p < _STATS_BUDGET_PERIOD_MAX ? period_table[p] : NULL;
}

const char *stats_budget_links_to_string(int links)
{
        if (links == STATS_BUDGET_ANY)
                return "any";
        if (links == STATS_BUDGET_ROAMING)
                return "roaming";
        if (links == STATS_BUDGET_METERED)
                return "metered";
        return bearer_to_string((Bearer)links);
}

void stats_budget_done(StatsBudget *b)
{
        if (!b)
                return;
        free(b->app_id);
        b->app_id = NULL;
}

static int parse_links(const char *w)
{
        Bearer b;

        if (streq(w, "any"))
                return STATS_BUDGET_ANY;
        if (streq(w, "roaming"))
                return STATS_BUDGET_ROAMING;
        if (streq(w, "metered"))
                return STATS_BUDGET_METERED;
        b = bearer_from_string(w);
        /* virtual links carry no one's data plan */
        if (b < 0 || b == BEARER_VIRTUAL)
                return -EINVAL;
        return (int)b;
}

/* a number, then nothing or a unit */
static int parse_bytes(const char *w, uint64_t *ret)
{
        static const struct {
                const char *unit;
                uint64_t factor;
        } units[] = {
            {"", 1},
            {"B", 1},
            {"k", 1000ULL},
            {"kB", 1000ULL},
            {"M", 1000000ULL},
            {"MB", 1000000ULL},
            {"G", 1000000000ULL},
            {"GB", 1000000000ULL},
            {"T", 1000000000000ULL},
            {"TB", 1000000000000ULL},
            {"KiB", 1ULL << 10},
            {"MiB", 1ULL << 20},
            {"GiB", 1ULL << 30},
            {"TiB", 1ULL << 40},
        };
        unsigned long long v;
        char *end;

        if (*w < '0' || *w > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(w, &end, 10);
        if (errno)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(end, units[i].unit)) {
                        /* at most 1 PB: far above any plan, far below overflow */
                        if (v > 1000000000000000ULL / units[i].factor)
                                return -EINVAL;
                        *ret = v * units[i].factor;
                        return 0;
                }
        return -EINVAL;
}

static int parse_period(const char *w, StatsBudget *b)
{
        static const struct {
                const char *unit;
                uint64_t usec;
        } units[] = {
            {"s", 1000000ULL},
            {"m", 60 * 1000000ULL},
            {"h", 3600 * 1000000ULL},
            {"d", USEC_PER_DAY},
        };
        unsigned long long v;
        char *end;

        for (int p = 0; p < STATS_BUDGET_SPAN; p++)
                if (streq(w, period_table[p])) {
                        b->period = p;
                        b->span_usec = 0;
                        return 0;
                }
        if (*w < '0' || *w > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(w, &end, 10);
        if (errno || v == 0)
                return -EINVAL;
        for (size_t i = 0; i < ELEMENTSOF(units); i++)
                if (streq(end, units[i].unit)) {
                        if (v > 366 * USEC_PER_DAY / units[i].usec)
                                return -EINVAL;
                        b->period = STATS_BUDGET_SPAN;
                        b->span_usec = v * units[i].usec;
                        return 0;
                }
        return -EINVAL;
}

int stats_budget_parse(const char *value, StatsBudget *ret, const char **ret_error)
{
        char w[4][256];
        const char *p = value;
        StatsBudget b = {};
        int n = 0;

        /* four words separated by blanks, each shorter than 256 bytes */
        while (*p) {
                size_t len;
                while (*p == ' ' || *p == '\t')
                        p++;
                if (!*p)
                        break;
                len = strcspn(p, " \t");
                if (n == 4 || len >= sizeof(w[0])) {
                        *ret_error = n == 4 ? "more than four words" : "a word too long";
                        return -EINVAL;
                }
                memcpy(w[n], p, len);
                w[n++][len] = 0;
                p += len;
        }
        if (n != 4) {
                *ret_error = "four words wanted: APP-ID LINKS LIMIT PERIOD";
                return -EINVAL;
        }
        if (!app_id_is_valid(w[0])) {
                *ret_error = "not a valid app ID";
                return -EINVAL;
        }
        b.links = parse_links(w[1]);
        if (b.links == -EINVAL) {
                *ret_error = "links must be a bearer (ethernet, wifi, cellular, bluetooth, "
                             "wifi-direct, vpn, lowpan), roaming, metered or any";
                return -EINVAL;
        }
        if (parse_bytes(w[2], &b.limit) < 0) {
                *ret_error = "limit must be bytes, with k, M, G, T, KiB, MiB, GiB or TiB";
                return -EINVAL;
        }
        if (parse_period(w[3], &b) < 0) {
                *ret_error = "period must be day, week, month or a length from 1s to 366d";
                return -EINVAL;
        }
        b.app_id = strdup(w[0]);
        if (!b.app_id)
                return -ENOMEM;
        *ret = b;
        return 0;
}

int stats_budget_key(const StatsBudget *b, char **ret)
{
        const char *links = stats_budget_links_to_string(b->links);
        int k;

        if (!links)
                return -EINVAL;
        if (b->period == STATS_BUDGET_SPAN)
                k = asprintf(ret, "%s %s %" PRIu64 " %" PRIu64 "s", b->app_id, links, b->limit,
                             (uint64_t)(b->span_usec / 1000000ULL));
        else
                k = asprintf(ret, "%s %s %" PRIu64 " %s", b->app_id, links, b->limit,
                             stats_budget_period_to_string(b->period));
        return k < 0 ? -ENOMEM : 0;
}

void stats_budget_period_at(const StatsBudget *b, uint64_t real, uint64_t *ret_index,
                            uint64_t *ret_start, uint64_t *ret_end)
{
        uint64_t day = real / USEC_PER_DAY, idx = 0, start = 0, end = 0;
        struct tm tm;
        time_t t;

        switch (b->period) {
        case STATS_BUDGET_DAY:
                idx = day;
                start = day * USEC_PER_DAY;
                end = start + USEC_PER_DAY;
                break;
        case STATS_BUDGET_WEEK:
                /* 1970-01-01 was a Thursday: day + 3 counts from a Monday */
                idx = (day + 3) / 7;
                start = (idx * 7 - 3) * USEC_PER_DAY;
                if (idx == 0)
                        start = 0;
                end = (idx * 7 + 4) * USEC_PER_DAY;
                break;
        case STATS_BUDGET_MONTH:
                t = (time_t)(real / 1000000ULL);
                gmtime_r(&t, &tm);
                idx = (uint64_t)(tm.tm_year + 1900) * 12 + (uint64_t)tm.tm_mon;
                tm = (struct tm){.tm_year = tm.tm_year, .tm_mon = tm.tm_mon, .tm_mday = 1};
                start = (uint64_t)timegm(&tm) * 1000000ULL;
                tm.tm_mon++; /* timegm normalizes December + 1 */
                end = (uint64_t)timegm(&tm) * 1000000ULL;
                break;
        case STATS_BUDGET_SPAN:
                idx = real / b->span_usec;
                start = idx * b->span_usec;
                end = start + b->span_usec;
                break;
        case _STATS_BUDGET_PERIOD_MAX:
        case _STATS_BUDGET_PERIOD_INVALID:
                break;
        }
        *ret_index = idx;
        *ret_start = start;
        *ret_end = end;
}

StatsBudgetState stats_budget_state(const StatsBudget *b, uint64_t used, unsigned warn_percent)
{
        if (used >= b->limit)
                return STATS_BUDGET_OVER;
        /* limit < 2^50: no overflow */
        if (used * 100 >= b->limit * warn_percent)
                return STATS_BUDGET_WARNING;
        return STATS_BUDGET_OK;
}
