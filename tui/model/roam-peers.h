/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <systemd/sd-bus.h>

/* roamd's WiFi Direct peers as the clients read them (org.roam1.Peer, docs/dbus-api.md):
 * `roam p2p` and the devices screen. */

typedef struct P2pPeer {
        char *path, *address, *name, *type, *state, *method, *pin, *group, *reason;
        char **methods;
        bool incoming;
} P2pPeer;

typedef struct P2pList {
        P2pPeer *peers;
        size_t n;
        char *state; /* Manager.P2PState */
} P2pList;

void p2p_peer_done(P2pPeer *p);
void p2p_list_done(P2pList *l);
/* Reads one org.roam1.Peer a{sv} into p. */
int p2p_read_peer(sd_bus_message *m, P2pPeer *p);
/* Appends the peers of a GetManagedObjects reply to l. */
int p2p_list_parse_objects(sd_bus_message *reply, P2pList *l);
/* The PIN to type on a peer (Method "display", while it asks or connects) is not in the PIN
 * property, which every local user reads: asks roamd for it (Peer.GetPIN, authorized) and
 * fills p->pin; left empty for a caller who may not see it. Sync: for `roam p2p`, which runs
 * no event loop; the devices screen and plain mode use P2pPinLoad. */
int p2p_list_fetch_pins(sd_bus *bus, P2pList *l);
/* Whether p has a PIN to show that only GetPIN tells (see above). */
bool p2p_peer_wants_pin(const P2pPeer *p);
/* Reads a GetPIN reply into p->pin; an error reply: -EACCES, p untouched. */
int p2p_peer_read_pin(sd_bus_message *reply, P2pPeer *p);
/* The same without waiting (a slow answer must not hold an event loop): one GetPIN slot per
 * peer that shows a PIN, owned here, each slot's description the peer's path. */
typedef struct P2pPinLoad {
        P2pList list; /* the PINs filled in as they come */
        sd_bus_slot **slots;
        size_t n_slots, pending;
        void (*done)(void *userdata);
        void *userdata;
} P2pPinLoad;
/* Takes *l and asks for its PINs; done(userdata) once all have answered. Returns 1 when none
 * was asked (done is not called: the list is complete now), 0 while asking, <0 on error. */
int p2p_pin_load_start(P2pPinLoad *pl, sd_bus *bus, P2pList *l, void (*done)(void *userdata),
                       void *userdata);
/* Cancels what is asked and frees the list. NULL-safe. */
void p2p_pin_load_cancel(P2pPinLoad *pl);
/* The name, or the address when it has none. */
const char *p2p_peer_label(const P2pPeer *p);
/* How to connect, in words: "button, its PIN, our PIN" (malloc'd; NULL: no memory). */
char *p2p_methods_text(const P2pPeer *p);
/* Why the last connection failed or ended, in words ("the device went out of reach"); NULL
 * before any. */
const char *p2p_reason_text(const P2pPeer *p);
/* The state in words ("asks to connect" for a request). */
const char *p2p_state_text(const P2pPeer *p);

/* Manager.P2PConnectionFailed and P2PGroupRemoved (docs/dbus-api.md), read for the devices
 * screen and plain mode; strings are valid as long as the message. */
typedef enum P2pSignal {
        P2P_SIGNAL_NONE,
        P2P_SIGNAL_CONNECTION_FAILED,
        P2P_SIGNAL_GROUP_REMOVED,
} P2pSignal;
typedef struct P2pSignalArgs {
        const char *a, *b; /* P2PConnectionFailed: address, name; P2PGroupRemoved: the
                            * interface, the peer's address */
        const char *reason;
} P2pSignalArgs;
/* Which of them m is, its arguments read into ret; P2P_SIGNAL_NONE for any other message or
 * one that cannot be read. */
P2pSignal p2p_signal_read(sd_bus_message *m, P2pSignalArgs *ret);
