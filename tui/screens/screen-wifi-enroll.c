/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-qr.h"
#include "roam-screens.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roam-wifi.h"

/* Wi-Fi Easy Connect (e on the Wi-Fi screen; docs/wifi.md "Enroll"): roamd's Enroll on the
 * selected Wi-Fi link, this device's DPP: code drawn as a QR code for a phone that is on the
 * network to scan (with the text under it), then the join of what the phone sent, in words,
 * as the Wi-Fi screen says a join. Esc goes back to the networks; leaving the screen while the
 * code waits cancels the enrollment (JoinCancel: the owner stops listening). The code needs more
 * rows than 80x24 has in half blocks: a smaller terminal gets the text and says how many rows the
 * drawing needs. */

typedef enum EnrollState {
        ENROLL_ASKING,  /* Enroll sent */
        ENROLL_WAITING, /* the code is shown: a configurator is awaited */
        ENROLL_JOINING, /* the configurator sent a network: the join's steps */
        ENROLL_DONE,    /* JoinDone, or roamd refused */
} EnrollState;

typedef struct EnrollData {
        Tui *tui;
        RoamWifiWatch *watch;
        EnrollState state;
        uint32_t join_id;
        char *uri;
        char **qr;
        size_t n_qr;
        char words[256];
        ThemeRole role;
        int scroll;
} EnrollData;

static void enroll_reset(EnrollData *d)
{
        d->watch = roam_wifi_watch_free(d->watch);
        free(d->uri);
        d->uri = NULL;
        d->qr = strv_free(d->qr);
        d->n_qr = 0;
        d->join_id = 0;
        d->words[0] = 0;
}

static void on_event(RoamWifiWatch *w, const WifiEvent *ev, void *userdata)
{
        EnrollData *d = userdata;
        Tui *t = d->tui;

        switch (ev->type) {
        case WIFI_EVENT_REPLIED:
                if (!streq(ev->a, "Enroll"))
                        break;
                if (ev->error) {
                        d->state = ENROLL_DONE;
                        d->role = THEME_ERROR;
                        snprintf(d->words, sizeof(d->words), "Cannot enroll: %s",
                                 ev->error->message ? ev->error->message : ev->error->name);
                        roam_text_mark_inplace(d->words);
                        break;
                }
                d->join_id = ev->id;
                d->uri = strdup(strempty(ev->b));
                if (d->uri)
                        roam_text_mark_inplace(d->uri);
                if (d->uri && roam_qr_lines(d->uri, tui_utf8(t), &d->qr, &d->n_qr) < 0)
                        d->n_qr = 0;
                d->state = ENROLL_WAITING;
                d->role = THEME_STATUS;
                snprintf(d->words, sizeof(d->words),
                         "Scan this code with a phone that is on the network (Wi-Fi Easy "
                         "Connect: Settings, Wi-Fi, the network, share or add a device). "
                         "Waiting up to 2 minutes%s",
                         tui_glyph_ellipsis(t));
                break;
        case WIFI_EVENT_JOIN_STEP:
                if (ev->id != d->join_id || streq(ev->a, "enrolling"))
                        break;
                d->state = ENROLL_JOINING;
                d->role = THEME_STATUS;
                snprintf(d->words, sizeof(d->words), "The phone sent a network. Joining it: %s%s",
                         ev->b, tui_glyph_ellipsis(t));
                roam_text_mark_inplace(d->words);
                break;
        case WIFI_EVENT_JOIN_DONE: {
                WifiJoinResult res = wifi_join_result_from_string(ev->a);

                if (ev->id != d->join_id)
                        break;
                d->state = ENROLL_DONE;
                d->join_id = 0;
                d->role =
                    res == WIFI_JOIN_CONNECTED || res == WIFI_JOIN_PORTAL ? THEME_OK : THEME_ERROR;
                snprintf(d->words, sizeof(d->words), "%s", *strempty(ev->b) ? ev->b : ev->a);
                roam_text_mark_inplace(d->words);
                tui_message(t, d->role, "%s", d->words);
                break;
        }
        case WIFI_EVENT_CHANGED:
        case WIFI_EVENT_NEEDS_SECRET: /* never for an enrollment: the phone gave the key */
        case _WIFI_EVENT_MAX:
        case _WIFI_EVENT_INVALID:
                break;
        }
        tui_request_redraw(t);
}

static int enroll_enter(Tui *t, Screen *s)
{
        EnrollData *d = s->data;
        const char *path = tui_selected_link(t);
        sd_bus *bus = tui_bus(t);
        int r;

        d->tui = t;
        enroll_reset(d);
        d->state = ENROLL_ASKING;
        d->role = THEME_STATUS;
        d->scroll = 0;
        snprintf(d->words, sizeof(d->words), "Asking roamd for this device's code%s",
                 tui_glyph_ellipsis(t));
        r = bus && path ? roam_wifi_watch_new(bus, path, on_event, d, &d->watch) : -ENOTCONN;
        if (r >= 0)
                r = roam_wifi_watch_enroll(d->watch);
        if (r < 0) {
                d->state = ENROLL_DONE;
                d->role = THEME_ERROR;
                snprintf(d->words, sizeof(d->words), "Cannot ask roamd: %s.", strerror(-r));
        }
        return 0;
}

static void enroll_stop(EnrollData *d)
{
        /* leaving while the code waits (or the join runs) ends the enrollment */
        if (d->join_id && d->watch)
                (void)roam_wifi_watch_cancel(d->watch, d->join_id);
        d->join_id = 0;
}

