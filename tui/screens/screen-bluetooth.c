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
#include "roam-bt-cli.h"
#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-screens.h"
#include "roam-util.h"

/* Bluetooth (key 7): roamd's org.roam1.Bluetooth, read with GetAll once roamd is there and
 * again on each PropertiesChanged, also while another screen is shown (a pairing question or
 * an NFC tag then asks on the status line: see bt_asks()); every state in words. The pairing
 * agent's question is a dialog: yes/no, or a PIN/passkey typed here. Actions are asynchronous
 * calls; their failures come back as messages. */

#define COL_NAME  22
#define COL_KIND  11
#define ENTRY_MAX 16

typedef struct BtRow {
        char *address, *name, *kind, *network, *interface;
        int16_t rssi;
        int paired, trusted, connected;
        int32_t battery;
} BtRow;

typedef struct BtData {
        sd_bus *bus;
        sd_bus_slot *match, *load;
        bool loaded, available, agent, has_adapter;
        const char *tab; /* the reason word the header's tab last showed (NULL: none) */
        bool shown;      /* the current screen */
        bool asking;     /* what the status line last said: a question waits */
        char *error;
        char adapter[32], adapter_name[64];
        int powered, discoverable, pairable, scanning;
        BtRow *rows;
        size_t n_rows;
        uint32_t q_id;
        char q_kind[32], q_address[18], q_name[128], q_value[64];
        uint32_t nfc_id; /* a tag from neard waiting for a yes or no, 0: none */
        char nfc_text[1024];
        char *last;
        int selected, scroll;
        char entry[ENTRY_MAX + 1];
        Tui *tui;
} BtData;

static void rows_free(BtData *b)
{
        for (size_t i = 0; i < b->n_rows; i++) {
                free(b->rows[i].address);
                free(b->rows[i].name);
                free(b->rows[i].kind);
                free(b->rows[i].network);
                free(b->rows[i].interface);
        }
        free(b->rows);
        b->rows = NULL;
        b->n_rows = 0;
}

