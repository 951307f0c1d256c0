/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sd-event timers of the module under test, caught at link time (the test is linked with
 * -Wl,--wrap= for sd_event_add_time(_relative), sd_event_source_set_time(_relative) and
 * clock_now_usec, see meson.build): each timer with the delay it was last armed for, due only
 * when the test fires it (sd-event is told a day later), and a clock the module reads
 * (clock_now_usec()) that moves only when a timer is fired (by its delay) or the test moves
 * it. No wall-clock time is waited for or measured in these tests. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include <time.h>

typedef struct FakeTimer FakeTimer;

/* The last timer made with this userdata (the module's object), NULL none; _clock: of that
 * clock (a module with more than one timer per object). */
FakeTimer *fake_timer_of(const void *userdata);
FakeTimer *fake_timer_of_clock(const void *userdata, clockid_t clock);
bool fake_timer_armed(const FakeTimer *t);
/* The delay (µs) it was last armed with, from the fake clock's time then. */
uint64_t fake_timer_delay(const FakeTimer *t);
/* How often it was dispatched. */
unsigned fake_timer_fired(const FakeTimer *t);
/* The clock moves on by the timer's delay, the timer is made due and the loop runs until it
 * was dispatched (and what that set off on the loop's next turns). */
void fake_timer_fire(sd_event *e, FakeTimer *t);

/* CLOCK_MONOTONIC and CLOCK_BOOTTIME as clock_now_usec() reports them to the module. */
extern uint64_t fake_monotonic_usec;
/* CLOCK_REALTIME as clock_now_usec() reports it (starts 2026-01-01 00:00 UTC). */
extern uint64_t fake_realtime_usec;
/* All fake clocks move on by usec. */
void fake_clock_advance(uint64_t usec);

/* The armed timer due first (the smallest delay), NULL none. */
FakeTimer *fake_timer_next(void);
/* Runs the loop and fires every armed timer due now (delay 0), and those they arm for now. */
void fake_timers_fire_due(sd_event *e);

/* Drops every timer (their sources are unreferenced); the clocks go back to their start. */
void fake_timers_reset(void);
/* Runs what is due on the loop now (deferred work), no waiting. */
void fake_loop_run(sd_event *e);
