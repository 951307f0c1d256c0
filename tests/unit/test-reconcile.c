/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reconciler's passes with fake parts and a fake transaction (no kernel, no root): a pass
 * is only ever scheduled, runs once for a burst, calls the parts with one transaction (the
 * transaction owner's first, then the others in the order they registered: the reconciler
 * names no feature), answers the waits made before it began with its outcome, and a wait made
 * during a pass (a probe started by what the pass changed) is answered by the next one. With
 * an asynchronous commit (fake_async_txn: the test gives the kernel's answer) the pass ends on
 * the answer, passes asked for meanwhile make one more, and a free mid-commit is clean. */
#include <stdlib.h>

#include <systemd/sd-event.h>

#include "roam-macro.h"
#include "roamd-reconcile.h"
#include "test.h"

typedef struct Fake {
        sd_event *event;
        Reconcile *rc;
        unsigned passes;   /* transactions begun */
        unsigned commits;  /* ... committed */
        int commit_result; /* what commit answers */
        char order[32];    /* parts' calls: a=apps s=stats f=firewall, P=prepare S=sync D=done */
        size_t n_order;
        int done_result;
        unsigned answers;
        int answer;
        bool wait_in_sync; /* the apps part makes a wait while the pass runs */
        ReconcileWait *inner;
        unsigned inner_answers;
        unsigned inner_pass; /* the pass that answered it */
        unsigned destroyed;
        int stats_id, firewall_id; /* reconcile_add_part() ids */
        int remove_in_prepare;     /* the stats part removes this part in its prepare */
        /* asynchronous commits: the one awaiting its answer, and whom to tell */
        NftTxn *pending;
        reconcile_commit_done_t pending_done;
        void *pending_data;
        unsigned freed_pending; /* freed while awaiting the answer */
        bool answer_ready;      /* settle finds the kernel's answer (accepted) */
} Fake;

struct NftTxn {
        Fake *f;
};
static struct NftTxn the_txn;

static void note(Fake *f, char part, char what)
{
        if (f->n_order + 2 < sizeof(f->order)) {
                f->order[f->n_order++] = part;
                f->order[f->n_order++] = what;
                f->order[f->n_order] = 0;
        }
}

static int txn_begin(void *userdata, NftTxn **ret)
{
        Fake *f = userdata;

        f->passes++;
        the_txn.f = f;
        *ret = &the_txn;
        return 0;
}

static int txn_commit(NftTxn *t)
{
        if (t->f->commit_result >= 0)
                t->f->commits++;
        return t->f->commit_result;
}

static void txn_free(NftTxn *t)
{
}

static const ReconcileTxnOps fake_txn = {txn_begin, txn_commit, txn_free, NULL, NULL};

/* Each pass's transaction on the heap (ASan sees any use after its free). */
static int atxn_begin(void *userdata, NftTxn **ret)
{
        Fake *f = userdata;
        NftTxn *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        f->passes++;
        t->f = f;
        *ret = t;
        return 0;
}

static int atxn_commit_async(void *userdata, NftTxn *t, reconcile_commit_done_t done, void *data)
{
        Fake *f = userdata;

        ASSERT_TRUE(f->pending == NULL); /* one in flight at a time */
        f->pending = t;
        f->pending_done = done;
        f->pending_data = data;
        return 1;
}

static void atxn_free(NftTxn *t)
{
        if (t->f->pending == t) {
                t->f->pending = NULL;
                t->f->freed_pending++;
        }
        free(t);
}

static void fake_answer(Fake *f, int result);

static void atxn_settle(void *userdata, NftTxn *t)
{
        Fake *f = userdata;

        if (f->answer_ready)
                fake_answer(f, 0);
}

static const ReconcileTxnOps fake_async_txn = {atxn_begin, txn_commit, atxn_free, atxn_commit_async,
                                               atxn_settle};

/* The kernel's answer to the commit in flight. */
static void fake_answer(Fake *f, int result)
{
        NftTxn *t = f->pending;

        ASSERT_TRUE(t != NULL);
        f->pending = NULL;
        if (result >= 0)
                f->commits++;
        f->pending_done(t, result, f->pending_data);
}

static void on_inner(Reconcile *rc, int result, void *userdata)
{
        Fake *f = userdata;

        f->inner_answers++;
        f->inner_pass = f->passes;
        f->inner = reconcile_wait_free(f->inner);
}

#define PART(letter, who)                                                                          \
        static void who##_prepare(void *userdata, Reconcile *rc)                                   \
        {                                                                                          \
                Fake *f = userdata;                                                                \
                note(f, letter, 'P');                                                              \
                if (letter == 's' && f->remove_in_prepare > 0) {                                   \
                        reconcile_remove_part(f->rc, f->remove_in_prepare);                        \
                        f->remove_in_prepare = 0;                                                  \
                }                                                                                  \
        }                                                                                          \
        static int who##_sync(void *userdata, NftTxn *t)                                           \
        {                                                                                          \
                Fake *f = userdata;                                                                \
                note(f, letter, 'S');                                                              \
                if (letter == 'a' && f->wait_in_sync && !f->inner)                                 \
                        ASSERT_OK(reconcile_wait(f->rc, on_inner, f, NULL, &f->inner));            \
                return 0;                                                                          \
        }                                                                                          \
        static void who##_done(void *userdata, Reconcile *rc, int result, bool full)               \
        {                                                                                          \
                Fake *f = userdata;                                                                \
                note(f, letter, 'D');                                                              \
                f->done_result = result;                                                           \
        }                                                                                          \
        static const ReconcilePart who##_part = {who##_prepare, NULL, who##_sync, who##_done};

PART('a', apps)
PART('s', stats)
PART('f', firewall)

static void on_answer(Reconcile *rc, int result, void *userdata)
{
        Fake *f = userdata;

        f->answers++;
        f->answer = result;
}

static void on_destroy(void *userdata)
{
        Fake *f = userdata;

        f->destroyed++;
}

static void fake_setup(Fake *f)
{
        *f = (Fake){};
        ASSERT_OK(sd_event_new(&f->event));
        ASSERT_OK(reconcile_new(f->event, NULL, NULL, &f->rc));
        /* the pass calls them apps (the transaction's owner, though set last), then stats and
         * firewall in the order they registered */
        f->stats_id = reconcile_add_part(f->rc, &stats_part, f);
        ASSERT_TRUE(f->stats_id > 0);
        f->firewall_id = reconcile_add_part(f->rc, &firewall_part, f);
        ASSERT_TRUE(f->firewall_id > f->stats_id);
        reconcile_set_txn(f->rc, &fake_txn, &apps_part, f);
}

static void fake_done(Fake *f)
{
        reconcile_free(f->rc);
        sd_event_unref(f->event);
}

/* Runs the loop until nothing is pending now (timers in the future stay). */
static void loop_settle(Fake *f)
{
        for (int i = 0; i < 16; i++)
                if (sd_event_run(f->event, 0) <= 0)
                        return;
}

TEST(reconcile_pass_is_scheduled_never_run_in_the_call)
{
        Fake f;

        fake_setup(&f);
        reconcile_schedule(f.rc);
        reconcile_schedule(f.rc);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        ASSERT_EQ(f.passes, 0); /* nothing ran inside the callers */
        ASSERT_EQ(f.answers, 0);
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1); /* a burst: one pass */
        ASSERT_EQ(f.commits, 1);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, 0);
        ASSERT_STREQ(f.order, "aPsPfPaSsSfSaDsDfD");
        ASSERT_STREQ(reconcile_degraded(f.rc), "");
        fake_done(&f);
}

