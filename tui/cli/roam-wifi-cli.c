/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include <json-c/json.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-format.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-props.h"
#include "roam-qr.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-wifi-cli.h"
#include "roam-wifi.h"
#include "roam-words.h"

#ifndef ROAM_ERROR_NOT_SUPPORTED
#define ROAM_ERROR_NOT_SUPPORTED "org.roam1.Error.NotSupported"
#endif
#ifndef ROAM_ERROR_BUSY
#define ROAM_ERROR_BUSY "org.roam1.Error.Busy"
#endif

/* iwd's Connect() may take ~30 s a BSS with DHCP (research wifi-join.md §4.8). */
#define JOIN_WAIT_USEC (120 * USEC_PER_SEC)
#define SCAN_WAIT_USEC (30 * USEC_PER_SEC)
/* a link's verdict after a join: roamd probes once it has an address */
#define VERDICT_WAIT_USEC (20 * USEC_PER_SEC)
/* a passphrase is 8-63 characters or 64 hex digits; an EAP password may be longer */
#define SECRET_MAX 1024

static bool str_in(const char *s, const char *const *set)
{
        for (; *set; set++)
                if (streq(s, *set))
                        return true;
        return false;
}

typedef struct WifiArgs {
        const char *link;
        bool json, hidden, yes, no_remember, no_autoconnect;
        const char *security, *passphrase_file, *eap, *identity, *ca_cert, *domain;
        const char *anonymous_identity;
        char phase2[16]; /* lowercase: NetworkManager's words; roamd says it to each owner */
} WifiArgs;

static int log_call_error(const sd_bus_error *error, int r, const char *what)
{
        if (roam_bus_error_is_denied(error)) {
                char why[256];

                log_error("not allowed to %s: %s", what,
                          roam_bus_denied_reason(error, why, sizeof(why)));
                return -EACCES;
        }
        if (sd_bus_error_has_names(error, ROAM_ERROR_INVALID_ARGS, ROAM_ERROR_FAILED,
                                   ROAM_ERROR_NOT_SUPPORTED, ROAM_ERROR_BUSY) &&
            error->message && *error->message)
                return log_error_errno(r, "cannot %s: %s", what, error->message);
        return roam_bus_log_call_error(error, r, what);
}

/* The Wi-Fi link to act on: the one named, else the only one. */
static int pick_link(sd_bus *bus, const char *name, WifiLink *ret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        WifiLink *links = NULL;
        size_t n = 0, pick = SIZE_MAX;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                               "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &error,
                               &reply, NULL);
        if (r < 0)
                return log_call_error(&error, r, "ask roamd");
        r = wifi_links_parse_objects(reply, &links, &n);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        for (size_t i = 0; i < n; i++)
                if (name ? streq(links[i].name, name) : n == 1)
                        pick = i;
        if (pick == SIZE_MAX) {
                if (n == 0)
                        log_error("roamd has no Wi-Fi link.");
                else if (name)
                        log_error("'%s' is no Wi-Fi link roamd has (roam wifi lists them).", name);
                else {
                        char names[256] = "";

                        for (size_t i = 0; i < n; i++)
                                snprintf(names + strlen(names), sizeof(names) - strlen(names),
                                         "%s%s", i ? ", " : "", links[i].name);
                        log_error("Several Wi-Fi links (%s): name one with --link.", names);
                }
                wifi_links_free(links, n);
                return name ? -ENOENT : -EINVAL;
        }
        *ret = links[pick];
        links[pick] = (WifiLink){};
        wifi_links_free(links, n);
        return 0;
}

static int load_networks(sd_bus *bus, WifiLink *l)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE, "GetNetworks",
                               &error, &reply, NULL);
        if (r < 0)
                return log_call_error(&error, r, "list the networks");
        r = wifi_link_read_networks(reply, l);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        return 0;
}

static int load_properties(sd_bus *bus, WifiLink *l)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = roam_props_get_all(bus, l->path, ROAM_WIFI_INTERFACE, wifi_link_read, l, &error);
        if (r < 0 && sd_bus_error_is_set(&error))
                return log_call_error(&error, r, "ask roamd");
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        return 0;
}

static void print_list(const WifiLink *l)
{
        bool utf8 = roam_locale_is_utf8();
        char age[32];

        if (l->last_scan)
                roam_format_age(l->last_scan, roam_now(), age, sizeof(age), NULL);
        printf("Wi-Fi on %s", l->name);
        if (wifi_backend_words(l->backend))
                printf(" · through %s", wifi_backend_words(l->backend));
        printf(" · %s%s\n",
               l->scanning    ? "scanning"
               : l->last_scan ? "scanned "
                              : "not scanned yet",
               !l->scanning && l->last_scan ? age : "");
        if (!wifi_backend_words(l->backend) || streq_ptr(l->backend, "connman")) {
                printf("%s\n", strempty(l->backend_why));
                return;
        }
        if (l->radio && !streq(l->radio, "on")) {
                printf("Wi-Fi is off (rfkill: %s).\n", l->radio);
                return;
        }
        if (l->join_id)
                printf("Joining (join %u): %s\n", l->join_id, strempty(l->join_step));
        if (l->n_networks == 0) {
                printf("No networks seen (roam wifi scan looks again).\n");
                return;
        }
        printf("  %-24s %-22s %-20s %-8s %s\n", "Network", "Signal", "Security", "Band", "Known");
        for (size_t i = 0; i < l->n_networks; i++) {
                const WifiNetwork *n = &l->networks[i];
                _cleanup_free_ char *name = NULL;
                char bars[32], words[48], signal[96], known[96] = "";
                size_t pad;

                wifi_signal_bars(n->in_range ? n->signal : 0, utf8, bars, sizeof(bars));
                wifi_signal_words(n->signal, n->in_range, words, sizeof(words));
                if (n->in_range)
                        snprintf(signal, sizeof(signal), "%s %s", bars, words);
                else
                        snprintf(signal, sizeof(signal), "%s", words);
                if (n->known)
                        snprintf(known, sizeof(known), "%s%s", n->autoconnect ? "auto" : "manual",
                                 n->priority ? ", priority" : "");
                if (n->known && n->priority)
                        snprintf(known + strlen(known), sizeof(known) - strlen(known), " %d",
                                 n->priority);
                if (roam_text_cut_middle(n->name, 24, utf8, &name) < 0)
                        return;
                /* pad by columns, not bytes: names and bars are UTF-8 */
                printf("%s %s", n->connected ? (utf8 ? "\u25cf" : "*") : " ", name);
                pad = 24 - MIN(roam_text_columns(name, utf8), (size_t)24);
                printf("%*s %s", (int)pad, "", signal);
                pad = 22 - MIN(roam_text_columns(signal, utf8), (size_t)22);
                printf("%*s %-20s %-8s %s\n", (int)pad, "", wifi_security_words(n->security),
                       strempty(n->band), known);
        }
}

