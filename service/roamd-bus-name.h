/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether a well-known name has an owner on the bus, followed by NameOwnerChanged (the first
 * answer asked with GetNameOwner): read without a blocking call to the bus daemon. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

typedef struct BusNameWatch BusNameWatch;

int bus_name_watch_new(sd_bus *bus, const char *name, BusNameWatch **ret);
/* Accepts NULL. */
BusNameWatch *bus_name_watch_free(BusNameWatch *w);
/* False for NULL and until the bus daemon has said. */
bool bus_name_watch_has_owner(const BusNameWatch *w);
