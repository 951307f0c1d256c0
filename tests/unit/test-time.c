/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The time consensus (service/features/time/roamd-time.c): Marzullo over witnesses, falsetickers
 * with reasons, ties, the lower bound, aging and expiry, the state machine, watchers, the gate. */
#include <unistd.h>

#include "roam-macro.h"
#include "roamd-ntp-message.h"
#include "roamd-time-saved.h"
#include "roamd-time-step.h"
#include "roamd-time.h"
#include "test.h"

/* The table leaves kind out for HTTPS samples (0). */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define SEC  TIME_USEC_PER_SEC
#define MSEC TIME_USEC_PER_MSEC
/* The true time in these tests, and CLOCK_BOOTTIME when the samples are taken. */
#define T0   (1765000000ULL * SEC)
#define BOOT (1000ULL * SEC)

typedef struct In {
        const char *witness; /* NULL ends the list */
        long long offset_ms; /* what the source says, minus the true time */
        unsigned long long error_ms;
        TimeSourceKind kind; /* 0 is TIME_SOURCE_HTTPS_DATE */
} In;

typedef struct Case {
        const char *name;
        In in[8];
        TimeState state;
        long long lo_ms, hi_ms;      /* the agreed span relative to T0 (settled/settling) */
        const char *false_witnesses; /* space separated, in order of the sources */
        const char *reason_has;      /* part of a falseticker's reason, or of the state's */
} Case;

static const Case cases[] = {
    {"none", {{NULL}}, TIME_STATE_UNKNOWN, 0, 0, "", "no source"},
    {"one", {{"link:a", 0, 1500}, {NULL}}, TIME_STATE_SETTLING, -1500, 1500, "", "1 source so far"},
    {"two agree",
     {{"link:a", 200, 1000}, {"link:b", -300, 1000}, {NULL}},
     TIME_STATE_SETTLED,
     -800,
     700,
     "",
     "2 of 2 sources agree"},
    {"two disagree",
     {{"link:a", 0, 1000}, {"link:b", 7200000, 1000}, {NULL}},
     TIME_STATE_DISPUTED,
     0,
     0,
     "link:a link:b",
     "no majority"},
    {"three, one lies by 2 h",
     {{"link:a", 100, 1000}, {"link:b", -7200000, 1000}, {"link:c", -100, 1000}, {NULL}},
     TIME_STATE_SETTLED,
     -900,
     900,
     "link:b",
     "119 min earlier than the time 2 of 3 sources agree on"},
    {"one witness twice is one vote",
     {{"link:a", 0, 1000}, {"link:a", 500, 1000}, {"link:b", 7200000, 1000}, {NULL}},
     TIME_STATE_DISPUTED,
     0,
     0,
     "link:a link:a link:b",
     "at most 1 of 2"},
    {"a witness contradicting itself",
     {{"link:a", 0, 1000},
      {"link:a", 60000, 1000},
      {"link:b", 0, 1000},
      {"link:c", 0, 1000},
      {NULL}},
     TIME_STATE_SETTLED,
     -1000,
     1000,
     "link:a link:a",
     "its own samples disagree"},
    {"tie: two regions, one wide witness",
     {{"link:a", 5000, 5000}, {"link:b", 1000, 1000}, {"link:c", 9000, 1000}, {NULL}},
     TIME_STATE_SETTLED,
     0,
     10000,
     "",
     "3 of 3"},
    {"touching intervals overlap",
     {{"link:a", -1000, 1000}, {"link:b", 1000, 1000}, {NULL}},
     TIME_STATE_SETTLED,
     0,
     0,
     "",
     "2 of 2"},
    {"five, two liars",
     {{"link:a", 0, 500},
      {"link:b", 30000, 500},
      {"link:c", 100, 500},
      {"modem:0", -60000, 2000, TIME_SOURCE_NITZ},
      {"ntp", -50, 100, TIME_SOURCE_NTP},
      {NULL}},
     TIME_STATE_SETTLED,
     -150,
     50,
     "link:b modem:0",
     "later than the time 3 of 5"},
    {"seven, three liars",
     {{"w1", 0, 1000},
      {"w2", 100, 1000},
      {"w3", -100, 1000},
      {"w4", 200, 1000},
      {"w5", 3600000, 1000},
      {"w6", 3600500, 1000},
      {"w7", -3600000, 1000},
      {NULL}},
     TIME_STATE_SETTLED,
     -800,
     900,
     "w5 w6 w7",
     "4 of 7"},
    {"seven, no majority",
     {{"w1", 0, 100},
      {"w2", 10000, 100},
      {"w3", 20000, 100},
      {"w4", 30000, 100},
      {"w5", 40000, 100},
      {"w6", 50000, 100},
      {"w7", 60000, 100},
      {NULL}},
     TIME_STATE_DISPUTED,
     0,
     0,
     "w1 w2 w3 w4 w5 w6 w7",
     "at most 1 of 7"},
    {"manual alone settles",
     {{"manual", 0, 2000, TIME_SOURCE_MANUAL}, {NULL}},
     TIME_STATE_SETTLED,
     -2000,
     2000,
     "",
     "1 of 1"},
    {"lower bound cuts from below",
     {{"disk", -500, 0, TIME_SOURCE_SAVED}, {"link:a", 0, 1000}, {"link:b", 0, 1000}, {NULL}},
     TIME_STATE_SETTLED,
     -500,
     1000,
     "",
     "2 of 2"},
    {"a source before the lower bound is a falseticker",
     {{"disk", 0, 0, TIME_SOURCE_SAVED},
      {"link:a", -7200000, 1000},
      {"link:b", 0, 1000},
      {"link:c", 300, 1000},
      {NULL}},
     TIME_STATE_SETTLED,
     0,
     1000,
     "link:a",
     "earlier than the last known good time"},
    {"a lower bound alone knows nothing",
     {{"disk", 0, 0, TIME_SOURCE_SAVED}, {NULL}},
     TIME_STATE_UNKNOWN,
     0,
     0,
     "",
     "no source"},
    {"agreement before the lower bound is disputed",
     {{"disk", 60000, 0, TIME_SOURCE_SAVED}, {"link:a", 0, 1000}, {"link:b", 0, 1000}, {NULL}},
     TIME_STATE_DISPUTED,
     0,
     0,
     "link:a link:b",
     "earlier than the last known good time"},
};

