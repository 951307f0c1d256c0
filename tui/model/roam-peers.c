/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-peers.h"
#include "roam-util.h"
#include "roam-words.h"

void p2p_peer_done(P2pPeer *p)
{
        free(p->path);
        free(p->address);
        free(p->name);
        free(p->type);
        free(p->state);
        free(p->method);
        free(p->pin);
        free(p->group);
        free(p->reason);
        strv_free(p->methods);
        *p = (P2pPeer){};
}

void p2p_list_done(P2pList *l)
{
        for (size_t i = 0; i < l->n; i++)
                p2p_peer_done(&l->peers[i]);
        free(l->peers);
        free(l->state);
        *l = (P2pList){};
}

static const BusMapEntry peer_map[] = {
    {"ConfigMethods", "as", bus_map_strv, offsetof(P2pPeer, methods)},
    {"Incoming", "b", bus_map_bool, offsetof(P2pPeer, incoming)},
    {"Address", "s", bus_map_string, offsetof(P2pPeer, address)},
    {"Name", "s", bus_map_string, offsetof(P2pPeer, name)},
    {"DeviceType", "s", bus_map_string, offsetof(P2pPeer, type)},
    {"State", "s", bus_map_string, offsetof(P2pPeer, state)},
    {"Method", "s", bus_map_string, offsetof(P2pPeer, method)},
    {"PIN", "s", bus_map_string, offsetof(P2pPeer, pin)},
    {"GroupInterface", "s", bus_map_string, offsetof(P2pPeer, group)},
    {"Reason", "s", bus_map_string, offsetof(P2pPeer, reason)},
    {},
};

/* Reads one org.roam1.Peer a{sv}. */
int p2p_read_peer(sd_bus_message *m, P2pPeer *p)
{
        return bus_map_read(m, peer_map, p);
}

bool p2p_peer_wants_pin(const P2pPeer *p)
{
        return streq_ptr(p->method, "display") &&
               (streq_ptr(p->state, "request") || streq_ptr(p->state, "connecting"));
}

int p2p_peer_read_pin(sd_bus_message *reply, P2pPeer *p)
{
        const char *pin;
        int r;

        if (sd_bus_message_is_method_error(reply, NULL))
                return -EACCES;
        r = sd_bus_message_read(reply, "s", &pin);
        if (r < 0)
                return r;
        return free_and_strdup(&p->pin, *pin ? pin : NULL) < 0 ? -ENOMEM : 0;
}

int p2p_list_fetch_pins(sd_bus *bus, P2pList *l)
{
        for (size_t i = 0; bus && i < l->n; i++) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                P2pPeer *p = &l->peers[i];

                if (!p2p_peer_wants_pin(p))
                        continue;
                if (sd_bus_call_method(bus, ROAM_BUS_NAME, p->path, ROAM_PEER_INTERFACE, "GetPIN",
                                       NULL, &reply, NULL) < 0)
                        continue;
                if (p2p_peer_read_pin(reply, p) == -ENOMEM)
                        return -ENOMEM;
        }
        return 0;
}

void p2p_pin_load_cancel(P2pPinLoad *pl)
{
        if (!pl)
                return;
        for (size_t i = 0; i < pl->n_slots; i++)
                sd_bus_slot_unref(pl->slots[i]);
        free(pl->slots);
        p2p_list_done(&pl->list);
        *pl = (P2pPinLoad){};
}

static int on_pin(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        P2pPinLoad *pl = userdata;
        sd_bus_slot *slot = sd_bus_get_current_slot(sd_bus_message_get_bus(m));
        const char *path = NULL;

        (void)sd_bus_slot_get_description(slot, &path);
        for (size_t i = 0; path && i < pl->list.n; i++)
                if (streq_ptr(pl->list.peers[i].path, path))
                        (void)p2p_peer_read_pin(m, &pl->list.peers[i]);
        for (size_t i = 0; i < pl->n_slots; i++)
                if (pl->slots[i] == slot)
                        pl->slots[i] = sd_bus_slot_unref(slot);
        if (--pl->pending == 0)
                pl->done(pl->userdata);
        return 0;
}

