/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <assert.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-reconcile.h"

#define RETRY_FIRST_USEC (250 * USEC_PER_MSEC)
#define RETRY_MAX_USEC   (4 * USEC_PER_SEC)
#define HOLD_USEC        (20 * USEC_PER_MSEC)

struct ReconcileWait {
        Reconcile *rc;
        ReconcileWait **head; /* the list it is on, NULL once answered or cancelled */
        ReconcileWait *prev, *next;
        reconcile_done_t done;
        reconcile_destroy_t destroy;
        void *userdata;
        bool floating; /* the reconciler owns it */
};

struct Reconcile {
        sd_event *event;
        sd_event_source *defer; /* the scheduled pass */
        sd_event_source *hold;  /* ... held for a new link's first answer */
        sd_event_source *retry;
        reconcile_changed_t changed;
        void *userdata;
        /* [0] the transaction owner's part (id 0), then the others by registration; a part
         * removed during a pass is NULLed and dropped after it */
        struct ReconcilePartEntry {
                const ReconcilePart *ops;
                void *userdata;
                int id;
        } * parts;
        size_t n_parts, n_parts_alloc;
        int last_part_id;
        unsigned walking; /* a pass or an install calls the parts */
        const ReconcileTxnOps *txn;
        void *txn_userdata;
        reconcile_hold_t held;
        void *held_userdata;
        ReconcileWait *waits;     /* answered by the next pass */
        ReconcileWait *answering; /* ... by the pass running */
        NftTxn *inflight;         /* its transaction, while the kernel's answer is awaited */
        bool queued;              /* a pass was asked for meanwhile: one more after it */
        bool running;             /* a pass runs (its commit in flight included) */
        bool committed;           /* ... and is past its commit */
        int pass_error;           /* its first failure up to the commit */
        unsigned attempts;        /* failed passes in a row */
        bool failed;              /* in the current pass */
        char *reason;             /* NULL: not degraded */
        char *pass_reason;        /* the current pass's first failure */
        unsigned passes;          /* passes run (the debug log counts them for tests and bench) */
        uint64_t since;           /* CLOCK_REALTIME µs the reason appeared, 0 while none */
};

static void wait_unlink(ReconcileWait *w)
{
        if (!w->head)
                return;
        if (w->prev)
                w->prev->next = w->next;
        else
                *w->head = w->next;
        if (w->next)
                w->next->prev = w->prev;
        w->prev = w->next = NULL;
        w->head = NULL;
}

static void wait_push(ReconcileWait **head, ReconcileWait *w)
{
        w->prev = NULL;
        w->next = *head;
        if (*head)
                (*head)->prev = w;
        *head = w;
        w->head = head;
}

static void wait_destroy(ReconcileWait *w)
{
        if (w->destroy)
                w->destroy(w->userdata);
        free(w);
}

ReconcileWait *reconcile_wait_free(ReconcileWait *w)
{
        if (!w)
                return NULL;
        wait_unlink(w);
        wait_destroy(w);
        return NULL;
}

/* Answers every wait on *head. A callback may free other waits, or make new ones (those go
 * on rc->waits, for the next pass). */
static void waits_answer(Reconcile *rc, ReconcileWait **head, int result)
{
        while (*head) {
                ReconcileWait *w = *head;
                bool floating = w->floating;

                wait_unlink(w);
                w->rc = NULL;
                w->done(rc, result, w->userdata);
                if (floating)
                        wait_destroy(w); /* an owned one is its owner's to free */
        }
}

static int pass_run(Reconcile *rc);
static void parts_compact(Reconcile *rc);

/* Moves every wait of *from to *to (the list each is on is its head). */
static void waits_move(ReconcileWait **to, ReconcileWait **from)
{
        while (*from) {
                ReconcileWait *w = *from;
                wait_unlink(w);
                wait_push(to, w);
        }
}

static int on_defer(sd_event_source *s, void *userdata)
{
        (void)pass_run(userdata);
        return 0;
}

