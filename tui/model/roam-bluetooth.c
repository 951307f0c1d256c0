/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bluetooth.h"
#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-format.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-props.h"

static void question_done(RoamBtQuestion *q)
{
        free(q->kind);
        free(q->address);
        free(q->name);
        free(q->value);
        *q = (RoamBtQuestion){};
}

static void adapters_free(RoamBluetooth *bt)
{
        for (size_t i = 0; i < bt->n_adapters; i++) {
                free(bt->adapters[i].id);
                free(bt->adapters[i].address);
                free(bt->adapters[i].name);
        }
        free(bt->adapters);
        bt->adapters = NULL;
        bt->n_adapters = 0;
}

static void devices_free(RoamBluetooth *bt)
{
        for (size_t i = 0; i < bt->n_devices; i++) {
                RoamBtDevice *d = &bt->devices[i];

                free(d->address);
                free(d->adapter);
                free(d->name);
                free(d->kind);
                free(d->network);
                free(d->interface);
        }
        free(bt->devices);
        bt->devices = NULL;
        bt->n_devices = 0;
}

void roam_bluetooth_done(RoamBluetooth *bt)
{
        free(bt->last_event);
        adapters_free(bt);
        devices_free(bt);
        question_done(&bt->question);
        free(bt->nfc_text);
        *bt = (RoamBluetooth){};
}

/* Strings are never NULL: what roamd did not send reads as "". */
static int fill_strings(RoamBluetooth *bt)
{
        char **s[] = {&bt->last_event,    &bt->question.kind,  &bt->question.address,
                      &bt->question.name, &bt->question.value, &bt->nfc_text};

        for (size_t i = 0; i < ELEMENTSOF(s); i++)
                if (!*s[i] && !(*s[i] = strdup("")))
                        return -ENOMEM;
        return 0;
}

static int set_adapters(sd_bus_message *m, const char *key, void *field)
{
        RoamBluetooth *bt = field;
        const char *id, *address, *alias;
        int powered, discoverable, pairable, scanning, r;

        adapters_free(bt);
        r = sd_bus_message_enter_container(m, 'a', "(sssbbbb)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(sssbbbb)", &id, &address, &alias, &powered,
                                                  &discoverable, &pairable, &scanning)) > 0) {
                RoamBtAdapter *n = reallocarray(bt->adapters, bt->n_adapters + 1, sizeof(*n));

                if (!n)
                        return -ENOMEM;
                bt->adapters = n;
                n = &bt->adapters[bt->n_adapters++];
                *n = (RoamBtAdapter){
                    .id = strdup(id),
                    .address = strdup(address),
                    .name = strdup(alias),
                    .powered = powered,
                    .discoverable = discoverable,
                    .pairable = pairable,
                    .scanning = scanning,
                };
                if (!n->id || !n->address || !n->name)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int set_devices(sd_bus_message *m, const char *key, void *field)
{
        RoamBluetooth *bt = field;
        const char *address, *adapter, *name, *kind, *network, *iface;
        int paired, trusted, connected, r;
        int16_t rssi;
        int32_t battery;

        devices_free(bt);
        r = sd_bus_message_enter_container(m, 'a', "(ssssnbbbiss)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(ssssnbbbiss)", &address, &adapter, &name,
                                                  &kind, &rssi, &paired, &trusted, &connected,
                                                  &battery, &network, &iface)) > 0) {
                RoamBtDevice *n = reallocarray(bt->devices, bt->n_devices + 1, sizeof(*n));

                if (!n)
                        return -ENOMEM;
                bt->devices = n;
                n = &bt->devices[bt->n_devices++];
                *n = (RoamBtDevice){
                    .address = strdup(address),
                    .adapter = strdup(adapter),
                    .name = strdup(name),
                    .kind = strdup(kind),
                    .network = strdup(network),
                    .interface = strdup(iface),
                    .rssi = rssi,
                    .paired = paired,
                    .trusted = trusted,
                    .connected = connected,
                    .battery = battery,
                };
                if (!n->address || !n->adapter || !n->name || !n->kind || !n->network ||
                    !n->interface)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int set_question(sd_bus_message *m, const char *key, void *field)
{
        RoamBtQuestion *q = field;
        const char *kind, *address, *name, *value;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "(ussss)", &id, &kind, &address, &name, &value);
        if (r < 0)
                return r;
        question_done(q);
        q->id = id;
        q->kind = strdup(kind);
        q->address = strdup(address);
        q->name = strdup(name);
        q->value = strdup(value);
        return q->kind && q->address && q->name && q->value ? 0 : -ENOMEM;
}

static int set_nfc_offer(sd_bus_message *m, const char *key, void *field)
{
        RoamBluetooth *bt = field;
        const char *text;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "(us)", &id, &text);
        if (r < 0)
                return r;
        bt->nfc_id = id;
        return free_and_strdup(&bt->nfc_text, text) < 0 ? -ENOMEM : 0;
}

