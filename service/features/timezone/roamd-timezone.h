/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The time zone decision. Witnesses hand in TimeZoneHints (a modem's NITZ offset + MCC, a
 * lease's RFC 4833 zone, a manual choice); each names a set of candidate zones (roamd-tzdb.h)
 * or, with an offset alone, constrains them. The zone is changed only when the candidates
 * agree on one zone and two independent witnesses support it, never on a single NITZ;
 * otherwise the state says the user must choose, with the candidates listed. A manual choice
 * is the user's and wins. Every change and refusal has a reason word. The change itself goes
 * through timedated (roamd-client-timedated.h). */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "roam-watch.h"
#include "roamd-time-sample.h"
#include "roamd-tzdb.h"

typedef enum ZoneState {
        ZONE_STATE_UNKNOWN,  /* no witness yet */
        ZONE_STATE_SETTLED,  /* in the zone the witnesses (or the user) agree on */
        ZONE_STATE_CHOOSE,   /* the user must choose among the candidates */
        ZONE_STATE_DISPUTED, /* the witnesses contradict each other: the user must choose */
        _ZONE_STATE_MAX,
        _ZONE_STATE_INVALID = -EINVAL,
} ZoneState;

const char *zone_state_to_string(ZoneState s);

typedef struct ZoneDecision {
        ZoneState state;
        const char *reason; /* one word, static */
        char zone[64];      /* SETTLED: the zone to be in */
        bool change;        /* SETTLED and not the current zone: SetTimezone */
        char **candidates;  /* sorted; what the user chooses from (CHOOSE, DISPUTED) */
} ZoneDecision;

void zone_decision_done(ZoneDecision *d);

/* Decides from the hints (the latest of each witness). current: the system's zone ("" or
 * NULL when unknown); now: UTC µs, the time the offsets are compared at. */
int timezone_decide(TzDb *db, const TimeZoneHint *hints, size_t n, const char *current, usec_t now,
                    ZoneDecision *ret);

/* A hint from a lease's RFC 4833 options (tz_name preferred, else the POSIX string's offset
 * now); -ENODATA when the lease names no usable zone. */
int timezone_hint_from_lease(const char *ifname, const char *tz_name, const char *tz_posix,
                             usec_t now, usec_t taken, TimeZoneHint *ret);

typedef struct Timezone Timezone;
typedef void (*TimezoneWatchFn)(Timezone *tz, void *userdata);

/* Owns db. bus NULL: no timedated (tests of the decision alone). */
int timezone_new(sd_bus *bus, TzDb *db, Timezone **ret);
Timezone *timezone_free(Timezone *tz);

/* Replaces the witness's earlier hint and decides again. */
int timezone_add_hint(Timezone *tz, const TimeZoneHint *h);
/* The witness is gone (modem removed, lease lost). */
int timezone_drop_witness(Timezone *tz, const char *witness);
/* The user's choice (already authorized): -EINVAL for a name that is no zone. */
int timezone_set_manual(Timezone *tz, const char *zone);

ZoneState timezone_state(Timezone *tz);
const char *timezone_reason(Timezone *tz);
const char *timezone_zone(Timezone *tz); /* the system's zone, "" unknown */
char **timezone_candidates(Timezone *tz);

/* Told after every change of state, reason, candidates or zone. */
unsigned timezone_watch_add(Timezone *tz, TimezoneWatchFn fn, void *userdata,
                            WatchDestroyFn destroy);
void timezone_watch_remove(Timezone *tz, unsigned id);
