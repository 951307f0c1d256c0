/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"

int roam_utf8_decode(const char *s, size_t n, uint32_t *ret)
{
        const unsigned char *p = (const unsigned char *)s;
        uint32_t c, min;
        size_t len;

        if (p[0] < 0x80) {
                *ret = p[0];
                return 1;
        }
        if ((p[0] & 0xe0) == 0xc0) {
                len = 2;
                c = p[0] & 0x1f;
                min = 0x80;
        } else if ((p[0] & 0xf0) == 0xe0) {
                len = 3;
                c = p[0] & 0x0f;
                min = 0x800;
        } else if ((p[0] & 0xf8) == 0xf0) {
                len = 4;
                c = p[0] & 0x07;
                min = 0x10000;
        } else
                return -EILSEQ;
        for (size_t i = 1; i < len; i++) {
                if (i >= n)
                        /* Valid so far: complete only if a stream has more. Prefixes that can
                         * only become overlong or out of range are refused at once below when
                         * complete; a partial one just waits. */
                        return 0;
                if ((p[i] & 0xc0) != 0x80)
                        return -EILSEQ;
                c = (c << 6) | (p[i] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
                return -EILSEQ;
        *ret = c;
        return (int)len;
}

bool roam_char_is_control(uint32_t c)
{
        return c < 0x20 || (c >= 0x7f && c <= 0x9f);
}

bool roam_char_is_format(uint32_t c)
{
        return (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
               (c >= 0x2066 && c <= 0x2069) || (c >= 0x2060 && c <= 0x2064) || c == 0x061c ||
               c == 0x2028 || c == 0x2029 || c == 0xfeff;
}

int roam_text_clean_chunk(const char *s, size_t n, RoamTextFlags flags, bool more, char *out,
                          size_t *ret_len)
{
        bool strict = flags & ROAM_TEXT_STRICT, mark = flags & ROAM_TEXT_MARK;
        size_t i = 0, o = 0;

        while (i < n) {
                uint32_t c;
                int k = roam_utf8_decode(s + i, n - i, &c);

                if (k == 0 && more)
                        break; /* the rest of this character comes with the next chunk */
                if (k <= 0) {
                        if (strict)
                                return -EBADMSG;
                        if (mark)
                                out[o++] = '?';
                        else {
                                memcpy(out + o, ROAM_TEXT_REPLACEMENT, 3);
                                o += 3;
                        }
                        i++;
                        continue;
                }
                if (roam_char_is_control(c) &&
                    !((flags & ROAM_TEXT_KEEP_LINES) && (c == '\n' || c == '\t'))) {
                        if (strict)
                                return -EBADMSG;
                        if (mark)
                                out[o++] = '?';
                } else if (roam_char_is_format(c)) {
                        if (strict)
                                return -EBADMSG;
                } else {
                        memmove(out + o, s + i, (size_t)k); /* in place: out may be s */
                        o += (size_t)k;
                }
                i += (size_t)k;
        }
        *ret_len = o;
        return (int)i;
}

int roam_text_clean(const char *s, size_t n, RoamTextFlags flags, char **ret)
{
        _cleanup_free_ char *out = malloc(ROAM_TEXT_CLEAN_MAX(n) + 1);
        size_t len;
        int r;

        if (!out)
                return -ENOMEM;
        r = roam_text_clean_chunk(s, n, flags, false, out, &len);
        if (r < 0)
                return r;
        out[len] = 0;
        r = len != n || memcmp(out, s, n) != 0;
        *ret = TAKE_PTR(out);
        return r;
}

int roam_text_clean_str(const char *s, RoamTextFlags flags, char **ret)
{
        if (!s) {
                *ret = NULL;
                return 0;
        }
        return roam_text_clean(s, strlen(s), flags, ret);
}

bool roam_text_is_clean(const char *s, RoamTextFlags flags)
{
        size_t n = strlen(s);

        for (size_t i = 0; i < n;) {
                uint32_t c;
                int k = roam_utf8_decode(s + i, n - i, &c);

                if (k <= 0 || roam_char_is_format(c) ||
                    (roam_char_is_control(c) &&
                     !((flags & ROAM_TEXT_KEEP_LINES) && (c == '\n' || c == '\t'))))
                        return false;
                i += (size_t)k;
        }
        return true;
}

char *roam_text_mark_inplace(char *s)
{
        size_t n = strlen(s), len;

        /* MARK mode never grows text: one '?' per byte at most, format characters dropped. */
        (void)roam_text_clean_chunk(s, n, ROAM_TEXT_MARK, false, s, &len);
        s[len] = 0;
        return s;
}

int roam_text_escape(const char *s, char **ret)
{
        size_t n = strlen(s), o = 0;
        _cleanup_free_ char *out = malloc(4 * n + 1);
        bool changed = false;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n;) {
                uint32_t c;
                int k = roam_utf8_decode(s + i, n - i, &c);

                if (k <= 0) {
                        o += (size_t)sprintf(out + o, "\\x%02x", (unsigned char)s[i]);
                        i++;
                        changed = true;
                        continue;
                }
                if (c == '\n' || c == '\t')
                        o += (size_t)sprintf(out + o, "\\%c", c == '\n' ? 'n' : 't');
                else if (roam_char_is_control(c) && c < 0x80)
                        o += (size_t)sprintf(out + o, "\\x%02x", c);
                else if (roam_char_is_control(c) || roam_char_is_format(c))
                        /* 2 or 3 bytes in, 6 out: within the 4 a byte allocated */
                        o += (size_t)sprintf(out + o, "\\u%04x", c);
                else {
                        memcpy(out + o, s + i, (size_t)k);
                        o += (size_t)k;
                        i += (size_t)k;
                        continue;
                }
                changed = true;
                i += (size_t)k;
        }
        out[o] = 0;
        *ret = TAKE_PTR(out);
        return changed;
}
