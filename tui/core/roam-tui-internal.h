/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <wchar.h>

#include <systemd/sd-event.h>

#include "roam-theme.h"
#include "roam-tui-types.h"

/* Between the framework (roam-tui.c) and its document layout (roam-tui-doc.c). */

/* Columns left of every document line: the '>' that marks the selected item. */
#define TUI_GUTTER 2

/* Decodes s for the screen: invalid sequences, control and unprintable characters become '?'
 * (and, in ASCII mode, everything outside ASCII); bidi controls and zero-width format
 * characters (roam_char_is_format()) are dropped. */
int tui_decode(Tui *t, const char *s, wchar_t **ret, size_t *ret_n);
int tui_wcwidth(wchar_t c);
int tui_wcswidth(const wchar_t *s, size_t n);
void tui_put_wchar(Tui *t, int y, int x, wchar_t c, ThemeRole role);

/* The document drawing says which item each screen row shows, for mouse clicks. */
void tui_note_item_row(Tui *t, int y, int item);

/* Questions (roam-tui-ask.c): the grace period of a question that came by itself. */
typedef struct TuiAsk {
        char *grace_id;      /* the question whose grace runs or ran last */
        bool grace_over;     /* its keys work */
        bool frame_settling; /* a question drawn in this frame still ignores keys (tests) */
        sd_event_source *grace_timer;
        /* The y/N question before a destructive action (tui_confirm()), NULL: none open. */
        char *confirm_question;
        char *confirm_subject;
        char *confirm_not_done;
        TuiConfirmFn confirm_yes;
        void *confirm_userdata;
        /* tui_confirm_deliberate(): the question's id for its grace period ("confirm:N",
         * counted so that each opening gets a grace), NULL: an ordinary y/N question. */
        char *confirm_grace_id;
        unsigned confirm_count;
} TuiAsk;

/* The open y/N question: it takes every key first (a reaction; REACTION_UNHANDLED when none is
 * open), its words go on the status line and its keys replace the screen's in the hint bar
 * (NULL: none open). */
int tui_confirm_key(Tui *t, int key);
const char *tui_confirm_question(Tui *t);
const KeyHelp *tui_confirm_keys(Tui *t);
/* Whether the open question is a deliberate one (its keys alone in the hint bar: no "q quit"),
 * and, drawn in a frame, whether its keys are still ignored. */
bool tui_confirm_is_deliberate(Tui *t);
bool tui_confirm_settling(Tui *t);

TuiAsk *tui_ask(Tui *t);
bool tui_clock_frozen(Tui *t);
void tui_ask_done(TuiAsk *a);

/* The tabs (roam-tui-tabs.c): the screens with a number key, in order; the help screen
 * (TuiOptions.help). */
size_t tui_tab_screens(Tui *t, const ScreenVTable *ret[TUI_TABS]);
const ScreenVTable *tui_help_screen(Tui *t);
Screen *tui_screen_of(Tui *t, const ScreenVTable *vtable);
/* Every screen, in the order roam.c gives them. */
size_t tui_n_screens(Tui *t);
const ScreenVTable *tui_screen_at(Tui *t, size_t i);
void tui_note_tab(Tui *t, int x0, int x1, const ScreenVTable *v);
void tui_draw_header(Tui *t);

/* OSC 8 links (roam-tui-links.c): whether TERM is known to take them, and, after a frame, the
 * URLs it shows made clickable; the cursor is put back where the frame left it. */
bool tui_term_has_hyperlinks(void);
void tui_overlay_hyperlinks(Tui *t, bool enabled, int cursor_y, int cursor_x);
