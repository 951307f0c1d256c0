/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdlib.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roamd-wake.h"

static const char *const wake_queue_state_table[_WAKE_QUEUE_MAX] = {
    [WAKE_QUEUE_OFFLINE] = "offline",   [WAKE_QUEUE_SETTLING] = "settling",
    [WAKE_QUEUE_TIME] = "time",         [WAKE_QUEUE_RUNNING] = "running",
    [WAKE_QUEUE_FINISHED] = "finished",
};
DEFINE_STRING_TABLE_LOOKUP(wake_queue_state, WakeQueueState)

/* The words are the shared table's (shared/roam-words.c): roam reads WakeState. */
_Static_assert((int)_WAKE_APP_MAX == (int)_ROAM_WAKE_MAX &&
                   (int)WAKE_APP_WAITING == (int)ROAM_WAKE_WAITING &&
                   (int)WAKE_APP_OPENING == (int)ROAM_WAKE_OPENING &&
                   (int)WAKE_APP_AWAKE == (int)ROAM_WAKE_AWAKE &&
                   (int)WAKE_APP_DONE == (int)ROAM_WAKE_DONE,
               "wake states and their shared words differ");
#define wake_app_state_table roam_wake_table
DEFINE_STRING_TABLE_LOOKUP(wake_app_state, WakeAppState)

static const char *const wake_reason_table[_WAKE_REASON_MAX] = {
    [WAKE_REASON_TURN] = "turn", [WAKE_REASON_OVERDUE] = "overdue", [WAKE_REASON_USER] = "user",
    [WAKE_REASON_DONE] = "done", [WAKE_REASON_SLICE] = "slice",     [WAKE_REASON_QUIET] = "quiet",
    [WAKE_REASON_LEFT] = "left", [WAKE_REASON_RESTART] = "restart", [WAKE_REASON_GATE] = "gate",
};
DEFINE_STRING_TABLE_LOOKUP(wake_reason, WakeReason)

#define LEAD_SAMPLES 4

typedef struct WakeApp {
        char *id;
        int priority;
        uint64_t slice_usec;
        uint64_t max_delay_usec; /* registered: only lengthens the config's */
        bool needs_time;
        bool registered;
        bool jump;          /* WakeNow while it could not be woken: first when it can */
        uint64_t seq;       /* order it was listed in: ties of priority */
        WakeAppState state; /* changed only by app_set_state() */
        WakeReason reason;
        WakeReason turn_reason; /* why its turn began (opening: the reason it will be told) */
        uint64_t turn_at;       /* its turn began (opening) */
        uint64_t since;
        uint64_t bytes_last, bytes_at;    /* quiet detection */
        uint64_t policy_bytes, reg_bytes; /* what a turn fetches (WakeBytes=, Register) */
        uint64_t bytes_start;             /* its counters when told */
        uint64_t first_at, bytes_first;   /* its first bytes in this turn, 0: none yet */
        bool handed;                      /* its successor started: ending, off the cap */
} WakeApp;

struct Wake {
        const WakeOps *ops;
        void *userdata;
        WakeConfig config;
        WakeApp **apps;
        size_t n_apps;
        uint64_t seq;

        WakeQueueState state; /* changed only by queue_set_state() */
        uint64_t generation;  /* periods begun */
        uint64_t online_at;   /* this online stretch began */
        uint64_t period_at;   /* this period began (max delays count from here) */
        uint64_t offline_at;
        bool ever_online;
        bool time_open;
        char *time_why;
        bool slow;      /* the best link is slow: the cap in force is 1 */
        char *slow_why; /* what was measured; NULL: nothing */
        bool in_run;    /* re-entry from a callback is folded into the running pass */
        bool rerun;
        uint64_t armed;
        uint64_t lead;                   /* the lead in force: the least of startups[] */
        uint64_t startups[LEAD_SAMPLES]; /* the last turns' time to their first byte */
        size_t n_startups;
};

/* Pipelining: the counters are read this often while a turn with an estimate runs and an app
 * waits; the lead is at most LEAD_MAX. */
#define SAMPLE_FIRST_USEC (25 * USEC_PER_MSEC)
#define SAMPLE_USEC       (100 * USEC_PER_MSEC)
#define LEAD_MAX_USEC     (1 * USEC_PER_SEC)

void wake_config_init(WakeConfig *c)
{
        *c = (WakeConfig){
            .settle_usec = WAKE_SETTLE_DEFAULT,
            .restart_usec = WAKE_RESTART_DEFAULT,
            .quiet_usec = WAKE_QUIET_DEFAULT,
            .max_delay_usec = WAKE_MAX_DELAY_DEFAULT,
            .cap = 1,
        };
}

