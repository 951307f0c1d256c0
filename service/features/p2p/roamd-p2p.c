/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-p2p.h"

/* Reasons come from the table roam shares (shared/roam-words.c), which says them in words. */
#define P2P_REASON(x) roam_p2p_reason_to_string(ROAM_P2P_REASON_##x)

static const char *const peer_state_table[_PEER_STATE_MAX] = {
    [PEER_STATE_AVAILABLE] = "available",
    [PEER_STATE_REQUEST] = "request",
    [PEER_STATE_CONNECTING] = "connecting",
    [PEER_STATE_CONNECTED] = "connected",
};
DEFINE_STRING_TABLE_LOOKUP(peer_state, PeerState)

static const char *const peer_method_table[_PEER_METHOD_MAX] = {
    [PEER_METHOD_NONE] = "",
    [PEER_METHOD_PUSH_BUTTON] = "push-button",
    [PEER_METHOD_DISPLAY] = "display",
    [PEER_METHOD_KEYPAD] = "keypad",
};
DEFINE_STRING_TABLE_LOOKUP(peer_method, PeerMethod)

typedef enum CallKind {
        CALL_FIND,
        CALL_STOP_FIND,
        CALL_CONNECT,
        CALL_REJECT,
        CALL_GROUP_REMOVE,
        CALL_CANCEL,
        CALL_PEER_INFO,
        CALL_ENUM,
        CALL_SET,
} CallKind;

typedef struct P2pCall {
        P2p *p2p;
        struct P2pCall *next;
        WpaRequest *req;
        sd_bus_message *msg; /* the D-Bus call to answer, or NULL */
        CallKind kind;
        char addr[18];
        PeerMethod method;
        char pin[9];
        bool accept; /* CALL_CONNECT for an incoming request */
} P2pCall;

struct P2p {
        Core *core;
        WpaClient *client;
        char *prefix;
        char *ifname;
        WpaSubscription *sub;
        bool finding;
        Peer **peers;
        size_t n_peers;
        P2pCall *calls;
        P2pBusSlots slots;
};

P2pBusSlots *p2p_bus_slots(P2p *p)
{
        return &p->slots;
}

Core *p2p_core(const P2p *p)
{
        return p->core;
}

const char *p2p_state(const P2p *p)
{
        if (!p || !p->client)
                return "unavailable";
        return p->finding ? "finding" : "idle";
}

const char *p2p_device(const P2p *p)
{
        return p ? strempty(p->ifname) : "";
}

size_t p2p_n_peers(const P2p *p)
{
        return p ? p->n_peers : 0;
}

Peer *p2p_peer_at(P2p *p, size_t i)
{
        return i < p->n_peers ? p->peers[i] : NULL;
}

Peer *p2p_get_peer(P2p *p, const char *addr)
{
        for (size_t i = 0; p && addr && i < p->n_peers; i++)
                if (streq(p->peers[i]->addr, addr))
                        return p->peers[i];
        return NULL;
}

Peer *p2p_get_peer_by_path(P2p *p, const char *path)
{
        for (size_t i = 0; p && i < p->n_peers; i++)
                if (streq(p->peers[i]->path, path))
                        return p->peers[i];
        return NULL;
}

static void peer_free(Peer *peer)
{
        if (!peer)
                return;
        free(peer->path);
        free(peer->name);
        free(peer->pri_dev_type);
        free(peer->group_ifname);
        free(peer->group_role);
        free(peer->reason);
        free(peer);
}

static Peer *peer_add(P2p *p, const char *addr)
{
        Peer *peer, **n;
        char hex[13];

        if (!wpa_mac_valid(addr))
                return NULL;
        peer = p2p_get_peer(p, addr);
        if (peer)
                return peer;
        peer = calloc(1, sizeof(*peer));
        if (!peer)
                return NULL;
        peer->p2p = p;
        memcpy(peer->addr, addr, 18);
        for (size_t i = 0, k = 0; i < 17; i++)
                if (addr[i] != ':')
                        hex[k++] = addr[i];
        hex[12] = 0;
        peer->type_word = "device";
        if (asprintf(&peer->path, "%s/%s", ROAM_PEER_PATH_PREFIX, hex) < 0) {
                peer->path = NULL;
                peer_free(peer);
                return NULL;
        }
        n = realloc(p->peers, sizeof(*n) * (p->n_peers + 1));
        if (!n) {
                peer_free(peer);
                return NULL;
        }
        p->peers = n;
        n[p->n_peers++] = peer;
        return peer;
}

