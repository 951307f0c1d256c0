/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "roam-bluetooth.h"
#include "roam-bt-cli.h"
#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-util.h"

#define NDEF_FILE_MAX (64 * 1024)
#define PAIR_TIMEOUT  (100 * USEC_PER_SEC)

static const char denied[] = "not allowed to change Bluetooth";

static int log_bt_error(const sd_bus_error *error, int r, const char *what)
{
        if (roam_bus_error_is_denied(error)) {
                char why[256];

                log_error("%s: %s", denied, roam_bus_denied_reason(error, why, sizeof(why)));
                return -EACCES;
        }
        if (sd_bus_error_has_names(error, ROAM_ERROR_INVALID_ARGS, ROAM_ERROR_FAILED) &&
            error->message && *error->message)
                return log_error_errno(r, "cannot %s: %s", what, error->message);
        return roam_bus_log_call_error(error, r, what);
}

static const char *on_off(int b)
{
        return b ? "on" : "off";
}

static int show(sd_bus *bus, bool json)
{
        _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};
        _cleanup_(json_object_putp) json_object *doc = NULL, *ja = NULL, *jd = NULL;
        const RoamBtQuestion *q = &bt.question;
        int r;

        r = roam_bluetooth_load(bus, &bt);
        if (r < 0)
                return r;

        if (json) {
                doc = json_object_new_object();
                ja = json_object_new_array();
                jd = json_object_new_array();
                if (!doc || !ja || !jd || json_add_bool(doc, "available", bt.available) < 0 ||
                    json_add_bool(doc, "agent", bt.agent) < 0)
                        return log_oom();
        } else {
                printf("Bluetooth: %s, pairing agent %s\n",
                       bt.available ? "BlueZ running" : "BlueZ not running",
                       bt.agent ? "registered" : "not registered");
        }

        for (size_t i = 0; i < bt.n_adapters; i++) {
                const RoamBtAdapter *a = &bt.adapters[i];

                if (json) {
                        json_object *o = json_object_new_object();
                        if (!o || json_append(ja, o) < 0 || json_add_string(o, "id", a->id) < 0 ||
                            json_add_string(o, "address", a->address) < 0 ||
                            json_add_string(o, "name", a->name) < 0 ||
                            json_add_bool(o, "powered", a->powered) < 0 ||
                            json_add_bool(o, "discoverable", a->discoverable) < 0 ||
                            json_add_bool(o, "pairable", a->pairable) < 0 ||
                            json_add_bool(o, "scanning", a->scanning) < 0)
                                return log_oom();
                } else
                        printf("Adapter %s (%s) %s: powered %s, discoverable %s, pairable %s, "
                               "%s\n",
                               a->id, a->name, a->address, on_off(a->powered),
                               on_off(a->discoverable), on_off(a->pairable),
                               a->scanning ? "scanning" : "not scanning");
        }

        if (!json)
                printf("Devices:\n");
        for (size_t i = 0; i < bt.n_devices; i++) {
                const RoamBtDevice *d = &bt.devices[i];

                if (json) {
                        json_object *o = json_object_new_object();
                        if (!o || json_append(jd, o) < 0 ||
                            json_add_string(o, "address", d->address) < 0 ||
                            json_add_string(o, "adapter", d->adapter) < 0 ||
                            json_add_string(o, "name", d->name) < 0 ||
                            json_add_string(o, "kind", d->kind) < 0 ||
                            (d->rssi == 127 ? json_add_null(o, "rssi")
                                            : json_add_int(o, "rssi", d->rssi)) < 0 ||
                            json_add_bool(o, "paired", d->paired) < 0 ||
                            json_add_bool(o, "trusted", d->trusted) < 0 ||
                            json_add_bool(o, "connected", d->connected) < 0 ||
                            (d->battery < 0 ? json_add_null(o, "battery")
                                            : json_add_int(o, "battery", d->battery)) < 0 ||
                            json_add_string(o, "network", *d->network ? d->network : "none") < 0 ||
                            json_add_string(o, "interface", d->interface) < 0)
                                return log_oom();
                        continue;
                }
                printf("  %s  %-20s %-10s %s, %s, %s", d->address, d->name, d->kind,
                       d->paired ? "paired" : "not paired", d->trusted ? "trusted" : "not trusted",
                       d->connected ? "connected" : "not connected");
                if (d->battery >= 0)
                        printf(", battery %d%%", d->battery);
                if (d->rssi != 127)
                        printf(", signal %d dBm", d->rssi);
                if (streq(d->network, "available"))
                        printf(", network available");
                else if (streq(d->network, "connected"))
                        printf(", network connected (%s)", d->interface);
                printf("\n");
        }

        if (json) {
                if (json_add(doc, "adapters", TAKE_PTR(ja)) < 0 ||
                    json_add(doc, "devices", TAKE_PTR(jd)) < 0)
                        return log_oom();
                if (q->id == 0)
                        r = json_add_null(doc, "question");
                else {
                        json_object *o = json_object_new_object();
                        r = !o || json_add(doc, "question", o) < 0 ||
                                    json_add_uint(o, "id", q->id) < 0 ||
                                    json_add_string(o, "kind", q->kind) < 0 ||
                                    json_add_string(o, "address", q->address) < 0 ||
                                    json_add_string(o, "name", q->name) < 0 ||
                                    json_add_string(o, "value", q->value) < 0
                                ? -ENOMEM
                                : 0;
                }
                if (r >= 0 && bt.nfc_id == 0)
                        r = json_add_null(doc, "nfc_offer");
                else if (r >= 0) {
                        json_object *o = json_object_new_object();
                        r = !o || json_add(doc, "nfc_offer", o) < 0 ||
                                    json_add_uint(o, "id", bt.nfc_id) < 0 ||
                                    json_add_string(o, "question", bt.nfc_text) < 0
                                ? -ENOMEM
                                : 0;
                }
                if (r < 0 || json_add_string(doc, "last_event", bt.last_event) < 0)
                        return log_oom();
                return json_print(doc, stdout);
        }
        if (q->id != 0) {
                char s[512];
                roam_bt_question_sentence(q, s, sizeof(s));
                printf("Question %u: %s\n  answer: roam bt answer %u yes|no (a PIN or passkey "
                       "on standard input)\n",
                       q->id, s, q->id);
        }
        if (bt.nfc_id != 0)
                printf("NFC tag %u: %s\n  answer: roam nfc accept|reject\n", bt.nfc_id,
                       bt.nfc_text);
        if (*bt.last_event)
                printf("Last: %s\n", bt.last_event);
        return 0;
}

