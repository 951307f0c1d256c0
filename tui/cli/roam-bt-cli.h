/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* `roam bt [ACTION ...]` and `roam nfc import FILE|-` (docs/bluetooth.md): thin clients of
 * org.roam1.Bluetooth. Errors are logged; a negative errno is returned, -EHOSTDOWN when roamd
 * is not running, 2 (an exit status) for an invalid command line. `roam bt pair` asks the pairing
 * agent's questions about the device on stdin/stdout while it waits. */

int roam_bt_run(char **args, bool json);
int roam_nfc_run(char **args, bool json);

/* The agent's question (org.roam1.Bluetooth.Question) and what the person should do, in one
 * sentence: for roam bt pair and plain mode. */
typedef struct BtQuestion {
        uint32_t id;
        const char *kind, *address, *name, *value;
} BtQuestion;

void roam_bt_question_sentence(const BtQuestion *q, char *buf, size_t size);

/* The passkey or PIN of a pairing question (confirm, show-pin, show-passkey) is kept out of the
 * Question property, which every local user reads: this asks roamd for it (GetQuestionValue,
 * authorized like Answer). *ret (to free) is "" when this caller may not see it or the kind
 * has no secret. Sync: for the CLI, plain mode and the TUI's key handlers. */
struct sd_bus;
/* A PIN or passkey from stdin, one line (prompt on stderr and no echo on a terminal): never
 * argv, which every local user can read. -ENODATA when the line is empty or missing. */
int roam_read_code(const char *prompt, char *buf, size_t size);
int roam_bt_question_secret(struct sd_bus *bus, const BtQuestion *q, char **ret);
bool roam_bt_question_is_secret(const char *kind);
