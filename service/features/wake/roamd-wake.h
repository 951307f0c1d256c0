/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The ordered wake-up queue (docs/wake.md): once the global state is online (stable for a
 * settle time) and the time gate is open, wake-listed apps get their turn one after another,
 * the highest priority first, at most a cap at once. A turn ends when the app says Done, its
 * slice ends, or its traffic goes quiet. Every app waits at most its max delay. An outage
 * longer than the restart time starts a new period (the generation counts them): the queue
 * runs once more and wakes of the older period are void; a shorter flap pauses and resumes
 * the same period, so no app is woken twice in one.
 *
 * Pure: the clock, the timer, the counters and what follows a change come through WakeOps,
 * so the logic runs under a fake clock in tests/unit/test-wake.c. */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum WakeQueueState {
        WAKE_QUEUE_OFFLINE,  /* the global state is not online */
        WAKE_QUEUE_SETTLING, /* online, not yet for the settle time */
        WAKE_QUEUE_TIME,     /* settled, the time gate is closed */
        WAKE_QUEUE_RUNNING,  /* turns are given */
        WAKE_QUEUE_FINISHED, /* every listed app had its turn in this period */
        _WAKE_QUEUE_MAX,
        _WAKE_QUEUE_INVALID = -EINVAL,
} WakeQueueState;

typedef enum WakeAppState {
        WAKE_APP_WAITING, /* gated: its new connections are refused */
        WAKE_APP_OPENING, /* its turn came; its gate opens (WakeOps.open), it is not told yet */
        WAKE_APP_AWAKE,   /* its turn: the gate is open, it was told */
        WAKE_APP_DONE,    /* its turn ended in this period */
        _WAKE_APP_MAX,
        _WAKE_APP_INVALID = -EINVAL,
} WakeAppState;

/* Why a turn began or ended. */
typedef enum WakeReason {
        WAKE_REASON_TURN,    /* its place in the queue came */
        WAKE_REASON_OVERDUE, /* it waited its max delay */
        WAKE_REASON_USER,    /* WakeNow: online for a task */
        WAKE_REASON_DONE,    /* it said Done */
        WAKE_REASON_SLICE,   /* its slice ended */
        WAKE_REASON_QUIET,   /* its traffic went quiet */
        WAKE_REASON_LEFT,    /* it left the list, or its registered client went away */
        WAKE_REASON_RESTART, /* a new period began */
        WAKE_REASON_GATE,    /* opening: the pass that should open its gate failed */
        _WAKE_REASON_MAX,
        _WAKE_REASON_INVALID = -EINVAL,
} WakeReason;

const char *wake_queue_state_to_string(WakeQueueState s);
WakeQueueState wake_queue_state_from_string(const char *s);
const char *wake_app_state_to_string(WakeAppState s);
WakeAppState wake_app_state_from_string(const char *s);
const char *wake_reason_to_string(WakeReason r);
WakeReason wake_reason_from_string(const char *s);

typedef struct Wake Wake;

typedef struct WakeOps {
        uint64_t (*now)(void *userdata); /* CLOCK_MONOTONIC µs */
        /* The next time wake_tick() wants to run (UINT64_MAX: none). */
        void (*arm)(void *userdata, uint64_t when);
        /* Bytes the app sent and received so far (its counters); UINT64_MAX unknown. */
        uint64_t (*bytes)(void *userdata, const char *id);
        /* An app's state changed (its gate, its Wake signal). */
        void (*app_changed)(void *userdata, const char *id, WakeAppState old, WakeAppState new,
                            WakeReason why, uint64_t generation);
        /* The app's turn came: open its gate, then wake_app_opened() once the kernel has it
         * open (the app is told only then), or wake_app_open_failed(). NULL: nothing to
         * open, a turn begins at once. */
        void (*open)(void *userdata, const char *id, uint64_t generation);
        /* The queue's state changed (wait-online). */
        void (*queue_changed)(void *userdata, WakeQueueState old, WakeQueueState new);
        /* The time gate opened or closed, or its reason changed. */
        void (*gate_changed)(void *userdata);
        /* The cap in force changed (wake_cap()). */
        void (*cap_changed)(void *userdata);
} WakeOps;

