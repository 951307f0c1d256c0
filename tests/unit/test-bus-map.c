/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* shared/roam-bus-map.c: the a{sv} reader, on messages built by sd-bus itself. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roam-bus-map.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "test.h"

typedef struct Props {
        char *name;
        bool up;
        uint32_t count;
        int32_t offset;
        uint64_t since;
        int64_t delta;
        char **list;
        int seen_any; /* the setter without a signature ran */
} Props;

static int set_any(sd_bus_message *m, const char *key, void *field)
{
        (*(int *)field)++;
        return sd_bus_message_skip(m, "v");
}

static const BusMapEntry map[] = {
    {"Name", "s", bus_map_string, offsetof(Props, name)},
    {"Up", "b", bus_map_bool, offsetof(Props, up)},
    {"Count", "u", bus_map_u32, offsetof(Props, count)},
    {"Offset", "i", bus_map_i32, offsetof(Props, offset)},
    {"Since", "t", bus_map_u64, offsetof(Props, since)},
    {"Delta", "x", bus_map_i64, offsetof(Props, delta)},
    {"List", "as", bus_map_strv, offsetof(Props, list)},
    {"Any", NULL, set_any, offsetof(Props, seen_any)},
    {},
};

static sd_bus *bus;

/* A bus on one end of a socket pair: enough for sd-bus to build and seal messages. */
static sd_bus_message *new_message(void)
{
        sd_bus_message *m = NULL;
        int fds[2];

        if (!bus) {
                ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
                ASSERT_EQ(sd_bus_new(&bus), 0);
                ASSERT_EQ(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
                ASSERT_EQ(sd_bus_start(bus), 0);
        }
        ASSERT_EQ(sd_bus_message_new_signal(bus, &m, "/t", "t.T", "Changed"), 0);
        return m;
}

static void seal(sd_bus_message *m)
{
        ASSERT_EQ(sd_bus_message_seal(m, 1, 0), 0);
        ASSERT_TRUE(sd_bus_message_rewind(m, true) >= 0);
}

static void props_done(Props *p)
{
        free(p->name);
        strv_free(p->list);
}

TEST(every_type_and_unknown_keys_skipped)
{
        sd_bus_message *m = new_message();
        Props p = {.name = strdup("old")};
        const char *after;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 10, "Name", "s", "eth0", "Up", "b", 1,
                                          "Count", "u", 7, "Unknown", "a{ss}", 1, "k", "v",
                                          "Offset", "i", -3600, "Since", "t", (uint64_t)1 << 40,
                                          "Delta", "x", (int64_t)-5, "List", "as", 2, "a", "b",
                                          "Any", "(ii)", 1, 2, "Other", "s", "x") >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "s", "after") >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read(m, map, &p), 1);
        ASSERT_TRUE(streq(p.name, "eth0"));
        ASSERT_TRUE(p.up);
        ASSERT_EQ(p.count, 7);
        ASSERT_EQ(p.offset, -3600);
        ASSERT_TRUE(p.since == (uint64_t)1 << 40);
        ASSERT_EQ(p.delta, -5);
        ASSERT_TRUE(p.list && streq(p.list[0], "a") && streq(p.list[1], "b") && !p.list[2]);
        ASSERT_EQ(p.seen_any, 1);
        /* the message is left after the map */
        ASSERT_TRUE(sd_bus_message_read(m, "s", &after) > 0);
        ASSERT_TRUE(streq(after, "after"));
        props_done(&p);
        sd_bus_message_unref(m);
}

TEST(wrong_type_is_ebadmsg_after_earlier_values)
{
        sd_bus_message *m = new_message();
        Props p = {};

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 3, "Up", "b", 1, "Count", "s", "seven",
                                          "Name", "s", "never") >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read(m, map, &p), -EBADMSG);
        ASSERT_TRUE(p.up);
        ASSERT_EQ(p.count, 0);
        ASSERT_TRUE(!p.name);
        props_done(&p);
        sd_bus_message_unref(m);
}

TEST(mismatch_names_the_key_and_both_types)
{
        sd_bus_message *m = new_message();
        BusMapMismatch mm = {.key = "stale"};
        Props p = {};

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 2, "Up", "b", 1, "Count", "s", "seven") >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_full(m, map, &p, &mm), -EBADMSG);
        ASSERT_STREQ(mm.key, "Count");
        ASSERT_STREQ(mm.signature, "u");
        ASSERT_STREQ(mm.contents, "s");
        sd_bus_message_unref(m);

        /* A read that succeeds says no mismatch. */
        m = new_message();
        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "Up", "b", 0) >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_full(m, map, &p, &mm), 1);
        ASSERT_TRUE(!mm.key);
        ASSERT_TRUE(!p.up);
        props_done(&p);
        sd_bus_message_unref(m);
}