static int network_to_json(const WifiNetwork *n, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        char hex[2 * WIFI_SSID_MAX + 1];

        for (size_t i = 0; i < n->ssid_len; i++)
                sprintf(hex + 2 * i, "%02x", n->ssid[i]);
        hex[2 * n->ssid_len] = 0;
        if (!o || json_add_string(o, "ssid", n->name) < 0 ||
            json_add_string(o, "ssid_hex", hex) < 0 ||
            json_add_int(o, "signal", n->in_range ? n->signal : 0) < 0 ||
            json_add_string(o, "signal_words",
                            n->in_range ? strempty(roam_signal_word(n->signal)) : "out of range") <
                0 ||
            json_add_string(o, "security", strempty(n->security)) < 0 ||
            json_add_string(o, "security_words", wifi_security_words(n->security)) < 0 ||
            json_add_string(o, "band", strempty(n->band)) < 0 ||
            json_add_uint(o, "bssids", n->bssids) < 0 || json_add_bool(o, "known", n->known) < 0 ||
            json_add_bool(o, "connected", n->connected) < 0 ||
            json_add_bool(o, "autoconnect", n->autoconnect) < 0 ||
            json_add_int(o, "priority", n->priority) < 0 ||
            json_add_uint(o, "last_connected", n->last_connected) < 0 ||
            json_add_bool(o, "in_range", n->in_range) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int print_json_list(const WifiLink *l)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        json_object *arr = json_object_new_array();

        if (!doc || json_add(doc, "networks", arr) < 0 ||
            json_add_string(doc, "link", l->name) < 0 ||
            json_add_string(doc, "backend", strempty(l->backend)) < 0 ||
            json_add_string(doc, "backend_why", strempty(l->backend_why)) < 0 ||
            json_add_string(doc, "radio", strempty(l->radio)) < 0 ||
            json_add_bool(doc, "scanning", l->scanning) < 0 ||
            json_add_uint(doc, "last_scan", l->last_scan) < 0 ||
            json_add_uint(doc, "join", l->join_id) < 0)
                return log_oom();
        for (size_t i = 0; i < l->n_networks; i++) {
                json_object *o;

                if (network_to_json(&l->networks[i], &o) < 0 || json_append(arr, o) < 0)
                        return log_oom();
        }
        return json_print(doc, stdout);
}

static int wifi_list(sd_bus *bus, WifiLink *l, bool json)
{
        int r;

        /* no owner roam joins through: roamd has no networks to give, only why */
        if (!wifi_backend_words(l->backend)) {
                if (json)
                        return print_json_list(l);
                print_list(l);
                return 0;
        }
        r = load_networks(bus, l);

        if (r < 0)
                return r;
        if (json)
                return print_json_list(l);
        print_list(l);
        return 0;
}

/* Signals of the link's WiFi interface, kept until the loop looks at them. */
typedef struct Watch {
        uint32_t join_id;
        char *step, *step_words;
        char *need_kind, *need_why;
        char *result, *result_words;
        bool link_changed; /* the Link interface changed (the verdict after a join) */
} Watch;

static void watch_done(Watch *w)
{
        free(w->step);
        free(w->step_words);
        free(w->need_kind);
        free(w->need_why);
        free(w->result);
        free(w->result_words);
}

static int on_wifi_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        Watch *w = userdata;
        const char *member = sd_bus_message_get_member(m), *a, *b;
        uint32_t id;

        if (streq_ptr(member, "PropertiesChanged")) {
                const char *iface;

                if (sd_bus_message_read(m, "s", &iface) >= 0 && streq(iface, ROAM_LINK_INTERFACE))
                        w->link_changed = true;
                return 0;
        }
        if (sd_bus_message_read(m, "uss", &id, &a, &b) < 0 || id != w->join_id)
                return 0;
        if (streq_ptr(member, "JoinStep")) {
                (void)free_and_strdup(&w->step, a);
                (void)free_and_strdup(&w->step_words, b);
        } else if (streq_ptr(member, "JoinNeedsSecret")) {
                (void)free_and_strdup(&w->need_kind, a);
                (void)free_and_strdup(&w->need_why, b);
        } else if (streq_ptr(member, "JoinDone")) {
                (void)free_and_strdup(&w->result, a);
                (void)free_and_strdup(&w->result_words, b);
        }
        return 0;
}

static int watch_link(sd_bus *bus, const char *path, Watch *w, sd_bus_slot **slot1,
                      sd_bus_slot **slot2)
{
        int r;

        r = sd_bus_match_signal(bus, slot1, ROAM_BUS_NAME, path, ROAM_WIFI_INTERFACE, NULL,
                                on_wifi_signal, w);
        if (r >= 0)
                r = sd_bus_match_signal(bus, slot2, ROAM_BUS_NAME, path,
                                        "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                        on_wifi_signal, w);
        if (r < 0)
                return log_error_errno(r, "Failed to watch roamd's signals: %m");
        return 0;
}

/* Runs the bus until *flag or the deadline; 0, -ETIMEDOUT, or a bus error. */
static int wait_for(sd_bus *bus, bool (*ready)(const Watch *), const Watch *w, uint64_t deadline)
{
        for (;;) {
                uint64_t now;
                int r = sd_bus_process(bus, NULL);

                if (r < 0)
                        return log_error_errno(r, "Lost the system bus: %m");
                if (ready(w))
                        return 0;
                if (r > 0)
                        continue;
                now = clock_now_usec(CLOCK_MONOTONIC);
                if (now >= deadline)
                        return -ETIMEDOUT;
                r = sd_bus_wait(bus, deadline - now);
                if (r < 0 && r != -EINTR)
                        return log_error_errno(r, "Lost the system bus: %m");
        }
}

static bool join_ready(const Watch *w)
{
        return w->result || w->need_kind;
}

static int wifi_scan(sd_bus *bus, WifiLink *l, bool json)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        /* roamd answers once the owner's scan ended */
        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE,
                                           "Scan");
        if (r < 0)
                return log_oom();
        r = sd_bus_call(bus, m, SCAN_WAIT_USEC, &error, &reply);
        if (r == -ETIMEDOUT)
                return log_error_errno(r, "The scan on %s did not end in %u s.", l->name,
                                       (unsigned)(SCAN_WAIT_USEC / USEC_PER_SEC));
        if (r < 0) {
                r = log_call_error(&error, r, "scan");
                return r == -EACCES ? WIFI_EXIT_REFUSED : r;
        }
        r = load_properties(bus, l);
        if (r < 0)
                return r;
        return wifi_list(bus, l, json);
}