static void peer_remove(Peer *peer)
{
        P2p *p = peer->p2p;

        for (size_t i = 0; i < p->n_peers; i++)
                if (p->peers[i] == peer) {
                        memmove(p->peers + i, p->peers + i + 1,
                                sizeof(Peer *) * (p->n_peers - i - 1));
                        p->n_peers--;
                        break;
                }
        log_info("P2P peer %s (%s) gone.", peer->addr, strempty(peer->name));
        peer_bus_withdraw(peer);
        peer_free(peer);
}

/* The one place a peer's state changes. */
static void peer_set_state(Peer *peer, PeerState s, const char *reason)
{
        if (peer->state == s && !reason)
                return;
        log_info("P2P peer %s (%s): %s -> %s%s%s", peer->addr, strempty(peer->name),
                 peer_state_to_string(peer->state), peer_state_to_string(s), reason ? ", " : "",
                 strempty(reason));
        peer->state = s;
        if (s == PEER_STATE_AVAILABLE) {
                peer->request = P2P_REQUEST_NONE;
                peer->method = PEER_METHOD_NONE;
                peer->pin[0] = 0;
                free(peer->group_ifname);
                free(peer->group_role);
                peer->group_ifname = peer->group_role = NULL;
        }
        if (reason)
                (void)free_and_strdup(&peer->reason, reason);
        peer_bus_emit_changed(peer, "State", "Method", "PIN", "Incoming", "GroupInterface",
                              "GroupRole", "Reason", NULL);
        if (s == PEER_STATE_AVAILABLE && peer->lost)
                peer_remove(peer);
}

/* Name, type and config methods, from an event or a P2P_PEER reply. */
static void peer_update_info(Peer *peer, const char *name, const char *dev_type,
                             const char *methods)
{
        bool changed = false;
        unsigned m;
        const char *w;

        if (name && !streq_ptr(peer->name, name)) {
                (void)free_and_strdup(&peer->name, name);
                changed = true;
        }
        if (dev_type && wpa_device_type_word(dev_type, &w) >= 0 &&
            !streq_ptr(peer->pri_dev_type, dev_type)) {
                (void)free_and_strdup(&peer->pri_dev_type, dev_type);
                peer->type_word = w;
                changed = true;
        }
        if (methods && wpa_config_methods_parse(methods, &m) >= 0 && m != peer->methods) {
                peer->methods = m;
                changed = true;
        }
        if (changed && peer->announced)
                peer_bus_emit_changed(peer, "Name", "DeviceType", "PrimaryDeviceType",
                                      "ConfigMethods", NULL);
}

/* Calls to wpa_supplicant. */

static void call_free(P2pCall *c)
{
        P2p *p = c->p2p;

        for (P2pCall **q = &p->calls; *q; q = &(*q)->next)
                if (*q == c) {
                        *q = c->next;
                        break;
                }
        sd_bus_message_unref(c->msg);
        free(c);
}

static void call_fail(P2pCall *c, const char *why)
{
        if (c->msg)
                (void)sd_bus_reply_method_errorf(c->msg, ROAM_ERROR_FAILED, "wpa_supplicant %s.",
                                                 why);
}

static void on_call_reply(WpaClient *client, int error, const char *reply, size_t len,
                          void *userdata);

static int p2p_call(P2p *p, CallKind kind, const char *addr, sd_bus_message *msg, P2pCall **ret,
                    const char *fmt, ...) _printf_(6, 7);