/* The order is the registration's: a part registered again goes last; a part removed during
 * a pass is called no more, in that pass or later, and the others keep their order. */
TEST(reconcile_parts_in_the_order_they_registered)
{
        Fake f;

        fake_setup(&f);
        reconcile_remove_part(f.rc, f.stats_id);
        f.stats_id = reconcile_add_part(f.rc, &stats_part, &f);
        ASSERT_TRUE(f.stats_id > f.firewall_id);
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_STREQ(f.order, "aPfPsPaSfSsSaDfDsD");
        /* removed by the stats part's prepare, which runs after the firewall's */
        f.n_order = 0;
        f.order[0] = 0;
        f.remove_in_prepare = f.firewall_id;
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_STREQ(f.order, "aPfPsPaSsSaDsD");
        f.n_order = 0;
        f.order[0] = 0;
        reconcile_remove_part(f.rc, 0);  /* never an id: ignored */
        reconcile_remove_part(f.rc, -5); /* a failed add's: ignored */
        reconcile_remove_part(NULL, f.stats_id);
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_STREQ(f.order, "aPsPaSsSaDsD");
        /* the owner's part goes with its transaction */
        f.n_order = 0;
        f.order[0] = 0;
        reconcile_set_txn(f.rc, &fake_txn, NULL, &f);
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_STREQ(f.order, "sPsSsD");
        fake_done(&f);
}

