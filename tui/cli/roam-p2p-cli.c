/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include <json-c/json.h>

#include "roam-bt-cli.h"
#include "roam-bus-model.h"
#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-p2p-cli.h"
#include "roam-peers.h"
#include "roam-props.h"
#include "roam-util.h"
#include "roam-words.h"

/* WPS walk time: a push-button or PIN session ends after two minutes. */
#define CONNECT_WAIT_USEC (120 * USEC_PER_SEC)

static int log_call_error(const sd_bus_error *error, int r, const char *what)
{
        if (roam_bus_error_is_denied(error)) {
                char why[256];

                log_error("not allowed to %s: %s", what,
                          roam_bus_denied_reason(error, why, sizeof(why)));
                return -EACCES;
        }
        if (sd_bus_error_has_names(error, ROAM_ERROR_INVALID_ARGS, ROAM_ERROR_FAILED) &&
            error->message && *error->message)
                return log_error_errno(r, "cannot %s: %s", what, error->message);
        return roam_bus_log_call_error(error, r, what);
}

/* Every peer (GetManagedObjects), and the P2P state. */
static int load(sd_bus *bus, P2pList *l)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        int r;

        p2p_list_done(l);
        r = roam_model_new(&m);
        if (r < 0)
                return log_oom();
        r = roam_props_get_all(bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               roam_model_read_manager, m, &error);
        if (r < 0 && sd_bus_error_is_set(&error))
                return log_call_error(&error, r, "ask roamd");
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        /* a roamd without WiFi Direct has no P2PState */
        l->state = strdup(*m->p2p_state ? m->p2p_state : "unavailable");
        if (!l->state)
                return log_oom();
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                               "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &error,
                               &reply, NULL);
        if (r < 0)
                return log_call_error(&error, r, "ask roamd");
        r = p2p_list_parse_objects(reply, l);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        if (p2p_list_fetch_pins(bus, l) < 0)
                return log_oom();
        return 0;
}

/* The one peer named by arg: its address, or its name (unique). */
static int find_peer(P2pList *l, const char *arg, P2pPeer **ret)
{
        P2pPeer *found = NULL;

        for (size_t i = 0; i < l->n; i++)
                if (strcasecmp(strempty(l->peers[i].address), arg) == 0) {
                        *ret = &l->peers[i];
                        return 0;
                }
        for (size_t i = 0; i < l->n; i++)
                if (l->peers[i].name && strcasecmp(l->peers[i].name, arg) == 0) {
                        if (found) {
                                log_error("two devices are called \"%s\": use the address (roam "
                                          "p2p peers lists them)",
                                          arg);
                                return -ENOTUNIQ;
                        }
                        found = &l->peers[i];
                }
        if (!found) {
                if (streq(strempty(l->state), "unavailable"))
                        log_error("WiFi Direct is not available: wpa_supplicant runs no P2P "
                                  "device");
                else
                        log_error("no WiFi Direct device \"%s\" (search with: roam p2p find)", arg);
                return -ENOENT;
        }
        *ret = found;
        return 0;
}

static int print_peers(const P2pList *l, FILE *f)
{
        size_t wn = 4, wt = 4, ws = 5;

        if (streq(strempty(l->state), "unavailable")) {
                fputs("WiFi Direct is not available: wpa_supplicant runs no P2P device.\n", f);
                return 0;
        }
        if (l->n == 0) {
                fputs("No WiFi Direct devices found yet. Search with: roam p2p find\n", f);
                return 0;
        }
        for (size_t i = 0; i < l->n; i++) {
                wn = MAX(wn, strlen(p2p_peer_label(&l->peers[i])));
                wt = MAX(wt, strlen(strempty(l->peers[i].type)));
                ws = MAX(ws, strlen(p2p_state_text(&l->peers[i])));
        }
        fprintf(f, "%-*s  %-*s  %-*s  %-17s  %s\n", (int)wn, "NAME", (int)wt, "TYPE", (int)ws,
                "STATE", "ADDRESS", "CONNECT BY");
        for (size_t i = 0; i < l->n; i++) {
                const P2pPeer *p = &l->peers[i];
                _cleanup_free_ char *m = p2p_methods_text(p);
                if (!m)
                        return -ENOMEM;
                fprintf(f, "%-*s  %-*s  %-*s  %-17s  %s\n", (int)wn, p2p_peer_label(p), (int)wt,
                        strempty(p->type), (int)ws, p2p_state_text(p), strempty(p->address), m);
        }
        return 0;
}