int p2p_pin_load_start(P2pPinLoad *pl, sd_bus *bus, P2pList *l, void (*done)(void *userdata),
                       void *userdata)
{
        p2p_pin_load_cancel(pl);
        pl->list = *l;
        *l = (P2pList){};
        pl->done = done;
        pl->userdata = userdata;
        pl->slots = calloc(pl->list.n ?: 1, sizeof(*pl->slots));
        if (!pl->slots)
                return -ENOMEM;
        for (size_t i = 0; i < pl->list.n; i++) {
                P2pPeer *p = &pl->list.peers[i];
                _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;

                if (!p2p_peer_wants_pin(p))
                        continue;
                if (sd_bus_call_method_async(bus, &slot, ROAM_BUS_NAME, p->path,
                                             ROAM_PEER_INTERFACE, "GetPIN", on_pin, pl, NULL) < 0 ||
                    sd_bus_slot_set_description(slot, p->path) < 0)
                        continue; /* without its PIN, as for a caller who may not see it */
                pl->slots[pl->n_slots++] = TAKE_PTR(slot);
        }
        pl->pending = pl->n_slots;
        return pl->pending == 0;
}

/* One interface of one object: a peer is appended, every other interface skipped. */
static int read_peer_interface(sd_bus_message *m, const char *path, const char *interface,
                               void *userdata)
{
        P2pList *l = userdata;
        P2pPeer *n;

        if (!streq(interface, ROAM_PEER_INTERFACE))
                return sd_bus_message_skip(m, "a{sv}");
        n = realloc(l->peers, sizeof(*n) * (l->n + 1));
        if (!n)
                return -ENOMEM;
        l->peers = n;
        n[l->n] = (P2pPeer){.path = strdup(path)};
        if (!n[l->n].path)
                return -ENOMEM;
        return p2p_read_peer(m, &n[l->n++]);
}

int p2p_list_parse_objects(sd_bus_message *reply, P2pList *l)
{
        int r = bus_map_read_objects(reply, read_peer_interface, l);

        return r < 0 ? r : 0;
}

const char *p2p_peer_label(const P2pPeer *p)
{
        return p->name && *p->name ? p->name : p->address;
}

char *p2p_methods_text(const P2pPeer *p)
{
        char buf[128] = "";

        STRV_FOREACH (m, p->methods) {
                const char *w = streq(*m, "push-button") ? "button"
                                : streq(*m, "keypad")    ? "its PIN"
                                                         : "our PIN";
                if (*buf)
                        strncat(buf, ", ", sizeof(buf) - strlen(buf) - 1);
                strncat(buf, w, sizeof(buf) - strlen(buf) - 1);
        }
        return strdup(*buf ? buf : "-");
}

const char *p2p_state_text(const P2pPeer *p)
{
        if (streq_ptr(p->state, "request"))
                return "asks to connect";
        return strempty(p->state);
}

const char *p2p_reason_text(const P2pPeer *p)
{
        return roam_p2p_reason_words(p->reason);
}

P2pSignal p2p_signal_read(sd_bus_message *m, P2pSignalArgs *ret)
{
        P2pSignal kind;

        if (sd_bus_message_is_signal(m, ROAM_MANAGER_INTERFACE, "P2PConnectionFailed"))
                kind = P2P_SIGNAL_CONNECTION_FAILED;
        else if (sd_bus_message_is_signal(m, ROAM_MANAGER_INTERFACE, "P2PGroupRemoved"))
                kind = P2P_SIGNAL_GROUP_REMOVED;
        else
                return P2P_SIGNAL_NONE;
        if (sd_bus_message_read(m, "sss", &ret->a, &ret->b, &ret->reason) < 0)
                return P2P_SIGNAL_NONE;
        return kind;
}
