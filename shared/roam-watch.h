/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A list of watchers (callback + userdata) told about events in the order they registered,
 * like iwd's watchlist. Any watcher may be removed at any time, also from inside a
 * notification (itself or another one): a removed entry is only marked and never called
 * again, and the array is compacted once the outermost notification returns. Watchers added
 * during a notification are first told about the next one. */

#include <stdbool.h>
#include <stddef.h>

typedef void (*WatchDestroyFn)(void *userdata);

typedef struct WatchEntry {
        unsigned id; /* 0: removed, waiting for compaction */
        void *callback;
        void *userdata;
        WatchDestroyFn destroy; /* called with userdata on removal, may be NULL */
} WatchEntry;

typedef struct WatchList {
        WatchEntry *entries;
        size_t n, allocated;
        unsigned next_id;
        unsigned notifying; /* depth of nested notifications */
        bool stale;         /* removed entries wait for compaction */
} WatchList;

/* Calls one watcher: the list does not know the callback's type; its owner's dispatcher
 * casts callback and passes the event (ctx). */
typedef void (*WatchCallFn)(void *callback, void *userdata, void *ctx);

/* Returns the new watcher's id (> 0), or 0 when out of memory. */
unsigned watch_list_add(WatchList *wl, void *callback, void *userdata, WatchDestroyFn destroy);
/* Returns whether id was a registered watcher. */
bool watch_list_remove(WatchList *wl, unsigned id);
void watch_list_notify(WatchList *wl, WatchCallFn call, void *ctx);
size_t watch_list_count(const WatchList *wl);
/* Removes every watcher (calling destroy). Not from inside a notification of this list. */
void watch_list_clear(WatchList *wl);
