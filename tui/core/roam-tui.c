/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <wctype.h>

#define NCURSES_WIDECHAR 1
#include <curses.h>

#include <systemd/sd-event.h>

#include "roam-auth-call.h"
#include "roam-client-bus.h"
#include "roam-polkit-agent.h"
#include "roam-bus.h"
#include "roam-format.h"
#include "roam-log.h"
#include "roam-text.h"
#include "roam-term.h"
#include "roam-tui-internal.h"
#include "roam-tui.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* Esc must answer at once: curses waits this long for the rest of an escape sequence. */
#define ESCAPE_DELAY_MSEC 25
/* Below this, the screens cannot say anything useful: one line asks for more room. */
#define MIN_COLUMNS          20
#define MIN_LINES            6
#define STARTUP_MESSAGES_MAX 8

struct Tui {
        sd_event *event;
        sd_event_source *input, *redraw, *refresh, *tick;
        RoamLive *live;
        SCREEN *term;

        Theme theme;
        bool colour;
        bool utf8;
        attr_t attrs[_THEME_ROLE_MAX];
        short pairs[_THEME_ROLE_MAX];

        Screen *screens; /* TuiOptions.screens, then the help */
        size_t n_screens;
        Screen *home, *help;
        Screen *current, *previous;
        char *selected_link;
        bool roamd_lost;        /* roamd went away while we showed it */
        char *quit_consequence; /* TuiOptions.quit_consequence */

        TuiAsk ask;
        char *message;
        ThemeRole message_role;
        char **startup_messages;

        int cursor_y, cursor_x;
        uint64_t refresh_usec;
        bool frozen_clock; /* $ROAM_TEST_NOW: ages never change, so no refresh timer */
        /* Another program (the portal's login browser) has the terminal: no frames, no
         * keys, Ctrl-C is its. */
        bool suspended;

        /* Screenshot tests: after every frame, the terminal title says "roam-frame N ..." */
        bool test_frames;
        unsigned frames;

        /* Where the last frame put what a click can hit: the item of each row, the hints in
         * the hint bar and the tabs in the header. */
        bool mouse;
        bool hyperlinks;  /* the terminal takes OSC 8 links */
        FILE *input_file; /* the terminal, opened again for non-blocking reads */
        int *row_items;
        int n_row_items;
        struct {
                int x0, x1;
                const KeyHelp *k;
        } hint_spots[32];
        size_t n_hint_spots;
        struct {
                int x0, x1;
                const ScreenVTable *v; /* NULL: the help */
        } tab_spots[TUI_TABS + 1];
        size_t n_tab_spots;
};

void tui_note_item_row(Tui *t, int y, int item)
{
        if (y >= 0 && y < t->n_row_items)
                t->row_items[y] = item;
}

void tui_note_tab(Tui *t, int x0, int x1, const ScreenVTable *v)
{
        if (t->n_tab_spots < ELEMENTSOF(t->tab_spots))
                t->tab_spots[t->n_tab_spots++] = (typeof(t->tab_spots[0])){x0, x1, v};
}

TuiAsk *tui_ask(Tui *t)
{
        return &t->ask;
}

bool tui_clock_frozen(Tui *t)
{
        return t->frozen_clock;
}

RoamLive *tui_live(Tui *t)
{
        return t->live;
}

const RoamModel *tui_model(Tui *t)
{
        return roam_live_get_model(t->live);
}

bool tui_utf8(Tui *t)
{
        return t->utf8;
}

const Theme *tui_theme(Tui *t)
{
        return &t->theme;
}

char *const *tui_startup_messages(Tui *t)
{
        return t->startup_messages;
}

const char *tui_selected_link(Tui *t)
{
        return t->selected_link;
}

void tui_select_link(Tui *t, const char *path)
{
        if (free_and_strdup(&t->selected_link, path) < 0)
                log_oom();
}

const ScreenVTable *tui_previous_screen(Tui *t)
{
        return t->previous ? t->previous->vtable : t->home->vtable;
}

const ScreenVTable *tui_current_screen(Tui *t)
{
        return t->current ? t->current->vtable : NULL;
}

bool tui_current_typing(Tui *t)
{
        return t->current && t->current->vtable->typing &&
               t->current->vtable->typing(t, t->current);
}

const char *tui_glyph_ellipsis(Tui *t)
{
        return t->utf8 ? "\u2026" : "...";
}

const char *tui_glyph_dot(Tui *t)
{
        return t->utf8 ? "\u00b7" : "-";
}

const char *tui_glyph_arrow(Tui *t)
{
        return t->utf8 ? "\u2192" : "->";
}

int tui_columns(Tui *t)
{
        return COLS;
}

int tui_lines(Tui *t)
{
        return LINES;
}

static void request_redraw(Tui *t)
{
        /* A defer source: any number of changes in one loop iteration make one frame. */
        (void)sd_event_source_set_enabled(t->redraw, SD_EVENT_ONESHOT);
}

sd_bus *tui_bus(Tui *t)
{
        return roam_live_get_bus(t->live);
}

void tui_request_redraw(Tui *t)
{
        request_redraw(t);
}

void tui_message(Tui *t, ThemeRole role, const char *fmt, ...)
{
        char *s;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return;
        free(t->message);
        t->message = s;
        t->message_role = role;
        request_redraw(t);
}

void tui_message_clear(Tui *t)
{
        if (!t->message)
                return;
        free(t->message);
        t->message = NULL;
        request_redraw(t);
}

void tui_refresh_in(Tui *t, uint64_t usec)
{
        if (usec < t->refresh_usec)
                t->refresh_usec = usec;
}

void tui_set_cursor(Tui *t, int y, int x)
{
        t->cursor_y = y;
        t->cursor_x = x;
}

/* Messages logged while the TUI runs go to the status line, never to the terminal beneath. */
static void log_sink(int level, const char *message, void *userdata)
{
        Tui *t = userdata;

        if (level > LOG_WARNING)
                return;
        if (!t->term) {
                /* Before the screen exists (theme and config errors): kept for the first frame
                 * and for the help screen. */
                if (strv_length(t->startup_messages) < STARTUP_MESSAGES_MAX)
                        (void)strv_extend(&t->startup_messages, message);
                return;
        }
        tui_message(t, level <= LOG_ERR ? THEME_ERROR : THEME_WARNING, "%s", message);
}

int tui_wcwidth(wchar_t c)
{
        int w = wcwidth(c);

        return w < 0 ? 1 : w;
}

int tui_wcswidth(const wchar_t *s, size_t n)
{
        int w = 0;

        for (size_t i = 0; i < n; i++)
                w += tui_wcwidth(s[i]);
        return w;
}

