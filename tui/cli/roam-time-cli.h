/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* roam time [--json]: roamd's time consensus (org.roam1.Time, docs/time.md): the state, the
 * agreed bound, the gate, and every source with its interval and verdict, one per line. */
int roam_time_run(bool json);

/* What org.roam1.Time's GetAll says; shared with plain mode (roam-plain-time.c). */
typedef struct RoamTimeSource {
        char *kind, *witness, *origin, *verdict, *reason;
        uint64_t realtime, error;
} RoamTimeSource;

typedef struct RoamTimeView {
        char *state, *gate;
        char *clock_state, *clock_reason; /* NULL from a roamd without them */
        uint64_t realtime, error;         /* 0: no bound */
        char **reasons;
        RoamTimeSource *sources;
        size_t n_sources;
} RoamTimeView;

void roam_time_view_done(RoamTimeView *v);
/* Reads a GetAll reply (a{sv}); unknown properties are skipped. Logs nothing. */
int roam_time_view_read(sd_bus_message *reply, RoamTimeView *v);
/* "Time: settled, 2026-12-06 00:12:03.250 UTC ± 512 ms" (without the newline) */
void roam_time_headline(const RoamTimeView *v, char *buf, size_t size);
const char *roam_time_gate_words(const char *gate);
/* What roamd did with the clock (ClockState) in words, and why (ClockReason): "left alone: a
 * clock daemon keeps it (a clock daemon keeps the clock (timedated: ...))"; "" from a roamd
 * without ClockState. */
void roam_time_clock_words(const RoamTimeView *v, char *buf, size_t size);
void roam_time_print_text(const RoamTimeView *v);