static uint64_t now(Wake *w)
{
        return w->ops->now(w->userdata);
}

static void wake_run(Wake *w);

int wake_new(const WakeOps *ops, void *userdata, const WakeConfig *config, Wake **ret)
{
        _cleanup_free_ Wake *w = NULL;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->ops = ops;
        w->userdata = userdata;
        if (config)
                w->config = *config;
        else
                wake_config_init(&w->config);
        w->config.cap = MIN(MAX(w->config.cap, 1u), (unsigned)WAKE_CAP_MAX);
        w->time_open = true;
        w->time_why = strdup("time not required");
        if (!w->time_why)
                return -ENOMEM;
        w->state = WAKE_QUEUE_OFFLINE;
        w->armed = UINT64_MAX;
        *ret = TAKE_PTR(w);
        return 0;
}

static void app_free(WakeApp *a)
{
        if (!a)
                return;
        free(a->id);
        free(a);
}

Wake *wake_free(Wake *w)
{
        if (!w)
                return NULL;
        for (size_t i = 0; i < w->n_apps; i++)
                app_free(w->apps[i]);
        free(w->apps);
        free(w->time_why);
        free(w->slow_why);
        free(w);
        return NULL;
}

static WakeApp *find(Wake *w, const char *id)
{
        if (!id)
                return NULL;
        for (size_t i = 0; i < w->n_apps; i++)
                if (streq(w->apps[i]->id, id))
                        return w->apps[i];
        return NULL;
}

/* The one place an app's state changes. */
static void app_set_state(Wake *w, WakeApp *a, WakeAppState state, WakeReason why)
{
        WakeAppState old = a->state;
        WakeReason old_why = a->reason;

        a->reason = why;
        if (old == state) {
                /* An opening app's reason is what it waits for: told when it changes. */
                if (state != WAKE_APP_OPENING || why == old_why)
                        return;
                log_info("wake: %s: %s (%s, period %" PRIu64 ")", a->id,
                         wake_app_state_to_string(state), wake_reason_to_string(why),
                         w->generation);
                if (w->ops->app_changed)
                        w->ops->app_changed(w->userdata, a->id, old, state, why, w->generation);
                return;
        }
        a->state = state;
        a->since = now(w);
        if (state == WAKE_APP_AWAKE) {
                a->jump = false;
                a->bytes_last = w->ops->bytes ? w->ops->bytes(w->userdata, a->id) : UINT64_MAX;
                a->bytes_at = a->since;
                a->bytes_start = a->bytes_last;
                a->first_at = 0;
                a->handed = false;
        }
        log_info("wake: %s: %s -> %s (%s, period %" PRIu64 ")", a->id,
                 wake_app_state_to_string(old), wake_app_state_to_string(state),
                 wake_reason_to_string(why), w->generation);
        if (w->ops->app_changed)
                w->ops->app_changed(w->userdata, a->id, old, state, why, w->generation);
}

/* The one place the queue's state changes. */
static void queue_set_state(Wake *w, WakeQueueState state)
{
        WakeQueueState old = w->state;

        if (old == state)
                return;
        w->state = state;
        log_info("wake: queue %s -> %s (period %" PRIu64 ")", wake_queue_state_to_string(old),
                 wake_queue_state_to_string(state), w->generation);
        if (w->ops->queue_changed)
                w->ops->queue_changed(w->userdata, old, state);
}

void wake_set_config(Wake *w, const WakeConfig *config)
{
        unsigned cap = w->config.cap;

        w->config = *config;
        w->config.cap = cap; /* the cap follows the best link: wake_set_cap() */
        wake_run(w);
}

unsigned wake_cap(Wake *w, const char **ret_why)
{
        if (ret_why)
                *ret_why = w->slow ? w->slow_why : NULL;
        return w->slow ? 1 : w->config.cap;
}

/* The one place the cap in force changes (the configured one, or the slow-link fact). */
static void cap_set(Wake *w, unsigned cap, bool slow, char *why)
{
        unsigned old = wake_cap(w, NULL);
        bool was_slow = w->slow;

        w->config.cap = cap;
        w->slow = slow;
        free(w->slow_why);
        w->slow_why = why;
        if (wake_cap(w, NULL) == old && slow == was_slow)
                return;
        log_info("wake: cap %u -> %u (%s%s%s)", old, wake_cap(w, NULL),
                 slow       ? "slow link"
                 : was_slow ? "not slow any more"
                            : "configured for the best link",
                 why ? ": " : "", strempty(why));
        if (w->ops->cap_changed)
                w->ops->cap_changed(w->userdata);
        wake_run(w);
}

