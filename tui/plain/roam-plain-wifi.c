/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "roam-format.h"
#include "roam-log.h"
#include "roam-text.h"
#include "roam-plain-wifi.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-wifi.h"
#include "roam-words.h"

/* The Wi-Fi screen's lines for a screen reader: the list when asked (once roamd answered),
 * then a join's steps and end as they come, and the passphrase on the next line. */

typedef enum Pending {
        PENDING_NONE,
        PENDING_LIST,    /* print the list once read */
        PENDING_JOIN,    /* join ssid once read */
        PENDING_SCANNED, /* a scan ended: the list once read again */
} Pending;

struct PlainWifi {
        RoamLive *live;
        RoamWifiWatch *watch;
        char *link; /* its name */
        Pending pending;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        char name[4 * WIFI_SSID_MAX + 1];
        uint32_t join_id;
        bool wants_line, enterprise, echo_off;
        struct termios saved_tio;
};

const char plain_wifi_help[] =
    "  wifi [LINK]    the Wi-Fi networks: signal, security, known\n"
    "  wifi scan      look for networks again\n"
    "  wifi join NAME join a network (its passphrase is asked on the next line)\n"
    "  wifi forget NAME, wifi autoconnect NAME on|off   a known network\n"
    "  wifi enroll    this device's Wi-Fi Easy Connect code; joins what a phone sends\n"
    "                 (wifi LINK join NAME: on that link)\n";

int plain_wifi_new(RoamLive *live, PlainWifi **ret)
{
        PlainWifi *pw = calloc(1, sizeof(*pw));

        if (!pw)
                return -ENOMEM;
        pw->live = live;
        *ret = pw;
        return 0;
}

static void echo(PlainWifi *pw, bool on)
{
        struct termios t;

        if (!on) {
                if (pw->echo_off || !isatty(STDIN_FILENO) ||
                    tcgetattr(STDIN_FILENO, &pw->saved_tio) < 0)
                        return;
                t = pw->saved_tio;
                t.c_lflag &= ~(tcflag_t)ECHO;
                /* TCSAFLUSH: what was typed before the question is not its answer */
                pw->echo_off = tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0;
        } else if (pw->echo_off) {
                (void)tcsetattr(STDIN_FILENO, TCSANOW, &pw->saved_tio);
                pw->echo_off = false;
        }
}

PlainWifi *plain_wifi_free(PlainWifi *pw)
{
        if (!pw)
                return NULL;
        echo(pw, true);
        roam_wifi_watch_free(pw->watch);
        free(pw->link);
        free(pw);
        return NULL;
}

static void print_list(PlainWifi *pw)
{
        const WifiLink *l = roam_wifi_watch_get(pw->watch);
        const char *err = roam_wifi_watch_error(pw->watch);
        char age[32] = "";

        if (err) {
                printf("Wi-Fi on %s: %s\n", pw->link, err);
                return;
        }
        if (l->last_scan)
                roam_format_age(l->last_scan, roam_now(), age, sizeof(age), NULL);
        if (wifi_backend_words(l->backend)) {
                printf("Wi-Fi on %s through %s, %s%s:\n", pw->link, wifi_backend_words(l->backend),
                       l->last_scan ? "scanned " : "not scanned yet", age);
        } else {
                printf("Wi-Fi on %s: %s\n", pw->link, strempty(l->backend_why));
                return;
        }
        if (l->radio && !streq(l->radio, "on")) {
                printf("Wi-Fi is off (rfkill: %s).\n", l->radio);
                return;
        }
        if (l->n_networks == 0)
                puts("No networks seen (wifi scan looks again).");
        for (size_t i = 0; i < l->n_networks; i++) {
                const WifiNetwork *n = &l->networks[i];
                const char *sec = wifi_security_words(n->security);
                char words[48];

                wifi_signal_words(n->signal, n->in_range, words, sizeof(words));
                printf("%s: %s%s%s%s%s%s%s%s\n", n->name, words, n->in_range ? " dBm" : "",
                       *sec ? ", " : "", sec, *strempty(n->band) ? ", " : "", strempty(n->band),
                       n->known ? (n->autoconnect ? ", known, joined by itself"
                                                  : ", known, joined when asked")
                                : "",
                       n->connected ? ", joined now" : "");
        }
}

static void ask_secret(PlainWifi *pw, const char *why)
{
        if (streq_ptr(why, "wrong-key"))
                printf("%s refused this %s. Check it (it is case-sensitive) and try again.\n",
                       pw->name, pw->enterprise ? "user name or password" : "passphrase");
        printf("%s for %s (the next line, not shown; an empty line cancels):\n",
               pw->enterprise ? "Password" : "Passphrase", pw->name);
        fflush(stdout);
        pw->wants_line = true;
        echo(pw, false);
}

