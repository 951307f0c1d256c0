/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test.h"

static TestCase *test_first, **test_last = &test_first;
jmp_buf test_jmp;
const char *test_fixture_dir;

void test_register(TestCase *t)
{
        *test_last = t;
        test_last = &t->next;
}

/* Runs one test; separate from main() so longjmp cannot clobber main's counters. */
static int run_one(const TestCase *t)
{
        if (setjmp(test_jmp) != 0)
                return -1;
        t->fn();
        return 0;
}

int main(int argc, char **argv)
{
        size_t passed = 0, failed = 0;

        test_fixture_dir = getenv("TEST_FIXTURE_DIR");
        if (!test_fixture_dir)
                test_fixture_dir = ".";
        for (const TestCase *t = test_first; t; t = t->next) {
                if (argc > 1 && strcmp(argv[1], t->name) != 0)
                        continue;
                if (run_one(t) == 0) {
                        passed++;
                        printf("ok %s\n", t->name);
                } else {
                        failed++;
                        printf("FAIL %s\n", t->name);
                }
        }
        printf("%zu passed, %zu failed\n", passed, failed);
        return failed > 0 || passed == 0;
}
