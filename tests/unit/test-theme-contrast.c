/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <math.h>

#include "roam-log.h"
#include "roam-theme.h"
#include "roam-util.h"
#include "test.h"

/* Every theme file in themes/ (THEME_DIR) meets WCAG 2.x level AA for text: a contrast ratio of
 * at least 4.5:1 between each role's foreground and background (WCAG 2.2, success criterion
 * 1.4.3; relative luminance and contrast ratio as defined in its glossary). Every role draws
 * text, so every role counts, on a 256-colour terminal and on an 8-colour one (where
 * theme_colour_fit() picks the colour roam really asks for). */

typedef struct Rgb {
        unsigned char r, g, b;
} Rgb;

/* The 16 ANSI colours differ from terminal to terminal, so a theme is checked on three common
 * palettes:
 * - xterm's, from its resources (XTerm-col.ad, *color0..*color15: the defaults in xterm's
 *   charproc.c);
 * - GNOME Terminal's "Tango" (its default palette; the same values as in gnome-terminal's
 *   profile editor);
 * - the Linux console's (default_red/grn/blu in the kernel's drivers/tty/vt/vt.c), which has
 *   8 colours only (terminfo linux: colors#8).
 * 16-231, the 6x6x6 cube with levels 0, 95, 135, 175, 215, 255, and 232-255, the grey ramp
 * 8 + 10 * n, are the same in xterm's and GNOME's (xterm's 256colres.pl, 256colres.h).
 * xterm's values are also in tests/tui/golden2svg.py. */
typedef struct Palette {
        const char *name;
        Rgb ansi16[16];
        int colours[2]; /* the colour counts it is used with; 0 ends */
} Palette;

static const Palette palettes[] = {
    {"xterm",
     {{0, 0, 0},
      {205, 0, 0},
      {0, 205, 0},
      {205, 205, 0},
      {0, 0, 238},
      {205, 0, 205},
      {0, 205, 205},
      {229, 229, 229},
      {127, 127, 127},
      {255, 0, 0},
      {0, 255, 0},
      {255, 255, 0},
      {92, 92, 255},
      {255, 0, 255},
      {0, 255, 255},
      {255, 255, 255}},
     {256, 8}},
    {"GNOME Terminal (Tango)",
     {{0x2e, 0x34, 0x36},
      {0xcc, 0x00, 0x00},
      {0x4e, 0x9a, 0x06},
      {0xc4, 0xa0, 0x00},
      {0x34, 0x65, 0xa4},
      {0x75, 0x50, 0x7b},
      {0x06, 0x98, 0x9a},
      {0xd3, 0xd7, 0xcf},
      {0x55, 0x57, 0x53},
      {0xef, 0x29, 0x29},
      {0x8a, 0xe2, 0x34},
      {0xfc, 0xe9, 0x4f},
      {0x72, 0x9f, 0xcf},
      {0xad, 0x7f, 0xa8},
      {0x34, 0xe2, 0xe2},
      {0xee, 0xee, 0xec}},
     {256, 8}},
    {"the Linux console",
     {{0x00, 0x00, 0x00},
      {0xaa, 0x00, 0x00},
      {0x00, 0xaa, 0x00},
      {0xaa, 0x55, 0x00},
      {0x00, 0x00, 0xaa},
      {0xaa, 0x00, 0xaa},
      {0x00, 0xaa, 0xaa},
      {0xaa, 0xaa, 0xaa},
      {0x55, 0x55, 0x55},
      {0xff, 0x55, 0x55},
      {0x55, 0xff, 0x55},
      {0xff, 0xff, 0x55},
      {0x55, 0x55, 0xff},
      {0xff, 0x55, 0xff},
      {0x55, 0xff, 0xff},
      {0xff, 0xff, 0xff}},
     {8, 0}},
};

static Rgb palette_colour(const Palette *p, short c)
{
        static const unsigned char level[6] = {0, 95, 135, 175, 215, 255};

        if (c < 16)
                return p->ansi16[c];
        if (c < 232) {
                int i = c - 16;

                return (Rgb){level[i / 36], level[i / 6 % 6], level[i % 6]};
        }
        return (Rgb){(unsigned char)(8 + 10 * (c - 232)), (unsigned char)(8 + 10 * (c - 232)),
                     (unsigned char)(8 + 10 * (c - 232))};
}

static Rgb xterm_colour(short c)
{
        return palette_colour(&palettes[0], c);
}

/* The terminal's own colours ("default") are unknown: a theme must read on a dark terminal
 * (white on black) and on a light one (black on white, xterm's own default) alike, unless it
 * sets both colours itself. */
static const struct {
        const char *name;
        Rgb fg, bg;
} terminals[] = {
    {"a dark terminal", {255, 255, 255}, {0, 0, 0}},
    {"a light terminal", {0, 0, 0}, {255, 255, 255}},
};

