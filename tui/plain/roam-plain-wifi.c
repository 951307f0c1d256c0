/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
 * then a join's steps and end as they come, and the passphrase on the next line. An 802.1X
 * network asks its EAP method, user name, anonymous identity, CA file, server domain and
 * password one line each before the join (the Join keys `roam wifi join --eap` sends). */

typedef enum Pending {
        PENDING_NONE,
        PENDING_LIST,    /* print the list once read */
        PENDING_JOIN,    /* join ssid once read */
        PENDING_SCANNED, /* a scan ended: the list once read again */
} Pending;

/* The line asked for now: an 802.1X join's questions in this order, then roamd's */
typedef enum Ask {
        ASK_NONE,
        ASK_METHOD,
        ASK_IDENTITY,
        ASK_ANONYMOUS,
        ASK_CA_FILE,
        ASK_DOMAIN,
        ASK_PASSWORD, /* the last before Join */
        ASK_SECRET,   /* roamd's JoinNeedsSecret */
} Ask;

struct PlainWifi {
        RoamLive *live;
        RoamWifiWatch *watch;
        char *link; /* its name */
        Pending pending;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        char name[4 * WIFI_SSID_MAX + 1];
        uint32_t join_id;
        Ask ask;
        int32_t priority; /* the priority SetPriority was asked for */
        bool enterprise, echo_off;
        struct termios saved_tio;
        /* an 802.1X join's answers so far (the password is never kept) */
        char *eap, *identity, *anonymous, *ca_file, *domain;
};

const char plain_wifi_help[] =
    "  wifi [LINK]    the Wi-Fi networks: signal, security, known\n"
    "  wifi scan      look for networks again\n"
    "  wifi join NAME join a network (its passphrase is asked on the next line; an\n"
    "                 802.1X one its EAP method, user name, CA... one a line)\n"
    "  wifi forget NAME, wifi autoconnect NAME on|off, wifi priority NAME N\n"
    "                 a known network (priority: higher is joined first)\n"
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

static void eap_forget(PlainWifi *pw)
{
        char **fields[] = {&pw->eap, &pw->identity, &pw->anonymous, &pw->ca_file, &pw->domain};

        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                free(*fields[i]);
                *fields[i] = NULL;
        }
}

PlainWifi *plain_wifi_free(PlainWifi *pw)
{
        if (!pw)
                return NULL;
        echo(pw, true);
        eap_forget(pw);
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
                char prio[32] = "";

                if (n->known && n->priority)
                        snprintf(prio, sizeof(prio), ", priority %d", n->priority);
                printf("%s: %s%s%s%s%s%s%s%s%s\n", n->name, words, n->in_range ? " dBm" : "",
                       *sec ? ", " : "", sec, *strempty(n->band) ? ", " : "", strempty(n->band),
                       n->known ? (n->autoconnect ? ", known, joined by itself"
                                                  : ", known, joined when asked")
                                : "",
                       prio, n->connected ? ", joined now" : "");
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
        pw->ask = ASK_SECRET;
        echo(pw, false);
}