static int read_devices(BtData *b, sd_bus_message *m)
{
        const char *address, *adapter, *name, *kind, *network, *iface;
        BtRow row;
        int r;

        rows_free(b);
        r = sd_bus_message_enter_container(m, 'a', "(ssssnbbbiss)");
        while (r >= 0 &&
               (r = sd_bus_message_read(m, "(ssssnbbbiss)", &address, &adapter, &name, &kind,
                                        &row.rssi, &row.paired, &row.trusted, &row.connected,
                                        &row.battery, &network, &iface)) > 0) {
                BtRow *n = realloc(b->rows, sizeof(*n) * (b->n_rows + 1));
                if (!n)
                        return -ENOMEM;
                b->rows = n;
                row.address = strdup(address);
                row.name = strdup(name);
                row.kind = strdup(kind);
                row.network = strdup(network);
                row.interface = strdup(iface);
                b->rows[b->n_rows++] = row;
                if (!row.address || !row.name || !row.kind || !row.network || !row.interface)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int read_adapters(BtData *b, sd_bus_message *m)
{
        const char *id, *address, *alias;
        int powered, discoverable, pairable, scanning, r;

        b->has_adapter = false;
        r = sd_bus_message_enter_container(m, 'a', "(sssbbbb)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(sssbbbb)", &id, &address, &alias, &powered,
                                                  &discoverable, &pairable, &scanning)) > 0) {
                /* The first adapter is shown (roamd's default is the first powered one; one
                 * adapter is the common case). */
                if (b->has_adapter)
                        continue;
                b->has_adapter = true;
                snprintf(b->adapter, sizeof(b->adapter), "%s", id);
                snprintf(b->adapter_name, sizeof(b->adapter_name), "%s", alias);
                b->powered = powered, b->discoverable = discoverable;
                b->pairable = pairable, b->scanning = scanning;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

static int set_question(sd_bus_message *m, const char *key, void *field)
{
        const char *kind, *address, *qname, *value;
        BtData *b = field;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "(ussss)", &id, &kind, &address, &qname, &value);
        if (r < 0)
                return r;
        if (id != b->q_id)
                b->entry[0] = 0;
        b->q_id = id;
        snprintf(b->q_kind, sizeof(b->q_kind), "%s", kind);
        snprintf(b->q_address, sizeof(b->q_address), "%s", address);
        snprintf(b->q_name, sizeof(b->q_name), "%s", qname);
        snprintf(b->q_value, sizeof(b->q_value), "%s", value);
        /* the passkey or PIN is not in the property: asked for */
        if (roam_bt_question_is_secret(kind)) {
                _cleanup_free_ char *secret = NULL;
                BtQuestion bq = {id, kind, address, qname, value};
                if (roam_bt_question_secret(b->bus, &bq, &secret) >= 0)
                        snprintf(b->q_value, sizeof(b->q_value), "%s", secret);
        }
        return 0;
}

static int set_nfc_offer(sd_bus_message *m, const char *key, void *field)
{
        BtData *b = field;
        const char *s;
        uint32_t id;
        int r = sd_bus_message_read(m, "(us)", &id, &s);

        if (r >= 0) {
                b->nfc_id = id;
                snprintf(b->nfc_text, sizeof(b->nfc_text), "%s", s);
        }
        return r;
}

static int set_adapters(sd_bus_message *m, const char *key, void *field)
{
        return read_adapters(field, m);
}

static int set_devices(sd_bus_message *m, const char *key, void *field)
{
        return read_devices(field, m);
}

static const BusMapEntry bt_map[] = {
    {"Available", "b", bus_map_bool, offsetof(BtData, available)},
    {"AgentRegistered", "b", bus_map_bool, offsetof(BtData, agent)},
    {"LastEvent", "s", bus_map_string, offsetof(BtData, last)},
    {"Question", "(ussss)", set_question, 0},
    {"NfcOffer", "(us)", set_nfc_offer, 0},
    {"Adapters", "a(sssbbbb)", set_adapters, 0},
    {"Devices", "a(ssssnbbbiss)", set_devices, 0},
    {},
};

static int read_all(BtData *b, sd_bus_message *m)
{
        return bus_map_read(m, bt_map, b);
}

static int load(BtData *b);

static const char *bt_available(Tui *t, Screen *s, char *why, size_t size);

static int on_loaded(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        char why[256];
        const char *tab;

        BtData *b = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        b->load = sd_bus_slot_unref(b->load);
        free(b->error);
        b->error = NULL;
        if (e)
                b->error = strdup(sd_bus_error_has_name(e, SD_BUS_ERROR_UNKNOWN_OBJECT)
                                      ? "roamd runs without Bluetooth ([Bluetooth] Enable=no)."
                                      : (e->message ? e->message : e->name));
        else if (read_all(b, m) < 0)
                b->error = strdup("roamd's answer could not be read.");
        b->loaded = true;
        if (b->selected >= (int)b->n_rows)
                b->selected = b->n_rows > 0 ? (int)b->n_rows - 1 : 0;
        /* Another screen redraws only for the status line's question, or for the header's
         * Bluetooth tab, whose reason word ("7:wait") would otherwise stay stale. */
        tab = b->tab;
        if (b->shown || b->asking != (b->q_id != 0 || b->nfc_id != 0) ||
            bt_available(b->tui, &(Screen){.data = b}, why, sizeof(why)) != tab)
                tui_request_redraw(b->tui);
        b->asking = b->q_id != 0 || b->nfc_id != 0;
        return 0;
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        (void)load(userdata);
        return 0;
}

static int load(BtData *b)
{
        if (!b->bus)
                return -ENOTCONN;
        /* Every change reads the whole state again: a few devices, and never a stale mix. */
        b->load = sd_bus_slot_unref(b->load);
        return sd_bus_call_method_async(b->bus, &b->load, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                        "org.freedesktop.DBus.Properties", "GetAll", on_loaded, b,
                                        "s", ROAM_BLUETOOTH_INTERFACE);
}

static void bt_forget(BtData *b)
{
        b->match = sd_bus_slot_unref(b->match);
        b->load = sd_bus_slot_unref(b->load);
        b->bus = sd_bus_unref(b->bus);
        rows_free(b);
        free(b->error);
        b->error = NULL;
        free(b->last);
        b->last = NULL;
        b->loaded = b->has_adapter = false;
        b->q_id = b->nfc_id = 0;
        b->asking = false;
}

/* Follows roamd on the live model's bus (again after it reconnected), whichever screen is
 * shown: a question must reach the person wherever they are. */
static int bt_watch(Tui *t, BtData *b)
{
        sd_bus *bus = tui_bus(t);
        int r;

        b->tui = t;
        if (b->bus && bus == b->bus && b->match)
                return load(b);
        bt_forget(b);
        if (!bus)
                return 0; /* the status line says roamd is not reachable */
        b->bus = sd_bus_ref(bus);
        r = sd_bus_match_signal_async(b->bus, &b->match, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                      "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                      on_changed, NULL, b);
        if (r >= 0)
                r = load(b);
        return r;
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
        if (b->bus)
                (void)load(b);
        return 0;
}

static int action(BtData *b, const char *method, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        if (!b->bus)
                return -ENOTCONN;
        r = sd_bus_message_new_method_call(b->bus, &m, ROAM_BUS_NAME, ROAM_BLUETOOTH_PATH,
                                           ROAM_BLUETOOTH_INTERFACE, method);
        if (r >= 0 && types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                /* Floating: a pairing may outlive this screen; the answer comes as a message.
                 * b lives as long as the TUI (the screen's data), and so does the bus. */
                r = sd_bus_call_async(b->bus, NULL, m, on_action_done, b, 120 * USEC_PER_SEC);
        return r;
}

static bool question_asks(const BtData *b)
{
        return b->q_id != 0 && !streq(b->q_kind, "show-pin") && !streq(b->q_kind, "show-passkey");
}

/* The pairing agent's question comes first: an NFC offer's yes may be what started it. */
static bool nfc_asks(const BtData *b)
{
        return b->q_id == 0 && b->nfc_id != 0;
}

static bool question_entry(const BtData *b)
{
        return streq(b->q_kind, "enter-pin") || streq(b->q_kind, "enter-passkey");
}

static void question_text(const BtData *b, char *buf, size_t size)
{
        if (roam_bt_question_is_secret(b->q_kind) && !b->q_value[0])
                snprintf(buf, size, "Its code is shown only to users allowed to pair.");
        else if (streq(b->q_kind, "confirm"))
                snprintf(buf, size, "Does the device show passkey %s too?", b->q_value);
        else if (streq(b->q_kind, "authorize"))
                snprintf(buf, size, "Pair without a code?");
        else if (streq(b->q_kind, "authorize-service")) {
                const char *name = roam_format_bt_service(b->q_value);

                if (name)
                        snprintf(buf, size, "Allow it to use its %s service?", name);
                else
                        snprintf(buf, size, "Allow it to use service %s?", b->q_value);
        } else if (streq(b->q_kind, "enter-pin"))
                snprintf(buf, size, "Type its PIN (often 0000 or 1234).");
        else if (streq(b->q_kind, "enter-passkey"))
                snprintf(buf, size, "Type the 6-digit passkey it shows.");
        else if (streq(b->q_kind, "show-pin"))
                snprintf(buf, size, "Type PIN %s on the device.", b->q_value);
        else
                snprintf(buf, size, "Type passkey %s on the device, then Enter there.", b->q_value);
}

static int add_device(TuiDoc *d, const BtRow *row, int item, bool table)
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
                 nfc_asks(b) ? b->nfc_id : b->q_id);
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
                        r = tui_doc_span(d, THEME_NORMAL, 0, b->nfc_text);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_span(d, THEME_KEY, 0, "y yes  n no");
                goto draw;
        }
        question_text(b, text, sizeof(text));
        r = tui_doc_line(d, -1, 0);
        if (r >= 0)
                r = tui_doc_spanf(d, THEME_TITLE, 0, "%s: %s",
                                  streq(b->q_kind, "authorize-service") ? "Service" : "Pairing",
                                  b->q_name);
        if (r >= 0)
                r = tui_doc_line(d, -1, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_MUTED, 0, b->q_address);
        if (r >= 0)
                r = tui_doc_line(d, 0, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_NORMAL, 0, text);
        if (r >= 0 && question_entry(b)) {
                r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_NORMAL, 0, "%s: %s_",
                                          streq(b->q_kind, "enter-pin") ? "PIN" : "Passkey",
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
        _cleanup_(tui_doc_freep) TuiDoc *d = NULL;
        bool table = tui_columns(t) >= 64;
        int item = 0, r;

        if (tui_doc_new(&d) < 0)
                return;
        r = tui_doc_line(d, -1, 0);
        if (!b->bus)
                r = tui_doc_span(d, THEME_WARNING, 0, "Not connected to roamd.");
        else if (!b->loaded)
                r = tui_doc_span(d, THEME_NORMAL, 0, "Asking roamd about Bluetooth...");
        else if (b->error)
                r = tui_doc_span(d, THEME_WARNING, 0, b->error);
        else if (!b->available)
                r = tui_doc_span(d, THEME_WARNING, 0, "BlueZ is not running: no Bluetooth.");
        else if (!b->has_adapter)
                r = tui_doc_span(d, THEME_WARNING, 0, "No Bluetooth adapter.");
        else {
                r = tui_doc_spanf(d, THEME_TITLE, 0, "Adapter %s (%s)", b->adapter,
                                  b->adapter_name);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 2);
                if (r >= 0)
                        r = tui_doc_spanf(d, b->powered ? THEME_NORMAL : THEME_WARNING, 0,
                                          "%s, %s, %s, %s%s", b->powered ? "on" : "off",
                                          b->discoverable ? "visible" : "not visible",
                                          b->pairable ? "pairable" : "not pairable",
                                          b->scanning ? "scanning" : "not scanning",
                                          b->agent ? "" : "; no pairing agent");
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_line(d, -1, 0);
                if (r >= 0)
                        r = tui_doc_spanf(d, THEME_TITLE, 0, "Devices (%zu)", b->n_rows);
                if (r >= 0 && b->n_rows == 0) {
                        r = tui_doc_line(d, -1, 2);
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_MUTED, 0, "None known: s scans.");
                }
                for (size_t i = 0; r >= 0 && i < b->n_rows; i++)
                        r = add_device(d, &b->rows[i], item++, table);
                if (r >= 0 && b->last && *b->last) {
                        r = tui_doc_line(d, -1, 0);
                        if (r >= 0)
                                r = tui_doc_line(d, -1, 6);
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_NORMAL, 0, "Last: ");
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_NORMAL, 0, b->last);
                }
        }
        if (r < 0)
                return;
        tui_doc_draw(t, d, top, height, b->n_rows > 0 ? b->selected : -1, &b->scroll);
        if (b->q_id != 0 || b->nfc_id != 0)
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
                int r = action(b, "AnswerNfc", "ub", b->nfc_id,
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
                    (streq(b->q_kind, "enter-pin") || (key >= '0' && key <= '9' && n < 6))) {
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
        const BtRow *row;
        bool handled;
        int i, r;

        if (b->q_id != 0 || b->nfc_id != 0) {
                r = question_key(b, key);
                if (r != REACTION_UNHANDLED)
                        return r;
        }
        i = tui_list_key(key, b->selected, (int)b->n_rows, &handled);
        if (handled) {
                if (i >= 0)
                        b->selected = i;
                return REACTION_REDRAW;
        }
        if (key == 's')
                return (r = action(b, "StartDiscovery", "su", "", 10)) < 0 ? r : REACTION_NONE;
        if (key == 'o')
                return (r = action(b, "SetAdapter", "ssb", "", "Powered", !b->powered)) < 0
                           ? r
                           : REACTION_NONE;
        row = b->n_rows > 0 && b->selected < (int)b->n_rows ? &b->rows[b->selected] : NULL;
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
        bool row = b->n_rows > 0;

        if (b->q_id != 0 || b->nfc_id != 0)
                return false;
        /* Without BlueZ or an adapter no key but the arrows does anything: none is offered. */
        if ((!b->available || !b->has_adapter) && k->keys[1] == 0 && strchr("sptcnxo", k->keys[0]))
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
                BtQuestion bq = {b->q_id, b->q_kind, b->q_address, b->q_name, b->q_value};

                roam_bt_question_sentence(&bq, q, sizeof(q));
                snprintf(buf, size, "Bluetooth: %s.", q);
                return true;
        }
        if (b->nfc_id != 0) {
                snprintf(buf, size, "An NFC tag asks: %s", b->nfc_text);
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
    {"y / n", NULL,
     "A pairing question or an NFC tag: yes or no; PIN and passkey: type, then Enter"},
    {},
};

static const char *bt_available(Tui *t, Screen *s, char *why, size_t size)
{
        BtData *b = s->data;
        const char *word;

        if (!b->bus || !b->loaded) {
                snprintf(why, size, "roamd's Bluetooth state is being read");
                word = "wait";
        } else if (b->error) {
                snprintf(why, size, "%s", b->error);
                word = "error";
        } else if (!b->available) {
                snprintf(why, size, "BlueZ is not running");
                word = "off";
        } else if (!b->has_adapter) {
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