static double channel(unsigned char v)
{
        double c = v / 255.0;

        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

static double luminance(Rgb c)
{
        return 0.2126 * channel(c.r) + 0.7152 * channel(c.g) + 0.0722 * channel(c.b);
}

static double contrast(Rgb a, Rgb b)
{
        double la = luminance(a), lb = luminance(b);

        return la > lb ? (la + 0.05) / (lb + 0.05) : (lb + 0.05) / (la + 0.05);
}

/* Failures of one theme, printed all at once; returns how many. */
static unsigned theme_failures(const Theme *t, const char *file)
{
        /* The default theme is "eight colours on the terminal's own background": it follows
         * the user's palette by design (Solarized, Tango, ...) and is checked on xterm's only;
         * every other theme on all three. */
        size_t n_palettes = streq(file, "default.theme") ? 1 : ELEMENTSOF(palettes);
        unsigned failures = 0;

        for (ThemeRole role = 0; role < _THEME_ROLE_MAX; role++) {
                const ThemeStyle *s = &t->roles[role];

                /* Terminals draw faint text in no fixed colour (some blend it halfway into the
                 * background, some ignore it), so its contrast cannot be known. */
                if (s->attrs & THEME_ATTR_DIM) {
                        fprintf(stderr, "  %s: %s uses dim, whose contrast no terminal promises\n",
                                file, theme_role_to_string(role));
                        failures++;
                }
                for (size_t p = 0; p < n_palettes; p++)
                        for (size_t n = 0; n < 2 && palettes[p].colours[n]; n++)
                                for (size_t k = 0; k < ELEMENTSOF(terminals); k++) {
                                        int colours = palettes[p].colours[n];

                                        /* with fewer colours roam draws monochrome instead */
                                        if (colours < t->min_colours)
                                                break;
                                        short fg = theme_colour_fit(s->fg, colours),
                                              bg = theme_colour_fit(s->bg, colours);
                                        Rgb f = fg < 0 ? terminals[k].fg
                                                       : palette_colour(&palettes[p], fg),
                                            b = bg < 0 ? terminals[k].bg
                                                       : palette_colour(&palettes[p], bg);
                                        double ratio = contrast(f, b);

                                        if (ratio >= 4.5) {
                                                if (fg >= 0 && bg >= 0)
                                                        break; /* the terminal's colours: no part */
                                                continue;
                                        }
                                        fprintf(stderr,
                                                "  %s: %s is %d,%d,%d on %d,%d,%d: %.2f:1 < 4.5:1 "
                                                "on %s (%s) with %d colours\n",
                                                file, theme_role_to_string(role), f.r, f.g, f.b,
                                                b.r, b.g, b.b, ratio, palettes[p].name,
                                                terminals[k].name, colours);
                                        failures++;
                                        if (fg >= 0 && bg >= 0)
                                                break;
                                }
        }
        return failures;
}

TEST(contrast_formula)
{
        /* WCAG's extremes and a pair the issue measured: green on xterm's light grey. */
        ASSERT_TRUE(fabs(contrast((Rgb){0, 0, 0}, (Rgb){255, 255, 255}) - 21.0) < 0.01);
        ASSERT_TRUE(fabs(contrast((Rgb){9, 9, 9}, (Rgb){9, 9, 9}) - 1.0) < 0.01);
        ASSERT_TRUE(contrast(xterm_colour(2), xterm_colour(7)) < 1.8);
        /* colour 21 is the cube's pure blue, 244 the ramp's middle grey */
        ASSERT_TRUE(xterm_colour(21).b == 255 && xterm_colour(21).r == 0);
        ASSERT_TRUE(xterm_colour(244).g == 128);
}

TEST(every_theme_meets_aa)
{
        const char *dir = getenv("THEME_DIR");
        _cleanup_closedir_ DIR *d = NULL;
        unsigned themes = 0, failures = 0;
        struct dirent *de;

        ASSERT_TRUE(dir);
        d = opendir(dir);
        ASSERT_TRUE(d);
        while ((de = readdir(d))) {
                _cleanup_free_ char *path = NULL, *text = NULL;
                Theme t = {};
                size_t size;

                size_t n = strlen(de->d_name);

                if (n <= 6 || !streq(de->d_name + n - 6, ".theme"))
                        continue;
                ASSERT_TRUE(asprintf(&path, "%s/%s", dir, de->d_name) >= 0);
                ASSERT_OK(read_full_file(path, 64 * 1024, &text, &size));
                ASSERT_OK(theme_parse(de->d_name, path, text, size, &t));
                failures += theme_failures(&t, de->d_name);
                theme_done(&t);
                themes++;
        }
        /* default, high-contrast, light, monochrome at least */
        ASSERT_TRUE(themes >= 4);
        ASSERT_EQ(failures, 0);
}
