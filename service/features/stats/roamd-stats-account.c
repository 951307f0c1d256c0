/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-fault.h"
#include "roamd-stats-account.h"

typedef struct Delta {
        const char *owner, *link; /* in the new baseline */
        char *pending_link;       /* a pending count's own copy */
        uint64_t cgroup;
        StatsCount c;
} Delta;

int stats_baseline_cmp(const void *x, const void *y)
{
        const StatsBaselineEntry *a = x, *b = y;
        if (a->dir != b->dir)
                return a->dir < b->dir ? -1 : 1;
        if (a->cgroup != b->cgroup)
                return a->cgroup < b->cgroup ? -1 : 1;
        if (a->ifindex != b->ifindex)
                return a->ifindex < b->ifindex ? -1 : 1;
        if (a->mark != b->mark)
                return a->mark < b->mark ? -1 : 1;
        return 0;
}

static void baseline_free(StatsBaselineEntry *e, size_t n)
{
        for (size_t i = 0; e && i < n; i++) {
                free(e[i].owner);
                free(e[i].link);
        }
        free(e);
}

/* Everything that can fail (copies, the history's new series and buckets) is done first,
 * then the counts are added and the baseline replaced, which cannot fail. A dump accounted
 * halfway would be accounted again from the old baseline, counting its first half twice. */
int stats_account(StatsHistory *h, const char *epoch, const NftStatsEntry *e, size_t n,
                  uint32_t hour, bool defer_unknown, const StatsAccountOps *ops, void *userdata,
                  StatsPending **pending, size_t *n_pending)
{
        _cleanup_free_ Delta *d = NULL;
        _cleanup_free_ char(*names)[16] = NULL;
        _cleanup_free_ char *ep = NULL;
        StatsBaselineEntry *nb = NULL;
        size_t n_d = 0, n_pend = 0;
        bool same = h->epoch && streq(h->epoch, epoch);
        int r = 0;

        ep = strdup(epoch);
        nb = calloc(n + 1, sizeof(*nb));
        d = calloc(n + 1, sizeof(*d));
        names = calloc(n + 1, sizeof(*names));
        if (!ep || !nb || !d || !names) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                StatsBaselineEntry key = {.dir = e[i].dir,
                                          .cgroup = e[i].cgroup,
                                          .ifindex = e[i].ifindex,
                                          .mark = e[i].mark};
                const StatsBaselineEntry *b =
                    same ? bsearch(&key, h->base, h->n_base, sizeof(key), stats_baseline_cmp)
                         : NULL;
                const char *o = ops->owner(userdata, e[i].cgroup);
                uint64_t db = e[i].bytes, dp = e[i].packets;

                /* a counter below its baseline was made anew (element deleted and re-added):
                 * all of it is new */
                if (b && b->bytes <= e[i].bytes && b->packets <= e[i].packets) {
                        db -= b->bytes;
                        dp -= b->packets;
                }
                key.bytes = e[i].bytes;
                key.packets = e[i].packets;
                key.owner = strdup(o ? o : b ? b->owner : e[i].cgroup == 0 ? "other" : "gone");
                /* a link that is gone keeps the name its counts were filed under */
                key.link =
                    strdup(b && !ops->link_exists(userdata, e[i].ifindex)
                               ? b->link
                               : ops->link_name(userdata, e[i].ifindex, e[i].mark, names[i]));
                nb[i] = key;
                if (!key.owner || !key.link) {
                        r = -ENOMEM;
                        goto out;
                }
                if (db == 0 && dp == 0)
                        continue;
                Delta *x = &d[n_d++];
                *x = (Delta){.owner = key.owner, .link = key.link, .cgroup = e[i].cgroup};
                if (e[i].dir == NFT_STATS_OUT)
                        x->c.bytes_out = db, x->c.packets_out = dp;
                else
                        x->c.bytes_in = db, x->c.packets_in = dp;
                if (!o && !b && e[i].cgroup != 0 && defer_unknown) {
                        x->pending_link = strdup(key.link);
                        if (!x->pending_link) {
                                r = -ENOMEM;
                                goto out;
                        }
                        n_pend++;
                        continue;
                }
                r = stats_history_reserve(h, key.owner, key.link, ops->roaming(userdata, key.link),
                                          hour);
                if (r < 0)
                        goto out;
        }
        if (n_pend > 0) {
                StatsPending *np = realloc(*pending, sizeof(StatsPending) * (*n_pending + n_pend));
                if (!np) {
                        r = -ENOMEM;
                        goto out;
                }
                *pending = np;
        }

        if (n_d > 0 && fault_check(FAULT_STATS_APPLY) < 0) {
                r = -ENOMEM; /* what the fault stands for */
                goto out;
        }

        /* from here on nothing fails */
        for (size_t i = 0; i < n_d; i++) {
                if (d[i].pending_link) {
                        (*pending)[(*n_pending)++] = (StatsPending){
                            .cgroup = d[i].cgroup,
                            .link = TAKE_PTR(d[i].pending_link),
                            .hour = hour,
                            .c = d[i].c,
                        };
                        continue;
                }
                r = stats_history_add(h, d[i].owner, d[i].link, ops->roaming(userdata, d[i].link),
                                      hour, &d[i].c);
                assert(r >= 0);
        }
        qsort(nb, n, sizeof(*nb), stats_baseline_cmp);
        stats_history_baseline_take(h, TAKE_PTR(ep), TAKE_PTR(nb), n);
        r = 0;
out:
        for (size_t i = 0; d && i < n_d; i++)
                free(d[i].pending_link);
        baseline_free(nb, n);
        return r;
}

StatsBudgetState stats_budget_apply_quotas(StatsBudgetInfo *b, const NftQuotaUse *q, size_t n,
                                           unsigned warn_percent)
{
        for (size_t j = 0; j < n; j++)
                if (streq(q[j].name, b->quota))
                        b->used = q[j].consumed;
        return stats_budget_state(&b->spec, b->used, warn_percent);
}
