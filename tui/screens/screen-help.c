/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-screens.h"
#include "roam-tui-internal.h"
#include "roam-util.h"

/* Help for the screen it was opened from: what the screen shows, its keys, the keys that work
 * everywhere, and how the terminal is being used (theme, colour, UTF-8), with any problem met
 * at start (a broken theme file says file:line here too). */

#define KEYS_WIDTH 16

typedef struct HelpData {
        int selected;
        int scroll;
        int n_items;
} HelpData;

static const KeyHelp global_keys[] = {
    {"? or F1", NULL, "Show this help; again to close it"},
    {"Esc", NULL, "Back to the previous screen (also Backspace)"},
    {"1 to 8", NULL, "Jump to a screen: the list below"},
    {"t, w", NULL, "The Time and Wake queue screens (on Bluetooth, t trusts a device)"},
    {"Ctrl-L", NULL, "Draw the whole screen again"},
    {"q or F10", NULL, "Quit"},
    {},
};

static void keys(TuiDoc *d, int *item, const KeyHelp *k, int *r)
{
        for (; k && k->keys && *r >= 0; k++) {
                *r = tui_doc_line(d, (*item)++, KEYS_WIDTH + 1);
                if (*r >= 0)
                        *r = tui_doc_span(d, THEME_KEY, KEYS_WIDTH + 1, k->keys);
                if (*r >= 0)
                        *r = tui_doc_span(d, THEME_NORMAL, 0, k->means);
        }
}

static void heading(TuiDoc *d, int *item, const char *text, int *r)
{
        if (*r >= 0)
                *r = tui_doc_line(d, -1, 0);
        if (*r >= 0)
                *r = tui_doc_line(d, (*item)++, 0);
        if (*r >= 0)
                *r = tui_doc_span(d, THEME_TITLE, 0, text);
}

static void help_draw(Tui *t, Screen *s, int top, int height)
{
        HelpData *h = s->data;
        const ScreenVTable *of = tui_previous_screen(t);
        const Theme *theme = tui_theme(t);
        _cleanup_(tui_doc_freep) TuiDoc *d = NULL;
        const char *term = getenv("TERM");
        int item = 0, r;

        if (tui_doc_new(&d) < 0)
                return;
        r = tui_doc_line(d, item++, 0);
        if (r >= 0)
                r = tui_doc_spanf(d, THEME_TITLE, 0, "Help: the %s screen", of->title);
        if (r >= 0)
                r = tui_doc_line(d, item++, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_NORMAL, 0, of->about);

        heading(d, &item, "Keys on this screen", &r);
        keys(d, &item, of->keys, &r);
        heading(d, &item, "Keys everywhere", &r);
        keys(d, &item, global_keys, &r);

        /* Every screen, and why one has nothing to show now: its tab is only greyed. */
        heading(d, &item, "Screens", &r);
        if (r >= 0)
                r = tui_doc_line(d, item++, 0);
        if (r >= 0)
                r = tui_doc_span(d, THEME_NORMAL, 0,
                                 "A tab with nothing to show now is greyed and says why in "
                                 "a word after its number: none (nothing of that kind), off "
                                 "(switched off or not there), down (roamd is not running), "
                                 "wait (being read) or error (roamd's answer unreadable); "
                                 "\"4-\" where the header has no room for the word. Its key "
                                 "says why in full.");
        {
                const ScreenVTable *tabs[TUI_TABS];
                size_t n = tui_tab_screens(t, tabs);

                for (size_t i = 0; i < n && r >= 0; i++) {
                        char why[256];
                        bool on = !tui_screen_unavailable(t, tabs[i], why, sizeof(why));

                        r = tui_doc_line(d, item++, KEYS_WIDTH + 1);
                        if (r >= 0)
                                r = tui_doc_spanf(d, THEME_KEY, KEYS_WIDTH + 1, "%d",
                                                  tabs[i]->number);
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_NORMAL, 0, tabs[i]->title);
                        if (r >= 0 && !on)
                                r = tui_doc_spanf(d, THEME_MUTED, 0, ": nothing to show now, %s",
                                                  why);
                }
                /* and those without a tab, opened by a letter */
                for (size_t i = 0; i < tui_n_screens(t) && r >= 0; i++) {
                        const ScreenVTable *v = tui_screen_at(t, i);

                        if (v->number || !v->letter)
                                continue;
                        r = tui_doc_line(d, item++, KEYS_WIDTH + 1);
                        if (r >= 0)
                                r = tui_doc_spanf(d, THEME_KEY, KEYS_WIDTH + 1, "%c", v->letter);
                        if (r >= 0)
                                r = tui_doc_span(d, THEME_NORMAL, 0, v->title);
                }
        }

        heading(d, &item, "Display", &r);
        if (r >= 0)
                r = tui_doc_field(d, item++, KEYS_WIDTH, "Theme:", THEME_NORMAL, theme->name);
        if (r >= 0)
                r = tui_doc_field(d, item++, KEYS_WIDTH, "Theme file:", THEME_NORMAL,
                                  theme->path ? theme->path : "built in");
        if (r >= 0)
                r = tui_doc_field(d, item++, KEYS_WIDTH, "Terminal:", THEME_NORMAL,
                                  term && *term ? term : "unknown");
        if (r >= 0)
                r = tui_doc_field(d, item++, KEYS_WIDTH, "Characters:", THEME_NORMAL,
                                  tui_utf8(t) ? "UTF-8" : "ASCII only (the locale is not UTF-8)");
        if (r >= 0)
                r = tui_doc_field(d, item++, KEYS_WIDTH, "Colour:", THEME_NORMAL,
                                  !theme->uses_colour ? "none, attributes only"
                                                      : "as the theme says");
        for (char *const *m = tui_startup_messages(t); m && *m; m++)
                if (r >= 0)
                        r = tui_doc_field(d, item++, KEYS_WIDTH,
                                          m == tui_startup_messages(t) ? "At start:" : "",
                                          THEME_ERROR, *m);
        if (r < 0)
                return;
        h->n_items = item;
        h->selected = MAX(0, MIN(h->selected, h->n_items - 1));
        tui_doc_draw(t, d, top, height, h->selected, &h->scroll);
}

