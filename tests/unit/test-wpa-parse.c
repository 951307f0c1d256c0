/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>

#include "roamd-client-wpa-parse.h"
#include "roam-text.h"
#include "roam-words.h"
#include "test.h"

static int split(const char *s, WpaMessage *m)
{
        return wpa_message_split(s, strlen(s), m);
}

TEST(wpa_split_table)
{
        static const struct {
                const char *in;
                int r;
                bool event;
                int level;
                const char *ifname, *text;
        } t[] = {
            {"PONG\n", 0, false, 0, "", "PONG\n"},
            {"OK\n", 0, false, 0, "", "OK\n"},
            {"", 0, false, 0, "", ""},
            {"<3>CTRL-EVENT-CONNECTED - x", 0, true, 3, "", "CTRL-EVENT-CONNECTED - x"},
            {"<2>CTRL-EVENT-TERMINATING", 0, true, 2, "", "CTRL-EVENT-TERMINATING"},
            {"IFNAME=p2p-dev-wlan0 <3>P2P-FIND-STOPPED", 0, true, 3, "p2p-dev-wlan0",
             "P2P-FIND-STOPPED"},
            /* wpa_msg_global_ctrl() and friends: no level after IFNAME= is malformed. */
            {"IFNAME=wlan0 P2P-FIND-STOPPED", -EBADMSG, false, 0, "", ""},
            {"IFNAME=wlan0", -EBADMSG, false, 0, "", ""},
            {"IFNAME= <3>X", -EBADMSG, false, 0, "", ""},
            {"<>X", -EBADMSG, false, 0, "", ""},
            {"<3X", -EBADMSG, false, 0, "", ""},
            {"<3", -EBADMSG, false, 0, "", ""},
            {"<99999999999999>X", -EBADMSG, false, 0, "", ""},
        };

        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                WpaMessage m = {};
                int r = split(t[i].in, &m);
                if (r != t[i].r)
                        TEST_FAIL("\"%s\": %d != %d", t[i].in, r, t[i].r);
                if (r < 0)
                        continue;
                ASSERT_EQ(m.event, t[i].event);
                ASSERT_EQ(m.level, t[i].level);
                ASSERT_STREQ(m.ifname, t[i].ifname);
                ASSERT_EQ(m.len, strlen(t[i].text));
                ASSERT_TRUE(memcmp(m.text, t[i].text, m.len) == 0);
        }
}

TEST(wpa_split_oversized)
{
        static char big[WPA_MESSAGE_MAX + 2];
        WpaMessage m;

        memset(big, 'A', sizeof(big) - 1);
        ASSERT_EQ(wpa_message_split(big, WPA_MESSAGE_MAX + 1, &m), -EMSGSIZE);
        ASSERT_OK(wpa_message_split(big, WPA_MESSAGE_MAX, &m));
}

static int ev(const char *s, WpaEvent *e)
{
        return wpa_event_parse(s, strlen(s), e);
}

TEST(wpa_event_device_found)
{
        /* p2p_supplicant.c wpas_dev_found(), with a name holding quotes and spaces. */
        WpaEvent e = {};

        ASSERT_OK(ev("P2P-DEVICE-FOUND 02:00:00:00:01:00 p2p_dev_addr=02:00:00:00:01:00 "
                     "pri_dev_type=7-0050F204-1 name='Living Room TV' config_methods=0x188 "
                     "dev_capab=0x25 group_capab=0x0 new=1",
                     &e));
        ASSERT_STREQ(e.name, "P2P-DEVICE-FOUND");
        ASSERT_STREQ(wpa_event_arg(&e, 0), "02:00:00:00:01:00");
        ASSERT_TRUE(wpa_event_arg(&e, 1) == NULL);
        ASSERT_STREQ(wpa_event_get(&e, "p2p_dev_addr"), "02:00:00:00:01:00");
        ASSERT_STREQ(wpa_event_get(&e, "name"), "Living Room TV");
        ASSERT_STREQ(wpa_event_get(&e, "config_methods"), "0x188");
        ASSERT_STREQ(wpa_event_get(&e, "new"), "1");
        ASSERT_TRUE(wpa_event_get(&e, "nope") == NULL);
        wpa_event_done(&e);

        ASSERT_OK(ev("P2P-DEVICE-FOUND 02:00:00:00:01:00 p2p_dev_addr=02:00:00:00:01:00 "
                     "pri_dev_type=10-0050F204-5 name='Bob's phone' config_methods=0x80 "
                     "dev_capab=0x25 group_capab=0x0 new=0\n",
                     &e));
        ASSERT_STREQ(wpa_event_get(&e, "name"), "Bob's phone");
        ASSERT_STREQ(wpa_event_get(&e, "new"), "0");
        wpa_event_done(&e);

        ASSERT_OK(ev("P2P-DEVICE-FOUND 02:00:00:00:01:00 name='' new=1", &e));
        ASSERT_STREQ(wpa_event_get(&e, "name"), "");
        wpa_event_done(&e);
}

