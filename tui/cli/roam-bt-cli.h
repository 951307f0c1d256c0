/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* `roam bt [ACTION ...]` and `roam nfc import FILE|-` (docs/bluetooth.md): thin clients of
 * org.roam1.Bluetooth. Errors are logged; a negative errno is returned, -EHOSTDOWN when roamd
 * is not running, 2 (an exit status) for an invalid command line. `roam bt pair` asks the pairing
 * agent's questions about the device on stdin/stdout while it waits. */

int roam_bt_run(char **args, bool json);
int roam_nfc_run(char **args, bool json);

/* A PIN or passkey from stdin, one line (prompt on stderr and no echo on a terminal): never
 * argv, which every local user can read. -ENODATA when the line is empty or missing. */
int roam_read_code(const char *prompt, char *buf, size_t size);
