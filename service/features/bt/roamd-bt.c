/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-text.h"
#include "roamd-bt.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"

#define AGENT_IFACE      "org.bluez.Agent1"
#define AGENT_MGR_IFACE  "org.bluez.AgentManager1"
#define AGENT_CAPABILITY "KeyboardDisplay"
#define PAIR_TIMEOUT     (90 * USEC_PER_SEC)
#define ERROR_REJECTED   "org.bluez.Error.Rejected"
#define ERROR_CANCELED   "org.bluez.Error.Canceled"

struct BtOp {
        Bt *bt;
        BtOp *next, *prev;
        sd_bus_message *request; /* the client's call, answered when BlueZ answers; may be NULL */
        sd_bus_slot *slot;
        char *what;
        char *path;
        bool returns_string;
        bool is_pair;
        bool quiet; /* no event: roamd's own housekeeping (failures only logged) */
};

static const char *const bt_question_kind_table[_BT_QUESTION_MAX] = {
    [BT_QUESTION_NONE] = "none",           [BT_QUESTION_CONFIRM] = "confirm",
    [BT_QUESTION_AUTHORIZE] = "authorize", [BT_QUESTION_SERVICE] = "authorize-service",
    [BT_QUESTION_ENTER_PIN] = "enter-pin", [BT_QUESTION_ENTER_PASSKEY] = "enter-passkey",
    [BT_QUESTION_SHOW_PIN] = "show-pin",   [BT_QUESTION_SHOW_PASSKEY] = "show-passkey",
};
DEFINE_STRING_TABLE_LOOKUP(bt_question_kind, BtQuestionKind)

void bt_emit_changed(Bt *bt, const char *first, ...)
{
        const char *names[8];
        size_t n = 0;
        va_list ap;
        sd_bus *bus = bt->core->bus;

        if (!bus)
                return;
        va_start(ap, first);
        for (const char *p = first; p && n < ELEMENTSOF(names) - 1; p = va_arg(ap, const char *))
                names[n++] = p;
        va_end(ap);
        names[n] = NULL;
        (void)sd_bus_emit_properties_changed_strv(bus, ROAM_BLUETOOTH_PATH,
                                                  ROAM_BLUETOOTH_INTERFACE, (char **)names);
}

void bt_event(Bt *bt, const char *fmt, ...)
{
        char *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&s, fmt, ap) < 0)
                s = NULL;
        va_end(ap);
        if (!s)
                return;
        /* The sentence quotes BlueZ's and the tag's words (error messages): LastEvent is
         * clean text whatever they held (roam-text.c). */
        char *clean = NULL;
        if (roam_text_clean_str(s, 0, &clean) >= 0) {
                free(s);
                s = clean;
        }
        log_info("Bluetooth: %s", s);
        free(bt->last_event);
        bt->last_event = s;
        bt_emit_changed(bt, "LastEvent", NULL);
}

static const char *device_label(Bt *bt, const char *path, const char *fallback)
{
        BluezDevice *d = bluez_get_device(bt->bluez, path);

        if (d && d->name && *d->name)
                return d->name;
        if (d)
                return d->address;
        return fallback ? fallback : path;
}

/* Ends the open question. An agent call still waiting gets error (if given). */
static void question_clear(Bt *bt, const char *error, const char *message)
{
        BtQuestion *q = &bt->question;

        if (q->kind == BT_QUESTION_NONE)
                return;
        if (q->call && error)
                (void)sd_bus_reply_method_errorf(q->call, error, "%s", message);
        q->call = sd_bus_message_unref(q->call);
        q->timeout = sd_event_source_disable_unref(q->timeout);
        free(q->device_path);
        free(q->name);
        *q = (BtQuestion){};
        bt_emit_changed(bt, "Question", NULL);
}

static int on_question_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        Bt *bt = userdata;
        char who[256];

        snprintf(who, sizeof(who), "%s", bt->question.name ? bt->question.name : "");
        question_clear(bt, ERROR_CANCELED, "Nobody answered in time.");
        bt->pair_outcome = "nobody answered in time";
        bt_event(bt, "Nobody answered the question from %s in time: refused", who);
        return 0;
}