static int peer_to_json(const P2pPeer *p, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *m = NULL;
        int r;

        if (!o)
                return -ENOMEM;
        r = strv_to_json(p->methods, &m);
        if (r >= 0)
                r = json_add_string(o, "address", strempty(p->address));
        if (r >= 0)
                r = json_add_string(o, "name", strempty(p->name));
        if (r >= 0)
                r = json_add_string(o, "type", strempty(p->type));
        if (r >= 0)
                r = json_add_string(o, "state", strempty(p->state));
        if (r >= 0)
                r = json_add(o, "methods", TAKE_PTR(m));
        if (r >= 0)
                r = json_add_bool(o, "incoming", p->incoming);
        if (r >= 0)
                r = json_add_string(o, "method", strempty(p->method));
        if (r >= 0)
                r = json_add_string(o, "pin", strempty(p->pin));
        if (r >= 0)
                r = json_add_string(o, "group", strempty(p->group));
        if (r >= 0)
                r = json_add_string(o, "reason", strempty(p->reason));
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static int print_json(const P2pList *l, const P2pPeer *one)
{
        _cleanup_(json_object_putp) json_object *doc = NULL, *arr = NULL;
        int r = 0;

        if (one)
                r = peer_to_json(one, &doc);
        else {
                doc = json_object_new_object();
                arr = json_object_new_array();
                if (!doc || !arr)
                        return log_oom();
                for (size_t i = 0; r >= 0 && i < l->n; i++) {
                        json_object *p = NULL;
                        r = peer_to_json(&l->peers[i], &p);
                        if (r >= 0)
                                r = json_append(arr, p);
                }
                if (r >= 0)
                        r = json_add_string(doc, "state", strempty(l->state));
                if (r >= 0)
                        r = json_add(doc, "peers", TAKE_PTR(arr));
        }
        if (r < 0)
                return log_oom();
        return json_print(doc, stdout);
}

/* Waiting: every signal from roamd wakes the loop, which then looks again. */

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        *(bool *)userdata = true;
        return 0;
}

static int watch(sd_bus *bus, bool *woken, sd_bus_slot **slot)
{
        /* Everything under roamd's objects: PropertiesChanged, InterfacesAdded/Removed. */
        int r = sd_bus_add_match(bus, slot, "type='signal',path_namespace='" ROAM_MANAGER_PATH "'",
                                 on_signal, woken);

        if (r < 0)
                return log_error_errno(r, "Failed to watch roamd's signals: %m");
        return 0;
}

/* Processes the bus until a signal came or the deadline passed (0: passed). */
static int wait_signal(sd_bus *bus, bool *woken, uint64_t deadline)
{
        struct timespec ts;
        uint64_t now;
        int r;

        *woken = false;
        for (;;) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return log_error_errno(r, "Lost the system bus: %m");
                if (*woken)
                        return 1;
                if (r > 0)
                        continue;
                clock_gettime(CLOCK_MONOTONIC, &ts);
                now = (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
                if (now >= deadline)
                        return 0;
                r = sd_bus_wait(bus, deadline - now);
                if (r < 0)
                        return log_error_errno(r, "Lost the system bus: %m");
        }
}

static uint64_t deadline_in(uint64_t usec)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000 + usec;
}

