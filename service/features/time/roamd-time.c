/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-time.h"

static const char *const time_state_table[_TIME_STATE_MAX] = {
    [TIME_STATE_UNKNOWN] = "unknown",
    [TIME_STATE_SETTLING] = "settling",
    [TIME_STATE_SETTLED] = "settled",
    [TIME_STATE_DISPUTED] = "disputed",
};
DEFINE_STRING_TABLE_LOOKUP(time_state, TimeState)

static const char *const time_verdict_table[_TIME_VERDICT_MAX] = {
    [TIME_VERDICT_TRUECHIMER] = "truechimer",
    [TIME_VERDICT_FALSETICKER] = "falseticker",
    [TIME_VERDICT_LOWER_BOUND] = "lower-bound",
    [TIME_VERDICT_EXPIRED] = "expired",
};
DEFINE_STRING_TABLE_LOOKUP(time_verdict, TimeVerdict)

static const char *const time_source_kind_table[_TIME_SOURCE_KIND_MAX] = {
    [TIME_SOURCE_HTTPS_DATE] = "https-date",
    [TIME_SOURCE_NTP] = "ntp",
    [TIME_SOURCE_NITZ] = "nitz",
    [TIME_SOURCE_GNSS] = "gnss",
    [TIME_SOURCE_SAVED] = "saved",
    [TIME_SOURCE_MANUAL] = "manual",
    [TIME_SOURCE_DHCP] = "dhcp",
    [TIME_SOURCE_CHRONY] = "chrony",
};
DEFINE_STRING_TABLE_LOOKUP(time_source_kind, TimeSourceKind)

int time_new(usec_t gate_wait, Time **ret)
{
        Time *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->state = TIME_STATE_UNKNOWN;
        snprintf(t->reason, sizeof(t->reason), "no source has said the time yet");
        t->gate_wait = gate_wait;
        *ret = t;
        return 0;
}

Time *time_free(Time *t)
{
        if (!t)
                return NULL;
        watch_list_clear(&t->watches);
        free(t->sources);
        free(t);
        return NULL;
}

unsigned time_watch_add(Time *t, TimeWatchFn fn, void *userdata, WatchDestroyFn destroy)
{
        return watch_list_add(&t->watches, (void *)fn, userdata, destroy);
}

void time_watch_remove(Time *t, unsigned id)
{
        (void)watch_list_remove(&t->watches, id);
}

typedef struct TimeNotify {
        Time *time;
        TimeChange type;
} TimeNotify;

static void time_call(void *callback, void *userdata, void *ctx)
{
        TimeNotify *n = ctx;

        ((TimeWatchFn)callback)(n->time, n->type, userdata);
}

static void time_notify(Time *t, TimeChange type)
{
        watch_list_notify(&t->watches, time_call, &(TimeNotify){t, type});
}

const char *time_format_utc(usec_t realtime, char *buf, size_t size)
{
        time_t sec = (time_t)(realtime / TIME_USEC_PER_SEC);
        struct tm tm;

        if (!gmtime_r(&sec, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
                snprintf(buf, size, "%" PRIu64 " us", realtime);
                return buf;
        }
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, ".%03" PRIu64 " UTC",
                 realtime % TIME_USEC_PER_SEC / TIME_USEC_PER_MSEC);
        return buf;
}

/* "1.250 s", "3 min", "2.0 h": a span said to the user. */
const char *time_span_words(usec_t d, char *buf, size_t size)
{
        if (d < 100 * TIME_USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 ".%03" PRIu64 " s", d / TIME_USEC_PER_SEC,
                         d % TIME_USEC_PER_SEC / TIME_USEC_PER_MSEC);
        else if (d < 7200 * TIME_USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 " min", d / (60 * TIME_USEC_PER_SEC));
        else
                snprintf(buf, size, "%.1f h", (double)d / (3600.0 * TIME_USEC_PER_SEC));
        return buf;
}

/* The one place the state changes: logs old -> new with the reason and tells the watchers.
 * Settled opens the gate. */
static void time_set_state(Time *t, TimeState s, const char *reason)
{
        bool changed = t->state != s;

        if (!changed && streq(t->reason, reason))
                return;
        if (changed)
                log_info("Time: %s -> %s (%s)", time_state_to_string(t->state),
                         time_state_to_string(s), reason);
        t->state = s;
        snprintf(t->reason, sizeof(t->reason), "%s", reason);
        if (changed)
                time_notify(t, TIME_CHANGE_STATE);
        if (s == TIME_STATE_SETTLED && !t->gate_open) {
                t->gate_open = true;
                log_info("Time gate open: the time is settled");
                time_notify(t, TIME_CHANGE_GATE);
        }
}