TEST(empty_map_and_not_a_map)
{
        sd_bus_message *m = new_message();
        Props p = {};

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 0) >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "a{ss}", 1, "Name", "x") >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read(m, map, &p), 1);
        ASSERT_TRUE(!p.name);
        ASSERT_TRUE(bus_map_read(m, map, &p) < 0);
        ASSERT_TRUE(!p.name);
        sd_bus_message_unref(m);
}

TEST(array_of_maps_ends_with_zero)
{
        sd_bus_message *m = new_message();
        Props p = {};

        ASSERT_TRUE(sd_bus_message_append(m, "aa{sv}", 2, 1, "Count", "u", 1, 1, "Count", "u", 2) >=
                    0);
        seal(m);
        ASSERT_TRUE(sd_bus_message_enter_container(m, 'a', "a{sv}") > 0);
        ASSERT_EQ(bus_map_read(m, map, &p), 1);
        ASSERT_EQ(p.count, 1);
        ASSERT_EQ(bus_map_read(m, map, &p), 1);
        ASSERT_EQ(p.count, 2);
        ASSERT_EQ(bus_map_read(m, map, &p), 0);
        ASSERT_TRUE(sd_bus_message_exit_container(m) > 0);
        sd_bus_message_unref(m);
}

TEST(object_path_into_a_string)
{
        static const BusMapEntry paths[] = {
            {"Path", "o", bus_map_string, 0},
            {},
        };
        sd_bus_message *m = new_message();
        char *path = NULL;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "Path", "o", "/org/x/1") >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read(m, paths, &path), 1);
        ASSERT_TRUE(path && streq(path, "/org/x/1"));
        free(path);
        sd_bus_message_unref(m);
}
TEST(refuse_unknown_names_the_key)
{
        sd_bus_message *m = new_message();
        Props p = {};
        const char *key = "x";

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 3, "Up", "b", 1, "Spelt", "u", 1, "Count",
                                          "u", 9) >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_flags(m, map, BUS_MAP_REFUSE_UNKNOWN, &p, &key), -ENOKEY);
        ASSERT_TRUE(key && streq(key, "Spelt"));
        ASSERT_TRUE(p.up);
        ASSERT_EQ(p.count, 0);
        sd_bus_message_unref(m);
}

TEST(wrong_type_names_the_key_or_is_skipped)
{
        sd_bus_message *m = new_message();
        Props p = {};
        const char *key = NULL;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 2, "Count", "s", "seven", "Up", "b", 1) >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_flags(m, map, BUS_MAP_REFUSE_UNKNOWN, &p, &key), -EBADMSG);
        ASSERT_TRUE(key && streq(key, "Count"));
        ASSERT_TRUE(!p.up);
        sd_bus_message_unref(m);

        /* a peer's map: the odd value is skipped, the rest taken, the map read to its end */
        m = new_message();
        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 3, "Count", "s", "seven", "Up", "b", 1,
                                          "Unknown", "u", 1) >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_flags(m, map, BUS_MAP_SKIP_WRONG_TYPE, &p, &key), 1);
        ASSERT_TRUE(!key);
        ASSERT_EQ(p.count, 0);
        ASSERT_TRUE(p.up);
        sd_bus_message_unref(m);
}

static int set_small(sd_bus_message *m, const char *key, void *field)
{
        int r = bus_map_u32(m, key, field);

        return r < 0 ? r : *(uint32_t *)field > 10 ? -ERANGE : 0;
}

TEST(setter_refusal_names_the_key)
{
        static const BusMapEntry small[] = {
            {"Count", "u", set_small, offsetof(Props, count)},
            {"Up", "b", bus_map_bool, offsetof(Props, up)},
            {},
        };
        sd_bus_message *m = new_message();
        Props p = {};
        const char *key = NULL;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 2, "Count", "u", 11, "Up", "b", 1) >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_flags(m, small, 0, &p, &key), -ERANGE);
        ASSERT_TRUE(key && streq(key, "Count"));
        ASSERT_TRUE(!p.up);
        sd_bus_message_unref(m);
}

typedef struct Outer {
        char *iface;
        uint16_t q;
        int16_t n;
} Outer;

static const BusMapEntry inner_map[] = {
    {"Interface", "s", bus_map_string, 0},
    {},
};

static int set_settings(sd_bus_message *m, const char *key, void *field)
{
        return bus_map_read(m, inner_map, field);
}