static TimeSample sample(const In *in, usec_t taken)
{
        TimeSample s = {
            .kind = in->kind,
            .realtime = (usec_t)((long long)T0 + in->offset_ms * (long long)MSEC),
            .error = in->error_ms * MSEC,
            .taken = taken,
            .lower_bound = in->kind == TIME_SOURCE_SAVED,
        };
        snprintf(s.witness, sizeof(s.witness), "%s", in->witness);
        snprintf(s.origin, sizeof(s.origin), "test %s %lld", in->witness, in->offset_ms);
        return s;
}

TEST(table)
{
        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                const Case *k = &cases[c];
                Time *t = NULL;
                char falses[256] = "";
                bool reason_seen;

                ASSERT_OK(time_new(5 * SEC, &t));
                for (const In *in = k->in; in->witness; in++) {
                        TimeSample s = sample(in, BOOT);
                        ASSERT_OK(time_add_sample(t, &s, BOOT));
                }
                reason_seen = strstr(t->reason, k->reason_has) != NULL;
                for (size_t i = 0; i < t->n_sources; i++) {
                        const TimeSource *s = &t->sources[i];
                        if (s->verdict != TIME_VERDICT_FALSETICKER)
                                continue;
                        if (falses[0])
                                strcat(falses, " ");
                        strcat(falses, s->sample.witness);
                        ASSERT_TRUE(s->reason[0]);
                        if (strstr(s->reason, k->reason_has))
                                reason_seen = true;
                }
                if (t->state != k->state || !streq(falses, k->false_witnesses) || !reason_seen)
                        TEST_FAIL("case \"%s\": state %s (%s), falsetickers \"%s\"", k->name,
                                  time_state_to_string(t->state), t->reason, falses);
                if (k->state == TIME_STATE_SETTLED) {
                        usec_t rt, err;
                        ASSERT_OK(time_bound_at(t, BOOT, &rt, &err));
                        long long lo = ((long long)rt - (long long)err - (long long)T0) / 1000;
                        long long hi = ((long long)rt + (long long)err - (long long)T0) / 1000;
                        if (llabs(lo - k->lo_ms) > 1 || llabs(hi - k->hi_ms) > 1)
                                TEST_FAIL("case \"%s\": bound %lld..%lld ms, expected %lld..%lld",
                                          k->name, lo, hi, k->lo_ms, k->hi_ms);
                } else
                        ASSERT_EQ(time_bound_at(t, BOOT, NULL, NULL), -ENODATA);
                time_free(t);
        }
}

