/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "roam-macro.h"

int read_one_line_file(const char *path, char **ret);
/* Reads a whole file, refusing files larger than max bytes (-EFBIG). NUL-terminated. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size);
/* Crash-safe write: a temp file in the same directory, fsync, rename over path, fsync the
 * directory. A crash leaves either the old or the new contents. Mode 0644. */
int write_file_atomic(const char *path, const char *data, size_t size);

/* NULL-terminated string vectors. */
char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
#define _cleanup_strv_free_ _cleanup_(strv_freep)
size_t strv_length(char *const *l);
int strv_push(char ***l, char *value);
int strv_extend(char ***l, const char *value);
int strv_contains(char *const *l, const char *s);
int strv_equal(char *const *a, char *const *b);
char **strv_copy(char *const *l);
int strv_split(const char *s, const char *sep, char ***ret);

#define STRV_FOREACH(s, l) for (char **s = (l); s && *s; s++)

char *strstrip(char *s);
