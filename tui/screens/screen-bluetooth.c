/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-client-bus.h"
#include "roam-format.h"
#include "roam-bluetooth.h"
#include "roam-bus.h"
#include "roam-screens.h"
#include "roam-tui-filter.h"
#include "roam-util.h"

/* Bluetooth (key 7): roamd's org.roam1.Bluetooth, read with GetAll once roamd is there and
 * again on each PropertiesChanged, also while another screen is shown (a pairing question or
 * an NFC tag then asks on the status line: see bt_asks()); every state in words. The pairing
 * agent's question is a dialog: yes/no, or a PIN/passkey typed here. Actions are asynchronous
 * calls; their failures come back as messages. */

#define COL_NAME  22
#define COL_KIND  11
#define ENTRY_MAX 16

typedef struct BtData {
        RoamBluetoothWatch *watch; /* the model (roam-bluetooth.c) */
        char *error;               /* why roamd's Bluetooth could not be read, NULL: read */
        const char *tab;           /* the reason word the header's tab last showed (NULL: none) */
        bool shown;                /* the current screen */
        bool asking;               /* what the status line last said: a question waits */
        uint32_t q_id;             /* the question the entry is typed for */
        int selected, scroll;      /* selected: a device's index in the model */
        TuiFilter filter;          /* `/`: the devices whose words contain the text */
        char entry[ENTRY_MAX + 1];
        Tui *tui;
} BtData;

static const RoamBluetooth no_bluetooth = {
    .last_event = (char *)"",
    .question = {.kind = (char *)"",
                 .address = (char *)"",
                 .name = (char *)"",
                 .value = (char *)""},
    .nfc_text = (char *)"",
};

/* The model, empty until roamd's Bluetooth was read. */
static const RoamBluetooth *bt_model(const BtData *b)
{
        return roam_bluetooth_watch_loaded(b->watch) ? roam_bluetooth_watch_get(b->watch)
                                                     : &no_bluetooth;
}

static sd_bus *bt_bus(const BtData *b)
{
        return roam_bluetooth_watch_get_bus(b->watch);
}

static const char *bt_available(Tui *t, Screen *s, char *why, size_t size);

static void on_changed(RoamBluetoothWatch *w, const sd_bus_error *error, void *userdata)
{
        BtData *b = userdata;
        const RoamBluetooth *bt = roam_bluetooth_watch_get(w);
        bool asking = bt->question.id != 0 || bt->nfc_id != 0;
        char why[256];
        const char *tab;

        free(b->error);
        b->error = error ? strdup(roam_bluetooth_error_words(error)) : NULL;
        if (bt->question.id != b->q_id)
                b->entry[0] = 0;
        b->q_id = bt->question.id;
        if (b->selected >= (int)bt->n_devices)
                b->selected = bt->n_devices > 0 ? (int)bt->n_devices - 1 : 0;
        /* Another screen redraws only for the status line's question, or for the header's
         * Bluetooth tab, whose reason word ("7:wait") would otherwise stay stale. */
        tab = b->tab;
        if (b->shown || b->asking != asking ||
            bt_available(b->tui, &(Screen){.data = b}, why, sizeof(why)) != tab)
                tui_request_redraw(b->tui);
        b->asking = asking;
}

static void bt_forget(BtData *b)
{
        b->watch = roam_bluetooth_watch_free(b->watch);
        free(b->error);
        b->error = NULL;
        b->q_id = 0;
        b->asking = false;
}

/* Follows roamd on the live model's bus (again after it reconnected), whichever screen is
 * shown: a question must reach the person wherever they are. */
static int bt_watch(Tui *t, BtData *b)
{
        sd_bus *bus = tui_bus(t);

        b->tui = t;
        if (b->watch && bus == bt_bus(b))
                return roam_bluetooth_watch_reload(b->watch);
        bt_forget(b);
        if (!bus)
                return 0; /* the status line says roamd is not reachable */
        return roam_bluetooth_watch_new(bus, on_changed, b, &b->watch);
}

