/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-theme.h"
#include "roam-util.h"
#include "theme-builtin.h" /* generated from the files in themes/ */

#define THEME_FILE_MAX  (64 * 1024)
#define CONFIG_FILE_MAX (64 * 1024)

static const char *const theme_role_table[_THEME_ROLE_MAX] = {
    [THEME_NORMAL] = "normal",
    [THEME_HEADER] = "header",
    [THEME_HEADER_ACTIVE] = "header-active",
    [THEME_TITLE] = "title",
    [THEME_STATUS] = "status",
    [THEME_HINT] = "hint",
    [THEME_KEY] = "key",
    [THEME_OK] = "ok",
    [THEME_WARNING] = "warning",
    [THEME_ERROR] = "error",
    [THEME_PORTAL] = "portal",
    [THEME_SELECTED] = "selected",
    [THEME_MUTED] = "muted",
    [THEME_HEADER_OFF] = "header-off",
};

DEFINE_STRING_TABLE_LOOKUP(theme_role, ThemeRole);

static const char *const colour_names[] = {
    "black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
};

static const struct {
        const char *name;
        unsigned attr;
} attribute_names[] = {
    {"bold", THEME_ATTR_BOLD},           {"dim", THEME_ATTR_DIM},
    {"underline", THEME_ATTR_UNDERLINE}, {"reverse", THEME_ATTR_REVERSE},
    {"standout", THEME_ATTR_STANDOUT},   {"plain", 0},
};

int key_value_parse(const char *file, const char *text, size_t size, KeyValueFn fn, void *userdata)
{
        const char *p = text, *end = text + size;
        unsigned line = 0, errors = 0;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                _cleanup_free_ char *buf = strndup(p, len);
                char *l, *eq;

                line++;
                p += len + (nl ? 1 : 0);
                if (!buf)
                        return log_oom();
                if (strlen(buf) != len) {
                        log_error("%s:%u: NUL byte in line.", file, line);
                        errors++;
                        continue;
                }
                l = strstrip(buf);
                if (!*l || *l == '#')
                        continue;
                eq = strchr(l, '=');
                if (!eq) {
                        log_error("%s:%u: expected key = value, got: %s", file, line, l);
                        errors++;
                        continue;
                }
                *eq = 0;
                if (!*strstrip(l)) {
                        log_error("%s:%u: empty key before '='.", file, line);
                        errors++;
                        continue;
                }
                if (fn(file, line, strstrip(l), strstrip(eq + 1), userdata) < 0)
                        errors++;
        }
        return errors > 0 ? -EINVAL : 0;
}

/* A colour word: a name, bright-NAME, default, or colorN (0..255). Returns -EINVAL otherwise. */
static int parse_colour(const char *w, short *ret)
{
        const char *n = w;
        int base = 0;

        if (streq(w, "default")) {
                *ret = THEME_COLOUR_DEFAULT;
                return 0;
        }
        if (strncmp(w, "color", 5) == 0 && w[5]) {
                char *e;
                long v = strtol(w + 5, &e, 10);

                if (*e || v < 0 || v > 255 || (w[5] == '0' && w[6]))
                        return -EINVAL;
                *ret = (short)v;
                return 0;
        }
        if (strncmp(w, "bright-", 7) == 0) {
                n = w + 7;
                base = 8;
        }
        for (size_t i = 0; i < ELEMENTSOF(colour_names); i++)
                if (streq(n, colour_names[i])) {
                        *ret = (short)(base + (int)i);
                        return 0;
                }
        return -EINVAL;
}

static int parse_attribute(const char *w, unsigned *attrs)
{
        for (size_t i = 0; i < ELEMENTSOF(attribute_names); i++)
                if (streq(w, attribute_names[i].name)) {
                        *attrs |= attribute_names[i].attr;
                        return 0;
                }
        return -EINVAL;
}

/* [FG] [on BG] [ATTRIBUTE...] */
static int parse_style(const char *file, unsigned line, const char *role, const char *value,
                       ThemeStyle *ret)
{
        _cleanup_strv_free_ char **words = NULL;
        ThemeStyle s = {THEME_COLOUR_DEFAULT, THEME_COLOUR_DEFAULT, 0};
        bool have_fg = false, have_bg = false, have_attr = false;
        int r;

        r = strv_split(value, " \t", &words);
        if (r < 0)
                return log_oom();
        if (!words || !words[0]) {
                log_error("%s:%u: %s has no value; give colours and/or attributes, or 'plain'.",
                          file, line, role);
                return -EINVAL;
        }
        for (size_t i = 0; words[i]; i++) {
                const char *w = words[i];
                short c;

                if (streq(w, "on")) {
                        if (have_bg || have_attr || !words[i + 1] ||
                            parse_colour(words[i + 1], &c) < 0) {
                                log_error("%s:%u: %s: 'on' must be followed by a background "
                                          "colour, before any attribute.",
                                          file, line, role);
                                return -EINVAL;
                        }
                        s.bg = c;
                        have_bg = true;
                        i++;
                        continue;
                }
                if (parse_colour(w, &c) >= 0) {
                        if (have_fg || have_bg || have_attr) {
                                log_error("%s:%u: %s: colour '%s' out of place; the form is "
                                          "[FOREGROUND] [on BACKGROUND] [ATTRIBUTE...].",
                                          file, line, role, w);
                                return -EINVAL;
                        }
                        s.fg = c;
                        have_fg = true;
                        continue;
                }
                if (parse_attribute(w, &s.attrs) >= 0) {
                        have_attr = true;
                        continue;
                }
                log_error("%s:%u: %s: unknown colour or attribute '%s' (colours: default, black, "
                          "red, green, yellow, blue, magenta, cyan, white, bright-NAME, colorN; "
                          "attributes: bold, dim, underline, reverse, standout, plain).",
                          file, line, role, w);
                return -EINVAL;
        }
        *ret = s;
        return 0;
}

