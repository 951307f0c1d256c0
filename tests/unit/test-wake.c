/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-wake.h"
#include "test.h"

#define S(x) ((uint64_t)(x)*1000000ULL)

/* A fake clock and a log of what the queue told. */
static uint64_t clock_now, armed;
static char told[8192];
static uint64_t counters[16];
static bool counters_known;

static uint64_t fake_now(void *u)
{
        return clock_now;
}

static void fake_arm(void *u, uint64_t when)
{
        armed = when;
}

static uint64_t fake_bytes(void *u, const char *id)
{
        if (!counters_known)
                return UINT64_MAX;
        return counters[id[0] - 'a'];
}

static void fake_app_changed(void *u, const char *id, WakeAppState old, WakeAppState new,
                             WakeReason why, uint64_t gen)
{
        size_t n = strlen(told);

        snprintf(told + n, sizeof(told) - n, "%s:%s:%s ", id, wake_app_state_to_string(new),
                 wake_reason_to_string(why));
}

static const WakeOps ops = {
    .now = fake_now,
    .arm = fake_arm,
    .bytes = fake_bytes,
    .app_changed = fake_app_changed,
};

static Wake *setup(unsigned cap)
{
        WakeConfig c;
        Wake *w = NULL;

        clock_now = S(1000);
        armed = UINT64_MAX;
        told[0] = 0;
        counters_known = false;
        memset(counters, 0, sizeof(counters));
        wake_config_init(&c);
        c.cap = cap;
        ASSERT_OK(wake_new(&ops, NULL, &c, &w));
        return w;
}

/* Runs the clock to the armed time, as the event loop would. */
static void advance_to_armed(Wake *w)
{
        ASSERT_TRUE(armed != UINT64_MAX);
        if (armed > clock_now)
                clock_now = armed;
        wake_tick(w);
}

static WakeAppState st(Wake *w, const char *id)
{
        WakeAppState s = _WAKE_APP_INVALID;

        ASSERT_OK(wake_app_state(w, id, &s, NULL));
        return s;
}

TEST(wake_priority_order_one_at_a_time)
{
        Wake *w = setup(1);

        ASSERT_OK(wake_app_put(w, "a", 10, S(10)));
        ASSERT_OK(wake_app_put(w, "b", 90, S(10)));
        ASSERT_OK(wake_app_put(w, "c", 50, S(10)));
        ASSERT_OK(wake_app_put(w, "d", 50, S(10)));
        /* Gated while offline. */
        ASSERT_TRUE(wake_app_gated(w, "a"));
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_OFFLINE);

        wake_set_online(w, true);
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_SETTLING);
        ASSERT_EQ(armed, S(1001)); /* the settle time */
        ASSERT_STREQ(told, "");
        advance_to_armed(w);
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_RUNNING);
        ASSERT_STREQ(told, "b:awake:turn ");
        ASSERT_TRUE(!wake_app_gated(w, "b"));
        ASSERT_EQ(wake_app_done(w, "b"), 0);
        /* Equal priorities: the one listed first. */
        ASSERT_STREQ(told, "b:awake:turn b:done:done c:awake:turn ");
        ASSERT_EQ(wake_app_done(w, "b"), -ESTALE);
        ASSERT_EQ(wake_app_done(w, "a"), -ESTALE);
        ASSERT_EQ(wake_app_done(w, "zz"), -ENOENT);
        ASSERT_OK(wake_app_done(w, "c"));
        ASSERT_OK(wake_app_done(w, "d"));
        ASSERT_OK(wake_app_done(w, "a"));
        ASSERT_STREQ(told, "b:awake:turn b:done:done c:awake:turn c:done:done d:awake:turn "
                           "d:done:done a:awake:turn a:done:done ");
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_FINISHED);
        ASSERT_EQ(armed, UINT64_MAX);
        wake_free(w);
}

