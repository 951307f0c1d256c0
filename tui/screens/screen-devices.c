/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-client-bus.h"
#include "roam-bus.h"
#include "roam-peers.h"
#include "roam-screens.h"
#include "roam-tui-filter.h"
#include "roam-util.h"
#include "roam-words.h"

/* WiFi Direct devices (docs/wifi-direct.md): search, the devices found with their type and
 * how to connect, connecting by button or PIN (shown, or typed here), a device's request to
 * connect as a dialog to accept or reject, disconnecting. The peers are read from roamd's
 * org.roam1.Peer objects, again after each of its signals (asynchronously: never blocks). */

#define PATH_MAX_LEN      64
#define TABLE_MIN_COLUMNS 64
#define COL_TYPE          13
#define COL_STATE         17
#define GUTTER            2
#define FIND_SECONDS      30

typedef struct DevicesData {
        Tui *tui;
        sd_bus *bus;
        sd_bus_slot *match, *load_slot, *call_slot;
        /* A list read, shown once the PINs of its peers have come (asked without waiting: a
         * slow answer must not hold the screen). */
        P2pPinLoad pins;
        bool reload; /* a signal came while loading */
        P2pList list;
        char selected[PATH_MAX_LEN];
        /* Typing a PIN: for this peer, to connect (or to accept its request). */
        char pin_for[PATH_MAX_LEN];
        bool pin_accept;
        char pin[9];
        bool shown;       /* the current screen */
        bool available;   /* what the header's tab last showed */
        TuiFilter filter; /* `/`: the devices whose words contain the text */
} DevicesData;

static const char *const peer_order[] = {"roamd's order"};

static void devices_load(DevicesData *d);

static const char *p2p_state(DevicesData *d)
{
        /* the live model's (Manager.P2PState): "" while roamd is not there or runs none */
        return d->tui ? tui_model(d->tui)->p2p_state : "";
}

static bool is_available(DevicesData *d)
{
        return d->bus && *p2p_state(d) && !streq(p2p_state(d), "unavailable");
}

/* A frame when something visible changed: this screen, or the header's Devices tab. */
static void changed(DevicesData *d)
{
        bool a = is_available(d);

        if (d->shown || a != d->available)
                tui_request_redraw(d->tui);
        d->available = a;
}

static const P2pPeer *peer_at(DevicesData *d, const char *path)
{
        for (size_t i = 0; i < d->list.n; i++)
                if (streq_ptr(d->list.peers[i].path, path))
                        return &d->list.peers[i];
        return NULL;
}

static bool peer_shown(const DevicesData *d, const P2pPeer *p)
{
        const char *fields[] = {p->name, p->address, p->type, p->state, NULL};

        return tui_filter_match(&d->filter, fields);
}

/* The selected device among those the filter lets through (the first shown one when the
 * selected one is hidden), -1: none shown. */
static int selected_index(DevicesData *d)
{
        int first = -1;

        for (size_t i = 0; i < d->list.n; i++) {
                if (!peer_shown(d, &d->list.peers[i]))
                        continue;
                if (streq_ptr(d->list.peers[i].path, d->selected))
                        return (int)i;
                if (first < 0)
                        first = (int)i;
        }
        return first;
}

/* The model's indexes of the shown devices in idx (room for every one); returns how many. */
static size_t shown_peers(DevicesData *d, int *idx)
{
        size_t n = 0;

        for (size_t i = 0; i < d->list.n; i++)
                if (peer_shown(d, &d->list.peers[i]))
                        idx[n++] = (int)i;
        return n;
}

static int position_of(const int *idx, size_t n, int i)
{
        for (size_t k = 0; k < n; k++)
                if (idx[k] == i)
                        return (int)k;
        return 0;
}

static const P2pPeer *selected_peer(DevicesData *d)
{
        int i = selected_index(d);

        return i < 0 ? NULL : &d->list.peers[i];
}

/* The device that asks to connect (the dialog), if any. */
static const P2pPeer *requesting_peer(DevicesData *d)
{
        for (size_t i = 0; i < d->list.n; i++)
                if (streq_ptr(d->list.peers[i].state, "request"))
                        return &d->list.peers[i];
        return NULL;
}