static int bt_roamd_appeared(Tui *t, Screen *s)
{
        (void)bt_watch(t, s->data);
        return REACTION_REDRAW;
}

static void bt_done(Tui *t, Screen *s)
{
        if (s->data)
                bt_forget(s->data);
}

static void bt_leave(Tui *t, Screen *s)
{
        BtData *b = s->data;

        b->shown = false;
        b->entry[0] = 0; /* a half-typed PIN is not kept for later */
}

static int bt_enter(Tui *t, Screen *s)
{
        BtData *b = s->data;
        int r;

        b->shown = true;
        r = bt_watch(t, b);
        return r < 0 ? r : 0;
}

static int on_action_done(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        BtData *b = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (e && roam_bus_error_is_denied(e)) {
                char why[256];

                tui_message(b->tui, THEME_ERROR, "Not allowed to change Bluetooth: %s.",
                            roam_bus_denied_reason(e, why, sizeof(why)));
        } else if (e)
                tui_message(b->tui, THEME_ERROR, "%s", e->message ? e->message : e->name);
        /* roamd answers once the change is made: read the state again, so the screen never
         * waits on a PropertiesChanged that a reload in flight may have raced (an answered
         * NFC tag's question once stayed on screen after roamd had dropped it). */
        (void)roam_bluetooth_watch_reload(b->watch);
        return 0;
}