TEST(refuses_bad_samples)
{
        Time *t = NULL;
        TimeSample s = sample(&(In){"link:a", 0, 1000}, BOOT);

        ASSERT_OK(time_new(0, &t));
        s.witness[0] = 0;
        ASSERT_EQ(time_add_sample(t, &s, BOOT), -EINVAL);
        s = sample(&(In){"link:a", 0, 1000}, BOOT + SEC);
        ASSERT_EQ(time_add_sample(t, &s, BOOT), -EINVAL); /* taken in the future */
        s = sample(&(In){"link:a", 0, 1000}, BOOT);
        s.kind = _TIME_SOURCE_KIND_MAX;
        ASSERT_EQ(time_add_sample(t, &s, BOOT), -EINVAL);
        s = sample(&(In){"link:a", 0, 1000}, BOOT);
        s.lower_bound = true; /* only the saved time is a lower bound */
        ASSERT_EQ(time_add_sample(t, &s, BOOT), -EINVAL);
        s = sample(&(In){"link:a\x1b[2J", 0, 1000}, BOOT); /* said on the bus: clean text */
        ASSERT_EQ(time_add_sample(t, &s, BOOT), -EINVAL);
        s = sample(&(In){"link:\xc3\x28", 0, 1000}, BOOT);
        ASSERT_EQ(time_add_sample(t, &s, BOOT), -EINVAL);
        ASSERT_EQ(t->n_sources, 0);
        time_free(t);
}

TEST(aging_and_expiry)
{
        Time *t = NULL;
        TimeSample a = sample(&(In){"link:a", 0, 1000}, BOOT);
        TimeSample b = sample(&(In){"link:b", 0, 1000}, BOOT);
        usec_t rt, err, later = BOOT + 600 * SEC;

        ASSERT_OK(time_new(0, &t));
        ASSERT_OK(time_add_sample(t, &a, BOOT));
        ASSERT_OK(time_add_sample(t, &b, BOOT));
        ASSERT_EQ(t->state, TIME_STATE_SETTLED);

        /* 600 s later at 500 ppm: the estimate moved with the boot clock, the error grew 300 ms */
        time_evaluate(t, later);
        ASSERT_OK(time_bound_at(t, later, &rt, &err));
        ASSERT_EQ(rt, T0 + 600 * SEC);
        ASSERT_EQ(err, 1000 * MSEC + 300 * MSEC);
        ASSERT_EQ(time_next_expiry(t), BOOT + TIME_SAMPLE_MAX_AGE_USEC + 1);

        /* a fresh sample of one witness narrows nothing it should not: the old one still counts */
        b = sample(&(In){"link:b", 600 * 1000, 200}, later);
        snprintf(b.origin, sizeof(b.origin), "test link:b 0"); /* the same probe again */
        ASSERT_OK(time_add_sample(t, &b, later));
        ASSERT_EQ(t->n_sources, 2);
        ASSERT_EQ(t->state, TIME_STATE_SETTLED);

        /* past the maximum age link:a expires; one witness is left: settling again */
        time_evaluate(t, BOOT + TIME_SAMPLE_MAX_AGE_USEC + 1);
        ASSERT_EQ(t->sources[0].verdict, TIME_VERDICT_EXPIRED);
        ASSERT_TRUE(strstr(t->sources[0].reason, "min ago") != NULL);
        ASSERT_EQ(t->state, TIME_STATE_SETTLING);

        /* the witness goes away with its link */
        ASSERT_EQ(time_remove_witness(t, "link:b", BOOT + TIME_SAMPLE_MAX_AGE_USEC + 1), 1);
        ASSERT_EQ(t->state, TIME_STATE_UNKNOWN); /* only an expired source is left */
        ASSERT_EQ(time_remove_witness(t, "link:a", BOOT + TIME_SAMPLE_MAX_AGE_USEC + 1), 1);
        ASSERT_EQ(t->state, TIME_STATE_UNKNOWN);
        time_free(t);
}