int tui_decode(Tui *t, const char *s, wchar_t **ret, size_t *ret_n)
{
        size_t len = strlen(s), n = 0;
        wchar_t *w = calloc(len + 1, sizeof(wchar_t));
        mbstate_t st = {};

        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < len;) {
                unsigned char c = (unsigned char)s[i];
                wchar_t wc;
                size_t k;

                if (!t->utf8) {
                        w[n++] = c >= 0x20 && c < 0x7f ? (wchar_t)c : L'?';
                        i++;
                        continue;
                }
                k = mbrtowc(&wc, s + i, len - i, &st);
                if (k == (size_t)-1 || k == (size_t)-2 || k == 0) {
                        memset(&st, 0, sizeof(st));
                        w[n++] = L'?';
                        i++;
                        continue;
                }
                i += k;
                /* Bidi controls and zero-width format characters are printable to curses
                 * (width 0) but reorder or hide what is around them: dropped. */
                if (roam_char_is_format((uint32_t)wc))
                        continue;
                w[n++] = iswprint((wint_t)wc) && wcwidth(wc) >= 0 ? wc : L'?';
        }
        w[n] = 0;
        *ret = w;
        *ret_n = n;
        return 0;
}

void tui_put_wchar(Tui *t, int y, int x, wchar_t c, ThemeRole role)
{
        wchar_t s[2] = {c, 0};
        cchar_t cc;

        if (y < 0 || y >= LINES || x < 0 || x + tui_wcwidth(c) > COLS)
                return;
        if (setcchar(&cc, s, t->attrs[role], t->pairs[role], NULL) == OK)
                mvadd_wch(y, x, &cc);
}

int tui_list_key(int key, int i, int n, bool *handled)
{
        *handled = true;
        switch (key) {
        case TUI_KEY(KEY_UP):
        case 'k':
        case TUI_KEY(KEY_BTAB):
                i--;
                break;
        case TUI_KEY(KEY_DOWN):
        case 'j':
        case '\t':
                i++;
                break;
        case TUI_KEY(KEY_PPAGE):
                i -= 5;
                break;
        case TUI_KEY(KEY_NPAGE):
                i += 5;
                break;
        case TUI_KEY(KEY_HOME):
        case 'g':
                i = 0;
                break;
        case TUI_KEY(KEY_END):
        case 'G':
                i = n - 1;
                break;
        default:
                *handled = false;
                return -1;
        }
        if (n == 0)
                return -1;
        /* Tab wraps around; the arrows stop at the ends. */
        if (key == '\t' || key == TUI_KEY(KEY_BTAB))
                i = (i + n) % n;
        return MAX(0, MIN(i, n - 1));
}

void tui_fill(Tui *t, int y, int x, int width, ThemeRole role)
{
        for (int i = 0; i < width; i++)
                tui_put_wchar(t, y, x + i, L' ', role);
}

int tui_print(Tui *t, int y, int x, int width, ThemeRole role, const char *s)
{
        _cleanup_free_ wchar_t *w = NULL;
        size_t n;
        int used = 0;

        if (tui_decode(t, s, &w, &n) < 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                int cw = tui_wcwidth(w[i]);

                if (used + cw > width)
                        break;
                tui_put_wchar(t, y, x + used, w[i], role);
                used += cw;
        }
        return used;
}

const ScreenVTable *tui_help_screen(Tui *t)
{
        return t->help ? t->help->vtable : NULL;
}

Screen *tui_screen_of(Tui *t, const ScreenVTable *vtable)
{
        for (size_t i = 0; i < t->n_screens; i++)
                if (t->screens[i].vtable == vtable)
                        return &t->screens[i];
        return NULL;
}

/* The shown screen's tick, only while a screen with one is shown: an idle roam on any other
 * screen wakes for nothing. */
static void arm_tick(Tui *t)
{
        bool on = !t->frozen_clock && t->current && t->current->vtable->tick;

        if (!t->tick)
                return;
        if (!on) {
                (void)sd_event_source_set_enabled(t->tick, SD_EVENT_OFF);
                return;
        }
        if (sd_event_source_set_time_relative(t->tick, TUI_TICK_USEC) < 0 ||
            sd_event_source_set_enabled(t->tick, SD_EVENT_ONESHOT) < 0)
                log_debug("Cannot arm the screen's tick.");
}

static void run_tick(Tui *t)
{
        int r;

        if (!t->current || !t->current->vtable->tick)
                return;
        r = t->current->vtable->tick(t, t->current);
        if (r < 0)
                tui_message(t, THEME_ERROR, "%s", strerror(-r));
        if (r != REACTION_NONE)
                request_redraw(t);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
        Tui *t = userdata;

        run_tick(t);
        arm_tick(t);
        return 0;
}

int tui_show(Tui *t, const ScreenVTable *vtable)
{
        Screen *s = tui_screen_of(t, vtable);
        int r;

        if (!s || s == t->current)
                return 0;
        if (s->vtable->enter) {
                /* A screen may refuse (the link screen without links): nothing changes. */
                r = s->vtable->enter(t, s);
                if (r < 0)
                        return r;
        }
        if (t->current && t->current->vtable->leave)
                t->current->vtable->leave(t, t->current);
        /* Help returns to where it was opened; other screens go back to the overview. */
        if (s != t->help)
                t->previous = s == t->home ? NULL : t->home;
        else
                t->previous = t->current;
        t->current = s;
        arm_tick(t);
        request_redraw(t);
        return 0;
}

static void go_back(Tui *t)
{
        if (t->previous)
                (void)tui_show(t, t->previous->vtable);
}

size_t tui_n_screens(Tui *t)
{
        return t->n_screens;
}

const ScreenVTable *tui_screen_at(Tui *t, size_t i)
{
        return i < t->n_screens ? t->screens[i].vtable : NULL;
}

/* The screens that have a tab and a number key, in order. */
size_t tui_tab_screens(Tui *t, const ScreenVTable *ret[TUI_TABS])
{
        size_t n = 0;

        for (size_t i = 0; i < t->n_screens && n < TUI_TABS; i++)
                if (t->screens[i].vtable->number > 0)
                        ret[n++] = t->screens[i].vtable;
        return n;
}

/* The first screen whose question is open over every screen (the first-join question). */
static Screen *overlay_open(Tui *t, const KeyHelp **ret_keys)
{
        for (size_t i = 0; i < t->n_screens; i++) {
                Screen *s = &t->screens[i];
                const KeyHelp *k = s->vtable->overlay_keys ? s->vtable->overlay_keys(t, s) : NULL;

                if (k) {
                        if (ret_keys)
                                *ret_keys = k;
                        return s;
                }
        }
        return NULL;
}

/* A question another screen holds (a pairing, an NFC tag), with the key that shows it: the
 * person may be anywhere when a device asks. */
