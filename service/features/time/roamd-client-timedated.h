/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of systemd-timedated (org.freedesktop.timedate1) for the system's time zone: its
 * Timezone property (read at start, followed through PropertiesChanged) and SetTimezone,
 * called asynchronously; timedated's own polkit action (org.freedesktop.timedate1.set-timezone)
 * applies to roamd as to anyone. */

#include <systemd/sd-bus.h>

#define TIMEDATED_BUS_NAME "org.freedesktop.timedate1"

typedef struct TimedatedClient TimedatedClient;
/* The system's zone became known or changed (zone "" while unknown). */
typedef void (*TimedatedZoneFn)(TimedatedClient *c, const char *zone, void *userdata);
/* A SetTimezone call finished: 0, or a negative errno with timedated's message. */
typedef void (*TimedatedSetFn)(TimedatedClient *c, int error, const char *message, void *userdata);

int timedated_client_new(sd_bus *bus, TimedatedZoneFn on_zone, void *userdata,
                         TimedatedClient **ret);
TimedatedClient *timedated_client_free(TimedatedClient *c);

/* "" until timedated has answered. */
const char *timedated_client_zone(TimedatedClient *c);

/* One call at a time: a new one cancels the one in flight (its callback is not called). */
int timedated_client_set_zone(TimedatedClient *c, const char *zone, TimedatedSetFn done,
                              void *userdata);
