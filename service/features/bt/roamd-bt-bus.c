/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-bus.h"
#include "roam-log.h"
#include "roamd-bus-auth.h"
#include "roamd-bt-class.h"
#include "roamd-bt.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"

/* org.roam1.Bluetooth at /org/roam1/bluetooth (docs/dbus-api.md). Every method changes
 * something (a radio, a pairing, a network), so every one is authorized like app changes. */

#define BT_ACTION "org.roam1.bluetooth"

static int property_get_available(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error)
{
        Bt *bt = userdata;

        if (streq(property, "Available"))
                return sd_bus_message_append(reply, "b", bluez_owner(bt->bluez) != NULL);
        return sd_bus_message_append(reply, "b", bt->agent_registered);
}

static int property_get_last_event(sd_bus *bus, const char *path, const char *interface,
                                   const char *property, sd_bus_message *reply, void *userdata,
                                   sd_bus_error *error)
{
        Bt *bt = userdata;

        return sd_bus_message_append(reply, "s", strempty(bt->last_event));
}

static int property_get_adapters(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error)
{
        Bt *bt = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sssbbbb)");
        for (size_t i = 0; r >= 0 && i < bt->bluez->n_adapters; i++) {
                BluezAdapter *a = bt->bluez->adapters[i];
                r = sd_bus_message_append(reply, "(sssbbbb)", a->id, a->address, strempty(a->alias),
                                          a->powered, a->discoverable, a->pairable, a->discovering);
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static const char *network_word(const BluezDevice *d)
{
        if (d->network_connected)
                return "connected";
        if (d->has_network && d->nap)
                return "available";
        return "";
}

static int property_get_devices(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        Bt *bt = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(ssssnbbbiss)");
        for (size_t i = 0; r >= 0 && i < bt->bluez->n_devices; i++) {
                BluezDevice *d = bt->bluez->devices[i];
                BluezAdapter *a = bluez_get_adapter(bt->bluez, d->adapter);
                /* RSSI 127 means "not available" in the Bluetooth specification. */
                r = sd_bus_message_append(
                    reply, "(ssssnbbbiss)", d->address, a ? a->id : "",
                    d->name ? d->name : d->address, bt_device_word(d->device_class, d->appearance),
                    d->has_rssi ? d->rssi : (int16_t)127, d->paired, d->trusted, d->connected,
                    d->battery, network_word(d), strempty(d->network_interface));
        }
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

static bool question_value_is_secret(BtQuestionKind kind)
{
        switch (kind) {
        case BT_QUESTION_CONFIRM:
        case BT_QUESTION_SHOW_PIN:
        case BT_QUESTION_SHOW_PASSKEY:
                return true;
        case BT_QUESTION_NONE:
        case BT_QUESTION_AUTHORIZE:
        case BT_QUESTION_SERVICE:
        case BT_QUESTION_ENTER_PIN:
        case BT_QUESTION_ENTER_PASSKEY:
        case _BT_QUESTION_MAX:
        case _BT_QUESTION_INVALID:
                break;
        }
        return false;
}

static int property_get_question(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error)
{
        Bt *bt = userdata;
        const BtQuestion *q = &bt->question;

        /* A property goes to every reader and its change to every listener on the bus: the
         * passkey or PIN of a pairing is not in it (GetQuestionValue, authorized). */
        return sd_bus_message_append(reply, "(ussss)", q->id, bt_question_kind_to_string(q->kind),
                                     q->address, strempty(q->name),
                                     question_value_is_secret(q->kind) ? "" : q->value);
}

static int method_get_question_value(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        const BtQuestion *q = &bt->question;
        uint32_t id;
        int r;

        r = bus_check_authorized(msg, BT_ACTION, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "u", &id);
        if (r < 0)
                return r;
        if (id == 0 || id != q->id)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Question %u is not open.",
                                         id);
        return sd_bus_reply_method_return(msg, "s", q->value);
}

static int property_get_nfc_offer(sd_bus *bus, const char *path, const char *interface,
                                  const char *property, sd_bus_message *reply, void *userdata,
                                  sd_bus_error *error)
{
        Bt *bt = userdata;

        return sd_bus_message_append(reply, "(us)", bt->nfc_offer_id, strempty(bt->nfc_offer_text));
}

static int get_device(Bt *bt, sd_bus_message *msg, BluezDevice **ret, sd_bus_error *error)
{
        const char *address;
        int r;

        r = bus_check_authorized(msg, BT_ACTION, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "s", &address);
        if (r < 0)
                return r;
        if (!bluez_owner(bt->bluez))
                return sd_bus_error_set(error, ROAM_ERROR_FAILED, "BlueZ is not running.");
        if (!bluez_address_valid(address))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "\"%s\" is not a Bluetooth address (AA:BB:CC:DD:EE:FF).",
                                         address);
        *ret = bluez_get_device(bt->bluez, address);
        if (!*ret)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "No Bluetooth device %s is known; scan first.", address);
        return 0;
}

