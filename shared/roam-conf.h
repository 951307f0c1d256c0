/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* A small, strict INI-style parser. Written here rather than using libinih because Debian's
 * libinih is built without INI_HANDLER_LINENO, so semantic errors (unknown key, bad value)
 * could not be reported with file:line, and inih silently accepts keys outside sections. */

#define CONF_LINE_MAX 4096

/* One assignment. Return 0 to accept, negative errno to reject; when rejecting, report why with
 * conf_log_error() (the parser counts the error and goes on, so every error is reported). */
typedef int (*ConfAssignFn)(const char *file, unsigned line, const char *section, const char *key,
                            const char *value, void *userdata);

/* A section header, called for every valid "[Name]" line before the assignments under it (a
 * file may repeat a section name: each header starts a new one). Return 0 or negative errno, as
 * ConfAssignFn; the parser counts the error, and the assignments under it still reach fn. */
typedef int (*ConfSectionFn)(const char *file, unsigned line, const char *section, void *userdata);

/* Parses text. Returns 0 when there were no errors, -EINVAL when there were (each logged as
 * "file:line: message"), or another negative errno. *ret_errors counts them. */
int conf_parse_string(const char *file, const char *text, size_t size, ConfAssignFn fn,
                      void *userdata, unsigned *ret_errors);
/* The same, also calling section_fn (may be NULL) at each section header. */
int conf_parse_string_full(const char *file, const char *text, size_t size,
                           ConfSectionFn section_fn, ConfAssignFn fn, void *userdata,
                           unsigned *ret_errors);
/* The same for a part of a file whose first line is line first_line (for messages). */
int conf_parse_string_at(const char *file, unsigned first_line, const char *text, size_t size,
                         ConfSectionFn section_fn, ConfAssignFn fn, void *userdata,
                         unsigned *ret_errors);
int conf_parse_file(const char *path, ConfAssignFn fn, void *userdata, unsigned *ret_errors);

/* Logs "file:line: message" at error level; returns -EINVAL. */
int conf_log_error(const char *file, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

int conf_parse_boolean(const char *v, bool *ret);

/* Every error conf_log_error() reports is also handed to hook (NULL: none), for callers that
 * show the first one to the user (roamd's Manager.FirewallError). */
typedef void (*ConfErrorHook)(const char *file, unsigned line, const char *message, void *userdata);
void conf_set_error_hook(ConfErrorHook hook, void *userdata);
