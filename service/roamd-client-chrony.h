/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of chronyd's command socket (Unix datagrams, the cmdmon protocol:
 * roamd-chrony-cmd.h): asks chronyd to reload its sourcedir files. Never waits: the request
 * is sent, the reply (or its absence after a timeout) is logged from the event loop. chronyd
 * answers to the sender's address, so the client binds a socket of its own beside chronyd's
 * (DIR/roamd.PID.sock, as chronyc does: chronyd's AppArmor profile lets it write there),
 * removed when the exchange ends. A reload asked while one is under way is sent after it. */

#include <systemd/sd-event.h>

typedef struct ChronyClient ChronyClient;

int chrony_client_new(sd_event *event, ChronyClient **ret);
/* Cancels what is under way. Accepts NULL. */
ChronyClient *chrony_client_free(ChronyClient *c);

/* Asks chronyd at socket_path to reload its sources. 0 when sent or queued; a negative errno
 * when it cannot be sent (also logged, once per kind of failure: -ENOENT, no chronyd there). */
int chrony_client_reload_sources(ChronyClient *c, const char *socket_path);
