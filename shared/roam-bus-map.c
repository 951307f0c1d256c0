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

/* m is at the entry's variant: 1 read, 0 another type (*mismatch says which; nothing read). */
static int read_value(sd_bus_message *m, const BusMapEntry *e, const char *key, void *field,
                      BusMapMismatch *mismatch)
{
        const char *contents = NULL;
        char type = 0;
        int r;

        if (!e->signature) {
                r = e->set(m, key, field);
                return r < 0 ? r : 1;
        }
        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r < 0)
                return r;
        if (r == 0 || type != SD_BUS_TYPE_VARIANT || !streq_ptr(contents, e->signature)) {
                *mismatch = (BusMapMismatch){e->key, e->signature, contents};
                return 0;
        }
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, e->signature);
        if (r < 0)
                return r;
        r = e->set(m, key, field);
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 1;
}

/* One entry's value. *ret_key: the key, when the read stops at it; *mismatch: set when its
 * value had another type. */
static int read_entry(sd_bus_message *m, const BusMapEntry *map, BusMapFlags flags, void *userdata,
                      const char **ret_key, BusMapMismatch *mismatch)
{
        const BusMapEntry *e;
        const char *key;
        int r;

        r = sd_bus_message_read(m, "s", &key);
        if (r < 0)
                return r;
        e = map_find(map, key);
        if (!e && (flags & BUS_MAP_REFUSE_UNKNOWN))
                r = -ENOKEY;
        else if (e) {
                r = read_value(m, e, key, (uint8_t *)userdata + e->offset, mismatch);
                if (r == 0 && (flags & BUS_MAP_SKIP_WRONG_TYPE)) {
                        *mismatch = (BusMapMismatch){};
                        r = sd_bus_message_skip(m, "v");
                } else if (r == 0)
                        r = -EBADMSG;
        } else
                r = sd_bus_message_skip(m, "v");
        if (r < 0)
                *ret_key = key;
        return r;
}

static int read_map(sd_bus_message *m, const BusMapEntry *map, BusMapFlags flags, void *userdata,
                    const char **ret_key, BusMapMismatch *ret_mismatch)
{
        BusMapMismatch mismatch = {};
        const char *key = NULL;
        int r;

        if (ret_key)
                *ret_key = NULL;
        if (ret_mismatch)
                *ret_mismatch = mismatch;
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sv}");
        if (r <= 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sv")) > 0) {
                r = read_entry(m, map, flags, userdata, &key, &mismatch);
                if (r < 0) {
                        if (ret_key)
                                *ret_key = key;
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

int bus_map_read(sd_bus_message *m, const BusMapEntry *map, void *userdata)
{
        return read_map(m, map, 0, userdata, NULL, NULL);
}

int bus_map_read_full(sd_bus_message *m, const BusMapEntry *map, void *userdata,
                      BusMapMismatch *ret_mismatch)
{
        return read_map(m, map, 0, userdata, NULL, ret_mismatch);
}

int bus_map_read_flags(sd_bus_message *m, const BusMapEntry *map, BusMapFlags flags, void *userdata,
                       const char **ret_key)
{
        return read_map(m, map, flags, userdata, ret_key, NULL);
}

int bus_map_read_interfaces(sd_bus_message *m, const char *path, BusInterfaceFn fn, void *userdata)
{
        int r;

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{sa{sv}}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "sa{sv}")) > 0) {
                const char *interface;

                r = sd_bus_message_read(m, "s", &interface);
                if (r >= 0)
                        r = fn(m, path, interface, userdata);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
}

int bus_map_read_objects(sd_bus_message *m, BusInterfaceFn fn, void *userdata)
{
        int r;

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_ARRAY, "{oa{sa{sv}}}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, SD_BUS_TYPE_DICT_ENTRY, "oa{sa{sv}}")) > 0) {
                const char *path;

                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = bus_map_read_interfaces(m, path, fn, userdata);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(m);
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

int bus_map_u16(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, SD_BUS_TYPE_UINT16, field);
}

int bus_map_i16(sd_bus_message *m, const char *key, void *field)
{
        return sd_bus_message_read_basic(m, SD_BUS_TYPE_INT16, field);
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

int bus_map_ignore(sd_bus_message *m, const char *key, void *field)
{
        /* NULL: exactly the one value m is at */
        return sd_bus_message_skip(m, NULL);
}
