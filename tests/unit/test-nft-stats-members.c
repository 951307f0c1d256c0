/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The usage counters' members ride on the reconciler's pass (roamd-nft-stats.c): a change is
 * only recorded, the pass's transaction carries what the kernel lacks, and only the pass's
 * accepted commit counts it; a refused one leaves it to carry again. Built into real
 * transactions (libnftnl), never sent: no kernel, no root. */
#include <stdlib.h>

#include "roamd-nft-stats.h"
#include "roamd-nft.h"
#include "test.h"

typedef struct Fixture {
        NftEngine *e;
        NftStats *s;
} Fixture;

static void fixture(Fixture *f)
{
        NftConfig cfg = {.mark_mask = 0x7f000000};

        ASSERT_OK(nft_engine_new(&cfg, &f->e));
        ASSERT_OK(nft_stats_new(cfg.mark_mask, &f->s));
}

static void fixture_done(Fixture *f)
{
        nft_stats_free(f->s);
        nft_engine_free(f->e);
}

/* The messages a pass's transaction would carry for the members now. */
static size_t sync_size(Fixture *f)
{
        NftTxn *t = NULL;
        size_t n;

        ASSERT_OK(nft_txn_new(f->e, &t));
        ASSERT_OK(nft_stats_txn_sync(f->s, t));
        n = nft_txn_size(t);
        nft_txn_free(t);
        return n;
}

TEST(member_rides_on_the_pass_and_counts_once_accepted)
{
        Fixture f = {};

        fixture(&f);
        /* before the install: recorded only, the install carries it */
        ASSERT_EQ(nft_stats_member(f.s, 100, 2, true), 0);
        nft_stats_set_installed(f.s, true);
        ASSERT_EQ(sync_size(&f), 0);

        /* a new cgroup at a new level: its element and both chains */
        ASSERT_EQ(nft_stats_member(f.s, 200, 3, true), 1);
        ASSERT_TRUE(sync_size(&f) > 1);
        ASSERT_TRUE(!nft_stats_txn_done(f.s, false)); /* refused: still to do */
        ASSERT_TRUE(sync_size(&f) > 1);
        ASSERT_TRUE(!nft_stats_txn_done(f.s, true));
        ASSERT_EQ(sync_size(&f), 0);
        nft_stats_txn_done(f.s, true);

        /* a second member at a level in use: its element only */
        ASSERT_EQ(nft_stats_member(f.s, 250, 3, true), 1);
        ASSERT_EQ(sync_size(&f), 1);
        nft_stats_txn_done(f.s, true);
        fixture_done(&f);
}

TEST(ended_member_leaves_only_once_its_removal_was_accepted)
{
        Fixture f = {};

        fixture(&f);
        ASSERT_EQ(nft_stats_member(f.s, 100, 2, true), 0);
        ASSERT_EQ(nft_stats_member(f.s, 200, 3, true), 0);
        nft_stats_set_installed(f.s, true);

        ASSERT_EQ(nft_stats_member(f.s, 200, 3, false), 1);
        ASSERT_TRUE(sync_size(&f) > 1); /* its element, and the chains without level 3 */
        nft_stats_txn_done(f.s, false);
        ASSERT_TRUE(sync_size(&f) > 1); /* refused: carried again */
        ASSERT_TRUE(!nft_stats_txn_done(f.s, true));
        ASSERT_EQ(sync_size(&f), 0);
        nft_stats_txn_done(f.s, true);
        ASSERT_EQ(nft_stats_member(f.s, 200, 3, false), 0); /* gone already */
        fixture_done(&f);
}

TEST(member_ended_while_its_add_is_in_flight_needs_one_more_pass)
{
        Fixture f = {};

        fixture(&f);
        nft_stats_set_installed(f.s, true);
        ASSERT_EQ(nft_stats_member(f.s, 300, 2, true), 1);
        ASSERT_TRUE(sync_size(&f) > 0); /* in flight now */
        ASSERT_EQ(nft_stats_member(f.s, 300, 2, false), 1);
        ASSERT_TRUE(nft_stats_txn_done(f.s, true)); /* added, and to remove: one more */
        ASSERT_TRUE(sync_size(&f) > 0);
        ASSERT_TRUE(!nft_stats_txn_done(f.s, true));
        ASSERT_EQ(sync_size(&f), 0);
        nft_stats_txn_done(f.s, true);

        /* added and ended before any pass carried it: nothing ever goes to the kernel */
        ASSERT_EQ(nft_stats_member(f.s, 400, 2, true), 1);
        ASSERT_EQ(nft_stats_member(f.s, 400, 2, false), 0);
        ASSERT_EQ(sync_size(&f), 0);
        nft_stats_txn_done(f.s, true);
        fixture_done(&f);
}

TEST(install_leaves_ended_members_out)
{
        Fixture f = {};
        NftTxn *t = NULL;

        fixture(&f);
        nft_stats_set_installed(f.s, true);
        ASSERT_EQ(nft_stats_member(f.s, 500, 2, true), 1);
        ASSERT_TRUE(sync_size(&f) > 0);
        nft_stats_txn_done(f.s, true);
        ASSERT_EQ(nft_stats_member(f.s, 500, 2, false), 1);
        /* the rebuild instead of the pass: the member is not in it, and is dropped */
        ASSERT_OK(nft_txn_new(f.e, &t));
        ASSERT_OK(nft_stats_txn_install(f.s, t));
        nft_txn_free(t);
        nft_stats_set_installed(f.s, true);
        ASSERT_EQ(sync_size(&f), 0);
        fixture_done(&f);
}
