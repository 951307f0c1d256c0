/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-tui-filter.h"
#include "roam-util.h"

int tui_filter_key(Tui *t, TuiFilter *f, int key, int n_orders, const char *const *order_names)
{
        size_t len = strlen(f->text);

        if (!f->editing) {
                switch (key) {
                case '/':
                        /* A fresh filter: typing never adds to an old text out of sight. */
                        f->text[0] = 0;
                        f->editing = true;
                        return REACTION_REDRAW;
                case 's':
                        f->order = (f->order + 1) % n_orders;
                        tui_message(t, THEME_STATUS, "Sorted by %s.", order_names[f->order]);
                        return REACTION_REDRAW;
                case TUI_KEY_ESCAPE:
                        /* Esc first clears a filter, then goes back. */
                        if (len == 0)
                                return REACTION_UNHANDLED;
                        f->text[0] = 0;
                        return REACTION_REDRAW;
                default:
                        return REACTION_UNHANDLED;
                }
        }
        switch (key) {
        case '\r':
        case '\n':
        case TUI_KEY(KEY_ENTER):
        case TUI_KEY(KEY_DOWN):
        case TUI_KEY(KEY_UP):
                f->editing = false;
                return key == TUI_KEY(KEY_DOWN) || key == TUI_KEY(KEY_UP) ? REACTION_UNHANDLED
                                                                          : REACTION_REDRAW;
        case TUI_KEY_ESCAPE:
                f->editing = false;
                f->text[0] = 0;
                return REACTION_REDRAW;
        case TUI_KEY(KEY_BACKSPACE):
        case 127:
        case 8:
                if (len > 0)
                        f->text[len - 1] = 0;
                return REACTION_REDRAW;
        case 21: /* Ctrl-U: the whole text, as in a shell */
                f->text[0] = 0;
                return REACTION_REDRAW;
        case 12: /* Ctrl-L */
        case TUI_KEY(KEY_RESIZE):
        case TUI_KEY(KEY_MOUSE):
                return REACTION_UNHANDLED;
        }
        /* Printable ASCII only: names, bearers and verdicts are ASCII. */
        if (key >= 0x20 && key < 0x7f && len + 1 < sizeof(f->text)) {
                f->text[len] = (char)key;
                f->text[len + 1] = 0;
        }
        return REACTION_REDRAW;
}

const KeyHelp tui_filter_typing_keys[] = {
    {"Enter", "apply", "Keep the filter and leave the typing (also Up or Down)"},
    {"Esc", "cancel", "Clear the filter and leave the typing"},
    {"Ctrl-U", "clear", "Clear the text typed so far"},
    {"Backspace", "delete", "Delete the last character"},
    {},
};

static bool contains(const char *hay, const char *needle)
{
        size_t n = strlen(needle);

        for (const char *h = hay; *h; h++)
                if (strncasecmp(h, needle, n) == 0)
                        return true;
        return n == 0;
}

bool tui_filter_match(const TuiFilter *f, const char *const *fields)
{
        if (!f->text[0])
                return true;
        for (const char *const *s = fields; *s; s++)
                if (contains(*s, f->text))
                        return true;
        return false;
}

int tui_filter_line(Tui *t, const TuiFilter *f, TuiDoc *d, size_t shown, size_t total,
                    const char *what, const char *const *order_names)
{
        int r;

        if (!f->text[0] && !f->editing && f->order == 0)
                return 0;
        r = tui_doc_line(d, -1, 2);
        if (r >= 0 && (f->text[0] || f->editing))
                r = tui_doc_spanf(d, f->editing ? THEME_KEY : THEME_NORMAL, 0,
                                  "Filter: %s%s (%zu of %zu %s)%s", f->text, f->editing ? "_" : "",
                                  shown, total, what, f->order ? ", " : "");
        if (r >= 0 && f->order)
                r = tui_doc_spanf(d, THEME_NORMAL, 0, "%s %s",
                                  f->text[0] || f->editing ? "sorted by" : "Sorted by",
                                  order_names[f->order]);
        return r < 0 ? r : 1;
}
