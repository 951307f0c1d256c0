/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "roam-macro.h"

/* Themes: files in themes/ (installed to $datadir/roam/themes) that give every role of the TUI a
 * foreground, a background and attributes. Format (docs/tui.md):
 *
 *     # comment
 *     description = Colours for a dark background
 *     ok      = green bold
 *     header  = white on blue bold
 *     selected = reverse
 *
 * A value is [COLOUR] [on COLOUR] [ATTRIBUTE...]. Parsing is strict: an unknown role, colour or
 * attribute, a role given twice, or a line without '=' is an error reported as file:line, and
 * the whole theme is refused (the caller falls back to the default). A role a theme leaves out
 * looks like "normal". Colours never carry meaning alone: every state is also a word. */

typedef enum ThemeRole {
        THEME_NORMAL,
        THEME_HEADER,
        THEME_HEADER_ACTIVE,
        THEME_TITLE,
        THEME_STATUS,
        THEME_HINT,
        THEME_KEY,
        THEME_OK,
        THEME_WARNING,
        THEME_ERROR,
        THEME_PORTAL,
        THEME_SELECTED,
        THEME_MUTED,
        THEME_HEADER_OFF, /* a tab whose screen has nothing to show now */
        _THEME_ROLE_MAX,
        _THEME_ROLE_INVALID = -EINVAL,
} ThemeRole;

const char *theme_role_to_string(ThemeRole r);
ThemeRole theme_role_from_string(const char *s);

enum {
        THEME_ATTR_BOLD = 1 << 0,
        THEME_ATTR_DIM = 1 << 1,
        THEME_ATTR_UNDERLINE = 1 << 2,
        THEME_ATTR_REVERSE = 1 << 3,
        THEME_ATTR_STANDOUT = 1 << 4,
};

#define THEME_COLOUR_DEFAULT (-1)

typedef struct ThemeStyle {
        short fg, bg; /* 0..255, or THEME_COLOUR_DEFAULT */
        unsigned attrs;
} ThemeStyle;

typedef struct Theme {
        char *name;
        char *path; /* NULL for the built-in default */
        char *description;
        bool uses_colour;
        /* The fewest colours its contrast holds with (`colours = 256`): on a terminal with
         * fewer, roam draws the monochrome theme instead. 0: any. The first 16 colours look
         * different on every terminal; only 16-255 are the same everywhere. */
        int min_colours;
        ThemeStyle roles[_THEME_ROLE_MAX];
} Theme;

void theme_done(Theme *t);

/* A theme colour that a terminal of `colours` colours can show: bright colours and the
 * 256-colour palette fall back to the nearest of the first 8, or to the default colour. */
short theme_colour_fit(short c, int colours);

/* The built-in copy of themes/default.theme, used when no file can be read. */
int theme_builtin(Theme *ret);
/* The built-in copy of a shipped theme (default, high-contrast, light, monochrome); -ENOENT
 * for any other name. Fails only on OOM otherwise. */
int theme_builtin_named(const char *name, Theme *ret);

/* Parses a theme; errors are logged as "file:line: ..." and make it -EINVAL. */
int theme_parse(const char *name, const char *file, const char *text, size_t size, Theme *ret);

/* Loads a theme by name (searched in $ROAM_THEME_PATH, $XDG_CONFIG_HOME/roam/themes, the
 * installed directory, then the built-in copies of the shipped themes) or by path (a name with
 * a '/'). -ENOENT (logged) when none is found. */
int theme_load(const char *name, Theme *ret);

/* Reads $XDG_CONFIG_HOME/roam/config (or ~/.config/roam/config): `theme = NAME`. Missing file:
 * 0 with *ret_theme NULL. Errors are logged with file:line; valid lines still count. */
int roam_config_read(char **ret_theme);

/* A strict "key = value" line parser: '#' comments, blank lines; errors as file:line. */
typedef int (*KeyValueFn)(const char *file, unsigned line, const char *key, const char *value,
                          void *userdata);
int key_value_parse(const char *file, const char *text, size_t size, KeyValueFn fn, void *userdata);
