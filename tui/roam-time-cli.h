/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* roam time [--json]: roamd's time consensus (org.roam1.Time, docs/time.md): the state, the
 * agreed bound, the gate, and every source with its interval and verdict, one per line. */
int roam_time_run(bool json);
