/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a client of a time source (ModemManager, oFono) tells its time watchers: a checked
 * sample, a zone hint, or that a witness went away. */

#include <errno.h>

#include "roamd-time-sample.h"

typedef enum TimeEventType {
        TIME_EVENT_SAMPLE, /* sample: a checked time */
        TIME_EVENT_HINT,   /* hint: the zone the witness's network says */
        TIME_EVENT_GONE,   /* witness: the source went away */
        _TIME_EVENT_TYPE_MAX,
        _TIME_EVENT_TYPE_INVALID = -EINVAL,
} TimeEventType;

typedef struct TimeEvent {
        TimeEventType type;
        const TimeSample *sample;
        const TimeZoneHint *hint;
        const char *witness;
} TimeEvent;

typedef void (*TimeEventFn)(const TimeEvent *ev, void *userdata);
