/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <locale.h>

#include "roam-format.h"
#include "roam-macro.h"
#include "test.h"

/* tui/model/roam-format.c: text cut in the middle to fit a column. */

static char *cut(const char *s, size_t width, bool utf8)
{
        char *out = NULL;

        if (roam_text_cut_middle(s, width, utf8, &out) < 0)
                return NULL;
        return out;
}

#define ASSERT_CUT(s, width, utf8, expected)                                                       \
        do {                                                                                       \
                char *_c = cut(s, width, utf8);                                                    \
                ASSERT_STREQ(_c, expected);                                                        \
                ASSERT_TRUE(roam_text_columns(_c, utf8) <= (width));                               \
                free(_c);                                                                          \
        } while (0)

TEST(fits_as_it_is)
{
        ASSERT_CUT("org.example.Mail", 16, true, "org.example.Mail");
        ASSERT_CUT("org.example.Mail", 40, false, "org.example.Mail");
        ASSERT_CUT("", 0, true, "");
}

TEST(cut_in_the_middle)
{
        /* 9 columns: 4 of the start, the ellipsis, 4 of the end */
        ASSERT_CUT("abcdefghijklmnop", 9, true, "abcd\u2026mnop");
        /* an even room: the end gets the larger half */
        ASSERT_CUT("abcdefghijklmnop", 10, true, "abcd\u2026lmnop");
        ASSERT_CUT("abcdefghijklmnop", 10, false, "abc...mnop");
        ASSERT_CUT("abcdefghijklmnop", 11, false, "abcd...mnop");
        /* IDs that share a long start stay apart */
        ASSERT_CUT("org.spam.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA0001", 24, true,
                   "org.spam.AA\u2026AAAAAAAA0001");
        ASSERT_CUT("org.spam.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA0002", 24, true,
                   "org.spam.AA\u2026AAAAAAAA0002");
}

TEST(tiny_room)
{
        ASSERT_CUT("abcdef", 1, true, "\u2026");
        ASSERT_CUT("abcdef", 2, false, "..");
        ASSERT_CUT("abcdef", 0, false, "");
}

TEST(characters_are_never_split)
{
        if (!setlocale(LC_CTYPE, "C.UTF-8"))
                return; /* no UTF-8 locale: wcwidth cannot be asked */
        /* é is two bytes, one column; 日本 are two columns each */
        ASSERT_EQ(roam_text_columns("café", true), 4);
        ASSERT_EQ(roam_text_columns("日本語", true), 6);
        ASSERT_EQ(roam_text_columns("café", false), 5);
        ASSERT_CUT("ééééééééé", 5, true, "éé\u2026éé");
        /* a wide character that does not fit is left out, not cut */
        ASSERT_CUT("日本語日本語", 5, true, "日\u2026語");
        ASSERT_CUT("日本語日本語", 6, true, "日\u2026語");
        ASSERT_CUT("日本語日本語", 8, true, "日\u2026本語");
        /* broken UTF-8 counts one column a byte */
        ASSERT_EQ(roam_text_columns("a\xff\xfe"
                                    "b",
                                    true),
                  4);
        ASSERT_CUT("\xff\xff\xff\xff\xff\xff", 5, true, "\xff\xff\u2026\xff\xff");
}

TEST(bytes_in_si_units)
{
        char buf[32];

        roam_format_bytes(0, buf, sizeof(buf));
        ASSERT_STREQ(buf, "0 B");
        roam_format_bytes(999, buf, sizeof(buf));
        ASSERT_STREQ(buf, "999 B");
        roam_format_bytes(1234, buf, sizeof(buf));
        ASSERT_STREQ(buf, "1.2 kB");
        roam_format_bytes(3400000000ULL, buf, sizeof(buf));
        ASSERT_STREQ(buf, "3.4 GB");
}

TEST(durations_and_utc_minutes)
{
        char buf[32];

        roam_format_duration(120 * 1000, buf, sizeof(buf));
        ASSERT_STREQ(buf, "120 ms");
        roam_format_duration(2500 * 1000, buf, sizeof(buf));
        ASSERT_STREQ(buf, "2.5 s");
        roam_format_utc_minute(1796587500, buf, sizeof(buf)); /* 2026-12-06 20:05 UTC */
        ASSERT_STREQ(buf, "2026-12-06 20:05");
        roam_format_age(0, 5, buf, sizeof(buf), NULL);
        ASSERT_STREQ(buf, "never");
}

TEST(bt_service_names)
{
        /* the report's headset: A2DP sink, any case; the base UUID only */
        ASSERT_STREQ(roam_format_bt_service("0000110b-0000-1000-8000-00805f9b34fb"),
                     "audio sink (A2DP)");
        ASSERT_STREQ(roam_format_bt_service("0000111E-0000-1000-8000-00805F9B34FB"),
                     "hands-free (HFP)");
        ASSERT_TRUE(!roam_format_bt_service("0000110b-0000-1000-8000-00805f9b34fc"));
        ASSERT_TRUE(!roam_format_bt_service("1234110b-0000-1000-8000-00805f9b34fb"));
        ASSERT_TRUE(!roam_format_bt_service("0000ffff-0000-1000-8000-00805f9b34fb"));
        ASSERT_TRUE(!roam_format_bt_service("0000110g-0000-1000-8000-00805f9b34fb"));
        ASSERT_TRUE(!roam_format_bt_service("0000110b"));
        ASSERT_TRUE(!roam_format_bt_service(""));
        ASSERT_TRUE(!roam_format_bt_service(NULL));
}
