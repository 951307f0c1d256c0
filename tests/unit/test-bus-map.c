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