static bool sample_valid(const TimeSample *s)
{
        return s->kind >= 0 && s->kind < _TIME_SOURCE_KIND_MAX && s->witness[0] &&
               memchr(s->witness, 0, sizeof(s->witness)) &&
               memchr(s->origin, 0, sizeof(s->origin)) &&
               /* said on the bus and to the user: UTF-8 without control characters */
               roam_text_is_clean(s->witness, 0) && roam_text_is_clean(s->origin, 0) &&
               s->realtime > 0 && s->error < 100ULL * 365 * 86400 * TIME_USEC_PER_SEC &&
               (s->lower_bound == (s->kind == TIME_SOURCE_SAVED));
}

int time_add_sample(Time *t, const TimeSample *s, usec_t now)
{
        TimeSource *n;
        size_t i;

        if (!sample_valid(s) || s->taken > now)
                return -EINVAL;
        for (i = 0; i < t->n_sources; i++) {
                const TimeSample *o = &t->sources[i].sample;
                if (o->kind == s->kind && streq(o->witness, s->witness) &&
                    streq(o->origin, s->origin))
                        break;
        }
        if (i == t->n_sources) {
                n = realloc(t->sources, sizeof(*n) * (t->n_sources + 1));
                if (!n)
                        return -ENOMEM;
                t->sources = n;
                t->n_sources++;
        }
        t->sources[i] = (TimeSource){.sample = *s};
        time_evaluate(t, now);
        time_notify(t, TIME_CHANGE_SOURCES);
        return 0;
}

static size_t time_remove_if(Time *t, bool (*match)(const TimeSample *s, const void *arg),
                             const void *arg, usec_t now)
{
        size_t j = 0, removed;

        for (size_t i = 0; i < t->n_sources; i++)
                if (!match(&t->sources[i].sample, arg))
                        t->sources[j++] = t->sources[i];
        removed = t->n_sources - j;
        t->n_sources = j;
        if (removed > 0) {
                time_evaluate(t, now);
                time_notify(t, TIME_CHANGE_SOURCES);
        }
        return removed;
}

static bool match_witness(const TimeSample *s, const void *arg)
{
        return streq(s->witness, (const char *)arg);
}

static bool match_kind(const TimeSample *s, const void *arg)
{
        return s->kind == *(const TimeSourceKind *)arg;
}

size_t time_remove_witness(Time *t, const char *witness, usec_t now)
{
        return time_remove_if(t, match_witness, witness, now);
}

size_t time_remove_kind(Time *t, TimeSourceKind kind, usec_t now)
{
        return time_remove_if(t, match_kind, &kind, now);
}

static bool kind_expires(TimeSourceKind k)
{
        return k != TIME_SOURCE_SAVED && k != TIME_SOURCE_MANUAL;
}

/* A witness: the intersection of its sources' aged intervals. */
typedef struct Witness {
        const char *name;
        usec_t lo, hi;
        bool bad; /* a falseticker before the vote */
        bool manual;
} Witness;

typedef struct Edge {
        usec_t at;
        int step; /* +1 an interval starts, -1 one ends */
} Edge;

static int edge_cmp(const void *a, const void *b)
{
        const Edge *x = a, *y = b;

        if (x->at != y->at)
                return x->at < y->at ? -1 : 1;
        /* Closed intervals: one that starts where another ends overlaps it. */
        return y->step - x->step;
}

static void source_mark(Time *t, const char *witness, TimeVerdict v, const char *reason)
{
        for (size_t i = 0; i < t->n_sources; i++) {
                TimeSource *s = &t->sources[i];
                if (s->verdict != TIME_VERDICT_TRUECHIMER || !streq(s->sample.witness, witness))
                        continue;
                s->verdict = v;
                snprintf(s->reason, sizeof(s->reason), "%s", reason);
        }
}

/* Ages every sample to now and expires the old ones; returns whether a lower bound holds,
 * the latest in *ret_lb. */
static bool samples_age(Time *t, usec_t now, usec_t *ret_lb)
{
        bool have_lb = false;
        usec_t lb = 0;
        char a[32];

        for (size_t i = 0; i < t->n_sources; i++) {
                TimeSource *s = &t->sources[i];
                usec_t age = now > s->sample.taken ? now - s->sample.taken : 0;
                usec_t drift =
                    age / 1000000 * TIME_DRIFT_PPM + age % 1000000 * TIME_DRIFT_PPM / 1000000;
                usec_t mid = s->sample.realtime + age, err = s->sample.error + drift;

                s->lo = mid > err ? mid - err : 0;
                s->hi = mid + err;
                s->verdict = TIME_VERDICT_TRUECHIMER;
                s->reason[0] = 0;
                if (s->sample.lower_bound) {
                        s->verdict = TIME_VERDICT_LOWER_BOUND;
                        snprintf(s->reason, sizeof(s->reason), "the time is not earlier than this");
                        if (!have_lb || s->lo > lb)
                                lb = s->lo;
                        have_lb = true;
                } else if (kind_expires(s->sample.kind) && age > TIME_SAMPLE_MAX_AGE_USEC) {
                        s->verdict = TIME_VERDICT_EXPIRED;
                        snprintf(s->reason, sizeof(s->reason), "measured %s ago",
                                 time_span_words(age, a, sizeof(a)));
                }
        }
        *ret_lb = lb;
        return have_lb;
}

