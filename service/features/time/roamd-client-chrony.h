/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of chronyd's command socket (Unix datagrams, the cmdmon protocol:
 * roamd-chrony-cmd.h): asks chronyd to reload its sourcedir files, and reads back what it
 * tracks (REQ_TRACKING) every CHRONY_TRACKING_INTERVAL_USEC, after each reload and when told
 * to follow a socket: chronyd's time as a time sample of kind chrony, witness "ntp"
 * (roamd-chrony-tracking.h), handed to its one TimeEventFn; chronyd no longer answering, or
 * its report refused (logged once with the reason), the witness goes. Never waits: a request
 * is sent, its reply (or its absence after a timeout) is read from the event loop; one
 * exchange at a time, the others queued. chronyd answers to the sender's address, so each
 * exchange binds a socket of its own beside chronyd's (DIR/roamd.PID.sock, as chronyc does:
 * chronyd's AppArmor profile lets it write there), removed when it ends. */

#include <systemd/sd-event.h>

#include "roamd-time-event.h"

#define CHRONY_TRACKING_INTERVAL_USEC (32ULL * 1000000ULL)

typedef struct ChronyClient ChronyClient;

int chrony_client_new(sd_event *event, TimeEventFn on_time, void *userdata, ChronyClient **ret);
/* Cancels what is under way. Accepts NULL. */
ChronyClient *chrony_client_free(ChronyClient *c);

/* Asks chronyd at socket_path to reload its sources. 0 when sent or queued; a negative errno
 * when it cannot be sent (also logged, once per kind of failure: -ENOENT, no chronyd there). */
int chrony_client_reload_sources(ChronyClient *c, const char *socket_path);

/* Reads chronyd's tracking at socket_path: at once, then every interval; NULL stops (the
 * witness goes). */
int chrony_client_follow(ChronyClient *c, const char *socket_path);