static int read_secret_file(const char *path, char **ret)
{
        _cleanup_close_ int fd = -EBADF;
        char *buf;
        size_t n = 0;

        fd = streq(path, "-") ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Cannot open %s: %m", path);
        buf = calloc(1, SECRET_MAX + 2);
        if (!buf)
                return log_oom();
        while (n < SECRET_MAX + 1) {
                ssize_t k = read(fd, buf + n, SECRET_MAX + 1 - n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
                if (memchr(buf, '\n', n)) /* one line: stdin may hold more */
                        break;
        }
        buf[strcspn(buf, "\r\n")] = 0;
        n = strlen(buf);
        if (n == 0 || n > SECRET_MAX) {
                erase_and_free(buf);
                log_error("%s must hold the passphrase on its first line (1 to %d bytes).",
                          streq(path, "-") ? "Standard input" : path, SECRET_MAX);
                return -EINVAL;
        }
        *ret = buf;
        return 0;
}

/* A line from the terminal with echo off; whatever was typed before the prompt is thrown away
 * (typed ahead, it was meant for something else). */
static int prompt_secret(const char *prompt, char **ret)
{
        struct termios old, quiet;
        char *buf;
        bool restore = false;

        if (!isatty(STDIN_FILENO))
                return -ENOTTY;
        buf = calloc(1, SECRET_MAX + 2);
        if (!buf)
                return log_oom();
        /* echo off and the typed-ahead keys dropped before the prompt shows: a key typed
         * after it lands in the passphrase, never on the screen */
        if (tcgetattr(STDIN_FILENO, &old) >= 0) {
                quiet = old;
                quiet.c_lflag &= ~(tcflag_t)ECHO;
                restore = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) >= 0;
        }
        fprintf(stderr, "%s: ", prompt);
        fflush(stderr);
        if (!fgets(buf, SECRET_MAX + 1, stdin))
                buf[0] = 0;
        if (restore) {
                (void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &old);
                fputc('\n', stderr);
        }
        buf[strcspn(buf, "\r\n")] = 0;
        if (!*buf) {
                erase_and_free(buf);
                return -ENODATA;
        }
        *ret = buf;
        return 0;
}

static int send_secret(sd_bus *bus, const WifiLink *l, uint32_t id, const char *identity,
                       const char *secret)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE,
                                           "JoinSecret");
        /* the message's buffer holds the secret: wiped when it is freed */
        if (r >= 0)
                r = sd_bus_message_sensitive(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "u", id);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        /* an EAP join's secret is its password, with the user name */
        if (r >= 0)
                r = wifi_append_bytes(m, identity ? "password" : "passphrase", secret,
                                      strlen(secret));
        if (r >= 0 && identity)
                r = sd_bus_message_append(m, "{sv}", "identity", "s", identity);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return log_oom();
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0)
                return log_call_error(&error, r, "answer the join");
        return 0;
}

static void join_cancel(sd_bus *bus, const WifiLink *l, uint32_t id)
{
        (void)sd_bus_call_method(bus, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE, "JoinCancel",
                                 NULL, NULL, "u", id);
}

typedef struct Verdict {
        char *connectivity, *reason, *portal_url;
        uint64_t last_probe;
} Verdict;

static void verdict_done(Verdict *v)
{
        free(v->connectivity);
        free(v->reason);
        free(v->portal_url);
        *v = (Verdict){};
}

static const BusMapEntry verdict_map[] = {
    {"Connectivity", "s", bus_map_string, offsetof(Verdict, connectivity)},
    {"ConnectivityReason", "s", bus_map_string, offsetof(Verdict, reason)},
    {"PortalURL", "s", bus_map_string, offsetof(Verdict, portal_url)},
    {"LastProbe", "t", bus_map_u64, offsetof(Verdict, last_probe)},
    {},
};

static int read_verdict(sd_bus *bus, const WifiLink *l, Verdict *v)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        verdict_done(v);
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, l->path, "org.freedesktop.DBus.Properties",
                               "GetAll", NULL, &reply, "s", ROAM_LINK_INTERFACE);
        if (r >= 0)
                r = bus_map_read_flags(reply, verdict_map, BUS_MAP_SKIP_WRONG_TYPE, v, NULL);
        return r < 0 ? r : 0;
}

static bool verdict_pending(const Verdict *v)
{
        return !v->connectivity || !*v->connectivity || streq(v->connectivity, "checking");
}

static bool link_ready(const Watch *w)
{
        return w->link_changed;
}

/* After a join: the link's verdict. roamd ends a join (JoinDone connected or portal) once
 * the link's verdict after it is decided, by a probe round or by facts that need none (no
 * address), so the verdict read now is that one; while it still says checking (a roamd whose
 * verdict did not come in time), VERDICT_WAIT_USEC at most for it. *v as it is then. */
static void wait_verdict(sd_bus *bus, const WifiLink *l, Watch *w, Verdict *v)
{
        uint64_t deadline = clock_now_usec(CLOCK_MONOTONIC) + VERDICT_WAIT_USEC;

        for (;;) {
                if (read_verdict(bus, l, v) < 0 || !verdict_pending(v))
                        return;
                w->link_changed = false;
                if (wait_for(bus, link_ready, w, deadline) < 0)
                        return;
        }
}

static int print_result_json(const WifiLink *l, const char *ssid, uint32_t id, const char *result,
                             const char *words, const Verdict *v)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();

        if (!doc || json_add_string(doc, "link", l->name) < 0 ||
            json_add_string(doc, "ssid", ssid) < 0 || json_add_uint(doc, "join", id) < 0 ||
            json_add_string(doc, "result", result) < 0 || json_add_string(doc, "words", words) < 0)
                return log_oom();
        if (v && (json_add_string(doc, "verdict", v->connectivity) < 0 ||
                  json_add_string(doc, "reason", v->reason) < 0 ||
                  json_add_string(doc, "portal_url", v->portal_url) < 0))
                return log_oom();
        return json_print(doc, stdout);
}

/* Follows join id to its end: steps as lines, a secret asked for from the terminal (never
 * from argv; without a terminal the join is canceled), a wrong key asked again in place.
 * Returns the exit status (roam-wifi.h) or a negative errno. */