/* A call that changes something; the answer carries nothing (or one string). */
static int call(sd_bus *bus, const char *what, const char *method, uint64_t timeout,
                const char *types, ...)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const char *s;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                           ROAM_BLUETOOTH_INTERFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to build a call to roamd: %m");
        r = sd_bus_call(bus, m, timeout, &error, &reply);
        if (r < 0)
                return log_bt_error(&error, r, what);
        if (sd_bus_message_read(reply, "s", &s) > 0)
                printf("%s\n", s);
        return 0;
}

static int parse_bool_word(const char *s, int *ret)
{
        if (streq(s, "on") || streq(s, "yes"))
                return *ret = 1, 0;
        if (streq(s, "off") || streq(s, "no"))
                return *ret = 0, 0;
        return -EINVAL;
}

/* Reads one answer line for q from stdin and gives it to roamd. EOF refuses. */
static int answer_from_stdin(sd_bus *bus, const RoamBtQuestion *q)
{
        char line[128], s[512];
        bool entry = streq(q->kind, "enter-pin") || streq(q->kind, "enter-passkey");
        bool accept;

        roam_bt_question_sentence(q, s, sizeof(s));
        printf("%s\n", s);
        fflush(stdout);
        if (streq(q->kind, "show-pin") || streq(q->kind, "show-passkey"))
                return 0;
        if (!fgets(line, sizeof(line), stdin))
                line[0] = 0;
        line[strcspn(line, "\r\n")] = 0;
        accept = entry ? (*line && !streq(line, "no")) : (streq(line, "yes") || streq(line, "y"));
        return call(bus, "answer", "Answer", 0, "ubs", q->id, accept, accept && entry ? line : "");
}

int roam_read_code(const char *prompt, char *buf, size_t size)
{
        struct termios old, quiet;
        bool restore = false;

        buf[0] = 0;
        if (isatty(STDIN_FILENO)) {
                fprintf(stderr, "%s: ", prompt);
                if (tcgetattr(STDIN_FILENO, &old) >= 0) {
                        quiet = old;
                        quiet.c_lflag &= ~(tcflag_t)ECHO;
                        restore = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) >= 0;
                }
        }
        if (!fgets(buf, (int)size, stdin))
                buf[0] = 0;
        if (restore) {
                (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
                fputc('\n', stderr);
        }
        buf[strcspn(buf, "\r\n")] = 0;
        return *buf ? 0 : -ENODATA;
}

