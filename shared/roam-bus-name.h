/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether a well-known name has an owner on the bus, followed by NameOwnerChanged (the first
 * answer asked with GetNameOwner): read without a blocking call to the bus daemon. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct BusNameWatch BusNameWatch;

/* A NameOwnerChanged of the name: owner is the new one, "" when the name went away. What it
 * returns goes back to sd-bus as the signal handler's. */
typedef int (*BusNameWatchFn)(BusNameWatch *w, const char *owner, void *userdata);

typedef enum BusNameWatchFlags {
        /* fn is told GetNameOwner's first answer too ("" when the name has no owner): for a
         * client that must not activate its peer (it asks only a running one), or must know the
         * peer's unique name before it talks to it (it checks who sends the signals and calls). */
        BUS_NAME_WATCH_TELL_FIRST = 1 << 0,
} BusNameWatchFlags;

/* fn (may be NULL) is told every change the bus daemon signals, not GetNameOwner's first
 * answer: a client that wants the peer at once asks it (a call activates it, if it can be). */
int bus_name_watch_new(sd_bus *bus, const char *name, BusNameWatchFn fn, void *userdata,
                       BusNameWatch **ret);
int bus_name_watch_new_full(sd_bus *bus, const char *name, BusNameWatchFlags flags,
                            BusNameWatchFn fn, void *userdata, BusNameWatch **ret);
/* Accepts NULL. */
BusNameWatch *bus_name_watch_free(BusNameWatch *w);
/* False for NULL and until the bus daemon has said. */
bool bus_name_watch_has_owner(const BusNameWatch *w);
/* The owner's unique name (":1.42"), as fn was last told; NULL for NULL, while the name has
 * no owner and until the bus daemon has said. */
const char *bus_name_watch_owner(const BusNameWatch *w);