/* Opens a question from the agent call msg. Displays are answered at once and stay shown. */
static int question_open(Bt *bt, sd_bus_message *msg, BtQuestionKind kind, const char *path,
                         const char *value)
{
        BtQuestion *q = &bt->question;
        BluezDevice *d = bluez_get_device(bt->bluez, path);
        bool display = kind == BT_QUESTION_SHOW_PIN || kind == BT_QUESTION_SHOW_PASSKEY;
        int r;

        if (q->kind != BT_QUESTION_NONE && q->call)
                return sd_bus_reply_method_errorf(msg, ERROR_REJECTED,
                                                  "Another question is waiting for an answer.");
        question_clear(bt, NULL, NULL);
        q->id = ++bt->next_question_id;
        q->kind = kind;
        q->device_path = strdup(path);
        q->name = strdup(device_label(bt, path, path));
        if (!q->device_path || !q->name) {
                question_clear(bt, NULL, NULL);
                return -ENOMEM;
        }
        snprintf(q->address, sizeof(q->address), "%s", d ? d->address : "");
        snprintf(q->value, sizeof(q->value), "%s", strempty(value));
        if (display) {
                r = sd_bus_reply_method_return(msg, NULL);
        } else {
                q->call = sd_bus_message_ref(msg);
                r = sd_event_add_time_relative(bt->core->event, &q->timeout, CLOCK_MONOTONIC,
                                               bt->core->config->bluetooth.question_timeout_usec, 0,
                                               on_question_timeout, bt);
        }
        log_info("Bluetooth: question %u (%s) from %s", q->id, bt_question_kind_to_string(kind),
                 q->name);
        bt_emit_changed(bt, "Question", NULL);
        return r < 0 ? r : 1;
}

int bt_answer(Bt *bt, uint32_t id, bool accept, const char *value, sd_bus_error *error)
{
        BtQuestion *q = &bt->question;
        char who[256];
        int r = 0;

        if (q->kind == BT_QUESTION_NONE || q->id != id)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Question %u is not open.",
                                         id);
        snprintf(who, sizeof(who), "%s", q->name);
        if (!q->call) { /* a display: answering dismisses it */
                question_clear(bt, NULL, NULL);
                return 0;
        }
        if (!accept) {
                question_clear(bt, ERROR_REJECTED, "Refused by the user.");
                bt->pair_outcome = "refused";
                bt_event(bt, "Refused the request of %s", who);
                return 0;
        }
        switch (q->kind) {
        case BT_QUESTION_ENTER_PIN: {
                size_t n = strlen(value);
                if (n < 1 || n > 16)
                        return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                                "A PIN has 1 to 16 characters.");
                for (size_t i = 0; i < n; i++)
                        if (value[i] < 0x21 || value[i] > 0x7e)
                                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                                        "A PIN is printable ASCII.");
                r = sd_bus_reply_method_return(q->call, "s", value);
                break;
        }
        case BT_QUESTION_ENTER_PASSKEY: {
                char *end;
                unsigned long v = strtoul(value, &end, 10);
                if (!*value || *end || v > 999999)
                        return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                                "A passkey is a number from 0 to 999999.");
                r = sd_bus_reply_method_return(q->call, "u", (uint32_t)v);
                break;
        }
        case BT_QUESTION_CONFIRM:
        case BT_QUESTION_AUTHORIZE:
        case BT_QUESTION_SERVICE:
                r = sd_bus_reply_method_return(q->call, NULL);
                break;
        case BT_QUESTION_NONE:
        case BT_QUESTION_SHOW_PIN:
        case BT_QUESTION_SHOW_PASSKEY:
        case _BT_QUESTION_MAX:
        case _BT_QUESTION_INVALID:
                break;
        }
        question_clear(bt, NULL, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to answer BlueZ: %m");
        return 0;
}

/* org.bluez.Agent1, called by BlueZ only. */
static int agent_check(Bt *bt, sd_bus_message *msg, sd_bus_error *error)
{
        if (!bluez_owner(bt->bluez) ||
            !streq_ptr(sd_bus_message_get_sender(msg), bluez_owner(bt->bluez)))
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Only BlueZ talks to this agent.");
        return 0;
}