static int on_hold(sd_event_source *s, uint64_t usec, void *userdata)
{
        (void)pass_run(userdata);
        return 0;
}

static int parts_reserve(Reconcile *rc)
{
        struct ReconcilePartEntry *p;
        size_t n;

        if (rc->n_parts < rc->n_parts_alloc)
                return 0;
        n = rc->n_parts_alloc ? rc->n_parts_alloc * 2 : 8;
        p = reallocarray(rc->parts, n, sizeof(*p));
        if (!p)
                return -ENOMEM;
        rc->parts = p;
        rc->n_parts_alloc = n;
        return 0;
}

/* The pass whose commit is in flight ends untold (roamd stops, or the transaction's owner
 * goes): its transaction is freed, which cancels the wait (the engine settles what the kernel
 * did by the ruleset's generation, should it be used again); no part is called (their owner
 * may be half freed); its waits go to the next pass. */
static void pass_abandon(Reconcile *rc)
{
        if (!rc->inflight)
                return;
        rc->txn->free(TAKE_PTR(rc->inflight));
        rc->running = false;
        rc->walking--;
        parts_compact(rc);
        waits_move(&rc->waits, &rc->answering);
        if (rc->queued || rc->waits)
                (void)sd_event_source_set_enabled(rc->defer, SD_EVENT_ONESHOT);
        rc->queued = false;
}

int reconcile_new(sd_event *event, reconcile_changed_t changed, void *userdata, Reconcile **ret)
{
        _cleanup_(reconcile_freep) Reconcile *rc = calloc(1, sizeof(*rc));
        int r;

        if (!rc)
                return -ENOMEM;
        rc->event = sd_event_ref(event);
        rc->changed = changed;
        rc->userdata = userdata;
        r = parts_reserve(rc);
        if (r < 0)
                return r;
        rc->parts[rc->n_parts++] = (struct ReconcilePartEntry){}; /* the owner's */
        /* Right after the probes' sockets and DNS (IMPORTANT), before the bus and netlink: a
         * carrier-up's link, route and two verdict changes make one pass, not three, and a
         * probe's next step does not wait behind it. */
        r = sd_event_add_defer(event, &rc->defer, on_defer, rc);
        if (r < 0)
                return r;
        (void)sd_event_source_set_enabled(rc->defer, SD_EVENT_OFF);
        (void)sd_event_source_set_priority(rc->defer, SD_EVENT_PRIORITY_IMPORTANT + 1);
        (void)sd_event_source_set_description(rc->defer, "reconcile");
        *ret = TAKE_PTR(rc);
        return 0;
}

Reconcile *reconcile_free(Reconcile *rc)
{
        if (!rc)
                return NULL;
        pass_abandon(rc);
        /* callers' waits are cancelled without their callbacks (roamd stops; a pending
         * D-Bus reply goes unanswered with its message unreferenced) */
        while (rc->waits || rc->answering) {
                ReconcileWait *w = rc->waits ?: rc->answering;
                wait_unlink(w);
                w->rc = NULL;
                if (w->floating)
                        wait_destroy(w);
        }
        sd_event_source_disable_unref(rc->defer);
        sd_event_source_disable_unref(rc->hold);
        sd_event_source_disable_unref(rc->retry);
        sd_event_unref(rc->event);
        free(rc->reason);
        free(rc->pass_reason);
        free(rc->parts);
        free(rc);
        return NULL;
}

/* Drops the entries removed while a pass ran (keeps [0], the owner's). */
static void parts_compact(Reconcile *rc)
{
        size_t k = 1;

        if (rc->walking > 0)
                return;
        for (size_t i = 1; i < rc->n_parts; i++)
                if (rc->parts[i].ops)
                        rc->parts[k++] = rc->parts[i];
        rc->n_parts = MIN(rc->n_parts, k);
}

int reconcile_add_part(Reconcile *rc, const ReconcilePart *part, void *userdata)
{
        if (!rc || !part)
                return -EINVAL;
        if (parts_reserve(rc) < 0)
                return -ENOMEM;
        rc->parts[rc->n_parts++] = (struct ReconcilePartEntry){
            .ops = part,
            .userdata = userdata,
            .id = ++rc->last_part_id,
        };
        return rc->last_part_id;
}

