/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-output.h"
#include "roam-text.h"

typedef struct CleanOut {
        int fd;
        /* The start of a character the last write cut off (stdio flushes at its buffer's
         * size, not at character boundaries): at most 3 bytes. */
        char carry[4];
        size_t n_carry;
} CleanOut;

static int write_all(int fd, const char *p, size_t n)
{
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += k;
                n -= (size_t)k;
        }
        return 0;
}

static ssize_t clean_write(void *cookie, const char *buf, size_t size)
{
        CleanOut *c = cookie;
        size_t n = c->n_carry + size, len;
        _cleanup_free_ char *in = malloc(n), *out = malloc(ROAM_TEXT_CLEAN_MAX(n));
        int consumed;

        if (!in || !out)
                return -1;
        memcpy(in, c->carry, c->n_carry);
        memcpy(in + c->n_carry, buf, size);
        consumed =
            roam_text_clean_chunk(in, n, ROAM_TEXT_MARK | ROAM_TEXT_KEEP_LINES, true, out, &len);
        if (consumed < 0 || n - (size_t)consumed >= sizeof(c->carry))
                return -1;
        c->n_carry = n - (size_t)consumed;
        memcpy(c->carry, in + consumed, c->n_carry);
        if (write_all(c->fd, out, len) < 0)
                return -1;
        return (ssize_t)size;
}

static int clean_close(void *cookie)
{
        CleanOut *c = cookie;
        char out[ROAM_TEXT_CLEAN_MAX(sizeof(c->carry))];
        size_t len;

        /* A character still cut at the end is broken: '?' for each byte. */
        if (c->n_carry > 0 &&
            roam_text_clean_chunk(c->carry, c->n_carry, ROAM_TEXT_MARK, false, out, &len) >= 0)
                (void)write_all(c->fd, out, len);
        c->n_carry = 0;
        return 0;
}

int roam_output_clean_stdout(void)
{
        static CleanOut out = {.fd = STDOUT_FILENO};
        static bool installed = false;
        FILE *f;

        if (installed)
                return 0;
        f = fopencookie(&out, "w",
                        (cookie_io_functions_t){.write = clean_write, .close = clean_close});
        if (!f)
                return log_oom();
        fflush(stdout);
        stdout = f;
        setvbuf(stdout, NULL, _IOLBF, 0);
        installed = true;
        return 0;
}
