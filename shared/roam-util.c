/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

uint64_t clock_now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

int read_one_line_file(const char *path, char **ret)
{
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0;
        ssize_t l;

        f = fopen(path, "re");
        if (!f)
                return negative_errno();
        l = getline(&line, &n, f);
        if (l < 0)
                return feof(f) ? -ENODATA : negative_errno();
        while (l > 0 && (line[l - 1] == '\n' || line[l - 1] == '\r'))
                line[--l] = 0;
        *ret = TAKE_PTR(line);
        return 0;
}

int socket_bound_recv(int fd, uint64_t usec)
{
        struct timeval tv = {.tv_sec = (time_t)(usec / 1000000),
                             .tv_usec = (suseconds_t)(usec % 1000000)};

        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0)
                return -errno;
        return 0;
}

int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size)
{
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        for (;;) {
                ssize_t k;

                if (size + 1 >= alloc) {
                        size_t na = alloc ? alloc * 2 : 4096;
                        char *nb;

                        if (alloc > max + 1)
                                return -EFBIG;
                        nb = realloc(buf, na);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        alloc = na;
                }
                k = read(fd, buf + size, alloc - size - 1);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (k == 0)
                        break;
                size += (size_t)k;
                if (size > max)
                        return -EFBIG;
        }
        if (!buf) {
                buf = calloc(1, 1);
                if (!buf)
                        return -ENOMEM;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = size;
        return 0;
}

static int fsync_directory_of(const char *path)
{
        _cleanup_free_ char *copy = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *dir = ".";
        char *slash;

        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        slash = strrchr(copy, '/');
        if (slash == copy)
                dir = "/";
        else if (slash) {
                *slash = 0;
                dir = copy;
        }
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0)
                return negative_errno();
        return 0;
}

int write_file_atomic_mode(const char *path, const char *data, size_t size, mode_t mode)
{
        return write_file_atomic_owned(path, data, size, mode, (gid_t)-1);
}

int write_file_atomic_owned(const char *path, const char *data, size_t size, mode_t mode, gid_t gid)
{
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        for (size_t done = 0; done < size;) {
                ssize_t k = write(fd, data + done, size - done);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = negative_errno();
                        goto fail;
                }
                done += (size_t)k;
        }
        /* mkostemp made it 0600: a wider mode is only ever given on purpose, and the group
         * is set before it, on the file not yet in place */
        if ((gid != (gid_t)-1 && fchown(fd, (uid_t)-1, gid) < 0) || fchmod(fd, mode) < 0 ||
            fsync(fd) < 0 || rename(tmp, path) < 0) {
                r = negative_errno();
                goto fail;
        }
        /* The rename is only durable once the directory entry is: without this a crash may
         * bring back the old file, or (for a new file) none at all. */
        return fsync_directory_of(path);
fail:
        (void)unlink(tmp);
        return r;
}

int write_file_atomic(const char *path, const char *data, size_t size)
{
        return write_file_atomic_mode(path, data, size, 0600);
}

int file_make_private(const char *path, mode_t *ret_old_mode)
{
        _cleanup_close_ int fd = -EBADF;
        struct stat st;

        fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if ((st.st_mode & 077) == 0)
                return 0;
        if (fchmod(fd, st.st_mode & 0700) < 0)
                return negative_errno();
        if (ret_old_mode)
                *ret_old_mode = st.st_mode & 07777;
        return 1;
}

void state_file_make_private(const char *path)
{
        mode_t old = 0;
        int r;

        if (!path)
                return;
        r = file_make_private(path, &old);
        if (r > 0)
                log_notice("%s was readable by other users (mode %04o); it is now private to "
                           "root (mode %04o).",
                           path, (unsigned)old, (unsigned)(old & 0700));
        else if (r < 0)
                log_warning_errno(r, "%s: cannot make it private to root: %m", path);
}

char **strv_free(char **l)
{
        if (!l)
                return NULL;
        for (char **i = l; *i; i++)
                free(*i);
        free(l);
        return NULL;
}

size_t strv_length(char *const *l)
{
        size_t n = 0;

        if (!l)
                return 0;
        while (l[n])
                n++;
        return n;
}

int strv_push(char ***l, char *value)
{
        size_t n = strv_length(*l);
        char **c;

        c = realloc(*l, sizeof(char *) * (n + 2));
        if (!c)
                return -ENOMEM;
        c[n] = value;
        c[n + 1] = NULL;
        *l = c;
        return 0;
}

int strv_extend(char ***l, const char *value)
{
        char *v = strdup(value);
        int r;

        if (!v)
                return -ENOMEM;
        r = strv_push(l, v);
        if (r < 0)
                free(v);
        return r;
}

int strv_contains(char *const *l, const char *s)
{
        for (char *const *i = l; i && *i; i++)
                if (streq(*i, s))
                        return 1;
        return 0;
}

int strv_equal(char *const *a, char *const *b)
{
        size_t n = strv_length(a);

        if (n != strv_length(b))
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!streq(a[i], b[i]))
                        return 0;
        return 1;
}

char **strv_copy(char *const *l)
{
        char **c = NULL;

        c = calloc(strv_length(l) + 1, sizeof(char *));
        if (!c)
                return NULL;
        for (size_t i = 0; l && l[i]; i++) {
                c[i] = strdup(l[i]);
                if (!c[i])
                        return strv_free(c);
        }
        return c;
}

int strv_split(const char *s, const char *sep, char ***ret)
{
        _cleanup_free_ char *copy = NULL;
        char **l = NULL, *save = NULL;
        int r;

        copy = strdup(s);
        if (!copy)
                return -ENOMEM;
        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (char *t = strtok_r(copy, sep, &save); t; t = strtok_r(NULL, sep, &save)) {
                r = strv_extend(&l, t);
                if (r < 0) {
                        strv_free(l);
                        return r;
                }
        }
        *ret = l;
        return 0;
}

char *strstrip(char *s)
{
        char *e;

        while (*s == ' ' || *s == '\t')
                s++;
        e = s + strlen(s);
        while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
                *--e = 0;
        return s;
}
