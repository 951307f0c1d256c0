/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>
#include <wchar.h>

#include "roam-tui-internal.h"
#include "roam-tui.h"
#include "roam-util.h"

/* Documents: what the screens build every frame and tui_doc_draw() lays out. Building anew per
 * frame keeps screens free of cached state that the model could make stale. */

typedef struct TuiSpan {
        ThemeRole role;
        int width;
        char *text;
} TuiSpan;

typedef struct TuiLine {
        int item;
        int wrap_indent;
        TuiSpan *spans;
        size_t n_spans;
} TuiLine;

struct TuiDoc {
        TuiLine *lines;
        size_t n_lines;
        size_t n_items;
};

int tui_doc_new(TuiDoc **ret)
{
        *ret = calloc(1, sizeof(TuiDoc));
        return *ret ? 0 : -ENOMEM;
}

TuiDoc *tui_doc_free(TuiDoc *d)
{
        if (!d)
                return NULL;
        for (size_t i = 0; i < d->n_lines; i++) {
                for (size_t j = 0; j < d->lines[i].n_spans; j++)
                        free(d->lines[i].spans[j].text);
                free(d->lines[i].spans);
        }
        free(d->lines);
        free(d);
        return NULL;
}

int tui_doc_line(TuiDoc *d, int item, int wrap_indent)
{
        TuiLine *l = reallocarray(d->lines, d->n_lines + 1, sizeof(TuiLine));

        if (!l)
                return -ENOMEM;
        d->lines = l;
        d->lines[d->n_lines++] = (TuiLine){.item = item, .wrap_indent = wrap_indent};
        if (item >= 0 && (size_t)item + 1 > d->n_items)
                d->n_items = (size_t)item + 1;
        return 0;
}

int tui_doc_span(TuiDoc *d, ThemeRole role, int width, const char *text)
{
        TuiLine *l;
        TuiSpan *s;
        char *copy;

        if (d->n_lines == 0 && tui_doc_line(d, -1, 0) < 0)
                return -ENOMEM;
        l = &d->lines[d->n_lines - 1];
        copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        s = reallocarray(l->spans, l->n_spans + 1, sizeof(TuiSpan));
        if (!s) {
                free(copy);
                return -ENOMEM;
        }
        l->spans = s;
        l->spans[l->n_spans++] = (TuiSpan){.role = role, .width = width, .text = copy};
        return 0;
}

int tui_doc_spanf(TuiDoc *d, ThemeRole role, int width, const char *fmt, ...)
{
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&s, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return tui_doc_span(d, role, width, s);
}

int tui_doc_field(TuiDoc *d, int item, int label_width, const char *label, ThemeRole role,
                  const char *value)
{
        int r;

        r = tui_doc_line(d, item, label_width + 1);
        if (r >= 0)
                r = tui_doc_span(d, THEME_NORMAL, label_width + 1, label);
        if (r >= 0)
                r = tui_doc_span(d, role, 0, value);
        return r;
}

size_t tui_doc_items(const TuiDoc *d)
{
        return d->n_items;
}

int tui_doc_next_heading_item(const TuiDoc *d, int item, int direction)
{
        int found = -1;

        for (size_t k = 0; k < d->n_lines; k++) {
                size_t i = direction > 0 ? k : d->n_lines - 1 - k;
                const TuiLine *l = &d->lines[i];

                if (l->item < 0 || l->n_spans == 0 || l->spans[0].role != THEME_TITLE)
                        continue;
                if (direction > 0 ? l->item > item : l->item < item) {
                        found = l->item;
                        break;
                }
        }
        return found;
}

/* Calls put for every cell of the line laid out in width columns; returns the rows used. */
typedef void (*PutFn)(Tui *t, int row, int col, wchar_t c, ThemeRole role, void *userdata);

/* A space that does not break: after "±", and between a number and its unit ("0.312 s",
 * "52.3 kB"), so a wrapped line never leaves a number without its unit. */
static bool space_glued(const wchar_t *text, size_t n, size_t j)
{
        static const wchar_t *const units[] = {L"s",  L"ms",  L"us", L"\u00b5s", L"min",
                                               L"h",  L"B",   L"kB", L"MB",      L"GB",
                                               L"TB", L"dBm", L"%",  L"Mbit/s",  NULL};
        size_t k = j + 1, e;

        if (text[j] != L' ' || j == 0 || k >= n)
                return false;
        if (text[j - 1] == L'\u00b1')
                return true;
        /* inside the SSID of a network id (wifi:SSID:BSSID): the id is one name */
        for (size_t c = j; c-- > 0 && j - c <= 33;)
                if (text[c] == L':') {
                        if (c >= 4 && wcsncmp(text + c - 4, L"wifi", 4) == 0 &&
                            (c == 4 || text[c - 5] == L' ' || text[c - 5] == L'('))
                                return true;
                        break;
                }
        if (!iswdigit((wint_t)text[j - 1]))
                return false;
        for (e = k; e < n && text[e] != L' ' && text[e] != L',' && text[e] != L';' &&
                    text[e] != L')' && text[e] != L'.';
             e++)
                ;
        for (size_t u = 0; units[u]; u++)
                if (wcslen(units[u]) == e - k && wcsncmp(units[u], text + k, e - k) == 0)
                        return true;
        return false;
}

