/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roam-words.h"
#include "roamd-class.h"
#include "roamd-verdict.h"
#include "test.h"

/* The world of most rows: wifi0 (index 2, online, slot 1, metric 600) holds main's default
 * routes, cell0 (3, local, slot 2, metric 700), vpn0 (4, slot 3) carries IPv4 only. */
#define VPN_SLOT 127
#define ON       VERDICT_ONLINE
#define LOCAL    VERDICT_LOCAL
#define OFF      VERDICT_OFFLINE
static const ClassLink LINKS[] = {
    {2, BEARER_WIFI, {ON, ON}, 1, {600, 600}},
    {3, BEARER_CELLULAR, {LOCAL, LOCAL}, 2, {700, 700}},
    {4, BEARER_VPN, {ON, OFF}, 3, {UINT32_MAX, UINT32_MAX}},
};
/* cell0's rules not installed yet: no slot */
static const ClassLink LINKS_CELL_NOT_READY[] = {
    {2, BEARER_WIFI, {ON, ON}, 1, {600, 600}},
    {3, BEARER_CELLULAR, {LOCAL, LOCAL}, 0, {700, 700}},
};
/* main's default routes lead into the VPN */
static const ClassLink LINKS_EQUAL[] = {
    {2, BEARER_WIFI, {ON, ON}, 1, {600, 600}},
    {3, BEARER_ETHERNET, {ON, ON}, 2, {100, 100}},
    {4, BEARER_VPN, {ON, ON}, 3, {50, 50}},
};
/* issue 32: eth0 (5) behind a silent gateway holds main's default routes (metric 100) and is
 * offline; wifi0 is online, cell0 local */
static const ClassLink LINKS_SILENT[] = {
    {2, BEARER_WIFI, {ON, ON}, 1, {600, 600}},
    {3, BEARER_CELLULAR, {LOCAL, LOCAL}, 2, {700, 700}},
    {5, BEARER_ETHERNET, {OFF, OFF}, 4, {100, 100}},
};

#define W(l, m4, m6, vpn, c4, c6)                                                                  \
        {                                                                                          \
                l, ELEMENTSOF(l), {m4, m6}, vpn, {c4, c6}, VPN_SLOT, 0, true                       \
        }
static const ClassWorld HOME = W(LINKS, 2, 2, 4, true, false);
static const ClassWorld NO_VPN = W(LINKS, 2, 2, 0, false, false);
static const ClassWorld NOT_READY = W(LINKS_CELL_NOT_READY, 2, 2, 0, false, false);
static const ClassWorld NO_DEFAULT = W(LINKS, 0, 0, 0, false, false);
static const ClassWorld INTO_VPN = W(LINKS_EQUAL, 4, 4, 4, true, true);
static const ClassWorld SILENT = W(LINKS_SILENT, 5, 5, 0, false, false);

#define P(acc, b, v, h)                                                                            \
        {                                                                                          \
                APP_KEY_ALL, APP_ACCESS_##acc, b, APP_VPN_##v, APP_HANDOVER_##h, 0, 0, 0           \
        }
#define B(x) (1u << BEARER_##x)