static int action(BtData *b, const char *method, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        if (!bt_bus(b))
                return -ENOTCONN;
        r = sd_bus_message_new_method_call(bt_bus(b), &m, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                           ROAM_BLUETOOTH_INTERFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                /* Floating: a pairing may outlive this screen; the answer comes as a message.
                 * b lives as long as the TUI (the screen's data), and so does the bus. */
                r = sd_bus_call_async(bt_bus(b), NULL, m, on_action_done, b, 120 * USEC_PER_SEC);
        return r;
}

static bool question_asks(const BtData *b)
{
        return b->q_id != 0 && !streq(bt_model(b)->question.kind, "show-pin") &&
               !streq(bt_model(b)->question.kind, "show-passkey");
}

/* The pairing agent's question comes first: an NFC offer's yes may be what started it. */
static bool nfc_asks(const BtData *b)
{
        return b->q_id == 0 && bt_model(b)->nfc_id != 0;
}

static bool question_entry(const BtData *b)
{
        return streq(bt_model(b)->question.kind, "enter-pin") ||
               streq(bt_model(b)->question.kind, "enter-passkey");
}

static void question_text(const BtData *b, char *buf, size_t size)
{
        if (roam_bt_question_is_secret(bt_model(b)->question.kind) &&
            !bt_model(b)->question.value[0])
                snprintf(buf, size, "Its code is shown only to users allowed to pair.");
        else if (streq(bt_model(b)->question.kind, "confirm"))
                snprintf(buf, size, "Does the device show passkey %s too?",
                         bt_model(b)->question.value);
        else if (streq(bt_model(b)->question.kind, "authorize"))
                snprintf(buf, size, "Pair without a code?");
        else if (streq(bt_model(b)->question.kind, "authorize-service")) {
                const char *name = roam_format_bt_service(bt_model(b)->question.value);

                if (name)
                        snprintf(buf, size, "Allow it to use its %s service?", name);
                else
                        snprintf(buf, size, "Allow it to use service %s?",
                                 bt_model(b)->question.value);
        } else if (streq(bt_model(b)->question.kind, "enter-pin"))
                snprintf(buf, size, "Type its PIN (often 0000 or 1234).");
        else if (streq(bt_model(b)->question.kind, "enter-passkey"))
                snprintf(buf, size, "Type the 6-digit passkey it shows.");
        else if (streq(bt_model(b)->question.kind, "show-pin"))
                snprintf(buf, size, "Type PIN %s on the device.", bt_model(b)->question.value);
        else
                snprintf(buf, size, "Type passkey %s on the device, then Enter there.",
                         bt_model(b)->question.value);
}

static bool device_shown(const BtData *b, const RoamBtDevice *row)
{
        const char *fields[] = {row->name,
                                row->address,
                                row->kind,
                                row->paired ? "paired" : "not paired",
                                row->connected ? "connected" : "not connected",
                                row->trusted ? "trusted" : "",
                                NULL};

        return tui_filter_match(&b->filter, fields);
}

/* The devices the filter lets through, in the model's order: their indexes in idx (room for
 * every device); returns how many, and *pos the selected one's place among them (-1: hidden). */
static size_t shown_devices(const BtData *b, size_t *idx, int *pos)
{
        size_t n = 0;

        *pos = -1;
        for (size_t i = 0; i < bt_model(b)->n_devices; i++)
                if (device_shown(b, &bt_model(b)->devices[i])) {
                        if ((int)i == b->selected)
                                *pos = (int)n;
                        idx[n++] = i;
                }
        return n;
}

static const char *const device_order[] = {"roamd's order"};

static int add_device(TuiDoc *d, const RoamBtDevice *row, int item, bool table)
{
        char state[160];
        int n, r;

        n = snprintf(state, sizeof(state), "%s, %s%s", row->paired ? "paired" : "not paired",
                     row->connected ? "connected" : "not connected",
                     row->trusted ? ", trusted" : "");
        if (row->battery >= 0)
                n += snprintf(state + n, sizeof(state) - (size_t)n, ", battery %d%%", row->battery);
        if (streq(row->network, "connected"))
                snprintf(state + n, sizeof(state) - (size_t)n, ", network on %s", row->interface);
        else if (streq(row->network, "available"))
                snprintf(state + n, sizeof(state) - (size_t)n, ", offers a network");

        r = tui_doc_line(d, item, table ? COL_NAME + COL_KIND : 2);
        if (r >= 0)
                r = tui_doc_span(d, THEME_NORMAL, table ? COL_NAME : 0, row->name);
        if (r >= 0 && !table)
                r = tui_doc_span(d, THEME_NORMAL, 0, " ");
        if (r >= 0)
                r = tui_doc_span(d, THEME_MUTED, table ? COL_KIND : 0, row->kind);
        if (r >= 0 && !table)
                r = tui_doc_line(d, item, 2);
        if (r >= 0)
                r = tui_doc_span(d, row->connected ? THEME_OK : THEME_NORMAL, 0, state);
        if (r >= 0)
                r = tui_doc_line(d, item, 2);
        if (r >= 0)
                r = tui_doc_spanf(d, THEME_MUTED, 0, "%s%s", table ? "" : "  ", row->address);
        if (r >= 0 && row->rssi != 127)
                r = tui_doc_spanf(d, THEME_MUTED, 0, ", signal %d dBm", row->rssi);
        return r;
}

/* A pairing question or a tag comes by itself: keys typed before it showed must not answer
 * it (roam-tui-ask.c). */
static bool question_settling(BtData *b)
{
        char id[32];

        snprintf(id, sizeof(id), nfc_asks(b) ? "nfc:%" PRIu32 : "bt:%" PRIu32,
                 nfc_asks(b) ? bt_model(b)->nfc_id : b->q_id);
        return tui_question_settling(b->tui, id);
}

static void draw_question(Tui *t, BtData *b, int top, int height)
{
        _cleanup_(tui_doc_freep) TuiDoc *d = NULL;
        char text[256];
        int width = MIN(tui_columns(t), 60), rows, scroll = 0, r;

        if (tui_doc_new(&d) < 0)
                return;
        (void)question_settling(b);
        if (nfc_asks(b)) {
                /* A tag neard read: what it holds in words, nothing done before a yes. */
                r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_TITLE, 0, "NFC tag");
                if (r >= 0)
                        r = tui_doc_line(d, 0, 0);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_NORMAL, 0, bt_model(b)->nfc_text);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_KEY, 0, "y yes  n no");
                goto draw;
        }
        question_text(b, text, sizeof(text));
        r = tui_doc_line(d, -1, 0);
        if (r >= 0)
                r = tui_doc_spanf(
                    d, THEME_TITLE, 0, "%s: %s",
                    streq(bt_model(b)->question.kind, "authorize-service") ? "Service" : "Pairing",
                    bt_model(b)->question.name);
        if (r >= 0)
                r = tui_doc_line(d, -1, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_MUTED, 0, bt_model(b)->question.address);
        if (r >= 0)
                r = tui_doc_line(d, 0, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_NORMAL, 0, text);
        if (r >= 0 && question_entry(b)) {
                r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(
                            d, THEME_NORMAL, 0, "%s: %s_",
                            streq(bt_model(b)->question.kind, "enter-pin") ? "PIN" : "Passkey",
                            b->entry);
        }
        if (r >= 0)
                r = tui_doc_line(d, -1, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_KEY, 0,
                                 question_entry(b)  ? "Enter send  Esc refuse"
                                 : question_asks(b) ? "y yes  n no"
                                                    : "Esc hide");