static bool is_break(const wchar_t *text, size_t n, size_t j)
{
        return text[j] == L' ' && !space_glued(text, n, j);
}

static int layout_line(Tui *t, const TuiLine *l, int width, PutFn put, void *userdata)
{
        int row = 0, col = 0;

        if (width <= 0)
                return 1;
        for (size_t i = 0; i < l->n_spans; i++) {
                const TuiSpan *s = &l->spans[i];
                _cleanup_free_ wchar_t *text = NULL;
                size_t n;
                int used = 0, limit = s->width > 0 ? s->width : INT32_MAX;

                if (tui_decode(t, s->text, &text, &n) < 0)
                        continue;
                if (s->width > 0 && tui_wcswidth(text, n) > s->width) {
                        /* Cut, and say so with an ellipsis. */
                        const char *e = tui_glyph_ellipsis(t);
                        int ew = tui_utf8(t) ? 1 : (int)strlen(e);
                        _cleanup_free_ wchar_t *et = NULL;
                        size_t en;

                        limit = s->width - ew;
                        for (size_t j = 0; j < n; j++) {
                                int w = tui_wcwidth(text[j]);

                                if (used + w > limit)
                                        break;
                                if (put)
                                        put(t, row, col, text[j], s->role, userdata);
                                col += w, used += w;
                        }
                        if (tui_decode(t, e, &et, &en) >= 0)
                                for (size_t j = 0; j < en; j++, col++, used++)
                                        if (put)
                                                put(t, row, col, et[j], s->role, userdata);
                        limit = s->width;
                } else {
                        int indent = MIN(l->wrap_indent, width - 1);
                        bool fresh_row = false;

                        for (size_t j = 0; j < n; j++) {
                                int w = tui_wcwidth(text[j]);

                                if (text[j] != L' ' && (j == 0 || is_break(text, n, j - 1))) {
                                        /* A word that does not fit here but would on the next
                                         * row goes there whole; longer ones are cut anywhere. */
                                        int ww = 0;

                                        for (size_t k = j; k < n && !is_break(text, n, k); k++)
                                                ww += tui_wcwidth(text[k]);
                                        if (col + ww > width && col > indent &&
                                            ww <= width - indent) {
                                                row++;
                                                col = indent;
                                                fresh_row = true;
                                        }
                                }
                                /* A URL too long for a row breaks after a '/', never inside
                                 * a name: each piece up to its '/' goes on whole where it fits. */
                                if (j > 0 && text[j - 1] == L'/' && text[j] != L' ') {
                                        int sw = 0;
                                        size_t k = j;

                                        for (; k < n && !is_break(text, n, k) && text[k] != L'/';
                                             k++)
                                                sw += tui_wcwidth(text[k]);
                                        if (k < n && text[k] == L'/')
                                                sw++;
                                        if (col + sw > width && col > indent &&
                                            sw <= width - indent) {
                                                row++;
                                                col = indent;
                                                fresh_row = true;
                                        }
                                }
                                if (col + w > width) {
                                        row++;
                                        col = indent;
                                        fresh_row = true;
                                }
                                /* No row starts with the space it was broken at. */
                                if (fresh_row && text[j] == L' ')
                                        continue;
                                fresh_row = false;
                                if (put)
                                        put(t, row, col, text[j], s->role, userdata);
                                col += w, used += w;
                        }
                }
                /* Padding to the span's width. */
                for (; s->width > 0 && used < limit && col < width; col++, used++)
                        if (put)
                                put(t, row, col, L' ', s->role, userdata);
        }
        return row + 1;
}

int tui_doc_rows_in(Tui *t, const TuiDoc *d, int width)
{
        int rows = 0;

        for (size_t i = 0; i < d->n_lines; i++)
                rows += layout_line(t, &d->lines[i], width - TUI_GUTTER, NULL, NULL);
        return rows;
}

int tui_doc_rows(Tui *t, const TuiDoc *d)
{
        return tui_doc_rows_in(t, d, tui_columns(t));
}

typedef struct DrawLine {
        int y;      /* screen row of the line's row 0 */
        int top;    /* first screen row allowed */
        int bottom; /* first screen row not allowed */
        int left;   /* the screen column of the gutter */
        bool selected;
} DrawLine;

