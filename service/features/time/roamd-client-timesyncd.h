/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of systemd-timesyncd (org.freedesktop.timesync1): its last NTP packet
 * (NTPMessage, followed through PropertiesChanged; read afresh when timesyncd starts) as a
 * time sample of kind ntp, witness "ntp" (docs/time.md). timesyncd gone: the witness is. */

#include <systemd/sd-bus.h>

#include "roamd-time-event.h"

#define TIMESYNCD_BUS_NAME "org.freedesktop.timesync1"

typedef struct TimesyncdClient TimesyncdClient;

/* on_time hears TIME_EVENT_SAMPLE and TIME_EVENT_GONE. */
int timesyncd_client_new(sd_bus *bus, TimeEventFn on_time, void *userdata, TimesyncdClient **ret);
TimesyncdClient *timesyncd_client_free(TimesyncdClient *c);