TEST(wake_cap_and_slice)
{
        Wake *w = setup(2);

        ASSERT_OK(wake_app_put(w, "a", 30, S(5)));
        ASSERT_OK(wake_app_put(w, "b", 20, S(10)));
        ASSERT_OK(wake_app_put(w, "c", 10, S(10)));
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn b:awake:turn ");
        ASSERT_EQ(st(w, "c"), WAKE_APP_WAITING);
        /* a never says Done: its slice ends it at 5 s, and c starts. */
        ASSERT_EQ(armed, S(1001) + S(5));
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn b:awake:turn a:done:slice c:awake:turn ");
        wake_set_cap(w, 1);
        ASSERT_EQ(st(w, "b"), WAKE_APP_AWAKE); /* a lower cap ends no turn */
        wake_free(w);
}

TEST(wake_slow_link_caps_at_one)
{
        Wake *w = setup(3);
        const char *why = NULL;

        ASSERT_OK(wake_app_put(w, "a", 50, S(10)));
        ASSERT_OK(wake_app_put(w, "b", 40, S(10)));
        ASSERT_OK(wake_app_put(w, "c", 30, S(10)));
        ASSERT_OK(wake_app_put(w, "d", 20, S(10)));
        ASSERT_OK(wake_app_put(w, "e", 10, S(10)));
        /* Measured slow before the first turn: one at a time, whatever the configured cap. */
        ASSERT_OK(wake_set_slow(w, true, "wifi0's probe RTT 400 ms >= 300 ms"));
        ASSERT_EQ(wake_cap(w, &why), 1u);
        ASSERT_STREQ(why, "wifi0's probe RTT 400 ms >= 300 ms");
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        /* The bearer's cap changes while slow: still one. */
        wake_set_cap(w, 4);
        ASSERT_EQ(wake_cap(w, NULL), 1u);
        ASSERT_EQ(st(w, "b"), WAKE_APP_WAITING);
        ASSERT_OK(wake_app_done(w, "a"));
        ASSERT_STREQ(told, "a:awake:turn a:done:done b:awake:turn ");
        /* Fast again: the configured cap, at once. */
        ASSERT_OK(wake_set_slow(w, false, "wifi0's probe RTT 20 ms < 300 ms"));
        ASSERT_EQ(wake_cap(w, &why), 4u);
        ASSERT_TRUE(why == NULL);
        ASSERT_STREQ(told, "a:awake:turn a:done:done b:awake:turn c:awake:turn d:awake:turn "
                           "e:awake:turn ");
        /* Slow once more: the turns running go on (a lower cap ends no turn). */
        ASSERT_OK(wake_set_slow(w, true, "wifi0's probe RTT 900 ms >= 300 ms"));
        ASSERT_EQ(wake_cap(w, NULL), 1u);
        ASSERT_EQ(st(w, "e"), WAKE_APP_AWAKE);
        wake_free(w);
}

TEST(wake_quiet_ends_a_turn)
{
        Wake *w = setup(1);

        counters_known = true;
        ASSERT_OK(wake_app_put(w, "a", 30, S(60)));
        ASSERT_OK(wake_app_put(w, "b", 20, S(60)));
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        ASSERT_EQ(armed, S(1001) + WAKE_QUIET_DEFAULT);
        counters[0] = 5000; /* traffic: the turn goes on */
        advance_to_armed(w);
        ASSERT_EQ(st(w, "a"), WAKE_APP_AWAKE);
        ASSERT_EQ(armed, S(1001) + 2 * WAKE_QUIET_DEFAULT);
        advance_to_armed(w); /* nothing since: quiet */
        ASSERT_STREQ(told, "a:awake:turn a:done:quiet b:awake:turn ");
        wake_free(w);
}

