/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-util.h"
#include "roam-props.h"
#include "roam-wifi.h"

/* One WiFi interface followed for the TUI and plain mode: the properties through RoamProps,
 * the networks read after each of its reads, the join signals passed on. */

enum {
        CALL_SCAN,
        CALL_JOIN,
        CALL_SECRET,
        CALL_CANCEL,
        CALL_FORGET,
        CALL_AUTOCONNECT,
        CALL_PRIORITY,
        CALL_ENROLL,
        _CALL_MAX,
};

static const char *const call_method[_CALL_MAX] = {
    [CALL_SCAN] = "Scan",
    [CALL_JOIN] = "Join",
    [CALL_SECRET] = "JoinSecret",
    [CALL_CANCEL] = "JoinCancel",
    [CALL_FORGET] = "Forget",
    [CALL_AUTOCONNECT] = "SetAutoconnect",
    [CALL_PRIORITY] = "SetPriority",
    [CALL_ENROLL] = "Enroll",
};

typedef struct CallSlot {
        RoamWifiWatch *watch;
        size_t which;
} CallSlot;

struct RoamWifiWatch {
        RoamProps *props;
        CallSlot ctx[_CALL_MAX]; /* each call's userdata: which call answered */
        sd_bus_slot *networks, *signals;
        sd_bus_slot *calls[_CALL_MAX];
        WifiLink link;
        char *error;
        bool props_loaded, loaded;
        RoamWifiEventFn fn;
        void *userdata;
};

RoamWifiWatch *roam_wifi_watch_free(RoamWifiWatch *w)
{
        if (!w)
                return NULL;
        roam_props_free(w->props);
        sd_bus_slot_unref(w->networks);
        sd_bus_slot_unref(w->signals);
        for (size_t i = 0; i < _CALL_MAX; i++)
                sd_bus_slot_unref(w->calls[i]);
        wifi_link_done(&w->link);
        free(w->error);
        free(w);
        return NULL;
}

static void emit(RoamWifiWatch *w, WifiEventType type, uint32_t id, const char *a, const char *b,
                 const sd_bus_error *error)
{
        w->fn(w, &(WifiEvent){.type = type, .id = id, .a = a, .b = b, .error = error}, w->userdata);
}

static int on_networks(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamWifiWatch *w = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        w->networks = sd_bus_slot_unref(w->networks);
        if (e)
                (void)free_and_strdup(&w->error, e->message ? e->message : e->name);
        else if (wifi_link_read_networks(m, &w->link) < 0)
                (void)free_and_strdup(&w->error, "roamd's list of networks could not be read");
        else
                w->error = (free(w->error), NULL);
        w->loaded = true;
        emit(w, WIFI_EVENT_CHANGED, 0, NULL, NULL, NULL);
        return 0;
}

static void on_props(RoamProps *rw, const sd_bus_error *error, int r, void *userdata)
{
        RoamWifiWatch *w = userdata;

        w->props_loaded = true;
        if (error || r < 0) {
                (void)free_and_strdup(&w->error, error && error->message
                                                     ? error->message
                                                     : "roamd's Wi-Fi state could not be read");
                w->loaded = true;
                emit(w, WIFI_EVENT_CHANGED, 0, NULL, NULL, NULL);
                return;
        }
        /* the networks after every change of the properties: a scan ended, a join moved */
        w->networks = sd_bus_slot_unref(w->networks);
        if (sd_bus_call_method_async(roam_props_get_bus(rw), &w->networks, ROAM_BUS_NAME,
                                     w->link.path, ROAM_WIFI_INTERFACE, "GetNetworks", on_networks,
                                     w, NULL) < 0)
                emit(w, WIFI_EVENT_CHANGED, 0, NULL, NULL, NULL);
}

static int read_props(sd_bus_message *m, void *userdata)
{
        RoamWifiWatch *w = userdata;

        return wifi_link_read_properties(m, &w->link);
}

int wifi_link_read(sd_bus_message *props, void *userdata)
{
        return wifi_link_read_properties(props, userdata);
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamWifiWatch *w = userdata;
        const char *member = sd_bus_message_get_member(m), *a, *b;
        uint32_t id;

        if (sd_bus_message_read(m, "uss", &id, &a, &b) < 0)
                return 0;
        if (streq_ptr(member, "JoinStep"))
                emit(w, WIFI_EVENT_JOIN_STEP, id, a, b, NULL);
        else if (streq_ptr(member, "JoinNeedsSecret"))
                emit(w, WIFI_EVENT_NEEDS_SECRET, id, a, b, NULL);
        else if (streq_ptr(member, "JoinDone"))
                emit(w, WIFI_EVENT_JOIN_DONE, id, a, b, NULL);
        return 0;
}

int roam_wifi_watch_new(sd_bus *bus, const char *path, RoamWifiEventFn fn, void *userdata,
                        RoamWifiWatch **ret)
{
        _cleanup_(roam_wifi_watch_freep) RoamWifiWatch *w = NULL;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->fn = fn;
        w->userdata = userdata;
        w->link.path = strdup(path);
        if (!w->link.path)
                return -ENOMEM;
        r = sd_bus_match_signal_async(bus, &w->signals, ROAM_BUS_NAME, path, ROAM_WIFI_INTERFACE,
                                      NULL, on_signal, NULL, w);
        if (r >= 0)
                r = roam_props_new(bus, path, ROAM_WIFI_INTERFACE, read_props, w, on_props, w,
                                   &w->props);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(w);
        return 0;
}

const WifiLink *roam_wifi_watch_get(const RoamWifiWatch *w)
{
        return w ? &w->link : NULL;
}

const char *roam_wifi_watch_path(const RoamWifiWatch *w)
{
        return w ? w->link.path : NULL;
}

