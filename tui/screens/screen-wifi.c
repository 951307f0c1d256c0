/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-format.h"
#include "roam-screens.h"
#include "roam-util.h"
#include "roam-verdict.h"
#include "roam-wifi.h"

/* Wi-Fi (w on a Wi-Fi link's screen; research wifi-join.md §4.5): the networks of the selected
 * link as its owner (NetworkManager, iwd, wpa_supplicant) sees them, from org.roam1.WiFi
 * (RoamWifiWatch, asynchronous): signal as bars, words and dBm, security in words, known
 * networks also out of range, and a row to join a hidden network. Enter joins: a secured
 * network asks for its passphrase in a dialog (masked; keys typed before it opened are
 * dropped), a refused one is said in words and asked again in place (JoinSecret), then the
 * link's verdict; behind a captive portal the portal screen follows. An 802.1X network asks
 * the EAP method, user name, anonymous identity, password, CA file and server domain (the
 * Join keys `roam wifi join --eap` sends), a hidden one too (not through iwd, which joins a
 * hidden 802.1X network only by autoconnect); asked again, only the user name and password.
 * Where the owner ends the join on a refusal (wpa_supplicant: 802.1X, WPA3), a hidden
 * network's dialog comes back with what was typed but the secret, asked again in place.
 * f forgets, a toggles autoconnect, + and - raise and lower a known network's priority (not
 * through iwd, which has none), r scans. */

#define FIELD_MAX 255

typedef enum Dialog {
        DIALOG_NONE,
        DIALOG_PASSPHRASE, /* a known SSID: the passphrase */
        DIALOG_HIDDEN,     /* name, security, passphrase */
        DIALOG_ENTERPRISE, /* EAP method, user name, anonymous identity, password, CA, domain */
} Dialog;

static const char *const hidden_security[] = {"wpa2", "wpa3", "open", "enterprise"};
static const char *const eap_methods[] = {"peap", "ttls"};

typedef struct WifiData {
        Tui *tui;
        RoamWifiWatch *watch;
        int selected, scroll;
        /* the selected network: the selection follows it when the list is sorted again */
        uint8_t sel_ssid[WIFI_SSID_MAX];
        size_t sel_len;
        /* the dialog: its fields (the secret wiped whenever it closes) */
        Dialog dialog;
        int field;
        bool dialog_by_itself; /* opened by roamd's JoinNeedsSecret: a grace period first */
        unsigned asks;         /* JoinNeedsSecret seen: each its own grace */
        char ssid_text[FIELD_MAX + 1];
        unsigned security;
        char secret[FIELD_MAX + 1];
        char identity[FIELD_MAX + 1];
        unsigned eap; /* eap_methods[] */
        char anonymous[FIELD_MAX + 1];
        char ca_file[FIELD_MAX + 1];
        char domain[FIELD_MAX + 1];
        char note[256];
        /* the join: what was asked, its id once roamd answered, its step and its end */
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        char name[4 * WIFI_SSID_MAX + 1];
        char join_security[16];
        bool join_hidden;
        uint32_t join_id;
        bool waiting_secret;
        char progress[256];
        char verdict[256];
        ThemeRole verdict_role;
        /* joined: roamd's JoinDone came once the link's verdict after the join was decided */
        bool awaiting_verdict;
        int32_t priority_asked; /* the priority SetPriority was asked for */
} WifiData;

static void dialog_close(WifiData *d)
{
        explicit_bzero(d->secret, sizeof(d->secret));
        d->dialog = DIALOG_NONE;
        d->dialog_by_itself = false;
        d->field = 0;
        d->note[0] = 0;
}

static void on_event(RoamWifiWatch *w, const WifiEvent *ev, void *userdata);

/* Follows the selected link when it is a Wi-Fi link. */
static void follow(Tui *t, WifiData *d)
{
        const char *path = tui_selected_link(t);
        sd_bus *bus = tui_bus(t);

        if (d->watch && path && streq(roam_wifi_watch_path(d->watch), path))
                return;
        d->watch = roam_wifi_watch_free(d->watch);
        d->selected = 0;
        if (bus && path)
                (void)roam_wifi_watch_new(bus, path, on_event, d, &d->watch);
}

static const WifiLink *wifi_link(WifiData *d)
{
        return roam_wifi_watch_loaded(d->watch) ? roam_wifi_watch_get(d->watch) : NULL;
}

static const RoamLink *model_link(Tui *t)
{
        const char *path = tui_selected_link(t);

        return path ? roam_model_find_link(tui_model(t), path) : NULL;
}

/* A dialog that came by itself (roamd asked) ignores keys for a moment after it shows: they
 * were typed for the list. */
static bool dialog_settling(Tui *t, WifiData *d)
{
        char id[48];

        if (d->dialog == DIALOG_NONE || !d->dialog_by_itself)
                return false;
        snprintf(id, sizeof(id), "wifi:%u:%u", d->join_id, d->asks);
        return tui_question_settling(t, id);
}

static void open_dialog(Tui *t, WifiData *d, Dialog which, bool by_itself)
{
        explicit_bzero(d->secret, sizeof(d->secret));
        d->dialog = which;
        d->field = 0;
        d->dialog_by_itself = by_itself;
        d->asks += by_itself;
        /* keys typed for the list (j, Enter) must not land in the passphrase */
        flushinp();
}

static void ask_hidden_again(Tui *t, WifiData *d, WifiJoinResult res);