/* roam bt answer ID yes|no: a question that asks for a PIN or passkey gets it from stdin (a
 * line; on a terminal without echo), never from argv. */
static int answer_with_code(sd_bus *bus, uint32_t id, int accept)
{
        _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};
        const RoamBtQuestion *q = &bt.question;
        char line[128], prompt[300];
        int r;

        r = roam_bluetooth_load(bus, &bt);
        if (r < 0)
                return r;
        if (!accept || q->id != id ||
            !(streq(q->kind, "enter-pin") || streq(q->kind, "enter-passkey")))
                return call(bus, "answer", "Answer", 0, "ubs", id, accept, "");
        snprintf(prompt, sizeof(prompt), "%s for %s",
                 streq(q->kind, "enter-pin") ? "PIN" : "Passkey", *q->name ? q->name : q->address);
        if (roam_read_code(prompt, line, sizeof(line)) < 0)
                return log_error_errno(EINVAL, "No %s on standard input: nothing answered.",
                                       streq(q->kind, "enter-pin") ? "PIN" : "passkey");
        r = call(bus, "answer", "Answer", 0, "ubs", id, accept, line);
        explicit_bzero(line, sizeof(line));
        return r;
}

typedef struct PairState {
        sd_bus *bus;
        const char *address;
        bool done;
        int result;
        uint32_t answered;
} PairState;

static int on_pair_reply(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PairState *p = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        p->done = true;
        if (e)
                p->result = log_bt_error(e, -sd_bus_message_get_errno(m), "pair");
        else
                printf("Paired with %s\n", p->address);
        return 0;
}

/* The question comes in the signal itself: no property is read while the pairing waits. */
static int on_question_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};
        const RoamBtQuestion *q = &bt.question;
        PairState *p = userdata;

        if (roam_bluetooth_read_changed(m, &bt) <= 0 || q->id == 0 || q->id == p->answered ||
            strcasecmp(q->address, p->address) != 0)
                return 0;
        p->answered = q->id;
        if (roam_bluetooth_question_code(p->bus, &bt) < 0)
                return -ENOMEM;
        (void)answer_from_stdin(p->bus, q);
        return 0;
}

/* roam bt pair ADDRESS: the agent's questions about this device are asked here (stdin). */
static int pair(sd_bus *bus, const char *address)
{
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *match = NULL, *slot = NULL;
        PairState p = {.bus = bus, .address = address};
        int r;

        r = sd_bus_match_signal(bus, &match, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                on_question_changed, &p);
        if (r >= 0)
                r = sd_bus_call_method_async(bus, &slot, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                             ROAM_BLUETOOTH_INTERFACE, "Pair", on_pair_reply, &p,
                                             "s", address);
        if (r < 0)
                return log_error_errno(r, "Failed to ask roamd: %m");
        while (!p.done) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return log_error_errno(r, "Lost the system bus: %m");
                if (r == 0 && sd_bus_wait(bus, PAIR_TIMEOUT) < 0)
                        return log_error_errno(r, "Lost the system bus: %m");
        }
        return p.result;
}

/* What follows an action's name. */
typedef enum BtArgs {
        BT_ARGS_SWITCH, /* on|off [ADAPTER] */
        BT_ARGS_SCAN,   /* [SECONDS] [ADAPTER] */
        BT_ARGS_DEVICE, /* ADDRESS */
        BT_ARGS_ANSWER, /* ID yes|no, a PIN or passkey on stdin */
} BtArgs;

/* roam bt's actions, in the order the usage error lists them. Every one changes something:
 * polkit may ask (roam_bus_may_ask()). */
