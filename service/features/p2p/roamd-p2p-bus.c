/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdlib.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-core.h"
#include "roamd-p2p.h"

#define P2P_ACTION "org.roam1.wifi-direct"

static int peer_get_string(sd_bus *bus, const char *path, const char *interface,
                           const char *property, sd_bus_message *reply, void *userdata,
                           sd_bus_error *error)
{
        Peer *p = userdata;
        const char *v = NULL;

        if (streq(property, "Address"))
                v = p->addr;
        else if (streq(property, "Name"))
                v = p->name;
        else if (streq(property, "DeviceType"))
                v = p->type_word;
        else if (streq(property, "PrimaryDeviceType"))
                v = p->pri_dev_type;
        else if (streq(property, "State"))
                v = peer_state_to_string(p->state);
        else if (streq(property, "Method"))
                v = peer_method_to_string(p->method);
        else if (streq(property, "PIN"))
                /* every reader and every listener would see it: GetPIN() (authorized) or
                 * Connect()'s answer give it */
                v = NULL;
        else if (streq(property, "GroupInterface"))
                v = p->group_ifname;
        else if (streq(property, "GroupRole"))
                /* The peer's role: wpa_supplicant reports ours. */
                v = !p->group_role ? NULL : streq(p->group_role, "GO") ? "client" : "GO";
        else if (streq(property, "Reason"))
                v = p->reason;
        return sd_bus_message_append(reply, "s", strempty(v));
}

static int peer_get_incoming(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error)
{
        Peer *p = userdata;

        return sd_bus_message_append(reply, "b", (int)(p->request != P2P_REQUEST_NONE));
}

static int peer_get_methods(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error)
{
        Peer *p = userdata;
        const char *l[4];
        size_t n = 0;

        if (p->methods & WPA_CONFIG_PUSH_BUTTON)
                l[n++] = "push-button";
        /* The peer shows a PIN: we type it (keypad here); it has a keypad: we show one. */
        if (p->methods & WPA_CONFIG_DISPLAY)
                l[n++] = "keypad";
        if (p->methods & WPA_CONFIG_KEYPAD)
                l[n++] = "display";
        l[n] = NULL;
        return sd_bus_message_append_strv(reply, (char **)l);
}

static int authorize(sd_bus_message *msg, sd_bus_error *error)
{
        return bus_check_authorized(msg, P2P_ACTION, error);
}

static int method_connect(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        const char *method, *pin;
        PeerMethod m;
        int r;

        r = sd_bus_message_read(msg, "ss", &method, &pin);
        if (r < 0)
                return r;
        r = authorize(msg, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        m = peer_method_from_string(method);
        if (m <= PEER_METHOD_NONE)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Unknown method \"%s\" (expected push-button, display "
                                         "or keypad).",
                                         method);
        return peer_connect(userdata, m, pin, msg, error);
}