static int follow_join(sd_bus *bus, const WifiLink *l, Watch *w, const char *ssid,
                       const char *identity, bool json)
{
        uint64_t deadline = clock_now_usec(CLOCK_MONOTONIC) + JOIN_WAIT_USEC;
        _cleanup_(verdict_done) Verdict v = {};
        WifiJoinResult res;
        bool joined;
        int r;

        for (;;) {
                _cleanup_erase_and_free_ char *secret = NULL;
                char prompt[256];
                bool wrong, eap;

                r = wait_for(bus, join_ready, w, deadline);
                if (r == -ETIMEDOUT) {
                        join_cancel(bus, l, w->join_id);
                        log_error("Joining %s did not end in %u s: canceled.", ssid,
                                  (unsigned)(JOIN_WAIT_USEC / USEC_PER_SEC));
                        return 1;
                }
                if (r < 0)
                        return r;
                if (w->result)
                        break;
                /* JoinNeedsSecret */
                wrong = streq_ptr(w->need_why, "wrong-key");
                /* an 802.1X network refuses the user name or password, not a passphrase */
                eap = streq_ptr(w->need_kind, "identity+password");
                if (wrong && !json && isatty(STDIN_FILENO))
                        fprintf(stderr,
                                "%s refused this %s. Check it (it is case-sensitive) and try "
                                "again.\n",
                                ssid, eap ? "user name or password" : "passphrase");
                snprintf(prompt, sizeof(prompt), "%s for %s", eap ? "Password" : "Passphrase",
                         ssid);
                r = prompt_secret(prompt, &secret);
                if (r < 0) {
                        join_cancel(bus, l, w->join_id);
                        if (wrong) {
                                if (json)
                                        (void)print_result_json(
                                            l, ssid, w->join_id, eap ? "auth-failed" : "wrong-key",
                                            eap ? "refused the user name or password"
                                                : "refused the passphrase",
                                            NULL);
                                else
                                        log_error("%s refused the %s.", ssid,
                                                  eap ? "user name or password" : "passphrase");
                                return WIFI_EXIT_WRONG_KEY;
                        }
                        log_error("%s needs a %s: give it with --passphrase-file FILE (- for "
                                  "standard input), or join from a terminal.",
                                  ssid,
                                  streq_ptr(w->need_kind, "identity+password") ? "password"
                                                                               : "passphrase");
                        return -EINVAL;
                }
                free(w->need_kind);
                free(w->need_why);
                w->need_kind = w->need_why = NULL;
                r = send_secret(bus, l, w->join_id, identity, secret);
                if (r < 0) {
                        join_cancel(bus, l, w->join_id);
                        return r;
                }
        }
        res = wifi_join_result_from_string(w->result);
        joined = res == WIFI_JOIN_CONNECTED || res == WIFI_JOIN_PORTAL;
        if (joined)
                wait_verdict(bus, l, w, &v);
        if (json)
                r = print_result_json(l, ssid, w->join_id, w->result, strempty(w->result_words),
                                      joined ? &v : NULL);
        else if (joined) {
                printf("%s\n", strempty(w->result_words));
                if (verdict_pending(&v))
                        printf("No verdict yet (roam status %s says it once roamd probed).\n",
                               l->name);
                else if (streq_ptr(v.connectivity, "portal"))
                        printf("Behind a captive portal: log in at %s (roam portal %s, or roam "
                               "portal browse %s).\n",
                               strempty(v.portal_url), l->name, l->name);
                else
                        printf("%s: %s (%s).\n", l->name, roam_verdict_word(v.connectivity),
                               roam_reason_short(v.reason));
                r = 0;
        } else if (res == WIFI_JOIN_SHARED) {
                printf("%s\n", strempty(w->result_words)); /* a DPP configurator's */
                r = 0;
        } else {
                log_error("%s", *strempty(w->result_words) ? w->result_words : w->result);
                r = 0;
        }
        if (r < 0)
                return r;
        return wifi_join_result_exit_status(res);
}

static int parse_ssid(const char *s, uint8_t *ssid, size_t *len)
{
        size_t n = strlen(s);

        if (n == 0 || n > WIFI_SSID_MAX)
                return roam_usage_error("wifi",
                                        "a network name (SSID) has 1 to %d bytes, '%s' "
                                        "has %zu.",
                                        WIFI_SSID_MAX, s, n);
        memcpy(ssid, s, n);
        *len = n;
        return 0;
}

static int add_string(sd_bus_message *m, const char *key, const char *v)
{
        return v ? sd_bus_message_append(m, "{sv}", key, "s", v) : 0;
}

static int wifi_join(sd_bus *bus, WifiLink *l, const char *ssid_arg, const WifiArgs *a)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *s1 = NULL, *s2 = NULL;
        _cleanup_erase_and_free_ char *secret = NULL;
        _cleanup_free_ char *shown = NULL;
        _cleanup_free_ char *ca = NULL;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t len = 0;
        Watch w = {};
        int r;

        r = parse_ssid(ssid_arg, ssid, &len);
        if (r < 0)
                return r;
        if (wifi_ssid_display(ssid, len, &shown) < 0)
                return log_oom();
        if (a->passphrase_file) {
                r = read_secret_file(a->passphrase_file, &secret);
                if (r < 0)
                        return r;
        }
        if (a->ca_cert) {
                ca = realpath(a->ca_cert, NULL);
                if (!ca)
                        return log_error_errno(errno, "Cannot use the CA certificate %s: %m",
                                               a->ca_cert);
        }
        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE,
                                           "Join");
        if (r >= 0 && secret)
                r = sd_bus_message_sensitive(m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0)
                r = wifi_append_bytes(m, "ssid", ssid, len);
        if (r >= 0 && a->hidden)
                r = sd_bus_message_append(m, "{sv}", "hidden", "b", 1);
        if (r >= 0)
                r = add_string(m, "security", a->security);
        /* an EAP network's secret is its password (a key of its own) */
        if (r >= 0 && secret)
                r = wifi_append_bytes(m, a->eap ? "password" : "passphrase", secret,
                                      strlen(secret));
        if (r >= 0)
                r = add_string(m, "eap", a->eap);
        if (r >= 0)
                r = add_string(m, "identity", a->identity);
        if (r >= 0)
                r = add_string(m, "anonymous-identity", a->anonymous_identity);
        if (r >= 0 && a->phase2[0])
                r = add_string(m, "phase2", a->phase2);
        if (r >= 0)
                r = add_string(m, "ca-file", ca);
        if (r >= 0)
                r = add_string(m, "domain", a->domain);
        if (r >= 0 && a->no_remember)
                r = sd_bus_message_append(m, "{sv}", "remember", "b", 0);
        if (r >= 0 && a->no_autoconnect)
                r = sd_bus_message_append(m, "{sv}", "autoconnect", "b", 0);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return log_oom();
        r = watch_link(bus, l->path, &w, &s1, &s2);
        if (r < 0)
                return r;
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0) {
                r = log_call_error(&error, r, "join");
                watch_done(&w);
                return r == -EACCES ? WIFI_EXIT_REFUSED : r;
        }
        r = sd_bus_message_read(reply, "u", &w.join_id);
        if (r < 0) {
                watch_done(&w);
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        }
        if (!a->json)
                printf("Joining %s on %s...\n", shown, l->name);
        r = follow_join(bus, l, &w, shown, a->identity, a->json);
        watch_done(&w);
        return r;
}

