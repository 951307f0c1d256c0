/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>

#include "roam-macro.h"

/* Logging to stderr; journald picks up the <N> priority prefix when stderr is the journal. */

void log_set_max_level(int level);
int log_get_max_level(void);
int log_level_from_string(const char *s);
void log_set_ident(const char *ident);

/* Redirects messages (tests capture them); NULL restores stderr. */
typedef void (*LogSink)(int level, const char *message, void *userdata);
void log_set_sink(LogSink sink, void *userdata);

/* Logs and returns -abs(error) (or 0 when error is 0); "%m" prints error's strerror. */
int log_internal(int level, int error, const char *file, int line, const char *fmt, ...)
    _printf_(5, 6);

#define log_full_errno(level, error, ...)                                                          \
        log_internal(level, error, __FILE__, __LINE__, __VA_ARGS__)
#define log_debug(...)            log_full_errno(LOG_DEBUG, 0, __VA_ARGS__)
#define log_info(...)             log_full_errno(LOG_INFO, 0, __VA_ARGS__)
#define log_notice(...)           log_full_errno(LOG_NOTICE, 0, __VA_ARGS__)
#define log_warning(...)          log_full_errno(LOG_WARNING, 0, __VA_ARGS__)
#define log_error(...)            log_full_errno(LOG_ERR, 0, __VA_ARGS__)
#define log_debug_errno(e, ...)   log_full_errno(LOG_DEBUG, e, __VA_ARGS__)
#define log_info_errno(e, ...)    log_full_errno(LOG_INFO, e, __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, e, __VA_ARGS__)
#define log_error_errno(e, ...)   log_full_errno(LOG_ERR, e, __VA_ARGS__)
#define log_oom()                 log_error_errno(ENOMEM, "Out of memory.")