void reconcile_remove_part(Reconcile *rc, int id)
{
        if (!rc || id <= 0)
                return;
        for (size_t i = 1; i < rc->n_parts; i++)
                if (rc->parts[i].id == id) {
                        rc->parts[i].ops = NULL;
                        rc->parts[i].userdata = NULL;
                }
        parts_compact(rc);
}

void reconcile_set_txn(Reconcile *rc, const ReconcileTxnOps *ops, const ReconcilePart *part,
                       void *userdata)
{
        /* the transaction in flight is the old owner's to free */
        pass_abandon(rc);
        rc->parts[0] = (struct ReconcilePartEntry){.ops = part, .userdata = userdata};
        rc->txn = ops;
        rc->txn_userdata = userdata;
}

bool reconcile_enforcing(Reconcile *rc)
{
        return rc && rc->txn;
}

void reconcile_set_hold(Reconcile *rc, reconcile_hold_t hold, void *userdata)
{
        rc->held = hold;
        rc->held_userdata = userdata;
}

bool reconcile_running(Reconcile *rc)
{
        return rc && rc->running;
}

bool reconcile_committing(Reconcile *rc)
{
        return rc && rc->inflight;
}

void reconcile_settle(Reconcile *rc)
{
        if (rc && rc->inflight && rc->txn->settle)
                rc->txn->settle(rc->txn_userdata, rc->inflight);
}

/* While a link's probes wait for their first answers (carrier-up), the pass waits for the
 * verdict that changes it again anyway, at most HOLD_USEC: on a fast network the answers
 * come within a few ms and each would otherwise be read only after ~1 ms of routing and nft
 * work; on a slow one the pass runs while the probes wait on the wire. */
static int hold_arm(Reconcile *rc)
{
        int enabled = SD_EVENT_OFF, r;

        if (!rc->hold) {
                /* (accuracy 1 ms: sd-event's default lets a timer slip by 250 ms) */
                r = sd_event_add_time_relative(rc->event, &rc->hold, CLOCK_MONOTONIC, HOLD_USEC,
                                               USEC_PER_MSEC, on_hold, rc);
                if (r >= 0)
                        (void)sd_event_source_set_description(rc->hold, "reconcile-hold");
                return r;
        }
        r = sd_event_source_get_enabled(rc->hold, &enabled);
        if (r < 0 || enabled != SD_EVENT_OFF)
                return r; /* the first deadline stands */
        r = sd_event_source_set_time_relative(rc->hold, HOLD_USEC);
        if (r < 0)
                return r;
        return sd_event_source_set_enabled(rc->hold, SD_EVENT_ONESHOT);
}

void reconcile_schedule(Reconcile *rc)
{
        if (!rc)
                return;
        if (rc->held && rc->held(rc->held_userdata) && hold_arm(rc) >= 0)
                return;
        (void)sd_event_source_set_enabled(rc->defer, SD_EVENT_ONESHOT);
}

bool reconcile_run_scheduled(Reconcile *rc)
{
        int enabled = SD_EVENT_OFF;

        if (!rc || rc->running || sd_event_source_get_enabled(rc->defer, &enabled) < 0 ||
            enabled != SD_EVENT_ONESHOT)
                return false;
        (void)pass_run(rc);
        return true;
}

static int wait_add(Reconcile *rc, reconcile_done_t done, void *userdata,
                    reconcile_destroy_t destroy, ReconcileWait **ret)
{
        ReconcileWait *w;

        assert(rc && done);
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        *w = (ReconcileWait){
            .rc = rc, .done = done, .destroy = destroy, .userdata = userdata, .floating = !ret};
        wait_push(&rc->waits, w);
        if (ret)
                *ret = w;
        return 0;
}