static int p2p_call(P2p *p, CallKind kind, const char *addr, sd_bus_message *msg, P2pCall **ret,
                    const char *fmt, ...)
{
        _cleanup_free_ char *cmd = NULL;
        P2pCall *c;
        va_list ap;
        int r;

        if (!p->client)
                return -ENOTCONN;
        va_start(ap, fmt);
        r = vasprintf(&cmd, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->p2p = p;
        c->kind = kind;
        if (addr)
                memcpy(c->addr, addr, 18);
        c->msg = sd_bus_message_ref(msg);
        r = wpa_client_request(p->client, p->prefix, cmd, on_call_reply, c, &c->req);
        if (r < 0) {
                sd_bus_message_unref(c->msg);
                free(c);
                return r;
        }
        c->next = p->calls;
        p->calls = c;
        if (ret)
                *ret = c;
        return 0;
}

static void enum_next(P2p *p, const char *after)
{
        int r = after ? p2p_call(p, CALL_ENUM, NULL, NULL, NULL, "P2P_PEER NEXT-%s", after)
                      : p2p_call(p, CALL_ENUM, NULL, NULL, NULL, "P2P_PEER FIRST");
        if (r < 0)
                log_debug("P2P peer listing not sent: %s", strerror(-r));
}

/* A P2P_PEER reply (ctrl_iface.c, p2p_ctrl_peer()): the address, then key=value lines. */
static const char *on_peer_info(P2p *p, const char *reply, size_t len, bool create)
{
        static char addr[18];
        WpaKv kv = {};
        const char *a;
        Peer *peer;

        if (wpa_kv_parse(reply, len, &kv) < 0)
                return NULL;
        a = wpa_kv_get(&kv, "");
        if (!a || !wpa_mac_valid(a)) {
                wpa_kv_done(&kv);
                return NULL;
        }
        memcpy(addr, a, 18);
        peer = create ? peer_add(p, a) : p2p_get_peer(p, a);
        if (peer) {
                peer_update_info(peer, wpa_kv_get(&kv, "device_name"),
                                 wpa_kv_get(&kv, "pri_dev_type"),
                                 wpa_kv_get(&kv, "config_methods"));
                peer_bus_announce(peer);
        }
        wpa_kv_done(&kv);
        return addr;
}

static bool reply_is_pin(const char *reply, size_t len)
{
        char pin[10];

        if (len < 8 || len > 9)
                return false;
        memcpy(pin, reply, 8);
        pin[8] = 0;
        return (len == 8 || reply[8] == '\n') && wpa_pin_valid(pin);
}

static void on_call_reply(WpaClient *client, int error, const char *reply, size_t len,
                          void *userdata)
{
        P2pCall *c = userdata;
        P2p *p = c->p2p;
        Peer *peer = c->addr[0] ? p2p_get_peer(p, c->addr) : NULL;
        bool ok = error >= 0 && wpa_reply_is_ok(reply, len);
        const char *why = error == -ETIMEDOUT              ? "did not answer in time"
                          : error == -EMSGSIZE             ? "sent an oversized reply"
                          : error < 0                      ? "went away"
                          : strncmp(reply, "FAIL", 4) == 0 ? "refused it"
                                                           : "answered something unexpected";

        c->req = NULL;
        switch (c->kind) {
        case CALL_FIND:
        case CALL_STOP_FIND:
                if (!ok) {
                        call_fail(c, why);
                        break;
                }
                if (p->finding != (c->kind == CALL_FIND)) {
                        p->finding = c->kind == CALL_FIND;
                        p2p_bus_emit_state(p);
                }
                if (c->msg)
                        (void)sd_bus_reply_method_return(c->msg, NULL);
                break;
        case CALL_CONNECT: {
                bool pin_reply = error >= 0 && reply_is_pin(reply, len);
                if (!ok && !pin_reply) {
                        call_fail(c, why);
                        if (peer && c->accept)
                                peer_set_state(peer, PEER_STATE_AVAILABLE, P2P_REASON(FAILED));
                        break;
                }
                if (pin_reply) {
                        memcpy(c->pin, reply, 8);
                        c->pin[8] = 0;
                }
                if (peer) {
                        peer->method = c->method;
                        snprintf(peer->pin, sizeof(peer->pin), "%s",
                                 c->method == PEER_METHOD_DISPLAY ? c->pin : "");
                        peer_set_state(peer, PEER_STATE_CONNECTING, NULL);
                }
                if (c->msg)
                        (void)sd_bus_reply_method_return(c->msg, c->accept ? NULL : "s",
                                                         c->method == PEER_METHOD_DISPLAY ? c->pin
                                                                                          : "");
                break;
        }
        case CALL_REJECT:
                /* FAIL: wpa_supplicant no longer knows the request; it is gone either way. */
                if (peer)
                        peer_set_state(peer, PEER_STATE_AVAILABLE, P2P_REASON(REJECTED));
                if (c->msg)
                        (void)sd_bus_reply_method_return(c->msg, NULL);
                break;
        case CALL_CANCEL:
                if (!ok) {
                        if (!c->msg)
                                log_info("wpa_supplicant had nothing to cancel (P2P_CANCEL: "
                                         "%s).",
                                         why);
                        call_fail(c, why);
                        break;
                }
                if (peer)
                        peer_set_state(peer, PEER_STATE_AVAILABLE, P2P_REASON(CANCELLED));
                if (c->msg)
                        (void)sd_bus_reply_method_return(c->msg, NULL);
                break;
        case CALL_GROUP_REMOVE:
                /* P2P-GROUP-REMOVED follows and changes the peer. */
                if (!ok) {
                        call_fail(c, why);
                        break;
                }
                if (c->msg)
                        (void)sd_bus_reply_method_return(c->msg, NULL);
                break;
        case CALL_PEER_INFO:
                if (error >= 0)
                        (void)on_peer_info(p, reply, len, false);
                break;
        case CALL_ENUM: {
                const char *a = error >= 0 ? on_peer_info(p, reply, len, true) : NULL;
                if (a) {
                        char next[18];
                        memcpy(next, a, 18);
                        call_free(c);
                        enum_next(p, next);
                        return;
                }
                break;
        }
        case CALL_SET:
                if (!ok)
                        log_warning("wpa_supplicant refused the P2P device name.");
                break;
        }
        call_free(c);
}

/* Events (p2p_supplicant.c; formats cited in tests/wpa/fakewpa.py). */

static Peer *event_peer(P2p *p, const WpaEvent *e, bool create)
{
        const char *a = wpa_event_get(e, "p2p_dev_addr");

        if (!a)
                a = wpa_event_arg(e, 0);
        if (!a || !wpa_mac_valid(a))
                return NULL;
        return create ? peer_add(p, a) : p2p_get_peer(p, a);
}

static Peer *connecting_peer(P2p *p)
{
        for (size_t i = 0; i < p->n_peers; i++)
                if (p->peers[i]->state == PEER_STATE_CONNECTING)
                        return p->peers[i];
        return NULL;
}

static void peer_fail(Peer *peer, const char *reason)
{
        P2p *p = peer->p2p;

        p2p_bus_emit_failed(p, peer, reason);
        peer_set_state(peer, PEER_STATE_AVAILABLE, reason);
}

static void peer_request(P2p *p, Peer *peer, P2pRequestKind kind, PeerMethod method,
                         const char *pin)
{
        /* Our own connection attempt answered by the peer's side: not a new request. */
        if (peer->state == PEER_STATE_CONNECTING) {
                if (pin && method == PEER_METHOD_DISPLAY && !peer->pin[0]) {
                        snprintf(peer->pin, sizeof(peer->pin), "%s", pin);
                        peer_bus_emit_changed(peer, "PIN", NULL);
                }
                return;
        }
        if (peer->state == PEER_STATE_CONNECTED)
                return;
        peer->request = kind;
        peer->method = method;
        snprintf(peer->pin, sizeof(peer->pin), "%s", pin && wpa_pin_valid(pin) ? pin : "");
        if (!peer->name)
                (void)p2p_call(p, CALL_PEER_INFO, peer->addr, NULL, NULL, "P2P_PEER %s",
                               peer->addr);
        peer_bus_announce(peer);
        peer_set_state(peer, PEER_STATE_REQUEST, NULL);
}

static const char *go_neg_status_word(const char *status)
{
        /* p2p_i.h, enum p2p_status_code. */
        int s = status ? atoi(status) : -1;

        switch (s) {
        case 1:
                return P2P_REASON(PEER_BUSY);
        case 7:
                return P2P_REASON(NO_COMMON_CHANNEL);
        case 9:
                return P2P_REASON(BOTH_WANT_TO_LEAD);
        case 11:
                return P2P_REASON(REJECTED);
        default:
                return P2P_REASON(NEGOTIATION_FAILED);
        }
}

static void on_event(WpaClient *client, const WpaEvent *e, void *userdata)
{
        P2p *p = userdata;
        const char *n = e->name;
        Peer *peer;

        /* On the global interface, only the P2P device's events (and groups', which
         * wpa_supplicant reports on the device: wpa_msg_global(wpa_s->p2pdev, ...)). */
        if (p->prefix && e->ifname[0] && !streq(e->ifname, p->prefix))
                return;
        if (strncmp(n, "P2P-", 4) != 0)
                return;

        if (streq(n, "P2P-DEVICE-FOUND")) {
                peer = event_peer(p, e, true);
                if (!peer)
                        goto bad;
                peer->lost = false;
                peer_update_info(peer, wpa_event_get(e, "name"), wpa_event_get(e, "pri_dev_type"),
                                 wpa_event_get(e, "config_methods"));
                peer_bus_announce(peer);
        } else if (streq(n, "P2P-DEVICE-LOST")) {
                peer = event_peer(p, e, false);
                if (!peer)
                        return;
                if (peer->state == PEER_STATE_CONNECTED) {
                        peer->lost = true; /* the group lives on; removed when it ends */
                        return;
                }
                if (peer->state == PEER_STATE_CONNECTING) {
                        /* No address: the peer is removed below, the answer changes nothing. */
                        (void)p2p_call(p, CALL_CANCEL, NULL, NULL, NULL, "P2P_CANCEL");
                        p2p_bus_emit_failed(p, peer, P2P_REASON(PEER_LOST));
                }
                peer_remove(peer);
        } else if (streq(n, "P2P-GO-NEG-REQUEST")) {
                const char *id = wpa_event_get(e, "dev_passwd_id");
                /* wps_defs.h DEV_PW_*: 4 push button; 1 the peer's user typed a PIN (we show
                 * one); 5 or 0 the peer shows a PIN (the user types it here). */
                PeerMethod m = !id              ? PEER_METHOD_NONE
                               : streq(id, "4") ? PEER_METHOD_PUSH_BUTTON
                               : streq(id, "1") ? PEER_METHOD_DISPLAY
                                                : PEER_METHOD_KEYPAD;
                peer = event_peer(p, e, true);
                if (!peer || m == PEER_METHOD_NONE)
                        goto bad;
                peer_request(p, peer, P2P_REQUEST_GO_NEG, m,
                             m == PEER_METHOD_DISPLAY && peer->pin[0] ? peer->pin : NULL);
        } else if (streq(n, "P2P-PROV-DISC-PBC-REQ") || streq(n, "P2P-PROV-DISC-SHOW-PIN") ||
                   streq(n, "P2P-PROV-DISC-ENTER-PIN")) {
                bool show = streq(n, "P2P-PROV-DISC-SHOW-PIN");
                const char *pin = show ? wpa_event_arg(e, 1) : NULL;
                peer = event_peer(p, e, true);
                if (!peer || (show && !wpa_pin_valid(pin)))
                        goto bad;
                peer_update_info(peer, wpa_event_get(e, "name"), wpa_event_get(e, "pri_dev_type"),
                                 wpa_event_get(e, "config_methods"));
                peer_request(p, peer, P2P_REQUEST_PROV_DISC,
                             show                                  ? PEER_METHOD_DISPLAY
                             : streq(n, "P2P-PROV-DISC-ENTER-PIN") ? PEER_METHOD_KEYPAD
                                                                   : PEER_METHOD_PUSH_BUTTON,
                             pin);
        } else if (streq(n, "P2P-PROV-DISC-FAILURE")) {
                peer = event_peer(p, e, false);
                if (peer && peer->state == PEER_STATE_CONNECTING)
                        peer_fail(peer, P2P_REASON(PROVISIONING_FAILED));
                else if (peer && peer->state == PEER_STATE_REQUEST)
                        peer_set_state(peer, PEER_STATE_AVAILABLE, P2P_REASON(WITHDRAWN));
        } else if (streq(n, "P2P-GO-NEG-FAILURE")) {
                peer = connecting_peer(p);
                if (peer)
                        peer_fail(peer, go_neg_status_word(wpa_event_get(e, "status")));
        } else if (streq(n, "P2P-GROUP-FORMATION-FAILURE")) {
                peer = connecting_peer(p);
                if (peer)
                        peer_fail(peer, P2P_REASON(FORMATION_FAILED));
        } else if (streq(n, "P2P-GROUP-STARTED")) {
                const char *ifname = wpa_event_arg(e, 0), *role = wpa_event_arg(e, 1);
                const char *go = wpa_event_get(e, "go_dev_addr");
                if (!ifname || !role || (!streq(role, "GO") && !streq(role, "client")))
                        goto bad;
                peer = streq(role, "client") ? p2p_get_peer(p, go) : NULL;
                if (!peer)
                        peer = connecting_peer(p);
                log_info("P2P group %s started as %s with %s.", ifname, role,
                         peer ? peer->addr : "an unknown peer");
                if (!peer)
                        return;
                (void)free_and_strdup(&peer->group_ifname, ifname);
                (void)free_and_strdup(&peer->group_role, role);
                peer->pin[0] = 0;
                peer_set_state(peer, PEER_STATE_CONNECTED, NULL);
        } else if (streq(n, "P2P-GROUP-REMOVED")) {
                const char *ifname = wpa_event_arg(e, 0);
                const char *reason = wpa_group_removed_reason(wpa_event_get(e, "reason"));
                if (!ifname)
                        goto bad;
                peer = NULL;
                for (size_t i = 0; i < p->n_peers; i++)
                        if (streq_ptr(p->peers[i]->group_ifname, ifname))
                                peer = p->peers[i];
                log_info("P2P group %s removed: %s.", ifname, reason);
                p2p_bus_emit_group_removed(p, ifname, peer, reason);
                if (peer)
                        peer_set_state(peer, PEER_STATE_AVAILABLE, reason);
        } else if (streq(n, "P2P-FIND-STOPPED")) {
                if (p->finding) {
                        p->finding = false;
                        p2p_bus_emit_state(p);
                }
        } else
                log_debug("P2P event %s ignored.", n);
        return;
bad:
        log_warning("Malformed %s event from wpa_supplicant ignored.", n);
}

/* The device. */

static void p2p_drop_device(P2p *p)
{
        while (p->calls) {
                P2pCall *c = p->calls;
                c->req = wpa_request_cancel(c->req);
                call_fail(c, "went away");
                call_free(c);
        }
        p->sub = wpa_subscription_free(p->sub);
        p->client = NULL;
        free(p->prefix);
        free(p->ifname);
        p->prefix = p->ifname = NULL;
        while (p->n_peers > 0)
                peer_remove(p->peers[p->n_peers - 1]);
        p->finding = false;
}

void p2p_set_device(P2p *p, WpaClient *client, const char *prefix, const char *ifname)
{
        const char *name;

        if (!p)
                return;
        if (client == p->client && streq_ptr(ifname, p->ifname))
                return;
        p2p_drop_device(p);
        if (client) {
                p->client = client;
                if ((prefix && !(p->prefix = strdup(prefix))) || !(p->ifname = strdup(ifname)) ||
                    wpa_client_subscribe(client, on_event, p, &p->sub) < 0) {
                        log_oom();
                        p2p_drop_device(p);
                } else {
                        name = p->core->config->wifi.p2p_device_name;
                        if (name)
                                (void)p2p_call(p, CALL_SET, NULL, NULL, NULL, "SET device_name %s",
                                               name);
                        enum_next(p, NULL);
                }
        }
        p2p_bus_emit_state(p);
}

int p2p_new(Core *core, P2p **ret)
{
        P2p *p = calloc(1, sizeof(*p));

        if (!p)
                return -ENOMEM;
        p->core = core;
        *ret = p;
        return 0;
}

P2p *p2p_free(P2p *p)
{
        if (!p)
                return NULL;
        p->slots.manager = sd_bus_slot_unref(p->slots.manager);
        p->slots.peers = sd_bus_slot_unref(p->slots.peers);
        p->slots.peer_enum = sd_bus_slot_unref(p->slots.peer_enum);
        p2p_drop_device(p);
        free(p->peers);
        free(p);
        return NULL;
}

/* Actions. */

int p2p_find(P2p *p, unsigned timeout_sec, sd_bus_message *msg)
{
        return p2p_call(p, CALL_FIND, NULL, msg, NULL, "P2P_FIND %u", timeout_sec);
}

int p2p_stop_find(P2p *p, sd_bus_message *msg)
{
        return p2p_call(p, CALL_STOP_FIND, NULL, msg, NULL, "P2P_STOP_FIND");
}

static int busy_error(Peer *peer, sd_bus_error *error)
{
        return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "%s is %s.", peer->addr,
                                 peer_state_to_string(peer->state));
}

