/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What an app's network monitor hears for each state of its class (docs/apps-hear.md). */
#include "roam-macro.h"
#include "roamd-monitor.h"
#include "roamd-verdict.h"
#include "test.h"

#define C(x) ROAM_CONNECTIVITY_##x

static const struct {
        AppState state;
        int state_verdict;
        bool metered_link;
        bool available;
        RoamConnectivity connectivity;
        bool metered;
} rows[] = {
    {APP_STATE_ONLINE, 0, false, true, C(FULL), false},
    {APP_STATE_ONLINE, 0, true, true, C(FULL), true},
    {APP_STATE_ONLINE_FOR_TASK, 0, true, true, C(FULL), true},
    {APP_STATE_LAN_ONLY, 0, false, true, C(LIMITED), false},
    {APP_STATE_LAN_THROUGH_VPN, 0, false, true, C(LIMITED), false},
    {APP_STATE_PORTAL_LOGIN, 0, false, true, C(PORTAL), false},
    {APP_STATE_VIA_NOT_ONLINE, VERDICT_PORTAL, false, true, C(PORTAL), false},
    {APP_STATE_VIA_NOT_ONLINE, VERDICT_LOCAL, true, true, C(LIMITED), true},
    {APP_STATE_VIA_NOT_ONLINE, VERDICT_PARTIAL, false, true, C(LIMITED), false},
    {APP_STATE_VIA_NOT_ONLINE, VERDICT_CHECKING, false, true, C(LIMITED), false},
    {APP_STATE_VIA_NOT_ONLINE, VERDICT_OFFLINE, false, true, C(LIMITED), false},
    /* nothing of the app routes: never metered, whatever the link */
    {APP_STATE_BLOCKED_DENIED, 0, true, false, C(LOCAL), false},
    {APP_STATE_BLOCKED_VPN_DOWN, 0, true, false, C(LOCAL), false},
    {APP_STATE_BLOCKED_NO_LINK, 0, false, false, C(LOCAL), false},
    {APP_STATE_BLOCKED_NO_PORTAL, 0, false, false, C(LOCAL), false},
    {APP_STATE_OFFLINE_NO_LINK, 0, true, false, C(LOCAL), false},
};

TEST(monitor_answer_table)
{
        bool seen[_APP_STATE_MAX] = {};

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                AppView v = {.state = rows[i].state, .state_verdict = rows[i].state_verdict};
                MonitorAnswer a;

                monitor_answer(&v, rows[i].metered_link, &a);
                ASSERT_EQ(a.available, rows[i].available);
                ASSERT_EQ(a.connectivity, rows[i].connectivity);
                ASSERT_EQ(a.metered, rows[i].metered);
                seen[rows[i].state] = true;
        }
        /* every state has a row */
        for (int s = 0; s < _APP_STATE_MAX; s++)
                ASSERT_TRUE(seen[s]);
}

TEST(monitor_answer_without_a_class)
{
        MonitorAnswer a = {.available = true, .metered = true};

        monitor_answer(NULL, true, &a);
        ASSERT_EQ(a.available, false);
        ASSERT_EQ(a.connectivity, ROAM_CONNECTIVITY_LOCAL);
        ASSERT_EQ(a.metered, false);
}

TEST(connectivity_words)
{
        static const char *const words[] = {"local", "limited", "portal", "full"};

        ASSERT_EQ(ELEMENTSOF(words), _ROAM_CONNECTIVITY_MAX);
        for (int i = 0; i < _ROAM_CONNECTIVITY_MAX; i++) {
                ASSERT_STREQ(roam_connectivity_to_string(i), words[i]);
                ASSERT_EQ(roam_connectivity_from_string(words[i]), i);
        }
        ASSERT_TRUE(roam_connectivity_to_string(_ROAM_CONNECTIVITY_MAX) == NULL);
        ASSERT_EQ(roam_connectivity_from_string("Full"), _ROAM_CONNECTIVITY_INVALID);
}
