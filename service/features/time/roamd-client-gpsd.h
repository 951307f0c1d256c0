/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of gpsd (TCP, JSON): the fix time of its TPV reports as a time sample of kind
 * gnss, witness "gnss" (docs/time.md). gpsd not running: tried again every 30 s, quietly;
 * the connection lost: the witness goes. */

#include <systemd/sd-event.h>

#include "roamd-time-event.h"

typedef struct GpsdClient GpsdClient;

/* address: "127.0.0.1:2947" (checked by the configuration). on_time hears TIME_EVENT_SAMPLE
 * and TIME_EVENT_GONE. */
int gpsd_client_new(sd_event *event, const char *address, TimeEventFn on_time, void *userdata,
                    GpsdClient **ret);
GpsdClient *gpsd_client_free(GpsdClient *c);
const char *gpsd_client_address(const GpsdClient *c);