TEST(wake_flap_wakes_no_one_twice)
{
        Wake *w = setup(1);

        ASSERT_OK(wake_app_put(w, "a", 30, S(10)));
        ASSERT_OK(wake_app_put(w, "b", 20, S(10)));
        ASSERT_OK(wake_app_put(w, "c", 10, S(10)));
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_OK(wake_app_done(w, "a"));
        ASSERT_EQ(wake_generation(w), 1);
        /* A flap mid-queue, shorter than the restart time: the same period resumes. */
        clock_now += S(1);
        wake_set_online(w, false);
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_OFFLINE);
        clock_now += S(3);
        wake_set_online(w, true);
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_SETTLING);
        advance_to_armed(w);
        ASSERT_OK(wake_app_done(w, "b"));
        ASSERT_OK(wake_app_done(w, "c"));
        ASSERT_EQ(wake_generation(w), 1);
        ASSERT_STREQ(told, "a:awake:turn a:done:done b:awake:turn b:done:done c:awake:turn "
                           "c:done:done ");
        /* A long outage: one new period, everyone once more, in order. */
        told[0] = 0;
        wake_set_online(w, false);
        clock_now += WAKE_RESTART_DEFAULT;
        wake_set_online(w, true);
        ASSERT_EQ(wake_generation(w), 2);
        ASSERT_TRUE(wake_app_gated(w, "a"));
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:waiting:restart b:waiting:restart c:waiting:restart a:awake:turn ");
        wake_free(w);
}

TEST(wake_max_delay_and_time_gate)
{
        Wake *w = setup(1);
        WakeConfig c;

        wake_config_init(&c);
        c.cap = 1;
        c.max_delay_usec = S(30);
        wake_set_config(w, &c);
        wake_set_time_gate(w, false, "time unverified");
        ASSERT_OK(wake_app_put(w, "a", 90, S(100)));
        ASSERT_OK(wake_app_put(w, "b", 10, S(100)));
        ASSERT_OK(wake_app_put(w, "c", 50, S(100)));
        ASSERT_OK(wake_app_put(w, "d", 5, S(100)));
        ASSERT_EQ(wake_app_register(w, "b", S(20), true), 0);
        ASSERT_EQ(wake_app_register(w, "b", S(20), true), -EEXIST);
        ASSERT_EQ(wake_app_register(w, "x", S(20), true), -ENOENT);
        ASSERT_EQ(wake_app_register(w, "c", 0, false), 0);
        ASSERT_EQ(wake_app_register(w, "d", S(3600), true), 0);
        wake_set_online(w, true);
        advance_to_armed(w);
        /* Settled, time closed: c does not need the time, but a (higher) waits for it, and
         * an app's own word never passes a higher rank. */
        ASSERT_STREQ(told, "");
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_TIME);
        /* b registered a 20 s bound, but only the configured 30 s counts (an app may only
         * wait longer); d asked for an hour and gets it. */
        ASSERT_EQ(armed, S(1030));
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:overdue b:awake:overdue c:awake:overdue ");
        ASSERT_EQ(st(w, "d"), WAKE_APP_WAITING);
        ASSERT_EQ(armed, S(1130)); /* their slices */
        /* b's client goes away: its turn ends, and the registration with it. */
        ASSERT_OK(wake_app_unregister(w, "b", true));
        ASSERT_TRUE(!wake_app_registered(w, "b"));
        ASSERT_EQ(st(w, "b"), WAKE_APP_DONE);
        wake_free(w);
}

/* NeedsTime=false goes through the closed time gate in its rank: once no app that needs the
 * time ranks before it. */
TEST(wake_no_time_needed_goes_in_its_rank)
{
        Wake *w = setup(1);

        wake_set_time_gate(w, false, "time unverified");
        ASSERT_OK(wake_app_put(w, "a", 90, S(100)));
        ASSERT_OK(wake_app_put(w, "b", 50, S(100)));
        ASSERT_OK(wake_app_put(w, "c", 10, S(100)));
        ASSERT_OK(wake_app_register(w, "a", 0, false));
        ASSERT_OK(wake_app_register(w, "c", 0, false));
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        ASSERT_OK(wake_app_done(w, "a"));
        /* b needs the time: c, below it, waits too */
        ASSERT_STREQ(told, "a:awake:turn a:done:done ");
        ASSERT_EQ(wake_queue_state(w), WAKE_QUEUE_TIME);
        wake_set_time_gate(w, true, "time settled");
        ASSERT_STREQ(told, "a:awake:turn a:done:done b:awake:turn ");
        wake_free(w);
}

/* A registered estimate never makes a turn pipelined (its place freed while it fetches):
 * only policy's WakeBytes= does, which a registered estimate may raise. */