/* One interval per witness, what all its live samples say at once (into w, at most
 * t->n_sources); returns how many. */
static size_t witnesses_collect(Time *t, Witness *w)
{
        size_t n_w = 0;

        for (size_t i = 0; i < t->n_sources; i++) {
                TimeSource *s = &t->sources[i];
                size_t k;

                if (s->verdict != TIME_VERDICT_TRUECHIMER)
                        continue;
                for (k = 0; k < n_w; k++)
                        if (streq(w[k].name, s->sample.witness))
                                break;
                if (k == n_w) {
                        w[n_w++] = (Witness){.name = s->sample.witness, .lo = s->lo, .hi = s->hi};
                } else {
                        w[k].lo = MAX(w[k].lo, s->lo);
                        w[k].hi = MIN(w[k].hi, s->hi);
                }
                if (s->sample.kind == TIME_SOURCE_MANUAL)
                        w[k].manual = true;
        }
        return n_w;
}

/* A witness whose own samples disagree, or that is earlier than the lower bound, is a
 * falseticker; the others' intervals become edges (into e, two per witness). Returns how
 * many witnesses are live. */
static size_t witnesses_check(Time *t, Witness *w, size_t n_w, bool have_lb, usec_t lb, Edge *e,
                              size_t *ret_n_e)
{
        size_t n_live = 0, n_e = 0;
        char reason[200], a[32];

        for (size_t k = 0; k < n_w; k++) {
                if (w[k].lo > w[k].hi) {
                        w[k].bad = true;
                        source_mark(t, w[k].name, TIME_VERDICT_FALSETICKER,
                                    "its own samples disagree with each other");
                } else if (have_lb && w[k].hi < lb) {
                        w[k].bad = true;
                        snprintf(reason, sizeof(reason), "%s earlier than the last known good time",
                                 time_span_words(lb - w[k].hi, a, sizeof(a)));
                        source_mark(t, w[k].name, TIME_VERDICT_FALSETICKER, reason);
                } else {
                        e[n_e++] = (Edge){w[k].lo, +1};
                        e[n_e++] = (Edge){w[k].hi, -1};
                        n_live++;
                }
        }
        *ret_n_e = n_e;
        return n_live;
}

/* Marzullo: the most witnesses any instant lies in (returned), and the span from the first to
 * the last region they cover (ties: all of them). Sorts e. */
static int marzullo(Edge *e, size_t n_e, usec_t *ret_lo, usec_t *ret_hi)
{
        int best = 0, count = 0;
        bool first = true;

        qsort(e, n_e, sizeof(*e), edge_cmp);
        for (size_t i = 0; i < n_e; i++) {
                count += e[i].step;
                best = MAX(best, count);
        }
        count = 0;
        for (size_t i = 0; i < n_e; i++) {
                count += e[i].step;
                if (e[i].step > 0 && count == best) {
                        if (first)
                                *ret_lo = e[i].at;
                        first = false;
                } else if (e[i].step < 0 && count == best - 1 && !first)
                        *ret_hi = e[i].at;
        }
        return best;
}

