/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* The client's model of org.roam1.Time (docs/time.md): what the time screen, plain mode and
 * `roam time` show, read from one GetAll (the screen and plain mode follow it with
 * roam-props.c), and its words. */

/* What org.roam1.Time's GetAll says. */
typedef struct RoamTimeSource {
        char *kind, *witness, *origin, *verdict, *reason;
        uint64_t realtime, error; /* the interval at the view's sources_at */
        uint64_t taken;           /* µs CLOCK_REALTIME when measured; 0 unknown */
} RoamTimeSource;

typedef struct RoamTimeView {
        char *state, *gate;
        char *clock_state, *clock_reason; /* NULL from a roamd without them */
        uint64_t realtime, error;         /* 0: no bound; the bound at read_at */
        uint64_t read_at;                 /* µs CLOCK_REALTIME when roamd's answer was read */
        uint64_t sources_at;              /* when the sources' intervals hold; 0 unknown */
        char **reasons;
        RoamTimeSource *sources;
        size_t n_sources;
        /* The time zone (NULL from a roamd without it) */
        char *zone, *zone_state, *zone_reason;
        char **zone_candidates;
} RoamTimeView;

/* The agreed time and a source's middle at now (µs CLOCK_REALTIME): aged from when they were
 * read and when the sources were evaluated, so they tick and stay comparable. */
uint64_t roam_time_bound_now(const RoamTimeView *v, uint64_t now);
uint64_t roam_time_source_now(const RoamTimeView *v, const RoamTimeSource *s, uint64_t now);
/* A source's name, told apart from another sample of the same witness by its family:
 * "link:wifi0 IPv4", "link:wifi0 IPv6"; else its witness. */
void roam_time_source_name(const RoamTimeView *v, size_t i, char *buf, size_t size);
/* "Europe/Berlin (settled: the current zone fits what the networks say)"; "" from a roamd
 * without the zone. */
void roam_time_zone_words(const RoamTimeView *v, char *buf, size_t size);
/* "taken 12 s ago", "" when unknown. */
void roam_time_taken_words(const RoamTimeSource *s, uint64_t now, char *buf, size_t size);

void roam_time_view_done(RoamTimeView *v);
/* Reads a GetAll reply (a{sv}); unknown properties are skipped. Logs nothing. */
int roam_time_view_read(sd_bus_message *reply, RoamTimeView *v);
/* The same into a new view that replaces *view (a RoamTimeView) once read whole: a failed
 * read leaves it as it was (a RoamPropsReadFn). */
int roam_time_view_replace(sd_bus_message *reply, void *view);
/* "Time: settled, 2026-12-06 00:12:03.250 UTC ± 512 ms" (without the newline) */
void roam_time_headline(const RoamTimeView *v, char *buf, size_t size);
const char *roam_time_gate_words(const char *gate);
/* What roamd did with the clock (ClockState) in words, and why (ClockReason): "left alone: a
 * clock daemon keeps it (a clock daemon keeps the clock (timedated: ...))"; "" from a roamd
 * without ClockState. */
void roam_time_clock_words(const RoamTimeView *v, char *buf, size_t size);
void roam_time_print_text(const RoamTimeView *v);
/* "2026-12-06 00:12:03.250 UTC" */
const char *roam_time_utc(uint64_t usec, char *buf, size_t size);
/* One GetAll (the CLI's read); logs, -EHOSTDOWN when roamd is not running. */
int roam_time_load(sd_bus *bus, RoamTimeView *v);
