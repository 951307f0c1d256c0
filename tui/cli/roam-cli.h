/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "roam-macro.h"

/* The command line's conventions, shared by every `roam COMMAND`: each command's own short
 * help, and usage errors that exit 2 wherever they are found. */

/* A usage error found after parse_argv (in a command's own parser): main() exits 2 for it.
 * No bus error maps to EDOM. */
#define ROAM_ERR_USAGE EDOM

/* Logs "MESSAGE Try 'roam COMMAND --help'." (command NULL: 'roam --help') and returns
 * -ROAM_ERR_USAGE. */
int roam_usage_error(const char *command, const char *fmt, ...) _printf_(2, 3);

/* Prints the short help of command to stdout; -ENOENT when there is no such command. */
int roam_command_help(const char *command);

/* Every word roam hands to roamd (IDs, names, values) is text: sd-bus refuses a string that is
 * not UTF-8, which would surface as a confusing "Invalid argument" or worse. Checks the n
 * strings of args (NULL ones are skipped) at the command line's boundary: a usage error naming
 * the first broken one (escaped), or 0. */
int roam_args_check_utf8(const char *command, char *const *args, size_t n);

/* Whether args (NULL-terminated) ask for help: -h or --help before a "--". */
bool roam_args_want_help(char *const *args);
