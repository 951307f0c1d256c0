/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The client model's readers of roamd's interfaces beyond the manager, links and apps
 * (tui/model/roam-bluetooth.c, roam-usage.c, roam-time.c, roam-peers.c), on messages built by
 * sd-bus itself: what the TUI's screens, plain mode and the commands all render. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roam-bluetooth.h"
#include "roam-bus.h"
#include "roam-macro.h"
#include "roam-peers.h"
#include "roam-time.h"
#include "roam-usage.h"
#include "roam-util.h"
#include "test.h"

static sd_bus *bus;

/* A bus on one end of a socket pair: enough for sd-bus to build and seal messages. */
static sd_bus_message *new_signal(const char *interface, const char *member)
{
        sd_bus_message *m = NULL;
        int fds[2];

        if (!bus) {
                ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
                ASSERT_EQ(sd_bus_new(&bus), 0);
                ASSERT_EQ(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
                ASSERT_EQ(sd_bus_start(bus), 0);
        }
        ASSERT_EQ(sd_bus_message_new_signal(bus, &m, "/t", interface, member), 0);
        return m;
}

static void seal(sd_bus_message *m)
{
        ASSERT_EQ(sd_bus_message_seal(m, 1, 0), 0);
        ASSERT_TRUE(sd_bus_message_rewind(m, true) >= 0);
}

TEST(bluetooth_whole_state)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_signal("t.T", "X");
        _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};
        char s[256];

        ASSERT_TRUE(sd_bus_message_append(
                        m, "a{sv}", 7, "Available", "b", 1, "AgentRegistered", "b", 1, "LastEvent",
                        "s", "Paired with Headset", "Adapters", "a(sssbbbb)", 1, "hci0",
                        "00:11:22:33:44:55", "laptop", 1, 0, 1, 0, "Devices", "a(ssssnbbbiss)", 2,
                        "AA:BB:CC:DD:EE:01", "hci0", "Headset", "audio", (int16_t)-60, 1, 1, 1,
                        (int32_t)80, "", "", "AA:BB:CC:DD:EE:02", "hci0", "Phone", "phone",
                        (int16_t)127, 0, 0, 0, (int32_t)-1, "connected", "bnep0", "Question",
                        "(ussss)", (uint32_t)7, "enter-pin", "AA:BB:CC:DD:EE:02", "Phone", "",
                        "NewerProperty", "t", (uint64_t)1) >= 0);
        seal(m);
        ASSERT_OK(roam_bluetooth_read(m, &bt));
        ASSERT_TRUE(bt.available && bt.agent);
        ASSERT_STREQ(bt.last_event, "Paired with Headset");
        ASSERT_EQ(bt.n_adapters, 1);
        ASSERT_STREQ(roam_bluetooth_adapter(&bt)->name, "laptop");
        ASSERT_TRUE(bt.adapters[0].powered && !bt.adapters[0].discoverable);
        ASSERT_EQ(bt.n_devices, 2);
        ASSERT_EQ(bt.devices[0].rssi, -60);
        ASSERT_EQ(bt.devices[0].battery, 80);
        ASSERT_STREQ(bt.devices[1].network, "connected");
        ASSERT_STREQ(bt.devices[1].interface, "bnep0");
        ASSERT_EQ(bt.question.id, 7);
        /* NfcOffer was not sent: its text reads "" */
        ASSERT_EQ(bt.nfc_id, 0);
        ASSERT_STREQ(bt.nfc_text, "");
        roam_bt_question_sentence(&bt.question, s, sizeof(s));
        ASSERT_STREQ(s, "Phone asks for its PIN (often 0000 or 1234; no: refuse)");
}

TEST(bluetooth_secret_question_without_its_code_says_so)
{
        RoamBtQuestion q = {7, (char *)"confirm", (char *)"AA:BB:CC:DD:EE:02", (char *)"",
                            (char *)""};
        char s[256];

        roam_bt_question_sentence(&q, s, sizeof(s));
        ASSERT_STREQ(s, "AA:BB:CC:DD:EE:02 is pairing; its passkey is shown only to users "
                        "allowed to pair");
        q.value = (char *)"123456";
        roam_bt_question_sentence(&q, s, sizeof(s));
        ASSERT_STREQ(s, "AA:BB:CC:DD:EE:02 shows passkey 123456: is it the same? (yes/no)");
}

TEST(bluetooth_wrong_type_is_refused)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_signal("t.T", "X");
        _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};

        ASSERT_TRUE(sd_bus_message_append(m, "a{sv}", 1, "Available", "s", "yes") >= 0);
        seal(m);
        ASSERT_EQ(roam_bluetooth_read(m, &bt), -EBADMSG);
}

TEST(bluetooth_changed_signal_of_another_interface_is_not_read)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m =
            new_signal("org.freedesktop.DBus.Properties", "PropertiesChanged");
        _cleanup_(roam_bluetooth_done) RoamBluetooth bt = {};

        ASSERT_TRUE(sd_bus_message_append(m, "sa{sv}as", "org.roam1.Other", 1, "LastEvent", "s",
                                          "x", 0) >= 0);
        seal(m);
        ASSERT_EQ(roam_bluetooth_read_changed(m, &bt), 0);
        ASSERT_TRUE(!bt.last_event);
}