static bool screen_asks(Tui *t, char *buf, size_t size)
{
        const ScreenVTable *tabs[TUI_TABS];
        char q[512];
        size_t n;

        if (roam_live_get_state(t->live) != ROAM_LIVE_READY)
                return false;
        n = tui_tab_screens(t, tabs);
        for (size_t i = 0; i < n; i++) {
                Screen *s = tui_screen_of(t, tabs[i]);

                if (!s || s == t->current || !tabs[i]->asks || !tabs[i]->asks(t, s, q, sizeof(q)))
                        continue;
                snprintf(buf, size, "%s Press %d to answer.", q, tabs[i]->number);
                return true;
        }
        return false;
}

static void status_text(Tui *t, char *buf, size_t size, ThemeRole *role)
{
        const RoamModel *m = tui_model(t);

        *role = THEME_STATUS;
        if (tui_confirm_question(t)) {
                snprintf(buf, size, "%s", tui_confirm_question(t));
                *role = THEME_WARNING;
                (void)tui_confirm_settling(t); /* the frame says whether it takes keys yet */
                return;
        }
        if (t->message) {
                snprintf(buf, size, "%s", t->message);
                *role = t->message_role;
                return;
        }
        if (screen_asks(t, buf, size)) {
                *role = THEME_WARNING;
                return;
        }
        switch (roam_live_get_state(t->live)) {
        case ROAM_LIVE_NO_BUS:
                snprintf(buf, size, "No system bus; trying again");
                *role = THEME_ERROR;
                break;
        case ROAM_LIVE_NOT_RUNNING:
                snprintf(buf, size, "roamd is not running; waiting for it");
                *role = THEME_ERROR;
                break;
        case ROAM_LIVE_LOADING:
                snprintf(buf, size, "Reading roamd's state");
                break;
        case ROAM_LIVE_FAILED:
                snprintf(buf, size, "roamd's answer could not be read");
                *role = THEME_ERROR;
                break;
        case ROAM_LIVE_READY:
                snprintf(buf, size, "Connected to roamd %s %s %zu link%s", m->version,
                         tui_glyph_dot(t), m->n_links, m->n_links == 1 ? "" : "s");
                break;
        case _ROAM_LIVE_STATE_MAX:
        case _ROAM_LIVE_STATE_INVALID:
                buf[0] = 0;
                break;
        }
}

static const KeyHelp global_hint_help = {"?", "help", NULL};
static const KeyHelp global_hint_quit = {"q", "quit", NULL};

static int hint_width(const KeyHelp *k)
{
        return (int)(strlen(k->keys) + 1 + strlen(k->hint));
}

static int draw_hint(Tui *t, int x, const KeyHelp *k, int gap)
{
        if (t->n_hint_spots < ELEMENTSOF(t->hint_spots))
                t->hint_spots[t->n_hint_spots++] =
                    (typeof(t->hint_spots[0])){x, x + hint_width(k), k};
        x += tui_print(t, LINES - 1, x, COLS - x, THEME_KEY, k->keys);
        x += tui_print(t, LINES - 1, x, COLS - x, THEME_HINT, " ");
        x += tui_print(t, LINES - 1, x, COLS - x, THEME_HINT, k->hint);
        return x + gap;
}

/* Picks the hints that fit in priority order (a hint that does not fit is left out, the
 * next may still fit); the number left out. */
static size_t pick_hints(const KeyHelp *const *by_priority, size_t n, int gap, bool *shown)
{
        int used = 1; /* the first column is a margin */
        size_t left_out = 0;

        for (size_t i = 0; i < n; i++) {
                int need = hint_width(by_priority[i]) + (used > 1 ? gap : 0);

                shown[i] = used + need <= COLS;
                if (shown[i])
                        used += need;
                else
                        left_out++;
        }
        return left_out;
}

#define HINTS_MAX 32

/* The key-hint bar: "? help" first and always, then the screen's keys that act now in the
 * order the screen lists them (its most important first), then "q quit". When they do not all
 * fit with two-space gaps, one-space gaps are tried; when even those leave some out, the
 * least important are left out. They are drawn as: ? help, q quit, the screen's. */
static void draw_hints(Tui *t)
{
        const KeyHelp *by_priority[HINTS_MAX];
        bool shown[HINTS_MAX];
        size_t n = 0;
        int x = 1, gap = 2;

        tui_fill(t, LINES - 1, 0, COLS, THEME_HINT);
        if (tui_current_typing(t) && t->current->vtable->typing_keys) {
                /* While typing, ? and q are text: only the keys that still act show. */
                for (const KeyHelp *k = t->current->vtable->typing_keys; k->keys && n < HINTS_MAX;
                     k++)
                        by_priority[n++] = k;
                if (pick_hints(by_priority, n, gap, shown) > 0 &&
                    pick_hints(by_priority, n, 1, shown) == 0)
                        gap = 1;
                else
                        (void)pick_hints(by_priority, n, gap, shown);
                for (size_t i = 0; i < n; i++)
                        if (shown[i])
                                x = draw_hint(t, x, by_priority[i], gap);
                return;
        }
        /* A deliberate question (quitting the demo) offers its own keys alone. */
        bool deliberate = tui_confirm_is_deliberate(t);
        if (!deliberate)
                by_priority[n++] = &global_hint_help;
        /* The first-join question's keys, while it is open, instead of the screen's. */
        const KeyHelp *prompt_keys = tui_confirm_keys(t);
        if (!prompt_keys)
                (void)overlay_open(t, &prompt_keys);
        for (const KeyHelp *k = prompt_keys; k && k->keys && n < HINTS_MAX - 1; k++)
                by_priority[n++] = k;
        /* Without roamd, the screens' keys have nothing to act on: only the global ones show. */
        if (!prompt_keys &&
            (t->current == t->help || roam_live_get_state(t->live) == ROAM_LIVE_READY))
                for (const KeyHelp *k = t->current->vtable->keys; k && k->keys && n < HINTS_MAX - 1;
                     k++)
                        if (k->hint && (!t->current->vtable->key_active ||
                                        t->current->vtable->key_active(t, t->current, k)))
                                by_priority[n++] = k;
        if (!deliberate)
                by_priority[n++] = &global_hint_quit;

        /* One-space gaps only when they make every hint fit; otherwise two, and the least
         * important hints are left out (the help screen has them all). */
        if (pick_hints(by_priority, n, gap, shown) > 0) {
                if (pick_hints(by_priority, n, 1, shown) == 0)
                        gap = 1;
                else
                        (void)pick_hints(by_priority, n, gap, shown);
        }
        if (shown[0])
                x = draw_hint(t, x, by_priority[0], gap);
        if (shown[n - 1])
                x = draw_hint(t, x, by_priority[n - 1], gap);
        for (size_t i = 1; i + 1 < n; i++)
                if (shown[i])
                        x = draw_hint(t, x, by_priority[i], gap);
}

