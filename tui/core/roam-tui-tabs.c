/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include "roam-tui-internal.h"
#include "roam-tui.h"
#include "roam-util.h"

/* The header: every screen's tab, so every screen can be found; those with nothing to show
 * now are greyed (header-off) and carry their reason word ("4 Portal:none", "6:off"), or a
 * "-" when room is short, so colour is never the only sign. The reason in full is said in
 * the help's list of screens, and on the status line when its key is pressed. */

const char *tui_screen_unavailable(Tui *t, const ScreenVTable *v, char *why, size_t size)
{
        Screen *s = tui_screen_of(t, v);
        char buf[256] = "";
        const char *word = NULL;

        if (why && size > 0)
                why[0] = 0;
        if (v->without_roamd)
                return NULL;
        switch (roam_live_get_state(tui_live(t))) {
        case ROAM_LIVE_READY:
                break;
        case ROAM_LIVE_NOT_RUNNING:
                snprintf(buf, sizeof(buf), "roamd is not running");
                word = "down";
                break;
        case ROAM_LIVE_NO_BUS:
                snprintf(buf, sizeof(buf), "the system bus cannot be reached");
                word = "down";
                break;
        case ROAM_LIVE_LOADING:
                snprintf(buf, sizeof(buf), "roamd's state is being read");
                word = "wait";
                break;
        case ROAM_LIVE_FAILED:
        case _ROAM_LIVE_STATE_MAX:
        case _ROAM_LIVE_STATE_INVALID:
                snprintf(buf, sizeof(buf), "roamd's answer could not be read");
                word = "error";
                break;
        }
        if (!word && s && v->available)
                word = v->available(t, s, buf, sizeof(buf));
        if (word && why && size > 0)
                snprintf(why, size, "%s", buf);
        return word;
}

/* How much of the header to give up, from none: roomy gaps, single gaps, the unavailable
 * tabs' titles, the long titles (short ones instead: "7 BT"), every other tab's title, the
 * unavailable tabs' reason words (a "-" stays), the name "roam", then tabs from the right
 * (never the active one). */
enum {
        HEADER_ROOMY,
        HEADER_TIGHT,
        HEADER_OFF_NUMBERS,
        HEADER_SHORT,
        HEADER_NUMBERS,
        HEADER_MARKS,
        HEADER_NAMELESS,
        HEADER_DROP,
        _HEADER_LEVEL_MAX,
};

/* A tab as drawn: "[3 Apps]" for the active screen (the brackets say it without colour),
 * "3 Apps" or "3" for the others; one with nothing to show now says so in words, never by its
 * colour alone: "4 Portal:none", "4:none", or "4-" where even that does not fit (the help
 * explains both). roomy: a space on each side. */
static int tab_label(const ScreenVTable *v, bool active, const char *off, int level, char *buf,
                     size_t size)
{
        bool roomy = level == HEADER_ROOMY;
        bool title = level < HEADER_NUMBERS && (!off || level < HEADER_OFF_NUMBERS);
        const char *name = level >= HEADER_SHORT && v->short_title ? v->short_title : v->title;

        if (v->number == 0) /* a screen without a tab, shown while it is the active one */
                return snprintf(buf, size, "[%c %s]", v->letter, name);
        if (active)
                return snprintf(buf, size, "[%d %s]", v->number, name);
        if (off && level >= HEADER_MARKS)
                return snprintf(buf, size, "%d-", v->number);
        if (off && title)
                return snprintf(buf, size, roomy ? " %d %s:%s " : "%d %s:%s", v->number, name, off);
        if (off)
                return snprintf(buf, size, "%d:%s", v->number, off);
        if (!title)
                return snprintf(buf, size, "%d", v->number);
        return snprintf(buf, size, roomy ? " %d %s " : "%d %s", v->number, name);
}

static const char *header_name(int level)
{
        return level == HEADER_ROOMY ? " roam " : level < HEADER_NAMELESS ? "roam" : "";
}

static int header_width(Tui *t, const ScreenVTable *const *tabs, size_t n,
                        const ScreenVTable *active, const char *const *off, int level,
                        int help_width)
{
        char buf[96];
        int w = (int)strlen(header_name(level));

        for (size_t i = 0; i < n; i++)
                w += 1 + tab_label(tabs[i], tabs[i] == active, off[i], level, buf, sizeof(buf));
        /* Without the name the first tab needs no gap before it. */
        return w + 1 + help_width - (w > 0 && level >= HEADER_NAMELESS);
}

void tui_draw_header(Tui *t)
{
        const ScreenVTable *tabs[TUI_TABS];
        const char *off[TUI_TABS];
        bool in_help = tui_current_screen(t) == tui_help_screen(t);
        const ScreenVTable *active = in_help ? tui_previous_screen(t) : tui_current_screen(t);
        size_t n = tui_tab_screens(t, tabs), shown = n;
        int level, x, cols = tui_columns(t), help_width;
        const char *help;
        char buf[96];

        /* A screen without a tab (t Time, w Wake queue) has one while it is shown. */
        if (active && active->number == 0 && active->letter && n < TUI_TABS)
                tabs[n++] = active;
        shown = n;
        for (size_t i = 0; i < n; i++)
                off[i] = tui_screen_unavailable(t, tabs[i], NULL, 0);
        for (level = HEADER_ROOMY; level < HEADER_DROP; level++) {
                help = in_help ? "[? Help]" : (level == HEADER_ROOMY ? " ? Help " : "? Help");
                help_width = (int)strlen(help);
                if (header_width(t, tabs, n, active, off, level, help_width) <= cols)
                        break;
        }
        help = in_help ? "[? Help]" : (level == HEADER_ROOMY ? " ? Help " : "? Help");
        help_width = (int)strlen(help);
        /* Still too wide: the tabs after the active one go first, then those before it. */
        while (level == HEADER_DROP && shown > 1 &&
               header_width(t, tabs, shown, active, off, level, help_width) > cols) {
                size_t drop = shown - 1;

                if (tabs[drop] == active)
                        drop--;
                memmove(&tabs[drop], &tabs[drop + 1], (shown - drop - 1) * sizeof(tabs[0]));
                memmove(&off[drop], &off[drop + 1], (shown - drop - 1) * sizeof(off[0]));
                shown--;
        }

        tui_fill(t, 0, 0, cols, THEME_HEADER);
        x = tui_print(t, 0, 0, cols, THEME_HEADER, header_name(level));
        for (size_t i = 0; i < shown; i++) {
                bool is_active = tabs[i] == active;
                int k;

                tab_label(tabs[i], is_active, off[i], level, buf, sizeof(buf));
                /* The first tab needs no gap where the name gave its place up. */
                if (x > 0)
                        x += tui_print(t, 0, x, cols - x, THEME_HEADER, " ");
                k = tui_print(t, 0, x, cols - x,
                              is_active ? THEME_HEADER_ACTIVE
                              : !off[i] ? THEME_HEADER
                                        : THEME_HEADER_OFF,
                              buf);
                tui_note_tab(t, x, x + k, tabs[i]);
                x += k;
        }
        /* "? Help" always has its place: the tabs gave theirs up first. */
        if (help_width <= cols - x) {
                tui_print(t, 0, cols - help_width, help_width,
                          in_help ? THEME_HEADER_ACTIVE : THEME_HEADER, help);
                tui_note_tab(t, cols - help_width, cols, NULL);
        }
}