static void start_join(PlainWifi *pw)
{
        const WifiLink *l = roam_wifi_watch_get(pw->watch);
        const WifiNetwork *n = wifi_link_find(l, pw->ssid, pw->ssid_len);
        int r;

        if (!n) {
                printf("No network named %s here (wifi lists them).\n", pw->name);
                return;
        }
        if (n->connected) {
                printf("%s is joined already.\n", pw->name);
                return;
        }
        pw->enterprise = streq_ptr(n->security, "enterprise");
        if (pw->enterprise && !n->known) {
                /* a user name is typed with the network: not here yet */
                printf("%s is an enterprise network: join it with roam wifi join %s --eap peap "
                       "--identity USER.\n",
                       pw->name, pw->name);
                return;
        }
        r = roam_wifi_watch_join(pw->watch, pw->ssid, pw->ssid_len, false, NULL, NULL, NULL, NULL);
        if (r < 0)
                printf("Cannot ask roamd to join %s: %s\n", pw->name, strerror(-r));
        else
                printf("Joining %s on %s...\n", pw->name, pw->link);
}

static void on_event(RoamWifiWatch *w, const WifiEvent *ev, void *userdata)
{
        PlainWifi *pw = userdata;

        switch (ev->type) {
        case WIFI_EVENT_CHANGED:
                if (!roam_wifi_watch_loaded(w))
                        break;
                if (pw->pending == PENDING_SCANNED)
                        printf("Scan on %s done.\n", pw->link);
                if (pw->pending == PENDING_LIST || pw->pending == PENDING_SCANNED)
                        print_list(pw);
                else if (pw->pending == PENDING_JOIN)
                        start_join(pw);
                pw->pending = PENDING_NONE;
                break;
        case WIFI_EVENT_REPLIED:
                if (ev->error)
                        printf("roamd refused: %s\n",
                               ev->error->message ? ev->error->message : ev->error->name);
                else if (streq(ev->a, "Join"))
                        pw->join_id = ev->id;
                else if (streq(ev->a, "Enroll")) {
                        _cleanup_free_ char *uri = strdup(strempty(ev->b));

                        pw->join_id = ev->id;
                        snprintf(pw->name, sizeof(pw->name), "the network the phone sent");
                        if (uri)
                                roam_text_mark_inplace(uri);
                        printf("Wi-Fi Easy Connect code of %s (type or show it to a phone that is "
                               "on the network; waiting up to 2 minutes): %s\n",
                               pw->link, strempty(uri));
                } else if (streq(ev->a, "Scan"))
                        /* said with the list, once it is read again */
                        pw->pending = PENDING_SCANNED;
                else if (streq(ev->a, "Forget"))
                        printf("Forgot %s.\n", pw->name);
                else if (streq(ev->a, "SetAutoconnect"))
                        printf("Changed how %s is joined.\n", pw->name);
                break;
        case WIFI_EVENT_JOIN_STEP:
                if (ev->id == pw->join_id && streq(ev->a, "enrolling"))
                        printf("Waiting: %s...\n", ev->b);
                else if (ev->id == pw->join_id)
                        printf("Joining %s: %s...\n", pw->name, ev->b);
                break;
        case WIFI_EVENT_NEEDS_SECRET:
                if (ev->id == pw->join_id) {
                        pw->enterprise = streq(ev->a, "identity+password");
                        ask_secret(pw, ev->b);
                }
                break;
        case WIFI_EVENT_JOIN_DONE:
                if (ev->id != pw->join_id)
                        break;
                pw->join_id = 0;
                if (pw->wants_line) {
                        pw->wants_line = false;
                        echo(pw, true);
                }
                /* the link's verdict follows as its own line, as every link change */
                printf("%s\n", *strempty(ev->b) ? ev->b : ev->a);
                break;
        case _WIFI_EVENT_MAX:
        case _WIFI_EVENT_INVALID:
                break;
        }
        fflush(stdout);
}

bool plain_wifi_wants_line(PlainWifi *pw)
{
        return pw && pw->wants_line;
}

void plain_wifi_line(PlainWifi *pw, const char *line)
{
        _cleanup_erase_and_free_ char *secret = strdup(line);
        size_t n;
        int r;

        pw->wants_line = false;
        echo(pw, true);
        if (!secret) {
                log_oom();
                return;
        }
        n = strlen(secret);
        while (n > 0 && (secret[n - 1] == '\r' || secret[n - 1] == '\n'))
                secret[--n] = 0;
        if (n == 0) {
                (void)roam_wifi_watch_cancel(pw->watch, pw->join_id);
                puts("No passphrase: the join is canceled.");
                return;
        }
        r = roam_wifi_watch_secret(pw->watch, pw->join_id, secret, NULL);
        if (r < 0)
                printf("Cannot answer roamd: %s\n", strerror(-r));
}