/* Lays the status text out in rows of COLS - 2 columns from column 1, broken at spaces (a word
 * longer than a row is cut); draws up to max_rows of them when draw. Returns the rows needed. */
static int layout_status(Tui *t, const char *s, int y, int max_rows, ThemeRole role, bool draw)
{
        _cleanup_free_ wchar_t *w = NULL;
        int width = COLS - 2, row = 0, col = 0;
        size_t n;

        if (width <= 0 || tui_decode(t, s, &w, &n) < 0)
                return 1;
        for (size_t i = 0; i < n; i++) {
                int cw = tui_wcwidth(w[i]);

                if (w[i] != L' ' && (i == 0 || w[i - 1] == L' ') && col > 0) {
                        int ww = 0;

                        for (size_t k = i; k < n && w[k] != L' '; k++)
                                ww += tui_wcwidth(w[k]);
                        if (col + ww > width && ww <= width) {
                                row++;
                                col = 0;
                        }
                }
                if (col + cw > width) {
                        row++;
                        col = 0;
                }
                if (col == 0 && w[i] == L' ' && row > 0)
                        continue; /* no row starts with the space it was broken at */
                if (draw && row < max_rows)
                        tui_put_wchar(t, y + row, 1 + col, w[i], role);
                col += cw;
        }
        return row + 1;
}

/* A long message (an error with its reason) may take up to three rows, when there is room. */
static int status_rows(Tui *t, const char *s)
{
        int max_rows = MAX(1, MIN(3, (LINES - 3) / 3));

        return MIN(layout_status(t, s, 0, 0, THEME_STATUS, false), max_rows);
}

static void wrap_status(Tui *t, const char *s, int y, int rows, ThemeRole role)
{
        (void)layout_status(t, s, y, rows, role, true);
}

static void write_frame_marker(Tui *t)
{
        char buf[160];
        int n;

        /* escdelay: how long curses waits after Esc (the value in force, $ESCDELAY included) */
        n = snprintf(buf, sizeof(buf),
                     "\033]2;roam-frame %u screen=%s live=%s size=%dx%d settling=%d loading=%d "
                     "escdelay=%d\007",
                     ++t->frames, t->current->vtable->name,
                     roam_live_state_to_string(roam_live_get_state(t->live)), COLS, LINES,
                     t->ask.frame_settling,
                     t->current->vtable->loading && t->current->vtable->loading(t, t->current),
                     get_escdelay());
        if (n > 0 && write(STDOUT_FILENO, buf, (size_t)MIN((size_t)n, sizeof(buf) - 1)) < 0)
                t->test_frames = false;
}

static void arm_refresh(Tui *t)
{
        if (t->frozen_clock || t->refresh_usec == UINT64_MAX) {
                (void)sd_event_source_set_enabled(t->refresh, SD_EVENT_OFF);
                return;
        }
        /* A few ms late, so the text has surely changed when we look. */
        if (sd_event_source_set_time_relative(t->refresh, t->refresh_usec + 5 * USEC_PER_MSEC) <
                0 ||
            sd_event_source_set_enabled(t->refresh, SD_EVENT_ONESHOT) < 0)
                log_debug("Cannot arm the refresh timer.");
}

int tui_copy(Tui *t, const char *text)
{
        /* OSC 52 carries base64; nothing in our dependencies encodes it, so a few lines. */
        static const char b64[] =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        size_t n = strlen(text), k = 0;
        _cleanup_free_ char *out = malloc(4 * ((n + 2) / 3) + 1);
        const unsigned char *in = (const unsigned char *)text;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i += 3) {
                unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
                             (i + 2 < n ? in[i + 2] : 0);

                out[k++] = b64[v >> 18 & 63];
                out[k++] = b64[v >> 12 & 63];
                out[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
                out[k++] = i + 2 < n ? b64[v & 63] : '=';
        }
        out[k] = 0;
        /* Through curses' own stream, so it never lands inside one of its sequences. */
        if (fprintf(stdout, "\033]52;c;%s\a", out) < 0 || fflush(stdout) != 0)
                return -EIO;
        return 0;
}

static void draw(Tui *t)
{
        char buf[512];
        ThemeRole role;

        if (t->suspended)
                return;

        t->cursor_y = 0;
        t->cursor_x = 0;
        t->refresh_usec = UINT64_MAX;
        t->ask.frame_settling = false;
        bkgdset(' ' | t->attrs[THEME_NORMAL] | (chtype)COLOR_PAIR(t->pairs[THEME_NORMAL]));
        erase();
        t->n_hint_spots = t->n_tab_spots = 0;
        if (t->n_row_items != LINES) {
                int *n = reallocarray(t->row_items, (size_t)MAX(LINES, 1), sizeof(int));

                if (n) {
                        t->row_items = n;
                        t->n_row_items = LINES;
                }
        }
        for (int y = 0; y < t->n_row_items; y++)
                t->row_items[y] = -1;

        if (COLS < MIN_COLUMNS || LINES < MIN_LINES) {
                snprintf(buf, sizeof(buf), "Window too small (%dx%d): roam needs %dx%d.", COLS,
                         LINES, MIN_COLUMNS, MIN_LINES);
                /* Broken at spaces, like the status line: "80x24" never splits. */
                (void)layout_status(t, buf, 0, LINES, THEME_ERROR, true);
        } else {
                int rows;

                status_text(t, buf, sizeof(buf), &role);
                rows = status_rows(t, buf);
                tui_draw_header(t);
                t->current->vtable->draw(t, t->current, 1, LINES - 2 - rows);
                for (size_t i = 0; i < t->n_screens; i++)
                        if (t->screens[i].vtable->overlay_draw)
                                t->screens[i].vtable->overlay_draw(t, &t->screens[i], 1,
                                                                   LINES - 2 - rows);
                for (int y = LINES - 1 - rows; y < LINES - 1; y++)
                        tui_fill(t, y, 0, COLS, THEME_STATUS);
                wrap_status(t, buf, LINES - 1 - rows, rows, role);
                draw_hints(t);
        }

        t->cursor_y = MIN(t->cursor_y, LINES - 1);
        t->cursor_x = MIN(t->cursor_x, COLS - 1);
        move(t->cursor_y, t->cursor_x);
        wnoutrefresh(stdscr);
        doupdate();
        tui_overlay_hyperlinks(t, t->hyperlinks, t->cursor_y, t->cursor_x);
        if (t->test_frames)
                write_frame_marker(t);
        arm_refresh(t);
}

static int on_redraw(sd_event_source *s, void *userdata)
{
        draw(userdata);
        return 0;
}

static int on_refresh(sd_event_source *s, uint64_t usec, void *userdata)
{
        request_redraw(userdata);
        return 0;
}