TEST(reconcile_wait_made_during_a_pass_is_answered_by_the_next)
{
        Fake f;

        fake_setup(&f);
        f.wait_in_sync = true;
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        ASSERT_EQ(sd_event_run(f.event, 0), 1); /* the first pass */
        ASSERT_EQ(f.passes, 1);
        ASSERT_EQ(f.answers, 1);
        ASSERT_TRUE(f.inner != NULL); /* made during that pass: not answered by it */
        ASSERT_EQ(f.inner_answers, 0);
        f.wait_in_sync = false;
        loop_settle(&f);
        ASSERT_EQ(f.passes, 2);
        ASSERT_EQ(f.inner_answers, 1);
        ASSERT_EQ(f.inner_pass, 2);
        ASSERT_TRUE(f.inner == NULL);
        fake_done(&f);
}

TEST(reconcile_failed_commit_is_the_waits_answer_and_degraded)
{
        Fake f;

        fake_setup(&f);
        f.commit_result = -EIO;
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, -EIO);
        ASSERT_EQ(f.done_result, -EIO); /* the parts keep their last good state */
        ASSERT_STREQ(reconcile_degraded(f.rc),
                     "nftables transaction: Input/output error; retrying");
        ASSERT_TRUE(reconcile_degraded_since(f.rc) > 0);
        /* the kernel accepts again: the next pass clears it */
        f.commit_result = 0;
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.answers, 2);
        ASSERT_EQ(f.answer, 0);
        ASSERT_STREQ(reconcile_degraded(f.rc), "");
        fake_done(&f);
}

/* A waiter that must see its change in force after a failed pass waits for the reconciler's
 * own retry: reconcile_wait_next() never schedules a pass (no hurrying past the backoff). */
TEST(reconcile_wait_next_schedules_nothing_and_is_answered_by_the_retry)
{
        Fake f;

        fake_setup(&f);
        ASSERT_OK(reconcile_wait_next(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.passes, 0); /* nothing scheduled a pass */
        ASSERT_EQ(f.answers, 0);
        f.commit_result = -EIO;
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, -EIO);
        ASSERT_OK(reconcile_wait_next(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1); /* the retry waits for its backoff */
        f.commit_result = 0;
        ASSERT_EQ(sd_event_run(f.event, UINT64_MAX), 1); /* the retry's timer */
        ASSERT_EQ(f.passes, 2);
        ASSERT_EQ(f.answers, 2);
        ASSERT_EQ(f.answer, 0);
        fake_done(&f);
}

TEST(reconcile_nothing_enforced_answers_enomedium)
{
        Fake f;

        fake_setup(&f);
        reconcile_set_txn(f.rc, NULL, NULL, NULL);
        ASSERT_TRUE(!reconcile_enforcing(f.rc));
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.passes, 0);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, -ENOMEDIUM);
        fake_done(&f);
}