static const struct BtAction {
        const char *name;
        BtArgs args;
        const char *method;   /* on org.roam1.Bluetooth */
        const char *what;     /* for errors: "cannot <what>" */
        uint64_t timeout;     /* 0: sd-bus's default */
        const char *property; /* SetAdapter's property; SetTrusted's value ("yes", "no") */
} bt_actions[] = {
    {"power", BT_ARGS_SWITCH, "SetAdapter", "change the adapter", 0, "Powered"},
    {"discoverable", BT_ARGS_SWITCH, "SetAdapter", "change the adapter", 0, "Discoverable"},
    {"pairable", BT_ARGS_SWITCH, "SetAdapter", "change the adapter", 0, "Pairable"},
    {"scan", BT_ARGS_SCAN, "StartDiscovery", "scan", 0, NULL},
    {"pair", BT_ARGS_DEVICE, "Pair", "pair", PAIR_TIMEOUT, NULL},
    {"trust", BT_ARGS_DEVICE, "SetTrusted", "trust", 0, "yes"},
    {"untrust", BT_ARGS_DEVICE, "SetTrusted", "trust", 0, "no"},
    {"connect", BT_ARGS_DEVICE, "Connect", "connect", PAIR_TIMEOUT, NULL},
    {"disconnect", BT_ARGS_DEVICE, "Disconnect", "disconnect", 0, NULL},
    {"remove", BT_ARGS_DEVICE, "Remove", "remove", 0, NULL},
    {"join", BT_ARGS_DEVICE, "ConnectNetwork", "join the network", PAIR_TIMEOUT, NULL},
    {"leave", BT_ARGS_DEVICE, "DisconnectNetwork", "leave the network", 0, NULL},
    {"answer", BT_ARGS_ANSWER, "Answer", "answer", 0, NULL},
};

static const struct BtAction *bt_action(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(bt_actions); i++)
                if (streq(bt_actions[i].name, name))
                        return &bt_actions[i];
        return NULL;
}

static int bt_unknown_action(const char *verb)
{
        char names[256] = "";
        size_t n = 0;

        for (size_t i = 0; i < ELEMENTSOF(bt_actions); i++)
                n += (size_t)snprintf(names + n, sizeof(names) - MIN(n, sizeof(names)), "%s%s",
                                      i ? ", " : "", bt_actions[i].name);
        return roam_usage_error("bt", "unknown action '%s' for 'roam bt': %s.", verb, names);
}

int roam_bt_run(char **args, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *verb = args[0], *a1 = verb ? args[1] : NULL, *a2 = a1 ? args[2] : NULL;
        const struct BtAction *act = NULL;
        unsigned long n = 0;
        char *end;
        int b = 0, r;

        /* The whole command line first: a mistake is exit 2 before roamd is asked. */
        if (verb && json)
                return roam_usage_error("bt", "--json goes with 'roam bt' alone.");
        if (verb && !(act = bt_action(verb)))
                return bt_unknown_action(verb);
        if (act)
                switch (act->args) {
                case BT_ARGS_SWITCH:
                        if (!a1 || parse_bool_word(a1, &b) < 0)
                                return roam_usage_error("bt", "'roam bt %s' needs on or off.",
                                                        verb);
                        if (a2 && args[3])
                                return roam_usage_error("bt", "'roam bt %s' takes one adapter.",
                                                        verb);
                        break;
                case BT_ARGS_SCAN:
                        n = 10;
                        if (a1) {
                                n = strtoul(a1, &end, 10);
                                if (*end || end == a1 || n < 1 || n > 600)
                                        return roam_usage_error(
                                            "bt",
                                            "'roam bt scan' takes 1 to 600 seconds, got '%s'.", a1);
                        }
                        if (a2 && args[3])
                                return roam_usage_error("bt", "'roam bt scan' takes one adapter.");
                        break;
                case BT_ARGS_ANSWER:
                        if (!a1 || !a2 || parse_bool_word(a2, &b) < 0)
                                return roam_usage_error("bt", "'roam bt answer' needs ID yes|no.");
                        n = strtoul(a1, &end, 10);
                        if (*end || end == a1 || n == 0 || n > UINT32_MAX)
                                return roam_usage_error("bt", "'%s' is not a question number.", a1);
                        /* argv is readable by every local user (ps, /proc/PID/cmdline) */
                        if (args[3])
                                return roam_usage_error(
                                    "bt", "'roam bt answer' reads a PIN or passkey from standard "
                                          "input, not from the command line (every local user "
                                          "can read that).");
                        break;
                case BT_ARGS_DEVICE:
                        if (!a1)
                                return roam_usage_error(
                                    "bt",
                                    "'roam bt %s' needs a device address (AA:BB:CC:DD:EE:FF).",
                                    verb);
                        if (a2)
                                return roam_usage_error("bt", "'roam bt %s' takes one device.",
                                                        verb);
                        break;
                }

        r = roam_bus_connect(&bus);
        if (r >= 0 && act)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        if (!act)
                return show(bus, json);
        switch (act->args) {
        case BT_ARGS_SWITCH:
                return call(bus, act->what, act->method, act->timeout, "ssb", strempty(a2),
                            act->property, b);
        case BT_ARGS_SCAN:
                return call(bus, act->what, act->method, act->timeout, "su", strempty(a2),
                            (uint32_t)n);
        case BT_ARGS_ANSWER:
                return answer_with_code(bus, (uint32_t)n, b);
        case BT_ARGS_DEVICE:
                break;
        }
        if (streq(act->method, "Pair")) /* its questions are asked here while it waits */
                return pair(bus, a1);
        if (streq(act->method, "SetTrusted"))
                return call(bus, act->what, act->method, act->timeout, "sb", a1,
                            streq(act->property, "yes"));
        return call(bus, act->what, act->method, act->timeout, "s", a1);
}

