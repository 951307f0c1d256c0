/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus-map.h"
#include "roam-macro.h"
#include "roam-util.h"

static const BusMapEntry *map_find(const BusMapEntry *map, const char *key)
{
        for (; map->key; map++)
                if (streq(map->key, key))
                        return map;
        return NULL;
}

static int read_value(sd_bus_message *m, const BusMapEntry *e, const char *key, void *field,
                      BusMapMismatch *mismatch)
{
        const char *contents = NULL;
        char type = 0;
        int r;

        if (!e->signature)
                return e->set(m, key, field);
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (r == 0 || type != SD_BUS_TYPE_VARIANT || !streq_ptr(contents, e->signature)) {
                *mismatch = (BusMapMismatch){e->key, e->signature, contents};
                return -EBADMSG;
        }
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, e->signature);
        if (r < 0)
                return r;
        r = e->set(m, key, field);
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int bus_map_read(sd_bus_message *m, const BusMapEntry *map, void *userdata)
{
        return bus_map_read_full(m, map, userdata, NULL);
}

int bus_map_read_full(sd_bus_message *m, const BusMapEntry *map, void *userdata,
                      BusMapMismatch *ret_mismatch)
{
        BusMapMismatch mismatch = {};
        int r;

        if (ret_mismatch)
                *ret_mismatch = mismatch;
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r <= 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sv")) > 0) {
                const BusMapEntry *e;
                const char *key;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                e = map_find(map, key);
                if (e)
                        r = read_value(m, e, key, (uint8_t *)userdata + e->offset, &mismatch);
                else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0) {
                        if (ret_mismatch)
                                *ret_mismatch = mismatch;
                        return r;
                }
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

int bus_map_string(sd_bus_message *m, const char *key, void *field)
{
        const char *s;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, NULL);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        r = sd_bus_message_read_basic(m, type, &s);
        if (r < 0)
                return r;
        return free_and_strdup(field, s) < 0 ? -ENOMEM : 0;
}

int bus_map_bool(sd_bus_message *m, const char *key, void *field)
{
        int b, r;

        r = sd_bus_message_read_basic(m, SD_BUS_TYPE_BOOLEAN, &b);
        if (r < 0)
                return r;
        *(bool *)field = b;
        return 0;
}

int bus_map_u32(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, SD_BUS_TYPE_UINT32, field);
}

int bus_map_i32(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, SD_BUS_TYPE_INT32, field);
}

int bus_map_u64(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, SD_BUS_TYPE_UINT64, field);
}

int bus_map_i64(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, SD_BUS_TYPE_INT64, field);
}

int bus_map_strv(sd_bus_message *m, const char *key, void *field)
{
        char **l = NULL, ***p = field;
        int r;

        r = sd_bus_message_read_strv(m, &l);
        if (r < 0)
                return r;
        strv_free(*p);
        *p = l;
        return 0;
}