TEST(nested_map_small_ints_and_ignored_values)
{
        static const BusMapEntry outer_map[] = {
            {"Settings", "a{sv}", set_settings, offsetof(Outer, iface)},
            {"Q", "q", bus_map_u16, offsetof(Outer, q)},
            {"N", "n", bus_map_i16, offsetof(Outer, n)},
            {"Class", "s", bus_map_ignore, 0},
            {"Blob", "a(ss)", bus_map_ignore, 0},
            {},
        };
        sd_bus_message *m = new_message();
        Outer o = {};
        const char *after, *key = NULL;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 5, "Class", "s", "bulk", "Settings", "a{sv}",
                                          2, "Method", "s", "dhcp", "Interface", "s", "wwan0",
                                          "Blob", "a(ss)", 1, "a", "b", "Q", "q", 65535, "N", "n",
                                          -70) >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "Class", "u", 1) >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read_flags(m, outer_map, BUS_MAP_REFUSE_UNKNOWN, &o, &key), 1);
        ASSERT_TRUE(o.iface && streq(o.iface, "wwan0"));
        ASSERT_EQ(o.q, 65535);
        ASSERT_EQ(o.n, -70);
        /* an ignored key's type is still checked */
        ASSERT_EQ(bus_map_read_flags(m, outer_map, 0, &o, &key), -EBADMSG);
        ASSERT_TRUE(key && streq(key, "Class"));
        free(o.iface);
        sd_bus_message_unref(m);

        /* with the ignored values skipped whole, the message is left after the map */
        m = new_message();
        o = (Outer){};
        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "Blob", "a(ss)", 2, "a", "b", "c", "d") >=
                    0);
        ASSERT_TRUE(sd_bus_message_append(m, "s", "after") >= 0);
        seal(m);
        ASSERT_EQ(bus_map_read(m, outer_map, &o), 1);
        ASSERT_TRUE(sd_bus_message_read(m, "s", &after) > 0);
        ASSERT_TRUE(streq(after, "after"));
        sd_bus_message_unref(m);
}

typedef struct Seen {
        char log[256];
        int stop_at; /* fn fails at this call (1-based); 0 never */
        int calls;
} Seen;

static int on_interface(sd_bus_message *m, const char *path, const char *interface, void *userdata)
{
        Seen *s = userdata;
        Props p = {};
        int r;

        if (++s->calls == s->stop_at)
                return -EIO;
        if (!streq(interface, "t.Named"))
                return sd_bus_message_skip(m, "a{sv}");
        r = bus_map_read(m, map, &p);
        if (r >= 0)
                snprintf(s->log + strlen(s->log), sizeof(s->log) - strlen(s->log), "%s=%s;", path,
                         p.name ? p.name : "?");
        props_done(&p);
        return r;
}

static void append_objects(sd_bus_message *m)
{
        ASSERT_TRUE(sd_bus_message_open_container(m, 'a', "{oa{sa{sv}}}") >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "{oa{sa{sv}}}", "/o/1", 2, "t.Other", 1, "Name", "s",
                                          "no", "t.Named", 2, "Name", "s", "one", "Up", "b",
                                          1) >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "{oa{sa{sv}}}", "/o/2", 0) >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "{oa{sa{sv}}}", "/o/3", 1, "t.Named", 1, "Name", "s",
                                          "three") >= 0);
        ASSERT_TRUE(sd_bus_message_close_container(m) >= 0);
}

TEST(objects_walked_interface_by_interface)
{
        sd_bus_message *m = new_message();
        Seen s = {};
        const char *after;

        append_objects(m);
        ASSERT_TRUE(sd_bus_message_append(m, "oa{sa{sv}}", "/o/4", 1, "t.Named", 1, "Name", "s",
                                          "four") >= 0);
        ASSERT_TRUE(sd_bus_message_append(m, "s", "after") >= 0);
        seal(m);
        ASSERT_TRUE(bus_map_read_objects(m, on_interface, &s) >= 0);
        ASSERT_TRUE(streq(s.log, "/o/1=one;/o/3=three;"));
        ASSERT_EQ(s.calls, 3);
        /* InterfacesAdded: the path, then one object's interfaces */
        ASSERT_TRUE(sd_bus_message_read(m, "o", &after) > 0);
        ASSERT_TRUE(bus_map_read_interfaces(m, after, on_interface, &s) >= 0);
        ASSERT_TRUE(streq(s.log, "/o/1=one;/o/3=three;/o/4=four;"));
        ASSERT_TRUE(sd_bus_message_read(m, "s", &after) > 0);
        ASSERT_TRUE(streq(after, "after"));
        sd_bus_message_unref(m);
}

TEST(objects_walk_stops_at_an_error)
{
        sd_bus_message *m = new_message();
        Seen s = {.stop_at = 3};

        append_objects(m);
        seal(m);
        ASSERT_EQ(bus_map_read_objects(m, on_interface, &s), -EIO);
        ASSERT_TRUE(streq(s.log, "/o/1=one;"));
        sd_bus_message_unref(m);

        /* not an ObjectManager's answer */
        m = new_message();
        s = (Seen){};
        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "Name", "s", "x") >= 0);
        seal(m);
        ASSERT_TRUE(bus_map_read_objects(m, on_interface, &s) < 0);
        ASSERT_EQ(s.calls, 0);
        sd_bus_message_unref(m);
}