static int p2p_find(sd_bus *bus, unsigned seconds, bool json)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(p2p_list_done) P2pList l = {};
        _cleanup_strv_free_ char **seen = NULL;
        uint64_t deadline = deadline_in((seconds + 5) * USEC_PER_SEC);
        bool woken = false;
        int r;

        r = watch(bus, &woken, &slot);
        if (r < 0)
                return r;
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "P2PFind", &error, NULL, "u", seconds);
        if (r < 0)
                return log_call_error(&error, r, "search for WiFi Direct devices");
        if (!json)
                printf("Searching for WiFi Direct devices for %us...\n", seconds);
        fflush(stdout);
        for (;;) {
                r = load(bus, &l);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < l.n; i++) {
                        if (strv_contains(seen, l.peers[i].path))
                                continue;
                        if (strv_extend(&seen, l.peers[i].path) < 0)
                                return log_oom();
                        if (!json) {
                                printf("Found %s (%s, %s)\n", p2p_peer_label(&l.peers[i]),
                                       strempty(l.peers[i].type), strempty(l.peers[i].address));
                                fflush(stdout);
                        }
                }
                if (!streq(l.state, "finding"))
                        break;
                r = wait_signal(bus, &woken, deadline);
                if (r <= 0)
                        break;
        }
        if (json)
                return print_json(&l, NULL);
        printf("Search ended: %zu device%s.\n", l.n, l.n == 1 ? "" : "s");
        return r < 0 ? r : 0;
}

/* Waits until the peer at path is connected (1) or back to available (0: failed), or gone. */
static int wait_connected(sd_bus *bus, const char *path, const char *label, bool json)
{
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(p2p_list_done) P2pList l = {};
        uint64_t deadline = deadline_in(CONNECT_WAIT_USEC);
        bool woken = false;
        int r;

        r = watch(bus, &woken, &slot);
        if (r < 0)
                return r;
        for (;;) {
                P2pPeer *p = NULL;

                r = load(bus, &l);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < l.n; i++)
                        if (streq(l.peers[i].path, path))
                                p = &l.peers[i];
                if (!p) {
                        log_error("could not connect to %s: %s", label,
                                  roam_p2p_reason_words(
                                      roam_p2p_reason_to_string(ROAM_P2P_REASON_PEER_LOST)));
                        return -ENOENT;
                }
                if (streq_ptr(p->state, "connected")) {
                        if (json)
                                return print_json(&l, p);
                        printf("Connected to %s (interface %s).\n", label, strempty(p->group));
                        return 0;
                }
                if (streq_ptr(p->state, "available")) {
                        if (json)
                                (void)print_json(&l, p);
                        log_error("could not connect to %s: %s", label,
                                  p2p_reason_text(p)
                                      ?: roam_p2p_reason_words(
                                             roam_p2p_reason_to_string(ROAM_P2P_REASON_UNKNOWN)));
                        return -ECONNREFUSED;
                }
                r = wait_signal(bus, &woken, deadline);
                if (r < 0)
                        return r;
                if (r == 0) {
                        log_error("%s did not connect within two minutes", label);
                        return -ETIMEDOUT;
                }
        }
}

static int peer_call(sd_bus *bus, const P2pPeer *p, const char *method, const char *what,
                     sd_bus_message **reply, const char *types, ...)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, p->path, ROAM_PEER_INTERFACE,
                                           method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r < 0)
                return log_error_errno(r, "Failed to build a call to roamd: %m");
        r = sd_bus_call(bus, m, 0, &error, reply);
        if (r < 0)
                return log_call_error(&error, r, what);
        return 0;
}

/* The PIN the peer shows, for command: one line of pin_file, or of standard input (NULL or
 * "-"; on a terminal without echo) into code. Never from argv: every local user reads that
 * (ps, /proc/PID/cmdline). */
static int peer_shown_pin(const P2pPeer *p, const char *pin_file, const char *command, char *code,
                          size_t size, const char **ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        char prompt[300];

        if (pin_file && !streq(pin_file, "-")) {
                f = fopen(pin_file, "re");
                if (!f)
                        return log_error_errno(errno, "Cannot open %s: %m", pin_file);
                if (!fgets(code, (int)size, f))
                        code[0] = 0;
                code[strcspn(code, "\r\n")] = 0;
                if (!*code)
                        return log_error("%s must hold the PIN %s shows on its first line.",
                                         pin_file, p2p_peer_label(p)),
                               -EINVAL;
                *ret = code;
                return 0;
        }
        snprintf(prompt, sizeof(prompt), "The PIN %s shows", p2p_peer_label(p));
        if (roam_read_code(prompt, code, size) < 0)
                return log_error("%s shows a PIN: '%s' reads it on standard input (or "
                                 "--pin-file FILE), and none came.",
                                 p2p_peer_label(p), command),
                       -EINVAL;
        *ret = code;
        return 0;
}