TEST(reconcile_free_drops_pending_waits)
{
        Fake f;
        ReconcileWait *owned = NULL;

        fake_setup(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, on_destroy, NULL));
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, &owned));
        /* a cancelled wait is never answered */
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, &f.inner));
        f.inner = reconcile_wait_free(f.inner);
        fake_done(&f); /* roamd stops before the pass */
        ASSERT_EQ(f.answers, 0);
        ASSERT_EQ(f.destroyed, 1);
        ASSERT_TRUE(reconcile_wait_free(owned) == NULL); /* its owner frees it after */
}

static bool always(void *userdata)
{
        return true;
}

TEST(reconcile_hold_delays_a_scheduled_pass_but_not_a_wait)
{
        Fake f;

        fake_setup(&f);
        reconcile_set_hold(f.rc, always, NULL);
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_EQ(f.passes, 0); /* held (20 ms at most) */
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1); /* a caller waiting is not held */
        ASSERT_EQ(f.answers, 1);
        fake_done(&f);
}

static void fake_setup_async(Fake *f)
{
        fake_setup(f);
        reconcile_set_txn(f->rc, &fake_async_txn, &apps_part, f);
}

TEST(reconcile_async_pass_ends_on_the_answer)
{
        Fake f;

        fake_setup_async(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1);
        ASSERT_TRUE(f.pending != NULL);
        ASSERT_TRUE(reconcile_committing(f.rc));
        ASSERT_TRUE(reconcile_running(f.rc));
        ASSERT_STREQ(f.order, "aPsPfPaSsSfS"); /* no part is told before the answer */
        ASSERT_EQ(f.answers, 0);
        ASSERT_TRUE(!reconcile_run_scheduled(f.rc));
        fake_answer(&f, 0);
        ASSERT_STREQ(f.order, "aPsPfPaSsSfSaDsDfD");
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, 0);
        ASSERT_TRUE(!reconcile_committing(f.rc));
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1); /* nothing asked for another */
        fake_done(&f);
}

/* Passes asked for while one awaits its answer are not interleaved with it: they make one more
 * pass, after the answer, which answers the waits made meanwhile. */
TEST(reconcile_async_passes_asked_meanwhile_make_one_more)
{
        Fake f;

        fake_setup_async(&f);
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1);
        ASSERT_TRUE(f.pending != NULL);
        /* two requests (and a wait) while the first is in flight */
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        reconcile_schedule(f.rc);
        loop_settle(&f);
        ASSERT_EQ(f.passes, 1); /* queued, not begun */
        ASSERT_EQ(f.answers, 0);
        fake_answer(&f, 0);
        ASSERT_EQ(f.answers, 0); /* made after pass 1 began: pass 2's */
        loop_settle(&f);
        ASSERT_EQ(f.passes, 2); /* one more, for both */
        ASSERT_TRUE(f.pending != NULL);
        fake_answer(&f, 0);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, 0);
        loop_settle(&f);
        ASSERT_EQ(f.passes, 2);
        ASSERT_EQ(f.commits, 2);
        fake_done(&f);
}

/* The kernel refuses the commit: the parts are told (their last good state stays), the waits
 * get the error, Degraded says it and a retry follows; a failure noted by someone else while
 * the commit was in flight is said, but is not the commit's outcome. */
