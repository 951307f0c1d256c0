/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a client of a time source (ModemManager, oFono) tells its time watchers: a checked
 * sample, a zone hint, or that a witness went away. */

#include <errno.h>
#include <stdio.h>

#include "roam-watch.h"
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

static inline void time_event_dispatch_(void *callback, void *userdata, void *ctx)
{
        ((TimeEventFn)callback)(ctx, userdata);
}

/* Tells every TimeEventFn in l (a time source client's watch list) about ev. */
static inline void time_event_notify(WatchList *l, const TimeEvent *ev)
{
        watch_list_notify(l, time_event_dispatch_, (void *)ev);
}

/* A modem's witness of time: "modem:PATH" (ModemManager's and oFono's paths never meet). */
static inline void time_event_modem_witness(const char *path, char *buf, size_t size)
{
        snprintf(buf, size, "modem:%s", path);
}