void time_evaluate(Time *t, usec_t now)
{
        _cleanup_free_ Witness *w = NULL;
        _cleanup_free_ Edge *e = NULL;
        size_t n_w, n_live, n_e = 0, n_true = 0;
        usec_t lb = 0, lo = 0, hi = 0;
        bool have_lb, manual = false;
        char reason[200], a[32], b[32];
        int best;

        w = calloc(t->n_sources + 1, sizeof(*w));
        e = calloc(2 * t->n_sources + 1, sizeof(*e));
        if (!w || !e) {
                log_oom();
                return;
        }

        t->evaluated_at = now;
        have_lb = samples_age(t, now, &lb);
        n_w = witnesses_collect(t, w);
        n_live = witnesses_check(t, w, n_w, have_lb, lb, e, &n_e);
        best = marzullo(e, n_e, &lo, &hi);

        if (n_live == 0) {
                t->has_bound = false;
                if (n_w > 0)
                        time_set_state(t, TIME_STATE_DISPUTED,
                                       "no source is left that can be believed");
                else
                        time_set_state(t, TIME_STATE_UNKNOWN, "no source has said the time yet");
                return;
        }
        if ((size_t)best * 2 <= n_live) {
                /* No majority: nobody can be named wrong, but nothing is agreed either. */
                for (size_t i = 0; i < t->n_sources; i++)
                        if (t->sources[i].verdict == TIME_VERDICT_TRUECHIMER) {
                                t->sources[i].verdict = TIME_VERDICT_FALSETICKER;
                                snprintf(t->sources[i].reason, sizeof(t->sources[i].reason),
                                         "no majority agrees with it");
                        }
                t->has_bound = false;
                snprintf(reason, sizeof(reason), "no majority: at most %d of %zu sources agree",
                         best, n_live);
                time_set_state(t, TIME_STATE_DISPUTED, reason);
                return;
        }

        for (size_t k = 0; k < n_w; k++) {
                if (w[k].bad)
                        continue;
                /* A truechimer's interval reaches into the agreed span. */
                if (w[k].hi < lo || w[k].lo > hi) {
                        usec_t off = w[k].hi < lo ? lo - w[k].hi : w[k].lo - hi;
                        snprintf(reason, sizeof(reason),
                                 "%s %s the time %d of %zu sources agree on",
                                 time_span_words(off, a, sizeof(a)),
                                 w[k].hi < lo ? "earlier than" : "later than", best, n_live);
                        source_mark(t, w[k].name, TIME_VERDICT_FALSETICKER, reason);
                } else {
                        n_true++;
                        manual = manual || w[k].manual;
                }
        }

        if (have_lb && lb > lo) {
                if (lb > hi) {
                        t->has_bound = false;
                        snprintf(reason, sizeof(reason),
                                 "the sources agree on a time %s earlier than the last known good "
                                 "time",
                                 time_span_words(lb - hi, a, sizeof(a)));
                        time_set_state(t, TIME_STATE_DISPUTED, reason);
                        return;
                }
                lo = lb;
        }
        t->has_bound = true;
        t->bound_realtime = lo + (hi - lo) / 2;
        t->bound_error = (hi - lo + 1) / 2;
        t->bound_at = now;

        snprintf(b, sizeof(b), "%" PRIu64 " ms", t->bound_error / TIME_USEC_PER_MSEC);
        if (n_true >= TIME_MIN_WITNESSES || manual) {
                if (n_true < n_live || n_w > n_live)
                        snprintf(reason, sizeof(reason),
                                 "%zu of %zu sources agree within ± %s; %zu falseticker%s", n_true,
                                 n_w, b, n_w - n_true, n_w - n_true == 1 ? "" : "s");
                else
                        snprintf(reason, sizeof(reason), "%zu of %zu sources agree within ± %s",
                                 n_true, n_w, b);
                time_set_state(t, TIME_STATE_SETTLED, reason);
        } else {
                snprintf(reason, sizeof(reason), "%zu source%s so far; %d must agree", n_true,
                         n_true == 1 ? "" : "s", TIME_MIN_WITNESSES);
                time_set_state(t, TIME_STATE_SETTLING, reason);
        }
}

int time_bound_at(const Time *t, usec_t now, usec_t *ret_realtime, usec_t *ret_error)
{
        usec_t age;

        if (t->state != TIME_STATE_SETTLED || !t->has_bound)
                return -ENODATA;
        age = now > t->bound_at ? now - t->bound_at : 0;
        if (ret_realtime)
                *ret_realtime = t->bound_realtime + age;
        if (ret_error)
                *ret_error = t->bound_error + age / 1000000 * TIME_DRIFT_PPM +
                             age % 1000000 * TIME_DRIFT_PPM / 1000000;
        return 0;
}

usec_t time_next_expiry(const Time *t)
{
        usec_t next = 0;

        for (size_t i = 0; i < t->n_sources; i++) {
                const TimeSource *s = &t->sources[i];
                usec_t at = s->sample.taken + TIME_SAMPLE_MAX_AGE_USEC + 1;
                if (!kind_expires(s->sample.kind) || s->verdict == TIME_VERDICT_EXPIRED)
                        continue;
                if (next == 0 || at < next)
                        next = at;
        }
        return next;
}

void time_gate_online(Time *t, usec_t now)
{
        if (t->gate_deadline != 0)
                return;
        t->gate_deadline = now + t->gate_wait;
        if (!t->gate_open && t->gate_wait == 0)
                time_gate_tick(t, now);
}

void time_gate_tick(Time *t, usec_t now)
{
        if (t->gate_open || t->gate_deadline == 0 || now < t->gate_deadline)
                return;
        t->gate_open = true;
        t->gate_timed_out = true;
        log_info("Time gate open after %" PRIu64 " ms: the time is %s (%s)",
                 t->gate_wait / TIME_USEC_PER_MSEC, time_state_to_string(t->state), t->reason);
        time_notify(t, TIME_CHANGE_GATE);
}

bool time_gate_open(const Time *t)
{
        return t->gate_open;
}