static const struct {
        const char *what;
        AppPolicy key;
        bool system;
        const ClassWorld *world;
        NftClassKind kind;
        int route4, route6;
        uint32_t slot4, slot6;
        bool restricted, vpn_required, sticky;
        AppState state;
} rows[] = {
    {"allow follows main", P(ALLOW, 0, ANY, STICKY), false, &HOME, NFT_CLASS_ROUTE, 2, 2, 1, 1,
     false, false, true, APP_STATE_ONLINE},
    {"handover move", P(ALLOW, 0, ANY, MOVE), false, &HOME, NFT_CLASS_ROUTE, 2, 2, 1, 1, false,
     false, false, APP_STATE_ONLINE},
    {"deny", P(DENY, 0, ANY, STICKY), false, &HOME, NFT_CLASS_REJECT, 0, 0, 0, 0, false, false,
     false, APP_STATE_BLOCKED_DENIED},
    {"lan", P(LAN, 0, ANY, STICKY), false, &HOME, NFT_CLASS_LAN, 0, 0, 0, 0, false, false, false,
     APP_STATE_LAN_ONLY},
    {"lan + vpn required: through the VPN (IPv4 only)", P(LAN, 0, REQUIRED, STICKY), false, &HOME,
     NFT_CLASS_LAN, 4, 0, VPN_SLOT, 0, false, true, false, APP_STATE_LAN_THROUGH_VPN},
    {"lan + vpn required, no VPN: blocked", P(LAN, 0, REQUIRED, STICKY), false, &NO_VPN,
     NFT_CLASS_LAN, 0, 0, 0, 0, false, true, false, APP_STATE_BLOCKED_VPN_DOWN},
    {"vpn required", P(ALLOW, 0, REQUIRED, STICKY), false, &HOME, NFT_CLASS_ROUTE, 4, 0, VPN_SLOT,
     0, false, true, true, APP_STATE_ONLINE},
    {"vpn required, no VPN", P(ALLOW, 0, REQUIRED, STICKY), false, &NO_VPN, NFT_CLASS_ROUTE, 0, 0,
     0, 0, false, true, true, APP_STATE_BLOCKED_VPN_DOWN},
    {"cellular only: cell0 is local, never online", P(ALLOW, B(CELLULAR), ANY, STICKY), false,
     &HOME, NFT_CLASS_ROUTE, 3, 3, 2, 2, true, false, true, APP_STATE_VIA_NOT_ONLINE},
    {"cellular only, its rules not in place: blocked, never main",
     P(ALLOW, B(CELLULAR), ANY, STICKY), false, &NOT_READY, NFT_CLASS_ROUTE, 0, 0, 0, 0, true,
     false, true, APP_STATE_BLOCKED_NO_LINK},
    {"no default: the best verdict wins", P(ALLOW, B(WIFI) | B(CELLULAR), ANY, MOVE), false,
     &NO_DEFAULT, NFT_CLASS_ROUTE, 2, 2, 1, 1, true, false, false, APP_STATE_ONLINE},
    {"unrestricted without a default: follows main", P(ALLOW, 0, ANY, STICKY), false, &NO_DEFAULT,
     NFT_CLASS_ROUTE, 0, 0, 0, 0, false, false, true, APP_STATE_BLOCKED_NO_LINK},
    {"vpn forbidden, main into the VPN: lowest metric of the rest", P(ALLOW, 0, FORBIDDEN, STICKY),
     false, &INTO_VPN, NFT_CLASS_ROUTE, 3, 3, 2, 2, false, false, true, APP_STATE_ONLINE},
    {"system: main's routes", P(ALLOW, 0, ANY, STICKY), true, &HOME, NFT_CLASS_ACCEPT, 2, 2, 0, 0,
     false, false, false, APP_STATE_ONLINE},
    {"main's link offline: steered to the online one", P(ALLOW, 0, ANY, STICKY), false, &SILENT,
     NFT_CLASS_ROUTE, 2, 2, 1, 1, false, false, true, APP_STATE_ONLINE},
    {"bearer subset: the online allowed link, not main's",
     P(ALLOW, B(WIFI) | B(ETHERNET), ANY, MOVE), false, &SILENT, NFT_CLASS_ROUTE, 2, 2, 1, 1, true,
     false, false, APP_STATE_ONLINE},
    {"ethernet only: nothing better allowed, and says so", P(ALLOW, B(ETHERNET), ANY, STICKY),
     false, &SILENT, NFT_CLASS_ROUTE, 5, 5, 4, 4, true, false, true, APP_STATE_VIA_NOT_ONLINE},
    {"vpn forbidden steers too", P(ALLOW, 0, FORBIDDEN, STICKY), false, &SILENT, NFT_CLASS_ROUTE, 2,
     2, 1, 1, false, false, true, APP_STATE_ONLINE},
    {"system: main's routes, never steered, and says so", P(ALLOW, 0, ANY, STICKY), true, &SILENT,
     NFT_CLASS_ACCEPT, 5, 5, 0, 0, false, false, false, APP_STATE_VIA_NOT_ONLINE},
    {"issue 39: system without main's default routes (no link up yet): offline, not online",
     P(ALLOW, 0, ANY, STICKY), true, &NO_DEFAULT, NFT_CLASS_ACCEPT, 0, 0, 0, 0, false, false, false,
     APP_STATE_OFFLINE_NO_LINK},
    {"system lan never goes into the VPN", P(LAN, 0, REQUIRED, STICKY), true, &HOME, NFT_CLASS_LAN,
     0, 0, 0, 0, false, false, false, APP_STATE_LAN_ONLY},
};

TEST(class_table)
{
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                ClassResult r;

                class_compile(&rows[i].key, rows[i].system, rows[i].world, &r);
                if (r.spec.kind != rows[i].kind || r.route[0] != rows[i].route4 ||
                    r.route[1] != rows[i].route6 || r.spec.fam[0].slot != rows[i].slot4 ||
                    r.spec.fam[1].slot != rows[i].slot6 ||
                    r.spec.fam[0].restricted != rows[i].restricted ||
                    r.spec.vpn_required != rows[i].vpn_required ||
                    r.spec.sticky != rows[i].sticky || r.state != rows[i].state)
                        TEST_FAIL("%s: kind %d routes %d/%d slots %u/%u restricted %d vpn %d "
                                  "sticky %d state '%s'",
                                  rows[i].what, r.spec.kind, r.route[0], r.route[1],
                                  r.spec.fam[0].slot, r.spec.fam[1].slot, r.spec.fam[0].restricted,
                                  r.spec.vpn_required, r.spec.sticky, app_state_to_string(r.state));
        }
}