static int help_enter(Tui *t, Screen *s)
{
        HelpData *h = s->data;

        h->selected = 0;
        h->scroll = 0;
        return 0;
}

static int help_key(Tui *t, Screen *s, int key)
{
        HelpData *h = s->data;
        int page = MAX(1, tui_lines(t) - 5);

        switch (key) {
        case TUI_KEY(KEY_UP):
        case 'k':
                h->selected--;
                break;
        case TUI_KEY(KEY_DOWN):
        case 'j':
        case '\t':
                h->selected++;
                break;
        case TUI_KEY(KEY_PPAGE):
                h->selected -= page;
                break;
        case TUI_KEY(KEY_NPAGE):
        case ' ':
                h->selected += page;
                break;
        case TUI_KEY(KEY_HOME):
        case 'g':
                h->selected = 0;
                break;
        case TUI_KEY(KEY_END):
        case 'G':
                h->selected = h->n_items - 1;
                break;
        case TUI_KEY(KEY_LEFT):
        case 'h':
                return REACTION_BACK;
        default:
                return REACTION_UNHANDLED;
        }
        h->selected = MAX(0, MIN(h->selected, h->n_items - 1));
        return REACTION_REDRAW;
}

static const KeyHelp help_keys[] = {
    {"Esc", "close", "Close the help (also ?, Left or h)"},
    {"Up/Down", NULL, "Move line by line (also k, j and Tab)"},
    {"PgUp/PgDn", NULL, "Move a page (also Space)"},
    {},
};

const ScreenVTable help_screen_vtable = {
    .without_roamd = true,
    .name = "help",
    .title = "Help",
    .number = 0,
    .data_size = sizeof(HelpData),
    .enter = help_enter,
    .draw = help_draw,
    .key = help_key,
    .keys = help_keys,
    .about = "Help.",
};