TEST(wake_registered_estimate_only_raises_policy)
{
        Wake *w = setup(1);

        ASSERT_OK(wake_app_put(w, "a", 90, S(60)));
        ASSERT_OK(wake_app_put(w, "b", 50, S(60)));
        ASSERT_OK(wake_app_register(w, "a", 0, true));
        ASSERT_OK(wake_app_set_bytes(w, "a", 0, 1));
        counters_known = true;
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        for (int i = 1; i <= 10; i++) {
                clock_now += S(1) / 10;
                counters[0] = 100 * i;
                wake_tick(w);
        }
        ASSERT_STREQ(told, "a:awake:turn ");
        ASSERT_EQ(st(w, "b"), WAKE_APP_WAITING);
        ASSERT_OK(wake_app_done(w, "a"));
        ASSERT_STREQ(told, "a:awake:turn a:done:done b:awake:turn ");
        wake_free(w);
}

TEST(wake_now_jumps_the_queue)
{
        Wake *w = setup(1);

        ASSERT_OK(wake_app_put(w, "a", 90, S(100)));
        ASSERT_OK(wake_app_put(w, "b", 10, S(100)));
        ASSERT_OK(wake_app_put(w, "c", 20, S(100)));
        /* Asked while offline: first once the network is back. */
        ASSERT_OK(wake_app_now(w, "b"));
        ASSERT_EQ(wake_app_now(w, "nope"), -ENOENT);
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "b:awake:user ");
        /* Asked while the queue runs: now, over the cap. */
        ASSERT_OK(wake_app_now(w, "c"));
        ASSERT_STREQ(told, "b:awake:user c:awake:user ");
        ASSERT_EQ(st(w, "a"), WAKE_APP_WAITING);
        /* Off the list: its gate opens, it is no longer known. */
        ASSERT_OK(wake_app_put(w, "a", -1, 0));
        ASSERT_TRUE(!wake_app_gated(w, "a"));
        ASSERT_EQ(wake_app_state(w, "a", NULL, NULL), -ENOENT);
        ASSERT_EQ(wake_app_put(w, "d", 101, S(1)), -EINVAL);
        wake_free(w);
}

/* With a gate to open (WakeOps.open), an app whose turn came is told (AWAKE, its Wake) only
 * once roamd says the gate is open in the kernel; a failed opening keeps it untold, with
 * reason gate; an older period's opening is void. */
static char opening[256];

static void fake_open(void *u, const char *id, uint64_t gen)
{
        size_t n = strlen(opening);

        snprintf(opening + n, sizeof(opening) - n, "%s@%llu ", id, (unsigned long long)gen);
}

static const WakeOps gate_ops = {
    .now = fake_now,
    .arm = fake_arm,
    .bytes = fake_bytes,
    .app_changed = fake_app_changed,
    .open = fake_open,
};

TEST(wake_told_only_once_its_gate_is_open)
{
        WakeConfig c;
        Wake *w = NULL;
        WakeReason why;
        WakeAppState s;

        clock_now = S(1000);
        armed = UINT64_MAX;
        told[0] = opening[0] = 0;
        counters_known = false;
        wake_config_init(&c);
        ASSERT_OK(wake_new(&gate_ops, NULL, &c, &w));
        ASSERT_OK(wake_app_put(w, "a", 90, S(10)));
        ASSERT_OK(wake_app_put(w, "b", 50, S(10)));
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:opening:turn ");
        ASSERT_STREQ(opening, "a@1 ");
        ASSERT_TRUE(!wake_app_gated(w, "a"));      /* out of the set in the next pass */
        ASSERT_EQ(wake_app_done(w, "a"), -ESTALE); /* no turn it was told of */
        ASSERT_EQ(st(w, "b"), WAKE_APP_WAITING);   /* the opening one holds the cap */
        /* The pass failed: not told, and why. */
        ASSERT_OK(wake_app_open_failed(w, "a", 1));
        ASSERT_STREQ(told, "a:opening:turn a:opening:gate ");
        ASSERT_OK(wake_app_state(w, "a", &s, &why));
        ASSERT_EQ(s, WAKE_APP_OPENING);
        ASSERT_EQ(why, WAKE_REASON_GATE);
        ASSERT_EQ(wake_app_opened(w, "a", 0), -ESTALE);
        ASSERT_EQ(wake_app_opened(w, "b", 1), -ESTALE);
        ASSERT_EQ(wake_app_opened(w, "zz", 1), -ENOENT);
        /* The retry committed: told, with the reason its turn began. */
        ASSERT_OK(wake_app_opened(w, "a", 1));
        ASSERT_STREQ(told, "a:opening:turn a:opening:gate a:awake:turn ");
        ASSERT_OK(wake_app_done(w, "a"));
        ASSERT_STREQ(told, "a:opening:turn a:opening:gate a:awake:turn a:done:done "
                           "b:opening:turn ");
        /* A new period while b's gate opens: that opening is void. */
        told[0] = 0;
        wake_set_online(w, false);
        clock_now += WAKE_RESTART_DEFAULT;
        wake_set_online(w, true);
        ASSERT_STREQ(told, "a:waiting:restart b:waiting:restart ");
        ASSERT_EQ(wake_app_opened(w, "b", 1), -ESTALE);
        ASSERT_TRUE(wake_app_gated(w, "b"));
        wake_free(w);
}

