/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The last known good time on disk (docs/time.md): written atomically when the time settles
 * and when roamd exits, read at start as a lower bound (the time is not earlier). The file is
 * one line, "roam-time 1 USEC\n" (µs since the epoch, UTC). */

#include <stddef.h>
#include <stdint.h>

/* -ENOENT when there is none, -EBADMSG when it is not this format (nothing is trusted). */
int time_saved_parse(const char *text, size_t size, uint64_t *ret_usec);
int time_saved_read(const char *path, uint64_t *ret_usec);
int time_saved_write(const char *path, uint64_t usec);