TEST(class_marks_only_what_main_sends_out_of_its_link)
{
        AppPolicy key = P(ALLOW, 0, ANY, STICKY);
        ClassResult r;

        class_compile(&key, false, &HOME, &r);
        ASSERT_TRUE(r.spec.fam[0].slot_oif == 2 && r.spec.fam[0].main_oif == 2);
        ASSERT_TRUE(!r.spec.fam[0].around_vpn);
        key.vpn = APP_VPN_FORBIDDEN;
        class_compile(&key, false, &HOME, &r);
        ASSERT_TRUE(r.spec.fam[0].around_vpn && r.spec.fam[1].around_vpn);
}

TEST(class_local_dns_only_where_the_class_reaches_the_internet)
{
        /* A stub on loopback forwards by its own routes: refused for lan and vpn=required
         * (VPN up or down), kept for the rest. */
        static const struct {
                AppPolicy key;
                bool system;
                const ClassWorld *world;
                bool refused;
        } t[] = {
            {P(ALLOW, 0, ANY, STICKY), false, &HOME, false},
            {P(ALLOW, B(CELLULAR), ANY, STICKY), false, &HOME, false},
            {P(ALLOW, 0, FORBIDDEN, STICKY), false, &HOME, false},
            {P(LAN, 0, ANY, STICKY), false, &HOME, true},
            {P(LAN, 0, REQUIRED, STICKY), false, &HOME, true},
            {P(ALLOW, 0, REQUIRED, STICKY), false, &HOME, true},
            {P(ALLOW, 0, REQUIRED, MOVE), false, &NO_VPN, true},
            {P(ALLOW, 0, ANY, STICKY), true, &HOME, false},
            {P(LAN, 0, ANY, STICKY), true, &HOME, true},
        };
        for (size_t i = 0; i < ELEMENTSOF(t); i++) {
                ClassResult r;
                class_compile(&t[i].key, t[i].system, t[i].world, &r);
                if (r.spec.local_dns_refused != t[i].refused)
                        TEST_FAIL("row %zu: local DNS refused %d", i, r.spec.local_dns_refused);
        }
}

TEST(class_portal_login_reaches_the_captive_link_only)
{
        AppPolicy key = P(ALLOW, 0, ANY, STICKY);
        ClassWorld w = HOME;
        ClassResult r;

        /* No approved portal: refused, whatever its policy says. */
        class_compile_portal_login(&key, &w, &r);
        ASSERT_TRUE(r.spec.kind == NFT_CLASS_REJECT && r.state == APP_STATE_BLOCKED_NO_PORTAL);
        /* cell0 (not main's default, a worse verdict) is behind the portal: every packet of
         * both families to its slot, even though wifi0 holds the default routes and a VPN is
         * up. */
        w.portal_link = 3;
        class_compile_portal_login(&key, &w, &r);
        ASSERT_TRUE(r.spec.kind == NFT_CLASS_ROUTE && r.state == APP_STATE_PORTAL_LOGIN);
        for (int f = 0; f < 2; f++) {
                ASSERT_TRUE(r.spec.fam[f].restricted && r.spec.fam[f].slot == 2);
                ASSERT_TRUE(r.spec.fam[f].slot_oif == 3 && r.route[f] == 3);
        }
        ASSERT_TRUE(!r.spec.vpn_required && !r.spec.sticky);
        /* Its own deny still wins. */
        key.access = APP_ACCESS_DENY;
        class_compile_portal_login(&key, &w, &r);
        ASSERT_TRUE(r.spec.kind == NFT_CLASS_REJECT && r.state == APP_STATE_BLOCKED_DENIED);
        /* A portal link without a routing slot yet: refused, never routed by main. */
        key.access = APP_ACCESS_ALLOW;
        w = NOT_READY;
        w.portal_link = 3;
        class_compile_portal_login(&key, &w, &r);
        ASSERT_TRUE(r.spec.kind == NFT_CLASS_REJECT && r.state == APP_STATE_BLOCKED_NO_PORTAL);
}

TEST(app_state_strings)
{
        for (int s = 0; s < _APP_STATE_MAX; s++) {
                ASSERT_TRUE(app_state_to_string((AppState)s) != NULL);
                ASSERT_TRUE(app_state_from_string(app_state_to_string((AppState)s)) == s);
        }
        ASSERT_TRUE(app_state_from_string("sleeping") == _APP_STATE_INVALID);
        ASSERT_TRUE(app_state_to_string(_APP_STATE_MAX) == NULL);
}

