/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "test.h"

static char *clean(const char *s, size_t n, RoamTextFlags flags)
{
        char *out = NULL;

        if (roam_text_clean(s, n, flags, &out) < 0)
                return NULL;
        return out;
}

#define ASSERT_CLEAN(in, flags, want)                                                              \
        do {                                                                                       \
                _cleanup_free_ char *_o = clean(in, sizeof(in) - 1, flags);                        \
                ASSERT_STREQ(_o, want);                                                            \
        } while (0)

TEST(text_broken_utf8_replaced)
{
        /* The P2P peer of issue 26: a lead byte followed by '(' */
        ASSERT_CLEAN("TV\xc3\x28", 0, "TV" ROAM_TEXT_REPLACEMENT "(");
        ASSERT_CLEAN("TV\xc3\x28", ROAM_TEXT_MARK, "TV?(");
        /* Overlong '/', a surrogate, beyond U+10FFFF, a stray continuation, a cut end. */
        ASSERT_CLEAN("a\xc0\xaf", ROAM_TEXT_MARK, "a??");
        ASSERT_CLEAN("\xed\xa0\x80", ROAM_TEXT_MARK, "???");
        ASSERT_CLEAN("\xf4\x90\x80\x80", ROAM_TEXT_MARK, "????");
        ASSERT_CLEAN("\x80x", ROAM_TEXT_MARK, "?x");
        ASSERT_CLEAN("x\xe2\x82", ROAM_TEXT_MARK, "x??");
        /* Valid text of every length stays. */
        ASSERT_CLEAN("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\xba", 0,
                     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\xba");
}

TEST(text_controls)
{
        /* ESC (an OSC title, a CSI), BEL, DEL, NUL and C1 CSI (U+009B) */
        ASSERT_CLEAN("a\x1b]0;pwned\x07z", 0, "a]0;pwnedz");
        ASSERT_CLEAN("a\x1b[2Jz", ROAM_TEXT_MARK, "a?[2Jz");
        ASSERT_CLEAN("a\x7f\xc2\x9b"
                     "31mz",
                     ROAM_TEXT_MARK, "a??31mz");
        ASSERT_CLEAN("a\0b", 0, "ab");
        ASSERT_CLEAN("one\ntwo\tthree", 0, "onetwothree");
        ASSERT_CLEAN("one\ntwo\tthree", ROAM_TEXT_KEEP_LINES, "one\ntwo\tthree");
        /* U+00A0 and up are text, not C1 */
        ASSERT_CLEAN("\xc2\xa0\xc2\xa9", 0, "\xc2\xa0\xc2\xa9");
}

TEST(text_format_characters)
{
        /* RLO (U+202E) turning "exe.txt" around, an isolate, a zero-width space, LRM, BOM */
        ASSERT_CLEAN("a\xe2\x80\xaetxt.exe", ROAM_TEXT_MARK, "atxt.exe");
        ASSERT_CLEAN("a\xe2\x81\xa6x\xe2\x81\xa9", 0, "ax");
        ASSERT_CLEAN("p\xe2\x80\x8b"
                     "ay\xe2\x80\x8e"
                     "pal\xef\xbb\xbf",
                     0, "paypal");
        ASSERT_CLEAN("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad", 0, "");
        /* Neighbours stay: U+2010 hyphen, U+2030 per mille */
        ASSERT_CLEAN("\xe2\x80\x90\xe2\x80\xb0", 0, "\xe2\x80\x90\xe2\x80\xb0");
}

TEST(text_strict)
{
        char *out = NULL;

        ASSERT_EQ(roam_text_clean("corp.example", 12, ROAM_TEXT_STRICT, &out), 0);
        ASSERT_STREQ(out, "corp.example");
        free(out);
        out = NULL;
        ASSERT_EQ(roam_text_clean("corp\xc3.example", 13, ROAM_TEXT_STRICT, &out), -EBADMSG);
        ASSERT_EQ(roam_text_clean("corp\x1b.example", 13, ROAM_TEXT_STRICT, &out), -EBADMSG);
        ASSERT_EQ(roam_text_clean("a\xe2\x80\x8b", 4, ROAM_TEXT_STRICT, &out), -EBADMSG);
        ASSERT_TRUE(out == NULL);
        /* Changed or not */
        ASSERT_EQ(roam_text_clean("ok", 2, 0, &out), 0);
        free(out);
        ASSERT_EQ(roam_text_clean("o\x01k", 3, 0, &out), 1);
        ASSERT_STREQ(out, "ok");
        free(out);
        ASSERT_EQ(roam_text_clean_str(NULL, 0, &out), 0);
        ASSERT_TRUE(out == NULL);
        ASSERT_TRUE(roam_text_is_clean("Living Room TV \xe2\x82\xac", 0));
        ASSERT_TRUE(!roam_text_is_clean("TV\xc3\x28", 0));
        ASSERT_TRUE(!roam_text_is_clean("a\nb", 0));
        ASSERT_TRUE(roam_text_is_clean("a\nb", ROAM_TEXT_KEEP_LINES));
}

TEST(text_stream_chunks)
{
        /* A character cut between two writes stays whole. */
        static const char s[] = "x\xe2\x82\xac\x1b";
        char out[64];
        size_t len;
        int r;

        r = roam_text_clean_chunk(s, 3, ROAM_TEXT_MARK, true, out, &len);
        ASSERT_EQ(r, 1);
        ASSERT_EQ(len, 1);
        r = roam_text_clean_chunk(s + 1, 4, ROAM_TEXT_MARK, true, out, &len);
        ASSERT_EQ(r, 4);
        ASSERT_EQ(len, 4);
        ASSERT_TRUE(memcmp(out, "\xe2\x82\xac?", 4) == 0);
        /* At the end of the stream, a cut character is broken. */
        r = roam_text_clean_chunk(s + 1, 2, ROAM_TEXT_MARK, false, out, &len);
        ASSERT_EQ(r, 2);
        ASSERT_EQ(len, 2);
}

TEST(text_mark_inplace)
{
        char s[] = "a\x1b[1m\xe2\x80\xae\xc3(\xc2\x9b";

        ASSERT_STREQ(roam_text_mark_inplace(s), "a?[1m?(?");
}

TEST(text_escape_for_logs)
{
        char *out = NULL;

        ASSERT_EQ(roam_text_escape("plain caf\xc3\xa9", &out), 0);
        ASSERT_STREQ(out, "plain caf\xc3\xa9");
        free(out);
        /* A forged second journal line, ESC, a broken byte, RLO, C1 */
        ASSERT_EQ(roam_text_escape("TV\n<0>fake\x1b[2J\xc3(\xe2\x80\xae\xc2\x9b", &out), 1);
        ASSERT_STREQ(out, "TV\\n<0>fake\\x1b[2J\\xc3(\\u202e\\u009b");
        free(out);
}

static char captured[512];

static void capture(int level, const char *message, void *userdata)
{
        snprintf(captured, sizeof(captured), "%s", message);
}

TEST(log_escapes_outside_text)
{
        log_set_sink(capture, NULL);
        log_info("P2P peer %s found.", "TV\n<0>roamd: fake\x1b]0;x\x07\xe2\x80\xae");
        log_set_sink(NULL, NULL);
        ASSERT_STREQ(captured, "P2P peer TV\\n<0>roamd: fake\\x1b]0;x\\x07\\u202e found.");
}