static void join_says(Tui *t, WifiData *d, const WifiEvent *ev)
{
        WifiJoinResult res = wifi_join_result_from_string(ev->a);
        bool joined;

        d->progress[0] = 0;
        d->waiting_secret = false;
        d->join_id = 0;
        snprintf(d->verdict, sizeof(d->verdict), "%s", *strempty(ev->b) ? ev->b : ev->a);
        joined = res == WIFI_JOIN_CONNECTED || res == WIFI_JOIN_PORTAL;
        d->verdict_role = joined ? THEME_OK : THEME_ERROR;
        d->awaiting_verdict = joined;
        if (d->dialog != DIALOG_NONE && d->dialog != DIALOG_HIDDEN)
                dialog_close(d);
        tui_message(t, d->verdict_role, "%s", d->verdict);
        ask_hidden_again(t, d, res);
}

/* Joined: the link's verdict in words (roamd ends a join once the verdict after it is
 * decided; the model may still say checking for a moment); behind a captive portal, the
 * portal screen. */
static int verdict_arrived(Tui *t, WifiData *d)
{
        const char *path = roam_wifi_watch_path(d->watch);
        const RoamLink *l = path ? roam_model_find_link(tui_model(t), path) : NULL;

        if (!d->awaiting_verdict || !l || !l->connectivity || !*l->connectivity ||
            streq(l->connectivity, "checking"))
                return REACTION_NONE;
        d->awaiting_verdict = false;
        if (streq_ptr(l->connectivity, "portal")) {
                snprintf(d->verdict, sizeof(d->verdict),
                         "Joined %s: behind a captive portal, log in.", d->name);
                d->verdict_role = THEME_PORTAL;
                tui_select_link(t, path);
                (void)tui_show(t, &portal_screen_vtable);
        } else {
                snprintf(d->verdict, sizeof(d->verdict), "Joined %s. %s: %s.", d->name, l->name,
                         roam_verdict_word(l->connectivity));
                d->verdict_role = tui_verdict_role(l->connectivity);
        }
        tui_message(t, d->verdict_role, "%s", d->verdict);
        return REACTION_REDRAW;
}

static int wifi_model_changed(Tui *t, Screen *s, const RoamLiveEvent *ev)
{
        (void)verdict_arrived(t, s->data);
        return REACTION_REDRAW;
}

static void on_event(RoamWifiWatch *w, const WifiEvent *ev, void *userdata)
{
        WifiData *d = userdata;
        Tui *t = d->tui;
        char why[256];

        switch (ev->type) {
        case WIFI_EVENT_CHANGED: {
                const WifiLink *l = roam_wifi_watch_get(w);

                for (size_t i = 0; l && d->sel_len && i < l->n_networks; i++)
                        if (l->networks[i].ssid_len == d->sel_len &&
                            memcmp(l->networks[i].ssid, d->sel_ssid, d->sel_len) == 0)
                                d->selected = (int)i;
                break;
        }
        case WIFI_EVENT_REPLIED:
                if (ev->error) {
                        if (streq(ev->a, "Join")) {
                                d->progress[0] = 0;
                                d->join_id = 0;
                        }
                        tui_message(t, THEME_ERROR, "roamd refused: %s",
                                    ev->error->message ? ev->error->message : ev->error->name);
                } else if (streq(ev->a, "Join"))
                        d->join_id = ev->id;
                else if (streq(ev->a, "Forget"))
                        tui_message(t, THEME_OK, "Forgot %s.", d->name);
                else if (streq(ev->a, "SetAutoconnect"))
                        tui_message(t, THEME_OK, "Changed how %s is joined.", d->name);
                else if (streq(ev->a, "SetPriority"))
                        tui_message(t, THEME_OK, "%s's priority is %d (higher is joined first).",
                                    d->name, d->priority_asked);
                else if (streq(ev->a, "JoinCancel"))
                        tui_message(t, THEME_NORMAL, "Join canceled.");
                break;
        case WIFI_EVENT_JOIN_STEP:
                if (ev->id == d->join_id)
                        snprintf(d->progress, sizeof(d->progress), "Joining %s: %s%s", d->name,
                                 ev->b, tui_glyph_ellipsis(t));
                break;
        case WIFI_EVENT_NEEDS_SECRET:
                if (ev->id != d->join_id)
                        break;
                d->waiting_secret = true;
                open_dialog(
                    t, d, streq(ev->a, "identity+password") ? DIALOG_ENTERPRISE : DIALOG_PASSPHRASE,
                    true);
                /* the user name typed with the join stays: the password is what to retype */
                if (d->dialog == DIALOG_ENTERPRISE && *d->identity)
                        d->field = 1;
                if (streq(ev->b, "wrong-key"))
                        snprintf(d->note, sizeof(d->note),
                                 "%s refused this %s. Check it (it is case-sensitive) and try "
                                 "again.",
                                 d->name,
                                 d->dialog == DIALOG_ENTERPRISE ? "user name or password"
                                                                : "passphrase");
                else if (streq(ev->b, "key-format"))
                        snprintf(d->note, sizeof(d->note),
                                 "A passphrase has 8 to 63 characters (or 64 hex digits).");
                else
                        snprintf(d->note, sizeof(d->note), "%s needs its %s.", d->name,
                                 d->dialog == DIALOG_ENTERPRISE ? "user name and password"
                                                                : "passphrase");
                snprintf(why, sizeof(why), "%s", d->note);
                tui_message(t, THEME_WARNING, "%s", why);
                break;
        case WIFI_EVENT_JOIN_DONE:
                if (ev->id == d->join_id) {
                        join_says(t, d, ev);
                        (void)verdict_arrived(t, d);
                }
                break;
        case _WIFI_EVENT_MAX:
        case _WIFI_EVENT_INVALID:
                break;
        }
        tui_request_redraw(t);
}

static int wifi_enter(Tui *t, Screen *s)
{
        WifiData *d = s->data;

        d->tui = t;
        follow(t, d);
        return 0;
}

