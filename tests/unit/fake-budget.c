/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake-budget.h"
#include "roam-macro.h"

FakeBudgetKernel fake_budget;

struct NftTxn {
        FakeBudgetTable staged; /* what the kernel holds once this commits */
        bool replaces;
};

struct NftStats {
        uint32_t mark_mask;
};

static int txn_begin(void *userdata, NftTxn **ret)
{
        return nft_txn_new(userdata, ret);
}

static void txn_free(NftTxn *t)
{
        nft_txn_free(t);
}

const ReconcileTxnOps fake_budget_txn_ops = {
    .begin = txn_begin,
    .commit = nft_txn_commit,
    .free = txn_free,
};

int nft_txn_new(NftEngine *e, NftTxn **ret)
{
        NftTxn *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->staged = fake_budget.table;
        *ret = t;
        return 0;
}

NftTxn *nft_txn_free(NftTxn *t)
{
        free(t);
        return NULL;
}

int nft_txn_commit(NftTxn *t)
{
        if (fake_budget.fail_next > 0) {
                fake_budget.fail_next--;
                fake_budget.refused++;
                return fake_budget.fail_error;
        }
        fake_budget.table = t->staged;
        fake_budget.commits++;
        fake_budget.replaced += t->replaces;
        return 0;
}

#define COPY(dst, ndst, src, nsrc)                                                                 \
        do {                                                                                       \
                if ((nsrc) > FAKE_BUDGET_MAX)                                                      \
                        return -ENOBUFS;                                                           \
                for (size_t _k = 0; _k < (nsrc); _k++)                                             \
                        (dst)[_k] = (src)[_k];                                                     \
                (ndst) = (nsrc);                                                                   \
        } while (0)

int nft_budget_txn_replace(NftTxn *t, uint32_t mark_mask, const NftBudget *b, size_t n)
{
        if (n > FAKE_BUDGET_MAX)
                return -ENOBUFS;
        t->staged = (FakeBudgetTable){.exists = true, .n = n};
        t->replaces = true;
        for (size_t i = 0; i < n; i++) {
                FakeQuota *q = &t->staged.quotas[i];
                if (b[i].consumed > b[i].limit)
                        return -EINVAL; /* (the kernel's quota would refuse it) */
                snprintf(q->name, sizeof(q->name), "%s", b[i].quota);
                q->limit = b[i].limit;
                q->consumed = b[i].consumed;
                q->any_link = b[i].any_link;
                COPY(q->cgroups, q->n_cgroups, b[i].cgroups, b[i].n_cgroups);
                COPY(q->levels, q->n_cgroups, b[i].levels, b[i].n_cgroups);
                COPY(q->ifindex, q->n_ifindex, b[i].ifindex, b[i].n_ifindex);
                COPY(q->marks, q->n_marks, b[i].marks, b[i].n_marks);
        }
        return 0;
}

int nft_budget_read(NftStats *s, NftQuotaUse **ret, size_t *ret_n)
{
        NftQuotaUse *q;

        if (!fake_budget.table.exists)
                return -ENOENT;
        q = calloc(fake_budget.table.n + 1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        for (size_t i = 0; i < fake_budget.table.n; i++) {
                snprintf(q[i].name, sizeof(q[i].name), "%s", fake_budget.table.quotas[i].name);
                q[i].consumed = fake_budget.table.quotas[i].consumed;
        }
        *ret = q;
        *ret_n = fake_budget.table.n;
        return 0;
}

FakeQuota *fake_budget_quota(size_t i)
{
        char prefix[16];

        snprintf(prefix, sizeof(prefix), "q%zu_", i);
        for (size_t k = 0; k < fake_budget.table.n; k++)
                if (strncmp(fake_budget.table.quotas[k].name, prefix, strlen(prefix)) == 0)
                        return &fake_budget.table.quotas[k];
        return NULL;
}

const char *fake_quota_matches(const FakeQuota *q)
{
        static char buf[512];
        size_t pos = 0;

#define PUT(...) pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, __VA_ARGS__)
        buf[0] = 0;
        for (size_t i = 0; i < q->n_cgroups; i++)
                PUT("%sc%" PRIu64 "/%u", i ? "," : "", q->cgroups[i], q->levels[i]);
        if (q->any_link)
                PUT(" any");
        for (size_t i = 0; i < q->n_ifindex; i++)
                PUT("%si%" PRIu32, i ? "," : " ", q->ifindex[i]);
        for (size_t i = 0; i < q->n_marks; i++)
                PUT("%sm%" PRIx32, i ? "," : " ", q->marks[i]);
#undef PUT
        return buf;
}

/* ---- the counting table: nothing is counted here ---- */

int nft_stats_new(uint32_t mark_mask, NftStats **ret)
{
        NftStats *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->mark_mask = mark_mask;
        *ret = s;
        return 0;
}

NftStats *nft_stats_free(NftStats *s)
{
        free(s);
        return NULL;
}

int nft_stats_txn_install(NftStats *s, NftTxn *t)
{
        return 0;
}

int nft_stats_txn_remove(NftTxn *t)
{
        return 0;
}

int nft_stats_member(NftStats *s, uint64_t cgroup, unsigned level, bool add)
{
        return 0;
}

int nft_stats_txn_sync(NftStats *s, NftTxn *t)
{
        return 0;
}

bool nft_stats_txn_done(NftStats *s, bool ok)
{
        return false;
}

int nft_stats_forget(NftStats *s, NftEngine *e, const NftStatsEntry *keys, size_t n)
{
        return 0;
}

void nft_stats_set_installed(NftStats *s, bool installed)
{
}

int nft_stats_read(NftStats *s, uint64_t *ret_table_handle, NftStatsEntry **ret, size_t *ret_n)
{
        *ret_table_handle = 1;
        *ret = NULL;
        *ret_n = 0;
        return 0;
}
