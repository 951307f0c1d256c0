/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fake-timers.h"
#include "roam-macro.h"
#include "test.h"

struct FakeTimer {
        sd_event_source *source; /* a reference of our own: valid until the reset */
        sd_event_time_handler_t handler;
        void *userdata;
        clockid_t clock;
        uint64_t delay;
        unsigned fired;
};

#define FAKE_TIMERS_MAX 64
static FakeTimer timers[FAKE_TIMERS_MAX];
static size_t n_timers;

#define FAKE_MONOTONIC_START (1000 * USEC_PER_SEC)
#define FAKE_REALTIME_START  (UINT64_C(1767225600) * USEC_PER_SEC) /* 2026-01-01 00:00 UTC */
/* where sd-event is told the timers are: never reached while a test runs */
#define FAKE_FAR_USEC (24 * 3600 * USEC_PER_SEC)
uint64_t fake_monotonic_usec = FAKE_MONOTONIC_START;
uint64_t fake_realtime_usec = FAKE_REALTIME_START;

int __real_sd_event_add_time(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec,
                             uint64_t accuracy, sd_event_time_handler_t callback, void *userdata);
int __real_sd_event_add_time_relative(sd_event *e, sd_event_source **ret, clockid_t clock,
                                      uint64_t usec, uint64_t accuracy,
                                      sd_event_time_handler_t callback, void *userdata);
int __real_sd_event_source_set_time(sd_event_source *s, uint64_t usec);
int __real_sd_event_source_set_time_relative(sd_event_source *s, uint64_t usec);
uint64_t __real_clock_now_usec(clockid_t clock);
int __wrap_sd_event_add_time(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec,
                             uint64_t accuracy, sd_event_time_handler_t callback, void *userdata);
int __wrap_sd_event_add_time_relative(sd_event *e, sd_event_source **ret, clockid_t clock,
                                      uint64_t usec, uint64_t accuracy,
                                      sd_event_time_handler_t callback, void *userdata);
int __wrap_sd_event_source_set_time(sd_event_source *s, uint64_t usec);
int __wrap_sd_event_source_set_time_relative(sd_event_source *s, uint64_t usec);
uint64_t __wrap_clock_now_usec(clockid_t clock);
int __wrap_sd_event_now(sd_event *e, clockid_t clock, uint64_t *ret);

static uint64_t fake_now(clockid_t clock)
{
        return clock == CLOCK_REALTIME ? fake_realtime_usec : fake_monotonic_usec;
}

static int on_time(sd_event_source *s, uint64_t usec, void *userdata)
{
        FakeTimer *t = userdata;

        t->fired++;
        /* the module sees the fake clock's time, as sd-event would pass its own */
        return t->handler(s, fake_now(t->clock), t->userdata);
}

static int add_timer(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t delay,
                     uint64_t accuracy, sd_event_time_handler_t callback, void *userdata)
{
        FakeTimer *t;
        int r;

        if (!ret || n_timers >= FAKE_TIMERS_MAX)
                TEST_FAIL("fake timers: a floating timer, or too many");
        t = &timers[n_timers];
        *t = (FakeTimer){.handler = callback, .userdata = userdata, .clock = clock, .delay = delay};
        r = __real_sd_event_add_time_relative(e, ret, clock, FAKE_FAR_USEC, accuracy, on_time, t);
        if (r < 0)
                return r;
        t->source = sd_event_source_ref(*ret);
        n_timers++;
        return r;
}

int __wrap_sd_event_add_time(sd_event *e, sd_event_source **ret, clockid_t clock, uint64_t usec,
                             uint64_t accuracy, sd_event_time_handler_t callback, void *userdata)
{
        uint64_t now = fake_now(clock);

        return add_timer(e, ret, clock, usec > now ? usec - now : 0, accuracy, callback, userdata);
}

int __wrap_sd_event_add_time_relative(sd_event *e, sd_event_source **ret, clockid_t clock,
                                      uint64_t usec, uint64_t accuracy,
                                      sd_event_time_handler_t callback, void *userdata)
{
        return add_timer(e, ret, clock, usec, accuracy, callback, userdata);
}

static FakeTimer *timer_of_source(const sd_event_source *s)
{
        for (size_t i = n_timers; i > 0; i--)
                if (timers[i - 1].source == s)
                        return &timers[i - 1];
        return NULL;
}

