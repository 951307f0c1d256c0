/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* WiFi Direct through wpa_supplicant's P2P commands and events (docs/wifi-direct.md): finding
 * peers, connecting by push button or PIN, incoming requests the user accepts or rejects, and
 * the groups that result. The group's p2p-* interface is an ordinary link to roamd (bearer
 * wifi-direct, its own verdict and app policy). */

#include <errno.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "roamd-client-wpa.h"

typedef struct Core Core;
typedef struct P2p P2p;

/* The bus glue's registrations (roamd-p2p-bus.c), owned by the feature: released first by
 * p2p_free(), before the peers they find. */
typedef struct P2pBusSlots {
        sd_bus_slot *manager, *peers, *peer_enum;
} P2pBusSlots;
P2pBusSlots *p2p_bus_slots(P2p *p);

typedef enum PeerState {
        PEER_STATE_AVAILABLE,  /* found, nothing going on */
        PEER_STATE_REQUEST,    /* the peer asks to connect; the user accepts or rejects */
        PEER_STATE_CONNECTING, /* negotiating (we asked, or the user accepted) */
        PEER_STATE_CONNECTED,  /* in a group with us */
        _PEER_STATE_MAX,
        _PEER_STATE_INVALID = -EINVAL,
} PeerState;

const char *peer_state_to_string(PeerState s);
PeerState peer_state_from_string(const char *s);

typedef enum PeerMethod {
        PEER_METHOD_NONE,
        PEER_METHOD_PUSH_BUTTON,
        PEER_METHOD_DISPLAY, /* roam shows a PIN, the user types it on the peer */
        PEER_METHOD_KEYPAD,  /* the peer shows a PIN, the user types it into roam */
        _PEER_METHOD_MAX,
        _PEER_METHOD_INVALID = -EINVAL,
} PeerMethod;

const char *peer_method_to_string(PeerMethod m);
PeerMethod peer_method_from_string(const char *s);

typedef enum P2pRequestKind {
        P2P_REQUEST_NONE,
        P2P_REQUEST_GO_NEG,    /* P2P-GO-NEG-REQUEST: accept with P2P_CONNECT */
        P2P_REQUEST_PROV_DISC, /* P2P-PROV-DISC-*: accept with P2P_CONNECT ... auth */
} P2pRequestKind;

typedef struct Peer {
        P2p *p2p;
        char addr[18]; /* P2P device address */
        char *path;
        char *name;
        char *pri_dev_type;
        const char *type_word;
        unsigned methods; /* WpaConfigMethod flags */
        PeerState state;
        PeerMethod method;
        P2pRequestKind request;
        char pin[9]; /* the PIN roam shows, "" otherwise */
        char *group_ifname;
        char *group_role; /* "GO" or "client": the peer's role seen from us is the other */
        char *reason;     /* why the last connection ended or failed, NULL before */
        bool lost;        /* P2P-DEVICE-LOST while connected: removed when the group ends */
        bool announced;
} Peer;

int p2p_new(Core *core, P2p **ret);
Core *p2p_core(const P2p *p);
P2p *p2p_free(P2p *p);

/* The interface wpa_supplicant runs P2P on (client NULL: none). prefix is the IFNAME= of the
 * global control interface, or NULL. */
void p2p_set_device(P2p *p, WpaClient *client, const char *prefix, const char *ifname);

/* "unavailable", "idle" or "finding". */
const char *p2p_state(const P2p *p);
const char *p2p_device(const P2p *p);

Peer *p2p_get_peer(P2p *p, const char *addr);
Peer *p2p_get_peer_by_path(P2p *p, const char *path);
size_t p2p_n_peers(const P2p *p);
Peer *p2p_peer_at(P2p *p, size_t i);

/* Asynchronous actions for the bus: they reply to msg (or set an error and return <0). */
int p2p_find(P2p *p, unsigned timeout_sec, sd_bus_message *msg);
int p2p_stop_find(P2p *p, sd_bus_message *msg);
int peer_connect(Peer *peer, PeerMethod method, const char *pin, sd_bus_message *msg,
                 sd_bus_error *error);
int peer_accept(Peer *peer, const char *pin, sd_bus_message *msg, sd_bus_error *error);
int peer_reject(Peer *peer, sd_bus_message *msg, sd_bus_error *error);
int peer_disconnect(Peer *peer, sd_bus_message *msg, sd_bus_error *error);

/* roamd-p2p-bus.c */
/* Its slice of org.roam1.Manager (P2P*), the org.roam1.Peer objects and their enumerator. */
/* The P2P members of org.roam1.Manager and the Peer objects, on the bus until p2p_free(). */
int p2p_bus_setup(P2p *p);
void peer_bus_emit_changed(Peer *peer, const char *first, ...);
void peer_bus_announce(Peer *peer);
void peer_bus_withdraw(Peer *peer);
void p2p_bus_emit_state(P2p *p);
void p2p_bus_emit_failed(P2p *p, const Peer *peer, const char *reason);
void p2p_bus_emit_group_removed(P2p *p, const char *ifname, const Peer *peer, const char *reason);