static void wifi_done(Tui *t, Screen *s)
{
        WifiData *d = s->data;

        if (!d)
                return;
        dialog_close(d);
        d->watch = roam_wifi_watch_free(d->watch);
}

static int wifi_roamd_gone(Tui *t, Screen *s)
{
        WifiData *d = s->data;

        dialog_close(d);
        d->watch = roam_wifi_watch_free(d->watch);
        d->join_id = 0;
        d->progress[0] = 0;
        return tui_current_screen(t) == &wifi_screen_vtable ? REACTION_BACK : REACTION_NONE;
}

/* The columns of the table at 80 and more: mark, name, signal, security, band, known. */
#define COL_MARK     2
#define COL_NAME     16
#define COL_SIGNAL   18
#define COL_SECURITY 20
#define COL_BAND     7

static int add_network(Tui *t, TuiDoc *doc, const WifiNetwork *n, int item)
{
        bool utf8 = tui_utf8(t), wide = tui_columns(t) >= 72;
        char bars[32], words[48], signal[96], known[32] = "";
        int r;

        wifi_signal_bars(n->in_range ? n->signal : 0, utf8, bars, sizeof(bars));
        wifi_signal_words(n->signal, n->in_range, words, sizeof(words));
        if (n->in_range)
                snprintf(signal, sizeof(signal), "%s %s", bars, words);
        else
                snprintf(signal, sizeof(signal), "%s", words);
        if (n->known && n->priority)
                snprintf(known, sizeof(known), "%s p%d", n->autoconnect ? "auto" : "manual",
                         n->priority);
        else if (n->known)
                snprintf(known, sizeof(known), "%s", n->autoconnect ? "auto" : "manual");
        r = tui_doc_line(doc, item, COL_MARK + 2);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_OK, COL_MARK,
                                 n->connected ? (tui_utf8(t) ? "\u25cf" : "*") : "");
        if (!wide) {
                /* two lines: the name and the signal, then security and known */
                if (r >= 0)
                        r = tui_doc_spanf(doc, THEME_NORMAL, 0, "%s  %s", n->name, signal);
                if (r >= 0)
                        r = tui_doc_line(doc, item, COL_MARK + 2);
                if (r >= 0)
                        r = tui_doc_spanf(
                            doc, THEME_MUTED, 0, "  %s%s%s%s", wifi_security_words(n->security),
                            n->connected ? ", joined" : "", *known ? ", " : "", known);
                return r;
        }
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, COL_NAME + 1, n->name);
        if (r >= 0)
                r = tui_doc_span(doc, n->in_range ? THEME_NORMAL : THEME_MUTED, COL_SIGNAL + 1,
                                 signal);
        if (r >= 0)
                r = tui_doc_span(doc,
                                 streq_ptr(n->security, "open") || streq_ptr(n->security, "wep")
                                     ? THEME_WARNING
                                     : THEME_NORMAL,
                                 COL_SECURITY + 1, wifi_security_words(n->security));
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, COL_BAND + 1, strempty(n->band));
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, 0, known);
        return r;
}

static int build(Tui *t, WifiData *d, TuiDoc *doc)
{
        const RoamLink *ml = model_link(t);
        const WifiLink *l = wifi_link(d);
        char age[32];
        uint64_t next;
        int r;

        r = tui_doc_line(doc, -1, 2);
        if (r < 0)
                return r;
        if (!l) {
                const char *err = roam_wifi_watch_error(d->watch);

                return tui_doc_spanf(doc, THEME_MUTED, 0, "%s",
                                     err         ? err
                                     : !d->watch ? "roamd is not there."
                                     : roam_wifi_watch_loaded(d->watch)
                                         ? ""
                                         : "Reading the networks...");
        }
        if (l->last_scan) {
                roam_format_age(l->last_scan, roam_now(), age, sizeof(age), &next);
                tui_refresh_in(t, next);
        }
        r = tui_doc_spanf(doc, THEME_TITLE, 0, "Wi-Fi on %s%s%s %s %s%s", ml ? ml->name : "",
                          wifi_backend_words(l->backend) ? " through " : "",
                          strempty(wifi_backend_words(l->backend)), tui_glyph_dot(t),
                          l->scanning    ? "scanning"
                          : l->last_scan ? "scanned "
                                         : "not scanned yet",
                          !l->scanning && l->last_scan ? age : "");
        if (r < 0)
                return r;
        if (!wifi_backend_words(l->backend)) {
                r = tui_doc_line(doc, -1, 2);
                return r < 0 ? r : tui_doc_span(doc, THEME_WARNING, 0, strempty(l->backend_why));
        }
        if (l->radio && !streq(l->radio, "on")) {
                r = tui_doc_line(doc, -1, 2);
                return r < 0 ? r
                             : tui_doc_spanf(doc, THEME_WARNING, 0, "Wi-Fi is off (rfkill: %s).",
                                             l->radio);
        }
        r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && tui_columns(t) >= 72) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_MARK, "");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_NAME + 1, "Network");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_SIGNAL + 1, "Signal");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_SECURITY + 1, "Security");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, COL_BAND + 1, "Band");
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_TITLE, 0, "Known");
        }
        if (r >= 0 && l->n_networks == 0) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_MUTED, 0,
                                         l->scanning ? "Looking for networks..."
                                                     : "No networks seen (r looks again).");
        }
        for (size_t i = 0; i < l->n_networks && r >= 0; i++)
                r = add_network(t, doc, &l->networks[i], (int)i);
        if (r >= 0)
                r = tui_doc_line(doc, (int)l->n_networks, COL_MARK + 2);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_NORMAL, COL_MARK, "+");
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_NORMAL, 0, "Join a hidden network%s",
                                  tui_glyph_ellipsis(t));
        if (r >= 0 && (*d->progress || *d->verdict)) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = *d->progress ? tui_doc_span(doc, THEME_STATUS, 0, d->progress)
                                         : tui_doc_span(doc, d->verdict_role, 0, d->verdict);
        }
        return r;
}

