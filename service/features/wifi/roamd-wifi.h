/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Wi-Fi service core: one WifiIface per Wi-Fi link (bearer wifi), its owner decided
 * (roamd-wifi-owner.h) when the link appears, when its backend reports the owner gone, and
 * while it has none whenever the link changes; the backend of that owner; the scan, the join
 * in progress (one per interface, with the bus name that started it: only it may answer its
 * secret requests) and its end: after the owner's "connected", the link's verdict ("checking",
 * then connected or portal). D-Bus in roamd-wifi-bus.c (org.roam1.WiFi, docs/dbus-api.md). */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "roam-bus-name.h"
#include "roamd-wifi-backend.h"
#include "roamd-wifi-dpp.h"
#include "roamd-wifi-owner.h"

typedef struct WifiService WifiService;
typedef struct WifiIface WifiIface;
typedef struct WifiJoin WifiJoin;
typedef struct WifiCall WifiCall;

struct WifiJoin {
        WifiIface *iface;
        uint32_t id;
        WifiOp *op; /* NULL once the backend ended it (while the verdict is awaited) */
        char *sender;
        WifiJoinStep step;
        bool has_step;
        bool wrong_key_asked; /* the last secret request said wrong-key */
        bool eap_asked;       /* ... and asked a user name and password (802.1X) */
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        char words[WIFI_WORDS_MAX]; /* the backend's "connected" words */
        sd_event_source *timer;     /* a secret's answer, or the verdict, awaited */
        /* a DPP enrollment (roamd-wifi-enroll.c): the owner's, then the Enroll call to answer
         * with the URI (NULL once answered) */
        WifiEnroll *enroll;
        sd_bus_message *enroll_call;
};

struct WifiCall {
        WifiIface *iface;
        WifiCall *next;
        sd_bus_message *msg;
        WifiOp *op;
        WifiOpKind kind;
        WifiSecurity security; /* Share: the network's, from the list */
};

struct WifiIface {
        WifiService *service;
        int ifindex;
        char *ifname;
        char *path;
        WifiOwner owner;
        char *why;
        WifiOwnerDetect *detect;
        bool redetect; /* asked again while a detection runs */
        WifiBackend *backend;
        bool scanning;
        uint64_t last_scan_usec;
        WifiCall *calls;
        WifiJoin *join;
};

struct WifiService {
        Core *core;
        unsigned links_watch;
        WifiIface **ifaces;
        size_t n_ifaces;
        uint32_t next_join;
        WifiOwnerProbes probes;
        sd_bus_slot *slot;
        BusNameWatch *owner_names[2]; /* NetworkManager, iwd: decide again when one comes */
};

int wifi_service_new(Core *core, WifiService **ret);
/* Follows the links (every Wi-Fi link present gets its interface) and exports the bus API. */
int wifi_service_start(WifiService *s);
/* Cancels every operation (a join's network removed again), drops the interfaces. NULL-safe. */
WifiService *wifi_service_free(WifiService *s);

/* wpa_supplicant's facts of ifname changed (it attached, went, came back): an interface
 * without an owner asks again; one run through a control socket that went is decided anew. */
void wifi_service_wpa_news(WifiService *s, const char *ifname);

WifiIface *wifi_service_iface(WifiService *s, int ifindex);
WifiIface *wifi_service_iface_by_name(WifiService *s, const char *ifname);

/* Starts a join of request (the caller's bus name: who may answer it). -EBUSY while one
 * runs; -EOPNOTSUPP without a backend (why in iface->why). ret: the join's id. */
int wifi_iface_join(WifiIface *i, const WifiJoinRequest *request, const char *sender,
                    uint32_t *ret);
int wifi_iface_join_secret(WifiIface *i, const WifiSecrets *secrets);
/* Ends the join (JoinDone canceled, or wrong-key when the last request said so). */
void wifi_iface_join_cancel(WifiIface *i);

/* Starts a DPP enrollment (roamd-wifi-enroll.c) as a join of the caller of m, which is
 * answered (join id, URI) when the owner gives the URI, or with an error. -EBUSY, -EOPNOTSUPP
 * as for a join. */
int wifi_iface_enroll(WifiIface *i, sd_bus_message *m);

/* Starts a DPP configurator (roamd-wifi-enroll.c): the network the interface is on sent to
 * the device of uri (a DPP: text read already), run as a join of sender; ret: its id. */
int wifi_iface_configure(WifiIface *i, const char *uri, const char *sender, uint32_t *ret);

/* The join machinery the enrollment shares (roamd-wifi.c). */
extern const WifiJoinReport wifi_join_report;
WifiJoin *wifi_join_new(WifiIface *i, const char *sender);
WifiJoin *wifi_join_free(WifiJoin *j);
void wifi_join_step(WifiJoin *j, WifiJoinStep step, const char *words);
/* Runs the owner's join of q for j (the enrollment's received network). */
int wifi_join_start_backend(WifiJoin *j, const WifiJoinRequest *q);
/* The owner's end of j: CONNECTED goes on to the link's verdict; the rest ends j. */
void wifi_join_owner_done(WifiJoin *j, WifiJoinResult result, const char *words);
void wifi_join_finish(WifiJoin *j, WifiJoinResult result, const char *words);
/* roamd-wifi-enroll.c's part of a join's end: true when the join never reached its caller
 * (the Enroll call is answered with words instead of JoinDone). */
bool wifi_enroll_join_end(WifiJoin *j, const char *words);

/* the bus glue (roamd-wifi-bus.c) */
int wifi_bus_setup(WifiService *s);
void wifi_bus_iface_added(WifiIface *i);
void wifi_bus_iface_removed(WifiIface *i);
void wifi_bus_emit_changed(WifiIface *i, const char *first, ...);
void wifi_bus_join_step(WifiJoin *j, WifiJoinStep step, const char *words);
void wifi_bus_join_needs_secret(WifiJoin *j, WifiSecretKind kind, WifiSecretWhy why);
void wifi_bus_join_done(WifiIface *i, uint32_t id, WifiJoinResult result, const char *words);
/* a method call waiting for the backend: answered by the callbacks in roamd-wifi-bus.c */
WifiCall *wifi_call_new(WifiIface *i, sd_bus_message *m, WifiOpKind kind);
void wifi_call_free(WifiCall *c);