static int call_on_ssid(sd_bus *bus, WifiLink *l, const char *ssid_arg, const char *method,
                        const char *what, int *on, char **ret_s)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t len = 0;
        const char *s;
        int r;

        r = parse_ssid(ssid_arg, ssid, &len);
        if (r < 0)
                return r;
        /* a network that is not known is "not found" (exit 5), before roamd is asked */
        r = load_networks(bus, l);
        if (r < 0)
                return r;
        const WifiNetwork *n = wifi_link_find(l, ssid, len);
        if (!n || !n->known) {
                log_error("%s knows no network named %s (roam wifi lists them).", l->name,
                          n ? n->name : ssid_arg);
                return WIFI_EXIT_NOT_FOUND;
        }
        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE,
                                           method);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', ssid, len);
        /* SetAutoconnect's b or SetPriority's i */
        if (r >= 0 && on)
                r = sd_bus_message_append(m, streq(method, "SetPriority") ? "i" : "b", *on);
        if (r < 0)
                return log_oom();
        r = sd_bus_call(bus, m, 0, &error, &reply);
        if (r < 0) {
                r = log_call_error(&error, r, what);
                return r == -EACCES ? WIFI_EXIT_REFUSED : r;
        }
        if (ret_s) {
                /* Share's answer holds the key: wiped when the reply is freed */
                (void)sd_bus_message_sensitive(reply);
                r = sd_bus_message_read(reply, "s", &s);
                if (r < 0)
                        return log_error_errno(r, "Failed to read roamd's answer: %m");
                *ret_s = strdup(s);
                if (!*ret_s)
                        return log_oom();
        }
        return 0;
}

static int wifi_share(sd_bus *bus, WifiLink *l, const char *ssid_arg, bool json)
{
        _cleanup_erase_and_free_ char *uri = NULL;
        _cleanup_strv_free_ char **lines = NULL;
        size_t n;
        int r;

        r = call_on_ssid(bus, l, ssid_arg, "Share", "share the network", NULL, &uri);
        if (r != 0)
                return r;
        if (json) {
                _cleanup_(json_object_putp) json_object *doc = json_object_new_object();

                if (!doc || json_add_string(doc, "link", l->name) < 0 ||
                    json_add_string(doc, "ssid", ssid_arg) < 0 ||
                    json_add_string(doc, "uri", uri) < 0)
                        return log_oom();
                return json_print(doc, stdout);
        }
        r = roam_qr_lines(uri, roam_locale_is_utf8(), &lines, &n);
        if (r < 0)
                return log_error_errno(r, "Cannot draw %s as a QR code: %m", ssid_arg);
        for (size_t i = 0; i < n; i++)
                printf("%s\n", lines[i]);
        printf("%s\n", uri);
        return 0;
}

static bool enroll_waiting(const Watch *w)
{
        return w->result || w->need_kind || (w->step && !streq(w->step, "enrolling"));
}

/* roam wifi enroll: this device's DPP: code for a phone to scan (Wi-Fi Easy Connect), then
 * the join of what the phone sends, followed as any join. */
static int wifi_enroll(sd_bus *bus, WifiLink *l, bool json)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *s1 = NULL, *s2 = NULL;
        _cleanup_strv_free_ char **lines = NULL;
        _cleanup_free_ char *uri = NULL;
        const char *u;
        Watch w = {};
        size_t n;
        int r;

        r = watch_link(bus, l->path, &w, &s1, &s2);
        if (r < 0)
                return r;
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE, "Enroll", &error,
                               &reply, "");
        if (r >= 0)
                r = sd_bus_message_read(reply, "us", &w.join_id, &u);
        if (r < 0) {
                r = sd_bus_error_is_set(&error) ? log_call_error(&error, r, "enroll by DPP")
                                                : log_error_errno(r, "Failed to read roamd's "
                                                                     "answer: %m");
                watch_done(&w);
                return r == -EACCES ? WIFI_EXIT_REFUSED : r;
        }
        uri = strdup(u);
        if (!uri) {
                watch_done(&w);
                return log_oom();
        }
        roam_text_mark_inplace(uri); /* roamd read it as a DPP: text; the terminal gets no more */
        if (json) {
                _cleanup_(json_object_putp) json_object *doc = json_object_new_object();

                if (!doc || json_add_string(doc, "link", l->name) < 0 ||
                    json_add_uint(doc, "join", w.join_id) < 0 ||
                    json_add_string(doc, "uri", uri) < 0) {
                        watch_done(&w);
                        return log_oom();
                }
                r = json_print(doc, stdout);
                fflush(stdout);
        } else {
                r = roam_qr_lines(uri, roam_locale_is_utf8(), &lines, &n);
                if (r < 0)
                        log_warning_errno(r, "Cannot draw the code as a QR code: %m");
                for (size_t i = 0; r >= 0 && i < n; i++)
                        printf("%s\n", lines[i]);
                printf("%s\n", uri);
                printf("Scan this code with a phone that is on the network you want %s on "
                       "(Wi-Fi Easy Connect); waiting up to 2 minutes...\n",
                       l->name);
                fflush(stdout);
                r = 0;
        }
        /* the owner's listening ends with the configurator's network or after 2 minutes */
        if (r >= 0)
                r = wait_for(bus, enroll_waiting, &w,
                             clock_now_usec(CLOCK_MONOTONIC) + 130 * USEC_PER_SEC);
        if (r == -ETIMEDOUT) {
                join_cancel(bus, l, w.join_id);
                watch_done(&w);
                log_error("No configurator sent a network within 2 minutes: canceled.");
                return 1; /* as a join that timed out */
        }
        if (r >= 0)
                r = follow_join(bus, l, &w, "the network the configurator sent", NULL, json);
        watch_done(&w);
        return r;
}

static int read_uri(const char *arg, char **ret)
{
        char *buf;

        if (!streq(arg, "-"))
                return (*ret = strdup(arg)) ? 0 : log_oom();
        buf = calloc(1, 4096 + 2);
        if (!buf)
                return log_oom();
        if (!fgets(buf, 4096 + 1, stdin))
                buf[0] = 0;
        buf[strcspn(buf, "\r\n")] = 0;
        if (!*buf) {
                erase_and_free(buf);
                log_error("No URI on standard input.");
                return -EINVAL;
        }
        *ret = buf;
        return 0;
}

