/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include <json-c/json.h>

#include "roam-bus-model.h"

/* `roam status`: the model as text for people (80 columns, states in words) or as JSON. */

int roam_status_print_text(const RoamModel *m, FILE *f);

/* The JSON document of `roam status --json` (format in roam --help and the tests). */
int roam_status_to_json(const RoamModel *m, json_object **ret);
int roam_status_print_json(const RoamModel *m, FILE *f);

/* Connects, loads the model and prints it. Returns -EHOSTDOWN when roamd is not running. */
int roam_status_run(bool json);
