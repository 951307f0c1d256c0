/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Setting the clock without a clock daemon (docs/time.md "Setting the clock"): watches the
 * consensus; when the time is settled and the system clock lies further from the agreed time
 * than the bound's error + TIME_CLOCK_SLACK_USEC, and no clock daemon keeps the clock
 * (timedated's NTP and NTPSynchronized are false; [Time] SetClock=auto), asks timedated to
 * SetTime the agreed time, never one before the saved lower bound. Every step and every
 * refusal has its reason (ClockState, ClockReason on org.roam1.Time; ClockStepped). */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "roamd-time-step.h"

typedef struct Core Core;
typedef struct Time Time;

typedef struct TimeClock {
        Core *core;
        Time *time; /* the consensus it follows */
        /* ClockState or ClockReason changed: the owner's bus glue says so */
        void (*changed)(void *userdata);
        void *userdata;
        unsigned watch;
        sd_bus_slot *query; /* GetAll on timedated: does a clock daemon keep the clock? */
        sd_bus_slot *set;   /* SetTime */
        bool again;         /* the consensus changed while a call was in flight */
        int64_t offset;     /* of the step in flight: the agreed time minus the clock */
        usec_t from, to;    /* the clock and the target of the step in flight */
        TimeClockState state;
        char reason[256];
} TimeClock;

int time_clock_new(Core *core, Time *time, void (*changed)(void *userdata), void *userdata,
                   TimeClock **ret);
/* Cancels a call in flight. Accepts NULL. */
TimeClock *time_clock_free(TimeClock *c);
