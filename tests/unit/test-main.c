/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "test.h"

TestCase test_cases[TEST_MAX];
size_t n_test_cases;
jmp_buf test_jmp;
const char *test_fixture_dir;

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
        for (size_t i = 0; i < n_test_cases; i++) {
                if (argc > 1 && strcmp(argv[1], test_cases[i].name) != 0)
                        continue;
                if (run_one(&test_cases[i]) == 0) {
                        passed++;
                        printf("ok %s\n", test_cases[i].name);
                } else {
                        failed++;
                        printf("FAIL %s\n", test_cases[i].name);
                }
        }
        printf("%zu passed, %zu failed\n", passed, failed);
        return failed > 0 || passed == 0;
}
