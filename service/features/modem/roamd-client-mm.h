/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of ModemManager (org.freedesktop.ModemManager1) for one fact: is a cellular link
 * roaming? Each modem's Modem3gpp.RegistrationState (home, roaming, and their SMS-only and
 * CSFB variants) is matched to a link through the Interface of the modem's bearers (read with
 * Properties.GetAll on each bearer: ModemManager's ObjectManager carries only modems). Changes
 * arrive as PropertiesChanged and InterfacesAdded/Removed; before any change is applied the
 * owner's callback runs, so usage so far is counted under the old state.
 *
 * Each modem with Modem.Time is also a witness of time ("modem:PATH"): GetNetworkTime when it
 * appears, NetworkTimeChanged after, checked by roamd-nitz.c (garbage and a modem flapping its
 * time are refused, with the reason logged) and handed to the time watchers as TimeSamples;
 * NetworkTimezone and the serving network's MCC (Modem3gpp.OperatorCode) as TimeZoneHints. */

#include <systemd/sd-bus.h>

#include "roam-watch.h"
#include "roamd-time-event.h"

typedef struct MMClient MMClient;
typedef void (*MMClientChangeFn)(MMClient *c, void *userdata);

#define MM_BUS_NAME "org.freedesktop.ModemManager1"

/* Starts watching (ModemManager need not be running yet). One for roamd: the composition
 * root's, handed to its users through the Core (core.mm). */
int mm_client_new(sd_bus *bus, MMClient **ret);
MMClient *mm_client_free(MMClient *c);

/* 1 roaming, 0 home, -ENOENT when no modem's bearer is on ifname (or not registered). */
int mm_client_roaming(MMClient *c, const char *ifname);

/* A watcher told before each change applies (returns its id, 0 out of memory). */
unsigned mm_client_change_watch_add(MMClient *c, MMClientChangeFn fn, void *userdata);
void mm_client_change_watch_remove(MMClient *c, unsigned id);

unsigned mm_client_time_watch_add(MMClient *c, TimeEventFn fn, void *userdata,
                                  WatchDestroyFn destroy);
void mm_client_time_watch_remove(MMClient *c, unsigned id);

/* RegistrationState values (MMModem3gppRegistrationState) that mean roaming / home. */
int mm_registration_roaming(uint32_t state);
