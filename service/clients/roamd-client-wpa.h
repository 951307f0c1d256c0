/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A client of wpa_supplicant's control interface (ctrl_iface_unix.c) on sd-event.
 *
 * One unix datagram socket, bound to a path of its own under the client directory and
 * connected to one control socket: a per-interface one (ctrl_interface=DIR: DIR/IFNAME) or the
 * global one (wpa_supplicant -g PATH; requests then carry "IFNAME=x "). wpa_supplicant answers
 * requests in order with no request id, so one request is on the wire at a time and the rest
 * wait in a queue; unsolicited events ("<N>..." after ATTACH) may arrive between a request and
 * its reply and go to the subscribers. A reply that does not come within the timeout fails the
 * request and the socket is replaced, so a late reply can never be taken for the answer to the
 * next request. Nothing blocks: sends are non-blocking and a full socket fails the request.
 *
 * Up/down: the client watches nothing itself; WpaDir (below) reports control sockets
 * appearing and disappearing (inotify on the control directory), and the owner calls
 * wpa_client_connect()/wpa_client_disconnect(). A send refused by the kernel
 * (ECONNREFUSED: the daemon went away), CTRL-EVENT-TERMINATING or an unanswered PING (a hung
 * daemon whose socket stays) also takes the client down. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "roamd-client-wpa-parse.h"

typedef struct WpaClient WpaClient;
typedef struct WpaRequest WpaRequest;
typedef struct WpaSubscription WpaSubscription;

/* error: 0, or -ETIMEDOUT, -ECONNRESET (the daemon went away), -EMSGSIZE (reply too large),
 * -ECANCELED (the client was freed or disconnected). reply is NUL-terminated. */
typedef void (*WpaReplyFn)(WpaClient *c, int error, const char *reply, size_t len, void *userdata);
/* An unsolicited event; e->ifname is set on the global interface. */
typedef void (*WpaEventFn)(WpaClient *c, const WpaEvent *e, void *userdata);
/* The client is attached (up) or lost its daemon (down). */
typedef void (*WpaStateFn)(WpaClient *c, bool up, void *userdata);

/* server: the control socket's path; local_dir: where the client binds its own socket. */
int wpa_client_new(sd_event *event, const char *server, const char *local_dir,
                   uint64_t timeout_usec, WpaClient **ret);
WpaClient *wpa_client_free(WpaClient *c);
static inline void wpa_client_freep(WpaClient **c)
{
        wpa_client_free(*c);
}

void wpa_client_set_state_handler(WpaClient *c, WpaStateFn fn, void *userdata);

/* While up, a PING every usec when no request is on the wire: a wpa_supplicant that hangs
 * with its socket still there (stopped, stuck in a driver) answers nothing, the PING times
 * out and the client goes down and reconnects, as for any unanswered request. 0: never. */
void wpa_client_set_ping_interval(WpaClient *c, uint64_t usec);

/* Opens the socket and sends ATTACH; the state handler says "up" when wpa_supplicant answered
 * OK. Calling it while up or connecting does nothing. */
int wpa_client_connect(WpaClient *c);
/* Fails every queued request with -ECONNRESET and closes the socket (DETACH first when
 * the daemon is still there). */
void wpa_client_disconnect(WpaClient *c);
bool wpa_client_is_up(const WpaClient *c);
const char *wpa_client_server(const WpaClient *c);

/* Queues cmd (for the global interface with "IFNAME=ifname " when ifname is set). The
 * callback runs exactly once unless the request is cancelled first. ret may be NULL (the
 * request then belongs to the client). -ENOTCONN while the client is down. */
int wpa_client_request(WpaClient *c, const char *ifname, const char *cmd, WpaReplyFn cb,
                       void *userdata, WpaRequest **ret);
/* Drops a request: its callback never runs (a reply already on the wire is discarded).
 * Accepts NULL; returns NULL. */
WpaRequest *wpa_request_cancel(WpaRequest *r);

/* Events go to every subscriber, in subscription order. Freeing the subscription ends it. */
int wpa_client_subscribe(WpaClient *c, WpaEventFn fn, void *userdata, WpaSubscription **ret);
WpaSubscription *wpa_subscription_free(WpaSubscription *s);

/* Watches a control directory (and its parent, since wpa_supplicant removes the directory when
 * it exits) with inotify and reports socket names as they appear and go: present=true for
 * each socket found at start and every one created later. */
typedef struct WpaDir WpaDir;
typedef void (*WpaDirFn)(WpaDir *d, const char *name, bool present, void *userdata);

int wpa_dir_new(sd_event *event, const char *dir, WpaDirFn fn, void *userdata, WpaDir **ret);
WpaDir *wpa_dir_free(WpaDir *d);