static int p2p_connect(sd_bus *bus, P2pPeer *p, char **args, bool json, const char *pin_file)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *method = "push-button", *pin = "", *shown = NULL;
        char what[256], code[64] = "";
        int r;

        /* The words were checked by check_connect_args(). */
        if (args[0] && streq(args[0], "pin")) {
                method = "keypad";
                r = peer_shown_pin(p, pin_file, "roam p2p connect PEER pin", code, sizeof(code),
                                   &pin);
                if (r < 0)
                        return r;
        } else if (args[0] && streq(args[0], "show-pin"))
                method = "display";
        else if (!args[0] && !strv_contains(p->methods, "push-button") && p->methods &&
                 p->methods[0])
                /* No button on the peer: it has a keypad (we show a PIN) or shows one. */
                method = strv_contains(p->methods, "display") ? "display" : "keypad";
        if (streq(method, "keypad") && !*pin)
                return log_error("%s shows a PIN: roam p2p connect '%s' pin (the PIN on "
                                 "standard input or --pin-file FILE)",
                                 p2p_peer_label(p), p2p_peer_label(p)),
                       -EINVAL;

        snprintf(what, sizeof(what), "connect to %s", p2p_peer_label(p));
        r = peer_call(bus, p, "Connect", what, &reply, "ss", method, pin);
        explicit_bzero(code, sizeof(code));
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "s", &shown);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        if (!json) {
                if (streq(method, "display"))
                        printf("Type this PIN on %s: %.4s %.4s\n", p2p_peer_label(p), shown,
                               strlen(shown) > 4 ? shown + 4 : "");
                else if (streq(method, "push-button"))
                        printf("Connecting to %s: press its WiFi Direct (WPS) button or accept "
                               "on its screen.\n",
                               p2p_peer_label(p));
                else
                        printf("Connecting to %s with its PIN...\n", p2p_peer_label(p));
                fflush(stdout);
        }
        return wait_connected(bus, p->path, p2p_peer_label(p), json);
}

static int p2p_accept(sd_bus *bus, P2pPeer *p, bool json, const char *pin_file)
{
        char what[256], code[64] = "";
        const char *pin = "";
        int r;

        if (!streq_ptr(p->state, "request"))
                return log_error("%s has not asked to connect", p2p_peer_label(p)), -EINVAL;
        if (pin_file || streq_ptr(p->method, "keypad")) {
                r = peer_shown_pin(p, pin_file, "roam p2p accept PEER", code, sizeof(code), &pin);
                if (r < 0)
                        return r;
        }
        if (!json && streq_ptr(p->method, "display") && p->pin && *p->pin)
                printf("Type this PIN on %s: %.4s %.4s\n", p2p_peer_label(p), p->pin,
                       strlen(p->pin) > 4 ? p->pin + 4 : "");
        snprintf(what, sizeof(what), "accept %s", p2p_peer_label(p));
        r = peer_call(bus, p, "Accept", what, NULL, "s", pin);
        explicit_bzero(code, sizeof(code));
        if (r < 0)
                return r;
        return wait_connected(bus, p->path, p2p_peer_label(p), json);
}

/* The words after `roam p2p connect|accept PEER`, checked before asking roamd. */
static int check_peer_args(const char *verb, char **args, const char *pin_file)
{
        static const char *const argv_pin = "a PIN on the command line is visible to every local "
                                            "user: give it on standard input or with --pin-file "
                                            "FILE.";

        if (streq(verb, "accept")) {
                if (args[0])
                        return roam_usage_error("p2p", "%s", argv_pin);
                return 0;
        }
        if (!args[0] || !streq(args[0], "pin")) {
                if (pin_file)
                        return roam_usage_error("p2p", "--pin-file goes with 'roam p2p connect "
                                                       "PEER pin' and 'roam p2p accept PEER'.");
        }
        if (!args[0])
                return 0;
        if (streq(args[0], "pin")) {
                if (args[1])
                        return roam_usage_error("p2p", "%s", argv_pin);
                return 0;
        }
        if (!streq(args[0], "show-pin") && !streq(args[0], "push-button"))
                return roam_usage_error("p2p",
                                        "unknown way to connect '%s': push-button, show-pin or "
                                        "pin.",
                                        args[0]);
        if (args[1])
                return roam_usage_error("p2p", "too many arguments for 'roam p2p connect'.");
        return 0;
}