int reconcile_wait(Reconcile *rc, reconcile_done_t done, void *userdata,
                   reconcile_destroy_t destroy, ReconcileWait **ret)
{
        int r;

        assert(rc && done);
        r = sd_event_source_set_enabled(rc->defer, SD_EVENT_ONESHOT);
        if (r < 0)
                return r;
        return wait_add(rc, done, userdata, destroy, ret);
}

int reconcile_wait_next(Reconcile *rc, reconcile_done_t done, void *userdata,
                        reconcile_destroy_t destroy, ReconcileWait **ret)
{
        return wait_add(rc, done, userdata, destroy, ret);
}

/* The pass after its commit (or its failure): every part's done, then the waits made
 * before it began are answered, and a pass asked for meanwhile is scheduled. */
static void pass_finish(Reconcile *rc, NftTxn *t, int r)
{
        ReconcileWait *answering = NULL;
        int result;

        if (t)
                rc->txn->free(t);
        if (r < 0) {
                log_error_errno(r, "Cannot bring nftables up to date; the last good state "
                                   "stays: %m");
                reconcile_failed(rc, "nftables transaction", r);
        }
        result = rc->pass_error;
        rc->committed = true;
        for (size_t i = 0; i < rc->n_parts; i++)
                if (rc->parts[i].ops && rc->parts[i].ops->done)
                        rc->parts[i].ops->done(rc->parts[i].userdata, rc, r, false);
        reconcile_end(rc);
        rc->running = false;
        rc->walking--;
        parts_compact(rc);
        if (rc->queued) {
                rc->queued = false;
                (void)sd_event_source_set_enabled(rc->defer, SD_EVENT_ONESHOT);
        }
        waits_move(&answering, &rc->answering);
        waits_answer(rc, &answering, result);
}

static void on_commit_done(NftTxn *t, int result, void *data)
{
        Reconcile *rc = data;

        assert(rc->inflight == t);
        rc->inflight = NULL;
        log_debug("Reconciler: pass %u answered: %s", rc->passes,
                  result < 0 ? strerror(-result) : "accepted");
        pass_finish(rc, t, result);
}

/* One pass: every part's prepare, one transaction with every part's sync, its commit; the
 * rest follows the kernel's answer (pass_finish()). */
static int pass_run(Reconcile *rc)
{
        NftTxn *t = NULL;
        int r;

        (void)sd_event_source_set_enabled(rc->defer, SD_EVENT_OFF);
        if (rc->hold)
                (void)sd_event_source_set_enabled(rc->hold, SD_EVENT_OFF);
        if (rc->inflight) {
                /* One pass at a time, each built on what the kernel accepted before it: the
                 * passes asked for meanwhile make one more, after the answer. */
                if (!rc->queued)
                        log_debug("Reconciler: a pass waits for pass %u's answer", rc->passes);
                rc->queued = true;
                return 0;
        }
        /* the waits this pass answers: made before it began */
        if (!rc->txn) {
                ReconcileWait *answering = NULL;
                waits_move(&answering, &rc->waits);
                waits_answer(rc, &answering, -ENOMEDIUM);
                return 0;
        }
        waits_move(&rc->answering, &rc->waits);
        log_debug("Reconciler: pass %u", ++rc->passes);
        rc->running = true;
        rc->walking++;
        rc->committed = false;
        rc->pass_error = 0;
        reconcile_begin(rc);
        for (size_t i = 0; i < rc->n_parts; i++)
                if (rc->parts[i].ops && rc->parts[i].ops->prepare)
                        rc->parts[i].ops->prepare(rc->parts[i].userdata, rc);
        r = rc->txn->begin(rc->txn_userdata, &t);
        /* A chain flushed and only half rebuilt is never committed. */
        for (size_t i = 0; i < rc->n_parts && r >= 0; i++)
                if (rc->parts[i].ops && rc->parts[i].ops->sync)
                        r = rc->parts[i].ops->sync(rc->parts[i].userdata, t);
        if (r >= 0 && rc->txn->commit_async) {
                r = rc->txn->commit_async(rc->txn_userdata, t, on_commit_done, rc);
                if (r > 0) {
                        rc->inflight = t;
                        return 0;
                }
        } else if (r >= 0)
                r = rc->txn->commit(t);
        pass_finish(rc, t, r);
        return 0;
}