static const BusMapEntry bluetooth_map[] = {
    {"Available", "b", bus_map_bool, offsetof(RoamBluetooth, available)},
    {"AgentRegistered", "b", bus_map_bool, offsetof(RoamBluetooth, agent)},
    {"LastEvent", "s", bus_map_string, offsetof(RoamBluetooth, last_event)},
    {"Question", "(ussss)", set_question, offsetof(RoamBluetooth, question)},
    {"NfcOffer", "(us)", set_nfc_offer, 0},
    {"Adapters", "a(sssbbbb)", set_adapters, 0},
    {"Devices", "a(ssssnbbbiss)", set_devices, 0},
    {},
};

int roam_bluetooth_read(sd_bus_message *props, void *userdata)
{
        RoamBluetooth *bt = userdata;
        int r;

        r = bus_map_read(props, bluetooth_map, bt);
        if (r >= 0)
                r = fill_strings(bt);
        return r;
}

const RoamBtAdapter *roam_bluetooth_adapter(const RoamBluetooth *bt)
{
        return bt->n_adapters > 0 ? &bt->adapters[0] : NULL;
}

const char *roam_bluetooth_error_words(const sd_bus_error *e)
{
        if (sd_bus_error_has_name(e, SD_BUS_ERROR_UNKNOWN_OBJECT))
                return "roamd runs without Bluetooth ([Bluetooth] Enable=no).";
        return e->message ? e->message : e->name;
}

bool roam_bt_question_is_secret(const char *kind)
{
        return kind &&
               (streq(kind, "confirm") || streq(kind, "show-pin") || streq(kind, "show-passkey"));
}

void roam_bt_question_sentence(const RoamBtQuestion *q, char *buf, size_t size)
{
        const char *who = *q->name ? q->name : q->address;

        if (roam_bt_question_is_secret(q->kind) && !*strempty(q->value)) {
                /* roamd gives the code only to users allowed to pair */
                snprintf(buf, size, "%s is pairing; its %s is shown only to users allowed to pair",
                         who, streq(q->kind, "show-pin") ? "PIN" : "passkey");
                return;
        }

        if (streq(q->kind, "confirm"))
                snprintf(buf, size, "%s shows passkey %s: is it the same? (yes/no)", who, q->value);
        else if (streq(q->kind, "authorize"))
                snprintf(buf, size, "%s wants to pair without a code: allow? (yes/no)", who);
        else if (streq(q->kind, "authorize-service")) {
                const char *name = roam_format_bt_service(q->value);

                if (name)
                        snprintf(buf, size, "%s wants to use its %s service (%s): allow? (yes/no)",
                                 who, name, q->value);
                else
                        snprintf(buf, size, "%s wants to use service %s: allow? (yes/no)", who,
                                 q->value);
        } else if (streq(q->kind, "enter-pin"))
                snprintf(buf, size, "%s asks for its PIN (often 0000 or 1234; no: refuse)", who);
        else if (streq(q->kind, "enter-passkey"))
                snprintf(buf, size, "%s asks for the 6-digit passkey it shows (no: refuse)", who);
        else if (streq(q->kind, "show-pin"))
                snprintf(buf, size, "Type PIN %s on %s", q->value, who);
        else if (streq(q->kind, "show-passkey"))
                snprintf(buf, size, "Type passkey %s on %s, then Enter there", q->value, who);
        else
                snprintf(buf, size, "no question");
}

static bool question_has_secret(const RoamBtQuestion *q)
{
        return q->id != 0 && roam_bt_question_is_secret(q->kind);
}

int roam_bluetooth_read_changed(sd_bus_message *m, RoamBluetooth *bt)
{
        const char *iface;
        int r;

        r = sd_bus_message_read(m, "s", &iface);
        if (r < 0)
                return r;
        if (!streq(iface, ROAM_BLUETOOTH_INTERFACE))
                return 0;
        r = roam_bluetooth_read(m, bt);
        return r < 0 ? r : 1;
}

int roam_bluetooth_question_code(sd_bus *bus, RoamBluetooth *bt)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *v;

        /* Not allowed to see the code: the value stays "", and the sentence says so. */
        if (question_has_secret(&bt->question) &&
            sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH, ROAM_BLUETOOTH_INTERFACE,
                               "GetQuestionValue", NULL, &reply, "u", bt->question.id) >= 0 &&
            sd_bus_message_read(reply, "s", &v) > 0)
                return free_and_strdup(&bt->question.value, v) < 0 ? -ENOMEM : 0;
        return 0;
}

int roam_bluetooth_load(sd_bus *bus, RoamBluetooth *bt)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = roam_props_get_all(bus, ROAM_BLUETOOTH_PATH, ROAM_BLUETOOTH_INTERFACE,
                               roam_bluetooth_read, bt, &error);
        if (r < 0 && sd_bus_error_is_set(&error)) {
                if (sd_bus_error_has_name(&error, SD_BUS_ERROR_UNKNOWN_OBJECT))
                        return log_error_errno(r, "roamd runs without Bluetooth ([Bluetooth] "
                                                  "Enable=no)");
                return roam_bus_log_call_error(&error, r, "read Bluetooth");
        }
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        return roam_bluetooth_question_code(bus, bt) < 0 ? log_oom() : 0;
}