static int not_sent(int r, sd_bus_error *error)
{
        return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "wpa_supplicant cannot be asked: %s.",
                                 strerror(-r));
}

int peer_connect(Peer *peer, PeerMethod method, const char *pin, sd_bus_message *msg,
                 sd_bus_error *error)
{
        P2pCall *c;
        int r = -EINVAL;

        if (peer->state != PEER_STATE_AVAILABLE)
                return busy_error(peer, error);
        /* ctrl_iface.c, p2p_ctrl_connect(): "pbc", "pin" (wpa_supplicant makes one up and
         * answers it), "<PIN> keypad" (the PIN the peer shows). */
        switch (method) {
        case PEER_METHOD_PUSH_BUTTON:
                r = p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c, "P2P_CONNECT %s pbc",
                             peer->addr);
                break;
        case PEER_METHOD_DISPLAY:
                r = p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c, "P2P_CONNECT %s pin",
                             peer->addr);
                break;
        case PEER_METHOD_KEYPAD:
                if (!wpa_pin_valid(pin))
                        return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                 "A PIN is 4 or 8 digits.");
                r = p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c,
                             "P2P_CONNECT %s %s keypad", peer->addr, pin);
                break;
        case PEER_METHOD_NONE:
        case _PEER_METHOD_MAX:
        case _PEER_METHOD_INVALID:
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Unknown method (expected push-button, display or "
                                         "keypad).");
        }
        if (r < 0)
                return not_sent(r, error);
        c->method = method;
        return 1;
}

