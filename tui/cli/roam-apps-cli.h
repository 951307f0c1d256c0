/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "roam-bus-model.h"
#include "roam-run-app.h"

/* The app commands of `roam` (docs/client.md): `roam apps`, `roam app ID [ACTION]` and
 * `roam run`. The command line is checked before (roam.c: settings without '=', durations);
 * roamd checks the rest. Every function logs its errors ("roam: ..." on stderr) and returns a
 * negative errno, -EHOSTDOWN when roamd is not running. */

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