static int agent_ask(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        const char *member = sd_bus_message_get_member(msg), *path, *s = NULL;
        char value[64] = "";
        uint32_t u = 0;
        uint16_t entered = 0;
        BtQuestionKind kind;
        int r;

        r = agent_check(bt, msg, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(msg, "o", &path);
        if (r < 0)
                return r;
        if (streq(member, "RequestPinCode"))
                kind = BT_QUESTION_ENTER_PIN;
        else if (streq(member, "RequestPasskey"))
                kind = BT_QUESTION_ENTER_PASSKEY;
        else if (streq(member, "RequestAuthorization"))
                kind = BT_QUESTION_AUTHORIZE;
        else if (streq(member, "RequestConfirmation")) {
                kind = BT_QUESTION_CONFIRM;
                r = sd_bus_message_read(msg, "u", &u);
                snprintf(value, sizeof(value), "%06u", u);
        } else if (streq(member, "DisplayPasskey")) {
                kind = BT_QUESTION_SHOW_PASSKEY;
                r = sd_bus_message_read(msg, "uq", &u, &entered);
                snprintf(value, sizeof(value), "%06u", u);
                /* Repeated with the count of digits typed on the device: update in place. */
                if (r >= 0 && bt->question.kind == kind &&
                    streq_ptr(bt->question.device_path, path) && !bt->question.call) {
                        snprintf(bt->question.value, sizeof(bt->question.value), "%s", value);
                        bt_emit_changed(bt, "Question", NULL);
                        return sd_bus_reply_method_return(msg, NULL);
                }
        } else if (streq(member, "DisplayPinCode")) {
                kind = BT_QUESTION_SHOW_PIN;
                r = sd_bus_message_read(msg, "s", &s);
                snprintf(value, sizeof(value), "%s", strempty(s));
        } else { /* AuthorizeService */
                kind = BT_QUESTION_SERVICE;
                r = sd_bus_message_read(msg, "s", &s);
                snprintf(value, sizeof(value), "%s", strempty(s));
        }
        if (r < 0)
                return r;
        return question_open(bt, msg, kind, path, value);
}

static int agent_cancel(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        char who[256];
        int r = agent_check(bt, msg, error);

        if (r < 0)
                return r;
        if (bt->question.kind != BT_QUESTION_NONE) {
                snprintf(who, sizeof(who), "%s", bt->question.name);
                /* BlueZ dropped its request: an answer would go nowhere. */
                question_clear(bt, NULL, NULL);
                bt->pair_outcome = "cancelled by the device";
                bt_event(bt, "%s cancelled the request", who);
        }
        return sd_bus_reply_method_return(msg, NULL);
}

static int agent_release(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Bt *bt = userdata;
        int r = agent_check(bt, msg, error);

        if (r < 0)
                return r;
        bt->agent_registered = false;
        question_clear(bt, NULL, NULL);
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable agent_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("Release", "", "", agent_release, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("RequestPinCode", "o", "s", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("DisplayPinCode", "os", "", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("RequestPasskey", "o", "u", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("DisplayPasskey", "ouq", "", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("RequestConfirmation", "ou", "", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("RequestAuthorization", "o", "", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("AuthorizeService", "os", "", agent_ask, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Cancel", "", "", agent_cancel, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static int on_agent_default(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bt *bt = userdata;

        bt->register_slot = sd_bus_slot_unref(bt->register_slot);
        if (sd_bus_message_is_method_error(m, NULL))
                log_warning("BlueZ did not make roamd's agent the default: %s",
                            sd_bus_message_get_error(m)->message);
        return 0;
}

static int on_agent_registered(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        Bt *bt = userdata;

        bt->register_slot = sd_bus_slot_unref(bt->register_slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                log_warning("BlueZ refused roamd's pairing agent: %s",
                            sd_bus_message_get_error(m)->message);
                return 0;
        }
        bt->agent_registered = true;
        log_info("Bluetooth: pairing agent registered");
        bt_emit_changed(bt, "AgentRegistered", NULL);
        (void)bluez_call(bt->bluez, &bt->register_slot, "/org/bluez", AGENT_MGR_IFACE,
                         "RequestDefaultAgent", 0, on_agent_default, bt, "o",
                         ROAM_BLUETOOTH_AGENT_PATH);
        return 0;
}

static void on_bluez_appeared(Bluez *b, void *userdata)
{
        Bt *bt = userdata;
        int r;

        bt->register_slot = sd_bus_slot_unref(bt->register_slot);
        r = bluez_call(b, &bt->register_slot, "/org/bluez", AGENT_MGR_IFACE, "RegisterAgent", 0,
                       on_agent_registered, bt, "os", ROAM_BLUETOOTH_AGENT_PATH, AGENT_CAPABILITY);
        if (r < 0)
                log_warning_errno(r, "Failed to register the pairing agent: %m");
}

static void nfc_pair_done(Bt *bt)
{
        bt->nfc_address[0] = 0;
        bt->nfc_timeout = sd_event_source_disable_unref(bt->nfc_timeout);
}

static void on_bluez_vanished(Bluez *b, void *userdata)
{
        Bt *bt = userdata;

        bt->agent_registered = false;
        question_clear(bt, NULL, NULL);
        if (bt->nfc_address[0]) {
                bt_event(bt, "BlueZ left before %s was found", bt->nfc_address);
                nfc_pair_done(bt);
        }
}

static void on_device_removed(Bluez *b, const char *path, void *userdata)
{
        Bt *bt = userdata;

        if (bt->question.kind != BT_QUESTION_NONE && streq_ptr(bt->question.device_path, path)) {
                char who[256];
                snprintf(who, sizeof(who), "%s", bt->question.name);
                question_clear(bt, ERROR_CANCELED, "The device is gone.");
                bt->pair_outcome = "the device went away";
                bt_event(bt, "%s went away during pairing", who);
        }
}

/* BlueZ's signals come in bursts (a scan sends RSSI for every device it hears, many times a
 * second), and each emission carries the whole Devices array: the changes of a burst are
 * announced once, when the loop has nothing else to do, and no more often than this. */
#define BT_CHANGED_INTERVAL_USEC (100 * USEC_PER_MSEC)

static int on_changed_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        Bt *bt = userdata;
        Bluez *b = bt->bluez;

        bt->changed_last = usec;
        bt_emit_changed(bt, "Available", "AgentRegistered", "Adapters", "Devices", NULL);
        if (bt->nfc_address[0]) {
                BluezDevice *d = bluez_get_device(b, bt->nfc_address);
                char address[18];

                if (!d)
                        return 0;
                /* Found by discovery: the normal pairing, with the tag's name shown. */
                snprintf(address, sizeof(address), "%s", bt->nfc_address);
                nfc_pair_done(bt);
                (void)bt_pair(bt, address, NULL, NULL);
        }
        return 0;
}

static void on_bluez_changed(Bluez *b, void *userdata)
{
        Bt *bt = userdata;
        uint64_t now = 0, when;
        int r, enabled = SD_EVENT_OFF;

        if (bt->changed_timer && sd_event_source_get_enabled(bt->changed_timer, &enabled) >= 0 &&
            enabled != SD_EVENT_OFF)
                return; /* already announced for this burst */
        r = sd_event_now(bt->core->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                goto now;
        when = MAX(now, bt->changed_last + BT_CHANGED_INTERVAL_USEC);
        if (!bt->changed_timer) {
                r = sd_event_add_time(bt->core->event, &bt->changed_timer, CLOCK_MONOTONIC, when, 0,
                                      on_changed_timer, bt);
                if (r >= 0)
                        r = sd_event_source_set_priority(bt->changed_timer, SD_EVENT_PRIORITY_IDLE);
        } else {
                r = sd_event_source_set_time(bt->changed_timer, when);
                if (r >= 0)
                        r = sd_event_source_set_enabled(bt->changed_timer, SD_EVENT_ONESHOT);
        }
        if (r >= 0)
                return;
now:
        /* no timer: announce at once rather than not at all */
        (void)on_changed_timer(NULL, now, bt);
}

/* Client calls forwarded to BlueZ. */

static BtOp *op_free(BtOp *op)
{
        if (!op)
                return NULL;
        if (op->bt) {
                if (op->prev)
                        op->prev->next = op->next;
                else
                        op->bt->ops = op->next;
                if (op->next)
                        op->next->prev = op->prev;
        }
        sd_bus_slot_unref(op->slot);
        sd_bus_message_unref(op->request);
        free(op->what);
        free(op->path);
        free(op);
        return NULL;
}

static int on_op_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        BtOp *op = userdata;
        Bt *bt = op->bt;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        const char *s = "";

        if (op->is_pair && streq_ptr(bt->question.device_path, op->path))
                question_clear(bt, NULL, NULL); /* displays end with the pairing */
        if (e) {
                /* BlueZ's error name stays in the text: clients and people can tell a
                 * rejection from a timeout or a device out of range. Why the agent said no
                 * is the better reason when there is one. */
                const char *why =
                    op->is_pair && bt->pair_outcome ? bt->pair_outcome : strempty(e->message);

                if (op->quiet)
                        /* housekeeping (a scan that had ended already): the event the user
                         * was told stays the last word */
                        log_info("Bluetooth: %s failed: %s (%s)", op->what, why, e->name);
                else
                        bt_event(bt, "%s failed: %s (%s)", op->what, why, e->name);
                if (op->request)
                        (void)sd_bus_reply_method_errorf(op->request, ROAM_ERROR_FAILED,
                                                         "%s failed: %s (%s)", op->what, why,
                                                         e->name);
        } else {
                if (op->returns_string)
                        (void)sd_bus_message_read(m, "s", &s);
                if (!op->quiet)
                        bt_event(bt, "%s: done%s%s", op->what, *s ? ", " : "", s);
                if (op->request)
                        (void)sd_bus_reply_method_return(op->request, op->returns_string ? "s" : "",
                                                         s);
        }
        if (op->is_pair)
                bt->pair_outcome = NULL;
        op_free(op);
        return 0;
}

static int forward_v(Bt *bt, sd_bus_message *request, const char *what, const char *path,
                     const char *interface, const char *method, bool returns_string,
                     const char *types, va_list ap)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        BtOp *op;
        int r;

        if (!bluez_owner(bt->bluez))
                return -EHOSTDOWN;
        op = calloc(1, sizeof(*op));
        if (!op)
                return -ENOMEM;
        op->what = strdup(what);
        op->path = strdup(path);
        if (!op->what || !op->path) {
                op_free(op);
                return -ENOMEM;
        }
        op->returns_string = returns_string;
        op->is_pair = streq(method, "Pair");
        r = sd_bus_message_new_method_call(bt->core->bus, &call, BLUEZ_SERVICE, path, interface,
                                           method);
        if (r >= 0 && types)
                r = sd_bus_message_appendv(call, types, ap);
        if (r >= 0)
                r = sd_bus_call_async(bt->core->bus, &op->slot, call, on_op_reply, op,
                                      op->is_pair ? PAIR_TIMEOUT : 0);
        if (r < 0) {
                op_free(op);
                return r;
        }
        op->bt = bt;
        op->request = sd_bus_message_ref(request);
        op->next = bt->ops;
        if (bt->ops)
                bt->ops->prev = op;
        bt->ops = op;
        return 0;
}

static int forward_full(Bt *bt, sd_bus_message *request, const char *what, const char *path,
                        const char *interface, const char *method, bool returns_string,
                        const char *types, ...)
{
        va_list ap;
        int r;

        va_start(ap, types);
        r = forward_v(bt, request, what, path, interface, method, returns_string, types, ap);
        va_end(ap);
        return r;
}

int bt_forward(Bt *bt, sd_bus_message *request, const char *what, const char *path,
               const char *interface, const char *method, const char *types, ...)
{
        va_list ap;
        int r;

        va_start(ap, types);
        r = forward_v(bt, request, what, path, interface, method,
                      streq(interface, "org.bluez.Network1") && streq(method, "Connect"), types,
                      ap);
        va_end(ap);
        return r;
}

static int forward(Bt *bt, sd_bus_message *request, const char *what, const char *path,
                   const char *interface, const char *method)
{
        return forward_full(bt, request, what, path, interface, method, false, NULL);
}

/* The scan roamd started ends: its timeout, or the device it looked for was not found. */
static void stop_scan(Bt *bt)
{
        BluezAdapter *a = bluez_get_adapter(bt->bluez, bt->discovery_adapter);

        bt->discovery_timeout = sd_event_source_disable_unref(bt->discovery_timeout);
        if (a && a->discovering &&
            forward(bt, NULL, "Stopping the scan", a->path, "org.bluez.Adapter1",
                    "StopDiscovery") >= 0)
                bt->ops->quiet = true;
}

static int on_nfc_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        Bt *bt = userdata;

        stop_scan(bt);
        bt_event(bt, "%s was not found nearby: is it on and in pairing mode?", bt->nfc_address);
        nfc_pair_done(bt);
        return 0;
}

int bt_pair(Bt *bt, const char *address, sd_bus_message *request, sd_bus_error *error)
{
        BluezDevice *d = bluez_get_device(bt->bluez, address);
        char what[320];
        BluezAdapter *a;
        int r;

        if (d) {
                if (d->paired) {
                        bt_event(bt, "%s is already paired", device_label(bt, d->path, NULL));
                        return request ? sd_bus_reply_method_return(request, NULL) : 0;
                }
                snprintf(what, sizeof(what), "Pairing with %s", device_label(bt, d->path, NULL));
                bt->pair_outcome = NULL;
                bt_event(bt, "%s", what);
                r = forward(bt, request, what, d->path, "org.bluez.Device1", "Pair");
                if (r < 0)
                        return sd_bus_error_set_errnof(error, -r, "Cannot pair: %m");
                return 1;
        }
        if (request)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "No Bluetooth device %s is known; scan first.", address);
        /* From a tag: look for it, then pair (on_bluez_changed). */
        a = bluez_default_adapter(bt->bluez);
        if (!a)
                return sd_bus_error_set(error, ROAM_ERROR_FAILED, "There is no Bluetooth adapter.");
        snprintf(bt->nfc_address, sizeof(bt->nfc_address), "%s", address);
        bt->nfc_timeout = sd_event_source_disable_unref(bt->nfc_timeout);
        r = sd_event_add_time_relative(bt->core->event, &bt->nfc_timeout, CLOCK_MONOTONIC,
                                       bt->core->config->bluetooth.nfc_discovery_usec, 0,
                                       on_nfc_timeout, bt);
        if (r < 0)
                return r;
        bt_event(bt, "Looking for %s to pair with it", address);
        if (!a->discovering)
                (void)bt_start_discovery(bt, a, bt->core->config->bluetooth.nfc_discovery_usec,
                                         NULL);
        return 1;
}

static int on_discovery_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        stop_scan(userdata);
        return 0;
}

int bt_start_discovery(Bt *bt, BluezAdapter *a, uint64_t usec, sd_bus_message *request)
{
        int r;

        r = forward(bt, request, "Scanning", a->path, "org.bluez.Adapter1", "StartDiscovery");
        if (r < 0)
                return r;
        if (free_and_strdup(&bt->discovery_adapter, a->id) < 0)
                return -ENOMEM;
        bt->discovery_timeout = sd_event_source_disable_unref(bt->discovery_timeout);
        return sd_event_add_time_relative(bt->core->event, &bt->discovery_timeout, CLOCK_MONOTONIC,
                                          usec, 0, on_discovery_timeout, bt);
}

Bt *bt_free(Bt *bt)
{
        if (!bt)
                return NULL;
        while (bt->ops)
                op_free(bt->ops);
        bt_nfc_stop(bt);
        question_clear(bt, ERROR_CANCELED, "roamd is stopping.");
        nfc_pair_done(bt);
        sd_event_source_disable_unref(bt->discovery_timeout);
        sd_event_source_disable_unref(bt->changed_timer);
        sd_bus_slot_unref(bt->vtable_slot);
        sd_bus_slot_unref(bt->agent_slot);
        sd_bus_slot_unref(bt->register_slot);
        bluez_free(bt->bluez);
        free(bt->discovery_adapter);
        free(bt->nfc_adapter);
        free(bt->last_event);
        free(bt);
        return NULL;
}

int bt_new(Core *m, Bt **ret)
{
        Bt *bt = calloc(1, sizeof(*bt));
        int r;

        if (!bt)
                return -ENOMEM;
        bt->core = m;
        r = bluez_new(m->bus, &bt->bluez);
        if (r < 0) {
                bt_free(bt);
                return r;
        }
        bt->bluez->userdata = bt;
        bt->bluez->on_changed = on_bluez_changed;
        bt->bluez->on_appeared = on_bluez_appeared;
        bt->bluez->on_vanished = on_bluez_vanished;
        bt->bluez->on_device_removed = on_device_removed;
        *ret = bt;
        return 0;
}

int bt_start(Bt *bt)
{
        int r;

        r = sd_bus_add_object_vtable(bt->core->bus, &bt->agent_slot, ROAM_BLUETOOTH_AGENT_PATH,
                                     AGENT_IFACE, agent_vtable, bt);
        if (r < 0)
                return log_error_errno(r, "Failed to add the pairing agent: %m");
        r = bt_bus_setup(bt);
        if (r < 0)
                return r;
        r = bt_nfc_start(bt);
        if (r < 0)
                return r;
        return bluez_start(bt->bluez);
}