draw:
        if (r < 0)
                return;
        rows = tui_doc_rows_in(t, d, width - 4);
        if (tui_columns(t) >= width + 2 && height >= rows + 2) {
                int box_top = top + (height - rows - 2) / 2, left = (tui_columns(t) - width) / 2;
                const char *h = tui_utf8(t) ? "\u2500" : "-", *v = tui_utf8(t) ? "\u2502" : "|";

                /* A frame around the dialog; what it is, the title says in words. */
                for (int y = box_top; y < box_top + rows + 2; y++) {
                        bool edge = y == box_top || y == box_top + rows + 1;

                        tui_fill(t, y, left, width, THEME_NORMAL);
                        bool top_edge = y == box_top;
                        const char *cl = !tui_utf8(t) ? "+"
                                         : top_edge   ? "\u250c"
                                                      : "\u2514",
                                   *cr = !tui_utf8(t) ? "+"
                                         : top_edge   ? "\u2510"
                                                      : "\u2518";

                        tui_print(t, y, left, 1, THEME_MUTED, edge ? cl : v);
                        tui_print(t, y, left + width - 1, 1, THEME_MUTED, edge ? cr : v);
                        for (int x = left + 1; edge && x < left + width - 1; x++)
                                tui_print(t, y, x, 1, THEME_MUTED, h);
                }
                tui_doc_draw_box(t, d, box_top + 1, left + 1, rows, width - 2, 0, &scroll);
        } else {
                /* Too small for a box: the question takes the whole screen. */
                for (int y = top; y < top + height; y++)
                        tui_fill(t, y, 0, tui_columns(t), THEME_NORMAL);
                tui_doc_draw(t, d, top, height, 0, &scroll);
        }
}

