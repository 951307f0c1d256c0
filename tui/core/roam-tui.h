/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "roam-live.h"
#include "roam-theme.h"
#include "roam-tui-types.h"

/* The TUI framework: ncursesw driven by sd-event (stdin, the bus, SIGWINCH and a redraw source
 * in one loop; nothing polls), one vtable per screen, a header with the screens, a status line
 * and a key-hint bar. Screens draw from the live model's snapshot and never block. */

typedef struct TuiOptions {
        const char *theme; /* NULL: the config file's, else default */
        bool no_mouse;     /* leave the mouse to the terminal (selecting text) */
        /* The screens: those with a number are the tabs, in this order; the first is the home
         * screen (shown at start, Esc returns to it); help is opened by ? and F1. */
        const ScreenVTable *const *screens;
        size_t n_screens;
        const ScreenVTable *help;
        /* Quitting ends more than roam (roam-demo tears its world down): q asks first, "Quit?
         * " and this sentence (y/N), and needs a deliberate y (typed-ahead keys are ignored
         * for the grace of a question). NULL: q quits at once. */
        const char *quit_consequence;
} TuiOptions;

/* Runs the TUI on the terminal until the user quits. Returns 0 or a negative errno (logged). */
int tui_run(const TuiOptions *opts);

/* For screens. */
int tui_columns(Tui *t);
int tui_lines(Tui *t);
RoamLive *tui_live(Tui *t);
const RoamModel *tui_model(Tui *t);
bool tui_utf8(Tui *t);
const Theme *tui_theme(Tui *t);
char *const *tui_startup_messages(Tui *t);
/* The selected link's object path, shared by the overview and the link screen. */
const char *tui_selected_link(Tui *t);
void tui_select_link(Tui *t, const char *path);
/* Switches screens (the help screen returns to the screen it was opened from). */
int tui_show(Tui *t, const ScreenVTable *vtable);
/* The previous screen, for the help screen's text. */
const ScreenVTable *tui_previous_screen(Tui *t);
/* Whether a screen has something to show now: NULL, else its tab's word and (why) the
 * sentence saying why not. */
const char *tui_screen_unavailable(Tui *t, const ScreenVTable *v, char *why, size_t size);
/* The screen shown now, and whether the keys go to text typed on it. */
const ScreenVTable *tui_current_screen(Tui *t);
bool tui_current_typing(Tui *t);

/* Puts text on the terminal's clipboard (OSC 52; the terminal may refuse it). 0 or -errno. */
int tui_copy(Tui *t, const char *text);
/* For screens that follow roamd beyond the model (Bluetooth): the bus (NULL while there is
 * none), and a frame after an asynchronous answer arrived. */
sd_bus *tui_bus(Tui *t);

/* Hands the terminal to another program (the portal's login browser): the screen is left
 * as the shell had it, no frames are drawn and no keys read, Ctrl-C does not end the TUI;
 * tui_resume() takes it back and draws the whole screen again. */
int tui_suspend(Tui *t);
void tui_resume(Tui *t);
sd_event *tui_event(Tui *t);

/* A question that comes by itself ignores keys for a grace period after it first shows (a key
 * typed for the screen below must not answer it). id names the question ("firewall:NETWORK",
 * "bt:7"); a new id starts the grace. True while its keys must be ignored. */
bool tui_question_settling(Tui *t, const char *id);
/* Ends the grace at once (its timer; SIGUSR1 in screenshot tests, whose clock is frozen). */
void tui_grace_end(Tui *t);

/* Destructive actions (deny an app, reset its policy, forget a login, remove a device) ask
 * first: question (ending in "?") goes on the status line with "(y/N)", and only y runs
 * yes(t, userdata, subject); n, Esc, Enter and every other key answer no, and not_done ("Mail
 * keeps access lan.") says so on the status line (q and ? then still quit and help). subject is
 * copied (an app's ID, a device's path), so yes finds what it acts on again and says so when it
 * went meanwhile. The question is modal: nothing else takes a key while it is open. */
int tui_confirm(Tui *t, const char *subject, TuiConfirmFn yes, void *userdata, const char *question,
                const char *not_done);
/* The same for a question whose y must be typed on purpose (quitting the demo): keys are
 * ignored for its grace period, as for a question that came by itself
 * (tui_question_settling()), and q and ? answer no without quitting or opening the help. */