static void put_cell(Tui *t, int row, int col, wchar_t c, ThemeRole role, void *userdata)
{
        const DrawLine *d = userdata;
        int y = d->y + row;

        if (y < d->top || y >= d->bottom)
                return;
        tui_put_wchar(t, y, d->left + TUI_GUTTER + col, c, d->selected ? THEME_SELECTED : role);
}

void tui_doc_draw(Tui *t, const TuiDoc *d, int top, int height, int selected, int *scroll)
{
        tui_doc_draw_box(t, d, top, 0, height, tui_columns(t), selected, scroll);
}

void tui_doc_draw_box(Tui *t, const TuiDoc *d, int top, int left, int height, int box_width,
                      int selected, int *scroll)
{
        int width = box_width - TUI_GUTTER, total = 0, sel_start = -1, sel_end = -1;
        _cleanup_free_ int *rows = NULL;
        int y;

        if (height <= 0)
                return;
        rows = calloc(d->n_lines + 1, sizeof(int));
        if (!rows)
                return;
        for (size_t i = 0; i < d->n_lines; i++) {
                rows[i] = layout_line(t, &d->lines[i], width, NULL, NULL);
                if (selected >= 0 && d->lines[i].item == selected) {
                        if (sel_start < 0)
                                sel_start = total;
                        sel_end = total + rows[i];
                }
                total += rows[i];
        }

        /* Keep the selected item in view, whole when it fits. */
        if (sel_start >= 0) {
                if (sel_end - *scroll > height)
                        *scroll = sel_end - height;
                if (sel_start < *scroll)
                        *scroll = sel_start;
        }
        if (*scroll > total - height)
                *scroll = total - height;
        if (*scroll < 0)
                *scroll = 0;

        y = top - *scroll;
        for (size_t i = 0; i < d->n_lines; i++) {
                bool is_selected = selected >= 0 && d->lines[i].item == selected;
                DrawLine dl = {.y = y,
                               .top = top,
                               .bottom = top + height,
                               .left = left,
                               .selected = is_selected};

                if (y + rows[i] > top && y < top + height) {
                        /* Only lists (a selection is shown) take clicks. */
                        for (int r = 0; selected >= 0 && r < rows[i]; r++)
                                if (y + r >= top && y + r < top + height)
                                        tui_note_item_row(t, y + r, d->lines[i].item);
                        if (is_selected)
                                for (int r = 0; r < rows[i]; r++)
                                        if (y + r >= top && y + r < top + height)
                                                tui_fill(t, y + r, left, box_width, THEME_SELECTED);
                        layout_line(t, &d->lines[i], width, put_cell, &dl);
                        if (is_selected && y >= top &&
                            (i == 0 || d->lines[i - 1].item != selected)) {
                                tui_print(t, y, left, 1, THEME_SELECTED, ">");
                                tui_set_cursor(t, y, left);
                        }
                }
                y += rows[i];
        }
}

void tui_doc_draw_dialog(Tui *t, const TuiDoc *d, int top, int height, int dialog_width,
                         int selected, int *scroll)
{
        int width = MIN(dialog_width, tui_columns(t));
        int rows = tui_doc_rows_in(t, d, width - 2), left, box_top, box_height;

        if (tui_columns(t) >= dialog_width + 2 && height >= rows + 2) {
                const char *h = tui_utf8(t) ? "\u2500" : "-", *v = tui_utf8(t) ? "\u2502" : "|";

                left = (tui_columns(t) - width) / 2;
                box_height = rows + 2;
                box_top = top + (height - box_height) / 2;
                /* The frame is decoration only: the title says what this is. */
                for (int y = box_top; y < box_top + box_height; y++) {
                        bool edge = y == box_top || y == box_top + box_height - 1;

                        tui_fill(t, y, left, width, THEME_NORMAL);
                        for (int x = left; x < left + width; x++)
                                if (edge || x == left || x == left + width - 1)
                                        tui_print(t, y, x, 1, THEME_MUTED,
                                                  edge && x > left && x < left + width - 1 ? h
                                                  : !edge                                  ? v
                                                  : tui_utf8(t)
                                                      ? (y == box_top
                                                             ? (x == left ? "\u250c" : "\u2510")
                                                             : (x == left ? "\u2514" : "\u2518"))
                                                      : "+");
                }
                tui_doc_draw_box(t, d, box_top + 1, left + 1, rows, width - 2, selected, scroll);
        } else {
                for (int y = top; y < top + height; y++)
                        tui_fill(t, y, 0, tui_columns(t), THEME_NORMAL);
                tui_doc_draw(t, d, top, height, selected, scroll);
        }
}