TEST(class_steers_main_traffic_to_an_online_link)
{
        AppPolicy key = P(ALLOW, 0, ANY, STICKY);
        ClassLink links[ELEMENTSOF(LINKS_SILENT)];
        ClassWorld w = SILENT;
        ClassResult r;

        /* Packets main sends out of eth0 are marked for wifi0's slot; eth0's own LAN stays. */
        class_compile(&key, false, &w, &r);
        for (int f = 0; f < 2; f++) {
                ASSERT_TRUE(r.spec.fam[f].main_oif == 5 && r.spec.fam[f].slot_oif == 2);
                ASSERT_TRUE(r.spec.fam[f].keep_lan && !r.spec.fam[f].restricted);
        }
        /* Opted out: main's link is kept, and the state names it and its verdict. */
        w.prefer_online = false;
        class_compile(&key, false, &w, &r);
        ASSERT_TRUE(r.route[0] == 5 && r.route[1] == 5 && r.spec.fam[0].slot == 4);
        ASSERT_TRUE(!r.spec.fam[0].keep_lan);
        ASSERT_TRUE(r.state == APP_STATE_VIA_NOT_ONLINE && r.state_link == 5 &&
                    r.state_verdict == VERDICT_OFFLINE);
        /* Still being checked: kept (no flapping while a new link's round runs). */
        memcpy(links, LINKS_SILENT, sizeof(links));
        links[2].verdict[0] = links[2].verdict[1] = VERDICT_CHECKING;
        w = SILENT;
        w.links = links;
        class_compile(&key, false, &w, &r);
        ASSERT_TRUE(r.route[0] == 5 && r.state == APP_STATE_VIA_NOT_ONLINE &&
                    r.state_verdict == VERDICT_CHECKING);
        /* Partial (plain HTTP gets through; curl --interface eth0 must keep working): kept.
         * Local and a portal reach nothing beyond the link: steered. */
        links[2].verdict[0] = links[2].verdict[1] = VERDICT_PARTIAL;
        class_compile(&key, false, &w, &r);
        ASSERT_TRUE(r.route[0] == 5 && r.route[1] == 5 && r.state == APP_STATE_VIA_NOT_ONLINE &&
                    r.state_verdict == VERDICT_PARTIAL);
        for (int v = VERDICT_LOCAL; v <= VERDICT_PORTAL; v++) {
                links[2].verdict[0] = links[2].verdict[1] = v;
                class_compile(&key, false, &w, &r);
                ASSERT_TRUE(r.route[0] == 2 && r.route[1] == 2 && r.state == APP_STATE_ONLINE);
        }
        links[2].verdict[0] = links[2].verdict[1] = VERDICT_CHECKING;
        /* No online link anywhere: main's link stays; per family: IPv6 online on eth0 keeps
         * IPv6 there while IPv4 goes to wifi0, and the app is online. */
        links[2].verdict[0] = VERDICT_OFFLINE;
        links[2].verdict[1] = VERDICT_ONLINE;
        class_compile(&key, false, &w, &r);
        ASSERT_TRUE(r.route[0] == 2 && r.route[1] == 5 && r.state == APP_STATE_ONLINE);
        links[0].verdict[0] = VERDICT_PORTAL;
        class_compile(&key, false, &w, &r);
        ASSERT_TRUE(r.route[0] == 5 && r.route[1] == 5 && r.state == APP_STATE_ONLINE);
        /* The cellular-only app on a local cell0 names it. */
        key = (AppPolicy)P(ALLOW, B(CELLULAR), ANY, STICKY);
        class_compile(&key, false, &HOME, &r);
        ASSERT_TRUE(r.state == APP_STATE_VIA_NOT_ONLINE && r.state_link == 3 &&
                    r.state_verdict == VERDICT_LOCAL);
}

TEST(app_state_via_words)
{
        _cleanup_free_ char *off = roam_app_state_via(ROAM_VERDICT_OFFLINE, "eth0"),
                            *local = roam_app_state_via(ROAM_VERDICT_LOCAL, "cell0"),
                            *on = roam_app_state_via(ROAM_VERDICT_ONLINE, "wifi0");

        ASSERT_STREQ(off, "offline: eth0 does not reach the internet");
        ASSERT_STREQ(local, "local via cell0: no internet");
        ASSERT_STREQ(on, "online");
        for (int v = 0; v < _ROAM_VERDICT_MAX; v++) {
                _cleanup_free_ char *t = roam_app_state_via((RoamVerdict)v, "x0");
                ASSERT_TRUE(t && (v == ROAM_VERDICT_ONLINE) == streq(t, "online"));
        }
        ASSERT_TRUE(roam_app_state_via(_ROAM_VERDICT_MAX, "x0") == NULL);
}