/* The next question of an 802.1X join (the password's with the echo off). */
static void ask_eap(PlainWifi *pw, Ask a)
{
        pw->ask = a;
        switch (a) {
        case ASK_METHOD:
                printf("%s is an 802.1X (enterprise) network. EAP method, peap or ttls (empty: "
                       "peap):\n",
                       pw->name);
                break;
        case ASK_IDENTITY:
                puts("User name (an empty line cancels):");
                break;
        case ASK_ANONYMOUS:
                puts("Anonymous identity, the outer name (empty: none):");
                break;
        case ASK_CA_FILE:
                puts("CA file, the server's CA certificate in PEM (empty: the system's bundle):");
                break;
        case ASK_DOMAIN:
                puts("Server domain, the name its certificate must carry (empty: not checked):");
                break;
        case ASK_PASSWORD:
                printf("Password for %s (the next line, not shown; an empty line cancels):\n",
                       pw->name);
                fflush(stdout);
                echo(pw, false);
                return;
        case ASK_NONE:
        case ASK_SECRET:
                return;
        }
        fflush(stdout);
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
        eap_forget(pw);
        if (pw->enterprise && !n->known) {
                ask_eap(pw, ASK_METHOD);
                return;
        }
        r = roam_wifi_watch_join(pw->watch, pw->ssid, pw->ssid_len, false, NULL, NULL, NULL);
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
                else if (streq(ev->a, "SetPriority"))
                        printf("%s's priority is %d (higher is joined first).\n", pw->name,
                               pw->priority);
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
                if (pw->ask == ASK_SECRET) {
                        pw->ask = ASK_NONE;
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
        return pw && pw->ask != ASK_NONE;
}

/* The CA file as roamd takes it: absolute, "~/" the home directory. */
static int ca_file_path(const char *typed, char **ret)
{
        _cleanup_free_ char *buf = NULL;
        const char *home = getenv("HOME");
        char resolved[PATH_MAX];
        struct stat st;

        if (strncmp(typed, "~/", 2) == 0 && home) {
                if (asprintf(&buf, "%s/%s", home, typed + 2) < 0)
                        return -ENOMEM;
        } else if (!(buf = strdup(typed)))
                return -ENOMEM;
        if (!realpath(buf, resolved) || stat(resolved, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EISDIR;
        *ret = strdup(resolved);
        return *ret ? 0 : -ENOMEM;
}

/* One answer to an 802.1X join's questions (not the password); the next question. */
static void eap_answer(PlainWifi *pw, const char *text)
{
        char **dst = NULL;
        int r;

        switch (pw->ask) {
        case ASK_METHOD:
                if (*text && !streq(text, "peap") && !streq(text, "ttls")) {
                        puts("The EAP method is peap or ttls.");
                        ask_eap(pw, ASK_METHOD);
                        return;
                }
                dst = &pw->eap;
                text = *text ? text : "peap";
                break;
        case ASK_IDENTITY:
                if (!*text) {
                        eap_forget(pw);
                        printf("No user name: nothing joined.\n");
                        return;
                }
                dst = &pw->identity;
                break;
        case ASK_ANONYMOUS:
                dst = &pw->anonymous;
                break;
        case ASK_CA_FILE:
                if (*text) {
                        r = ca_file_path(text, &pw->ca_file);
                        if (r < 0) {
                                printf("Cannot use the CA file %s: %s.\n", text,
                                       r == -EISDIR ? "it is no file" : strerror(-r));
                                ask_eap(pw, ASK_CA_FILE);
                                return;
                        }
                }
                break;
        case ASK_DOMAIN:
                dst = &pw->domain;
                break;
        case ASK_NONE:
        case ASK_PASSWORD:
        case ASK_SECRET:
                return;
        }
        if (dst && *text && free_and_strdup(dst, text) < 0) {
                log_oom();
                return;
        }
        ask_eap(pw, pw->ask + 1);
}

void plain_wifi_line(PlainWifi *pw, const char *line)
{
        _cleanup_erase_and_free_ char *secret = strdup(line);
        Ask asked = pw->ask;
        size_t n;
        int r;

        pw->ask = ASK_NONE;
        echo(pw, true);
        if (!secret) {
                log_oom();
                return;
        }
        n = strlen(secret);
        while (n > 0 && (secret[n - 1] == '\r' || secret[n - 1] == '\n'))
                secret[--n] = 0;
        if (asked != ASK_SECRET && asked != ASK_PASSWORD) {
                pw->ask = asked;
                eap_answer(pw, secret);
                return;
        }
        if (n == 0) {
                if (asked == ASK_SECRET)
                        (void)roam_wifi_watch_cancel(pw->watch, pw->join_id);
                eap_forget(pw);
                puts(asked == ASK_SECRET ? "No passphrase: the join is canceled."
                                         : "No password: nothing joined.");
                return;
        }
        if (asked == ASK_PASSWORD) {
                WifiEapJoin eap = {.eap = pw->eap,
                                   .identity = pw->identity,
                                   .anonymous_identity = pw->anonymous,
                                   .ca_file = pw->ca_file,
                                   .domain = pw->domain};

                r = roam_wifi_watch_join(pw->watch, pw->ssid, pw->ssid_len, false, "enterprise",
                                         secret, &eap);
                if (r < 0)
                        printf("Cannot ask roamd to join %s: %s\n", pw->name, strerror(-r));
                else
                        printf("Joining %s on %s...\n", pw->name, pw->link);
                return;
        }
        /* asked again: the user name given with the join */
        r = roam_wifi_watch_secret(pw->watch, pw->join_id, secret,
                                   pw->enterprise ? pw->identity : NULL);
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
        const char *link = NULL, *const actions[] = {"scan",        "join",     "forget",
                                                     "autoconnect", "priority", "enroll"};
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
                                     "NAME, wifi autoconnect NAME on|off, wifi priority NAME N, "
                                     "wifi enroll.");
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
        if (streq(w[0], "priority")) {
                size_t n = 0;
                char *end;
                long v;

                while (w[n])
                        n++;
                errno = 0;
                v = n >= 3 ? strtol(w[n - 1], &end, 10) : 0;
                if (n < 3 || !*w[n - 1] || *end || errno || v < -1000000 || v > 1000000) {
                        puts("Say: wifi priority NAME N (a whole number, higher is joined "
                             "first).");
                        return 1;
                }
                const WifiLink *l = roam_wifi_watch_get(pw->watch);
                int32_t lo, hi;

                wifi_backend_priority_range(l ? l->backend : NULL, &lo, &hi);
                if (l && wifi_backend_has_priority(l->backend) && (v < lo || v > hi)) {
                        printf("%s takes a priority from %d to %d.\n",
                               wifi_backend_words(l->backend), lo, hi);
                        return 1;
                }
                w[n - 1] = NULL;
                r = ssid_from_words(pw, w + 1);
                if (r >= 0) {
                        pw->priority = (int32_t)v;
                        r = roam_wifi_watch_priority(pw->watch, pw->ssid, pw->ssid_len,
                                                     pw->priority);
                }
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