void wake_set_cap(Wake *w, unsigned cap)
{
        cap_set(w, MIN(MAX(cap, 1u), (unsigned)WAKE_CAP_MAX), w->slow, TAKE_PTR(w->slow_why));
}

int wake_set_slow(Wake *w, bool slow, const char *why)
{
        char *d = NULL;

        if (why) {
                d = strdup(why);
                if (!d)
                        return -ENOMEM;
        }
        cap_set(w, w->config.cap, slow, d);
        return 0;
}

/* Its turn came: it is told once its gate is open (WakeOps.open), at once when there is none. */
static void turn_begin(Wake *w, WakeApp *a, WakeReason why)
{
        a->turn_reason = why;
        a->turn_at = now(w);
        if (!w->ops->open) {
                app_set_state(w, a, WAKE_APP_AWAKE, why);
                return;
        }
        app_set_state(w, a, WAKE_APP_OPENING, why);
        w->ops->open(w->userdata, a->id, w->generation);
}

static bool has_turn(const WakeApp *a)
{
        return a->state == WAKE_APP_OPENING || a->state == WAKE_APP_AWAKE;
}

static void app_remove(Wake *w, WakeApp *a)
{
        for (size_t i = 0; i < w->n_apps; i++)
                if (w->apps[i] == a) {
                        memmove(&w->apps[i], &w->apps[i + 1],
                                (w->n_apps - i - 1) * sizeof(WakeApp *));
                        w->n_apps--;
                        break;
                }
        app_free(a);
}