static void bt_draw(Tui *t, Screen *s, int top, int height)
{
        BtData *b = s->data;
        const RoamBtAdapter *ad = roam_bluetooth_adapter(bt_model(b));
        _cleanup_(tui_doc_freep) TuiDoc *d = NULL;
        _cleanup_free_ size_t *idx = calloc(bt_model(b)->n_devices + 1, sizeof(size_t));
        bool table = tui_columns(t) >= 64;
        size_t n_shown = 0;
        int item = 0, sel = -1, r;

        if (!idx || tui_doc_new(&d) < 0)
                return;
        r = tui_doc_line(d, -1, 0);
        if (!bt_bus(b))
                r = tui_doc_span(d, THEME_WARNING, 0, "Not connected to roamd.");
        else if (!roam_bluetooth_watch_loaded(b->watch))
                r = tui_doc_span(d, THEME_NORMAL, 0, "Asking roamd about Bluetooth...");
        else if (b->error)
                r = tui_doc_span(d, THEME_WARNING, 0, b->error);
        else if (!bt_model(b)->available)
                r = tui_doc_span(d, THEME_WARNING, 0, "BlueZ is not running: no Bluetooth.");
        else if (!roam_bluetooth_adapter(bt_model(b)))
                r = tui_doc_span(d, THEME_WARNING, 0, "No Bluetooth adapter.");
        else {
                r = tui_doc_spanf(d, THEME_TITLE, 0, "Adapter %s (%s)", ad->id, ad->name);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 2);
                if (r >= 0)
                        r = tui_doc_spanf(d, ad->powered ? THEME_NORMAL : THEME_WARNING, 0,
                                          "%s, %s, %s, %s%s", ad->powered ? "on" : "off",
                                          ad->discoverable ? "visible" : "not visible",
                                          ad->pairable ? "pairable" : "not pairable",
                                          ad->scanning ? "scanning" : "not scanning",
                                          bt_model(b)->agent ? "" : "; no pairing agent");
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_TITLE, 0, "Devices (%zu)",
                                          bt_model(b)->n_devices);
                n_shown = shown_devices(b, idx, &sel);
                if (r >= 0)
                        r = tui_filter_line(t, &b->filter, d, n_shown, bt_model(b)->n_devices,
                                            "devices", device_order);
                if (r >= 0 && bt_model(b)->n_devices == 0) {
                        r = tui_doc_line(d, -1, 2);
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_MUTED, 0, "None known: s scans.");
                }
                for (size_t i = 0; r >= 0 && i < n_shown; i++)
                        r = add_device(d, &bt_model(b)->devices[idx[i]], item++, table);
                if (r >= 0 && *bt_model(b)->last_event) {
                        r = tui_doc_line(d, -1, 0);
                        if (r >= 0)
                                r = tui_doc_line(d, -1, 6);
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_NORMAL, 0, "Last: ");
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_NORMAL, 0, bt_model(b)->last_event);
                }
        }
        if (r < 0)
                return;
        tui_doc_draw(t, d, top, height, sel, &b->scroll);
        if (b->q_id != 0 || bt_model(b)->nfc_id != 0)
                draw_question(t, b, top, height);
}

static int answer(BtData *b, bool accept)
{
        int r = action(b, "Answer", "ubs", b->q_id, accept, accept ? b->entry : "");

        b->entry[0] = 0;
        return r < 0 ? r : REACTION_REDRAW;
}

static int question_key(BtData *b, int key)
{
        size_t n = strlen(b->entry);
        bool list_key = false;

        if (question_settling(b) && key != 'q' && key != 'Q' && key != 12 &&
            key != TUI_KEY(KEY_RESIZE) && key != TUI_KEY(KEY_MOUSE)) {
                tui_message(b->tui, THEME_WARNING,
                            "A question just came: keys wait a moment, so none typed before "
                            "it answers it.");
                return REACTION_REDRAW;
        }
        if (nfc_asks(b) &&
            (key == 'y' || key == 'n' || key == '\n' || key == '\r' || key == TUI_KEY_ESCAPE)) {
                int r = action(b, "AnswerNfc", "ub", bt_model(b)->nfc_id,
                               key == 'y' || key == '\n' || key == '\r');
                return r < 0 ? r : REACTION_REDRAW;
        }
        if (nfc_asks(b)) {
                if ((key > 0 && key < 0x80 && strchr("ptcnxso", key)) ||
                    tui_list_key(key, 0, 1, &list_key) >= 0 || list_key)
                        return REACTION_NONE;
                return REACTION_UNHANDLED;
        }
        if (!question_asks(b)) /* a display: Esc hides it (roamd closes it with the pairing) */
                return key == TUI_KEY_ESCAPE ? answer(b, false) : REACTION_UNHANDLED;
        if (question_entry(b)) {
                if (key == '\n' || key == '\r' || key == TUI_KEY(KEY_ENTER))
                        return n > 0 ? answer(b, true) : REACTION_NONE;
                if (key == TUI_KEY_ESCAPE)
                        return answer(b, false);
                if (key == TUI_KEY(KEY_BACKSPACE) || key == 127 || key == 8) {
                        if (n > 0)
                                b->entry[n - 1] = 0;
                        return REACTION_REDRAW;
                }
                if (key > 0x20 && key < 0x7f && n < ENTRY_MAX &&
                    (streq(bt_model(b)->question.kind, "enter-pin") ||
                     (key >= '0' && key <= '9' && n < 6))) {
                        b->entry[n] = (char)key, b->entry[n + 1] = 0;
                        return REACTION_REDRAW;
                }
                return REACTION_NONE; /* nothing else while typing */
        }
        if (key == 'y' || key == '\n' || key == '\r')
                return answer(b, true);
        if (key == 'n' || key == TUI_KEY_ESCAPE)
                return answer(b, false);
        /* The dialog takes the screen's own keys; quit, help and the screen numbers work. */
        if ((key > 0 && key < 0x80 && strchr("ptcnxso", key)) ||
            tui_list_key(key, 0, 1, &list_key) >= 0 || list_key)
                return REACTION_NONE;
        return REACTION_UNHANDLED;
}