typedef struct Seen {
        int state, sources, gate;
        TimeState last;
} Seen;

static void on_time(Time *t, TimeChange ev, void *userdata)
{
        Seen *s = userdata;

        switch (ev) {
        case TIME_CHANGE_STATE:
                s->state++;
                s->last = t->state;
                break;
        case TIME_CHANGE_SOURCES:
                s->sources++;
                break;
        case TIME_CHANGE_GATE:
                s->gate++;
                break;
        case _TIME_CHANGE_MAX:
        case _TIME_CHANGE_INVALID:
                break;
        }
}

TEST(watchers_and_gate_by_settling)
{
        Time *t = NULL;
        Seen seen = {};
        TimeSample a = sample(&(In){"link:a", 0, 1000}, BOOT);
        TimeSample b = sample(&(In){"link:b", 0, 1000}, BOOT);

        ASSERT_OK(time_new(5 * SEC, &t));
        ASSERT_TRUE(time_watch_add(t, on_time, &seen, NULL) > 0);
        time_gate_online(t, BOOT);
        ASSERT_TRUE(!time_gate_open(t));
        ASSERT_OK(time_add_sample(t, &a, BOOT));
        ASSERT_EQ(seen.state, 1);
        ASSERT_EQ(seen.last, TIME_STATE_SETTLING);
        ASSERT_OK(time_add_sample(t, &b, BOOT));
        ASSERT_EQ(seen.state, 2);
        ASSERT_EQ(seen.last, TIME_STATE_SETTLED);
        ASSERT_EQ(seen.sources, 2);
        ASSERT_EQ(seen.gate, 1);
        ASSERT_TRUE(time_gate_open(t) && !t->gate_timed_out);
        time_gate_tick(t, BOOT + 10 * SEC); /* the wait's end changes nothing now */
        ASSERT_EQ(seen.gate, 1);
        time_free(t);
}

TEST(gate_by_timeout)
{
        Time *t = NULL;
        Seen seen = {};
        TimeSample a = sample(&(In){"link:a", 0, 1000}, BOOT);

        ASSERT_OK(time_new(5 * SEC, &t));
        ASSERT_TRUE(time_watch_add(t, on_time, &seen, NULL) > 0);
        ASSERT_OK(time_add_sample(t, &a, BOOT));
        time_gate_tick(t, BOOT + 60 * SEC); /* no online verdict yet: no wait runs */
        ASSERT_TRUE(!time_gate_open(t));
        time_gate_online(t, BOOT + 60 * SEC);
        time_gate_online(t, BOOT + 62 * SEC); /* only the first one counts */
        ASSERT_EQ(t->gate_deadline, BOOT + 65 * SEC);
        time_gate_tick(t, BOOT + 64 * SEC);
        ASSERT_TRUE(!time_gate_open(t));
        time_gate_tick(t, BOOT + 65 * SEC);
        ASSERT_TRUE(time_gate_open(t) && t->gate_timed_out);
        ASSERT_EQ(seen.gate, 1);
        ASSERT_EQ(t->state, TIME_STATE_SETTLING);
        time_free(t);
}

