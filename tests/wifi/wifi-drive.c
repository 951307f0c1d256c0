/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Drives one Wi-Fi backend of roamd (service/features/wifi) against the owner on the bus at
 * $DBUS_SYSTEM_BUS_ADDRESS, for tests/wifi: the real backend code on a real sd-event loop and a
 * real dbus-daemon, the owner a strict double (tests/dbusmock). One operation per run:
 *
 *   wifi-drive nm|iwd IFNAME probe|scan|list|known
 *   wifi-drive nm|iwd IFNAME join SSID [hidden SECURITY] [passphrase-stdin] [forget]
 *              [eap peap|ttls IDENTITY DOMAIN] [autoconnect off]
 *   wifi-drive nm|iwd IFNAME forget|share SSID
 *   wifi-drive nm|iwd IFNAME autoconnect SSID on|off
 *   wifi-drive nm|iwd IFNAME priority SSID N
 *
 * It prints "bus NAME" (its unique name) first, then one line per event: "step STEP",
 * "needs-secret KIND WHY" (the answer is the next stdin line; "cancel" cancels the join
 * instead), "done RESULT WORDS", "network ...", "share ...", "error ERRNO WORDS", "ok". With
 * passphrase-stdin the first stdin line is the join's passphrase (never argv). Exits 0 after
 * the operation's answer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-core.h"
#include "roamd-wifi-backend.h"
#include "roamd-wifi-client-iwd.h"
#include "roamd-wifi-client-nm.h"
#include "roamd-wifi-probe.h"

static Core core;
static WifiBackend *backend;
static WifiOp *op;
static int exit_code;
static char line[512];
static size_t line_len;

static void quit(int code)
{
        exit_code = code;
        sd_event_exit(core.event, code);
}

static void show(const char *what, const char *words)
{
        printf("%s %s\n", what, words ? words : "");
        fflush(stdout);
}

static void on_done(int error, const char *words, void *userdata)
{
        op = NULL;
        if (error < 0)
                printf("error %d %s\n", -error, strempty(words));
        else
                printf("ok\n");
        fflush(stdout);
        quit(error < 0 ? 1 : 0);
}

static void on_list(int error, const char *words, const WifiNetworkList *l, void *userdata)
{
        op = NULL;
        if (error < 0) {
                on_done(error, words, NULL);
                return;
        }
        for (size_t i = 0; i < l->n; i++) {
                const WifiNetwork *n = &l->networks[i];
                char name[WIFI_SSID_MAX * 4 + 1];

                (void)wifi_ssid_to_display(n->ssid, n->ssid_len, name, sizeof(name));
                printf("network ssid=%s security=%s signal=%d in_range=%d known=%d connected=%d "
                       "autoconnect=%d has_priority=%d priority=%d bssids=%u\n",
                       name, wifi_security_to_string(n->security),
                       n->has_signal ? n->signal_dbm : 0, n->in_range, n->known, n->connected,
                       n->autoconnect, n->has_priority, n->priority, n->n_bssids);
        }
        on_done(0, NULL, NULL);
}

static void on_share(int error, const char *words, const WifiShare *s, void *userdata)
{
        char name[WIFI_SSID_MAX * 4 + 1];

        op = NULL;
        if (error < 0) {
                on_done(error, words, NULL);
                return;
        }
        (void)wifi_ssid_to_display(s->ssid, s->ssid_len, name, sizeof(name));
        printf("share ssid=%s security=%s hidden=%d passphrase=%s\n", name,
               wifi_security_to_string(s->security), s->hidden, strempty(s->passphrase));
        on_done(0, NULL, NULL);
}

static void on_probe(int error, bool manages, const char *why, void *userdata)
{
        op = NULL;
        printf("probe error=%d manages=%d why=%s\n", error, manages, strempty(why));
        fflush(stdout);
        quit(error < 0 ? 1 : 0);
}

static bool asked;
static WifiSecretKind asked_kind;

static void on_step(WifiJoinStep step, const char *words, void *userdata)
{
        show("step", wifi_join_step_to_string(step));
}

