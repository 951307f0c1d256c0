/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <systemd/sd-bus.h>

/* The client's side of the bus: connecting and telling "roamd is not running" apart from other
 * failures. Every function here logs its errors; -EHOSTDOWN always means roamd is not running
 * (no system bus to reach it on, or nobody owns org.roam1), so the caller can pick the exit
 * status without logging again. */

#define ROAM_ERR_NOT_RUNNING EHOSTDOWN

/* Connects to the system bus (sd_bus_open_system: honours DBUS_SYSTEM_BUS_ADDRESS). */
int roam_bus_connect(sd_bus **ret);

/* Logs why a call to roamd failed ("Failed to <what>: ...") and returns a negative errno:
 * -EHOSTDOWN when the error means that nobody owns org.roam1. */
int roam_bus_log_call_error(const sd_bus_error *error, int r, const char *what);
