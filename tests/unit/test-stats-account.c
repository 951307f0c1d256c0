/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Usage accounting against the fake core (roamd-stats-account.c, as roamd-stats.c runs it on
 * each dump of the kernel's counters): counter deltas -> per app, user and link, home and
 * roaming, and budgets crossing their warning and their limit. */
#include "fake-core.h"
#include "roam-macro.h"
#include "roamd-stats-account.h"
#include "test.h"

#define MAIL  1001u /* cgroup ids */
#define SHELL 1002u
#define USER  1003u
#define ETH   2u /* ifindex */
#define WWAN  3u
#define MB    (1000 * 1000)

static FakeCore core;

static void setup(void)
{
        core = (FakeCore){.now_usec = 1767225600ull * USEC_PER_SEC}; /* 2026-01-01 00:00 UTC */
        fake_link_add(&core, ETH, "eth0", BEARER_ETHERNET);
        fake_link_add(&core, WWAN, "wwan0", BEARER_CELLULAR);
        fake_cgroup_add(&core, MAIL, 2, "user:1000/app:org.example.Mail", "org.example.Mail");
        fake_cgroup_add(&core, SHELL, 2, "user:1000/app:org.example.Shell", "org.example.Shell");
        fake_cgroup_add(&core, USER, 1, "user:1000", NULL);
        core.slots[1] = WWAN; /* mark 0x100: routed through the cellular slot */
}

static int account(StatsHistory *h, const char *epoch, const NftStatsEntry *e, size_t n, bool defer,
                   StatsPending **p, size_t *n_p)
{
        return stats_account(h, epoch, e, n, fake_hour(&core), defer, &fake_stats_ops, &core, p,
                             n_p);
}

static uint64_t sum_bytes(const StatsHistory *h, const char *owner, const char *link, int roaming)
{
        StatsCount c = stats_history_sum(h, owner, link, roaming, 0);
        return c.bytes_in + c.bytes_out;
}

static const NftStatsEntry *entries(size_t *n, uint64_t scale)
{
        static NftStatsEntry e[6];
        /* kept in the baseline's order on purpose is not needed: the dump is any order */
        e[0] = (NftStatsEntry){MAIL, ETH, 0, NFT_STATS_OUT, 10 * scale, 10};
        e[1] = (NftStatsEntry){MAIL, ETH, 0, NFT_STATS_IN, 100 * scale, 20};
        e[2] = (NftStatsEntry){SHELL, ETH, 0x100, NFT_STATS_OUT, 5 * scale, 5}; /* via wwan0 */
        e[3] = (NftStatsEntry){USER, WWAN, 0, NFT_STATS_IN, 7 * scale, 7};
        e[4] = (NftStatsEntry){0, ETH, 0, NFT_STATS_IN, 3 * scale, 3};    /* no socket */
        e[5] = (NftStatsEntry){4242, ETH, 0, NFT_STATS_IN, 2 * scale, 2}; /* nobody we know */
        *n = ELEMENTSOF(e);
        return e;
}

TEST(stats_deltas_per_app_user_link)
{
        _cleanup_(stats_history_done) StatsHistory h = {};
        StatsPending *p = NULL;
        size_t n, n_p = 0;
        const NftStatsEntry *e;

        setup();
        /* the first dump of an epoch: everything in it is new */
        e = entries(&n, 1);
        ASSERT_OK(account(&h, "boot:1", e, n, false, &p, &n_p));
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Mail", "eth0", 0), 110);
        ASSERT_EQ(stats_history_sum(&h, "user:1000/app:org.example.Mail", "eth0", 0, 0).bytes_out,
                  10);
        /* a marked packet counts on the link its slot took, not the one it was counted on */
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Shell", "wwan0", 0), 5);
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Shell", "eth0", -1), 0);
        ASSERT_EQ(sum_bytes(&h, "user:1000", "wwan0", 0), 7);
        ASSERT_EQ(sum_bytes(&h, "other", "eth0", 0), 3);
        ASSERT_EQ(sum_bytes(&h, "gone", "eth0", 0), 2);
        ASSERT_EQ(h.n_base, n);

        /* the next dump: only the differences count */
        e = entries(&n, 3);
        ASSERT_OK(account(&h, "boot:1", e, n, false, &p, &n_p));
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Mail", "eth0", 0), 330);
        ASSERT_EQ(sum_bytes(&h, "user:1000", NULL, -1), 21);
        /* the same numbers again: nothing new */
        ASSERT_OK(account(&h, "boot:1", e, n, false, &p, &n_p));
        ASSERT_EQ(sum_bytes(&h, NULL, NULL, -1), 3 * (10 + 100 + 5 + 7 + 3 + 2));

        /* a counter below its baseline was made anew: all of it is new */
        NftStatsEntry again = {MAIL, ETH, 0, NFT_STATS_IN, 50, 1};
        ASSERT_OK(account(&h, "boot:1", &again, 1, false, &p, &n_p));
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Mail", "eth0", 0), 330 + 50);
        /* another epoch (a new table, a reboot): every counter is new */
        ASSERT_OK(account(&h, "boot:2", &again, 1, false, &p, &n_p));
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Mail", "eth0", 0), 330 + 100);
        ASSERT_EQ(n_p, 0);
        ASSERT_TRUE(core.questions > 0);
}

TEST(stats_home_and_roaming_split)
{
        _cleanup_(stats_history_done) StatsHistory h = {};
        StatsPending *p = NULL;
        size_t n_p = 0;
        NftStatsEntry e = {USER, WWAN, 0, NFT_STATS_IN, 1000, 10};

        setup();
        ASSERT_OK(account(&h, "boot:1", &e, 1, false, &p, &n_p));
        /* the modem registers abroad: from now on its bytes are roaming bytes */
        fake_link(&core, WWAN)->roaming = true;
        e.bytes = 1600;
        ASSERT_OK(account(&h, "boot:1", &e, 1, false, &p, &n_p));
        fake_advance(&core, 3600 * USEC_PER_SEC);
        e.bytes = 1700;
        ASSERT_OK(account(&h, "boot:1", &e, 1, false, &p, &n_p));
        /* back home */
        fake_link(&core, WWAN)->roaming = false;
        e.bytes = 2000;
        ASSERT_OK(account(&h, "boot:1", &e, 1, false, &p, &n_p));

        ASSERT_EQ(sum_bytes(&h, "user:1000", "wwan0", 0), 1000 + 300);
        ASSERT_EQ(sum_bytes(&h, "user:1000", "wwan0", 1), 600 + 100);
        const StatsSeries *s = stats_history_find(&h, "user:1000", "wwan0", true);
        ASSERT_TRUE(s);
        ASSERT_EQ(s->n, 2); /* two hours */
        ASSERT_EQ(s->buckets[1].hour, fake_hour(&core));
        ASSERT_EQ(s->buckets[1].c.bytes_in, 100);
}

TEST(stats_link_gone_and_owner_pending)
{
        _cleanup_(stats_history_done) StatsHistory h = {};
        StatsPending *p = NULL;
        size_t n_p = 0;
        NftStatsEntry e[2] = {{MAIL, WWAN, 0, NFT_STATS_OUT, 100, 1},
                              {7777, ETH, 0, NFT_STATS_OUT, 40, 1}};

        setup();
        /* at start, before the cgroup tree is scanned: an unknown cgroup's count waits */
        ASSERT_OK(account(&h, "boot:1", e, 2, true, &p, &n_p));
        ASSERT_EQ(n_p, 1);
        ASSERT_EQ(p[0].cgroup, 7777);
        ASSERT_STREQ(p[0].link, "eth0");
        ASSERT_EQ(p[0].c.bytes_out, 40);
        ASSERT_EQ(sum_bytes(&h, NULL, NULL, -1), 100);
        /* the modem goes away, its counter is read a last time: still under its name */
        fake_link(&core, WWAN)->gone = true;
        e[0].bytes = 130;
        ASSERT_OK(account(&h, "boot:1", e, 1, false, &p, &n_p));
        ASSERT_EQ(sum_bytes(&h, "user:1000/app:org.example.Mail", "wwan0", 0), 130);
        ASSERT_EQ(sum_bytes(&h, NULL, "if3", -1), 0);
        for (size_t i = 0; i < n_p; i++)
                free(p[i].link);
        free(p);
}

TEST(stats_budget_crossing)
{
        StatsBudgetInfo b = {.spec = {.app_id = (char *)"org.example.Mail",
                                      .links = STATS_BUDGET_ROAMING,
                                      .limit = 100 * MB,
                                      .period = STATS_BUDGET_MONTH}};
        NftQuotaUse q[2] = {{.name = "other"}, {.name = "b_mail_1"}};
        const struct {
                uint64_t consumed;
                StatsBudgetState state;
        } steps[] = {
            {0, STATS_BUDGET_OK},
            {79 * MB, STATS_BUDGET_OK},
            {80 * MB, STATS_BUDGET_WARNING},
            {99 * MB, STATS_BUDGET_WARNING},
            {100 * MB, STATS_BUDGET_OVER},
            {100 * MB, STATS_BUDGET_OVER},
        };
        unsigned changes = 0;

        snprintf(b.quota, sizeof(b.quota), "b_mail_1");
        q[0].consumed = 999 * MB; /* another budget's quota never counts */
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                q[1].consumed = steps[i].consumed;
                StatsBudgetState st = stats_budget_apply_quotas(&b, q, 2, 80);
                ASSERT_EQ(st, steps[i].state);
                ASSERT_EQ(b.used, steps[i].consumed);
                if (st != b.state)
                        changes++;
                b.state = st;
        }
        ASSERT_EQ(changes, 2); /* ok -> warning -> over, each told once */

        /* the period ends: a new quota; until its first dump the use stays as read */
        uint64_t idx, start, end, idx2;
        stats_budget_period_at(&b.spec, core.now_usec, &idx, &start, &end);
        stats_budget_period_at(&b.spec, end, &idx2, &start, &end);
        ASSERT_TRUE(idx2 != idx);
        snprintf(b.quota, sizeof(b.quota), "b_mail_2");
        ASSERT_EQ(stats_budget_apply_quotas(&b, q, 2, 80), STATS_BUDGET_OVER);
        q[1] = (NftQuotaUse){.name = "b_mail_2", .consumed = 0};
        ASSERT_EQ(stats_budget_apply_quotas(&b, q, 2, 80), STATS_BUDGET_OK);
        ASSERT_EQ(b.used, 0);
}