static void enroll_leave(Tui *t, Screen *s)
{
        EnrollData *d = s->data;

        if (!d->join_id)
                return;
        enroll_stop(d);
        d->state = ENROLL_DONE;
        d->role = THEME_WARNING;
        snprintf(d->words, sizeof(d->words),
                 "Canceled when this screen was left; r asks for a new code.");
}

static void enroll_done(Tui *t, Screen *s)
{
        EnrollData *d = s->data;

        if (!d)
                return;
        enroll_stop(d);
        enroll_reset(d);
}

static int enroll_roamd_gone(Tui *t, Screen *s)
{
        EnrollData *d = s->data;

        d->join_id = 0;
        enroll_reset(d);
        return tui_current_screen(t) == &wifi_enroll_screen_vtable ? REACTION_BACK : REACTION_NONE;
}

/* A QR line's columns: one a character (half blocks, '#' and spaces are all narrow). */
static int qr_columns(const char *s)
{
        int n = 0;

        for (; *s; s++)
                n += ((unsigned char)*s & 0xc0) != 0x80;
        return n;
}

static int build(Tui *t, EnrollData *d, TuiDoc *doc, int height)
{
        const char *path = tui_selected_link(t);
        const RoamLink *l = path ? roam_model_find_link(tui_model(t), path) : NULL;
        int width = 0, r;

        for (size_t i = 0; i < d->n_qr; i++)
                width = MAX(width, qr_columns(d->qr[i]));
        r = tui_doc_line(doc, -1, 2);
        if (r >= 0)
                r = tui_doc_spanf(doc, THEME_TITLE, 0, "Wi-Fi Easy Connect on %s",
                                  l ? l->name : "this link");
        if (r >= 0)
                r = tui_doc_line(doc, -1, 2);
        if (r >= 0)
                r = tui_doc_span(doc, d->role, 0, d->words);
        if (r < 0 || d->state != ENROLL_WAITING || !d->uri)
                return r;
        /* the code only where it fits whole: a cut code scans as nothing */
        if (d->n_qr && (int)d->n_qr + 6 <= height && width + 2 <= tui_columns(t))
                for (size_t i = 0; i < d->n_qr && r >= 0; i++) {
                        r = tui_doc_line(doc, -1, 0);
                        if (r >= 0)
                                r = tui_doc_span(doc, THEME_NORMAL, 0, d->qr[i]);
                }
        else if (r >= 0) {
                r = tui_doc_line(doc, -1, 2);
                if (r >= 0)
                        r = tui_doc_spanf(
                            doc, THEME_WARNING, 0,
                            "The QR code needs %zu rows and %d columns; this terminal has %d "
                            "and %d. Make it larger, or type the text below into the phone.",
                            d->n_qr + 6, width + 2, height, tui_columns(t));
        }
        if (r >= 0)
                r = tui_doc_line(doc, -1, 2);
        if (r >= 0)
                r = tui_doc_span(doc, THEME_MUTED, 0, d->uri);
        return r;
}

static void enroll_draw(Tui *t, Screen *s, int top, int height)
{
        EnrollData *d = s->data;
        _cleanup_(tui_doc_freep) TuiDoc *doc = NULL;

        d->tui = t;
        if (tui_doc_new(&doc) < 0 || build(t, d, doc, height) < 0)
                return;
        tui_doc_draw(t, doc, top, height, -1, &d->scroll);
}

static int enroll_key(Tui *t, Screen *s, int key)
{
        EnrollData *d = s->data;

        if (key == 'r' && d->state == ENROLL_DONE) {
                (void)enroll_enter(t, s);
                return REACTION_REDRAW;
        }
        if (key == TUI_KEY_ESCAPE) {
                if (d->join_id)
                        tui_message(t, THEME_NORMAL, "Wi-Fi Easy Connect canceled.");
                enroll_stop(d);
                /* back to the networks, not to the overview */
                return tui_show(t, &wifi_screen_vtable) < 0 ? REACTION_BACK : REACTION_REDRAW;
        }
        return REACTION_UNHANDLED;
}

static bool enroll_key_active(Tui *t, Screen *s, const KeyHelp *k)
{
        EnrollData *d = s->data;

        if (streq(k->keys, "r"))
                return d->state == ENROLL_DONE;
        return true;
}

static const KeyHelp enroll_keys[] = {
    {"r", "again", "Ask for a new code after the last one ended"},
    {"Esc", "back", "Back to the networks (leaving cancels a code still waiting)"},
    {},
};

const ScreenVTable wifi_enroll_screen_vtable = {
    .name = "wifi-enroll",
    .title = "Wi-Fi Easy Connect",
    .number = 0,
    .data_size = sizeof(EnrollData),
    .enter = enroll_enter,
    .leave = enroll_leave,
    .draw = enroll_draw,
    .key = enroll_key,
    .key_active = enroll_key_active,
    .roamd_gone = enroll_roamd_gone,
    .done = enroll_done,
    .keys = enroll_keys,
    .about = "Wi-Fi Easy Connect (e on the Wi-Fi screen): this device's DPP code as a QR code "
             "for a phone that is on a network to scan; the phone sends the network and roam "
             "joins it, then says the result in words. Only where iwd or wpa_supplicant owns "
             "the link (NetworkManager has no Wi-Fi Easy Connect); the code waits 2 minutes.",
};