/* Pipelining: a turn with an estimate (WakeBytes=) lets the next app start once its counters
 * say it ends within the lead (the time the app took from its Wake to its first byte), so
 * the next one's first byte comes as its last does; without an estimate, one at a time. */
#define MS(x) ((uint64_t)(x)*1000ULL)
TEST(wake_pipelines_a_turn_that_ends_within_the_lead)
{
        Wake *w = setup(1);

        ASSERT_OK(wake_app_put(w, "a", 90, S(60)));
        ASSERT_OK(wake_app_put(w, "b", 50, S(60)));
        ASSERT_OK(wake_app_put(w, "c", 10, S(60)));
        ASSERT_OK(wake_app_set_bytes(w, "a", 1000, UINT64_MAX));
        ASSERT_EQ(wake_app_set_bytes(w, "zz", 1, 0), -ENOENT);
        counters_known = true;
        wake_set_online(w, true);
        advance_to_armed(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        /* its first bytes 100 ms after its Wake: the lead */
        clock_now += MS(100);
        counters[0] = 10;
        wake_tick(w);
        /* 100 bytes in 100 ms: 890 ms to go, more than the lead */
        clock_now += MS(100);
        counters[0] = 110;
        wake_tick(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        ASSERT_TRUE(armed <= clock_now + MS(100));
        clock_now += MS(700);
        counters[0] = 810;
        wake_tick(w);
        ASSERT_STREQ(told, "a:awake:turn ");
        /* 90 ms to go: b starts while a ends; c waits (b holds the cap, a is ending) */
        clock_now += MS(100);
        counters[0] = 910;
        wake_tick(w);
        ASSERT_STREQ(told, "a:awake:turn b:awake:turn ");
        ASSERT_EQ(st(w, "a"), WAKE_APP_AWAKE);
        ASSERT_EQ(st(w, "c"), WAKE_APP_WAITING);
        ASSERT_OK(wake_app_done(w, "a"));
        ASSERT_EQ(st(w, "c"), WAKE_APP_WAITING);
        /* b has no estimate: c starts when b's turn ends */
        clock_now += MS(500);
        counters[1] = 5000;
        wake_tick(w);
        ASSERT_EQ(st(w, "c"), WAKE_APP_WAITING);
        ASSERT_OK(wake_app_done(w, "b"));
        ASSERT_STREQ(told, "a:awake:turn b:awake:turn a:done:done b:done:done c:awake:turn ");
        wake_free(w);
}

TEST(wake_words)
{
        for (WakeQueueState s = 0; s < _WAKE_QUEUE_MAX; s++)
                ASSERT_EQ(wake_queue_state_from_string(wake_queue_state_to_string(s)), s);
        for (WakeAppState s = 0; s < _WAKE_APP_MAX; s++)
                ASSERT_EQ(wake_app_state_from_string(wake_app_state_to_string(s)), s);
        for (WakeReason s = 0; s < _WAKE_REASON_MAX; s++)
                ASSERT_EQ(wake_reason_from_string(wake_reason_to_string(s)), s);
}
