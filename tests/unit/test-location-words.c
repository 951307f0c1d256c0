/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "roam-words.h"
#include "test.h"

/* The firewall's words (shared/roam-words.c): roamd's string tables and the client's words. */

TEST(location_table_round_trips)
{
        for (int i = 0; i < _ROAM_LOCATION_MAX; i++)
                ASSERT_EQ(roam_location_from_string(roam_location_to_string(i)), i);
        for (int i = 0; i < _ROAM_LOCATION_SOURCE_MAX; i++)
                ASSERT_EQ(roam_location_source_from_string(roam_location_source_to_string(i)), i);
        for (int i = 0; i < _ROAM_FW_DIRECTION_MAX; i++)
                ASSERT_EQ(roam_fw_direction_from_string(roam_fw_direction_to_string(i)), i);
        for (int i = 0; i < _ROAM_FW_ACTION_MAX; i++)
                ASSERT_EQ(roam_fw_action_from_string(roam_fw_action_to_string(i)), i);
        ASSERT_STREQ(roam_location_to_string(ROAM_LOCATION_UNTRUSTED), "untrusted");
        ASSERT_STREQ(roam_location_source_to_string(ROAM_LOCATION_SOURCE_DEFAULT), "default");
        ASSERT_STREQ(roam_fw_action_to_string(ROAM_FW_ACTION_REJECT), "reject");
        ASSERT_EQ(roam_location_from_string("cafe"), -EINVAL);
        ASSERT_EQ(roam_location_from_string(""), -EINVAL);
        ASSERT_EQ(roam_fw_direction_from_string("forward"), -EINVAL);
}

TEST(location_words)
{
        ASSERT_STREQ(roam_location_words("home"), "a network you trust, like your own");
        ASSERT_STREQ(roam_location_words("untrusted"), "not trusted at all, the strictest rules");
        /* A location networks.d names, and no network at all. */
        ASSERT_STREQ(roam_location_words("cafe"), "a location that networks.d defines");
        ASSERT_STREQ(roam_location_words(""), "no network");
        ASSERT_STREQ(roam_location_lets_in("work"), "DHCPv6 (udp 546)");
        ASSERT_STREQ(roam_location_lets_in("cafe"), "what firewall.d opens there");
        ASSERT_STREQ(roam_location_lets_in("untrusted"), "no service of its own");
        ASSERT_STREQ(roam_location_source_words("user"), "set by you");
        ASSERT_STREQ(roam_location_source_words("later"), "later"); /* a newer roamd's word */
        ASSERT_STREQ(roam_fw_direction_words("in"), "inbound");
        ASSERT_STREQ(roam_fw_action_words("drop"), "dropped silently");
        ASSERT_STREQ(roam_fw_action_words("log"), "log");
}

/* The global state's words (issue 41): why the state is not the best link's. */
TEST(state_reason_words)
{
        char *s;

        s = roam_state_reason_default_route("wifi0", ROAM_VERDICT_ONLINE, "eth0",
                                            ROAM_VERDICT_OFFLINE);
        ASSERT_STREQ(s, "wifi0 is online, but the default route goes through eth0, which "
                        "reaches nothing");
        free(s);
        s = roam_state_reason_follows("eth0", ROAM_VERDICT_PORTAL, "wifi0");
        ASSERT_STREQ(s, "the default route goes through eth0, which is behind a captive portal: "
                        "apps go through wifi0 instead");
        free(s);
        ASSERT_TRUE(!roam_state_reason_follows("eth0", _ROAM_VERDICT_MAX, "wifi0"));
        s = roam_state_sentence_reason("offline", "Offline: eth0, nothing answers",
                                       "wifi0 is online, but ...");
        ASSERT_STREQ(s, "Offline: wifi0 is online, but ...");
        free(s);
        s = roam_state_sentence_reason("online", "Online via wifi0 (wifi)", "the default ...");
        ASSERT_STREQ(s, "Online via wifi0 (wifi); the default ...");
        free(s);
        s = roam_state_sentence_reason("local", "Local network only on cell0: no Internet", "");
        ASSERT_STREQ(s, "Local network only on cell0: no Internet");
        free(s);
}