TEST(wpa_event_group_started)
{
        WpaEvent e = {};

        ASSERT_OK(ev("P2P-GROUP-STARTED p2p-wlan0-0 client ssid=\"DIRECT-ab \\\"TV\\\"\" "
                     "freq=2437 psk=0123 go_dev_addr=02:00:00:00:01:00 [PERSISTENT]",
                     &e));
        ASSERT_STREQ(wpa_event_arg(&e, 0), "p2p-wlan0-0");
        ASSERT_STREQ(wpa_event_arg(&e, 1), "client");
        ASSERT_STREQ(wpa_event_arg(&e, 2), "[PERSISTENT]");
        ASSERT_STREQ(wpa_event_get(&e, "ssid"), "DIRECT-ab \\\"TV\\\"");
        ASSERT_STREQ(wpa_event_get(&e, "go_dev_addr"), "02:00:00:00:01:00");
        wpa_event_done(&e);
}

TEST(wpa_event_bad)
{
        static const char *const bad[] = {
            "",
            " P2P-X",
            "P2P-X name='unterminated",
            "P2P-X a=\"b",
            "P2P-X \001",
            "P2P-X a=b\nc=d",
            /* 33 fields: one more than WPA_FIELDS_MAX */
            ("P2P-X 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 "
             "29 30 31 32 33"),
        };
        WpaEvent e = {};

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (ev(bad[i], &e) != -EBADMSG)
                        TEST_FAIL("accepted \"%s\"", bad[i]);
        /* Real events: CTRL-EVENT-CONNECTED as wpa_supplicant 2.10 sends it. */
        ASSERT_OK(ev("CTRL-EVENT-CONNECTED - Connection to 01:80:c2:00:00:03 completed [id=0 "
                     "id_str=]",
                     &e));
        ASSERT_STREQ(e.name, "CTRL-EVENT-CONNECTED");
        ASSERT_STREQ(wpa_event_get(&e, "id_str"), "]");
        wpa_event_done(&e);
}

TEST(wpa_kv_status)
{
        static const char status[] =
            "bssid=01:80:c2:00:00:03\nfreq=0\nssid=wired\nid=0\nmode=station\n"
            "pairwise_cipher=NONE\ngroup_cipher=NONE\nkey_mgmt=NONE\nwpa_state=COMPLETED\n"
            "address=02:00:00:00:aa:01\nuuid=178a6e1b-d99d-5e31-81dd-f371512dc3a7\n";
        WpaKv kv = {};

        ASSERT_OK(wpa_kv_parse(status, strlen(status), &kv));
        ASSERT_STREQ(wpa_kv_get(&kv, "ssid"), "wired");
        ASSERT_STREQ(wpa_kv_get(&kv, "wpa_state"), "COMPLETED");
        ASSERT_STREQ(wpa_kv_get(&kv, "key_mgmt"), "NONE");
        ASSERT_TRUE(wpa_kv_get(&kv, "p2p_device_address") == NULL);
        wpa_kv_done(&kv);

        static const char peer[] = "02:00:00:00:01:00\npri_dev_type=7-0050F204-1\n"
                                   "device_name=TV\nconfig_methods=0x188\n";
        ASSERT_OK(wpa_kv_parse(peer, strlen(peer), &kv));
        ASSERT_STREQ(wpa_kv_get(&kv, ""), "02:00:00:00:01:00");
        ASSERT_STREQ(wpa_kv_get(&kv, "device_name"), "TV");
        wpa_kv_done(&kv);

        ASSERT_EQ(wpa_kv_parse("FAIL\n", 5, &kv), -EIO);
        ASSERT_EQ(wpa_kv_parse("UNKNOWN COMMAND\n", 16, &kv), -EOPNOTSUPP);
        ASSERT_EQ(wpa_kv_parse("a=b\nnoequals\n", 13, &kv), -EBADMSG);
        ASSERT_EQ(wpa_kv_parse("a=\033b\n", 5, &kv), -EBADMSG);
        ASSERT_TRUE(wpa_reply_is_ok("OK\n", 3) && wpa_reply_is_ok("OK", 2));
        ASSERT_TRUE(!wpa_reply_is_ok("OKAY", 4) && !wpa_reply_is_ok("FAIL\n", 5));
}