static void handle_resize(Tui *t)
{
        struct winsize ws = {};

        /* At once, not on the next key: the size from the terminal, then curses catches up.
         * Only on a real change: ncurses 6.4's resizeterm() queues a KEY_RESIZE on every call,
         * and that key comes back here; calling it again at the same size would queue another
         * one forever. */
        if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) >= 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
            is_term_resized(ws.ws_row, ws.ws_col))
                resizeterm(ws.ws_row, ws.ws_col);
        clearok(curscr, TRUE);
        request_redraw(t);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        Tui *t = userdata;

        if (si->ssi_signo == SIGWINCH)
                handle_resize(t);
        else if (si->ssi_signo == SIGUSR1) {
                /* Screenshot tests (frozen clock): the time a question's grace lasts has
                 * passed. */
                tui_grace_end(t);
                run_tick(t); /* and a tick's time */
                request_redraw(t);
        } else if (si->ssi_signo == SIGINT && t->suspended)
                return 0; /* the terminal's Ctrl-C, meant for the program in the foreground */
        else
                (void)sd_event_exit(t->event, 0);
        return 0;
}

static int confirmed_quit(Tui *t, void *userdata, const char *subject)
{
        return REACTION_QUIT;
}

static int global_key(Tui *t, int key)
{
        switch (key) {
        case 'q':
        case 'Q':
        case TUI_KEY(KEY_F(10)):
                if (t->quit_consequence) {
                        _cleanup_free_ char *q = NULL;

                        if (asprintf(&q, "Quit roam? %s", t->quit_consequence) < 0)
                                return -ENOMEM;
                        return tui_confirm_deliberate(t, "quit", confirmed_quit, NULL, q,
                                                      "Not quit: roam goes on.");
                }
                return REACTION_QUIT;
        case '?':
        case TUI_KEY(KEY_F(1)):
                if (t->current == t->help)
                        go_back(t);
                else
                        (void)tui_show(t, t->help->vtable);
                return REACTION_REDRAW;
        case TUI_KEY_ESCAPE:
        case TUI_KEY(KEY_BACKSPACE):
        case 127:
                go_back(t);
                return REACTION_REDRAW;
        case 12: /* Ctrl-L */
                clearok(curscr, TRUE);
                return REACTION_REDRAW;
        case '/':
                /* Only the long lists filter; elsewhere / says so rather than nothing. */
                tui_message(t, THEME_STATUS,
                            "The %s screen has no filter: / filters the links on 1 Overview, "
                            "a link's history on 2 Link, the apps on 3 Apps, the owners on 5 "
                            "Usage, the devices on Devices and Bluetooth and the rules on "
                            "Firewall.",
                            t->current->vtable->title);
                return REACTION_REDRAW;
        case TUI_KEY(KEY_RESIZE):
                handle_resize(t);
                return REACTION_REDRAW;
        }
        /* The screens without a tab (t Time, w Wake queue): from every screen that does not
         * use the letter itself (Bluetooth's t trusts). */
        for (size_t i = 0; i < t->n_screens; i++)
                if (t->screens[i].vtable->letter && t->screens[i].vtable->letter == key) {
                        (void)tui_show(t, t->screens[i].vtable);
                        return REACTION_REDRAW;
                }
        if (key >= '1' && key <= '9') {
                const ScreenVTable *screens[TUI_TABS];
                size_t n = tui_tab_screens(t, screens);

                for (size_t i = 0; i < n; i++)
                        if (screens[i]->number == key - '0') {
                                char why[256];
                                int r = tui_show(t, screens[i]);

                                /* A screen that refuses says why, in the words of its tab. */
                                if (r == -ENOENT) {
                                        if (!tui_screen_unavailable(t, screens[i], why,
                                                                    sizeof(why)))
                                                snprintf(why, sizeof(why), "nothing to show");
                                        tui_message(t, THEME_WARNING, "%d %s: %s.",
                                                    screens[i]->number, screens[i]->title, why);
                                }
                                return REACTION_REDRAW;
                        }
        }
        return REACTION_NONE;
}

static void handle_key(Tui *t, int key);

/* The key a hint stands for, as its first spelling says it ("Esc", "Enter", "a"). */
static int hint_key(const KeyHelp *k)
{
        static const struct {
                const char *name;
                int key;
        } names[] = {
            {"Esc", TUI_KEY_ESCAPE}, {"Enter", '\r'}, {"Tab", '\t'},
            {"Space", ' '},          {"Ctrl-U", 21},  {"Backspace", 127},
        };

        for (size_t i = 0; i < ELEMENTSOF(names); i++)
                if (streq(k->keys, names[i].name))
                        return names[i].key;
        return strlen(k->keys) == 1 ? k->keys[0] : 0;
}

/* Clicks select (an item), run (a hint) or switch (a tab); the wheel moves like the arrows. */
static void handle_mouse(Tui *t)
{
        MEVENT ev;
        int r = REACTION_NONE;

        if (getmouse(&ev) != OK)
                return;
        if (ev.bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
                for (int i = 0; i < 3; i++)
                        handle_key(t, TUI_KEY(ev.bstate & BUTTON4_PRESSED ? KEY_UP : KEY_DOWN));
                return;
        }
        if (!(ev.bstate & BUTTON1_PRESSED) || ev.y < 0 || ev.y >= LINES)
                return;
        if (ev.y == LINES - 1) {
                for (size_t i = 0; i < t->n_hint_spots; i++)
                        if (ev.x >= t->hint_spots[i].x0 && ev.x < t->hint_spots[i].x1) {
                                int key = hint_key(t->hint_spots[i].k);

                                if (key)
                                        handle_key(t, key);
                                return;
                        }
                return;
        }
        if (ev.y == 0) {
                for (size_t i = 0; i < t->n_tab_spots; i++)
                        if (ev.x >= t->tab_spots[i].x0 && ev.x < t->tab_spots[i].x1) {
                                if (!t->tab_spots[i].v)
                                        handle_key(t, '?');
                                else if (t->tab_spots[i].v->number == 0)
                                        handle_key(t, t->tab_spots[i].v->letter);
                                else
                                        handle_key(t, '0' + t->tab_spots[i].v->number);
                                return;
                        }
                return;
        }
        if (tui_confirm_question(t))
                return; /* a y/N question is answered by a key (or its hint), not a row */
        Screen *o = overlay_open(t, NULL);
        if (o) {
                /* The first-join question is modal: a click on a choice answers it. */
                if (ev.y < t->n_row_items && t->row_items[ev.y] >= 0 && o->vtable->overlay_click)
                        r = o->vtable->overlay_click(t, o, t->row_items[ev.y]);
                if (r < 0)
                        tui_message(t, THEME_ERROR, "%s", strerror(-r));
                request_redraw(t);
                return;
        }
        if (ev.y < t->n_row_items && t->row_items[ev.y] >= 0 && t->current->vtable->click)
                r = t->current->vtable->click(t, t->current, t->row_items[ev.y]);
        if (r < 0)
                tui_message(t, THEME_ERROR, "%s", strerror(-r));
        else if (r & REACTION_BACK)
                go_back(t);
        if (r != REACTION_NONE)
                request_redraw(t);
}