static int reply_forward(int r, sd_bus_error *error)
{
        if (r == -EHOSTDOWN)
                return sd_bus_error_set(error, ROAM_ERROR_FAILED, "BlueZ is not running.");
        if (r < 0)
                return sd_bus_error_set_errnof(error, -r, "Cannot reach BlueZ: %m");
        return 1;
}

static int method_device(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        const char *member = sd_bus_message_get_member(msg);
        const char *name;
        char what[320];
        BluezDevice *d;
        int r;

        r = get_device(bt, msg, &d, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        name = d->name ? d->name : d->address;
        if (streq(member, "Pair"))
                return bt_pair(bt, d->address, msg, error);
        if (streq(member, "Connect")) {
                snprintf(what, sizeof(what), "Connecting %s", name);
                r = bt_forward(bt, msg, what, d->path, "org.bluez.Device1", "Connect", NULL);
        } else if (streq(member, "Disconnect")) {
                snprintf(what, sizeof(what), "Disconnecting %s", name);
                r = bt_forward(bt, msg, what, d->path, "org.bluez.Device1", "Disconnect", NULL);
        } else if (streq(member, "Remove")) {
                snprintf(what, sizeof(what), "Removing %s", name);
                r = bt_forward(bt, msg, what, d->adapter, "org.bluez.Adapter1", "RemoveDevice", "o",
                               d->path);
        } else if (streq(member, "ConnectNetwork")) {
                if (!d->has_network)
                        return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                                 "%s offers no network (no PAN service).", name);
                snprintf(what, sizeof(what), "Joining the network of %s", name);
                r = bt_forward(bt, msg, what, d->path, "org.bluez.Network1", "Connect", "s", "nap");
        } else { /* DisconnectNetwork */
                if (!d->has_network)
                        return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                                 "%s offers no network (no PAN service).", name);
                snprintf(what, sizeof(what), "Leaving the network of %s", name);
                r = bt_forward(bt, msg, what, d->path, "org.bluez.Network1", "Disconnect", NULL);
        }
        return reply_forward(r, error);
}

static int method_set_trusted(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        BluezDevice *d;
        int trusted, r;
        char what[320];

        r = get_device(bt, msg, &d, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "b", &trusted);
        if (r < 0)
                return r;
        snprintf(what, sizeof(what), "%s %s", trusted ? "Trusting" : "No longer trusting",
                 d->name ? d->name : d->address);
        r = bt_forward(bt, msg, what, d->path, "org.freedesktop.DBus.Properties", "Set", "ssv",
                       "org.bluez.Device1", "Trusted", "b", trusted);
        return reply_forward(r, error);
}

static int get_adapter(Bt *bt, sd_bus_message *msg, BluezAdapter **ret, sd_bus_error *error)
{
        const char *id;
        int r;

        r = bus_check_authorized(msg, BT_ACTION, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "s", &id);
        if (r < 0)
                return r;
        *ret = *id ? bluez_get_adapter(bt->bluez, id) : bluez_default_adapter(bt->bluez);
        if (!*ret)
                return sd_bus_error_setf(
                    error, ROAM_ERROR_INVALID_ARGS,
                    *id ? "No Bluetooth adapter %s." : "No Bluetooth adapter%s.", id);
        return 0;
}

static int method_set_adapter(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        BluezAdapter *a;
        const char *prop;
        int value, r;
        char what[128];

        r = get_adapter(bt, msg, &a, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "sb", &prop, &value);
        if (r < 0)
                return r;
        if (!streq(prop, "Powered") && !streq(prop, "Discoverable") && !streq(prop, "Pairable"))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "\"%s\" is not Powered, Discoverable or Pairable.", prop);
        snprintf(what, sizeof(what), "Setting %s of %s to %s", prop, a->id, value ? "on" : "off");
        r = bt_forward(bt, msg, what, a->path, "org.freedesktop.DBus.Properties", "Set", "ssv",
                       "org.bluez.Adapter1", prop, "b", value);
        return reply_forward(r, error);
}

