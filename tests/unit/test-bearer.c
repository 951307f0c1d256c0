/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>

#include "roamd-bearer.h"
#include "test.h"

/* One row per fixture in tests/unit/sysfs: what sysfs (and rtnetlink's kind) say, and the
 * bearer roamd must conclude. */
static const struct {
        const char *ifname;
        const char *kind;
        int initial_netns;
        const char *expect; /* NULL: ignored (loopback) */
} cases[] = {
    {"eno1", NULL, 1, "ethernet"},
    {"wlan0", NULL, 1, "wifi"},
    {"wlp2s0-nodevtype", NULL, 1, "wifi"},
    {"p2p-wlan0-0", NULL, 1, "wifi-direct"},
    {"wwan0", NULL, 1, "cellular"},
    {"wwp0s20u4i6", NULL, 1, "cellular"},
    {"rmnet-rawip", "rmnet", 1, "cellular"},
    {"bnep0", NULL, 1, "bluetooth"},
    {"lowpan0", "lowpan", 1, "lowpan"},
    {"wpan0", NULL, 1, "lowpan"},
    {"tun0", "tun", 1, "vpn"},
    {"wg0", "wireguard", 1, "vpn"},
    {"ppp0", "ppp", 1, "vpn"},
    {"sit0", "sit", 1, "vpn"},
    {"br0", "bridge", 1, "virtual"},
    {"docker0", "bridge", 1, "virtual"},
    {"virbr0", NULL, 1, "virtual"},
    {"dummy0", "dummy", 1, "virtual"},
    {"veth1a2b", "veth", 1, "virtual"},
    {"veth1a2b", "veth", 0, "ethernet"},
    {"macvlan0", "macvlan", 1, "virtual"},
    {"macvlan0", "macvlan", 0, "ethernet"},
    {"lo", NULL, 1, NULL},
};

TEST(bearer_fixtures)
{
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char dir[PATH_MAX];
                BearerInput in = {
                    .sysfs_dir = dir,
                    .ifname = cases[i].ifname,
                    .kind = cases[i].kind,
                    .initial_netns = cases[i].initial_netns,
                };
                Bearer b = _BEARER_INVALID;
                int r;

                snprintf(dir, sizeof(dir), "%s/sysfs/%s", test_fixture_dir, cases[i].ifname);
                r = bearer_classify(&in, &b);
                if (!cases[i].expect) {
                        ASSERT_EQ(r, -EOPNOTSUPP);
                        continue;
                }
                ASSERT_OK(r);
                if (strcmp(bearer_to_string(b), cases[i].expect) != 0)
                        TEST_FAIL("%s (kind %s, initial netns %d): got %s, want %s",
                                  cases[i].ifname, cases[i].kind ? cases[i].kind : "-",
                                  cases[i].initial_netns, bearer_to_string(b), cases[i].expect);
        }
}

TEST(bearer_missing_sysfs_is_virtual)
{
        BearerInput in = {.sysfs_dir = "/nonexistent/x", .ifname = "x"};
        Bearer b;

        ASSERT_OK(bearer_classify(&in, &b));
        ASSERT_EQ(b, BEARER_VIRTUAL);
}

TEST(bearer_strings_round_trip)
{
        for (int i = 0; i < _BEARER_MAX; i++)
                ASSERT_EQ(bearer_from_string(bearer_to_string((Bearer)i)), i);
        ASSERT_EQ(bearer_from_string("modem"), _BEARER_INVALID);
        ASSERT_EQ(bearer_from_string(NULL), _BEARER_INVALID);
        ASSERT_TRUE(bearer_to_string(_BEARER_MAX) == NULL);
}

TEST(bearer_preference_order)
{
        ASSERT_TRUE(bearer_preference(BEARER_ETHERNET) < bearer_preference(BEARER_WIFI));
        ASSERT_TRUE(bearer_preference(BEARER_WIFI) < bearer_preference(BEARER_CELLULAR));
        ASSERT_TRUE(bearer_preference(BEARER_VIRTUAL) < 0);
        ASSERT_TRUE(bearer_preference(BEARER_VPN) < 0);
}