/* NDEF from a file: raw bytes, or hex text as wpa_cli and many NFC tools print it. */
static int read_ndef(const char *path, uint8_t **ret, size_t *ret_size)
{
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ uint8_t *bin = NULL;
        size_t size = 0, n = 0, digits = 0;
        bool hex = true;
        int r;

        if (streq(path, "-")) {
                buf = malloc(NDEF_FILE_MAX + 1);
                if (!buf)
                        return log_oom();
                size = fread(buf, 1, NDEF_FILE_MAX + 1, stdin);
                if (ferror(stdin))
                        return log_error_errno(EIO, "Failed to read stdin: %m");
                if (size > NDEF_FILE_MAX)
                        return log_error_errno(EFBIG, "stdin holds more than %d bytes",
                                               NDEF_FILE_MAX);
        } else {
                r = read_full_file(path, NDEF_FILE_MAX, &buf, &size);
                if (r < 0)
                        return log_error_errno(r, "Failed to read %s: %m", path);
        }
        for (size_t i = 0; i < size; i++) {
                if (isxdigit((unsigned char)buf[i]))
                        digits++;
                else if (!isspace((unsigned char)buf[i]) && buf[i] != ':')
                        hex = false;
        }
        if (hex && digits > 0 && digits % 2 == 0) {
                bin = malloc(digits / 2);
                if (!bin)
                        return log_oom();
                for (size_t i = 0, half = 0; i < size; i++) {
                        int c = (unsigned char)buf[i], v;
                        if (!isxdigit(c))
                                continue;
                        v = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
                        if (half++ % 2 == 0)
                                bin[n] = (uint8_t)(v << 4);
                        else
                                bin[n++] |= (uint8_t)v;
                }
                *ret = TAKE_PTR(bin);
                *ret_size = n;
                return 0;
        }
        *ret = (uint8_t *)TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

/* A carrier's type in words, for the text output. */
static const char *carrier_words(const char *type)
{
        return streq(type, "wifi")        ? "WiFi network"
               : streq(type, "bluetooth") ? "Bluetooth device"
                                          : type;
}

/* Prints a tag's carriers; *ret_types gets which: 1 WiFi, 2 Bluetooth. */
static int print_carriers(sd_bus_message *reply, bool json, unsigned *ret_types)
{
        unsigned types = 0;
        _cleanup_(json_object_putp) json_object *doc = NULL, *arr = NULL;
        const char *kind, *type, *key, *value;
        int r;

        r = sd_bus_message_read(reply, "s", &kind);
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        if (json) {
                doc = json_object_new_object();
                arr = json_object_new_array();
                if (!doc || !arr || json_add_string(doc, "kind", kind) < 0)
                        return log_oom();
        } else
                printf("NFC %s\n", streq(kind, "tag") ? "tag" : kind);
        r = sd_bus_message_enter_container(reply, 'a', "(sa{ss})");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'r', "sa{ss}")) > 0) {
                json_object *o = NULL;

                r = sd_bus_message_read(reply, "s", &type);
                if (r < 0)
                        break;
                types |= streq(type, "wifi") ? 1 : streq(type, "bluetooth") ? 2 : 0;
                if (json) {
                        o = json_object_new_object();
                        if (!o || json_append(arr, o) < 0 || json_add_string(o, "type", type) < 0)
                                return log_oom();
                } else
                        printf("  %s:", carrier_words(type));
                r = sd_bus_message_enter_container(reply, 'a', "{ss}");
                for (bool first = true;
                     r >= 0 && (r = sd_bus_message_read(reply, "{ss}", &key, &value)) > 0;
                     first = false) {
                        if (json) {
                                if (json_add_string(o, key, value) < 0)
                                        return log_oom();
                        } else if (streq(key, "action"))
                                printf("%s %s", first ? "" : ";",
                                       streq(value, "none") ? "nothing done" : value);
                        else
                                printf("%s %s %s", first ? "" : ",", key, *value ? value : "\"\"");
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
                if (!json)
                        printf("\n");
        }
        if (r < 0)
                return log_error_errno(r, "Unexpected answer from roamd: %m");
        if (ret_types)
                *ret_types = types;
        if (json) {
                if (json_add(doc, "carriers", TAKE_PTR(arr)) < 0)
                        return log_oom();
                return json_print(doc, stdout);
        }
        return 0;
}