/* JoinUri: the URI may hold a passphrase, so the message is wiped when freed. */
static int call_join_uri(sd_bus *bus, const WifiLink *l, const char *uri, bool apply,
                         sd_bus_error *error, sd_bus_message **reply)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, ROAM_BUS_NAME, l->path, ROAM_WIFI_INTERFACE,
                                           "JoinUri");
        if (r >= 0)
                r = sd_bus_message_sensitive(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "sb", uri, apply);
        if (r < 0)
                return log_oom();
        return sd_bus_call(bus, m, 0, error, reply);
}

/* What a URI would join, for --json without --yes (never the passphrase). */
static int print_uri_json(const WifiLink *l, const char *kind, const char *shown,
                          const char *security, int hidden, int has_pass)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();

        if (!doc || json_add_string(doc, "link", l->name) < 0 ||
            json_add_string(doc, "kind", kind) < 0 ||
            (streq(kind, "wifi") && (json_add_string(doc, "ssid", shown) < 0 ||
                                     json_add_string(doc, "security", security) < 0 ||
                                     json_add_bool(doc, "hidden", hidden) < 0 ||
                                     json_add_bool(doc, "has_passphrase", has_pass) < 0)) ||
            json_add_bool(doc, "joined", false) < 0)
                return log_oom();
        return json_print(doc, stdout);
}

static int print_done_json(const WifiLink *l, const char *ssid, const char *action, int value)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();

        if (!doc || json_add_string(doc, "link", l->name) < 0 ||
            json_add_string(doc, "ssid", ssid) < 0 || json_add_string(doc, "action", action) < 0 ||
            (streq(action, "autoconnect") && json_add_bool(doc, "autoconnect", value) < 0) ||
            (streq(action, "priority") && json_add_int(doc, "priority", value) < 0))
                return log_oom();
        return json_print(doc, stdout);
}

static int wifi_join_uri(sd_bus *bus, WifiLink *l, const char *arg, const WifiArgs *a)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL, *reply2 = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *s1 = NULL, *s2 = NULL;
        _cleanup_erase_and_free_ char *uri = NULL;
        _cleanup_free_ char *shown = NULL;
        const char *kind = "", *security = "";
        const void *ssid = NULL;
        size_t len = 0;
        int hidden = 0, has_pass = 0;
        Watch w = {};
        int r;

        r = read_uri(arg, &uri);
        if (r < 0)
                return r;
        r = call_join_uri(bus, l, uri, false, &error, &reply);
        if (r < 0) {
                r = log_call_error(&error, r, "read the URI");
                return r == -EACCES ? WIFI_EXIT_REFUSED : r;
        }
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key;

                r = sd_bus_message_read(reply, "s", &key);
                if (r >= 0 && streq(key, "ssid") &&
                    (r = sd_bus_message_enter_container(reply, 'v', "ay")) > 0) {
                        r = sd_bus_message_read_array(reply, 'y', &ssid, &len);
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply);
                } else if (r >= 0 && streq(key, "kind"))
                        r = sd_bus_message_read(reply, "v", "s", &kind);
                else if (r >= 0 && streq(key, "security"))
                        r = sd_bus_message_read(reply, "v", "s", &security);
                else if (r >= 0 && streq(key, "hidden"))
                        r = sd_bus_message_read(reply, "v", "b", &hidden);
                else if (r >= 0 && streq(key, "has-passphrase"))
                        r = sd_bus_message_read(reply, "v", "b", &has_pass);
                else if (r >= 0)
                        r = sd_bus_message_skip(reply, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(reply);
        }
        if (r < 0 || len > WIFI_SSID_MAX)
                return log_error_errno(r < 0 ? r : EBADMSG, "Failed to read roamd's answer: %m");
        if (streq(kind, "dpp"))
                shown = strdup("the device of this DPP code (Wi-Fi Easy Connect)");
        else if (wifi_ssid_display(ssid, len, &shown) < 0)
                shown = NULL;
        if (!shown)
                return log_oom();
        if (!a->json) {
                if (streq(kind, "dpp"))
                        printf("%s joins %s's network.\n", shown, l->name);
                else
                        printf("%s: %s%s, %s, on %s.\n", shown, wifi_security_words(security),
                               hidden ? ", hidden" : "",
                               has_pass ? "passphrase given" : "no passphrase", l->name);
        }
        if (!a->yes) {
                char line[16];

                if (!isatty(STDIN_FILENO) || streq(arg, "-") || a->json) {
                        if (a->json)
                                return print_uri_json(l, kind, shown, security, hidden, has_pass);
                        printf("Nothing done: add --yes to join.\n");
                        return 0;
                }
                fprintf(stderr, streq(kind, "dpp")
                                    ? "Send it the network and its passphrase? [y/N] "
                                    : "Join? [y/N] ");
                if (!fgets(line, sizeof(line), stdin) || !(line[0] == 'y' || line[0] == 'Y')) {
                        printf("Nothing done.\n");
                        return 0;
                }
        }
        r = watch_link(bus, l->path, &w, &s1, &s2);
        if (r < 0)
                return r;
        r = roam_bus_may_ask(bus);
        if (r >= 0) {
                r = call_join_uri(bus, l, uri, true, &error, &reply2);
                if (r >= 0)
                        r = 0;
                else {
                        r = log_call_error(&error, r, "join");
                        if (r == -EACCES)
                                r = WIFI_EXIT_REFUSED;
                }
        }
        if (r == 0) {
                r = sd_bus_message_enter_container(reply2, 'a', "{sv}");
                while (r >= 0 && (r = sd_bus_message_enter_container(reply2, 'e', "sv")) > 0) {
                        const char *key;

                        r = sd_bus_message_read(reply2, "s", &key);
                        if (r >= 0 && streq(key, "join"))
                                r = sd_bus_message_read(reply2, "v", "u", &w.join_id);
                        else if (r >= 0)
                                r = sd_bus_message_skip(reply2, "v");
                        if (r >= 0)
                                r = sd_bus_message_exit_container(reply2);
                }
                if (r >= 0 && w.join_id == 0)
                        r = -EBADMSG;
                if (r < 0)
                        r = log_error_errno(r, "Failed to read roamd's answer: %m");
                else if (streq(kind, "dpp")) {
                        /* roamd configures the device with the network l is on: the prompt
                         * asks that network's passphrase */
                        char label[64];

                        snprintf(label, sizeof(label), "the network %s is on", l->name);
                        r = follow_join(bus, l, &w, label, NULL, a->json);
                } else
                        r = follow_join(bus, l, &w, shown, NULL, a->json);
        }
        watch_done(&w);
        return r;
}