bool roam_wifi_watch_loaded(const RoamWifiWatch *w)
{
        return w && w->loaded;
}

const char *roam_wifi_watch_error(const RoamWifiWatch *w)
{
        return w ? w->error : NULL;
}

static int on_replied(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        CallSlot *c = userdata;
        RoamWifiWatch *w = c->watch;
        size_t which = c->which;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        const char *uri = NULL;
        uint32_t id = 0;

        w->calls[which] = sd_bus_slot_unref(w->calls[which]);
        if (!e && which == CALL_JOIN && sd_bus_message_read(m, "u", &id) < 0)
                id = 0;
        if (!e && which == CALL_ENROLL && sd_bus_message_read(m, "us", &id, &uri) < 0)
                id = 0, uri = NULL;
        emit(w, WIFI_EVENT_REPLIED, id, call_method[which], uri, e);
        /* a change may come without a signal of its own (the networks' known flags) */
        if (!e && which != CALL_SECRET) {
                /* a read begun before the answer may hold the old state: read anew */
                w->networks = sd_bus_slot_unref(w->networks);
                (void)roam_props_reload(w->props);
        }
        return 0;
}

static int send(RoamWifiWatch *w, size_t which, sd_bus_message *m)
{
        w->calls[which] = sd_bus_slot_unref(w->calls[which]);
        w->ctx[which] = (CallSlot){.watch = w, .which = which};
        return sd_bus_call_async(roam_props_get_bus(w->props), &w->calls[which], m, on_replied,
                                 &w->ctx[which], 0);
}

static int new_call(RoamWifiWatch *w, size_t which, sd_bus_message **ret)
{
        if (!w || !w->props)
                return -ENOTCONN;
        return sd_bus_message_new_method_call(roam_props_get_bus(w->props), ret, ROAM_BUS_NAME,
                                              w->link.path, ROAM_WIFI_INTERFACE,
                                              call_method[which]);
}

int wifi_append_bytes(sd_bus_message *m, const char *key, const void *p, size_t n)
{
        int r = sd_bus_message_open_container(m, 'e', "sv");

        if (r >= 0)
                r = sd_bus_message_append(m, "s", key);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', p, n);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

int roam_wifi_watch_scan(RoamWifiWatch *w)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_SCAN, &m);

        return r < 0 ? r : send(w, CALL_SCAN, m);
}

static int append_text(sd_bus_message *m, const char *key, const char *value)
{
        return value && *value ? sd_bus_message_append(m, "{sv}", key, "s", value) : 0;
}

int roam_wifi_watch_join(RoamWifiWatch *w, const uint8_t *ssid, size_t len, bool hidden,
                         const char *security, const char *secret, const WifiEapJoin *eap)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_JOIN, &m);

        /* a message with a secret is wiped when sd-bus frees it */
        if (r >= 0 && secret)
                r = sd_bus_message_sensitive(m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = wifi_append_bytes(m, "ssid", ssid, len);
        if (r >= 0 && hidden)
                r = sd_bus_message_append(m, "{sv}", "hidden", "b", 1);
        if (r >= 0 && security)
                r = sd_bus_message_append(m, "{sv}", "security", "s", security);
        /* an EAP network's secret is its password, a key of its own */
        if (r >= 0 && secret)
                r = wifi_append_bytes(m, eap ? "password" : "passphrase", secret, strlen(secret));
        if (r >= 0 && eap) {
                r = append_text(m, "identity", eap->identity);
                if (r >= 0)
                        r = append_text(m, "eap", eap->eap ?: "peap");
                if (r >= 0)
                        r = append_text(m, "anonymous-identity", eap->anonymous_identity);
                if (r >= 0)
                        r = append_text(m, "ca-file", eap->ca_file);
                if (r >= 0)
                        r = append_text(m, "domain", eap->domain);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r < 0 ? r : send(w, CALL_JOIN, m);
}

int roam_wifi_watch_secret(RoamWifiWatch *w, uint32_t id, const char *secret, const char *identity)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_SECRET, &m);

        if (r >= 0)
                r = sd_bus_message_sensitive(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "u", id);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = wifi_append_bytes(m, identity ? "password" : "passphrase", secret,
                                      strlen(secret));
        if (r >= 0 && identity)
                r = sd_bus_message_append(m, "{sv}", "identity", "s", identity);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r < 0 ? r : send(w, CALL_SECRET, m);
}

int roam_wifi_watch_cancel(RoamWifiWatch *w, uint32_t id)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_CANCEL, &m);

        if (r >= 0)
                r = sd_bus_message_append(m, "u", id);
        return r < 0 ? r : send(w, CALL_CANCEL, m);
}

int roam_wifi_watch_forget(RoamWifiWatch *w, const uint8_t *ssid, size_t len)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_FORGET, &m);

        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', ssid, len);
        return r < 0 ? r : send(w, CALL_FORGET, m);
}

int roam_wifi_watch_autoconnect(RoamWifiWatch *w, const uint8_t *ssid, size_t len, bool on)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_AUTOCONNECT, &m);

        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', ssid, len);
        if (r >= 0)
                r = sd_bus_message_append(m, "b", on);
        return r < 0 ? r : send(w, CALL_AUTOCONNECT, m);
}

int roam_wifi_watch_priority(RoamWifiWatch *w, const uint8_t *ssid, size_t len, int32_t priority)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_PRIORITY, &m);

        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', ssid, len);
        if (r >= 0)
                r = sd_bus_message_append(m, "i", priority);
        return r < 0 ? r : send(w, CALL_PRIORITY, m);
}

int roam_wifi_watch_enroll(RoamWifiWatch *w)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r = new_call(w, CALL_ENROLL, &m);

        return r < 0 ? r : send(w, CALL_ENROLL, m);
}