static void on_needs_secret(WifiSecretKind kind, WifiSecretWhy why, void *userdata)
{
        printf("needs-secret %s %s\n", wifi_secret_kind_to_string(kind),
               wifi_secret_why_to_string(why));
        fflush(stdout);
        asked = true;
        asked_kind = kind;
}

static void on_join_done(WifiJoinResult result, const char *words, void *userdata)
{
        op = NULL;
        printf("done %s %s\n", wifi_join_result_to_string(result), strempty(words));
        fflush(stdout);
        quit(result == WIFI_JOIN_CONNECTED ? 0 : 2);
}

static const WifiJoinReport report = {
    .step = on_step,
    .needs_secret = on_needs_secret,
    .done = on_join_done,
};

static void on_lost(const char *words, void *userdata)
{
        show("lost", words);
}

static void on_networks_changed(void *userdata)
{
}

static void on_scanning(bool scanning, void *userdata)
{
}

static const WifiBackendEvents events = {
    .networks_changed = on_networks_changed,
    .scanning = on_scanning,
    .lost = on_lost,
};

/* One answer line from stdin for the join's last needs_secret. */
static void answer(char *text)
{
        WifiSecrets s = {};
        int r;

        if (!op || !asked) {
                fprintf(stderr, "wifi-drive: nothing asked\n");
                return;
        }
        if (streq(text, "cancel")) {
                backend->ops->cancel(op);
                op = NULL;
                show("canceled", NULL);
                quit(3);
                return;
        }
        asked = false;
        if (asked_kind == WIFI_SECRET_PASSPHRASE) {
                s.passphrase = text;
                s.passphrase_len = strlen(text);
        } else {
                char *sp = strchr(text, ' ');
                if (sp) {
                        *sp = 0;
                        s.identity = text;
                        s.password = sp + 1;
                } else
                        s.password = text;
        }
        r = backend->ops->secret(op, &s);
        explicit_bzero(line, sizeof(line));
        if (r < 0)
                printf("secret-refused %d\n", -r);
        fflush(stdout);
}

static int on_stdin(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        ssize_t n = read(fd, line + line_len, sizeof(line) - 1 - line_len);
        char *nl;

        if (n <= 0) {
                sd_event_source_set_enabled(s, SD_EVENT_OFF);
                return 0;
        }
        line_len += (size_t)n;
        line[line_len] = 0;
        while ((nl = memchr(line, '\n', line_len))) {
                *nl = 0;
                answer(line);
                line_len -= (size_t)(nl + 1 - line);
                memmove(line, nl + 1, line_len);
        }
        return 0;
}

static char *read_stdin_line(void)
{
        char *l = NULL;
        size_t n = 0;
        ssize_t k = getline(&l, &n, stdin);

        if (k <= 0) {
                free(l);
                return NULL;
        }
        if (l[k - 1] == '\n')
                l[k - 1] = 0;
        return l;
}

