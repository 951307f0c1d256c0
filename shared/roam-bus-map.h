/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One reader for D-Bus property maps (a{sv}: GetAll answers, PropertiesChanged, option
 * dictionaries) on both sides of the bus: a table names the keys, the type each one's variant
 * must hold and what takes its value; the rest is skipped. */

#include <stddef.h>
#include <systemd/sd-bus.h>

/* Reads one value: m is inside the variant (entered with the entry's signature), or, for an
 * entry without a signature, at the variant itself (the setter reads it whole, any type).
 * field is the reader's userdata plus the entry's offset. Negative errno stops the read. */
typedef int (*BusMapSetFn)(sd_bus_message *m, const char *key, void *field);

typedef struct BusMapEntry {
        const char *key;
        const char *signature; /* the variant's contents; NULL: the setter takes any */
        BusMapSetFn set;
        size_t offset;
} BusMapEntry;

/* Reads the a{sv} m is at, through map (ended by an entry with key NULL), and leaves m after
 * it: 1. 0: m is at the end of an enclosing array (of maps), nothing read. A key in map whose
 * variant holds another type: -EBADMSG, the values before it taken. Keys not in map are
 * skipped. A nested map (a variant holding a{sv}) is an entry of signature "a{sv}" whose
 * setter calls bus_map_read() with the inner map. */
int bus_map_read(sd_bus_message *m, const BusMapEntry *map, void *userdata);

/* Which value bus_map_read_full() refused for its type, for a message that names it. */
typedef struct BusMapMismatch {
        const char *key;       /* the entry's key */
        const char *signature; /* the entry's signature */
        const char *contents;  /* what the variant held instead; valid while m is */
} BusMapMismatch;

/* bus_map_read(), and on -EBADMSG for a value of another type, *ret_mismatch says which (else
 * it is zeroed). */
int bus_map_read_full(sd_bus_message *m, const BusMapEntry *map, void *userdata,
                      BusMapMismatch *ret_mismatch);

typedef enum BusMapFlags {
        /* A key not in map stops the read: -ENOKEY (options from a caller, where a misspelt
         * key must not pass unnoticed). */
        BUS_MAP_REFUSE_UNKNOWN = 1 << 0,
        /* A key in map whose variant holds another type is skipped, not -EBADMSG (a peer's
         * properties: one odd value must not cost the others). */
        BUS_MAP_SKIP_WRONG_TYPE = 1 << 1,
} BusMapFlags;

/* bus_map_read() with flags. When the read stops at a key (unknown: -ENOKEY, another type:
 * -EBADMSG, or the error its setter returned, e.g. a value out of range), *ret_key (may be
 * NULL) is that key, valid as long as m; NULL when it stopped elsewhere or did not stop. A
 * setter refusing a value returns an errno of its own choosing (not -ENOKEY or -EBADMSG), so
 * the caller can tell which reason to give. */
int bus_map_read_flags(sd_bus_message *m, const BusMapEntry *map, BusMapFlags flags, void *userdata,
                       const char **ret_key);

/* One interface of an object in an ObjectManager's answer (GetManagedObjects, InterfacesAdded):
 * m is at its a{sv} of properties, which fn reads (bus_map_read()) or skips whole. */
typedef int (*BusInterfaceFn)(sd_bus_message *m, const char *path, const char *interface,
                              void *userdata);

/* One object's interfaces (a{sa{sv}}: InterfacesAdded after its path), fn for each; m is left
 * after them. Negative errno (fn's, or a malformed message's) stops the read. */
int bus_map_read_interfaces(sd_bus_message *m, const char *path, BusInterfaceFn fn, void *userdata);
/* GetManagedObjects' answer (a{oa{sa{sv}}}): fn for each interface of each object, in order. */
int bus_map_read_objects(sd_bus_message *m, BusInterfaceFn fn, void *userdata);

/* Setters for a field of the variant's own type: char * (strdup, the old one freed; "s", "o"
 * or "g"), bool ("b"), uint16_t ("q"), int16_t ("n"), uint32_t ("u"), int32_t ("i"),
 * uint64_t ("t"), int64_t ("x"), char ** (the old one freed; "as" or "ao"). bus_map_ignore
 * takes any value of the entry's signature and keeps nothing (a key that is accepted, its
 * type checked, and not used). */
int bus_map_string(sd_bus_message *m, const char *key, void *field);
int bus_map_bool(sd_bus_message *m, const char *key, void *field);
int bus_map_u16(sd_bus_message *m, const char *key, void *field);
int bus_map_i16(sd_bus_message *m, const char *key, void *field);
int bus_map_u32(sd_bus_message *m, const char *key, void *field);
int bus_map_i32(sd_bus_message *m, const char *key, void *field);
int bus_map_u64(sd_bus_message *m, const char *key, void *field);
int bus_map_i64(sd_bus_message *m, const char *key, void *field);
int bus_map_strv(sd_bus_message *m, const char *key, void *field);
int bus_map_ignore(sd_bus_message *m, const char *key, void *field);