/* The enterprise dialog of a new join asks everything; asked again by roamd (a refused
 * password, or a known network without one) only the user name and password. */
static bool enterprise_full(const WifiData *d)
{
        return d->dialog == DIALOG_ENTERPRISE && !d->waiting_secret;
}

static bool hidden_enterprise(const WifiData *d)
{
        return d->dialog == DIALOG_HIDDEN && streq(hidden_security[d->security], "enterprise");
}

/* iwd joins a hidden 802.1X network only by autoconnect, from a provisioning file, and roamd
 * does not offer that join (docs/wifi.md): the hidden dialog says so instead of asking. */
static bool hidden_enterprise_by_iwd(WifiData *d)
{
        const WifiLink *l = wifi_link(d);

        return hidden_enterprise(d) && l && streq_ptr(l->backend, "iwd");
}

/* All the EAP fields are asked: a new 802.1X join, visible or hidden. They start at
 * eap_first(): after the hidden dialog's name and security. */
static bool eap_full(WifiData *d)
{
        return enterprise_full(d) || (hidden_enterprise(d) && !hidden_enterprise_by_iwd(d));
}

static int eap_first(const WifiData *d)
{
        return d->dialog == DIALOG_HIDDEN ? 2 : 0;
}

/* A hidden network that refused the key, where the owner ended the join on it (a bare
 * wpa_supplicant on an EAP failure, or on WPA3's wrong key): asked again in place, as the
 * owners that keep the join ask. The hidden dialog comes back with what was typed but the
 * secret, the refusal its note, the secret's field focused; typed-ahead keys wait out its
 * grace period. */
static void ask_hidden_again(Tui *t, WifiData *d, WifiJoinResult res)
{
        bool enterprise;

        if (!d->join_hidden || d->dialog != DIALOG_NONE ||
            (res != WIFI_JOIN_WRONG_KEY && res != WIFI_JOIN_AUTH_FAILED &&
             res != WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE))
                return;
        open_dialog(t, d, DIALOG_HIDDEN, true);
        enterprise = hidden_enterprise(d);
        /* the EAP method, user name, anonymous identity, then the password */
        d->field = enterprise ? eap_first(d) + 3 : 2;
        if (res == WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE)
                snprintf(d->note, sizeof(d->note), "%s", d->verdict);
        else
                snprintf(d->note, sizeof(d->note),
                         "%s refused this %s. Check it (it is case-sensitive) and try again.",
                         d->name, enterprise ? "user name or password" : "passphrase");
}

/* A field chosen with Left/Right, not typed. */
static bool dialog_choice(WifiData *d, int i)
{
        return (d->dialog == DIALOG_HIDDEN && i == 1) || (eap_full(d) && i == eap_first(d));
}

static void masked(const char *s, char *buf, size_t size)
{
        size_t n = 0;

        /* one star a character, never the text */
        for (; *s && n + 1 < size; s++)
                if (((unsigned char)*s & 0xc0) != 0x80)
                        buf[n++] = '*';
        buf[n] = 0;
}

/* The EAP method, user name, anonymous identity, password, CA file and server domain of a
 * new 802.1X join, from field item on. */
static int build_eap_fields(Tui *t, WifiData *d, TuiDoc *doc, int item, const char *star)
{
        char sec[64];
        int r;

        snprintf(sec, sizeof(sec), "%s %s %s", tui_utf8(t) ? "\u25c0" : "<",
                 d->eap == 1 ? "TTLS" : "PEAP", tui_utf8(t) ? "\u25b6" : ">");
        r = tui_doc_field(doc, item++, 15, "EAP method", THEME_NORMAL, sec);
        if (r >= 0)
                r = tui_doc_field(doc, item++, 15, "User name", THEME_NORMAL, d->identity);
        if (r >= 0)
                r = tui_doc_field(doc, item++, 15, "Anonymous ID", THEME_NORMAL, d->anonymous);
        if (r >= 0)
                r = tui_doc_field(doc, item++, 15, "Password", THEME_NORMAL, star);
        if (r >= 0)
                r = tui_doc_field(doc, item++, 15, "CA file", THEME_NORMAL, d->ca_file);
        if (r >= 0)
                r = tui_doc_field(doc, item++, 15, "Server domain", THEME_NORMAL, d->domain);
        return r;
}

