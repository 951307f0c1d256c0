/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tui/model/roam-bus-model.c: roamd's objects (a{sa{sv}}) read into the client's model through the
 * shared a{sv} reader, on messages built by sd-bus itself. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "roam-bus-model.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "test.h"

static sd_bus *bus;
static char captured[4096];

static void capture(int level, const char *msg, void *userdata)
{
        size_t n = strlen(captured);

        if (level <= LOG_ERR)
                snprintf(captured + n, sizeof(captured) - n, "%s\n", msg);
}

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

/* Reads m (one object's interfaces) as the link at /org/roam1/link/2; the log's errors in
 * captured. */
static int read_link(sd_bus_message *m, RoamLink **ret_link, const char **ret_refused)
{
        RoamApp *app = NULL;
        int r;

        seal(m);
        captured[0] = 0;
        log_set_sink(capture, NULL);
        *ret_link = NULL;
        r = roam_model_read_object(m, "/org/roam1/link/2", NULL, ret_link, &app, ret_refused);
        log_set_sink(NULL, NULL);
        ASSERT_TRUE(!app);
        sd_bus_message_unref(m);
        return r;
}

TEST(link_with_its_portal_data_and_empty_lists)
{
        sd_bus_message *m = new_message();
        const char *refused = "stale";
        RoamLink *l;

        ASSERT_TRUE(sd_bus_message_append(
                        m, "a{sa{sv}}", 2, "org.example.Other", 1, "X", "s", "skipped",
                        ROAM_LINK_INTERFACE, 7, "Name", "s", "eth1", "Index", "i", 2, "MTU", "u",
                        1500, "Domains", "as", 0, "Addresses", "a(isus)", 1, 2, "192.0.2.10", 24,
                        "global", "NewerProperty", "t", (uint64_t)7, "CaptivePortal", "a{sv}", 3,
                        "Captive", "b", 1, "SecondsRemaining", "t", (uint64_t)600, "UserPortalURL",
                        "s", "https://portal.example/") >= 0);
        ASSERT_EQ(read_link(m, &l, &refused), 0);
        ASSERT_TRUE(!refused);
        ASSERT_TRUE(l);
        ASSERT_STREQ(l->path, "/org/roam1/link/2");
        ASSERT_STREQ(l->name, "eth1");
        ASSERT_EQ(l->index, 2);
        ASSERT_EQ(l->mtu, 1500);
        /* An empty array is an empty list, never NULL; unsent strings are "". */
        ASSERT_TRUE(l->domains && !l->domains[0]);
        ASSERT_STREQ(l->bearer, "");
        ASSERT_EQ(l->n_addresses, 1);
        ASSERT_STREQ(l->addresses[0].address, "192.0.2.10");
        ASSERT_EQ(l->addresses[0].prefix, 24);
        ASSERT_TRUE(l->capport.has_captive && l->capport.captive);
        ASSERT_TRUE(l->capport.has_seconds_remaining);
        ASSERT_EQ(l->capport.seconds_remaining, 600);
        ASSERT_TRUE(!l->capport.has_bytes_remaining);
        ASSERT_STREQ(l->capport.user_portal_url, "https://portal.example/");

        /* A change replaces the portal data whole: what roamd no longer sends goes. */
        m = new_message();
        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "CaptivePortal", "a{sv}", 1, "Error", "s",
                                          "no JSON") >= 0);
        seal(m);
        ASSERT_EQ(roam_link_update_properties(l, m), 0);
        sd_bus_message_unref(m);
        ASSERT_STREQ(l->capport.error, "no JSON");
        ASSERT_TRUE(!l->capport.has_captive && !l->capport.user_portal_url);
        ASSERT_STREQ(l->name, "eth1");
        roam_link_free(l);
}

TEST(property_of_another_type_is_refused_with_its_name)
{
        sd_bus_message *m = new_message();
        const char *refused = NULL;
        RoamLink *l;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sa{sv}}", 1, ROAM_LINK_INTERFACE, 2, "Name", "s",
                                          "eth1", "MTU", "s", "1500") >= 0);
        ASSERT_EQ(read_link(m, &l, &refused), -EBADMSG);
        ASSERT_TRUE(!l);
        ASSERT_STREQ(refused, "link");
        ASSERT_STREQ(captured, "roamd sent property MTU of type 's', not 'u'.\n");
}

TEST(portal_member_of_another_type_is_refused_with_its_name)
{
        sd_bus_message *m = new_message();
        const char *refused = NULL;
        RoamLink *l;

        ASSERT_TRUE(sd_bus_message_append(m, "a{sa{sv}}", 1, ROAM_LINK_INTERFACE, 1,
                                          "CaptivePortal", "a{sv}", 1, "Captive", "s", "yes") >= 0);
        ASSERT_EQ(read_link(m, &l, &refused), -EBADMSG);
        ASSERT_TRUE(!l);
        ASSERT_STREQ(refused, "link");
        ASSERT_STREQ(captured, "roamd sent CaptivePortal member Captive of type 's', not 'b'.\n");
}

TEST(manager_and_app_objects)
{
        _cleanup_(roam_model_freep) RoamModel *model = NULL;
        sd_bus_message *m = new_message();
        const char *refused = NULL;
        RoamLink *l = NULL;
        RoamApp *a = NULL;

        ASSERT_EQ(roam_model_new(&model), 0);
        ASSERT_TRUE(sd_bus_message_append(m, "a{sa{sv}}", 1, ROAM_MANAGER_INTERFACE, 3, "State",
                                          "s", "online", "BestLink", "o", "/org/roam1/link/2",
                                          "TimeGate", "b", 1) >= 0);
        seal(m);
        ASSERT_EQ(roam_model_read_object(m, ROAM_MANAGER_PATH, model, &l, &a, &refused), 0);
        sd_bus_message_unref(m);
        ASSERT_TRUE(!l && !a);
        ASSERT_STREQ(model->state, "online");
        ASSERT_STREQ(model->best_link_path, "/org/roam1/link/2");
        ASSERT_TRUE(model->time_gate);

        m = new_message();
        ASSERT_TRUE(sd_bus_message_append(m, "a{sa{sv}}", 1, ROAM_APP_INTERFACE, 3, "Id", "s",
                                          "org.example.Mail", "Wake", "i", 3, "Bearers", "as", 1,
                                          "wifi") >= 0);
        seal(m);
        ASSERT_EQ(roam_model_read_object(m, "/org/roam1/app/x", NULL, &l, &a, &refused), 0);
        sd_bus_message_unref(m);
        ASSERT_TRUE(!l && a);
        ASSERT_STREQ(a->id, "org.example.Mail");
        ASSERT_EQ(a->wake, 3);
        ASSERT_STREQ(a->bearers[0], "wifi");
        ASSERT_TRUE(!a->bearers[1]);
        ASSERT_TRUE(!a->cgroups[0]);
        roam_app_free(a);
}