int peer_accept(Peer *peer, const char *pin, sd_bus_message *msg, sd_bus_error *error)
{
        const char *auth = peer->request == P2P_REQUEST_PROV_DISC ? " auth" : "";
        P2pCall *c;
        int r = -EINVAL;

        if (peer->state != PEER_STATE_REQUEST)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "%s has no request pending.",
                                         peer->addr);
        switch (peer->method) {
        case PEER_METHOD_PUSH_BUTTON:
                r = p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c, "P2P_CONNECT %s pbc%s",
                             peer->addr, auth);
                break;
        case PEER_METHOD_DISPLAY:
                r = peer->pin[0]
                        ? p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c,
                                   "P2P_CONNECT %s %s display%s", peer->addr, peer->pin, auth)
                        : p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c,
                                   "P2P_CONNECT %s pin%s", peer->addr, auth);
                break;
        case PEER_METHOD_KEYPAD:
                if (!wpa_pin_valid(pin))
                        return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                 "Type the PIN %s shows (4 or 8 digits).",
                                                 peer->name ? peer->name : peer->addr);
                r = p2p_call(peer->p2p, CALL_CONNECT, peer->addr, msg, &c,
                             "P2P_CONNECT %s %s keypad%s", peer->addr, pin, auth);
                break;
        case PEER_METHOD_NONE:
        case _PEER_METHOD_MAX:
        case _PEER_METHOD_INVALID:
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "Unknown request method.");
        }
        if (r < 0)
                return not_sent(r, error);
        c->method = peer->method;
        c->accept = true;
        if (peer->method == PEER_METHOD_DISPLAY && peer->pin[0])
                memcpy(c->pin, peer->pin, 9);
        return 1;
}

int peer_reject(Peer *peer, sd_bus_message *msg, sd_bus_error *error)
{
        int r;

        if (peer->state != PEER_STATE_REQUEST)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "%s has no request pending.",
                                         peer->addr);
        /* ctrl_iface.c: P2P_REJECT <addr>. */
        r = p2p_call(peer->p2p, CALL_REJECT, peer->addr, msg, NULL, "P2P_REJECT %s", peer->addr);
        return r < 0 ? not_sent(r, error) : 1;
}

int peer_disconnect(Peer *peer, sd_bus_message *msg, sd_bus_error *error)
{
        int r;

        if (peer->state == PEER_STATE_CONNECTED && peer->group_ifname)
                r = p2p_call(peer->p2p, CALL_GROUP_REMOVE, peer->addr, msg, NULL,
                             "P2P_GROUP_REMOVE %s", peer->group_ifname);
        else if (peer->state == PEER_STATE_CONNECTING)
                r = p2p_call(peer->p2p, CALL_CANCEL, peer->addr, msg, NULL, "P2P_CANCEL");
        else
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "%s is not connected.",
                                         peer->addr);
        return r < 0 ? not_sent(r, error) : 1;
}