static int method_discovery(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        BluezAdapter *a;
        uint32_t secs;
        int r;

        r = get_adapter(bt, msg, &a, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        if (streq(sd_bus_message_get_member(msg), "StopDiscovery")) {
                bt->discovery_timeout = sd_event_source_disable_unref(bt->discovery_timeout);
                r = bt_forward(bt, msg, "Stopping the scan", a->path, "org.bluez.Adapter1",
                               "StopDiscovery", NULL);
                return reply_forward(r, error);
        }
        r = sd_bus_message_read(msg, "u", &secs);
        if (r < 0)
                return r;
        if (secs < 1 || secs > 600)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "A scan lasts 1 to 600 seconds.");
        r = bt_start_discovery(bt, a, secs * USEC_PER_SEC, msg);
        return reply_forward(r, error);
}

static int method_answer(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        uint32_t id;
        int accept, r;
        const char *value;

        r = bus_check_authorized(msg, BT_ACTION, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "ubs", &id, &accept, &value);
        if (r < 0)
                return r;
        r = bt_answer(bt, id, accept, value, error);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_import_ndef(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        const void *data;
        size_t size;
        int apply, r;

        r = bus_check_authorized(msg, BT_ACTION, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read_array(msg, 'y', &data, &size);
        if (r < 0)
                return r;
        r = sd_bus_message_read(msg, "b", &apply);
        if (r < 0)
                return r;
        return bt_nfc_import(bt, data, size, apply, msg, error);
}

static int method_answer_nfc(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        uint32_t id;
        int accept, r;

        r = bus_check_authorized(msg, BT_ACTION, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "ub", &id, &accept);
        if (r < 0)
                return r;
        return bt_nfc_answer(bt, id, accept, msg, error);
}

const sd_bus_vtable bt_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Available", "b", property_get_available, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("AgentRegistered", "b", property_get_available, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Adapters", "a(sssbbbb)", property_get_adapters, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Devices", "a(ssssnbbbiss)", property_get_devices, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Question", "(ussss)", property_get_question, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("NfcOffer", "(us)", property_get_nfc_offer, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("LastEvent", "s", property_get_last_event, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("SetAdapter", SD_BUS_ARGS("s", adapter, "s", property, "b", value),
                            SD_BUS_NO_RESULT, method_set_adapter, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("StartDiscovery", SD_BUS_ARGS("s", adapter, "u", seconds),
                            SD_BUS_NO_RESULT, method_discovery, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("StopDiscovery", SD_BUS_ARGS("s", adapter), SD_BUS_NO_RESULT,
                            method_discovery, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Pair", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT, method_device,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Connect", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT, method_device,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Disconnect", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT,
                            method_device, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Remove", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT, method_device,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SetTrusted", SD_BUS_ARGS("s", address, "b", trusted), SD_BUS_NO_RESULT,
                            method_set_trusted, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ConnectNetwork", SD_BUS_ARGS("s", address),
                            SD_BUS_RESULT("s", interface), method_device,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("DisconnectNetwork", SD_BUS_ARGS("s", address), SD_BUS_NO_RESULT,
                            method_device, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Answer", SD_BUS_ARGS("u", id, "b", accept, "s", value),
                            SD_BUS_NO_RESULT, method_answer, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("GetQuestionValue", SD_BUS_ARGS("u", id), SD_BUS_RESULT("s", value),
                            method_get_question_value, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ImportNdef", SD_BUS_ARGS("ay", message, "b", apply),
                            SD_BUS_RESULT("s", kind, "a(sa{ss})", carriers), method_import_ndef,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("AnswerNfc", SD_BUS_ARGS("u", id, "b", accept),
                            SD_BUS_RESULT("s", kind, "a(sa{ss})", carriers), method_answer_nfc,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int bt_bus_setup(Bt *bt)
{
        int r;

        r = sd_bus_add_object_vtable(bt->core->bus, &bt->vtable_slot, ROAM_BLUETOOTH_PATH,
                                     ROAM_BLUETOOTH_INTERFACE, bt_vtable, bt);
        if (r < 0)
                return log_error_errno(r, "Failed to add the Bluetooth object: %m");
        return 0;
}
