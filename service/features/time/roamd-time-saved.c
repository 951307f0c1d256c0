/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-time-saved.h"

#define MAGIC "roam-time 1 "

int time_saved_parse(const char *text, size_t size, uint64_t *ret_usec)
{
        uint64_t v = 0;
        size_t i = strlen(MAGIC);

        if (size < i + 2 || memcmp(text, MAGIC, i) != 0 || text[size - 1] != '\n')
                return -EBADMSG;
        for (; i < size - 1; i++) {
                if (text[i] < '0' || text[i] > '9' || v > (UINT64_MAX - 9) / 10)
                        return -EBADMSG;
                v = v * 10 + (uint64_t)(text[i] - '0');
        }
        if (v == 0)
                return -EBADMSG;
        *ret_usec = v;
        return 0;
}

int time_saved_read(const char *path, uint64_t *ret_usec)
{
        _cleanup_free_ char *buf = NULL;
        size_t size;
        int r;

        r = read_full_file(path, 64, &buf, &size);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        return time_saved_parse(buf, size, ret_usec);
}

int time_saved_write(const char *path, uint64_t usec)
{
        char buf[64];
        int n = snprintf(buf, sizeof(buf), MAGIC "%" PRIu64 "\n", usec);

        return write_file_atomic(path, buf, (size_t)n);
}
