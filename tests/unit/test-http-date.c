/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Date header's value (service/links/roamd-http-date.c): the three HTTP date forms, and
 * garbage that libcurl's curl_getdate() alone would take. */
#include <errno.h>
#include <stdint.h>

#include "roam-macro.h"
#include "roamd-http-date.h"
#include "test.h"

#define NOV_6_1994 784111777ULL /* Sun, 06 Nov 1994 08:49:37 GMT */

static const struct {
        const char *in;
        int r;
        uint64_t sec;
} cases[] = {
    /* RFC 9110 5.6.7's three forms */
    {"Sun, 06 Nov 1994 08:49:37 GMT", 0, NOV_6_1994},
    {"Sunday, 06-Nov-94 08:49:37 GMT", 0, NOV_6_1994},
    {"Sun Nov  6 08:49:37 1994", 0, NOV_6_1994},
    /* surrounding whitespace is no part of the value */
    {"  Sun, 06 Nov 1994 08:49:37 GMT\r\n", 0, NOV_6_1994},
    {"Sat, 06 Dec 2025 05:46:40 GMT", 0, 1765000000ULL},
    {"Fri, 31 Dec 9999 23:59:59 GMT", 0, 253402300799ULL},
    /* garbage */
    {"", -EINVAL, 0},
    {"now", -EINVAL, 0},
    {"1765000000", -EINVAL, 0},
    {"Sun, 06 Nov 1994 08:49:37 CET", -EINVAL, 0},
    {"Sun, 06 Nov 1994 08:49:37 +0000", -EINVAL, 0},
    {"Sun, 6 Nov 1994 08:49:37 GMT", -EINVAL, 0},
    {"Sun, 06 Foo 1994 08:49:37 GMT", -EINVAL, 0},
    {"Sun, 06 Nov 1994 08:49 GMT", -EINVAL, 0},
    {"Sun, 06 Nov 1994 08:49:37 GMT trailing", -EINVAL, 0},
    {"Xyz, 06 Nov 1994 08:49:37 GMT", -EINVAL, 0},
    {"Sun, 06 Nov 1994 08:49:37 GMT\x01", -EINVAL, 0},
    {"Sun, 06 Nov 1994 08:49:37 GM\xc3\xa9", -EINVAL, 0},
    {"Sunday, 06 Nov 1994 08:49:37 GMT", -EINVAL, 0},
    {"Sun Nov 6 08:49:37 1994", -EINVAL, 0},
    {"tomorrow 08:49:37 GMT", -EINVAL, 0},
    {"Thu, 01 Jan 1970 00:00:00 GMT", 0, 0},
};

TEST(forms_and_garbage)
{
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                uint64_t t = 12345;
                int r = http_date_parse(cases[i].in, strlen(cases[i].in), &t);
                if (r != cases[i].r)
                        TEST_FAIL("\"%s\": %d, expected %d", cases[i].in, r, cases[i].r);
                if (r == 0 && t != cases[i].sec * 1000000ULL)
                        TEST_FAIL("\"%s\": %llu, expected %llu s", cases[i].in,
                                  (unsigned long long)t, (unsigned long long)cases[i].sec);
        }
}

TEST(embedded_nul_and_length)
{
        static const char nul[] = "Sun, 06 Nov 1994\0 08:49:37 GMT";
        char big[200];
        uint64_t t;

        ASSERT_EQ(http_date_parse(nul, sizeof(nul) - 1, &t), -EINVAL);
        memset(big, ' ', sizeof(big));
        memcpy(big + 150, "Sun", 3);
        ASSERT_EQ(http_date_parse(big, sizeof(big), &t), -EINVAL);
        /* only the given bytes count: no NUL needed after them */
        ASSERT_OK(http_date_parse("Sun, 06 Nov 1994 08:49:37 GMTxyz", 29, &t));
        ASSERT_EQ(t, NOV_6_1994 * 1000000ULL);
}
