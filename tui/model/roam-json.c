/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>

#include "roam-json.h"

int json_add(json_object *obj, const char *key, json_object *val)
{
        if (!val)
                return -ENOMEM;
        if (json_object_object_add(obj, key, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

int json_append(json_object *array, json_object *val)
{
        if (!val)
                return -ENOMEM;
        if (json_object_array_add(array, val) < 0) {
                json_object_put(val);
                return -ENOMEM;
        }
        return 0;
}

int json_add_string(json_object *obj, const char *key, const char *s)
{
        /* roamd leaves out what it does not know (a portal without WISPr has no LoginURL):
         * null, where json_object_new_string(NULL) would crash. */
        if (!s)
                return json_add_null(obj, key);
        return json_add(obj, key, json_object_new_string(s));
}

int json_add_int(json_object *obj, const char *key, int64_t v)
{
        return json_add(obj, key, json_object_new_int64(v));
}

int json_add_uint(json_object *obj, const char *key, uint64_t v)
{
        return json_add(obj, key, json_object_new_uint64(v));
}

int json_add_bool(json_object *obj, const char *key, bool v)
{
        return json_add(obj, key, json_object_new_boolean(v));
}

int json_add_null(json_object *obj, const char *key)
{
        /* json-c writes a NULL member as null. */
        return json_object_object_add(obj, key, NULL) < 0 ? -ENOMEM : 0;
}

int strv_to_json(char *const *l, json_object **ret)
{
        _cleanup_(json_object_putp) json_object *array = NULL;
        int r;

        array = json_object_new_array();
        if (!array)
                return -ENOMEM;
        for (size_t i = 0; l && l[i]; i++) {
                r = json_append(array, json_object_new_string(l[i]));
                if (r < 0)
                        return r;
        }
        *ret = TAKE_PTR(array);
        return 0;
}

int json_print(json_object *doc, FILE *f)
{
        const char *s;

        s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                    JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!s)
                return -ENOMEM;
        fprintf(f, "%s\n", s);
        return 0;
}
