/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "roam-tui.h"

/* The `/` filter and the `s` sort order of a list screen (the overview's links, the apps):
 * typed text narrows the list to the rows that contain it (any case); s steps through the
 * screen's orders. */

#define TUI_FILTER_MAX 64

typedef struct TuiFilter {
        char text[TUI_FILTER_MAX];
        bool editing; /* keys go to the text until Enter (keep) or Esc (clear) */
        int order;    /* the screen's sort order, 0: its default */
} TuiFilter;

/* Takes / and s, and every key while editing; REACTION_UNHANDLED for the others. n_orders: the
 * screen's orders, named in order_names (for the status message). */
int tui_filter_key(Tui *t, TuiFilter *f, int key, int n_orders, const char *const *order_names);

/* The keys that work while a filter is typed (every other key is text): the hint bar shows
 * these instead of the screen's. */
extern const KeyHelp tui_filter_typing_keys[];

/* Whether any of the fields (NULL-terminated) contains the text. */
bool tui_filter_match(const TuiFilter *f, const char *const *fields);

/* "Filter: wl (2 of 7 links), sorted by name" as a document line, when a filter is typed or
 * the order is not the default (returns 1), else nothing (0). */
int tui_filter_line(Tui *t, const TuiFilter *f, TuiDoc *d, size_t shown, size_t total,
                    const char *what, const char *const *order_names);
