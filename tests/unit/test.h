/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A minimal test harness: TEST(name) registers a function, ASSERT_* fail the current test
 * and move on to the next. main() runs them all and prints "N passed, N failed". */

#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct TestCase TestCase;
struct TestCase {
        const char *name;
        void (*fn)(void);
        TestCase *next;
};

/* Every TEST, in the order the constructors ran (the file's order): a list without a limit,
 * so no test can go unregistered (a fixed array once dropped those past its end, silently). */
void test_register(TestCase *t);
extern jmp_buf test_jmp;
extern const char *test_fixture_dir;

#define TEST(n)                                                                                    \
        static void test_##n(void);                                                                \
        __attribute__((constructor)) static void register_##n(void)                                \
        {                                                                                          \
                static TestCase t = {#n, test_##n, NULL};                                          \
                test_register(&t);                                                                 \
        }                                                                                          \
        static void test_##n(void)

#define TEST_FAIL(...)                                                                             \
        do {                                                                                       \
                fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                                  \
                fprintf(stderr, __VA_ARGS__);                                                      \
                fputc('\n', stderr);                                                               \
                longjmp(test_jmp, 1);                                                              \
        } while (0)

#define ASSERT_TRUE(e)                                                                             \
        do {                                                                                       \
                if (!(e))                                                                          \
                        TEST_FAIL("expected true: %s", #e);                                        \
        } while (0)
#define ASSERT_EQ(a, b)                                                                            \
        do {                                                                                       \
                long long _a = (long long)(a), _b = (long long)(b);                                \
                if (_a != _b)                                                                      \
                        TEST_FAIL("%s == %s: %lld != %lld", #a, #b, _a, _b);                       \
        } while (0)
#define ASSERT_STREQ(a, b)                                                                         \
        do {                                                                                       \
                const char *_a = (a), *_b = (b);                                                   \
                if (!_a || !_b || strcmp(_a, _b) != 0)                                             \
                        TEST_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, _a ? _a : "(null)",        \
                                  _b ? _b : "(null)");                                             \
        } while (0)
#define ASSERT_OK(e)                                                                               \
        do {                                                                                       \
                long long _r = (long long)(e);                                                     \
                if (_r < 0)                                                                        \
                        TEST_FAIL("%s failed: %lld", #e, _r);                                      \
        } while (0)
