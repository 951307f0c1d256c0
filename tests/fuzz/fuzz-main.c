/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs a fuzz target over files or directories of inputs, for builds without libFuzzer: the
 * seed corpus is replayed by the normal test suite. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "roam-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r = read_full_file(path, 16 * 1024 * 1024, &buf, &size);

        if (r < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(-r));
                return r;
        }
        LLVMFuzzerTestOneInput((const uint8_t *)buf, size);
        return 0;
}

int main(int argc, char **argv)
{
        size_t n = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) {
                        perror(argv[i]);
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        _cleanup_closedir_ DIR *d = opendir(argv[i]);
                        struct dirent *de;
                        while (d && (de = readdir(d))) {
                                char p[4096];
                                if (de->d_name[0] == '.')
                                        continue;
                                snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
                                if (run_file(p) < 0)
                                        return 1;
                                n++;
                        }
                } else {
                        if (run_file(argv[i]) < 0)
                                return 1;
                        n++;
                }
        }
        printf("%zu inputs replayed\n", n);
        return n > 0 ? 0 : 1;
}