typedef struct WakeConfig {
        uint64_t settle_usec;    /* online this long before the first turn */
        uint64_t restart_usec;   /* an outage at least this long begins a new period */
        uint64_t quiet_usec;     /* no traffic this long ends a turn */
        uint64_t max_delay_usec; /* default starvation bound */
        unsigned cap;            /* apps awake at once */
} WakeConfig;

#define WAKE_SETTLE_DEFAULT    (1 * 1000000ULL)
#define WAKE_RESTART_DEFAULT   (30 * 1000000ULL)
#define WAKE_QUIET_DEFAULT     (2 * 1000000ULL)
#define WAKE_MAX_DELAY_DEFAULT (300 * 1000000ULL)
#define WAKE_CAP_MAX           64

void wake_config_init(WakeConfig *c);

int wake_new(const WakeOps *ops, void *userdata, const WakeConfig *config, Wake **ret);
Wake *wake_free(Wake *w);

void wake_set_config(Wake *w, const WakeConfig *config);
/* The cap for the best link's bearer (config per bearer). */
void wake_set_cap(Wake *w, unsigned cap);
/* Whether the best link is slow (its measured probe RTT): then the cap in force is 1
 * whatever wake_set_cap() said. why says what was measured, either way. */
int wake_set_slow(Wake *w, bool slow, const char *why);
/* The cap in force, and why (NULL: as configured). */
unsigned wake_cap(Wake *w, const char **ret_why);

/* From policy: the app is wake-listed with priority 0-100 and its slice; priority
 * APP_WAKE_NONE (-1) takes it off the list (its turn ends, its gate opens). */
int wake_app_put(Wake *w, const char *id, int priority, uint64_t slice_usec);
/* What a turn of the app fetches: policy's WakeBytes= (0: none) and Register()'s
 * EstimatedBytes (UINT64_MAX: unchanged), which may only raise policy's, never make an
 * estimate of its own. A turn with an estimate is pipelined (ending()). -ENOENT when not
 * listed. */
int wake_app_set_bytes(Wake *w, const char *id, uint64_t policy_bytes, uint64_t reg_bytes);
/* From Register(): max delay (it only lengthens the configured one) and whether its turn
 * waits for the time gate (false: it goes through the closed gate, but only in its rank:
 * never before a waiting app that needs the time). -ENOENT when the app is not wake-listed;
 * -EEXIST when a client registered it already. */
int wake_app_register(Wake *w, const char *id, uint64_t max_delay_usec, bool needs_time);
/* The registering client went away: the registration is dropped, a running turn ends
 * (end_turn; false: the registration no longer speaks for the app, its turn goes on). */
int wake_app_unregister(Wake *w, const char *id, bool end_turn);
bool wake_app_registered(Wake *w, const char *id);

/* The global state. */
void wake_set_online(Wake *w, bool online);
/* The time gate (issue 28's consensus; open with "time not required" until told). */
void wake_set_time_gate(Wake *w, bool open, const char *why);
bool wake_time_gate_open(Wake *w, const char **ret_why);

/* The gate of an opening app is open in the kernel (the pass that opened it committed): its
 * turn begins. -ENOENT not listed; -ESTALE not opening in that period. */
int wake_app_opened(Wake *w, const char *id, uint64_t generation);
/* That pass failed: the app stays opening, untold, with reason gate (until opened). */
int wake_app_open_failed(Wake *w, const char *id, uint64_t generation);

/* -ENOENT not listed; -ESTALE not awake (an older period's turn, or none). */
int wake_app_done(Wake *w, const char *id);
/* Online for a task: the app's turn now (over the cap), or first when the queue runs. */
int wake_app_now(Wake *w, const char *id);

/* Timer expired: end slices and quiet turns, wake the overdue and the next. */
void wake_tick(Wake *w);

WakeQueueState wake_queue_state(Wake *w);
uint64_t wake_generation(Wake *w);
/* -ENOENT when not listed. */
int wake_app_state(Wake *w, const char *id, WakeAppState *ret_state, WakeReason *ret_reason);
/* When its state last changed (CLOCK_MONOTONIC µs, as WakeOps.now); 0 when not listed. */
uint64_t wake_app_since(Wake *w, const char *id);
/* Whether the app's new connections are refused now: listed and waiting. */
bool wake_app_gated(Wake *w, const char *id);
/* The queue for views: apps in queue order. */
size_t wake_count(Wake *w);
const char *wake_nth(Wake *w, size_t i, int *ret_priority, WakeAppState *ret_state,
                     uint64_t *ret_since);
