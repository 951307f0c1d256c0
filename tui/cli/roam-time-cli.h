/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

/* roam time [--json]: roamd's time consensus (org.roam1.Time, docs/time.md): the state, the
 * agreed bound, the gate, the clock, the zone, and every source with its interval, verdict
 * and age, one per line. roam time zone [ZONE]: the zone and its candidates, or choose one
 * (SetZone); roam time set DATE [ERROR]: the time by hand (SetManual). */
int roam_time_run(char **args, bool json);
/* The arguments after "time", checked before anything is asked: writes why into buf and
 * returns -EINVAL. */
int roam_time_check_args(char **args, unsigned n, bool json, char *buf, size_t size);
/* "@1796650000", "2026-12-07 14:05", "2026-12-07 14:05:30" (UTC) into µs since the epoch. */
int roam_time_parse_date(const char *s, uint64_t *ret);
