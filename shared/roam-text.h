/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Text from outside (radio peers, other daemons, files, documents from the network) made safe
 * where it enters: valid UTF-8 (sd-bus refuses anything else, failing the whole reply), no
 * control characters, no invisible characters that change how text reads. roamd cleans at
 * every boundary, roam again before the terminal, the log escapes what is left. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* U+FFFD, what a broken byte becomes in a cleaned name. */
#define ROAM_TEXT_REPLACEMENT "\xef\xbf\xbd"

/* Decodes the character at s (n bytes): returns its length (1-4) and sets *ret to its code
 * point; 0 when s is the valid start of a character longer than n (a stream waits for more);
 * -EILSEQ when s[0] starts no valid character (a stray continuation byte, an overlong form, a
 * surrogate, beyond U+10FFFF). n must be at least 1. */
int roam_utf8_decode(const char *s, size_t n, uint32_t *ret);

/* C0 (U+0000-U+001F, ESC among them), DEL and C1 (U+0080-U+009F, CSI among them). */
bool roam_char_is_control(uint32_t c);
/* Invisible characters that reorder or hide text: bidi embeddings, overrides and isolates
 * (U+202A-U+202E, U+2066-U+2069), zero-width spaces, joiners and direction marks
 * (U+200B-U+200F), the Arabic letter mark U+061C, line/paragraph separators (U+2028,
 * U+2029), word joiner and invisible operators (U+2060-U+2064) and the BOM U+FEFF. */
bool roam_char_is_format(uint32_t c);

typedef enum RoamTextFlags {
        /* Anything to clean is an error (-EBADMSG): text that must be exact (domains, URLs). */
        ROAM_TEXT_STRICT = 1 << 0,
        /* '\n' and '\t' stay (multi-line output); otherwise they are controls like the rest. */
        ROAM_TEXT_KEEP_LINES = 1 << 1,
        /* For a terminal: a broken byte or a control becomes a visible '?'. Otherwise (names on
         * the bus) a broken byte becomes U+FFFD and controls are dropped. Format characters
         * are dropped either way. */
        ROAM_TEXT_MARK = 1 << 2,
} RoamTextFlags;

/* The most bytes cleaning n bytes can give (without the NUL). */
#define ROAM_TEXT_CLEAN_MAX(n) (3 * (n))

/* Cleans the n bytes at s (NULs count as controls) into out, which has room for
 * ROAM_TEXT_CLEAN_MAX(n) bytes; not NUL-terminated. With more (a stream), an incomplete
 * character at the end is left for the next call. Returns the bytes of s consumed and sets
 * *ret_len; in ROAM_TEXT_STRICT mode -EBADMSG at the first thing to clean. */
int roam_text_clean_chunk(const char *s, size_t n, RoamTextFlags flags, bool more, char *out,
                          size_t *ret_len);

/* A cleaned, NUL-terminated copy of n bytes of s (-EBADMSG in strict mode, -ENOMEM). Returns
 * 1 when something was changed, 0 when the copy is the same. */
int roam_text_clean(const char *s, size_t n, RoamTextFlags flags, char **ret);
/* The same for a C string; s may be NULL (then *ret is NULL). */
int roam_text_clean_str(const char *s, RoamTextFlags flags, char **ret);
/* Whether roam_text_clean() would leave s as it is. */
bool roam_text_is_clean(const char *s, RoamTextFlags flags);
/* Cleans s in place (never longer than it was: broken bytes and controls become '?'). */
char *roam_text_mark_inplace(char *s);

/* For logs: a copy of s with controls (newlines too: one message, one line), broken bytes and
 * format characters escaped as \n, \t, \\xNN and \\uNNNN, so a name cannot forge a log line or
 * reorder it. Returns 1 when something was escaped, 0 when not, -ENOMEM. */
int roam_text_escape(const char *s, char **ret);