int __wrap_sd_event_source_set_time(sd_event_source *s, uint64_t usec)
{
        FakeTimer *t = timer_of_source(s);
        uint64_t now;

        if (!t)
                return __real_sd_event_source_set_time(s, usec);
        now = fake_now(t->clock);
        t->delay = usec > now ? usec - now : 0;
        return __real_sd_event_source_set_time_relative(s, FAKE_FAR_USEC);
}

int __wrap_sd_event_source_set_time_relative(sd_event_source *s, uint64_t usec)
{
        FakeTimer *t = timer_of_source(s);

        if (!t)
                return __real_sd_event_source_set_time_relative(s, usec);
        t->delay = usec;
        return __real_sd_event_source_set_time_relative(s, FAKE_FAR_USEC);
}

uint64_t __wrap_clock_now_usec(clockid_t clock)
{
        if (clock == CLOCK_REALTIME || clock == CLOCK_MONOTONIC || clock == CLOCK_BOOTTIME)
                return fake_now(clock);
        return __real_clock_now_usec(clock);
}

/* Only in a test linked with --wrap=sd_event_now (a module that reads the loop's time): the
 * fake clocks, so absolute timers made from it have the delays the module meant. */
int __wrap_sd_event_now(sd_event *e, clockid_t clock, uint64_t *ret)
{
        if (clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC && clock != CLOCK_BOOTTIME)
                return -EOPNOTSUPP;
        *ret = fake_now(clock);
        return 0;
}

FakeTimer *fake_timer_next(void)
{
        FakeTimer *next = NULL;

        for (size_t i = 0; i < n_timers; i++)
                if (fake_timer_armed(&timers[i]) && (!next || timers[i].delay < next->delay))
                        next = &timers[i];
        return next;
}

void fake_timers_fire_due(sd_event *e)
{
        FakeTimer *t;

        fake_loop_run(e);
        for (int i = 0; i < 100 && (t = fake_timer_next()) && t->delay == 0; i++)
                fake_timer_fire(e, t);
}

FakeTimer *fake_timer_of(const void *userdata)
{
        for (size_t i = n_timers; i > 0; i--)
                if (timers[i - 1].userdata == userdata)
                        return &timers[i - 1];
        return NULL;
}

FakeTimer *fake_timer_of_clock(const void *userdata, clockid_t clock)
{
        for (size_t i = n_timers; i > 0; i--)
                if (timers[i - 1].userdata == userdata && timers[i - 1].clock == clock)
                        return &timers[i - 1];
        return NULL;
}

bool fake_timer_armed(const FakeTimer *t)
{
        int enabled = SD_EVENT_OFF;

        ASSERT_TRUE(t);
        ASSERT_OK(sd_event_source_get_enabled(t->source, &enabled));
        return enabled != SD_EVENT_OFF;
}

uint64_t fake_timer_delay(const FakeTimer *t)
{
        ASSERT_TRUE(t);
        return t->delay;
}

unsigned fake_timer_fired(const FakeTimer *t)
{
        ASSERT_TRUE(t);
        return t->fired;
}

void fake_clock_advance(uint64_t usec)
{
        fake_monotonic_usec += usec;
        fake_realtime_usec += usec;
}

void fake_timer_fire(sd_event *e, FakeTimer *t)
{
        unsigned before;

        ASSERT_TRUE(fake_timer_armed(t));
        before = t->fired;
        fake_clock_advance(t->delay);
        /* due at once: sd-event's own clock is never waited for */
        ASSERT_OK(__real_sd_event_source_set_time(t->source, 1));
        for (int i = 0; i < 100 && t->fired == before; i++)
                ASSERT_OK(sd_event_run(e, 0));
        ASSERT_EQ(t->fired, before + 1);
        fake_loop_run(e);
}

void fake_loop_run(sd_event *e)
{
        for (int i = 0; i < 100 && sd_event_run(e, 0) > 0; i++)
                ;
}

void fake_timers_reset(void)
{
        for (size_t i = 0; i < n_timers; i++)
                sd_event_source_unref(timers[i].source);
        n_timers = 0;
        fake_monotonic_usec = FAKE_MONOTONIC_START;
        fake_realtime_usec = FAKE_REALTIME_START;
}