TEST(wpa_names_from_the_air_cleaned)
{
        /* A P2P peer names itself over the air; wpa_supplicant passes bytes >= 0x20 on. One
         * broken UTF-8 byte made every GetManagedObjects fail (sd-bus refuses it). */
        WpaEvent e = {};
        WpaKv kv = {};
        WpaMessage m;

        ASSERT_OK(ev("P2P-DEVICE-FOUND 02:00:00:00:01:00 p2p_dev_addr=02:00:00:00:01:00 "
                     "pri_dev_type=7-0050F204-1 name='TV\xc3\x28' config_methods=0x188 new=1",
                     &e));
        ASSERT_STREQ(wpa_event_get(&e, "name"), "TV" ROAM_TEXT_REPLACEMENT "(");
        wpa_event_done(&e);
        /* DEL, C1 CSI (U+009B), RLO and a zero-width space are dropped, not the event. */
        ASSERT_OK(ev("P2P-DEVICE-FOUND 02:00:00:00:02:00 name='A\x7f\xc2\x9b"
                     "31mB\xe2\x80\xae\xe2\x80\x8b"
                     "C' new=1",
                     &e));
        ASSERT_STREQ(wpa_event_get(&e, "name"), "A31mBC");
        wpa_event_done(&e);
        /* Positional arguments and the event name too. */
        ASSERT_OK(ev("P2P-X\xff a\xc3", &e));
        ASSERT_STREQ(e.name, "P2P-X" ROAM_TEXT_REPLACEMENT);
        ASSERT_STREQ(wpa_event_arg(&e, 0), "a" ROAM_TEXT_REPLACEMENT);
        wpa_event_done(&e);

        /* Replies: P2P_PEER's device_name, STATUS' ssid. */
        static const char peer[] = "02:00:00:00:01:00\ndevice_name=TV\xc3\x28\n"
                                   "ssid=caf\xe9\xe2\x80\xae\n";
        ASSERT_OK(wpa_kv_parse(peer, strlen(peer), &kv));
        ASSERT_STREQ(wpa_kv_get(&kv, "device_name"), "TV" ROAM_TEXT_REPLACEMENT "(");
        ASSERT_STREQ(wpa_kv_get(&kv, "ssid"), "caf" ROAM_TEXT_REPLACEMENT);
        wpa_kv_done(&kv);

        /* The global interface's IFNAME= must be a clean name. */
        ASSERT_EQ(split("IFNAME=wl\xc3\x28 <3>P2P-X", &m), -EBADMSG);
        ASSERT_OK(split("IFNAME=wlan0 <3>P2P-X", &m));
}

