/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <qrencode.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-qr.h"
#include "roam-util.h"

#define QUIET 4

static void qrcode_freep(QRcode **q)
{
        if (*q)
                QRcode_free(*q);
}

/* Whether module (x, y) of the code with its quiet zone is light. */
static bool light(const QRcode *q, int x, int y)
{
        x -= QUIET;
        y -= QUIET;
        if (x < 0 || y < 0 || x >= q->width || y >= q->width)
                return true;
        return !(q->data[y * q->width + x] & 1);
}

int roam_qr_lines(const char *text, bool utf8, char ***ret, size_t *ret_n)
{
        _cleanup_(qrcode_freep) QRcode *q = NULL;
        char **lines;
        int size, n;

        errno = 0;
        q = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1);
        if (!q)
                return errno == ENOMEM ? -ENOMEM : -EINVAL;
        size = q->width + 2 * QUIET;
        n = utf8 ? (size + 1) / 2 : size;
        lines = calloc((size_t)n + 1, sizeof(char *));
        if (!lines)
                return -ENOMEM;
        for (int row = 0; row < n; row++) {
                /* a half block is 3 bytes of UTF-8; "##" is 2 */
                char *p = malloc((size_t)size * 3 + 1);

                if (!p) {
                        strv_free(lines);
                        return -ENOMEM;
                }
                lines[row] = p;
                for (int x = 0; x < size; x++) {
                        if (!utf8) {
                                const char *s = light(q, x, row) ? "##" : "  ";

                                memcpy(p, s, 2);
                                p += 2;
                                continue;
                        }
                        bool top = light(q, x, 2 * row);
                        bool bottom = 2 * row + 1 < size ? light(q, x, 2 * row + 1) : false;
                        const char *s = top && bottom ? "\u2588"
                                        : top         ? "\u2580"
                                        : bottom      ? "\u2584"
                                                      : " ";

                        memcpy(p, s, strlen(s));
                        p += strlen(s);
                }
                *p = 0;
        }
        *ret = lines;
        *ret_n = (size_t)n;
        return 0;
}