static bool is_negative_number(const char *s)
{
        return s[0] == '-' && s[1] >= '0' && s[1] <= '9' &&
               strspn(s + 1, "0123456789") == strlen(s + 1);
}

static int parse_args(char **args, WifiArgs *a, char ***ret_argv, char ***ret_words)
{
        enum {
                ARG_JSON = 0x100,
                ARG_LINK,
                ARG_HIDDEN,
                ARG_SECURITY,
                ARG_PASSPHRASE_FILE,
                ARG_EAP,
                ARG_IDENTITY,
                ARG_CA_CERT,
                ARG_DOMAIN,
                ARG_PHASE2,
                ARG_ANONYMOUS_IDENTITY,
                ARG_NO_REMEMBER,
                ARG_NO_AUTOCONNECT,
                ARG_YES,
        };
        static const struct option options[] = {
            {"json", no_argument, NULL, ARG_JSON},
            {"link", required_argument, NULL, ARG_LINK},
            {"hidden", no_argument, NULL, ARG_HIDDEN},
            {"security", required_argument, NULL, ARG_SECURITY},
            {"passphrase-file", required_argument, NULL, ARG_PASSPHRASE_FILE},
            {"eap", required_argument, NULL, ARG_EAP},
            {"identity", required_argument, NULL, ARG_IDENTITY},
            {"ca-cert", required_argument, NULL, ARG_CA_CERT},
            {"domain", required_argument, NULL, ARG_DOMAIN},
            {"phase2", required_argument, NULL, ARG_PHASE2},
            {"anonymous-identity", required_argument, NULL, ARG_ANONYMOUS_IDENTITY},
            {"no-remember", no_argument, NULL, ARG_NO_REMEMBER},
            {"no-autoconnect", no_argument, NULL, ARG_NO_AUTOCONNECT},
            {"yes", no_argument, NULL, ARG_YES},
            {},
        };
        _cleanup_strv_free_ char **argv = NULL;
        size_t n = 0;
        int c;

        while (args[n])
                n++;
        /* getopt wants argv[0] and may reorder: a copy of the pointers; a negative number
         * (roam wifi priority SSID -5) is a word, not options: moved after a "--" at the end,
         * in order (a word before "--" stays before it) */
        argv = calloc(n + 3, sizeof(char *));
        if (!argv)
                return log_oom();
        size_t m = 1, neg = 0;
        bool dashes = false;
        for (size_t i = 0; i < n; i++) {
                dashes = dashes || streq(args[i], "--");
                if (!dashes && is_negative_number(args[i]))
                        neg++;
        }
        if (!(argv[0] = strdup("wifi")))
                return log_oom();
        for (size_t pass = 0; pass < (neg ? 2u : 1u); pass++) {
                dashes = false;
                if (pass == 1 && !(argv[m++] = strdup("--")))
                        return log_oom();
                for (size_t i = 0; i < n; i++) {
                        bool moved = neg && !dashes && is_negative_number(args[i]);

                        dashes = dashes || streq(args[i], "--");
                        if (moved == (pass == 1) && !(argv[m++] = strdup(args[i])))
                                return log_oom();
                }
        }
        n = m - 1;
        opterr = 0;
        optind = 0;
        while ((c = getopt_long((int)n + 1, argv, ":", options, NULL)) >= 0) {
                switch (c) {
                case ARG_JSON:
                        a->json = true;
                        break;
                case ARG_LINK:
                        a->link = optarg;
                        break;
                case ARG_HIDDEN:
                        a->hidden = true;
                        break;
                case ARG_SECURITY:
                        if (!str_in(optarg, (const char *const[]){"open", "owe", "wpa2", "wpa3",
                                                                  "enterprise", NULL}))
                                return roam_usage_error("wifi",
                                                        "--security takes open, owe, "
                                                        "wpa2, wpa3 or enterprise, got "
                                                        "'%s'.",
                                                        optarg);
                        a->security = optarg;
                        break;
                case ARG_PASSPHRASE_FILE:
                        a->passphrase_file = optarg;
                        break;
                case ARG_EAP:
                        if (!str_in(optarg, (const char *const[]){"peap", "ttls", NULL}))
                                return roam_usage_error("wifi",
                                                        "--eap takes peap or ttls, got "
                                                        "'%s'.",
                                                        optarg);
                        a->eap = optarg;
                        break;
                case ARG_IDENTITY:
                        a->identity = optarg;
                        break;
                case ARG_CA_CERT:
                        a->ca_cert = optarg;
                        break;
                case ARG_DOMAIN:
                        a->domain = optarg;
                        break;
                case ARG_PHASE2: {
                        /* the inner methods every owner takes inside PEAP and TTLS */
                        static const char *const inner[] = {"mschapv2", "pap", "gtc", "md5", NULL};
                        size_t i;

                        for (i = 0; optarg[i] && i < sizeof(a->phase2) - 1; i++)
                                a->phase2[i] =
                                    (char)(optarg[i] >= 'A' && optarg[i] <= 'Z' ? optarg[i] + 32
                                                                                : optarg[i]);
                        a->phase2[i] = 0;
                        if (optarg[i] || !str_in(a->phase2, inner))
                                return roam_usage_error("wifi",
                                                        "--phase2 takes MSCHAPV2, PAP, GTC or "
                                                        "MD5, got '%s'.",
                                                        optarg);
                        break;
                }
                case ARG_ANONYMOUS_IDENTITY:
                        a->anonymous_identity = optarg;
                        break;
                case ARG_NO_REMEMBER:
                        a->no_remember = true;
                        break;
                case ARG_NO_AUTOCONNECT:
                        a->no_autoconnect = true;
                        break;
                case ARG_YES:
                        a->yes = true;
                        break;
                case ':':
                        return roam_usage_error("wifi", "option '%s' needs an argument.",
                                                argv[optind - 1]);
                case '?':
                        return roam_usage_error("wifi", "unknown option '%s'.", argv[optind - 1]);
                }
        }
        /* the words left, in order (getopt moved them to the end) */
        *ret_words = argv + optind;
        *ret_argv = TAKE_PTR(argv);
        return 0;
}

static const char *const subcommands[] = {
    "list", "scan", "join", "forget", "autoconnect", "priority", "join-uri", "share", "enroll",
};

/* A priority as the owners take it: NetworkManager -999..999, wpa_supplicant 0..1000000;
 * the owner refuses what it does not take, in words. */
static int parse_priority(const char *s, int32_t *ret)
{
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (!*s || *end || errno || v < -1000000 || v > 1000000)
                return roam_usage_error("wifi",
                                        "'roam wifi priority' needs SSID and a whole number "
                                        "(higher is joined first), got '%s'.",
                                        s);
        *ret = (int32_t)v;
        return 0;
}