static int import_call(sd_bus *bus, const uint8_t *data, size_t size, bool apply, bool json,
                       unsigned *ret_types)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                           ROAM_BLUETOOTH_INTERFACE, "ImportNdef");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', data, size);
        if (r >= 0)
                r = sd_bus_message_append(m, "b", apply);
        if (r < 0)
                return log_error_errno(r, "Failed to build a call to roamd: %m");
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0)
                return log_bt_error(&error, r, "read the NFC message");
        return print_carriers(reply, json, ret_types);
}

/* roam nfc accept|reject [ID]: the tag neard read (the one waiting now, or ID). */
/* id 0: the tag waiting for an answer. */
static int nfc_answer(sd_bus *bus, bool accept, uint32_t id, bool json)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        if (id == 0) {
                _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};

                r = roam_bluetooth_load(bus, &bt);
                if (r < 0)
                        return r;
                id = bt.nfc_id;
                if (id == 0)
                        return log_error_errno(-ENOENT, "No NFC tag is waiting for an answer.");
        }
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH, ROAM_BLUETOOTH_INTERFACE,
                               "AnswerNfc", &error, &reply, "ub", id, accept);
        if (r < 0)
                return log_bt_error(&error, r, accept ? "use the NFC tag" : "decline the NFC tag");
        if (!accept && !json) {
                printf("NFC tag %u declined: nothing was done.\n", id);
                return 0;
        }
        return print_carriers(reply, json, NULL);
}

int roam_nfc_run(char **args, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ uint8_t *data = NULL;
        const char *file = NULL;
        bool yes = false;
        size_t size = 0;
        unsigned types = 0;
        int r;

        if (args[0] && (streq(args[0], "accept") || streq(args[0], "reject"))) {
                const char *id = NULL;
                unsigned long v = 0;
                char *end;

                for (char **a = args + 1; *a; a++) {
                        if (streq(*a, "--json"))
                                json = true;
                        else if (!id)
                                id = *a;
                        else
                                return roam_usage_error("nfc",
                                                        "'roam nfc %s' takes one ID, got '%s' too.",
                                                        args[0], *a);
                }
                if (id) {
                        errno = 0;
                        v = strtoul(id, &end, 10);
                        if (errno || *end || end == id || v == 0 || v > UINT32_MAX)
                                return roam_usage_error("nfc", "'%s' is not an NFC tag number.",
                                                        id);
                }
                r = roam_bus_connect(&bus);
                if (r >= 0)
                        r = roam_bus_may_ask(bus);
                if (r < 0)
                        return r;
                return nfc_answer(bus, streq(args[0], "accept"), (uint32_t)v, json);
        }
        if (!args[0] || !streq(args[0], "import"))
                return roam_usage_error("nfc",
                                        "'roam nfc' needs: import FILE|- [--yes] [--json], or "
                                        "accept|reject [ID] [--json].");
        for (char **a = args + 1; *a; a++) {
                if (streq(*a, "--yes"))
                        yes = true;
                else if (streq(*a, "--json"))
                        json = true;
                else if (!file)
                        file = *a;
                else
                        return roam_usage_error(
                            "nfc", "'roam nfc import' takes one FILE, got '%s' too.", *a);
        }
        if (!file)
                return roam_usage_error("nfc", "'roam nfc import' needs a FILE (or - for stdin).");
        r = read_ndef(file, &data, &size);
        if (r < 0)
                return r;
        r = roam_bus_connect(&bus);
        if (r >= 0 && yes)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        /* What the tag holds first; acting on it only when asked to (--yes). */
        r = import_call(bus, data, size, yes, json, &types);
        if (r < 0 || yes || json)
                return r;
        /* Only what the tag holds: a WiFi-only tag has no device to pair. */
        if (types == 0)
                printf("Nothing to do: the tag holds no WiFi network or Bluetooth device.\n");
        else
                printf("Nothing done: 'roam nfc import %s --yes' %s%s%s.\n", file,
                       types & 2 ? "pairs the Bluetooth device" : "", types == 3 ? " and " : "",
                       types & 1 ? "adds the WiFi network to wpa_supplicant" : "");
        return 0;
}