TEST(wpa_words)
{
        static const struct {
                const char *in, *word;
        } t[] = {
            {"7-0050F204-1", "TV"},       {"7-0050F204-4", "display"},
            {"10-0050F204-5", "phone"},   {"3-0050F204-1", "printer"},
            {"3-0050F204-2", "scanner"},  {"1-0050F204-5", "laptop"},
            {"1-0050F204-1", "computer"}, {"8-0050F204-4", "set-top box"},
            {"11-0050F204-2", "speaker"}, {"255-0050F204-1", "device"},
            {"0-00000000-0", "device"},
        };
        const char *w;
        unsigned m;

        for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
                ASSERT_OK(wpa_device_type_word(t[i].in, &w));
                ASSERT_STREQ(w, t[i].word);
        }
        ASSERT_EQ(wpa_device_type_word("7-0050F2-1", &w), -EINVAL);
        ASSERT_EQ(wpa_device_type_word("TV", &w), -EINVAL);
        ASSERT_EQ(wpa_device_type_word("7-0050F204-", &w), -EINVAL);
        ASSERT_EQ(wpa_device_type_word("7-0050F204-1x", &w), -EINVAL);

        ASSERT_OK(wpa_config_methods_parse("0x188", &m));
        ASSERT_EQ(m, WPA_CONFIG_PUSH_BUTTON | WPA_CONFIG_DISPLAY | WPA_CONFIG_KEYPAD);
        ASSERT_OK(wpa_config_methods_parse("0x80", &m));
        ASSERT_EQ(m, WPA_CONFIG_PUSH_BUTTON);
        ASSERT_OK(wpa_config_methods_parse("0x4008", &m));
        ASSERT_EQ(m, WPA_CONFIG_DISPLAY);
        ASSERT_EQ(wpa_config_methods_parse("188", &m), -EINVAL);
        ASSERT_EQ(wpa_config_methods_parse("0x10000", &m), -EINVAL);

        ASSERT_TRUE(wpa_pin_valid("12345670") && wpa_pin_valid("1234"));
        ASSERT_TRUE(!wpa_pin_valid("123456") && !wpa_pin_valid("1234567a") && !wpa_pin_valid("") &&
                    !wpa_pin_valid(NULL));
        ASSERT_TRUE(wpa_mac_valid("02:00:00:00:01:00"));
        ASSERT_TRUE(!wpa_mac_valid("02:00:00:00:01:0") && !wpa_mac_valid("02-00-00-00-01-00") &&
                    !wpa_mac_valid("02:00:00:00:01:0G") && !wpa_mac_valid("02:00:00:00:01:AA"));

        ASSERT_STREQ(wpa_group_removed_reason("REQUESTED"), "requested");
        ASSERT_STREQ(wpa_group_removed_reason("FORMATION_FAILED"), "formation-failed");
        ASSERT_STREQ(wpa_group_removed_reason("IDLE"), "idle");
        ASSERT_STREQ(wpa_group_removed_reason("UNAVAILABLE"), "unavailable");
        ASSERT_STREQ(wpa_group_removed_reason("GO_ENDING_SESSION"), "go-ending-session");
        ASSERT_STREQ(wpa_group_removed_reason("PSK_FAILURE"), "psk-failure");
        ASSERT_STREQ(wpa_group_removed_reason("FREQ_CONFLICT"), "freq-conflict");
        ASSERT_STREQ(wpa_group_removed_reason("SOMETHING"), "unknown");
        ASSERT_STREQ(wpa_group_removed_reason(NULL), "unknown");
}

TEST(p2p_reason_words)
{
        /* Every reason roamd sends has words for people, from the one shared table. */
        for (int i = 0; i < _ROAM_P2P_REASON_MAX; i++) {
                const char *w = roam_p2p_reason_to_string(i), *words = roam_p2p_reason_words(w);
                ASSERT_EQ(roam_p2p_reason_from_string(w), i);
                ASSERT_TRUE(words && *words && strcmp(words, w) != 0);
        }
        ASSERT_STREQ(roam_p2p_reason_words("peer-lost"), "the device went out of reach");
        ASSERT_STREQ(roam_p2p_reason_words("go-ending-session"), "the device ended it");
        ASSERT_TRUE(roam_p2p_reason_words("") == NULL);
        ASSERT_TRUE(roam_p2p_reason_words(NULL) == NULL);
        ASSERT_STREQ(roam_p2p_reason_words("from-a-newer-roamd"), "from-a-newer-roamd");
}

TEST(signal_words)
{
        char buf[64];

        /* The words clients show for SIGNAL_POLL's RSSI: each boundary, and unknown (0). */
        ASSERT_TRUE(roam_signal_word(0) == NULL);
        ASSERT_STREQ(roam_signal_word(-30), "excellent");
        ASSERT_STREQ(roam_signal_word(-50), "excellent");
        ASSERT_STREQ(roam_signal_word(-51), "good");
        ASSERT_STREQ(roam_signal_word(-60), "good");
        ASSERT_STREQ(roam_signal_word(-61), "fair");
        ASSERT_STREQ(roam_signal_word(-70), "fair");
        ASSERT_STREQ(roam_signal_word(-71), "weak");
        ASSERT_STREQ(roam_signal_word(-80), "weak");
        ASSERT_STREQ(roam_signal_word(-81), "very weak");
        roam_signal_text(-58, 866, buf, sizeof(buf));
        ASSERT_STREQ(buf, "good, -58 dBm, 866 Mbit/s");
        roam_signal_text(-90, 0, buf, sizeof(buf));
        ASSERT_STREQ(buf, "very weak, -90 dBm");
        roam_signal_text(0, 54, buf, sizeof(buf));
        ASSERT_STREQ(buf, "");
}