int roam_wifi_run(char **args, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_strv_free_ char **argv = NULL;
        _cleanup_(wifi_link_done) WifiLink l = {};
        char **w = NULL;
        const char *verb = "list";
        size_t n = 0;
        bool known = false;
        int32_t prio = 0;
        int r;

        WifiArgs a = {.json = json};
        r = parse_args(args, &a, &argv, &w);
        if (r < 0)
                return r;
        if (w[0]) {
                for (size_t i = 0; i < ELEMENTSOF(subcommands); i++)
                        if (streq(w[0], subcommands[i]))
                                known = true;
                if (known)
                        verb = *w++;
        }
        while (w[n])
                n++;
        if (!streq(verb, "join") &&
            (a.hidden || a.security || a.passphrase_file || a.eap || a.identity || a.ca_cert ||
             a.domain || a.phase2[0] || a.anonymous_identity || a.no_remember || a.no_autoconnect))
                return roam_usage_error("wifi", "--hidden, --security, --passphrase-file, --eap, "
                                                "--identity, --phase2, --anonymous-identity, "
                                                "--ca-cert, --domain, --no-remember and "
                                                "--no-autoconnect go with 'roam wifi join'.");
        if ((a.phase2[0] || a.anonymous_identity) && !a.eap)
                return roam_usage_error("wifi", "--phase2 and --anonymous-identity go with "
                                                "--eap peap|ttls.");
        if (a.yes && !streq(verb, "join-uri"))
                return roam_usage_error("wifi", "--yes goes with 'roam wifi join-uri'.");
        if (streq(verb, "list") || streq(verb, "scan") || streq(verb, "enroll")) {
                /* roam wifi [list|scan|enroll] [LINK] */
                if (n > 1)
                        return roam_usage_error("wifi",
                                                "'roam wifi %s' takes one LINK, got "
                                                "'%s' too.",
                                                verb, w[1]);
                if (n == 1 && !known && !streq(verb, "list"))
                        return roam_usage_error("wifi", "unknown action '%s'.", w[0]);
                if (n == 1) {
                        if (a.link)
                                return roam_usage_error("wifi", "LINK is given twice.");
                        a.link = w[0];
                }
        } else if (streq(verb, "autoconnect")) {
                if (n != 2 || !str_in(w[1], (const char *const[]){"on", "off", NULL}))
                        return roam_usage_error("wifi",
                                                "'roam wifi autoconnect' needs SSID on|off.");
        } else if (streq(verb, "priority")) {
                if (n != 2)
                        return roam_usage_error("wifi", "'roam wifi priority' needs SSID and a "
                                                        "number (higher is joined first).");
                r = parse_priority(w[1], &prio);
                if (r < 0)
                        return r;
        } else if (n != 1)
                return roam_usage_error("wifi", "'roam wifi %s' needs %s.", verb,
                                        streq(verb, "join-uri") ? "one URI (or - for standard "
                                                                  "input)"
                                                                : "one SSID");
        if (!str_in(verb, (const char *const[]){"list", "scan", "join-uri", "enroll", NULL})) {
                uint8_t ssid[WIFI_SSID_MAX];
                size_t len;

                r = parse_ssid(w[0], ssid, &len);
                if (r < 0)
                        return r;
        }
        if (streq(verb, "join") && (a.eap || (a.security && streq(a.security, "enterprise"))) &&
            !a.identity)
                return roam_usage_error("wifi", "an enterprise network (--eap) needs --identity.");
        if (streq(verb, "join") && a.hidden && !a.security)
                return roam_usage_error("wifi", "a hidden network needs --security open|owe|wpa2|"
                                                "wpa3|enterprise: nothing in the air says it.");
        if (streq(verb, "join") && a.eap && !a.security)
                a.security = "enterprise";
        if (streq(verb, "join-uri") && strncmp(w[0], "WIFI:", 5) == 0 && strstr(w[0], ";P:"))
                return roam_usage_error("wifi", "this URI holds a passphrase, which every local "
                                                "user can read on a command line: give it on "
                                                "standard input (roam wifi join-uri -).");
        if (streq(verb, "join") && a.passphrase_file && streq(a.passphrase_file, "-") &&
            isatty(STDIN_FILENO))
                return roam_usage_error("wifi", "--passphrase-file - reads standard input, which "
                                                "is a terminal: leave the option out to be asked.");

        r = roam_bus_connect(&bus);
        if (r >= 0 && !streq(verb, "list"))
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        r = pick_link(bus, a.link, &l);
        if (r < 0)
                return r;
        if (streq(verb, "list"))
                return wifi_list(bus, &l, a.json);
        if (streq(verb, "scan"))
                return wifi_scan(bus, &l, a.json);
        if (streq(verb, "enroll"))
                return wifi_enroll(bus, &l, a.json);
        if (streq(verb, "join"))
                return wifi_join(bus, &l, w[0], &a);
        if (streq(verb, "join-uri"))
                return wifi_join_uri(bus, &l, w[0], &a);
        if (streq(verb, "share"))
                return wifi_share(bus, &l, w[0], a.json);
        if (streq(verb, "forget")) {
                r = call_on_ssid(bus, &l, w[0], "Forget", "forget the network", NULL, NULL);
                if (r == 0 && a.json)
                        return print_done_json(&l, w[0], "forget", false);
                if (r == 0)
                        printf("Forgot %s on %s.\n", w[0], l.name);
                return r;
        }
        if (streq(verb, "priority")) {
                /* each owner's range, said before it is asked (roamd would only say
                 * "Invalid arguments" for wpa_supplicant's) */
                int32_t lo, hi;

                wifi_backend_priority_range(l.backend, &lo, &hi);
                if (wifi_backend_has_priority(l.backend) && (prio < lo || prio > hi))
                        return roam_usage_error("wifi", "%s takes a priority from %d to %d.",
                                                wifi_backend_words(l.backend), lo, hi);
                r = call_on_ssid(bus, &l, w[0], "SetPriority", "change the network's priority",
                                 &prio, NULL);
                if (r == 0 && a.json)
                        return print_done_json(&l, w[0], "priority", prio);
                if (r == 0)
                        printf("%s's priority on %s is %d (higher is joined first).\n", w[0],
                               l.name, prio);
                return r;
        }
        int on = streq(w[1], "on");
        r = call_on_ssid(bus, &l, w[0], "SetAutoconnect", "change the network", &on, NULL);
        if (r == 0 && a.json)
                return print_done_json(&l, w[0], "autoconnect", on);
        if (r == 0)
                printf("%s joins %s %s.\n", l.name, w[0],
                       on ? "by itself when in range" : "only when asked");
        return r;
}