TEST(words)
{
        char buf[64];

        ASSERT_STREQ(time_state_to_string(TIME_STATE_DISPUTED), "disputed");
        ASSERT_EQ(time_verdict_from_string("lower-bound"), TIME_VERDICT_LOWER_BOUND);
        ASSERT_STREQ(time_source_kind_to_string(TIME_SOURCE_HTTPS_DATE), "https-date");
        ASSERT_STREQ(time_format_utc(T0 + 250 * MSEC, buf, sizeof(buf)),
                     "2025-12-06 05:46:40.250 UTC");
}

/* Setting the clock: a step only when settled, beyond the bound's error + 1 s, never before
 * the lower bound. */
TEST(clock_decide)
{
        static const struct {
                bool settled;
                usec_t bound, error, clock, lower;
                TimeClockState want;
                const char *reason;
        } steps[] = {
            {false, T0, SEC, T0 - 3600 * SEC, 0, TIME_CLOCK_UNSETTLED, "the time is not settled"},
            /* within the error + 1 s, either way: left alone */
            {true, T0, 2 * SEC, T0 + 3 * SEC, 0, TIME_CLOCK_AGREES,
             "the clock is +3.000 s from the agreed time, within its ± 2.000 s and 1 s"},
            {true, T0, 2 * SEC, T0 - 3 * SEC, 0, TIME_CLOCK_AGREES,
             "the clock is -3.000 s from the agreed time, within its ± 2.000 s and 1 s"},
            {true, T0, 2 * SEC, T0 - 3 * SEC - 1, 0, TIME_CLOCK_PENDING,
             "the clock is -3.000 s from the agreed time, beyond its ± 2.000 s and 1 s"},
            /* an hour late or early: stepped, backwards too */
            {true, T0, 2 * SEC, T0 - 3600 * SEC, 0, TIME_CLOCK_PENDING,
             "the clock is -60 min from the agreed time, beyond its ± 2.000 s and 1 s"},
            {true, T0, 2 * SEC, T0 + 3600 * SEC, T0 - SEC, TIME_CLOCK_PENDING,
             "the clock is +60 min from the agreed time, beyond its ± 2.000 s and 1 s"},
            /* never before the saved lower bound */
            {true, T0, 2 * SEC, T0 + 3600 * SEC, T0 + 60 * SEC, TIME_CLOCK_LOWER_BOUND,
             "the agreed time is 60.000 s earlier than the last known good time 2025-12-06 "
             "05:47:40.000 UTC"},
        };

        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                char reason[256];
                usec_t target = 0;
                TimeClockState s = time_clock_decide(steps[i].settled, steps[i].bound,
                                                     steps[i].error, steps[i].clock, steps[i].lower,
                                                     &target, reason, sizeof(reason));

                ASSERT_EQ(s, steps[i].want);
                ASSERT_STREQ(reason, steps[i].reason);
                ASSERT_EQ(target, s == TIME_CLOCK_PENDING ? steps[i].bound : 0);
        }
        ASSERT_STREQ(time_clock_state_to_string(TIME_CLOCK_DAEMON), "clock-daemon");
        ASSERT_EQ(time_clock_state_from_string("no-timedated"), TIME_CLOCK_NO_TIMEDATED);
}

/* timesyncd's last packet as a sample: T4 + θ at the CLOCK_BOOTTIME it came, ± the root
 * distance, precision, jitter and (while timesyncd slews) θ. */
static NtpMessage packet(int64_t offset, usec_t delay, usec_t at)
{
        return (NtpMessage){
            .leap = 0,
            .version = 4,
            .mode = 4,
            .stratum = 2,
            .precision = -20, /* 0.95 µs: 0 after the shift */
            .root_delay = 10 * MSEC,
            .root_dispersion = 20 * MSEC,
            .origin = at - delay,
            .receive = at - delay + delay / 2 + offset,
            .transmit = at - delay + delay / 2 + offset,
            .destination = at,
            .packet_count = 1,
            .jitter = 1 * MSEC,
        };
}

