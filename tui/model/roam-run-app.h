/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <systemd/sd-bus.h>

/* Running a program inside an app (Manager.RunApp): `roam run` and the portal's login
 * browser. */

/* Exit status of `roam run` when the command cannot be started, as in a shell. */
#define ROAM_RUN_EXEC_FAILED 127

/* Logs why roamd refused a call about app id; what: "change", "show", ...; denied: what the
 * caller may not do, for an AccessDenied. Returns a negative errno (-EHOSTDOWN when roamd is
 * not running). */
int roam_app_log_call_error(const sd_bus_error *error, int r, const char *id, const char *what,
                            const char *denied);

/* `roam run --app ID [--online-for DURATION] CMD [ARGS...]`: asks roamd to move this process
 * into the app (RunApp with a pidfd of itself; online_for_usec 0: no grant), then execs CMD,
 * which so starts inside the app. Returns only on failure: a negative errno when roamd refused
 * or could not be asked (CMD did not run), or ROAM_RUN_EXEC_FAILED when CMD could not be
 * started. */
int roam_run_app(const char *id, uint64_t online_for_usec, char *const *argv);
/* The same, calling before_exec (when not NULL) once the process is in the app and roam's bus
 * is closed, just before the exec: a negative return stops it (nothing runs). */
int roam_run_app_full(const char *id, uint64_t online_for_usec, char *const *argv,
                      int (*before_exec)(void *userdata), void *userdata);