static int build_dialog(Tui *t, WifiData *d, TuiDoc *doc)
{
        char star[FIELD_MAX + 1], sec[64];
        int r, item = 0;

        masked(d->secret, star, sizeof(star));
        r = tui_doc_line(doc, -1, 0);
        if (r >= 0 && d->dialog == DIALOG_HIDDEN)
                r = tui_doc_span(doc, THEME_TITLE, 0, "Join a hidden network");
        else if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0, "Join %s (%s)", d->name,
                                  wifi_security_words(d->join_security));
        if (r >= 0 && *d->note) {
                r = tui_doc_line(doc, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(doc, THEME_WARNING, 0, d->note);
        }
        if (r >= 0)
                r = tui_doc_line(doc, -1, 0);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0,
                                 hidden_enterprise(d) && eap_full(d)
                                     ? "Tab: next field, Left/Right: security or EAP method, "
                                       "Enter: join, Esc: cancel. Nothing in the air names a "
                                       "hidden network: type it exactly. Anonymous identity: the "
                                       "outer name (empty: none). CA file: the server's CA "
                                       "certificate, PEM (empty: the system's bundle). Server "
                                       "domain: the name its certificate must carry."
                                 : d->dialog == DIALOG_HIDDEN
                                     ? "Tab: next field, Left/Right: security, Enter: join, Esc: "
                                       "cancel. Nothing in the air names a hidden network: type "
                                       "it exactly."
                                 : enterprise_full(d)
                                     ? "Tab: next field, Left/Right: EAP method, Enter: join, "
                                       "Esc: cancel. Anonymous identity: the outer name (empty: "
                                       "none). CA file: the server's CA certificate, PEM (empty: "
                                       "the system's bundle). Server domain: the name its "
                                       "certificate must carry."
                                 : d->dialog == DIALOG_ENTERPRISE
                                     ? "Tab: next field, Enter: join, Esc: cancel."
                                     : "Tab: next field, Enter: join, Esc: cancel. The owner "
                                       "keeps the passphrase once the join works.");
        if (r >= 0 && d->dialog == DIALOG_HIDDEN) {
                int w = eap_full(d) ? 15 : 12;

                snprintf(sec, sizeof(sec), "%s %s %s", tui_utf8(t) ? "\u25c0" : "<",
                         wifi_security_words(hidden_security[d->security]),
                         tui_utf8(t) ? "\u25b6" : ">");
                r = tui_doc_field(doc, item++, w, "Network", THEME_NORMAL, d->ssid_text);
                if (r >= 0)
                        r = tui_doc_field(doc, item++, w, "Security", THEME_NORMAL, sec);
                if (r >= 0 && hidden_enterprise_by_iwd(d)) {
                        r = tui_doc_line(doc, -1, 0);
                        if (r >= 0)
                                r = tui_doc_span(doc, THEME_WARNING, 0,
                                                 "iwd joins a hidden 802.1X network only by "
                                                 "autoconnect, from a provisioning file in its "
                                                 "state directory: roam cannot ask it to join "
                                                 "one. Choose another security, or Esc.");
                } else if (r >= 0 && eap_full(d))
                        r = build_eap_fields(t, d, doc, item, star);
                else if (r >= 0 && !streq(hidden_security[d->security], "open"))
                        r = tui_doc_field(doc, item++, w, "Passphrase", THEME_NORMAL, star);
                return r;
        }
        if (r >= 0 && enterprise_full(d))
                return build_eap_fields(t, d, doc, item, star);
        if (r >= 0 && d->dialog == DIALOG_ENTERPRISE) {
                r = tui_doc_field(doc, item++, 12, "User name", THEME_NORMAL, d->identity);
                if (r >= 0)
                        r = tui_doc_field(doc, item++, 12, "Password", THEME_NORMAL, star);
                return r;
        }
        if (r >= 0)
                r = tui_doc_field(doc, item, 12, "Passphrase", THEME_NORMAL, star);
        return r;
}

static void wifi_draw(Tui *t, Screen *s, int top, int height)
{
        WifiData *d = s->data;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;
        const WifiLink *l;

        d->tui = t;
        follow(t, d);
        if (tui_doc_new(&doc) < 0)
                return;
        if (d->dialog != DIALOG_NONE) {
                int scroll = 0;

                (void)dialog_settling(t, d);
                /* the whole screen: a screen reader reads the dialog and nothing else */
                if (build_dialog(t, d, doc) >= 0)
                        tui_doc_draw(t, doc, top, height, d->field, &scroll);
                return;
        }
        l = wifi_link(d);
        if (build(t, d, doc) < 0)
                return;
        if (l && d->selected > (int)l->n_networks)
                d->selected = (int)l->n_networks;
        tui_doc_draw(t, doc, top, height, l && wifi_backend_words(l->backend) ? d->selected : -1,
                     &d->scroll);
}

/* The fields of the dialog open now, in Tab order (NULL: a choice, or none). */
static char *dialog_field(WifiData *d, int i)
{
        if (eap_full(d)) {
                char *fields[] = {NULL,      d->identity, d->anonymous,
                                  d->secret, d->ca_file,  d->domain};
                int k = i - eap_first(d);

                if (d->dialog == DIALOG_HIDDEN && i == 0)
                        return d->ssid_text;
                return k >= 0 && k < (int)ELEMENTSOF(fields) ? fields[k] : NULL;
        }
        if (d->dialog == DIALOG_HIDDEN) {
                const char *sec = hidden_security[d->security];

                return i == 0                                                       ? d->ssid_text
                       : i == 2 && !streq(sec, "open") && !streq(sec, "enterprise") ? d->secret
                                                                                    : NULL;
        }
        if (d->dialog == DIALOG_ENTERPRISE)
                return i == 0 ? d->identity : i == 1 ? d->secret : NULL;
        return i == 0 ? d->secret : NULL;
}

static int dialog_fields(WifiData *d)
{
        int n = 0;

        while (n < 10 && (dialog_field(d, n) || dialog_choice(d, n)))
                n++;
        return n;
}

/* The CA file as roamd takes it: absolute (roamd reads no relative path: its working
 * directory is not the user's), "~/" the home directory; an error in words when it is no
 * file. */
static int ca_file_path(const char *typed, char *out, size_t size, char *why, size_t why_size)
{
        char buf[PATH_MAX], resolved[PATH_MAX];
        const char *home = getenv("HOME");
        struct stat st;

        if (strncmp(typed, "~/", 2) == 0 && home)
                snprintf(buf, sizeof(buf), "%s/%s", home, typed + 2);
        else
                snprintf(buf, sizeof(buf), "%s", typed);
        if (!realpath(buf, resolved) || stat(resolved, &st) < 0) {
                snprintf(why, why_size, "Cannot use the CA file %s: %s.", typed, strerror(errno));
                return -errno;
        }
        if (!S_ISREG(st.st_mode)) {
                snprintf(why, why_size, "The CA file %s is no file.", typed);
                return -EISDIR;
        }
        snprintf(out, size, "%s", resolved);
        return 0;
}

