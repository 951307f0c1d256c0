/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "roam-bus-model.h"

/* The app commands of `roam` (docs/client.md): `roam apps`, `roam app ID [ACTION]` and
 * `roam run`. The command line is checked before (roam.c: settings without '=', durations);
 * roamd checks the rest. Every function logs its errors ("roam: ..." on stderr) and returns a
 * negative errno, -EHOSTDOWN when roamd is not running. */

/* Exit status of `roam run` when the command cannot be started, as in a shell. */
#define ROAM_RUN_EXEC_FAILED 127

/* `roam apps [--json]`: every app, `default` and `system` last. */
int roam_apps_run(bool json);
/* The text table (or, when it does not fit in columns > 0, one block per app). */
int roam_apps_print_text(const RoamModel *m, int columns, FILE *f);
/* One app as JSON: every property. */
int roam_app_to_json(const RoamApp *a, json_object **ret);

/* `roam app ID [--json]`, `... set KEY=VALUE...` (all in one SetAppPolicy), `... reset`,
 * `... online-for DURATION` (µs, UINT64_MAX until released), `... release`. */
int roam_app_show_run(const char *id, bool json);
int roam_app_set_run(const char *id, char *const *settings);
int roam_app_reset_run(const char *id);
int roam_app_online_for_run(const char *id, uint64_t usec);
int roam_app_release_run(const char *id);

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
