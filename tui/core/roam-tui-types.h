/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "roam-live.h"

/* What the TUI core (roam-tui.c and its parts) and the screens share: a screen's vtable, the
 * reactions its handlers return, keys. Types only: the core's private header
 * (roam-tui-internal.h) and its API (roam-tui.h) both build on this, so neither includes the
 * other. */

typedef struct Tui Tui;
typedef struct Screen Screen;

/* What a handler wants the framework to do next; flags, or a negative errno. */
enum {
        REACTION_NONE = 0,
        REACTION_REDRAW = 1 << 0,
        REACTION_BACK = 1 << 1,      /* leave this screen for the previous one */
        REACTION_QUIT = 1 << 2,      /* end the program */
        REACTION_UNHANDLED = 1 << 3, /* not this screen's key: the global keys may take it */
};

/* Keys: a character, or a curses key code with TUI_KEY_CODE set (Unicode ends at 0x10FFFF). */
#define TUI_KEY_CODE   (1 << 24)
#define TUI_KEY(code)  ((code) | TUI_KEY_CODE)
#define TUI_KEY_ESCAPE 27

typedef struct KeyHelp {
        const char *keys;  /* as the user types them: "Up/k" */
        const char *hint;  /* short, for the hint bar; NULL: only in the help screen */
        const char *means; /* for the help screen */
} KeyHelp;

typedef struct ScreenVTable {
        const char *name;  /* stable, for tests: "overview" */
        const char *title; /* for people: "Overview" */
        int number;        /* the key that jumps here (1-9), 0: none */
        /* For a narrow header ("BT" for "Bluetooth"); NULL: the title. */
        const char *short_title;
        /* A screen without a tab: the letter that opens it from every screen ('t'), 0: none. */
        int letter;
        size_t data_size; /* Screen.data, zeroed at start, kept while the TUI runs */
        int (*enter)(Tui *t, Screen *s);
        void (*leave)(Tui *t, Screen *s);
        /* Draws rows [top, top + height) of the whole width. */
        void (*draw)(Tui *t, Screen *s, int top, int height);
        int (*key)(Tui *t, Screen *s, int key);
        int (*model_changed)(Tui *t, Screen *s, const RoamLiveEvent *ev);
        const KeyHelp *keys; /* ended by {} */
        const char *about;   /* a paragraph for the help screen */
        /* Whether a key of keys does something now, for the hint bar; NULL: all do. */
        bool (*key_active)(Tui *t, Screen *s, const KeyHelp *k);
        /* A mouse click on an item of the screen's document (the item numbers given to
         * tui_doc_line()); a reaction. NULL: clicks on the body do nothing. */
        int (*click)(Tui *t, Screen *s, int item);
        /* Whether keys go to text being typed now (a filter); NULL: never. The first-join
         * question waits while they do. */
        bool (*typing)(Tui *t, Screen *s);
        /* The keys that work while typing (the hint bar shows only these then; every other
         * key is text). */
        const KeyHelp *typing_keys;
        /* A question that waits for the person while another screen is shown, in words
         * ("An NFC tag asks: Pair with ...?"); the status line says it with this screen's
         * key. False or NULL: nothing waits. */
        bool (*asks)(Tui *t, Screen *s, char *buf, size_t size);
        /* Whether the screen has something to show now: NULL if it has, else one word for its
         * tab ("none", "off") and, in why, a sentence for the help and the status line ("4
         * Portal: WHY": "no link is behind a captive portal"). The callback NULL: always
         * (while roamd is there). */
        const char *(*available)(Tui *t, Screen *s, char *why, size_t size);
        /* Shown while roamd is not there too (the overview says so; the help). */
        bool without_roamd;
        /* roamd appeared (at start or after a restart) or went away: what the screen follows
         * beyond the model (WiFi Direct peers, Bluetooth, the portal's sessions) is watched
         * again or dropped, a dialog on roamd's objects is closed. Called on every screen,
         * shown or not (tui_current_screen() says which is); a reaction, whose
         * REACTION_BACK counts for the screen shown. NULL: nothing. */
        int (*roamd_appeared)(Tui *t, Screen *s);
        int (*roamd_gone)(Tui *t, Screen *s);
        /* Frees what the screen holds besides data (bus calls, lists); NULL: nothing. */
        void (*done)(Tui *t, Screen *s);
        /* A question over whatever screen is shown (the firewall's first-join question): drawn
         * after the screen, given the keys and clicks first (REACTION_UNHANDLED when there is
         * no question or the key is not its); its keys replace the screen's in the hint bar
         * (overlay_keys NULL: no question now). */
        void (*overlay_draw)(Tui *t, Screen *s, int top, int height);
        int (*overlay_key)(Tui *t, Screen *s, int key);
        const KeyHelp *(*overlay_keys)(Tui *t, Screen *s);
        int (*overlay_click)(Tui *t, Screen *s, int item);
        /* Whether what the screen shows still waits for an answer of roamd's (the firewall's
         * rules); the screenshot tests' frame marker says so (loading=1), so that they wait
         * for the answer, not for a number of frames. NULL: never. */
        bool (*loading)(Tui *t, Screen *s);
        /* What the screen shows changes with no signal of its own (packet counters): called
         * every TUI_TICK_USEC while the screen is shown, never while it is not (with a frozen
         * clock, the screenshot tests', on SIGUSR1 instead); a reaction. NULL: no timer. */
        int (*tick)(Tui *t, Screen *s);
} ScreenVTable;

#define TUI_TICK_USEC (5 * 1000000ULL)

struct Screen {
        const ScreenVTable *vtable;
        void *data;
};

/* At most this many screens have a number key (1-9). */
#define TUI_TABS 9 /* the tabs, and room for a screen without one */

/* A y/N question's answer yes (tui_confirm()): acts on subject (copied when asked). */
typedef int (*TuiConfirmFn)(Tui *t, void *userdata, const char *subject);