static void handle_key(Tui *t, int key)
{
        int r = REACTION_UNHANDLED;

        if (key == TUI_KEY(KEY_MOUSE)) {
                handle_mouse(t);
                return;
        }

        /* A message stays until the next key. */
        if (t->message) {
                free(t->message);
                t->message = NULL;
                request_redraw(t);
        }
        r = tui_confirm_key(t, key);
        for (size_t i = 0; i < t->n_screens && r == REACTION_UNHANDLED; i++)
                if (t->screens[i].vtable->overlay_key)
                        r = t->screens[i].vtable->overlay_key(t, &t->screens[i], key);
        if (r == REACTION_UNHANDLED && t->current->vtable->key)
                r = t->current->vtable->key(t, t->current, key);
        if (r < 0) {
                tui_message(t, THEME_ERROR, "%s", strerror(-r));
                return;
        }
        if (r & REACTION_UNHANDLED)
                r = global_key(t, key);
        if (r & REACTION_QUIT) {
                (void)sd_event_exit(t->event, 0);
                return;
        }
        if (r & REACTION_BACK)
                go_back(t);
        if (r & (REACTION_REDRAW | REACTION_BACK))
                request_redraw(t);
}

static int on_input(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Tui *t = userdata;
        wint_t ch;
        int r;

        /* nodelay: read what is there, then back to the loop. A key that suspended roam (the
         * login browser) ends the reading: what was typed after it is not roam's, and
         * tui_resume() drops what curses had read ahead. */
        while (!t->suspended && (r = get_wch(&ch)) != ERR) {
                if (r == KEY_CODE_YES)
                        handle_key(t, TUI_KEY((int)ch));
                else
                        handle_key(t, (int)ch);
        }
        if ((revents & (EPOLLHUP | EPOLLERR)) && !(revents & EPOLLIN))
                (void)sd_event_exit(t->event, 0); /* the terminal is gone */
        return 0;
}

static void select_neighbour(Tui *t, const RoamLink *gone)
{
        const RoamModel *m = tui_model(t);

        for (size_t i = 0; i < m->n_links; i++)
                if (m->links[i] == gone) {
                        const RoamLink *n = i + 1 < m->n_links ? m->links[i + 1]
                                            : i > 0            ? m->links[i - 1]
                                                               : NULL;
                        tui_select_link(t, n ? n->path : NULL);
                        return;
                }
}

/* Tells every screen that roamd appeared or went away; the shown screen's reaction. */
static int roamd_hooks(Tui *t, bool appeared)
{
        int reaction = REACTION_NONE;

        for (size_t i = 0; i < t->n_screens; i++) {
                Screen *s = &t->screens[i];
                int (*hook)(Tui *, Screen *) =
                    appeared ? s->vtable->roamd_appeared : s->vtable->roamd_gone;
                int r = hook ? hook(t, s) : REACTION_NONE;

                if (r < 0)
                        log_debug_errno(r, "Screen %s: %m", s->vtable->name);
                else if (s == t->current)
                        reaction = r;
        }
        return reaction;
}

static void on_live_event(RoamLive *live, const RoamLiveEvent *ev, void *userdata)
{
        Tui *t = userdata;
        const RoamModel *m = tui_model(t);
        int r = REACTION_REDRAW;

        switch (ev->type) {
        case ROAM_LIVE_EVENT_STATE:
                if (roam_live_get_state(live) == ROAM_LIVE_READY) {
                        /* Keep the user's choice across a roamd restart when the link exists. */
                        if (!t->selected_link || !roam_model_find_link(m, t->selected_link)) {
                                const RoamLink *best = roam_model_best_link(m);

                                tui_select_link(t, best             ? best->path
                                                   : m->n_links > 0 ? m->links[0]->path
                                                                    : NULL);
                        }
                        r |= roamd_hooks(t, true);
                        /* The "went away" message must not outlive the return. */
                        if (t->roamd_lost)
                                tui_message(t, THEME_OK, "roamd is back.");
                        t->roamd_lost = false;
                } else if (ev->old_state == ROAM_LIVE_READY) {
                        r |= roamd_hooks(t, false);
                        tui_message(t, THEME_ERROR, "roamd went away; waiting for it to return");
                        t->roamd_lost = true;
                }
                break;
        case ROAM_LIVE_EVENT_LINK_ADDED:
                if (!t->selected_link)
                        tui_select_link(t, ev->link->path);
                break;
        case ROAM_LIVE_EVENT_LINK_REMOVED:
                if (streq_ptr(t->selected_link, ev->link->path))
                        select_neighbour(t, ev->link);
                break;
        case ROAM_LIVE_EVENT_REPROBE:
                if (!ev->error)
                        tui_message(t, THEME_OK, "roamd is probing %s again.", ev->link_name);
                else if (roam_bus_error_is_denied(ev->error)) {
                        char why[256];

                        tui_message(t, THEME_ERROR, "Not allowed to re-probe %s: %s.",
                                    ev->link_name,
                                    roam_bus_denied_reason(ev->error, why, sizeof(why)));
                } else
                        tui_message(t, THEME_ERROR, "Re-probe of %s failed: %s", ev->link_name,
                                    ev->error->message ? ev->error->message : ev->error->name);
                break;
        case ROAM_LIVE_EVENT_APP_CALL:
                if (!ev->error)
                        tui_message(t, THEME_OK, "Done: %s %s.", ev->app_id, ev->action);
                else if (roam_bus_error_is_denied(ev->error)) {
                        char why[256];

                        tui_message(t, THEME_ERROR, "Not allowed to change %s: %s.", ev->app_id,
                                    roam_bus_denied_reason(ev->error, why, sizeof(why)));
                } else
                        tui_message(t, THEME_ERROR, "Cannot change %s (%s): %s", ev->app_id,
                                    ev->action,
                                    ev->error->message ? ev->error->message : ev->error->name);
                break;
        case ROAM_LIVE_EVENT_MANAGER:
        case ROAM_LIVE_EVENT_LINK_CHANGED:
        case ROAM_LIVE_EVENT_APP_ADDED:
        case ROAM_LIVE_EVENT_APP_REMOVED:
        case ROAM_LIVE_EVENT_APP_CHANGED:
        case ROAM_LIVE_EVENT_APP_WAKE:
                break;
        case _ROAM_LIVE_EVENT_TYPE_MAX:
        case _ROAM_LIVE_EVENT_TYPE_INVALID:
                break;
        }

        if (t->current->vtable->model_changed)
                r |= t->current->vtable->model_changed(t, t->current, ev);
        if (r & REACTION_BACK)
                go_back(t);
        request_redraw(t);
}

