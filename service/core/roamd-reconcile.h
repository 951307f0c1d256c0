/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* roamd's reconciler for kernel state (routes, ip rules, table inet roam). It owns the pass:
 * when one runs (scheduled, never inside a sync or another module's callback), the one
 * nftables transaction per pass, and what follows a failure (the last good state stays in
 * force, the manager's Degraded names the first failure, a retry after 250 ms doubling to
 * 4 s until a pass succeeds). Features register parts that add to the pass (the reconciler
 * names none of them): the transaction's owner's first, whose install replaces the table,
 * then the others in the order they registered; a caller that needs the outcome (SetLocation, an
 * app's policy, a VPN's probes) waits for the pass that carries its change.
 *
 * A pass's commit is asynchronous: the loop runs on while the kernel's answer is awaited,
 * the parts' done and the waits follow the answer. One pass at a time: passes asked for
 * meanwhile make one more pass after it. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

typedef struct Reconcile Reconcile;
typedef struct ReconcileWait ReconcileWait;
typedef struct NftTxn NftTxn;

typedef struct ReconcilePart {
        /* Before the transaction: counters read, routes added, work needing a transaction
         * of its own; failures through reconcile_failed(). */
        void (*prepare)(void *userdata, Reconcile *rc);
        /* All of the part's objects, into a transaction that replaced the table (start, and
         * the rebuild after a commit the kernel did not answer). */
        int (*install)(void *userdata, NftTxn *t);
        /* What changed since the last commit, into the pass's transaction. */
        int (*sync)(void *userdata, NftTxn *t);
        /* After the commit (or its failure, result < 0: the last good state stays); full:
         * the transaction was an install. Failures after the commit through
         * reconcile_failed() (they do not change what waiters are told). */
        void (*done)(void *userdata, Reconcile *rc, int result, bool full);
} ReconcilePart;

/* How a pass's commit ends: what commit() would have returned. */
typedef void (*reconcile_commit_done_t)(NftTxn *t, int result, void *data);

/* Where the transaction comes from (the nftables engine; a fake in the unit test). commit
 * waits for the kernel (reconcile_install(): start, and before the loop runs); a pass uses
 * commit_async when there is one: 1 when sent (done follows from the loop, unless t is freed
 * first), else what commit would have returned, done not called. */
typedef struct ReconcileTxnOps {
        int (*begin)(void *userdata, NftTxn **ret);
        int (*commit)(NftTxn *t);
        void (*free)(NftTxn *t);
        int (*commit_async)(void *userdata, NftTxn *t, reconcile_commit_done_t done, void *data);
        /* The answer to the commit in flight, told now (done called) if it is there to read. */
        void (*settle)(void *userdata, NftTxn *t);
} ReconcileTxnOps;

typedef void (*reconcile_changed_t)(void *userdata);
/* result: 0 when the pass put everything before its commit in force, else its first failure
 * (-ENOMEDIUM: nothing is enforced here; -ECANCELED: roamd stops). */
typedef void (*reconcile_done_t)(Reconcile *rc, int result, void *userdata);
typedef void (*reconcile_destroy_t)(void *userdata);
/* Whether a pass should wait a little (a new link's first probe answer is due). */
typedef bool (*reconcile_hold_t)(void *userdata);

/* changed: the Degraded reason changed. */
int reconcile_new(sd_event *event, reconcile_changed_t changed, void *userdata, Reconcile **ret);
/* Pending waits are dropped without their callbacks (floating ones' destroy runs). */
Reconcile *reconcile_free(Reconcile *rc);
static inline void reconcile_freep(Reconcile **rc)
{
        reconcile_free(*rc);
}

/* A part of every pass, called after the transaction owner's and those registered before it.
 * Returns its id (> 0) for reconcile_remove_part(), or -ENOMEM. */
int reconcile_add_part(Reconcile *rc, const ReconcilePart *part, void *userdata);
/* NULL-safe; id 0 or negative (a failed add) is ignored. */
void reconcile_remove_part(Reconcile *rc, int id);
/* Where transactions come from and its owner's part (may be NULL), called first in every
 * pass: its install starts from an empty table. NULL ops: nothing is enforced (passes tell
 * waiters -ENOMEDIUM). */
void reconcile_set_txn(Reconcile *rc, const ReconcileTxnOps *ops, const ReconcilePart *part,
                       void *userdata);
bool reconcile_enforcing(Reconcile *rc);
/* The pass held while hold() says so, at most 20 ms. */
void reconcile_set_hold(Reconcile *rc, reconcile_hold_t hold, void *userdata);

/* One pass on a later turn of the loop (a burst of changes makes one pass): after the
 * probes' sockets and DNS, before the bus and netlink. */
void reconcile_schedule(Reconcile *rc);
/* Runs the scheduled pass now (a sync's end: what it carries is said in the sync's one
 * PropertiesChanged per link), unless none is scheduled or it is held. Returns whether it
 * ran. */
bool reconcile_run_scheduled(Reconcile *rc);
/* Schedules a pass (not held) and calls done with its outcome. A wait made while a pass
 * runs is answered by the next one, which sees the change that made it. ret NULL: the wait
 * belongs to the reconciler (destroy frees userdata after done or on free); else the caller
 * owns it and frees it with reconcile_wait_free() (which cancels it). */
int reconcile_wait(Reconcile *rc, reconcile_done_t done, void *userdata,
                   reconcile_destroy_t destroy, ReconcileWait **ret);
/* Like reconcile_wait(), without scheduling a pass: answered by whichever pass runs next (the
 * retry after a failure, or one another change scheduled), so a waiter that must see a change
 * in force does not hurry a failing reconciler past its backoff. */
int reconcile_wait_next(Reconcile *rc, reconcile_done_t done, void *userdata,
                        reconcile_destroy_t destroy, ReconcileWait **ret);
ReconcileWait *reconcile_wait_free(ReconcileWait *w);

/* Every part's install in one transaction replacing the table, now (start; the rebuild);
 * -EBUSY while a pass's commit awaits its answer. */
int reconcile_install(Reconcile *rc);

/* Part of a pass failed: what (e.g. "nftables transaction") and the error. The first failure
 * names the Degraded reason; a retry is scheduled. */
void reconcile_failed(Reconcile *rc, const char *what, int error);
/* A failure outside a pass (a cgroup element, a policy change the kernel refused): Degraded
 * says it and a retry is scheduled. */
void reconcile_note_failed(Reconcile *rc, const char *what, int error);
/* A pass of work outside the reconciler's own (at start): without failures between them the
 * reason clears. */
void reconcile_begin(Reconcile *rc);
void reconcile_end(Reconcile *rc);
/* Whether a pass runs right now (its commit's answer awaited included). */
bool reconcile_running(Reconcile *rc);
/* Whether a pass's commit awaits the kernel's answer. */
bool reconcile_committing(Reconcile *rc);
/* Ends the pass whose commit is in flight now when the kernel's answer can be read (it
 * always can, unless lost or held by a test): the parts' done and the waits run before this
 * returns. For a transaction's owner about to change what its part's done reads (a cgroup
 * event, a policy change), so that change and the pass's outcome never interleave. */
void reconcile_settle(Reconcile *rc);
/* "" when the kernel holds what roamd wants. */
const char *reconcile_degraded(Reconcile *rc);
/* CLOCK_REALTIME µs since when the reason has been set (a changed reason keeps it), 0 while
 * none: Manager.DegradedSince. */
uint64_t reconcile_degraded_since(Reconcile *rc);