static int method_accept(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        const char *pin;
        int r;

        r = sd_bus_message_read(msg, "s", &pin);
        if (r < 0)
                return r;
        r = authorize(msg, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        return peer_accept(userdata, pin, msg, error);
}

static int method_get_pin(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Peer *p = userdata;
        int r = authorize(msg, error);

        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        return sd_bus_reply_method_return(msg, "s", p->pin);
}

static int method_reject(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        int r = authorize(msg, error);

        return r != 0 ? r : peer_reject(userdata, msg, error);
}

static int method_disconnect(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        int r = authorize(msg, error);

        return r != 0 ? r : peer_disconnect(userdata, msg, error);
}

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable peer_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Address", "s", peer_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Name", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("DeviceType", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("PrimaryDeviceType", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("ConfigMethods", "as", peer_get_methods, 0, EC),
    SD_BUS_PROPERTY("State", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("Method", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("PIN", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("Incoming", "b", peer_get_incoming, 0, EC),
    SD_BUS_PROPERTY("GroupInterface", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("GroupRole", "s", peer_get_string, 0, EC),
    SD_BUS_PROPERTY("Reason", "s", peer_get_string, 0, EC),
    SD_BUS_METHOD_WITH_ARGS("Connect", SD_BUS_ARGS("s", method, "s", pin), SD_BUS_RESULT("s", pin),
                            method_connect, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Accept", SD_BUS_ARGS("s", pin), SD_BUS_NO_RESULT, method_accept,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetPIN", SD_BUS_NO_ARGS, SD_BUS_RESULT("s", pin), method_get_pin,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Reject", NULL, NULL, method_reject, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Disconnect", NULL, NULL, method_disconnect, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static int peer_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                     void **found, sd_bus_error *error)
{
        P2p *p2p = userdata;
        Peer *p = p2p_get_peer_by_path(p2p, path);

        if (!p || !p->announced)
                return 0;
        *found = p;
        return 1;
}

static int peer_enumerate(sd_bus *bus, const char *path, void *userdata, char ***nodes,
                          sd_bus_error *error)
{
        P2p *p2p = userdata;
        _cleanup_strv_free_ char **l = NULL;

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < p2p_n_peers(p2p); i++) {
                Peer *p = p2p_peer_at(p2p, i);
                if (p->announced && strv_extend(&l, p->path) < 0)
                        return -ENOMEM;
        }
        *nodes = TAKE_PTR(l);
        return 1;
}

void peer_bus_emit_changed(Peer *peer, const char *first, ...)
{
        sd_bus *bus = p2p_core(peer->p2p)->bus;
        const char *names[16];
        size_t n = 0;
        va_list ap;
        int r;

        if (!peer->announced || !bus)
                return;
        va_start(ap, first);
        for (const char *s = first; s && n < ELEMENTSOF(names) - 1; s = va_arg(ap, const char *))
                names[n++] = s;
        va_end(ap);
        names[n] = NULL;
        r = sd_bus_emit_properties_changed_strv(bus, peer->path, ROAM_PEER_INTERFACE,
                                                (char **)names);
        if (r < 0)
                log_warning_errno(r, "%s: failed to emit PropertiesChanged: %m", peer->path);
}

void peer_bus_announce(Peer *peer)
{
        sd_bus *bus = p2p_core(peer->p2p)->bus;
        int r;

        if (peer->announced)
                return;
        peer->announced = true;
        log_info("P2P peer %s found: \"%s\", %s.", peer->addr, strempty(peer->name),
                 peer->type_word);
        if (!bus)
                return;
        r = sd_bus_emit_interfaces_added(bus, peer->path, ROAM_PEER_INTERFACE, NULL);
        if (r < 0)
                log_warning_errno(r, "%s: failed to emit InterfacesAdded: %m", peer->path);
}

void peer_bus_withdraw(Peer *peer)
{
        sd_bus *bus = p2p_core(peer->p2p)->bus;
        int r;

        if (!peer->announced)
                return;
        peer->announced = false;
        if (!bus)
                return;
        r = sd_bus_emit_interfaces_removed(bus, peer->path, ROAM_PEER_INTERFACE, NULL);
        if (r < 0)
                log_warning_errno(r, "%s: failed to emit InterfacesRemoved: %m", peer->path);
}

void p2p_bus_emit_state(P2p *p)
{
        sd_bus *bus = p2p_core(p)->bus;
        int r;

        if (!bus)
                return;
        r = sd_bus_emit_properties_changed(bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                                           "P2PState", "P2PDevice", NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to emit PropertiesChanged: %m");
}

void p2p_bus_emit_failed(P2p *p, const Peer *peer, const char *reason)
{
        sd_bus *bus = p2p_core(p)->bus;

        if (bus)
                (void)sd_bus_emit_signal(bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                                         "P2PConnectionFailed", "sss", peer->addr,
                                         strempty(peer->name), reason);
}

void p2p_bus_emit_group_removed(P2p *p, const char *ifname, const Peer *peer, const char *reason)
{
        sd_bus *bus = p2p_core(p)->bus;

        if (bus)
                (void)sd_bus_emit_signal(bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                                         "P2PGroupRemoved", "sss", ifname, peer ? peer->addr : "",
                                         reason);
}

static int method_find(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        P2p *p2p = userdata;
        uint32_t timeout;
        int r;

        r = sd_bus_message_read(msg, "u", &timeout);
        if (r < 0)
                return r;
        r = authorize(msg, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        if (timeout > 3600)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "Search for at most 3600 seconds.");
        r = p2p_find(p2p, timeout == 0 ? 30 : timeout, msg);
        if (r < 0)
                return sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                        "No WiFi Direct device: wpa_supplicant does not run one.");
        return 1;
}

static int method_stop_find(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        P2p *p2p = userdata;
        int r;

        r = authorize(msg, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = p2p_stop_find(p2p, msg);
        if (r < 0)
                return sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                        "No WiFi Direct device: wpa_supplicant does not run one.");
        return 1;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        P2p *p2p = userdata;

        return sd_bus_message_append(
            reply, "s", streq(property, "P2PState") ? p2p_state(p2p) : p2p_device(p2p));
}

static const sd_bus_vtable p2p_manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("P2PState", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("P2PDevice", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("P2PFind", SD_BUS_ARGS("u", timeout_sec), SD_BUS_NO_RESULT, method_find,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("P2PStopFind", NULL, NULL, method_stop_find, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("P2PConnectionFailed",
                            SD_BUS_ARGS("s", address, "s", name, "s", reason), 0),
    SD_BUS_SIGNAL_WITH_ARGS("P2PGroupRemoved", SD_BUS_ARGS("s", ifname, "s", address, "s", reason),
                            0),
    SD_BUS_VTABLE_END,
};

int p2p_bus_setup(P2p *p)
{
        sd_bus *bus = p2p_core(p)->bus;
        P2pBusSlots *slots = p2p_bus_slots(p);
        int r;

        /* The P2P members of org.roam1.Manager: this slice of the interface is ours. */
        r = sd_bus_add_object_vtable(bus, &slots->manager, ROAM_MANAGER_PATH,
                                     ROAM_MANAGER_INTERFACE, p2p_manager_vtable, p);
        if (r < 0)
                return log_error_errno(r, "Failed to add the manager's P2P members: %m");
        r = sd_bus_add_fallback_vtable(bus, &slots->peers, ROAM_PEER_PATH_PREFIX,
                                       ROAM_PEER_INTERFACE, peer_vtable, peer_find, p);
        if (r < 0)
                return log_error_errno(r, "Failed to add peer objects: %m");
        r = sd_bus_add_node_enumerator(bus, &slots->peer_enum, ROAM_PEER_PATH_PREFIX,
                                       peer_enumerate, p);
        if (r < 0)
                return log_error_errno(r, "Failed to add peer enumerator: %m");
        return 0;
}