static void start_join(Tui *t, WifiData *d, const char *secret, const WifiEapJoin *eap)
{
        int r;

        d->verdict[0] = 0;
        d->awaiting_verdict = false;
        snprintf(d->progress, sizeof(d->progress), "Joining %s%s", d->name, tui_glyph_ellipsis(t));
        r = roam_wifi_watch_join(
            d->watch, d->ssid, d->ssid_len, d->join_hidden,
            d->join_hidden || streq(d->join_security, "enterprise") ? d->join_security : NULL,
            secret, eap);
        if (r < 0) {
                d->progress[0] = 0;
                tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
        }
}

static int submit(Tui *t, WifiData *d)
{
        bool enterprise =
            d->dialog == DIALOG_ENTERPRISE ||
            (d->dialog == DIALOG_HIDDEN && streq(hidden_security[d->security], "enterprise"));
        bool open = d->dialog == DIALOG_HIDDEN && streq(hidden_security[d->security], "open");
        char ca[PATH_MAX] = "", why[PATH_MAX + 64];
        int r;

        if (hidden_enterprise_by_iwd(d)) {
                tui_message(t, THEME_WARNING,
                            "iwd joins a hidden 802.1X network only by autoconnect.");
                return REACTION_REDRAW;
        }
        if (d->dialog == DIALOG_HIDDEN) {
                size_t n = strlen(d->ssid_text);

                if (n == 0 || n > WIFI_SSID_MAX) {
                        tui_message(t, THEME_WARNING, "A network name has 1 to 32 bytes.");
                        return REACTION_REDRAW;
                }
                _cleanup_free_ char *shown = NULL;

                memcpy(d->ssid, d->ssid_text, n);
                d->ssid_len = n;
                if (wifi_ssid_display(d->ssid, n, &shown) < 0)
                        return -ENOMEM;
                snprintf(d->name, sizeof(d->name), "%s", shown);
                snprintf(d->join_security, sizeof(d->join_security), "%s",
                         hidden_security[d->security]);
                d->join_hidden = true;
        }
        if (enterprise && !*d->identity) {
                tui_message(t, THEME_WARNING, "Enter a user name.");
                return REACTION_REDRAW;
        }
        if (!open && !*d->secret) {
                tui_message(t, THEME_WARNING, "Enter the %s.",
                            enterprise ? "password" : "passphrase");
                return REACTION_REDRAW;
        }
        if (eap_full(d) && *d->ca_file &&
            ca_file_path(d->ca_file, ca, sizeof(ca), why, sizeof(why)) < 0) {
                d->field = eap_first(d) + 4; /* the CA file, to be typed again */
                tui_message(t, THEME_WARNING, "%s", why);
                return REACTION_REDRAW;
        }
        if (d->waiting_secret) {
                d->waiting_secret = false;
                r = roam_wifi_watch_secret(d->watch, d->join_id, d->secret,
                                           enterprise ? d->identity : NULL);
                if (r < 0)
                        tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
                else
                        snprintf(d->progress, sizeof(d->progress), "Joining %s%s", d->name,
                                 tui_glyph_ellipsis(t));
        } else if (enterprise) {
                bool full = eap_full(d);
                WifiEapJoin eap = {
                    .eap = full ? eap_methods[d->eap] : "peap",
                    .identity = d->identity,
                    .anonymous_identity = full ? d->anonymous : NULL,
                    .ca_file = ca,
                    .domain = full ? d->domain : NULL,
                };

                start_join(t, d, d->secret, &eap);
        } else
                start_join(t, d, open ? NULL : d->secret, NULL);
        dialog_close(d);
        return REACTION_REDRAW;
}

static int dialog_key(Tui *t, WifiData *d, int key)
{
        char *f = dialog_field(d, d->field);
        size_t n = f ? strlen(f) : 0;
        int fields = dialog_fields(d);

        if (dialog_settling(t, d))
                return REACTION_NONE;
        switch (key) {
        case TUI_KEY_ESCAPE:
                if (d->waiting_secret && d->join_id)
                        (void)roam_wifi_watch_cancel(d->watch, d->join_id);
                d->waiting_secret = false;
                d->progress[0] = 0;
                dialog_close(d);
                tui_message(t, THEME_NORMAL, "Nothing joined.");
                return REACTION_REDRAW;
        case '\t':
        case TUI_KEY(KEY_DOWN):
                d->field = (d->field + 1) % fields;
                return REACTION_REDRAW;
        case TUI_KEY(KEY_BTAB):
        case TUI_KEY(KEY_UP):
                d->field = (d->field + fields - 1) % fields;
                return REACTION_REDRAW;
        case TUI_KEY(KEY_LEFT):
        case TUI_KEY(KEY_RIGHT):
                if (d->dialog == DIALOG_HIDDEN && d->field == 1) {
                        size_t k = ELEMENTSOF(hidden_security);

                        d->security = (d->security + (key == TUI_KEY(KEY_LEFT) ? k - 1 : 1)) % k;
                        explicit_bzero(d->secret, sizeof(d->secret));
                } else if (eap_full(d) && d->field == eap_first(d))
                        d->eap = (d->eap + 1) % ELEMENTSOF(eap_methods);
                return REACTION_REDRAW;
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
                /* asked again in place, Enter after the secret joins: the fields after it
                 * were typed before */
                if (!(d->dialog_by_itself && f == d->secret) && d->field + 1 < fields &&
                    !(f && *f && d->field + 1 == fields)) {
                        d->field++;
                        return REACTION_REDRAW;
                }
                return submit(t, d);
        case 127:
        case 8:
        case TUI_KEY(KEY_BACKSPACE):
                if (!f)
                        return REACTION_NONE;
                while (n > 0 && ((unsigned char)f[n - 1] & 0xc0) == 0x80)
                        f[--n] = 0;
                if (n > 0)
                        f[--n] = 0;
                return REACTION_REDRAW;
        }
        if (!f || key & TUI_KEY_CODE || key < 0x20 || key == 0x7f)
                return REACTION_NONE;
        {
                char buf[8];
                mbstate_t ps = {};
                size_t k = wcrtomb(buf, (wchar_t)key, &ps);

                if (k == (size_t)-1 || n + k > FIELD_MAX)
                        return REACTION_NONE;
                memcpy(f + n, buf, k);
                f[n + k] = 0;
                explicit_bzero(buf, sizeof(buf));
        }
        return REACTION_REDRAW;
}