static int run(int argc, char **argv)
{
        const char *cmd = argv[3];
        int r;

        if (streq(cmd, "scan"))
                return backend->ops->scan(backend, on_done, NULL, &op);
        if (streq(cmd, "list"))
                return backend->ops->list(backend, on_list, NULL, &op);
        if (streq(cmd, "known"))
                return backend->ops->known(backend, on_list, NULL, &op);
        if (argc < 5)
                return -EINVAL;
        const uint8_t *ssid = (const uint8_t *)argv[4];
        size_t len = strlen(argv[4]);
        if (streq(cmd, "forget"))
                return backend->ops->forget(backend, ssid, len, on_done, NULL, &op);
        if (streq(cmd, "share"))
                return backend->ops->share(backend, ssid, len, on_share, NULL, &op);
        if (streq(cmd, "autoconnect") && argc == 6)
                return backend->ops->set_autoconnect(backend, ssid, len, streq(argv[5], "on"),
                                                     on_done, NULL, &op);
        if (streq(cmd, "priority") && argc == 6)
                return backend->ops->set_priority(backend, ssid, len, atoi(argv[5]), on_done, NULL,
                                                  &op);
        if (!streq(cmd, "join"))
                return -EINVAL;

        _cleanup_(wifi_join_request_done) WifiJoinRequest req = {
            .security = _WIFI_SECURITY_INVALID,
            .eap = _WIFI_EAP_INVALID,
            .remember = true,
            .autoconnect = true,
        };
        if (len > WIFI_SSID_MAX)
                return -EINVAL;
        memcpy(req.ssid, ssid, len);
        req.ssid_len = len;
        for (int i = 5; i < argc; i++) {
                if (streq(argv[i], "hidden") && i + 1 < argc) {
                        req.hidden = true;
                        req.security = wifi_security_from_string(argv[++i]);
                } else if (streq(argv[i], "passphrase-stdin")) {
                        /* read once: run() is tried again until the owner's name is known */
                        static char *passphrase;
                        if (!passphrase)
                                passphrase = read_stdin_line();
                        if (!passphrase)
                                return -EINVAL;
                        req.passphrase = strdup(passphrase);
                        if (!req.passphrase)
                                return -ENOMEM;
                        req.passphrase_len = strlen(req.passphrase);
                } else if (streq(argv[i], "forget"))
                        req.remember = false;
                else if (streq(argv[i], "autoconnect") && i + 1 < argc)
                        req.autoconnect = streq(argv[++i], "on");
                else if (streq(argv[i], "eap") && i + 3 < argc) {
                        req.eap = wifi_eap_from_string(argv[++i]);
                        req.identity = strdup(argv[++i]);
                        req.domain = strdup(argv[++i]);
                        req.phase2 = strdup("mschapv2");
                } else
                        return -EINVAL;
        }
        r = backend->ops->join(backend, &req, &report, NULL, &op);
        return r;
}

int main(int argc, char **argv)
{
        WifiBackendNewFn new_fn;
        WifiBackendProbeFn probe_fn;
        const char *unique;
        int r;

        if (argc < 4) {
                fprintf(stderr, "usage: wifi-drive nm|iwd IFNAME COMMAND [ARGS]\n");
                return 64;
        }
        log_set_max_level(LOG_DEBUG);
        /* iwd's profile directory for the iwd double (never the host's /var/lib/iwd) */
        if (getenv("WIFI_DRIVE_IWD_STATE"))
                wifi_iwd_set_state_directory(getenv("WIFI_DRIVE_IWD_STATE"));
        new_fn = streq(argv[1], "nm") ? wifi_nm_new : wifi_iwd_new;
        probe_fn = streq(argv[1], "nm") ? wifi_probe_nm : wifi_probe_iwd;
        r = sd_event_default(&core.event);
        if (r >= 0)
                r = sd_bus_open_system(&core.bus);
        if (r >= 0)
                r = sd_bus_attach_event(core.bus, core.event, 0);
        if (r >= 0)
                r = sd_bus_get_unique_name(core.bus, &unique);
        if (r < 0) {
                fprintf(stderr, "wifi-drive: bus: %s\n", strerror(-r));
                return 1;
        }
        printf("bus %s\n", unique);
        fflush(stdout);
        if (streq(argv[3], "probe")) {
                r = probe_fn(&core, argv[2], on_probe, NULL, &op);
        } else {
                r = new_fn(&core, argv[2], 3, &events, NULL, &backend);
        }
        if (r < 0) {
                printf("error %d %s\n", -r, strerror(-r));
                return 1;
        }
        if (backend) {
                /* the loop runs until the backend's name watch knows the owner (each turn
                 * ends on an event: GetNameOwner's answer), then the command */
                for (int i = 0; i < 50; i++) {
                        r = sd_event_run(core.event, 100 * USEC_PER_MSEC);
                        if (r < 0)
                                break;
                        r = run(argc, argv);
                        if (r != -EHOSTDOWN)
                                break;
                }
                /* answers come on stdin after the command read its passphrase line */
                if (r >= 0)
                        r = sd_event_add_io(core.event, NULL, STDIN_FILENO, EPOLLIN, on_stdin,
                                            NULL);
                if (r < 0) {
                        printf("error %d %s\n", -r, strerror(-r));
                        fflush(stdout);
                        backend = wifi_backend_free(backend);
                        return 1;
                }
        }
        r = sd_event_loop(core.event);
        if (op && backend)
                backend->ops->cancel(op);
        backend = wifi_backend_free(backend);
        sd_bus_flush_close_unref(core.bus);
        sd_event_unref(core.event);
        return exit_code;
}
