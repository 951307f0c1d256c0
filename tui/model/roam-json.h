/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <json-c/json.h>

#include "roam-macro.h"

/* Building the JSON documents of `roam status --json` and `roam apps --json`. Every function
 * returns 0 or -ENOMEM. */

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* Adds val under key (or to the array), taking ownership of val; val == NULL means allocation
 * failed. */
int json_add(json_object *obj, const char *key, json_object *val);
int json_append(json_object *array, json_object *val);
/* s == NULL: null. */
int json_add_string(json_object *obj, const char *key, const char *s);
int json_add_int(json_object *obj, const char *key, int64_t v);
int json_add_uint(json_object *obj, const char *key, uint64_t v);
int json_add_bool(json_object *obj, const char *key, bool v);
int json_add_null(json_object *obj, const char *key);
/* A string vector (NULL: empty) as an array. */
int strv_to_json(char *const *l, json_object **ret);
/* Writes doc pretty-printed, URLs unescaped, with a newline. */
int json_print(json_object *doc, FILE *f);