/* The Wi-Fi link named, or the only one; its watch (new when it is another link). */
static int pick(PlainWifi *pw, const char *name)
{
        const RoamModel *m = roam_live_get_model(pw->live);
        const RoamLink *found = NULL;
        unsigned n = 0;

        for (size_t i = 0; i < m->n_links; i++) {
                const RoamLink *l = m->links[i];

                if (!streq_ptr(l->bearer, "wifi"))
                        continue;
                n++;
                if (name ? streq(l->name, name) : true)
                        found = l;
        }
        if (!found || (!name && n > 1)) {
                if (name)
                        printf("%s is no Wi-Fi link.\n", name);
                else
                        puts(n ? "Several Wi-Fi links: say which (wifi LINK ...)."
                               : "roamd has no Wi-Fi link.");
                return -ENOENT;
        }
        if (pw->watch && streq(roam_wifi_watch_path(pw->watch), found->path))
                return 0;
        pw->watch = roam_wifi_watch_free(pw->watch);
        if (free_and_strdup(&pw->link, found->name) < 0)
                return -ENOMEM;
        return roam_wifi_watch_new(roam_live_get_bus(pw->live), found->path, on_event, pw,
                                   &pw->watch);
}

static int ssid_from_words(PlainWifi *pw, char **words)
{
        char buf[4 * WIFI_SSID_MAX + 8] = "";
        _cleanup_free_ char *shown = NULL;
        size_t n;

        /* NAME may have spaces: the words joined by one */
        for (char **w = words; *w; w++)
                snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s",
                         w == words ? "" : " ", *w);
        n = strlen(buf);
        if (n == 0 || n > WIFI_SSID_MAX) {
                printf("A network name has 1 to %d bytes.\n", WIFI_SSID_MAX);
                return -EINVAL;
        }
        memcpy(pw->ssid, buf, n);
        pw->ssid_len = n;
        if (wifi_ssid_display(pw->ssid, n, &shown) < 0)
                return -ENOMEM;
        snprintf(pw->name, sizeof(pw->name), "%s", shown);
        return 0;
}

int plain_wifi_command(PlainWifi *pw, char **words)
{
        const char *link = NULL, *const actions[] = {"scan", "join", "forget", "autoconnect",
                                                     "enroll"};
        char **w = words + 1;
        bool known = false;
        int r;

        if (!pw || !streq(words[0], "wifi"))
                return 0;
        if (w[0]) {
                for (size_t i = 0; i < ELEMENTSOF(actions); i++)
                        known = known || streq(w[0], actions[i]);
                if (!known) {
                        link = *w++;
                        for (size_t i = 0; w[0] && i < ELEMENTSOF(actions); i++)
                                known = known || streq(w[0], actions[i]);
                        if (w[0] && !known) {
                                puts("Say: wifi [LINK], wifi scan, wifi join NAME, wifi forget "
                                     "NAME, wifi autoconnect NAME on|off, wifi enroll.");
                                return 1;
                        }
                }
        }
        r = pick(pw, link);
        if (r < 0)
                return r == -ENOMEM ? log_oom() : 1;
        if (!w[0]) {
                pw->pending = PENDING_LIST;
                if (roam_wifi_watch_loaded(pw->watch)) {
                        print_list(pw);
                        pw->pending = PENDING_NONE;
                }
                return 1;
        }
        if (streq(w[0], "scan")) {
                r = roam_wifi_watch_scan(pw->watch);
                if (r < 0)
                        printf("Cannot ask roamd to scan: %s\n", strerror(-r));
                else
                        printf("Scanning on %s...\n", pw->link);
                return 1;
        }
        if (streq(w[0], "enroll")) {
                if (pw->join_id) {
                        puts("A join runs already.");
                        return 1;
                }
                r = roam_wifi_watch_enroll(pw->watch);
                if (r < 0)
                        printf("Cannot ask roamd: %s\n", strerror(-r));
                else
                        printf("Asking roamd for the Wi-Fi Easy Connect code of %s...\n", pw->link);
                return 1;
        }
        if (streq(w[0], "autoconnect")) {
                size_t n = 0;
                bool on;

                while (w[n])
                        n++;
                if (n < 3 || (!streq(w[n - 1], "on") && !streq(w[n - 1], "off"))) {
                        puts("Say: wifi autoconnect NAME on|off.");
                        return 1;
                }
                on = streq(w[n - 1], "on");
                w[n - 1] = NULL;
                r = ssid_from_words(pw, w + 1);
                if (r >= 0)
                        r = roam_wifi_watch_autoconnect(pw->watch, pw->ssid, pw->ssid_len, on);
                if (r < 0 && r != -EINVAL)
                        printf("Cannot ask roamd: %s\n", strerror(-r));
                return 1;
        }
        if (!w[1]) {
                printf("Say: wifi %s NAME.\n", w[0]);
                return 1;
        }
        r = ssid_from_words(pw, w + 1);
        if (r < 0)
                return 1;
        if (streq(w[0], "forget")) {
                r = roam_wifi_watch_forget(pw->watch, pw->ssid, pw->ssid_len);
                if (r < 0)
                        printf("Cannot ask roamd: %s\n", strerror(-r));
                return 1;
        }
        if (pw->join_id) {
                puts("A join runs already.");
                return 1;
        }
        if (roam_wifi_watch_loaded(pw->watch))
                start_join(pw);
        else
                pw->pending = PENDING_JOIN;
        return 1;
}