/* Removing a device forgets its pairing: getting it back means pairing again on both sides,
 * so it asks first (y/N). */
static int confirmed_remove(Tui *t, void *userdata, const char *address)
{
        int r = action(userdata, "Remove", "s", address);

        return r < 0 ? r : REACTION_NONE;
}

static int bt_key(Tui *t, Screen *s, int key)
{
        BtData *b = s->data;
        _cleanup_free_ size_t *idx = NULL;
        const RoamBtDevice *row;
        bool handled;
        int i, r, pos;
        size_t n;

        if (b->q_id != 0 || bt_model(b)->nfc_id != 0) {
                r = question_key(b, key);
                if (r != REACTION_UNHANDLED)
                        return r;
        }
        idx = calloc(bt_model(b)->n_devices + 1, sizeof(size_t));
        if (!idx)
                return -ENOMEM;
        if (key != 's' || b->filter.editing) {
                r = tui_filter_key(t, &b->filter, key, 1, device_order);
                if (r != REACTION_UNHANDLED) {
                        /* a hidden device is not the one the keys act on: the first shown is */
                        if (shown_devices(b, idx, &pos) > 0 && pos < 0)
                                b->selected = (int)idx[0];
                        return r;
                }
        }
        n = shown_devices(b, idx, &pos);
        i = tui_list_key(key, MAX(pos, 0), (int)n, &handled);
        if (handled) {
                if (i >= 0)
                        b->selected = (int)idx[i];
                return REACTION_REDRAW;
        }
        if (key == 's')
                return (r = action(b, "StartDiscovery", "su", "", 10)) < 0 ? r : REACTION_NONE;
        if (key == 'o')
                return (r = action(b, "SetAdapter", "ssb", "", "Powered",
                                   !(roam_bluetooth_adapter(bt_model(b)) &&
                                     roam_bluetooth_adapter(bt_model(b))->powered))) < 0
                           ? r
                           : REACTION_NONE;
        row = pos >= 0 ? &bt_model(b)->devices[b->selected] : NULL;
        if (!row || key <= 0 || key >= 0x80 || !strchr("ptcnx", key))
                return REACTION_UNHANDLED;
        if (key == 'p')
                r = action(b, "Pair", "s", row->address);
        else if (key == 't')
                r = action(b, "SetTrusted", "sb", row->address, !row->trusted);
        else if (key == 'c')
                r = action(b, row->connected ? "Disconnect" : "Connect", "s", row->address);
        else if (key == 'n')
                r = action(
                    b, streq(row->network, "connected") ? "DisconnectNetwork" : "ConnectNetwork",
                    "s", row->address);
        else {
                _cleanup_free_ char *q = NULL, *no = NULL;

                if (asprintf(&q, "Remove %s (%s)? It is forgotten, with any pairing.", row->name,
                             row->address) < 0 ||
                    asprintf(&no, "Not done: %s is kept.", row->name) < 0)
                        return -ENOMEM;
                return tui_confirm(t, row->address, confirmed_remove, b, q, no);
        }
        return r < 0 ? r : REACTION_NONE;
}

