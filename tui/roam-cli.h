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