/* Curses attributes of a role. Without colour, colours are dropped and attributes stay. */
static void setup_styles(Tui *t)
{
        static const struct {
                unsigned theme;
                attr_t curses;
        } map[] = {
            {THEME_ATTR_BOLD, A_BOLD},           {THEME_ATTR_DIM, A_DIM},
            {THEME_ATTR_UNDERLINE, A_UNDERLINE}, {THEME_ATTR_REVERSE, A_REVERSE},
            {THEME_ATTR_STANDOUT, A_STANDOUT},
        };
        bool default_colours = t->colour && use_default_colors() == OK;

        for (ThemeRole r = 0; r < _THEME_ROLE_MAX; r++) {
                const ThemeStyle *s = &t->theme.roles[r];
                short fg = s->fg, bg = s->bg;

                t->attrs[r] = 0;
                for (size_t i = 0; i < ELEMENTSOF(map); i++)
                        if (s->attrs & map[i].theme)
                                t->attrs[r] |= map[i].curses;
                t->pairs[r] = 0;
                if (!t->colour)
                        continue;
                fg = theme_colour_fit(fg, COLORS);
                bg = theme_colour_fit(bg, COLORS);
                if (!default_colours) {
                        /* No "default" on this terminal (TERM=vt220...): white on black. */
                        fg = fg < 0 ? COLOR_WHITE : fg;
                        bg = bg < 0 ? COLOR_BLACK : bg;
                }
                if (init_pair((short)(r + 1), fg, bg) == OK)
                        t->pairs[r] = (short)(r + 1);
        }
}

ThemeRole tui_verdict_role(const char *verdict)
{
        switch (roam_verdict_from_string(verdict)) {
        case ROAM_VERDICT_ONLINE:
                return THEME_OK;
        case ROAM_VERDICT_PARTIAL:
        case ROAM_VERDICT_LOCAL:
        case ROAM_VERDICT_CHECKING:
                return THEME_WARNING;
        case ROAM_VERDICT_PORTAL:
                return THEME_PORTAL;
        case ROAM_VERDICT_OFFLINE:
                return THEME_ERROR;
        case _ROAM_VERDICT_MAX:
        case _ROAM_VERDICT_INVALID:
                break;
        }
        return THEME_NORMAL;
}

static void load_theme(Tui *t, const char *wanted)
{
        _cleanup_free_ char *configured = NULL;
        const char *name = wanted;

        if (!name) {
                (void)roam_config_read(&configured);
                name = configured ? configured : "default";
        }
        if (theme_load(name, &t->theme) >= 0)
                return;
        if (!streq(name, "default") && theme_load("default", &t->theme) >= 0)
                return;
        if (theme_builtin(&t->theme) < 0)
                log_error("The built-in theme is broken.");
}

sd_event *tui_event(Tui *t)
{
        return t->event;
}

int tui_suspend(Tui *t)
{
        int r;

        if (t->suspended)
                return -EBUSY;
        /* The keys are the other program's until it ends. */
        r = sd_event_source_set_enabled(t->input, SD_EVENT_OFF);
        if (r < 0)
                return r;
        t->suspended = true;
        /* The terminal as the shell had it (curses restores it on the next refresh). */
        endwin();
        fflush(stdout);
        /* Ctrl-\ at the other program must not end ours (Ctrl-C comes as a signalfd event). */
        (void)signal(SIGQUIT, SIG_IGN);
        return 0;
}

void tui_resume(Tui *t)
{
        if (!t->suspended)
                return;
        t->suspended = false;
        (void)signal(SIGQUIT, SIG_DFL);
        /* Back to curses: what the other program typed ahead is not ours; the terminal may
         * have changed size meanwhile; the whole screen is drawn again. */
        reset_prog_mode();
        flushinp();
        (void)sd_event_source_set_enabled(t->input, SD_EVENT_ON);
        handle_resize(t);
}

/* polkit wants a password for a change (roam-auth-call.h): the screen gives way to polkit's
 * text agent on the terminal until that call is answered. */
static int interaction_begin(void *userdata)
{
        Tui *t = userdata;
        int r;

        if (geteuid() == 0 || !isatty(STDIN_FILENO) || t->suspended)
                return -EPERM;
        r = tui_suspend(t);
        if (r < 0)
                return r;
        printf("roam: polkit asks for a password to allow this change (Ctrl-C: no).\n");
        fflush(stdout);
        r = roam_polkit_agent_open();
        if (r <= 0) {
                tui_resume(t);
                return r < 0 ? r : -ENOENT;
        }
        return 0;
}

static void interaction_end(void *userdata)
{
        roam_polkit_agent_close();
        tui_resume(userdata);
}

static void tui_done(Tui *t)
{
        roam_auth_set_interaction(NULL);
        if (t->current && t->current->vtable->leave)
                t->current->vtable->leave(t, t->current);
        if (t->term) {
                endwin();
                delscreen(t->term);
                t->term = NULL;
        }
        if (t->input_file && t->input_file != stdin)
                fclose(t->input_file);
        log_set_sink(NULL, NULL);
        tui_ask_done(&t->ask);
        t->live = roam_live_free(t->live);
        sd_event_source_disable_unref(t->input);
        sd_event_source_disable_unref(t->redraw);
        sd_event_source_disable_unref(t->refresh);
        sd_event_source_disable_unref(t->tick);
        t->event = sd_event_unref(t->event);
        theme_done(&t->theme);
        for (size_t i = 0; i < t->n_screens; i++) {
                if (t->screens[i].vtable->done)
                        t->screens[i].vtable->done(t, &t->screens[i]);
                free(t->screens[i].data);
        }
        free(t->screens);
        free(t->selected_link);
        free(t->row_items);
        free(t->message);
        free(t->quit_consequence);
        strv_free(t->startup_messages);
        *t = (Tui){};
}

static int screens_init(Tui *t, const TuiOptions *opts)
{
        if (opts->n_screens == 0 || !opts->help)
                return -EINVAL;
        t->screens = calloc(opts->n_screens + 1, sizeof(Screen));
        if (!t->screens)
                return -ENOMEM;
        for (size_t i = 0; i <= opts->n_screens; i++) {
                const ScreenVTable *v = i < opts->n_screens ? opts->screens[i] : opts->help;

                t->screens[i].vtable = v;
                t->screens[i].data = calloc(1, MAX(v->data_size, (size_t)1));
                if (!t->screens[i].data)
                        return -ENOMEM;
                t->n_screens++;
        }
        t->home = &t->screens[0];
        t->help = &t->screens[opts->n_screens];
        return 0;
}