static bool bt_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        BtData *b = s->data;
        bool row = bt_model(b)->n_devices > 0;

        if (b->q_id != 0 || bt_model(b)->nfc_id != 0)
                return false;
        /* Without BlueZ or an adapter no key but the arrows does anything: none is offered. */
        if ((!bt_model(b)->available || !roam_bluetooth_adapter(bt_model(b))) && k->keys[1] == 0 &&
            strchr("sptcnxo", k->keys[0]))
                return false;
        if (k->keys[0] && strchr("ptcnx", k->keys[0]) && k->keys[1] == 0)
                return row;
        return true;
}

static bool bt_asks(Tui *t, Screen *s, char *buf, size_t size)
{
        BtData *b = s->data;
        char q[400];

        if (b->q_id != 0) {
                roam_bt_question_sentence(&bt_model(b)->question, q, sizeof(q));
                snprintf(buf, size, "Bluetooth: %s.", q);
                return true;
        }
        if (bt_model(b)->nfc_id != 0) {
                snprintf(buf, size, "An NFC tag asks: %s", bt_model(b)->nfc_text);
                return true;
        }
        return false;
}

static const KeyHelp bt_keys[] = {
    {"Up/Down", NULL, "Select a device"},
    {"s", "scan", "Look for devices for 10 seconds"},
    {"p", "pair", "Pair with the selected device; its questions appear here"},
    {"c", "connect", "Connect or disconnect the selected device"},
    {"t", "trust", "Trust the device (it may connect without asking), or stop trusting it"},
    {"n", "net", "Join or leave the selected device's network (Bluetooth tethering)"},
    {"x", "remove", "Remove the device: forget its pairing (asks first)"},
    {"o", "adapter", "Switch the adapter on or off"},
    {"/", NULL,
     "Show only the devices whose name, address, kind or state contains what you type (Enter "
     "keeps it, Esc clears it, Ctrl-U clears the text typed)"},
    {"y / n", NULL,
     "A pairing question or an NFC tag: yes or no; PIN and passkey: type, then Enter"},
    {},
};

static const char *bt_available(Tui *t, Screen *s, char *why, size_t size)
{
        BtData *b = s->data;
        const char *word;

        if (!bt_bus(b) || !roam_bluetooth_watch_loaded(b->watch)) {
                snprintf(why, size, "roamd's Bluetooth state is being read");
                word = "wait";
        } else if (b->error) {
                snprintf(why, size, "%s", b->error);
                word = "error";
        } else if (!bt_model(b)->available) {
                snprintf(why, size, "BlueZ is not running");
                word = "off";
        } else if (!roam_bluetooth_adapter(bt_model(b))) {
                snprintf(why, size, "no Bluetooth adapter");
                word = "none";
        } else
                return b->tab = NULL;
        /* No full stop: the sentence goes on after it. */
        size_t n = strlen(why);
        if (n > 0 && why[n - 1] == '.')
                why[n - 1] = 0;
        return b->tab = word;
}

const ScreenVTable bluetooth_screen_vtable = {
    .name = "bluetooth",
    .title = "Bluetooth",
    .short_title = "BT",
    .number = 7,
    .data_size = sizeof(BtData),
    .enter = bt_enter,
    .leave = bt_leave,
    .draw = bt_draw,
    .key = bt_key,
    .keys = bt_keys,
    .typing_keys = tui_filter_typing_keys,
    .key_active = bt_key_active,
    .asks = bt_asks,
    .about = "Bluetooth through roamd and BlueZ: the adapter, every known device with what it "
             "is, whether it is paired, trusted and connected, its battery and signal, and "
             "whether it shares a network. Pairing questions (compare a passkey, type a PIN) "
             "appear here as a dialog, whoever started the pairing; unanswered, roamd refuses "
             "them after a while. A tag touched to the NFC reader asks here before its "
             "device is paired or its WiFi network added.",
    .available = bt_available,
    .roamd_appeared = bt_roamd_appeared,
    .done = bt_done,
};