TEST(ntp_message)
{
        char reason[160];
        TimeSample s;
        NtpMessage m;

        /* an hour ahead, stepped by timesyncd: the true time at receipt, taken 5 s ago */
        m = packet(3600 * SEC, 100 * MSEC, T0);
        ASSERT_OK(ntp_message_to_sample(&m, 5 * SEC, T0 + 3600 * SEC + 5 * SEC, BOOT, &s, reason,
                                        sizeof(reason)));
        ASSERT_EQ(s.kind, TIME_SOURCE_NTP);
        ASSERT_STREQ(s.witness, "ntp");
        ASSERT_EQ(s.realtime, T0 + 3600 * SEC);
        ASSERT_EQ(s.taken, BOOT - 5 * SEC);
        /* root delay/2 + dispersion + round trip/2 + precision + jitter */
        ASSERT_EQ(s.error, 5 * MSEC + 20 * MSEC + 50 * MSEC + 0 + 1 * MSEC);
        /* 100 ms, slewed: the clock now may or may not carry θ yet */
        m = packet(100 * MSEC, 0, T0);
        ASSERT_OK(
            ntp_message_to_sample(&m, 5 * SEC, T0 + 2 * SEC, BOOT, &s, reason, sizeof(reason)));
        ASSERT_EQ(s.realtime, T0 + 100 * MSEC);
        ASSERT_EQ(s.taken, BOOT - 2 * SEC + 100 * MSEC);
        ASSERT_EQ(s.error, 25 * MSEC + 1 * MSEC + 100 * MSEC);
        m = packet(100 * MSEC, 0, T0);
        ASSERT_OK(
            ntp_message_to_sample(&m, 5 * SEC, T0 + 50 * MSEC, BOOT, &s, reason, sizeof(reason)));
        ASSERT_EQ(s.taken, BOOT);

        /* no packet yet */
        m = (NtpMessage){0};
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -ENODATA);
        /* refused, each with its reason */
        m = packet(0, 0, T0);
        m.leap = 3;
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "the server's clock is not synchronised (leap 3)");
        m = packet(0, 0, T0);
        m.stratum = 16;
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "the server's stratum is not 1 to 15");
        m = packet(0, 0, T0);
        m.spike = true;
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "timesyncd called the packet a spike");
        m = packet(0, 12 * SEC, T0);
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "its root distance is beyond timesyncd's maximum");
        m = packet(0, 0, T0);
        m.destination = m.origin - 1;
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "its timestamps are out of order");
        m = packet(3600 * SEC, 0, T0);
        ASSERT_EQ(ntp_message_to_sample(&m, 5 * SEC, T0, BOOT, &s, reason, sizeof(reason)),
                  -EINVAL);
        ASSERT_STREQ(reason, "the packet is from the future of the clock");
}

TEST(saved_file)
{
        static const struct {
                const char *text;
                int r;
                uint64_t usec;
        } parse[] = {
            {"roam-time 1 1765000000250000\n", 0, 1765000000250000ULL},
            {"roam-time 1 1765000000250000", -EBADMSG, 0},
            {"roam-time 1 \n", -EBADMSG, 0},
            {"roam-time 1 0\n", -EBADMSG, 0},
            {"roam-time 1 -5\n", -EBADMSG, 0},
            {"roam-time 1 99999999999999999999\n", -EBADMSG, 0},
            {"roam-time 2 1765000000250000\n", -EBADMSG, 0},
            {"roam-time 1 17650000002500x0\n", -EBADMSG, 0},
            {"", -EBADMSG, 0},
        };
        char dir[] = "/tmp/test-time-XXXXXX", path[64];
        uint64_t v;

        for (size_t i = 0; i < ELEMENTSOF(parse); i++) {
                v = 0;
                if (time_saved_parse(parse[i].text, strlen(parse[i].text), &v) != parse[i].r ||
                    v != parse[i].usec)
                        TEST_FAIL("\"%s\"", parse[i].text);
        }
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        snprintf(path, sizeof(path), "%s/time.state", dir);
        ASSERT_EQ(time_saved_read(path, &v), -ENOENT);
        ASSERT_OK(time_saved_write(path, T0));
        ASSERT_OK(time_saved_read(path, &v));
        ASSERT_EQ(v, T0);
        unlink(path);
        rmdir(dir);
}