static void clear_eap(WifiData *d)
{
        memset(d->identity, 0, sizeof(d->identity));
        memset(d->anonymous, 0, sizeof(d->anonymous));
        memset(d->ca_file, 0, sizeof(d->ca_file));
        memset(d->domain, 0, sizeof(d->domain));
        d->eap = 0;
}

static const WifiNetwork *selected_network(WifiData *d)
{
        const WifiLink *l = wifi_link(d);

        if (!l || d->selected < 0 || (size_t)d->selected >= l->n_networks)
                return NULL;
        return &l->networks[d->selected];
}

static void remember(WifiData *d, const WifiNetwork *n)
{
        memcpy(d->ssid, n->ssid, n->ssid_len);
        d->ssid_len = n->ssid_len;
        snprintf(d->name, sizeof(d->name), "%s", n->name);
        snprintf(d->join_security, sizeof(d->join_security), "%s", strempty(n->security));
        d->join_hidden = false;
}

/* Wi-Fi Easy Connect (DPP) goes through iwd and wpa_supplicant, not NetworkManager. */
static bool enrolls(const WifiLink *l)
{
        return l && (streq_ptr(l->backend, "iwd") || streq_ptr(l->backend, "wpa_supplicant"));
}

static int confirmed_forget(Tui *t, void *userdata, const char *subject)
{
        WifiData *d = userdata;
        int r = roam_wifi_watch_forget(d->watch, d->ssid, d->ssid_len);

        if (r < 0)
                tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
        return REACTION_REDRAW;
}

static int wifi_key(Tui *t, Screen *s, int key)
{
        WifiData *d = s->data;
        const WifiLink *l = wifi_link(d);
        const WifiNetwork *n;
        bool handled;
        int i, r;

        d->tui = t;
        if (d->dialog != DIALOG_NONE)
                return dialog_key(t, d, key);
        if (!l || !wifi_backend_words(l->backend))
                return REACTION_UNHANDLED;
        i = tui_list_key(key, d->selected, (int)l->n_networks + 1, &handled);
        if (handled) {
                if (i >= 0)
                        d->selected = i;
                n = selected_network(d);
                d->sel_len = n ? n->ssid_len : 0;
                if (n)
                        memcpy(d->sel_ssid, n->ssid, n->ssid_len);
                return REACTION_REDRAW;
        }
        n = selected_network(d);
        switch (key) {
        case 'r':
                r = roam_wifi_watch_scan(d->watch);
                if (r < 0)
                        tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
                else
                        tui_message(t, THEME_STATUS, "Scanning%s", tui_glyph_ellipsis(t));
                return REACTION_REDRAW;
        case 'e': /* screen-wifi-enroll.c */
                if (!enrolls(l)) {
                        tui_message(t, THEME_WARNING, "%s has no Wi-Fi Easy Connect.",
                                    wifi_backend_words(l->backend));
                        return REACTION_REDRAW;
                }
                return tui_show(t, &wifi_enroll_screen_vtable) < 0 ? REACTION_NONE
                                                                   : REACTION_REDRAW;
        case 'h':
                memset(d->ssid_text, 0, sizeof(d->ssid_text));
                d->security = 0;
                clear_eap(d);
                open_dialog(t, d, DIALOG_HIDDEN, false);
                return REACTION_REDRAW;
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
                if (d->join_id) {
                        tui_message(t, THEME_WARNING, "Joining %s first.", d->name);
                        return REACTION_REDRAW;
                }
                if (!n) {
                        memset(d->ssid_text, 0, sizeof(d->ssid_text));
                        d->security = 0;
                        clear_eap(d);
                        open_dialog(t, d, DIALOG_HIDDEN, false);
                        return REACTION_REDRAW;
                }
                remember(d, n);
                if (n->connected) {
                        tui_message(t, THEME_NORMAL, "%s is joined already.", n->name);
                        return REACTION_REDRAW;
                }
                if (!n->known && streq_ptr(n->security, "enterprise")) {
                        clear_eap(d);
                        open_dialog(t, d, DIALOG_ENTERPRISE, false);
                } else if (!n->known && wifi_security_needs_secret(n->security))
                        open_dialog(t, d, DIALOG_PASSPHRASE, false);
                else
                        start_join(t, d, NULL, NULL);
                return REACTION_REDRAW;
        case 'f':
        case 'a':
                if (!n || !n->known) {
                        tui_message(t, THEME_WARNING, "%s is not a known network.",
                                    n ? n->name : "This");
                        return REACTION_REDRAW;
                }
                remember(d, n);
                if (key == 'a') {
                        r = roam_wifi_watch_autoconnect(d->watch, n->ssid, n->ssid_len,
                                                        !n->autoconnect);
                        if (r < 0)
                                tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
                        return REACTION_REDRAW;
                }
                {
                        char q[256];

                        snprintf(q, sizeof(q), "Forget %s? Its passphrase is forgotten too.",
                                 n->name);
                        return tui_confirm(t, n->name, confirmed_forget, d, q,
                                           "Nothing forgotten.");
                }
        case '+':
        case '-':
                if (!n || !n->known) {
                        tui_message(t, THEME_WARNING, "%s is not a known network.",
                                    n ? n->name : "This");
                        return REACTION_REDRAW;
                }
                if (!wifi_backend_has_priority(l->backend)) {
                        tui_message(t, THEME_WARNING,
                                    "%s has no priority for known networks: it ranks them itself.",
                                    wifi_backend_words(l->backend));
                        return REACTION_REDRAW;
                }
                {
                        int32_t lo, hi, want = n->priority + (key == '+' ? 1 : -1);

                        wifi_backend_priority_range(l->backend, &lo, &hi);
                        if (want < lo || want > hi) {
                                tui_message(t, THEME_WARNING, "%s takes a priority from %d to %d.",
                                            wifi_backend_words(l->backend), lo, hi);
                                return REACTION_REDRAW;
                        }
                        d->priority_asked = want;
                }
                remember(d, n);
                r = roam_wifi_watch_priority(d->watch, n->ssid, n->ssid_len, d->priority_asked);
                if (r < 0)
                        tui_message(t, THEME_ERROR, "Cannot ask roamd: %s.", strerror(-r));
                return REACTION_REDRAW;
        }
        return REACTION_UNHANDLED;
}