int reconcile_install(Reconcile *rc)
{
        NftTxn *t = NULL;
        int r;

        if (!rc->txn)
                return -ENOMEDIUM;
        if (rc->inflight)
                return -EBUSY;
        rc->walking++;
        r = rc->txn->begin(rc->txn_userdata, &t);
        for (size_t i = 0; i < rc->n_parts && r >= 0; i++)
                if (rc->parts[i].ops && rc->parts[i].ops->install)
                        r = rc->parts[i].ops->install(rc->parts[i].userdata, t);
        if (r >= 0)
                r = rc->txn->commit(t);
        if (t)
                rc->txn->free(t);
        for (size_t i = 0; i < rc->n_parts; i++)
                if (rc->parts[i].ops && rc->parts[i].ops->done)
                        rc->parts[i].ops->done(rc->parts[i].userdata, rc, r, true);
        rc->walking--;
        parts_compact(rc);
        return r;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        Reconcile *rc = userdata;

        log_info("Reconciler: retrying kernel state (attempt %u)", rc->attempts + 1);
        (void)pass_run(rc);
        return 0;
}

void reconcile_begin(Reconcile *rc)
{
        rc->failed = false;
        free(rc->pass_reason);
        rc->pass_reason = NULL;
}

void reconcile_failed(Reconcile *rc, const char *what, int error)
{
        /* (a failure noted while the commit is in flight is not the commit's) */
        if (rc->running && !rc->committed && !rc->inflight && rc->pass_error == 0)
                rc->pass_error = -abs(error);
        if (rc->failed)
                return;
        rc->failed = true;
        free(rc->pass_reason);
        if (asprintf(&rc->pass_reason, "%s: %s; retrying", what, strerror(abs(error))) < 0)
                rc->pass_reason = NULL;
}

void reconcile_note_failed(Reconcile *rc, const char *what, int error)
{
        if (rc->running) {
                reconcile_failed(rc, what, error);
                return;
        }
        reconcile_begin(rc);
        reconcile_failed(rc, what, error);
        reconcile_end(rc);
}

static void set_reason(Reconcile *rc, char *reason)
{
        if (streq_ptr(rc->reason, reason)) {
                free(reason);
                return;
        }
        log_full_errno(reason ? LOG_WARNING : LOG_NOTICE, 0, "Degraded: %s -> %s",
                       rc->reason ? rc->reason : "no", reason ? reason : "no");
        if (!reason)
                rc->since = 0;
        else if (!rc->reason) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                rc->since = (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
        }
        free(rc->reason);
        rc->reason = reason;
        if (rc->changed)
                rc->changed(rc->userdata);
}

void reconcile_end(Reconcile *rc)
{
        uint64_t delay;
        int r;

        if (!rc->failed) {
                rc->attempts = 0;
                rc->retry = sd_event_source_disable_unref(rc->retry);
                set_reason(rc, NULL);
                return;
        }
        set_reason(rc, TAKE_PTR(rc->pass_reason) ?: strdup("kernel state incomplete; retrying"));
        delay = RETRY_FIRST_USEC << MIN(rc->attempts, 5u);
        delay = MIN(delay, (uint64_t)RETRY_MAX_USEC);
        rc->attempts++;
        rc->retry = sd_event_source_disable_unref(rc->retry);
        r = sd_event_add_time_relative(rc->event, &rc->retry, CLOCK_MONOTONIC, delay, 0, on_retry,
                                       rc);
        if (r < 0)
                log_error_errno(r, "Cannot schedule the reconciler's retry: %m");
}

const char *reconcile_degraded(Reconcile *rc)
{
        return rc && rc->reason ? rc->reason : "";
}

uint64_t reconcile_degraded_since(Reconcile *rc)
{
        return rc ? rc->since : 0;
}