/* The list read is complete: shown, and read again if a signal came meanwhile. */
static void loaded(DevicesData *d, bool ok)
{
        if (ok) {
                p2p_list_done(&d->list);
                d->list = d->pins.list;
                d->pins.list = (P2pList){};
        }
        p2p_pin_load_cancel(&d->pins);
        if (d->reload) {
                d->reload = false;
                devices_load(d);
        }
        changed(d);
}

static void on_pins(void *userdata)
{
        loaded(userdata, true);
}

static int on_objects(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        DevicesData *d = userdata;
        P2pList l = {};
        int r = -EIO;

        d->load_slot = sd_bus_slot_unref(d->load_slot);
        if (!sd_bus_message_is_method_error(m, NULL) && p2p_list_parse_objects(m, &l) >= 0)
                r = p2p_pin_load_start(&d->pins, d->bus, &l, on_pins, d);
        p2p_list_done(&l);
        if (r != 0)
                loaded(d, r > 0);
        return 0;
}

static void devices_load(DevicesData *d)
{
        if (!d->bus)
                return;
        if (d->load_slot || d->pins.pending) {
                d->reload = true;
                return;
        }
        (void)sd_bus_call_method_async(d->bus, &d->load_slot, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                       "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                                       on_objects, d, NULL);
}

static const P2pPeer *peer_by_address(DevicesData *d, const char *address)
{
        for (size_t i = 0; i < d->list.n; i++)
                if (streq_ptr(d->list.peers[i].address, address))
                        return &d->list.peers[i];
        return NULL;
}

/* A failed attempt or a group the other side ended is said on the status line: the peer may
 * be gone from the list (out of reach), or not the selected one. */
static void say_signal(DevicesData *d, sd_bus_message *m)
{
        const char *words;
        const P2pPeer *p;
        P2pSignalArgs s;

        switch (p2p_signal_read(m, &s)) {
        case P2P_SIGNAL_CONNECTION_FAILED:
                words = roam_p2p_reason_words(s.reason);
                tui_message(d->tui, THEME_ERROR, "Could not connect to %s: %s.", *s.b ? s.b : s.a,
                            words ? words : "no reason given");
                break;
        case P2P_SIGNAL_GROUP_REMOVED:
                if (streq(s.reason, roam_p2p_reason_to_string(ROAM_P2P_REASON_REQUESTED)))
                        return;
                p = peer_by_address(d, s.b);
                words = roam_p2p_reason_words(s.reason);
                tui_message(d->tui, THEME_WARNING, "The connection to %s ended: %s.",
                            p      ? p2p_peer_label(p)
                            : *s.b ? s.b
                                   : s.a,
                            words ? words : s.reason);
                break;
        case P2P_SIGNAL_NONE:
                return;
        }
        tui_request_redraw(d->tui);
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        DevicesData *d = userdata;

        say_signal(d, m);
        devices_load(d);
        return 0;
}

/* Follows roamd on the live model's bus (again after it reconnected). */
static void devices_watch(Tui *t, DevicesData *d)
{
        sd_bus *bus = roam_live_get_bus(tui_live(t));

        if (d->bus && bus == d->bus && d->match) {
                devices_load(d);
                return;
        }
        d->tui = t;
        d->match = sd_bus_slot_unref(d->match);
        d->load_slot = sd_bus_slot_unref(d->load_slot);
        d->call_slot = sd_bus_slot_unref(d->call_slot);
        p2p_pin_load_cancel(&d->pins);
        d->bus = sd_bus_unref(d->bus);
        if (!bus)
                return;
        d->bus = sd_bus_ref(bus);
        (void)sd_bus_add_match_async(bus, &d->match,
                                     "type='signal',path_namespace='" ROAM_MANAGER_PATH "'",
                                     on_signal, NULL, d);
        devices_load(d);
}

static void devices_done(Tui *t, Screen *s)
{
        DevicesData *d = s->data;

        if (!d)
                return;
        sd_bus_slot_unref(d->match);
        sd_bus_slot_unref(d->load_slot);
        sd_bus_slot_unref(d->call_slot);
        p2p_pin_load_cancel(&d->pins);
        sd_bus_unref(d->bus);
        p2p_list_done(&d->list);
        *d = (DevicesData){};
}

/* roamd came: its WiFi Direct peers are followed anew. */
static int devices_roamd_appeared(Tui *t, Screen *s)
{
        devices_watch(t, s->data);
        return REACTION_REDRAW;
}

/* roamd went: the list shown says so (its load fails). */
static int devices_roamd_gone(Tui *t, Screen *s)
{
        DevicesData *d = s->data;

        if (!d->shown)
                return REACTION_NONE;
        devices_watch(t, d);
        return REACTION_REDRAW;
}

static int devices_enter(Tui *t, Screen *s)
{
        DevicesData *d = s->data;

        d->shown = true;
        devices_watch(t, d);
        return 0;
}

static void devices_leave(Tui *t, Screen *s)
{
        DevicesData *d = s->data;

        d->shown = false;
        d->pin_for[0] = 0;
}

static int devices_model_changed(Tui *t, Screen *s, const RoamLiveEvent *ev)
{
        DevicesData *d = s->data;

        /* A group's link and the apps routed over it are said under a connected device. */
        return d->shown ? REACTION_REDRAW : REACTION_NONE;
}

/* Calls: one at a time; the answer is said on the status line. */

typedef struct CallInfo {
        char what[128]; /* "stop searching": what failed, if it does */
        char done[160]; /* "Stopped searching.": said when roamd answered */
} CallInfo;

static CallInfo call_info; /* one call at a time (call_slot) */

static int on_call(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        DevicesData *d = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        const char *pin = NULL;

        d->call_slot = sd_bus_slot_unref(d->call_slot);
        if (e && roam_bus_error_is_denied(e)) {
                char why[256];

                tui_message(d->tui, THEME_ERROR, "Not allowed to %s: %s.", call_info.what,
                            roam_bus_denied_reason(e, why, sizeof(why)));
        } else if (e)
                tui_message(d->tui, THEME_ERROR, "Cannot %s: %s", call_info.what,
                            e->message ? e->message : e->name);
        else if (sd_bus_message_read(m, "s", &pin) > 0 && *pin)
                tui_message(d->tui, THEME_OK, "Type %.4s %.4s on the device.", pin,
                            strlen(pin) > 4 ? pin + 4 : "");
        else
                /* Said, so no one wonders whether the key was taken (a key pressed before
                 * this answer is refused: one call at a time). */
                tui_message(d->tui, THEME_OK, "%s", call_info.done);
        tui_request_redraw(d->tui);
        return 0;
}

static int call(DevicesData *d, const char *path, const char *iface, const char *method,
                const char *what, const char *done, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        if (!d->bus)
                return REACTION_NONE;
        if (d->call_slot) {
                tui_message(d->tui, THEME_WARNING, "Still waiting for roamd's last answer.");
                return REACTION_REDRAW;
        }
        r = sd_bus_message_new_method_call(d->bus, &m, ROAM_BUS_NAME, path, iface, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call_async(d->bus, &d->call_slot, m, on_call, d, 0);
        if (r < 0) {
                tui_message(d->tui, THEME_ERROR, "Cannot ask roamd: %s", strerror(-r));
                return REACTION_REDRAW;
        }
        snprintf(call_info.what, sizeof(call_info.what), "%s", what);
        snprintf(call_info.done, sizeof(call_info.done), "%s", done);
        return REACTION_REDRAW;
}

static int peer_call(DevicesData *d, const P2pPeer *p, const char *method, const char *verb,
                     const char *types, const char *a1, const char *a2);

/* y to "Disconnect from ...?": the peer by its path, if it is still there. */
static int confirmed_disconnect(Tui *t, void *userdata, const char *path)
{
        DevicesData *d = userdata;
        const P2pPeer *p = peer_at(d, path);

        if (!p) {
                tui_message(t, THEME_WARNING, "That device is gone.");
                return REACTION_REDRAW;
        }
        return peer_call(d, p, "Disconnect", "disconnect", NULL, NULL, NULL);
}

static int peer_call(DevicesData *d, const P2pPeer *p, const char *method, const char *verb,
                     const char *types, const char *a1, const char *a2)
{
        const char *label = p2p_peer_label(p);
        char what[128], done[160];

        snprintf(what, sizeof(what), "%s %s", verb, label);
        if (streq(method, "Connect"))
                snprintf(done, sizeof(done), "Started connecting to %s.", label);
        else if (streq(method, "Accept"))
                snprintf(done, sizeof(done), "Accepted %s.", label);
        else if (streq(method, "Reject"))
                snprintf(done, sizeof(done), "Rejected %s.", label);
        else if (streq_ptr(p->state, "connecting"))
                snprintf(done, sizeof(done), "Stopped connecting to %s.", label);
        else
                snprintf(done, sizeof(done), "Started disconnecting from %s.", label);
        return call(d, p->path, ROAM_PEER_INTERFACE, method, what, done, types, a1, a2);
}

static void start_pin(DevicesData *d, const P2pPeer *p, bool accept)
{
        snprintf(d->pin_for, sizeof(d->pin_for), "%s", p->path);
        d->pin_accept = accept;
        d->pin[0] = 0;
}

static int pin_key(Tui *t, DevicesData *d, int key)
{
        const P2pPeer *p = peer_at(d, d->pin_for);
        size_t n = strlen(d->pin);

        if (key == TUI_KEY_ESCAPE || !p) {
                d->pin_for[0] = 0;
                return REACTION_REDRAW;
        }
        if (key >= '0' && key <= '9') {
                if (n < 8) {
                        d->pin[n] = (char)key;
                        d->pin[n + 1] = 0;
                }
                return REACTION_REDRAW;
        }
        if ((key == TUI_KEY(KEY_BACKSPACE) || key == 127 || key == 8) && n > 0) {
                d->pin[n - 1] = 0;
                return REACTION_REDRAW;
        }
        if (key == '\n' || key == '\r' || key == TUI_KEY(KEY_ENTER)) {
                char pin[9];
                if (n != 4 && n != 8) {
                        tui_message(t, THEME_WARNING, "A PIN has 4 or 8 digits.");
                        return REACTION_REDRAW;
                }
                memcpy(pin, d->pin, sizeof(pin));
                d->pin_for[0] = 0;
                if (d->pin_accept)
                        return peer_call(d, p, "Accept", "accept", "s", pin, NULL);
                return peer_call(d, p, "Connect", "connect to", "ss", "keypad", pin);
        }
        return REACTION_NONE; /* swallowed: nothing else while typing a PIN */
}

static bool has_method(const P2pPeer *p, const char *m)
{
        return strv_contains(p->methods, m);
}

static int devices_key(Tui *t, Screen *s, int key)
{
        DevicesData *d = s->data;
        const P2pPeer *p = selected_peer(d), *req = requesting_peer(d);
        _cleanup_free_ int *idx = NULL;
        bool handled;
        size_t n;
        int i;

        if (*d->pin_for)
                return pin_key(t, d, key);
        if (key != 's' || d->filter.editing) {
                i = tui_filter_key(t, &d->filter, key, 1, peer_order);
                if (i != REACTION_UNHANDLED)
                        return i;
        }
        idx = calloc(d->list.n + 1, sizeof(int));
        if (!idx)
                return -ENOMEM;
        n = shown_peers(d, idx);
        i = tui_list_key(key, position_of(idx, n, selected_index(d)), (int)n, &handled);
        if (handled) {
                if (i >= 0)
                        snprintf(d->selected, sizeof(d->selected), "%s",
                                 d->list.peers[idx[i]].path);
                return REACTION_REDRAW;
        }
        switch (key) {
        case 'f':
                return call(d, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE, "P2PFind",
                            "search for devices", "Started a 30-second search.", "u",
                            (uint32_t)FIND_SECONDS);
        case 's':
                return call(d, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE, "P2PStopFind",
                            "stop searching", "Stopped searching.", NULL);
        case 'a':
                if (!req)
                        return REACTION_NONE;
                if (streq_ptr(req->method, "keypad")) {
                        start_pin(d, req, true);
                        return REACTION_REDRAW;
                }
                return peer_call(d, req, "Accept", "accept", "s", "", NULL);
        case 'r':
                if (!req)
                        return REACTION_NONE;
                return peer_call(d, req, "Reject", "reject", NULL, NULL, NULL);
        }
        if (!p)
                return REACTION_UNHANDLED;
        switch (key) {
        case '\n':
        case '\r':
        case TUI_KEY(KEY_ENTER):
                if (has_method(p, "push-button") || !p->methods || !p->methods[0])
                        return peer_call(d, p, "Connect", "connect to", "ss", "push-button", "");
                if (has_method(p, "display"))
                        return peer_call(d, p, "Connect", "connect to", "ss", "display", "");
                start_pin(d, p, false);
                return REACTION_REDRAW;
        case 'p':
                return peer_call(d, p, "Connect", "connect to", "ss", "display", "");
        case 'e':
                start_pin(d, p, false);
                return REACTION_REDRAW;
        case 'd': {
                /* As Bluetooth's remove: a connection in use is not dropped by one key. */
                _cleanup_free_ char *q = NULL, *no = NULL;
                const char *label = p2p_peer_label(p);

                if (asprintf(&q, "Disconnect from %s? Its connection ends.", label) < 0 ||
                    asprintf(&no, "Not done: %s stays %s.", label,
                             streq_ptr(p->state, "connecting") ? "connecting" : "connected") < 0)
                        return -ENOMEM;
                return tui_confirm(t, p->path, confirmed_disconnect, d, q, no);
        }
        }
        return REACTION_UNHANDLED;
}

/* Drawing. */

static void draw_row(Tui *t, DevicesData *d, const P2pPeer *p, int y, bool selected)
{
        _cleanup_free_ char *methods = p2p_methods_text(p);
        int w = tui_columns(t), x = GUTTER;
        ThemeRole role = selected ? THEME_SELECTED : THEME_NORMAL;
        ThemeRole state_role = streq_ptr(p->state, "connected")    ? THEME_OK
                               : streq_ptr(p->state, "request")    ? THEME_WARNING
                               : streq_ptr(p->state, "connecting") ? THEME_WARNING
                                                                   : role;
        char buf[256];

        if (selected) {
                tui_fill(t, y, 0, w, THEME_SELECTED);
                tui_print(t, y, 0, GUTTER, THEME_SELECTED, ">");
                tui_set_cursor(t, y, 0);
        }
        if (selected)
                state_role = THEME_SELECTED;
        if (w >= TABLE_MIN_COLUMNS) {
                int name_w = w - GUTTER - COL_TYPE - COL_STATE - 26;
                x += tui_print(t, y, x, name_w, role, p2p_peer_label(p));
                x = GUTTER + name_w + 1;
                tui_print(t, y, x, COL_TYPE - 1, role, strempty(p->type));
                x += COL_TYPE;
                tui_print(t, y, x, COL_STATE - 1, state_role, p2p_state_text(p));
                x += COL_STATE;
                tui_print(t, y, x, w - x, role, methods ? methods : "");
                return;
        }
        snprintf(buf, sizeof(buf), "%s (%s): ", p2p_peer_label(p), strempty(p->type));
        x += tui_print(t, y, x, w - x, role, buf);
        tui_print(t, y, x, w - x, state_role, p2p_state_text(p));
}

/* Prints text from column 2, wrapped at spaces to the width; returns the rows used. */
static int print_wrapped(Tui *t, int y, int bottom, ThemeRole role, const char *text)
{
        int w = tui_columns(t) - GUTTER, rows = 0;
        const char *s = text;

        while (*s && y + rows < bottom) {
                size_t n = strlen(s), cut = n;
                char line[512];

                if ((int)n > w) {
                        cut = (size_t)w;
                        while (cut > 0 && s[cut] != ' ')
                                cut--;
                        if (cut == 0)
                                cut = (size_t)w;
                }
                snprintf(line, sizeof(line), "%.*s", (int)cut, s);
                tui_print(t, y + rows, GUTTER, w, role, line);
                rows++;
                s += cut;
                while (*s == ' ')
                        s++;
        }
        return rows;
}

static void pin_words(const char *pin, char *buf, size_t size)
{
        snprintf(buf, size, "%.4s %.4s", pin, strlen(pin) > 4 ? pin + 4 : "");
}

/* What the group's link reaches, from roamd's verdict of that link. */
static void reach_words(Tui *t, const P2pPeer *p, char *buf, size_t size)
{
        const RoamModel *m = tui_model(t);
        const RoamLink *l = NULL;
        RoamVerdict v;

        for (size_t i = 0; m && p->group && i < m->n_links; i++)
                if (streq_ptr(m->links[i]->name, p->group))
                        l = m->links[i];
        v = l ? roam_verdict_from_string(l->connectivity) : _ROAM_VERDICT_INVALID;
        switch (v) {
        case ROAM_VERDICT_LOCAL:
                snprintf(buf, size, "it reaches %s, not the Internet", p2p_peer_label(p));
                return;
        case ROAM_VERDICT_ONLINE:
                snprintf(buf, size, "it reaches %s and the Internet", p2p_peer_label(p));
                return;
        case ROAM_VERDICT_PORTAL:
                snprintf(buf, size, "it leads to a login page (see the portal screen)");
                return;
        case ROAM_VERDICT_PARTIAL:
                snprintf(buf, size, "it reaches the Internet, but HTTPS is blocked");
                return;
        case ROAM_VERDICT_OFFLINE:
                snprintf(buf, size, "nothing answers on it yet (%s)",
                         roam_reason_short(strempty(l->connectivity_reason)));
                return;
        case ROAM_VERDICT_CHECKING:
        case _ROAM_VERDICT_MAX:
        case _ROAM_VERDICT_INVALID:
                break;
        }
        snprintf(buf, size, "roamd is checking what it reaches");
}

/* The apps whose new connections take the group's link now (their policy allows it). */
static void apps_words(Tui *t, const P2pPeer *p, char *buf, size_t size)
{
        const RoamModel *m = tui_model(t);
        const RoamLink *l = NULL;
        size_t n = 0;

        for (size_t i = 0; m && p->group && i < m->n_links; i++)
                if (streq_ptr(m->links[i]->name, p->group))
                        l = m->links[i];
        snprintf(buf, size, "Apps routed over it: ");
        for (size_t i = 0; m && l && i < m->n_apps; i++) {
                const RoamApp *a = m->apps[i];
                if (!streq_ptr(a->route4, l->name) && !streq_ptr(a->route4, l->path) &&
                    !streq_ptr(a->route6, l->name) && !streq_ptr(a->route6, l->path))
                        continue;
                /* a user's policy caps the apps below it; their traffic is said by them */
                if (streq(a->id, "user") || strncmp(a->id, "user:", 5) == 0)
                        continue;
                if (n++ > 0)
                        strncat(buf, ", ", size - strlen(buf) - 1);
                /* The two policies that are not apps, said as what they cover. */
                strncat(buf,
                        streq(a->id, "default")  ? "every other app"
                        : streq(a->id, "system") ? "system services"
                                                 : a->id,
                        size - strlen(buf) - 1);
        }
        if (n == 0)
                snprintf(buf, size,
                         "No app is routed over it now; the apps screen (3) says which may.");
        else
                strncat(buf, ".", size - strlen(buf) - 1);
}

/* A device's request to connect: right under the title, where it is seen even at 40x12 with
 * a long list; returns the rows used. */
static int draw_request(Tui *t, const P2pPeer *req, int y, int bottom)
{
        char text[512], pin[16];
        int top = y;

        if (streq_ptr(req->method, "display") && req->pin && *req->pin) {
                pin_words(req->pin, pin, sizeof(pin));
                snprintf(text, sizeof(text),
                         "%s (%s) asks to connect. To accept, press a and type %s on "
                         "it.",
                         p2p_peer_label(req), strempty(req->type), pin);
        } else if (streq_ptr(req->method, "keypad"))
                snprintf(text, sizeof(text),
                         "%s (%s) asks to connect and shows a PIN. To accept, press a "
                         "and type it.",
                         p2p_peer_label(req), strempty(req->type));
        else
                snprintf(text, sizeof(text), "%s (%s) asks to connect. Accept with a.",
                         p2p_peer_label(req), strempty(req->type));
        y += print_wrapped(t, y, bottom, THEME_WARNING, text);
        y += print_wrapped(t, y, bottom, THEME_HINT, "a: accept. r: reject.");
        y++;
        return y - top;
}

static void draw_details(Tui *t, DevicesData *d, int y, int bottom)
{
        const P2pPeer *p = selected_peer(d), *req = requesting_peer(d);
        char text[512], pin[16];

        if (*d->pin_for) {
                const P2pPeer *to = peer_at(d, d->pin_for);
                char typed[9] = "________";
                memcpy(typed, d->pin, strlen(d->pin));
                snprintf(text, sizeof(text), "Type the PIN %s shows: %s", p2p_peer_label(to),
                         typed);
                y += print_wrapped(t, y, bottom, THEME_TITLE, text);
                print_wrapped(t, y, bottom, THEME_HINT,
                              "Enter: connect. Esc: cancel. 4 or 8 digits.");
                return;
        }
        if (!p || p == req)
                return;
        if (streq_ptr(p->state, "connecting") && p->pin && *p->pin) {
                pin_words(p->pin, pin, sizeof(pin));
                snprintf(text, sizeof(text), "Type this PIN on %s: %s", p2p_peer_label(p), pin);
                print_wrapped(t, y, bottom, THEME_TITLE, text);
        } else if (streq_ptr(p->state, "connecting"))
                print_wrapped(t, y, bottom, THEME_NORMAL,
                              streq_ptr(p->method, "push-button")
                                  ? "Connecting: press the WiFi Direct (WPS) button on the "
                                    "device, or accept on its screen."
                                  : "Connecting...");
        else if (streq_ptr(p->state, "connected")) {
                char reach[160];
                reach_words(t, p, reach, sizeof(reach));
                snprintf(text, sizeof(text), "Connected to %s through %s: %s.", p2p_peer_label(p),
                         strempty(p->group), reach);
                y += print_wrapped(t, y, bottom, THEME_OK, text);
                apps_words(t, p, text, sizeof(text));
                y += print_wrapped(t, y, bottom, THEME_NORMAL, text);
                print_wrapped(t, y, bottom, THEME_HINT, "d disconnects.");
        } else if (p2p_reason_text(p)) {
                snprintf(text, sizeof(text), "Not connected: %s.", p2p_reason_text(p));
                print_wrapped(t, y, bottom, THEME_MUTED, text);
        }
}

static void devices_draw(Tui *t, Screen *s, int top, int height)
{
        DevicesData *d = s->data;
        const char *state = p2p_state(d);
        int bottom = top + height, y = top, sel = selected_index(d), first = 0;
        _cleanup_free_ int *idx = calloc(d->list.n + 1, sizeof(int));
        size_t n_shown;
        char text[256];

        if (!idx)
                return;
        n_shown = shown_peers(d, idx);

        if (streq(state, "unavailable") || !d->bus)
                snprintf(text, sizeof(text),
                         "WiFi Direct is not available: wpa_supplicant runs no P2P device. It "
                         "needs a WiFi card with WiFi Direct and wpa_supplicant running on it "
                         "(roamd finds it by itself once it runs).");
        else if (streq(state, "finding"))
                snprintf(text, sizeof(text), "Searching for WiFi Direct devices (s stops)...");
        else if (d->list.n == 0)
                snprintf(text, sizeof(text), "No WiFi Direct devices found yet. f searches.");
        else
                snprintf(text, sizeof(text), "%zu WiFi Direct device%s. f searches again.",
                         d->list.n, d->list.n == 1 ? "" : "s");
        y += print_wrapped(t, y, bottom, THEME_TITLE, text);
        if (d->list.n == 0 || y + 1 >= bottom)
                return;
        y++;
        if (requesting_peer(d) && !*d->pin_for) {
                y += draw_request(t, requesting_peer(d), y, bottom);
                if (y + 1 >= bottom)
                        return;
        }
        if (d->filter.text[0] || d->filter.editing) {
                snprintf(text, sizeof(text), "Filter: %s%s (%zu of %zu devices)", d->filter.text,
                         d->filter.editing ? "_" : "", n_shown, d->list.n);
                tui_print(t, y++, GUTTER, tui_columns(t) - GUTTER,
                          d->filter.editing ? THEME_KEY : THEME_NORMAL, text);
        }
        if (tui_columns(t) >= TABLE_MIN_COLUMNS) {
                int name_w = tui_columns(t) - GUTTER - COL_TYPE - COL_STATE - 26;
                tui_print(t, y, GUTTER, name_w, THEME_MUTED, "Name");
                tui_print(t, y, GUTTER + name_w + 1, COL_TYPE, THEME_MUTED, "Type");
                tui_print(t, y, GUTTER + name_w + 1 + COL_TYPE, COL_STATE, THEME_MUTED, "State");
                tui_print(t, y, GUTTER + name_w + 1 + COL_TYPE + COL_STATE, 24, THEME_MUTED,
                          "Connect by");
                y++;
        }
        /* Keep the selected row in view, leaving room below for a dialog line or two. */
        {
                int rows = MAX(1, bottom - y - 4), pos = position_of(idx, n_shown, sel);
                if (pos >= rows)
                        first = pos - rows + 1;
                for (int i = first; i < (int)n_shown && i - first < rows; i++)
                        draw_row(t, d, &d->list.peers[idx[i]], y++, idx[i] == sel);
        }
        if (y + 1 < bottom)
                draw_details(t, d, y + 1, bottom);
}

static const KeyHelp devices_keys[] = {
    {"f", "search", "Search for WiFi Direct devices for 30 seconds"},
    {"s", "stop", "Stop searching"},
    {"Enter", "connect",
     "Connect to the selected device: by its button when it has one, else by a PIN"},
    {"p", "show PIN", "Connect by a PIN roam shows, to type on the device"},
    {"e", "enter PIN", "Connect by the PIN the device shows, typed here"},
    {"a", "accept", "Accept the device that asks to connect"},
    {"r", "reject", "Reject the device that asks to connect"},
    {"d", "disconnect", "Disconnect from the selected device, or stop connecting"},
    {"Up/Down", NULL, "Select the previous or next device (also k and j)"},
    {"Esc", NULL, "Back to the overview (while typing a PIN: cancel; first clears a filter)"},
    {"/", NULL,
     "Show only the devices whose name, address, type or state contains what you type (Enter "
     "keeps it, Esc clears it, Ctrl-U clears the text typed)"},
    {},
};

static bool devices_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        DevicesData *d = s->data;
        const P2pPeer *p = selected_peer(d);
        const char *state = p2p_state(d);
        char c = k->keys[0];

        if (*d->pin_for)
                return false;
        if (streq(state, "unavailable") || !d->bus)
                return false;
        if (c == 'f')
                return !streq(state, "finding");
        if (c == 's')
                return streq(state, "finding");
        if (c == 'a' || c == 'r')
                return requesting_peer(d) != NULL;
        if (!p)
                return false;
        if (c == 'd')
                return streq_ptr(p->state, "connected") || streq_ptr(p->state, "connecting");
        if (c == 'E' || c == 'p' || c == 'e')
                return streq_ptr(p->state, "available");
        return true;
}

static const char *devices_available(Tui *t, Screen *s, char *why, size_t size)
{
        if (is_available(s->data))
                return NULL;
        snprintf(why, size, "roamd has no WiFi Direct device");
        return "off";
}

const ScreenVTable devices_screen_vtable = {
    .name = "devices",
    .title = "Devices",
    .short_title = "P2P",
    .number = 6,
    .data_size = sizeof(DevicesData),
    .enter = devices_enter,
    .leave = devices_leave,
    .draw = devices_draw,
    .key = devices_key,
    .model_changed = devices_model_changed,
    .keys = devices_keys,
    .typing_keys = tui_filter_typing_keys,
    .key_active = devices_key_active,
    .about = "WiFi Direct devices near by (a TV, a printer, a phone): search, then connect "
             "to one by its button or by a PIN, shown here or typed here. A device that asks "
             "to connect appears as a request to accept or reject. Connecting needs root, "
             "group netdev or polkit authorization; the status line says what roamd "
             "answered.",
    .available = devices_available,
    .roamd_appeared = devices_roamd_appeared,
    .roamd_gone = devices_roamd_gone,
    .done = devices_done,
};