static int wifi_click(Tui *t, Screen *s, int item)
{
        WifiData *d = s->data;

        const WifiNetwork *n;

        if (d->dialog != DIALOG_NONE) {
                d->field = MAX(0, MIN(item, dialog_fields(d) - 1));
                return REACTION_REDRAW;
        }
        d->selected = MAX(0, item);
        n = selected_network(d);
        d->sel_len = n ? n->ssid_len : 0;
        if (n)
                memcpy(d->sel_ssid, n->ssid, n->ssid_len);
        return REACTION_REDRAW;
}

static bool wifi_typing(Tui *t, Screen *s)
{
        WifiData *d = s->data;

        return d && d->dialog != DIALOG_NONE;
}

static bool wifi_loading(Tui *t, Screen *s)
{
        WifiData *d = s->data;

        return d && d->watch && !roam_wifi_watch_loaded(d->watch);
}

static bool wifi_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        WifiData *d = s->data;
        const WifiNetwork *n = selected_network(d);
        const WifiLink *l = wifi_link(d);

        /* no owner roam joins through: nothing to do here but leave */
        if (!l || !wifi_backend_words(l->backend))
                return streq(k->keys, "Esc");
        if (streq(k->keys, "f") || streq(k->keys, "a"))
                return n && n->known;
        if (streq(k->keys, "+/-"))
                return n && n->known && wifi_backend_has_priority(l->backend);
        if (streq(k->keys, "e"))
                return enrolls(l);
        return true;
}

static const char *wifi_available(Tui *t, Screen *s, char *why, size_t size)
{
        const RoamLink *l = model_link(t);

        if (l && streq_ptr(l->bearer, "wifi"))
                return NULL;
        snprintf(why, size, "the selected link is no Wi-Fi link");
        return "none";
}

static const KeyHelp wifi_keys[] = {
    {"Enter", "join",
     "Join the selected network (a secured one asks for its passphrase, an 802.1X one for its "
     "EAP method, user name, password, CA file and server domain; needs root, group netdev or "
     "polkit)"},
    {"r", "scan", "Look for networks again"},
    {"h", "hidden", "Join a hidden network: its name, security, then as Enter asks"},
    {"e", "easy connect",
     "Show this device's Wi-Fi Easy Connect (DPP) code for a phone on a network to scan"},
    {"f", "forget", "Forget the selected known network (asks first)"},
    {"a", "autoconnect", "Whether the owner joins the selected known network by itself"},
    /* in the help only: the bar at 80 columns has no room left */
    {"+/-", NULL,
     "Raise or lower the selected known network's priority (higher is joined first; not "
     "through iwd, which ranks networks itself)"},
    {"Up/Down", NULL, "Select the previous or next network (also k and j)"},
    {"Esc", "back", "Back"},
    {},
};

static const KeyHelp wifi_typing_keys[] = {
    {"Enter", "join", "Join with what is typed"},
    {"Tab", "next field", "The next field"},
    {"Esc", "cancel", "Close the dialog; nothing is joined"},
    {},
};

const ScreenVTable wifi_screen_vtable = {
    .name = "wifi",
    .title = "Wi-Fi",
    .number = 0,
    .data_size = sizeof(WifiData),
    .enter = wifi_enter,
    .draw = wifi_draw,
    .key = wifi_key,
    .click = wifi_click,
    .model_changed = wifi_model_changed,
    .typing = wifi_typing,
    .typing_keys = wifi_typing_keys,
    .loading = wifi_loading,
    .key_active = wifi_key_active,
    .available = wifi_available,
    .roamd_gone = wifi_roamd_gone,
    .done = wifi_done,
    .keys = wifi_keys,
    .about = "The Wi-Fi networks of a Wi-Fi link (w on its link screen), through the daemon "
             "that owns it (NetworkManager, iwd or wpa_supplicant): the joined one first, known "
             "ones in range, the others by signal, then known ones out of range; signal as "
             "bars, in words and in dBm; security in words. Enter joins: a secured network "
             "asks for its passphrase (masked; an 802.1X one its EAP method, user name, "
             "anonymous identity, password, CA file and server domain), a refused one is said "
             "and asked again, then "
             "the link's verdict follows (the portal screen when the network has a captive "
             "portal). h joins a hidden network, f forgets, a toggles autoconnect, + and - "
             "raise and lower a known network's priority.",
};