int roam_p2p_run(char **args, bool json, const char *pin_file)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(p2p_list_done) P2pList l = {};
        const char *verb = args[0];
        P2pPeer *p = NULL;
        char what[256];
        int r;

        if (streq_ptr(verb, "help")) /* as the help once said */
                return roam_command_help("p2p");
        if (!verb)
                return roam_usage_error("p2p", "'roam p2p' needs a command: find, peers, connect, "
                                               "accept, reject or disconnect.");
        if (!streq(verb, "find") && !streq(verb, "peers") && !streq(verb, "connect") &&
            !streq(verb, "accept") && !streq(verb, "reject") && !streq(verb, "disconnect"))
                return roam_usage_error("p2p",
                                        "unknown command 'p2p %s': find, peers, connect, accept, "
                                        "reject or disconnect.",
                                        verb);
        if (pin_file && !streq(verb, "connect") && !streq(verb, "accept"))
                return roam_usage_error("p2p", "--pin-file goes with 'roam p2p connect PEER pin' "
                                               "and 'roam p2p accept PEER'.");
        if (streq(verb, "find")) {
                unsigned long secs = 30;
                char *end;
                if (args[1]) {
                        secs = strtoul(args[1], &end, 10);
                        if (*end || end == args[1] || secs < 1 || secs > 3600 || args[2])
                                return roam_usage_error("p2p", "'roam p2p find' takes a number "
                                                               "of seconds from 1 to 3600.");
                }
                r = roam_bus_connect(&bus);
                if (r >= 0)
                        r = roam_bus_may_ask(bus);
                return r < 0 ? r : p2p_find(bus, (unsigned)secs, json);
        }
        if (streq(verb, "peers")) {
                if (args[1])
                        return roam_usage_error("p2p", "'roam p2p peers' takes no arguments.");
                r = roam_bus_connect(&bus);
                if (r >= 0)
                        r = load(bus, &l);
                if (r < 0)
                        return r;
                return json ? print_json(&l, NULL) : print_peers(&l, stdout);
        }
        if (!args[1])
                return roam_usage_error("p2p",
                                        "'roam p2p %s' needs a device: its name or address (roam "
                                        "p2p peers lists them).",
                                        verb);
        if ((streq(verb, "reject") || streq(verb, "disconnect")) && args[2])
                return roam_usage_error("p2p", "'roam p2p %s' takes one device.", verb);
        r = check_peer_args(verb, args + 2, pin_file);
        if (r < 0)
                return r;
        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r >= 0)
                r = load(bus, &l);
        if (r >= 0)
                r = find_peer(&l, args[1], &p);
        if (r < 0)
                return r;
        if (streq(verb, "connect"))
                return p2p_connect(bus, p, args + 2, json, pin_file);
        if (streq(verb, "accept"))
                return p2p_accept(bus, p, json, pin_file);
        snprintf(what, sizeof(what), "%s %s", verb, p2p_peer_label(p));
        r = peer_call(bus, p, streq(verb, "reject") ? "Reject" : "Disconnect", what, NULL, NULL);
        if (r < 0)
                return r;
        if (!json) {
                printf("%s %s.\n", streq(verb, "reject") ? "Rejected" : "Disconnecting from",
                       p2p_peer_label(p));
                return 0;
        }
        /* The device as roamd has it now, not as it was before the call (it may be gone). */
        {
                _cleanup_(p2p_list_done) P2pList now = {};
                r = load(bus, &now);
                if (r < 0)
                        return r;
                for (size_t i = 0; i < now.n; i++)
                        if (streq(now.peers[i].path, p->path))
                                return print_json(&now, &now.peers[i]);
        }
        return print_json(&l, p);
}