TEST(usage_rows_history_and_budgets)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *rows = new_signal("t.T", "R"),
                                                        *hours = new_signal("t.T", "H"),
                                                        *budgets = new_signal("t.T", "B");
        RoamUsageRow *r = NULL;
        RoamUsageHour *h = NULL;
        RoamBudget *b = NULL;
        size_t n = 0;

        ASSERT_TRUE(sd_bus_message_append(rows, "a(ssbtttt)", 2, "app:org.a", "wlan0", 0,
                                          (uint64_t)100, (uint64_t)20, (uint64_t)3, (uint64_t)2,
                                          "uid:1000", "wwan0", 1, (uint64_t)5, (uint64_t)6,
                                          (uint64_t)1, (uint64_t)1) >= 0);
        seal(rows);
        ASSERT_OK(roam_usage_rows_read(rows, &r, &n));
        ASSERT_EQ(n, 2);
        ASSERT_STREQ(r[0].owner, "app:org.a");
        ASSERT_TRUE(!r[0].roaming && r[1].roaming);
        ASSERT_EQ(r[0].bytes_in, 100);
        ASSERT_EQ(r[1].bytes_out, 6);
        roam_usage_rows_free(r, n);

        ASSERT_TRUE(sd_bus_message_append(hours, "a(tbtttt)", 1, (uint64_t)3600, 1, (uint64_t)7,
                                          (uint64_t)8, (uint64_t)1, (uint64_t)1) >= 0);
        seal(hours);
        ASSERT_OK(roam_usage_history_read(hours, &h, &n));
        ASSERT_EQ(n, 1);
        ASSERT_EQ(h[0].start, 3600);
        ASSERT_EQ(h[0].bytes_in + h[0].bytes_out, 15);
        free(h);

        ASSERT_TRUE(sd_bus_message_append(budgets, "a(ssttttts)", 1, "org.a", "cellular",
                                          (uint64_t)1000, (uint64_t)1200, (uint64_t)0,
                                          (uint64_t)86400, (uint64_t)80, "over") >= 0);
        seal(budgets);
        ASSERT_OK(roam_budgets_read(budgets, &b, &n));
        ASSERT_EQ(n, 1);
        ASSERT_STREQ(b[0].links, "cellular");
        ASSERT_EQ(b[0].end, 86400);
        ASSERT_STREQ(roam_budget_state_words(b[0].state), "over budget: blocked");
        roam_budgets_free(b, n);
}

TEST(usage_rows_of_another_shape_are_refused)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = new_signal("t.T", "R");
        RoamUsageRow *r = NULL;
        size_t n = 0;

        ASSERT_TRUE(sd_bus_message_append(m, "a(ss)", 1, "a", "b") >= 0);
        seal(m);
        ASSERT_TRUE(roam_usage_rows_read(m, &r, &n) < 0);
        ASSERT_TRUE(!r);
}

TEST(usage_call_carries_the_filter)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        RoamUsageQuery q = {.app = "org.a", .user = "1000", .since = 42};
        const char *key, *app;
        uint32_t uid;
        uint64_t since;

        sd_bus_message_unref(new_signal("t.T", "X")); /* (made for the bus it starts) */
        ASSERT_EQ(roam_usage_new_call(bus, "GetUsage", &(RoamUsageQuery){.user = "-1"}, &m),
                  -EINVAL);
        ASSERT_OK(roam_usage_new_call(bus, "GetUsage", &q, &m));
        seal(m);
        ASSERT_TRUE(sd_bus_message_enter_container(m, 'a', "{sv}") > 0);
        ASSERT_TRUE(sd_bus_message_read(m, "{sv}", &key, "s", &app) > 0);
        ASSERT_STREQ(key, "app");
        ASSERT_STREQ(app, "org.a");
        ASSERT_TRUE(sd_bus_message_read(m, "{sv}", &key, "t", &since) > 0);
        ASSERT_EQ(since, 42);
        ASSERT_TRUE(sd_bus_message_read(m, "{sv}", &key, "u", &uid) > 0);
        ASSERT_STREQ(key, "user");
        ASSERT_EQ(uid, 1000);
}

TEST(time_view_kept_when_a_read_fails)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *good = new_signal("t.T", "G"),
                                                        *bad = new_signal("t.T", "B");
        _cleanup_(roam_time_view_done) RoamTimeView v = {};

        ASSERT_TRUE(sd_bus_message_append(good, "a{sv}", 2, "State", "s", "settled", "Gate", "s",
                                          "open") >= 0);
        seal(good);
        ASSERT_OK(roam_time_view_replace(good, &v));
        ASSERT_STREQ(v.state, "settled");
        /* no State: not a time view, and the one before stays */
        ASSERT_TRUE(sd_bus_message_append(bad, "a{sv}", 1, "Gate", "s", "closed") >= 0);
        seal(bad);
        ASSERT_TRUE(roam_time_view_replace(bad, &v) < 0);
        ASSERT_STREQ(v.state, "settled");
        ASSERT_STREQ(v.gate, "open");
}

TEST(p2p_signals)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *failed =
            new_signal(ROAM_MANAGER_INTERFACE, "P2PConnectionFailed");
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *other =
            new_signal(ROAM_MANAGER_INTERFACE, "P2PPeerFound");
        P2pSignalArgs s;

        ASSERT_TRUE(sd_bus_message_append(failed, "sss", "02:00:00:00:00:01", "TV", "peer-lost") >=
                    0);
        seal(failed);
        ASSERT_EQ(p2p_signal_read(failed, &s), P2P_SIGNAL_CONNECTION_FAILED);
        ASSERT_STREQ(s.b, "TV");
        ASSERT_STREQ(s.reason, "peer-lost");
        ASSERT_TRUE(sd_bus_message_append(other, "s", "x") >= 0);
        seal(other);
        ASSERT_EQ(p2p_signal_read(other, &s), P2P_SIGNAL_NONE);
}
