/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-bus-model.h"

/* The live model: the bus attached to an sd-event loop, the model (links and apps) kept up to
 * date from PropertiesChanged / InterfacesAdded / InterfacesRemoved, and roamd followed by its
 * bus name (shared/roam-bus-name.c: it may be absent at start, stop, and come back). Whoever
 * owns it (the TUI, plain mode) learns about every change through one handler. */

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
        ROAM_LIVE_EVENT_APP_ADDED,    /* app */
        ROAM_LIVE_EVENT_APP_REMOVED,  /* app, still valid during the handler */
        ROAM_LIVE_EVENT_APP_CHANGED,  /* app; old_app_state / old_app_policy before the change */
        ROAM_LIVE_EVENT_APP_CALL,     /* a call that changes an app answered: app_id, action,
                                       * error (NULL: done) */
        ROAM_LIVE_EVENT_APP_WAKE,     /* app's turn in the ordered wake-up began (App.Wake):
                                       * app, wake_period, wake_reason */
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
        const RoamApp *app;
        const char *old_app_state;  /* roam_app_state_text() before the change */
        const char *old_app_policy; /* roam_app_policy_text() before the change */
        const char *app_id;
        const char *action; /* what the call was to do, in words, as the caller gave it */
        uint64_t wake_period;
        const char *wake_reason; /* turn, overdue, user */
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
/* The bus roamd is reached on, NULL while there is none (for screens that follow more of
 * roamd than the model holds: the Bluetooth screen). */
sd_bus *roam_live_get_bus(const RoamLive *live);

/* The bus the model is read from (NULL while there is none), for screens that read more. */
sd_bus *roam_live_get_bus(const RoamLive *live);

/* Asks roamd to re-probe the link at path now; the answer comes as ROAM_LIVE_EVENT_REPROBE. */
int roam_live_reprobe(RoamLive *live, const char *path);

/* Calls that change an app, all asynchronous: the answer comes as ROAM_LIVE_EVENT_APP_CALL with
 * the app's ID and action (the caller's words for what it asked, for its messages). settings
 * are "key=value" strings, sent in one SetAppPolicy. OnlineFor and Release need the app's
 * object: -ENOENT when the model has no app with that ID. */
int roam_live_set_app_policy(RoamLive *live, const char *id, char *const *settings,
                             const char *action);
int roam_live_reset_app_policy(RoamLive *live, const char *id, const char *action);
int roam_live_app_online_for(RoamLive *live, const char *id, uint64_t usec, const char *action);
int roam_live_app_release(RoamLive *live, const char *id, const char *action);
/* Manager.WakeNow: the app's turn in the ordered wake-up now ("online for a task"). */
int roam_live_wake_now(RoamLive *live, const char *id, const char *action);
