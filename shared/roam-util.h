/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "roam-macro.h"

/* The time on clock (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME) in microseconds. */
uint64_t clock_now_usec(clockid_t clock);

/* A blocking socket's reads wait at most `usec` (SO_RCVTIMEO), then fail with EAGAIN: a
 * synchronous netlink dump on the event loop never waits for ever. */
int socket_bound_recv(int fd, uint64_t usec);

int read_one_line_file(const char *path, char **ret);
/* Reads a whole file, refusing files larger than max bytes (-EFBIG). NUL-terminated. */
int read_full_file(const char *path, size_t max, char **ret, size_t *ret_size);
/* Crash-safe write: a temp file in the same directory, fsync, rename over path, fsync the
 * directory. A crash leaves either the old or the new contents. Mode 0600: roamd's state
 * (usage, app policies, locations) is for root and what the bus authorizes, not for every
 * local user. */
int write_file_atomic(const char *path, const char *data, size_t size);
/* The same with an explicit mode, for files meant to be read by others. */
int write_file_atomic_mode(const char *path, const char *data, size_t size, mode_t mode);
/* The same, the file's group gid ((gid_t)-1: the writer's). */
int write_file_atomic_owned(const char *path, const char *data, size_t size, mode_t mode,
                            gid_t gid);
/* A state file written by an older roamd may still be readable by others: takes away the
 * group's and others' bits of the regular file at path (symlinks are not followed).
 * Returns 1 when the mode was changed (ret_old_mode: the mode it had), 0 when it was
 * private already or does not exist, negative errno otherwise. */
int file_make_private(const char *path, mode_t *ret_old_mode);
/* file_make_private() at start, said in the log in words. */
void state_file_make_private(const char *path);

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
