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

#include "roam-bus.h"
#include "roam-format.h"
#include "roam-log.h"
#include "roam-text.h"
#include "roam-term.h"
#include "roam-tui-internal.h"
#include "roam-tui.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* OSC 8 hyperlinks over the URLs a frame shows (roam-tui.c draws the frame, then this). */

/* Terminals known to take OSC 8 links (others might print them). */
bool tui_term_has_hyperlinks(void)
{
        static const char *const prefixes[] = {"xterm",     "tmux",    "screen", "foot", "kitty",
                                               "alacritty", "wezterm", "vte",    "rxvt"};
        const char *term = getenv("TERM");

        for (size_t i = 0; term && i < ELEMENTSOF(prefixes); i++)
                if (strncmp(term, prefixes[i], strlen(prefixes[i])) == 0)
                        return true;
        return false;
}

/* A piece of a URL on the screen: row, column, length (ASCII: columns are bytes). */
typedef struct UrlPiece {
        int y, x, len;
} UrlPiece;

#define URL_PIECES_MAX 16

/* Reads row y as ASCII text, "" when it holds anything else; returns its length without
 * trailing blanks. */
static int screen_row(int y, char *row, size_t size)
{
        int n = mvwinnstr(stdscr, y, 0, row, MIN(COLS, (int)size - 1));

        if (n <= 0) {
                row[0] = 0;
                return 0;
        }
        row[n] = 0;
        for (int i = 0; i < n; i++)
                if ((unsigned char)row[i] >= 0x80) {
                        row[0] = 0;
                        return 0;
                }
        while (n > 0 && row[n - 1] == ' ')
                n--;
        return n;
}

/* Where url stands on the screen starting on row y: whole on the row, or its start ending the
 * row and the rest continued at the start (after the indent) of the next rows, as the
 * document layout wraps a word longer than a row. Returns the number of pieces, 0 when it is
 * not there. */
static int find_url(int y, const char *url, UrlPiece *pieces)
{
        char row[1024];
        int len = (int)strlen(url), end = screen_row(y, row, sizeof(row));
        const char *at;

        for (const char *from = row; (at = strstr(from, url)) || (at = strchr(from, url[0]));
             from = at + 1) {
                int x = (int)(at - row), got = 0, n = 0;

                if (x >= end)
                        break;
                if (strncmp(at, url, (size_t)len) == 0) {
                        pieces[0] = (UrlPiece){y, x, len};
                        return 1;
                }
                /* The row's tail must be the URL's start (more than its scheme), then each next
                 * row continues it. */
                got = end - x;
                if (got < 8 || got >= len || strncmp(at, url, (size_t)got) != 0)
                        continue;
                pieces[n++] = (UrlPiece){y, x, got};
                for (int yy = y + 1; yy < LINES - 1 && n < URL_PIECES_MAX; yy++) {
                        int e = screen_row(yy, row, sizeof(row)), xx = 0, take;

                        while (xx < e && row[xx] == ' ')
                                xx++;
                        take = MIN(e - xx, len - got);
                        if (take <= 0 || strncmp(row + xx, url + got, (size_t)take) != 0)
                                return 0;
                        pieces[n++] = (UrlPiece){yy, xx, take};
                        got += take;
                        if (got == len)
                                return n;
                        if (xx + take != e)
                                return 0; /* the URL stops before the row's end */
                }
                return 0;
        }
        return 0;
}

/* The URLs the screens print: each link's portal login URL, and its RFC 8908 API, user portal
 * and venue URLs. */
static size_t screen_urls(const RoamModel *m, const char **urls, size_t max)
{
        size_t n = 0;

        for (size_t i = 0; i < m->n_links; i++) {
                const RoamLink *l = m->links[i];
                const char *c[] = {roam_link_portal_url(l), l->capport.user_portal_url,
                                   l->capport.venue_info_url, l->captive_portal_url};

                for (size_t k = 0; k < ELEMENTSOF(c) && n < max; k++)
                        if (c[k] && strlen(c[k]) >= 8 && strncmp(c[k], "http", 4) == 0)
                                urls[n++] = c[k];
        }
        return n;
}

/* After a frame: every URL shown (whole on a row, or wrapped over rows) is written again, with
 * the same attributes, inside OSC 8 hyperlinks, so a click in the terminal opens it. A
 * wrapped URL's pieces share an id= parameter, so the terminal treats them as one link.
 * Curses cannot send OSC 8 itself; the cells keep what curses put there. */
void tui_overlay_hyperlinks(Tui *t, bool enabled, int cursor_y, int cursor_x)
{
        const RoamModel *m = tui_model(t);
        const char *urls[32];
        size_t n_urls;
        int cy = cursor_y, cx = cursor_x;
        bool wrote = false;

        if (!enabled || roam_live_get_state(tui_live(t)) != ROAM_LIVE_READY)
                return;
        n_urls = screen_urls(m, urls, ELEMENTSOF(urls));
        for (int y = 1; y < LINES - 1; y++) {
                for (size_t i = 0; i < n_urls; i++) {
                        UrlPiece pieces[URL_PIECES_MAX];
                        int n = find_url(y, urls[i], pieces);
                        char params[32] = "";

                        if (n == 0)
                                continue;
                        if (n > 1) {
                                /* From the URL (FNV-1a): the same in every frame. */
                                uint32_t h = 2166136261u;
                                for (const char *c = urls[i]; *c; c++)
                                        h = (h ^ (uint8_t)*c) * 16777619u;
                                snprintf(params, sizeof(params), "id=roam-%08" PRIx32, h);
                        }
                        for (int k = 0, off = 0; k < n; off += pieces[k].len, k++) {
                                const UrlPiece *p = &pieces[k];
                                attr_t attrs;
                                short pair;
                                cchar_t cc;
                                wchar_t wc[CCHARW_MAX + 1];

                                bool edge = p->x + p->len >= COLS;

                                /* Writing the last column leaves the terminal in its
                                 * pending-wrap state: only where a carriage return then
                                 * brings the cursor back to this row (xenl, as every
                                 * terminal that takes OSC 8 has). */
                                if ((edge && tigetflag((char *)"xenl") <= 0) ||
                                    mvwin_wch(stdscr, p->y, p->x, &cc) != OK ||
                                    getcchar(&cc, wc, &attrs, &pair, NULL) == ERR)
                                        break;
                                mvcur(cy, cx, p->y, p->x);
                                vid_attr(attrs, pair, NULL);
                                fprintf(stdout, "\033]8;%s;%s\033\\%.*s\033]8;;\033\\", params,
                                        urls[i], p->len, urls[i] + off);
                                vid_attr(A_NORMAL, 0, NULL);
                                cy = p->y;
                                cx = p->x + p->len;
                                if (edge) {
                                        fputc('\r', stdout);
                                        cx = 0;
                                }
                                wrote = true;
                        }
                        y = pieces[n - 1].y; /* rows of a wrapped URL are done */
                        break;
                }
        }
        if (wrote) {
                mvcur(cy, cx, cursor_y, cursor_x);
                fflush(stdout);
        }
}