int tui_run(const TuiOptions *opts)
{
        _cleanup_(tui_done) Tui t = {};
        const char *no_color = getenv("NO_COLOR");
        sigset_t mask;
        int r;

        r = tui_check_terminal();
        if (r < 0)
                return r;

        t.utf8 = roam_locale_is_utf8();
        t.test_frames = getenv("ROAM_TEST_FRAMES") != NULL;
        t.hyperlinks = tui_term_has_hyperlinks();
        t.frozen_clock = getenv("ROAM_TEST_NOW") != NULL;
        if (opts->quit_consequence) {
                t.quit_consequence = strdup(opts->quit_consequence);
                if (!t.quit_consequence)
                        return log_oom();
        }

        /* Theme and config problems are shown on the first frame (and in the help). */
        log_set_sink(log_sink, &t);
        load_theme(&t, opts->theme);
        log_set_sink(NULL, NULL);

        r = screens_init(&t, opts);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_error_errno(r, "No screens to show.");

        r = sd_event_default(&t.event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop: %m");

        /* Curses reads a mouse report byte by byte with blocking read()s of its own, and
         * waits forever when a report arrives cut or two arrive together: the terminal is
         * opened again (a file description of our own, so stdout and the shell keep theirs)
         * without blocking, and such a read ends instead. */
        t.input_file =
            fdopen(open("/proc/self/fd/0", O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC), "r");
        if (!t.input_file)
                t.input_file = stdin;

        sigemptyset(&mask);
        sigaddset(&mask, SIGWINCH);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Cannot block signals: %m");
        r = sd_event_add_signal(t.event, NULL, SIGWINCH, on_signal, &t);
        if (r >= 0)
                r = sd_event_add_signal(t.event, NULL, SIGINT, on_signal, &t);
        if (r >= 0)
                r = sd_event_add_signal(t.event, NULL, SIGTERM, on_signal, &t);
        if (r >= 0)
                r = sd_event_add_signal(t.event, NULL, SIGHUP, on_signal, &t);
        if (r >= 0 && t.frozen_clock && t.test_frames) {
                sigset_t usr1;

                sigemptyset(&usr1);
                sigaddset(&usr1, SIGUSR1);
                if (sigprocmask(SIG_BLOCK, &usr1, NULL) < 0)
                        return log_error_errno(errno, "Cannot block SIGUSR1: %m");
                r = sd_event_add_signal(t.event, NULL, SIGUSR1, on_signal, &t);
        }
        if (r >= 0)
                r = sd_event_add_defer(t.event, &t.redraw, on_redraw, &t);
        if (r >= 0)
                r = sd_event_source_set_enabled(t.redraw, SD_EVENT_OFF);
        /* Drawing after everything else of an iteration: one frame for a burst of signals. */
        if (r >= 0)
                r = sd_event_source_set_priority(t.redraw, SD_EVENT_PRIORITY_IDLE);
        if (r >= 0)
                r = sd_event_add_time_relative(t.event, &t.refresh, CLOCK_MONOTONIC, USEC_PER_SEC,
                                               0, on_refresh, &t);
        if (r >= 0)
                r = sd_event_source_set_enabled(t.refresh, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_time_relative(t.event, &t.tick, CLOCK_MONOTONIC, TUI_TICK_USEC, 0,
                                               on_tick, &t);
        if (r >= 0)
                r = sd_event_source_set_enabled(t.tick, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_io(t.event, &t.input, fileno(t.input_file), EPOLLIN, on_input, &t);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the event loop: %m");

        /* Before curses: ESCDELAY is read when the screen starts. */
        set_escdelay(ESCAPE_DELAY_MSEC);
        t.term = newterm(NULL, stdout, t.input_file);
        if (!t.term)
                return log_error_errno(ENOTTY,
                                       "Cannot start the full-screen interface on TERM=%s. Try "
                                       "'roam --plain' or 'roam status'.",
                                       strempty(getenv("TERM")));
        set_term(t.term);
        /* From here on, log messages belong on the screen, not under it. */
        log_set_sink(log_sink, &t);
        cbreak();
        noecho();
        nonl();
        intrflush(stdscr, FALSE);
        keypad(stdscr, TRUE);
        nodelay(stdscr, TRUE);
        leaveok(stdscr, FALSE);
        /* Never cut a frame short because a key is waiting: every frame is drawn whole, and
         * the key is read right after (screenshot tests and screen readers see whole frames). */
        typeahead(-1);
        /* Screen readers follow the terminal cursor: keep it visible, on the focused item. */
        curs_set(1);
        /* Presses at once (no click interval): a click acts on the press. */
        t.mouse = !opts->no_mouse &&
                  mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL) != 0;
        if (t.mouse)
                mouseinterval(0);

        t.colour = has_colors() && (!no_color || !*no_color);
        if (t.colour && start_color() != OK)
                t.colour = false;
        if ((!t.colour || COLORS < t.theme.min_colours) && t.theme.uses_colour) {
                /* Colour themes lean on colour to tell roles apart; the monochrome theme says
                 * the same with attributes. A theme whose contrast needs more colours than the
                 * terminal has (the first 16 differ on every terminal) falls back the same way:
                 * the terminal's own colours are the only ones known to read. */
                Theme mono = {};

                /* A monochrome.theme of the user's first, else the built-in copy: this
                 * fallback cannot fail (but for OOM). */
                if (theme_load("monochrome", &mono) >= 0 ||
                    theme_builtin_named("monochrome", &mono) >= 0) {
                        theme_done(&t.theme);
                        t.theme = mono;
                }
        }
        setup_styles(&t);
        if (t.startup_messages) {
                /* The first problem is the one to fix first; the rest are a key away. */
                size_t n = strv_length(t.startup_messages);

                if (n > 1)
                        tui_message(&t, THEME_ERROR, "%s (%zu more: press ?)",
                                    t.startup_messages[0], n - 1);
                else
                        tui_message(&t, THEME_ERROR, "%s", t.startup_messages[0]);
        }

        r = roam_live_new(t.event, on_live_event, &t, &t.live);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the bus: %m");
        roam_auth_set_interaction(
            &(RoamInteraction){.begin = interaction_begin, .end = interaction_end, .userdata = &t});
        t.current = t.home;
        if (t.home->vtable->enter)
                (void)t.home->vtable->enter(&t, t.home);
        (void)roam_live_start(t.live);
        request_redraw(&t);

        r = sd_event_loop(t.event);
        if (r < 0) {
                tui_done(&t);
                return log_error_errno(r, "The event loop failed: %m");
        }
        return 0;
}
