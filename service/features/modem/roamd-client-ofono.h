/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of oFono (org.ofono) for one fact: is a cellular link roaming? Each modem's
 * NetworkRegistration Status ("registered" home, "roaming") is matched to a link through the
 * Interface in the Settings of the modem's connection contexts (ConnectionManager.GetContexts).
 * Changes arrive as PropertyChanged, ModemAdded/Removed and ContextAdded/Removed; before any
 * change is applied the owner's callback runs.
 *
 * Each modem with org.ofono.NetworkTime is also a witness of time ("modem:PATH"):
 * GetNetworkTime when the modem is seen and the NetworkTimeChanged signal after (a dict: UTC,
 * Timezone, DST, MobileCountryCode, MobileNetworkCode, Received), checked by roamd-nitz.c and
 * handed to the time watchers as TimeSamples and TimeZoneHints. A modem without the interface
 * answers GetNetworkTime with an error and is no witness. */

#include <systemd/sd-bus.h>

#include "roam-watch.h"
#include "roamd-time-event.h"

typedef struct OfonoClient OfonoClient;
typedef void (*OfonoClientChangeFn)(OfonoClient *c, void *userdata);

#define OFONO_BUS_NAME "org.ofono"

/* One for roamd: the composition root's, handed to its users through the Core (core.ofono). */
int ofono_client_new(sd_bus *bus, OfonoClient **ret);
OfonoClient *ofono_client_free(OfonoClient *c);

/* A watcher told before each change applies (returns its id, 0 out of memory). */
unsigned ofono_client_change_watch_add(OfonoClient *c, OfonoClientChangeFn fn, void *userdata);
void ofono_client_change_watch_remove(OfonoClient *c, unsigned id);

unsigned ofono_client_time_watch_add(OfonoClient *c, TimeEventFn fn, void *userdata,
                                     WatchDestroyFn destroy);
void ofono_client_time_watch_remove(OfonoClient *c, unsigned id);

/* 1 roaming, 0 home, -ENOENT when no modem's context is on ifname or it is not registered. */
int ofono_client_roaming(OfonoClient *c, const char *ifname);