typedef struct ThemeParse {
        Theme *theme;
        bool seen[_THEME_ROLE_MAX];
        bool seen_description, seen_colours;
} ThemeParse;

static int theme_assign(const char *file, unsigned line, const char *key, const char *value,
                        void *userdata)
{
        ThemeParse *p = userdata;
        ThemeRole role;
        int r;

        if (streq(key, "description")) {
                if (p->seen_description) {
                        log_error("%s:%u: description given twice.", file, line);
                        return -EINVAL;
                }
                p->seen_description = true;
                return free_and_strdup(&p->theme->description, value) < 0 ? log_oom() : 0;
        }

        if (streq(key, "colours")) {
                if (p->seen_colours) {
                        log_error("%s:%u: colours given twice.", file, line);
                        return -EINVAL;
                }
                if (!streq(value, "8") && !streq(value, "16") && !streq(value, "88") &&
                    !streq(value, "256")) {
                        log_error("%s:%u: colours must be 8, 16, 88 or 256, not '%s'.", file, line,
                                  value);
                        return -EINVAL;
                }
                p->seen_colours = true;
                p->theme->min_colours = atoi(value);
                return 0;
        }

        role = theme_role_from_string(key);
        if (role < 0) {
                log_error("%s:%u: unknown role '%s' (roles: normal, header, header-active, title, "
                          "status, hint, key, ok, warning, error, portal, selected, muted).",
                          file, line, key);
                return -EINVAL;
        }
        if (p->seen[role]) {
                log_error("%s:%u: role %s given twice.", file, line, key);
                return -EINVAL;
        }
        r = parse_style(file, line, key, value, &p->theme->roles[role]);
        if (r < 0)
                return r;
        p->seen[role] = true;
        return 0;
}

void theme_done(Theme *t)
{
        free(t->name);
        free(t->path);
        free(t->description);
        *t = (Theme){};
}

short theme_colour_fit(short c, int colours)
{
        if (c < 0 || c < colours)
                return c;
        if (colours < 8)
                return THEME_COLOUR_DEFAULT;
        if (c < 16)
                return (short)(c - 8); /* bright-NAME on an 8-colour terminal: NAME */
        if (c < 232) {
                /* The 6x6x6 cube: each channel from 2 of 5 up counts as on. */
                int i = c - 16, red = i / 36, green = i / 6 % 6, blue = i % 6;

                return (short)((red >= 2 ? 1 : 0) | (green >= 2 ? 2 : 0) | (blue >= 2 ? 4 : 0));
        }
        return c < 244 ? 0 : 7; /* the grey ramp: black or white */
}

int theme_parse(const char *name, const char *file, const char *text, size_t size, Theme *ret)
{
        Theme t = {};
        ThemeParse p = {.theme = &t};
        int r;

        r = key_value_parse(file, text, size, theme_assign, &p);
        if (r < 0) {
                theme_done(&t);
                return r;
        }
        for (ThemeRole i = 0; i < _THEME_ROLE_MAX; i++) {
                /* normal is all-default if unset; a greyed tab looks like the header by default,
                 * like the tabs beside it (its number alone says it is off). */
                if (!p.seen[i])
                        t.roles[i] =
                            t.roles[i == THEME_HEADER_OFF && p.seen[THEME_HEADER] ? THEME_HEADER
                                                                                  : THEME_NORMAL];
                if (t.roles[i].fg != THEME_COLOUR_DEFAULT || t.roles[i].bg != THEME_COLOUR_DEFAULT)
                        t.uses_colour = true;
        }
        t.name = strdup(name);
        t.description = t.description ? t.description : strdup("");
        if (!t.name || !t.description) {
                theme_done(&t);
                return log_oom();
        }
        *ret = t;
        return 0;
}

int theme_builtin_named(const char *name, Theme *ret)
{
        for (size_t i = 0; i < ELEMENTSOF(builtin_themes); i++)
                if (streq(builtin_themes[i].name, name)) {
                        _cleanup_free_ char *file = NULL;

                        if (asprintf(&file, "(built-in %s theme)", name) < 0)
                                return log_oom();
                        return theme_parse(name, file, builtin_themes[i].text,
                                           strlen(builtin_themes[i].text), ret);
                }
        return -ENOENT;
}