int wake_app_put(Wake *w, const char *id, int priority, uint64_t slice_usec)
{
        WakeApp *a = find(w, id), **l;

        if (priority < 0) {
                if (!a)
                        return 0;
                /* Off the list: its gate opens (an app's state is DONE for its watchers). */
                log_info("wake: %s: off the list", a->id);
                if (a->state != WAKE_APP_DONE)
                        app_set_state(w, a, WAKE_APP_DONE, WAKE_REASON_LEFT);
                app_remove(w, a);
                wake_run(w);
                return 0;
        }
        if (priority > 100 || slice_usec == 0)
                return -EINVAL;
        if (a) {
                a->priority = priority;
                a->slice_usec = slice_usec;
                wake_run(w);
                return 0;
        }
        a = calloc(1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        a->id = strdup(id);
        l = reallocarray(w->apps, w->n_apps + 1, sizeof(WakeApp *));
        if (!a->id || !l) {
                if (l)
                        w->apps = l;
                app_free(a);
                return -ENOMEM;
        }
        w->apps = l;
        a->priority = priority;
        a->slice_usec = slice_usec;
        a->needs_time = true;
        a->seq = w->seq++;
        /* Listed while the queue has given its turns (or runs): it waits for its turn like the
         * others; it was never woken in this period. */
        a->state = WAKE_APP_WAITING;
        a->reason = WAKE_REASON_TURN;
        a->since = now(w);
        w->apps[w->n_apps++] = a;
        log_info("wake: %s: listed, priority %d", a->id, priority);
        wake_run(w);
        return 0;
}

int wake_app_set_bytes(Wake *w, const char *id, uint64_t policy_bytes, uint64_t reg_bytes)
{
        WakeApp *a = find(w, id);

        if (!a)
                return -ENOENT;
        a->policy_bytes = policy_bytes;
        if (reg_bytes != UINT64_MAX)
                a->reg_bytes = reg_bytes;
        return 0;
}

int wake_app_register(Wake *w, const char *id, uint64_t max_delay_usec, bool needs_time)
{
        WakeApp *a = find(w, id);

        if (!a)
                return -ENOENT;
        if (a->registered)
                return -EEXIST;
        a->registered = true;
        a->max_delay_usec = max_delay_usec;
        a->needs_time = needs_time;
        wake_run(w);
        return 0;
}

int wake_app_unregister(Wake *w, const char *id, bool end_turn)
{
        WakeApp *a = find(w, id);

        if (!a || !a->registered)
                return -ENOENT;
        a->registered = false;
        a->reg_bytes = 0;
        a->max_delay_usec = 0;
        a->needs_time = true;
        if (end_turn && has_turn(a))
                app_set_state(w, a, WAKE_APP_DONE, WAKE_REASON_LEFT);
        wake_run(w);
        return 0;
}

bool wake_app_registered(Wake *w, const char *id)
{
        WakeApp *a = find(w, id);

        return a && a->registered;
}

void wake_set_online(Wake *w, bool online)
{
        uint64_t t = now(w);

        if (!online) {
                if (w->state == WAKE_QUEUE_OFFLINE)
                        return;
                w->offline_at = t;
                queue_set_state(w, WAKE_QUEUE_OFFLINE);
                wake_run(w);
                return;
        }
        if (w->state != WAKE_QUEUE_OFFLINE)
                return;
        w->online_at = t;
        if (!w->ever_online || t - w->offline_at >= w->config.restart_usec) {
                /* A new period: everyone waits for a turn again; turns of the last one are
                 * over. A flap shorter than the restart time resumes the same period. */
                w->generation++;
                w->period_at = t;
                w->ever_online = true;
                for (size_t i = 0; i < w->n_apps; i++)
                        app_set_state(w, w->apps[i], WAKE_APP_WAITING, WAKE_REASON_RESTART);
        }
        queue_set_state(w, WAKE_QUEUE_SETTLING);
        wake_run(w);
}

void wake_set_time_gate(Wake *w, bool open, const char *why)
{
        char *s = strdup(why ?: (open ? "time settled" : "time not settled"));

        if (!s) {
                log_oom();
                return;
        }
        if (open != w->time_open)
                log_info("wake: time gate %s -> %s (%s)", w->time_open ? "open" : "closed",
                         open ? "open" : "closed", s);
        free(w->time_why);
        w->time_why = s;
        w->time_open = open;
        if (w->ops->gate_changed)
                w->ops->gate_changed(w->userdata);
        wake_run(w);
}

bool wake_time_gate_open(Wake *w, const char **ret_why)
{
        if (ret_why)
                *ret_why = w->time_why;
        return w->time_open;
}

int wake_app_done(Wake *w, const char *id)
{
        WakeApp *a = find(w, id);

        if (!a)
                return -ENOENT;
        if (a->state != WAKE_APP_AWAKE)
                return -ESTALE;
        app_set_state(w, a, WAKE_APP_DONE, WAKE_REASON_DONE);
        wake_run(w);
        return 0;
}

int wake_app_now(Wake *w, const char *id)
{
        WakeApp *a = find(w, id);

        if (!a)
                return -ENOENT;
        if (has_turn(a))
                return 0;
        if (w->state == WAKE_QUEUE_OFFLINE) {
                a->jump = true; /* first when the network is back */
                return 0;
        }
        turn_begin(w, a, WAKE_REASON_USER);
        wake_run(w);
        return 0;
}

/* The app is opening in this period: 0; else -ENOENT (not listed) or -ESTALE. */
static WakeApp *find_opening(Wake *w, const char *id, uint64_t generation, int *ret)
{
        WakeApp *a = find(w, id);

        *ret = 0;
        if (!a)
                *ret = -ENOENT;
        else if (a->state != WAKE_APP_OPENING || generation != w->generation)
                *ret = -ESTALE;
        return *ret < 0 ? NULL : a;
}

int wake_app_opened(Wake *w, const char *id, uint64_t generation)
{
        int r;
        WakeApp *a = find_opening(w, id, generation, &r);

        if (!a)
                return r;
        app_set_state(w, a, WAKE_APP_AWAKE, a->turn_reason);
        wake_run(w);
        return 0;
}

int wake_app_open_failed(Wake *w, const char *id, uint64_t generation)
{
        int r;
        WakeApp *a = find_opening(w, id, generation, &r);

        if (!a)
                return r;
        app_set_state(w, a, WAKE_APP_OPENING, WAKE_REASON_GATE);
        return 0;
}

/* What an app says of itself may only make it wait longer, never pass others: its registered
 * bound only lengthens the configured one. */
static uint64_t max_delay(Wake *w, WakeApp *a)
{
        return MAX(a->max_delay_usec, w->config.max_delay_usec);
}

/* What a turn is expected to fetch: policy's (WakeBytes=) only. A registered estimate may
 * raise it (the turn holds its place longer), never make one: a small one would free the
 * app's place at once while it goes on fetching. */
static uint64_t estimate(const WakeApp *a)
{
        return a->policy_bytes > 0 ? MAX(a->policy_bytes, a->reg_bytes) : 0;
}

static bool settled(Wake *w, uint64_t t)
{
        return w->state != WAKE_QUEUE_OFFLINE && t >= w->online_at + w->config.settle_usec;
}

/* Queue order: a WakeNow first, then the higher priority, then the one listed first. */
static bool before(const WakeApp *a, const WakeApp *b)
{
        if (a->jump != b->jump)
                return a->jump;
        if (a->priority != b->priority)
                return a->priority > b->priority;
        return a->seq < b->seq;
}

/* Pipelining (docs/wake.md): an awake app with an estimate (WakeBytes=) whose fetch will end
 * within the lead, the time apps took from their Wake to their first byte, holds its place
 * under the cap no longer: the next app starts so that its first byte comes about when this
 * one's last does, and the link does not idle through every handover. b: its counters now. */
static bool ending(Wake *w, WakeApp *a, uint64_t t, uint64_t b, uint64_t *next)
{
        uint64_t est = estimate(a), got, startup, remaining;
        double rate;

        if (a->handed)
                return true;
        if (est == 0 || b == UINT64_MAX || a->bytes_start == UINT64_MAX || b < a->bytes_start)
                return false;
        got = b - a->bytes_start;
        if (a->first_at == 0) {
                if (got == 0) {
                        *next = MIN(*next, t + SAMPLE_FIRST_USEC);
                        return false;
                }
                a->first_at = t;
                a->bytes_first = b;
                /* from its turn's start (the gate's pass too), the least of the last few:
                 * a successor that starts too early slows the ending app down, one that
                 * starts a little late only leaves the link idle for that little */
                startup = MIN(t - (a->turn_at ?: a->since), (uint64_t)LEAD_MAX_USEC);
                w->startups[w->n_startups++ % LEAD_SAMPLES] = startup;
                w->lead = UINT64_MAX;
                for (size_t i = 0; i < MIN(w->n_startups, (size_t)LEAD_SAMPLES); i++)
                        w->lead = MIN(w->lead, w->startups[i]);
                log_debug("wake: %s: first bytes %" PRIu64 " ms after its turn began; lead %" PRIu64
                          " ms",
                          a->id, startup / USEC_PER_MSEC, w->lead / USEC_PER_MSEC);
                *next = MIN(*next, t + SAMPLE_USEC);
                return false;
        }
        if (t < a->first_at + SAMPLE_USEC || b <= a->bytes_first) {
                *next = MIN(*next, MAX(t + SAMPLE_FIRST_USEC, a->first_at + SAMPLE_USEC));
                return false;
        }
        rate = (double)(b - a->bytes_first) / (double)(t - a->first_at); /* bytes per µs */
        remaining = got >= est ? 0 : (uint64_t)((double)(est - got) / rate);
        if (remaining > w->lead) {
                *next = MIN(*next, t + MIN(remaining - w->lead, (uint64_t)SAMPLE_USEC));
                return false;
        }
        a->handed = true;
        log_info("wake: %s: ends in about %" PRIu64 " ms (%" PRIu64 " of %" PRIu64
                 " bytes): the next turn begins",
                 a->id, remaining / USEC_PER_MSEC, got, est);
        return true;
}

static void wake_run(Wake *w)
{
        uint64_t t, next = UINT64_MAX;
        unsigned awake = 0;
        bool waiting = false;

        if (w->in_run) {
                w->rerun = true;
                return;
        }
        w->in_run = true;
again:
        w->rerun = false;
        t = now(w);
        next = UINT64_MAX;
        awake = 0;
        waiting = false;

        for (size_t i = 0; i < w->n_apps; i++)
                if (w->apps[i]->state == WAKE_APP_WAITING)
                        waiting = true;

        /* Turns that end. An opening one counts toward the cap; its slice begins when it is
         * told. */
        for (size_t i = 0; i < w->n_apps; i++) {
                WakeApp *a = w->apps[i];
                uint64_t b = UINT64_MAX;

                if (a->state == WAKE_APP_OPENING)
                        awake++;
                if (a->state != WAKE_APP_AWAKE)
                        continue;
                if (t >= a->since + a->slice_usec) {
                        app_set_state(w, a, WAKE_APP_DONE, WAKE_REASON_SLICE);
                        continue;
                }
                if (w->ops->bytes && (w->config.quiet_usec > 0 || (waiting && estimate(a) > 0)))
                        b = w->ops->bytes(w->userdata, a->id);
                if (w->config.quiet_usec > 0) {
                        if (b != UINT64_MAX && b != a->bytes_last) {
                                a->bytes_last = b;
                                a->bytes_at = t;
                        }
                        if (b != UINT64_MAX && t >= a->bytes_at + w->config.quiet_usec) {
                                app_set_state(w, a, WAKE_APP_DONE, WAKE_REASON_QUIET);
                                continue;
                        }
                        if (b != UINT64_MAX)
                                next = MIN(next, a->bytes_at + w->config.quiet_usec);
                }
                next = MIN(next, a->since + a->slice_usec);
                /* (only while someone waits: it is how the next one starts early) */
                if (!waiting || !ending(w, a, t, b, &next))
                        awake++;
        }
        waiting = false;

        if (w->state != WAKE_QUEUE_OFFLINE) {
                bool is_settled = settled(w, t);

                /* The starvation bound: past its max delay an app is woken over the cap and
                 * without waiting for the settle time or the time gate. */
                for (size_t i = 0; i < w->n_apps; i++) {
                        WakeApp *a = w->apps[i];
                        uint64_t due = w->period_at + max_delay(w, a);

                        if (a->state != WAKE_APP_WAITING)
                                continue;
                        if (t >= due) {
                                turn_begin(w, a, WAKE_REASON_OVERDUE);
                                next = MIN(next, t + a->slice_usec);
                                awake++;
                        } else
                                next = MIN(next, due);
                }

                /* The next turns, up to the cap. */
                while (is_settled && awake < wake_cap(w, NULL)) {
                        WakeApp *best = NULL;

                        for (size_t i = 0; i < w->n_apps; i++) {
                                WakeApp *a = w->apps[i];

                                if (a->state != WAKE_APP_WAITING)
                                        continue;
                                if (!best || before(a, best))
                                        best = a;
                        }
                        /* An app that does not need the time (NeedsTime=false, its own word)
                         * goes through the closed time gate only in its rank: the first
                         * waiting app that needs the time holds everyone after it. */
                        if (!best || (best->needs_time && !w->time_open))
                                break;
                        turn_begin(w, best, best->jump ? WAKE_REASON_USER : WAKE_REASON_TURN);
                        next = MIN(next, t + best->slice_usec);
                        if (best->bytes_last != UINT64_MAX && w->config.quiet_usec > 0)
                                next = MIN(next, t + w->config.quiet_usec);
                        awake++;
                }
                for (size_t i = 0; i < w->n_apps; i++)
                        if (w->apps[i]->state == WAKE_APP_WAITING)
                                waiting = true;

                if (!is_settled) {
                        queue_set_state(w, WAKE_QUEUE_SETTLING);
                        next = MIN(next, w->online_at + w->config.settle_usec);
                } else if (!w->time_open && waiting)
                        queue_set_state(w, WAKE_QUEUE_TIME);
                else if (waiting || awake > 0)
                        queue_set_state(w, WAKE_QUEUE_RUNNING);
                else
                        queue_set_state(w, WAKE_QUEUE_FINISHED);
        }
        if (w->rerun)
                goto again;
        w->in_run = false;
        if (next != w->armed) {
                w->armed = next;
                if (w->ops->arm)
                        w->ops->arm(w->userdata, next);
        }
}

void wake_tick(Wake *w)
{
        w->armed = UINT64_MAX; /* it fired */
        wake_run(w);
}

WakeQueueState wake_queue_state(Wake *w)
{
        return w->state;
}

uint64_t wake_generation(Wake *w)
{
        return w->generation;
}

int wake_app_state(Wake *w, const char *id, WakeAppState *ret_state, WakeReason *ret_reason)
{
        WakeApp *a = find(w, id);

        if (!a)
                return -ENOENT;
        if (ret_state)
                *ret_state = a->state;
        if (ret_reason)
                *ret_reason = a->reason;
        return 0;
}

uint64_t wake_app_since(Wake *w, const char *id)
{
        WakeApp *a = find(w, id);

        return a ? a->since : 0;
}

bool wake_app_gated(Wake *w, const char *id)
{
        WakeApp *a = find(w, id);

        return a && a->state == WAKE_APP_WAITING;
}

size_t wake_count(Wake *w)
{
        return w->n_apps;
}

const char *wake_nth(Wake *w, size_t i, int *ret_priority, WakeAppState *ret_state,
                     uint64_t *ret_since)
{
        WakeApp *a;

        if (i >= w->n_apps)
                return NULL;
        a = w->apps[i];
        if (ret_priority)
                *ret_priority = a->priority;
        if (ret_state)
                *ret_state = a->state;
        if (ret_since)
                *ret_since = a->since;
        return a->id;
}
