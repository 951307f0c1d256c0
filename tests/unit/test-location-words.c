/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