struct RoamBluetoothWatch {
        RoamProps *watch;
        RoamBluetooth bt;    /* what the owner was told */
        RoamBluetooth next;  /* read, waiting for its question's code */
        bool loaded;         /* the owner was told once */
        sd_bus_slot *secret; /* GetQuestionValue in flight, for next */
        uint32_t secret_id;  /* the question whose code secret_value is */
        char *secret_value;  /* "" when this caller may not see it */
        RoamBluetoothChanged changed;
        void *userdata;
};

RoamBluetoothWatch *roam_bluetooth_watch_free(RoamBluetoothWatch *w)
{
        if (!w)
                return NULL;
        roam_props_free(w->watch);
        sd_bus_slot_unref(w->secret);
        roam_bluetooth_done(&w->bt);
        roam_bluetooth_done(&w->next);
        free(w->secret_value);
        free(w);
        return NULL;
}

static int read_fresh(sd_bus_message *props, void *userdata)
{
        RoamBluetoothWatch *w = userdata;

        /* A whole answer replaces the model: never a stale mix of two states. */
        roam_bluetooth_done(&w->next);
        return roam_bluetooth_read(props, &w->next);
}

/* next, with its question's code, becomes what the owner sees; then the owner is told. */
static void publish(RoamBluetoothWatch *w, const sd_bus_error *error)
{
        roam_bluetooth_done(&w->bt);
        if (!error) {
                w->bt = w->next;
                w->next = (RoamBluetooth){};
                if (question_has_secret(&w->bt.question) &&
                    free_and_strdup(&w->bt.question.value, strempty(w->secret_value)) < 0)
                        error = &SD_BUS_ERROR_MAKE_CONST(SD_BUS_ERROR_NO_MEMORY, "Out of memory.");
        }
        if (error || fill_strings(&w->bt) < 0)
                roam_bluetooth_done(&w->bt), (void)fill_strings(&w->bt);
        w->loaded = true;
        /* the owner may free w in its handler: nothing of w is used after this */
        w->changed(w, error, w->userdata);
}

static int on_secret(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamBluetoothWatch *w = userdata;
        const char *v = "";

        w->secret = sd_bus_slot_unref(w->secret);
        if (sd_bus_message_is_method_error(m, NULL) || sd_bus_message_read(m, "s", &v) <= 0)
                v = ""; /* not allowed to see it: the sentences say so */
        if (free_and_strdup(&w->secret_value, v) < 0)
                return -ENOMEM;
        publish(w, NULL);
        return 0;
}

static void on_loaded(RoamProps *watch, const sd_bus_error *error, int r, void *userdata)
{
        RoamBluetoothWatch *w = userdata;
        const RoamBtQuestion *q = &w->next.question;

        if (error || r < 0) {
                w->secret = sd_bus_slot_unref(w->secret);
                roam_bluetooth_done(&w->next);
                publish(w, error
                               ?: &SD_BUS_ERROR_MAKE_CONST(SD_BUS_ERROR_INVALID_ARGS,
                                                           "roamd's answer could not be read."));
                return;
        }
        if (!question_has_secret(q))
                w->secret = sd_bus_slot_unref(w->secret);
        else if (q->id == w->secret_id && w->secret)
                return; /* its code is on its way: on_secret() tells the owner of this read */
        else if (q->id != w->secret_id) {
                /* The owner hears of a new question once its code is here (or refused): asked
                 * once a question, not on every read. */
                w->secret_id = q->id;
                w->secret = sd_bus_slot_unref(w->secret);
                if (sd_bus_call_method_async(roam_props_get_bus(w->watch), &w->secret,
                                             ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                             ROAM_BLUETOOTH_INTERFACE, "GetQuestionValue",
                                             on_secret, w, "u", q->id) >= 0)
                        return;
                (void)free_and_strdup(&w->secret_value, "");
        }
        publish(w, NULL);
}

int roam_bluetooth_watch_new(sd_bus *bus, RoamBluetoothChanged changed, void *userdata,
                             RoamBluetoothWatch **ret)
{
        _cleanup_(roam_bluetooth_watch_freep) RoamBluetoothWatch *w = NULL;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->changed = changed;
        w->userdata = userdata;
        r = fill_strings(&w->bt);
        if (r >= 0)
                r = roam_props_new(bus, ROAM_BLUETOOTH_PATH, ROAM_BLUETOOTH_INTERFACE, read_fresh,
                                   w, on_loaded, w, &w->watch);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(w);
        return 0;
}

const RoamBluetooth *roam_bluetooth_watch_get(const RoamBluetoothWatch *w)
{
        return &w->bt;
}

sd_bus *roam_bluetooth_watch_get_bus(const RoamBluetoothWatch *w)
{
        return w ? roam_props_get_bus(w->watch) : NULL;
}

bool roam_bluetooth_watch_loaded(const RoamBluetoothWatch *w)
{
        return w && w->loaded;
}

int roam_bluetooth_watch_reload(RoamBluetoothWatch *w)
{
        return w ? roam_props_reload(w->watch) : -ENOTCONN;
}
