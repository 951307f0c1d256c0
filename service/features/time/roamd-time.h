/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The time consensus (docs/time.md): samples from independent witnesses in, one agreed
 * interval out. Pure logic: no bus, no clock reads; every call that needs "now" is given
 * CLOCK_BOOTTIME by its caller, so tests drive it with made-up times.
 *
 * A witness's samples are first combined into one interval (their intersection: two answers
 * through one link say one thing about that link); the witnesses' intervals are then
 * intersected with Marzullo's algorithm. The region covered by the most witnesses wins when
 * more than half of them cover it; the others are falsetickers, each with its reason. A lower
 * bound (the saved last known good time) only cuts the result from below. Samples age: their
 * error grows by TIME_DRIFT_PPM of their age, and network samples expire. */

#include <stdbool.h>
#include <stddef.h>

#include "roam-watch.h"
#include "roamd-time-sample.h"

#define TIME_USEC_PER_SEC  ((usec_t)1000000)
#define TIME_USEC_PER_MSEC ((usec_t)1000)
/* How much an unsynchronised clock may drift: a cheap crystal's 100 ppm, five times over. */
#define TIME_DRIFT_PPM ((usec_t)500)
/* A network sample older than this is dropped (the probes' re-check is 300 s). */
#define TIME_SAMPLE_MAX_AGE_USEC (3600 * TIME_USEC_PER_SEC)
/* Settled needs this many agreeing witnesses (a manual setting alone is enough). */
#define TIME_MIN_WITNESSES 2

typedef enum TimeState {
        TIME_STATE_UNKNOWN,  /* no source said anything yet */
        TIME_STATE_SETTLING, /* sources agree but too few of them yet */
        TIME_STATE_SETTLED,  /* a majority of at least TIME_MIN_WITNESSES agree: the bound */
        TIME_STATE_DISPUTED, /* no majority agrees */
        _TIME_STATE_MAX,
        _TIME_STATE_INVALID = -EINVAL,
} TimeState;

const char *time_state_to_string(TimeState s);
TimeState time_state_from_string(const char *s);

typedef enum TimeVerdict {
        TIME_VERDICT_TRUECHIMER,
        TIME_VERDICT_FALSETICKER,
        TIME_VERDICT_LOWER_BOUND,
        TIME_VERDICT_EXPIRED,
        _TIME_VERDICT_MAX,
        _TIME_VERDICT_INVALID = -EINVAL,
} TimeVerdict;

const char *time_verdict_to_string(TimeVerdict v);
TimeVerdict time_verdict_from_string(const char *s);

const char *time_source_kind_to_string(TimeSourceKind k);
TimeSourceKind time_source_kind_from_string(const char *s);

/* One stored sample and what the last evaluation made of it. */
typedef struct TimeSource {
        TimeSample sample;
        TimeVerdict verdict;
        char reason[160]; /* why a falseticker / expired; "" for a truechimer */
        /* the aged interval at the last evaluation (realtime then, µs) */
        usec_t lo, hi;
} TimeSource;

typedef enum TimeChange {
        TIME_CHANGE_STATE,   /* the state changed */
        TIME_CHANGE_SOURCES, /* the sources or the bound changed */
        TIME_CHANGE_GATE,    /* the gate opened (time_gate_open() is now true) */
        _TIME_CHANGE_MAX,
        _TIME_CHANGE_INVALID = -EINVAL,
} TimeChange;

typedef struct Time Time;
typedef void (*TimeWatchFn)(Time *t, TimeChange ev, void *userdata);

struct Time {
        TimeState state;
        char reason[200]; /* the state in words: "3 of 3 sources agree", ... */
        TimeSource *sources;
        size_t n_sources;
        /* the agreed interval at `bound_at` (CLOCK_BOOTTIME): realtime ± error */
        bool has_bound;
        usec_t bound_realtime, bound_error, bound_at;
        usec_t evaluated_at; /* CLOCK_BOOTTIME of the last evaluation: the sources' lo, hi */
        /* the gate: opened when settled, or at gate_deadline (CLOCK_BOOTTIME) */
        usec_t gate_wait;     /* how long after the first online state */
        usec_t gate_deadline; /* 0: not online yet */
        bool gate_open, gate_timed_out;
        WatchList watches;
};

int time_new(usec_t gate_wait, Time **ret);
Time *time_free(Time *t);

/* Stores a sample (replacing the one of the same kind, witness and origin) and evaluates.
 * Refuses (-EINVAL) an empty witness, an unknown kind, a zero time or a sample from the
 * future of `now`. */
int time_add_sample(Time *t, const TimeSample *s, usec_t now);
/* Drops every sample of a witness (a link went away); evaluates. Returns how many. */
size_t time_remove_witness(Time *t, const char *witness, usec_t now);
/* Drops the samples of one kind (a new manual setting replaces the old one). */
size_t time_remove_kind(Time *t, TimeSourceKind kind, usec_t now);

/* Ages the samples to `now` and decides: the state, the bound, each source's verdict. */
void time_evaluate(Time *t, usec_t now);

/* The agreed bound projected to `now`: realtime and error (error grows with the drift).
 * -ENODATA when not settled. */
int time_bound_at(const Time *t, usec_t now, usec_t *ret_realtime, usec_t *ret_error);

/* When the next sample expires (CLOCK_BOOTTIME), for the owner's timer; 0: none. */
usec_t time_next_expiry(const Time *t);

/* The gate. time_gate_online(): the first online global state, starts the bounded wait (later
 * calls do nothing). time_gate_tick(): the wait's end came (the owner's timer). */
void time_gate_online(Time *t, usec_t now);
void time_gate_tick(Time *t, usec_t now);
bool time_gate_open(const Time *t);

unsigned time_watch_add(Time *t, TimeWatchFn fn, void *userdata, WatchDestroyFn destroy);
void time_watch_remove(Time *t, unsigned id);

/* A span of time in words: "1.250 s", "12 min", "3.5 h". */
const char *time_span_words(usec_t d, char *buf, size_t size);
/* A time as "2026-12-06 00:12:03.250 UTC" (buf: at least 40 bytes). */
const char *time_format_utc(usec_t realtime, char *buf, size_t size);
