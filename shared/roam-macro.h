/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small ownership helpers in the style of systemd's (which are internal to its tree). */

#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#define _cleanup_(f)   __attribute__((cleanup(f)))
#define _unused_       __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _noreturn_     __attribute__((noreturn))

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))
#define MAX(a, b)     ((a) > (b) ? (a) : (b))
#define MIN(a, b)     ((a) < (b) ? (a) : (b))

#define USEC_PER_SEC  ((uint64_t)1000000ULL)
#define USEC_PER_MSEC ((uint64_t)1000ULL)

/* Take ownership of a pointer: returns it and sets the variable to NULL. */
#define TAKE_PTR(p)                                                                                \
        ({                                                                                         \
                __typeof__(p) _ptr_ = (p);                                                         \
                (p) = NULL;                                                                        \
                _ptr_;                                                                             \
        })

#define TAKE_FD(fd)                                                                                \
        ({                                                                                         \
                int _fd_ = (fd);                                                                   \
                (fd) = -EBADF;                                                                     \
                _fd_;                                                                              \
        })

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                    \
        static inline void func##p(type *p)                                                        \
        {                                                                                          \
                if (*p)                                                                            \
                        func(*p);                                                                  \
        }

static inline void freep(void *p)
{
        free(*(void **)p);
}
#define _cleanup_free_ _cleanup_(freep)

/* Secrets (keys, passphrases, PINs): wiped before their memory goes back to malloc, where a
 * later allocation or a core dump would find them. Returns NULL. */
static inline void *erase_and_free(void *p)
{
        if (p) {
                explicit_bzero(p, malloc_usable_size(p));
                free(p);
        }
        return NULL;
}
static inline void erase_and_freep(void *p)
{
        erase_and_free(*(void **)p);
}
#define _cleanup_erase_and_free_ _cleanup_(erase_and_freep)

/* A secret held in a variable (a struct on the stack): wiped when the variable goes out of
 * scope, on every return path, the failing ones included. */
typedef struct VarEraser {
        void *p;
        size_t size;
} VarEraser;
static inline void erase_varp(VarEraser *e)
{
        explicit_bzero(e->p, e->size);
}
#define ERASER_CONCAT_(a, b) a##b
#define ERASER_CONCAT(a, b)  ERASER_CONCAT_(a, b)
#define CLEANUP_ERASE(var)                                                                         \
        _cleanup_(erase_varp) _unused_ VarEraser ERASER_CONCAT(_eraser_, __COUNTER__) = {          \
            .p = &(var), .size = sizeof(var)}

static inline void closep(int *fd)
{
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

static inline void fclosep(FILE **f)
{
        if (*f)
                fclose(*f);
}
#define _cleanup_fclose_ _cleanup_(fclosep)

static inline void closedirp(DIR **d)
{
        if (*d)
                closedir(*d);
}
#define _cleanup_closedir_ _cleanup_(closedirp)

static inline int negative_errno(void)
{
        return errno > 0 ? -errno : -EIO;
}

static inline const char *strempty(const char *s)
{
        return s ? s : "";
}

static inline int streq_ptr(const char *a, const char *b)
{
        if (!a || !b)
                return a == b;
        return strcmp(a, b) == 0;
}

#define streq(a, b) (strcmp((a), (b)) == 0)

/* Replace *p with a copy of s (NULL allowed). Returns 1 if the value changed, 0 if not, <0 on
 * allocation failure. */
int free_and_strdup(char **p, const char *s);

/* Table lookups for enum <-> string tables: index of s in table[0..n), or -EINVAL. */
int string_table_lookup(const char *const *table, size_t n, const char *s);

#define DEFINE_STRING_TABLE_LOOKUP(name, type)                                                     \
        const char *name##_to_string(type i)                                                       \
        {                                                                                          \
                if ((int)i < 0 || (size_t)i >= ELEMENTSOF(name##_table))                           \
                        return NULL;                                                               \
                return name##_table[i];                                                            \
        }                                                                                          \
        type name##_from_string(const char *s)                                                     \
        {                                                                                          \
                return (type)string_table_lookup(name##_table, ELEMENTSOF(name##_table), s);       \
        }