TEST(reconcile_async_refused_commit_keeps_the_last_good_state_visible)
{
        Fake f;

        fake_setup_async(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        fake_answer(&f, -EPERM);
        ASSERT_EQ(f.done_result, -EPERM);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, -EPERM);
        ASSERT_STREQ(reconcile_degraded(f.rc),
                     "nftables transaction: Operation not permitted; retrying");
        /* the retry (after its backoff) commits; a cgroup's element fails meanwhile */
        ASSERT_OK(reconcile_wait_next(f.rc, on_answer, &f, NULL, NULL));
        ASSERT_EQ(sd_event_run(f.event, UINT64_MAX), 1);
        ASSERT_EQ(f.passes, 2);
        ASSERT_TRUE(f.pending != NULL);
        reconcile_note_failed(f.rc, "cgroup element", -EIO);
        fake_answer(&f, 0);
        ASSERT_EQ(f.done_result, 0);
        ASSERT_EQ(f.answers, 2);
        ASSERT_EQ(f.answer, 0);
        ASSERT_STREQ(reconcile_degraded(f.rc), "cgroup element: Input/output error; retrying");
        fake_done(&f);
}

/* roamd stops while the kernel's answer is awaited: the transaction is freed (its wait
 * cancelled), no part or waiter is called, floating waits are destroyed. Run under ASan in
 * build-asan. */
TEST(reconcile_async_free_mid_commit_is_clean)
{
        Fake f;
        ReconcileWait *owned = NULL;

        fake_setup_async(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, on_destroy, NULL));
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, &owned));
        loop_settle(&f);
        ASSERT_TRUE(f.pending != NULL);
        ASSERT_EQ(reconcile_install(f.rc), -EBUSY); /* not interleaved either */
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, on_destroy, NULL)); /* the next pass's */
        reconcile_schedule(f.rc);
        fake_done(&f);
        ASSERT_EQ(f.freed_pending, 1);
        ASSERT_TRUE(f.pending == NULL);
        ASSERT_EQ(f.answers, 0);
        ASSERT_EQ(f.destroyed, 2);
        ASSERT_STREQ(f.order, "aPsPfPaSsSfS");
        ASSERT_TRUE(reconcile_wait_free(owned) == NULL);
}

/* The transaction's owner goes (apps_free() at stop) while its commit is in flight: the
 * transaction is freed by the owner's ops before they go, no part is called, and the pass's
 * waits go to the next pass (here: answered -ENOMEDIUM, nothing is enforced any more). */
TEST(reconcile_async_owner_gone_mid_commit)
{
        Fake f;

        fake_setup_async(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, on_destroy, NULL));
        loop_settle(&f);
        ASSERT_TRUE(f.pending != NULL);
        reconcile_set_txn(f.rc, NULL, NULL, NULL);
        ASSERT_EQ(f.freed_pending, 1);
        ASSERT_TRUE(!reconcile_running(f.rc) && !reconcile_committing(f.rc));
        ASSERT_STREQ(f.order, "aPsPfPaSsSfS");
        loop_settle(&f);
        ASSERT_EQ(f.answers, 1);
        ASSERT_EQ(f.answer, -ENOMEDIUM);
        ASSERT_EQ(f.destroyed, 1);
        fake_done(&f);
}

/* An owner about to change what its part's done reads settles the pass first: with the
 * kernel's answer there to read, the pass ends inside reconcile_settle(); without one
 * (lost, or a test's hold) nothing happens. */
TEST(reconcile_settle_ends_the_pass_when_the_answer_is_there)
{
        Fake f;

        fake_setup_async(&f);
        ASSERT_OK(reconcile_wait(f.rc, on_answer, &f, NULL, NULL));
        loop_settle(&f);
        ASSERT_TRUE(f.pending != NULL);
        reconcile_settle(f.rc); /* no answer yet */
        ASSERT_TRUE(reconcile_committing(f.rc));
        ASSERT_EQ(f.answers, 0);
        f.answer_ready = true;
        reconcile_settle(f.rc);
        ASSERT_TRUE(!reconcile_committing(f.rc));
        ASSERT_EQ(f.answers, 1);
        ASSERT_STREQ(f.order, "aPsPfPaSsSfSaDsDfD");
        reconcile_settle(f.rc); /* nothing in flight: nothing */
        reconcile_settle(NULL);
        ASSERT_EQ(f.answers, 1);
        fake_done(&f);
}
