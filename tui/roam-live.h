/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-bus-model.h"

/* The live model: the bus attached to an sd-event loop, the model kept up to date from
 * PropertiesChanged / InterfacesAdded / InterfacesRemoved, and roamd followed through
 * NameOwnerChanged (it may be absent at start, stop, and come back). Whoever owns it (the TUI,
 * plain mode) learns about every change through one handler. */

typedef struct RoamLive RoamLive;

typedef enum RoamLiveState {
        ROAM_LIVE_NO_BUS,      /* the system bus cannot be reached; retried with backoff */
        ROAM_LIVE_NOT_RUNNING, /* nobody owns org.roam1; waiting for NameOwnerChanged */
        ROAM_LIVE_LOADING,     /* roamd is there, its state is being read */
        ROAM_LIVE_READY,       /* the model mirrors roamd */
        ROAM_LIVE_FAILED,      /* roamd answered something this client cannot read */
        _ROAM_LIVE_STATE_MAX,
        _ROAM_LIVE_STATE_INVALID = -EINVAL,
} RoamLiveState;

const char *roam_live_state_to_string(RoamLiveState s);
RoamLiveState roam_live_state_from_string(const char *s);

typedef enum RoamLiveEventType {
        ROAM_LIVE_EVENT_STATE,        /* the live state changed (old_state) */
        ROAM_LIVE_EVENT_MANAGER,      /* manager properties changed (old_verdict: old State) */
        ROAM_LIVE_EVENT_LINK_ADDED,   /* link */
        ROAM_LIVE_EVENT_LINK_REMOVED, /* link, still valid during the handler */
        ROAM_LIVE_EVENT_LINK_CHANGED, /* link; old_verdict / old_reason before the change */
        ROAM_LIVE_EVENT_REPROBE,      /* a Reprobe() answered: link_name, error (NULL: done) */
        _ROAM_LIVE_EVENT_TYPE_MAX,
        _ROAM_LIVE_EVENT_TYPE_INVALID = -EINVAL,
} RoamLiveEventType;

typedef struct RoamLiveEvent {
        RoamLiveEventType type;
        RoamLiveState old_state;
        const RoamLink *link;
        const char *old_verdict;
        const char *old_reason;
        bool verdict_changed; /* old_verdict differs from the current one */
        const char *link_name;
        const sd_bus_error *error;
} RoamLiveEvent;

typedef void (*RoamLiveHandler)(RoamLive *live, const RoamLiveEvent *ev, void *userdata);

int roam_live_new(sd_event *event, RoamLiveHandler handler, void *userdata, RoamLive **ret);
RoamLive *roam_live_free(RoamLive *live);
DEFINE_TRIVIAL_CLEANUP_FUNC(RoamLive *, roam_live_free);

/* Connects (or schedules the retry) and starts loading. Never fails for a missing roamd. */
int roam_live_start(RoamLive *live);

RoamLiveState roam_live_get_state(const RoamLive *live);
/* Why the state is NO_BUS or FAILED, in words; "" otherwise. */
const char *roam_live_get_problem(const RoamLive *live);
/* Never NULL; without roamd it has no links and an empty State. */
const RoamModel *roam_live_get_model(const RoamLive *live);

/* Asks roamd to re-probe the link at path now; the answer comes as ROAM_LIVE_EVENT_REPROBE. */
int roam_live_reprobe(RoamLive *live, const char *path);
