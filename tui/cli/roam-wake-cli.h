/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/* `roam wait-online` and `roam when-online` (docs/wake.md): wait, woken by roamd's signals,
 * until the global state is online (with require_time: and the time gate open; with app: and
 * that app's turn in the ordered wake-up came). Exit statuses as nm-online's. */
enum {
        ROAM_WAIT_ONLINE = 0,
        ROAM_WAIT_NOT_IN_TIME = 1,
        ROAM_WAIT_ERROR = 2,
};

#define ROAM_WAIT_TIMEOUT_DEFAULT (30 * 1000000ULL)

/* Returns the exit status (0, 1 or 2). */
int roam_wait_online_run(const char *app, uint64_t timeout_usec, bool require_time);
/* Waits like wait-online --app, runs cmd, then tells roamd the app is Done. Returns cmd's exit
 * status, 1 when not in time, 2 on an error, 127 when cmd could not start. */
int roam_when_online_run(const char *app, uint64_t timeout_usec, bool require_time, char **cmd);
/* "30", "30s", "2m", "500ms": -EINVAL otherwise. 0 means no timeout (wait for ever). */
int roam_wait_parse_timeout(const char *s, uint64_t *ret);