int tui_confirm_deliberate(Tui *t, const char *subject, TuiConfirmFn yes, void *userdata,
                           const char *question, const char *not_done);

/* A one-line message in the status line until the next key. */
void tui_message(Tui *t, ThemeRole role, const char *fmt, ...) _printf_(3, 4);
/* Drops the status line's message (a question came: what was said before is stale). */
void tui_message_clear(Tui *t);
/* Whether a link's verdict is portal (the portal screen's tab, the overview's hint). */
bool tui_any_portal(Tui *t);
/* A frame soon (a screen's own asynchronous data arrived). */
void tui_request_redraw(Tui *t);
/* Screens that show "3s ago" say when that text changes next (µs from now). */
void tui_refresh_in(Tui *t, uint64_t usec);

/* The role that repeats a verdict word in colour (online: ok, portal: portal, ...). */
ThemeRole tui_verdict_role(const char *verdict);

/* Glyphs with an ASCII fallback for non-UTF-8 locales. */
const char *tui_glyph_ellipsis(Tui *t);
const char *tui_glyph_dot(Tui *t);
const char *tui_glyph_arrow(Tui *t);

/* The cursor keys of a list of n rows, from row i: arrows and j/k one row (Tab and Shift-Tab
 * too, wrapping around), PgUp/PgDn five, Home/g and End/G the ends. *handled says whether key
 * is one of them; returns the new row, or -1 when it is not or the list is empty. */
int tui_list_key(int key, int i, int n, bool *handled);

/* Drawing: text is UTF-8 (or whatever arrived from the network); control characters and, in
 * ASCII mode, any non-ASCII character are drawn as '?', so nothing can reach the terminal as
 * an escape sequence. Returns the columns used. */
int tui_print(Tui *t, int y, int x, int width, ThemeRole role, const char *s);
void tui_fill(Tui *t, int y, int x, int width, ThemeRole role);
/* Where the terminal cursor goes after this frame: the focused item (screen readers follow
 * it). */
void tui_set_cursor(Tui *t, int y, int x);

/* A document: lines of styled spans, wrapped to the width, grouped in selectable items. The
 * link and help screens are documents; so are the overview's link rows. */
typedef struct TuiDoc TuiDoc;

int tui_doc_new(TuiDoc **ret);
TuiDoc *tui_doc_free(TuiDoc *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(TuiDoc *, tui_doc_free);
/* Starts a line. item: the selectable item it belongs to (-1: none); wrap_indent: the column
 * where wrapped rows continue. */
int tui_doc_line(TuiDoc *d, int item, int wrap_indent);
/* Appends text to the line; width > 0 pads or cuts it to that many columns. */
int tui_doc_span(TuiDoc *d, ThemeRole role, int width, const char *text);
int tui_doc_spanf(TuiDoc *d, ThemeRole role, int width, const char *fmt, ...) _printf_(4, 5);
/* A "  Label:  value" line in a column of label_width, wrapped under the value. */
int tui_doc_field(TuiDoc *d, int item, int label_width, const char *label, ThemeRole role,
                  const char *value);
size_t tui_doc_items(const TuiDoc *d);
/* Rows the document takes at the current width, or in width columns (the gutter included). */
int tui_doc_rows(Tui *t, const TuiDoc *d);
int tui_doc_rows_in(Tui *t, const TuiDoc *d, int width);
/* Draws rows [top, top + height), keeping item `selected` (-1: none) in view through *scroll
 * (the first row shown, adjusted here); the selected item is highlighted, marked with '>' in
 * a two-column gutter, and gets the cursor. */
void tui_doc_draw(Tui *t, const TuiDoc *d, int top, int height, int selected, int *scroll);
/* The same in a box of box_width columns from column left (a dialog). */
void tui_doc_draw_box(Tui *t, const TuiDoc *d, int top, int left, int height, int box_width,
                      int selected, int *scroll);
/* A dialog over the screen's rows [top, top + height): a framed box of dialog_width columns in
 * the middle when there is room for it, else the whole width of those rows. */
void tui_doc_draw_dialog(Tui *t, const TuiDoc *d, int top, int height, int dialog_width,
                         int selected, int *scroll);
/* The first item of the line after `item` whose first span has role THEME_TITLE (Tab). */
int tui_doc_next_heading_item(const TuiDoc *d, int item, int direction);