int theme_builtin(Theme *ret)
{
        return theme_builtin_named("default", ret);
}

static int theme_load_file(const char *name, const char *path, Theme *ret)
{
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        r = read_full_file(path, THEME_FILE_MAX, &text, &size);
        if (r < 0)
                return r;
        r = theme_parse(name, path, text, size, ret);
        if (r < 0)
                return r;
        ret->path = strdup(path);
        if (!ret->path) {
                theme_done(ret);
                return log_oom();
        }
        return 0;
}

static bool valid_theme_name(const char *name)
{
        if (!*name || strlen(name) > 64 || name[0] == '.')
                return false;
        for (const char *c = name; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                      (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.'))
                        return false;
        return true;
}

/* Directories searched for NAME.theme, in order. */
static int theme_dirs(char ***ret)
{
        _cleanup_strv_free_ char **dirs = NULL;
        const char *e = getenv("ROAM_THEME_PATH"), *xdg = getenv("XDG_CONFIG_HOME"),
                   *home = getenv("HOME");
        char *d;
        int r;

        if (e && *e) {
                r = strv_split(e, ":", &dirs);
                if (r < 0)
                        return r;
        }
        if (xdg && *xdg == '/')
                r = asprintf(&d, "%s/roam/themes", xdg);
        else if (home && *home == '/')
                r = asprintf(&d, "%s/.config/roam/themes", home);
        else
                r = 0, d = NULL;
        if (r < 0)
                return -ENOMEM;
        if (d && strv_push(&dirs, d) < 0) {
                free(d);
                return -ENOMEM;
        }
        r = strv_extend(&dirs, ROAM_THEMEDIR);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(dirs);
        return 0;
}

int theme_load(const char *name, Theme *ret)
{
        _cleanup_strv_free_ char **dirs = NULL;
        int r;

        if (strchr(name, '/')) {
                r = theme_load_file(name, name, ret);
                if (r == -EINVAL)
                        return log_error_errno(r, "Theme %s has errors; using the default theme.",
                                               name);
                if (r < 0)
                        return log_error_errno(r, "Cannot read theme %s: %m", name);
                return 0;
        }
        if (!valid_theme_name(name))
                return log_error_errno(EINVAL,
                                       "Invalid theme name '%s' (letters, digits, '-', '_', '.'; "
                                       "or a path with a '/').",
                                       name);

        r = theme_dirs(&dirs);
        if (r < 0)
                return log_oom();
        STRV_FOREACH (d, dirs) {
                _cleanup_free_ char *path = NULL;

                if (asprintf(&path, "%s/%s.theme", *d, name) < 0)
                        return log_oom();
                r = theme_load_file(name, path, ret);
                if (r == -ENOENT)
                        continue;
                if (r == -EINVAL)
                        return log_error_errno(r, "Theme %s has errors; using the default theme.",
                                               path);
                if (r < 0)
                        return log_error_errno(r, "Cannot read theme %s: %m", path);
                return 0;
        }
        r = theme_builtin_named(name, ret);
        if (r != -ENOENT)
                return r;
        return log_error_errno(ENOENT,
                               "No theme named '%s' (built in: default, high-contrast, light, "
                               "monochrome; looked for %s.theme in $ROAM_THEME_PATH, "
                               "~/.config/roam/themes and %s).",
                               name, name, ROAM_THEMEDIR);
}

typedef struct ConfigParse {
        char *theme;
        bool seen_theme;
} ConfigParse;

static int config_assign(const char *file, unsigned line, const char *key, const char *value,
                         void *userdata)
{
        ConfigParse *c = userdata;

        if (streq(key, "theme")) {
                if (c->seen_theme) {
                        log_error("%s:%u: theme given twice.", file, line);
                        return -EINVAL;
                }
                if (!*value) {
                        log_error("%s:%u: theme needs a name.", file, line);
                        return -EINVAL;
                }
                c->seen_theme = true;
                return free_and_strdup(&c->theme, value) < 0 ? log_oom() : 0;
        }
        log_error("%s:%u: unknown setting '%s' (known: theme).", file, line, key);
        return -EINVAL;
}

int roam_config_read(char **ret_theme)
{
        _cleanup_free_ char *path = NULL, *text = NULL;
        const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        ConfigParse c = {};
        size_t size;
        int r;

        *ret_theme = NULL;
        if (xdg && *xdg == '/')
                r = asprintf(&path, "%s/roam/config", xdg);
        else if (home && *home == '/')
                r = asprintf(&path, "%s/.config/roam/config", home);
        else
                return 0;
        if (r < 0)
                return log_oom();

        r = read_full_file(path, CONFIG_FILE_MAX, &text, &size);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return log_error_errno(r, "Cannot read %s: %m", path);
        r = key_value_parse(path, text, size, config_assign, &c);
        *ret_theme = c.theme;
        return r;
}
