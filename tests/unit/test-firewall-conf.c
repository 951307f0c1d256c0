/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-firewall-conf.h"
#include "roamd-netid.h"
#include "test.h"

static void quiet(int level, const char *msg, void *userdata)
{
}

static int profile(FwModel *m, const char *text, char **error)
{
        ASSERT_OK(fw_model_init(m));
        int r = fw_profile_parse("/etc/roam/firewall.d/t.conf", text, strlen(text), m, error);
        if (r >= 0)
                r = fw_model_check(m, error);
        return r;
}

TEST(netid_compose)
{
        char buf[NETID_MAX];
        NetIdFacts f = {};

        f.fact[NETID_INTERFACE] = "wifi0";
        f.fact[NETID_BEARER] = "wifi";
        ASSERT_STREQ(netid_compose(&f, buf), ""); /* no carrier or address: no network */
        f.has_network = true;
        ASSERT_STREQ(netid_compose(&f, buf), "wifi:if=wifi0");
        f.fact[NETID_DHCP_SERVER] = "192.0.2.1";
        ASSERT_STREQ(netid_compose(&f, buf), "wifi:dhcp=192.0.2.1");
        f.gateway_pending = true; /* wait for the gateway's MAC: one id per network */
        ASSERT_STREQ(netid_compose(&f, buf), "");
        f.fact[NETID_GATEWAY_MAC] = "02:00:00:00:01:01";
        ASSERT_STREQ(netid_compose(&f, buf), "wifi:gw=02:00:00:00:01:01");
        f.fact[NETID_SSID] = "Home Net";
        f.fact[NETID_BSSID] = "02:00:00:00:aa:01";
        ASSERT_STREQ(netid_compose(&f, buf), "wifi:Home Net:02:00:00:00:aa:01");
        /* the lease's domain or our address never change the id */
        f.fact[NETID_DOMAIN] = "home.test";
        ASSERT_STREQ(netid_compose(&f, buf), "wifi:Home Net:02:00:00:00:aa:01");
        f.fact[NETID_SSID] = "a\nb\\";
        f.fact[NETID_BSSID] = NULL;
        ASSERT_STREQ(netid_compose(&f, buf), "wifi:a\\x0ab\\x5c");
        ASSERT_STREQ(netid_fact_to_string(NETID_GATEWAY_MAC), "gateway-mac");
        ASSERT_EQ(netid_fact_from_string("dhcp-server"), NETID_DHCP_SERVER);
        ASSERT_EQ(netid_fact_from_string("nope"), _NETID_FACT_INVALID);
}

TEST(networks_match_and_reason)
{
        static const char text[] = "# home\n"
                                   "[Network]\n"
                                   "Location=home\n"
                                   "SSID=HomeNet\n"
                                   "GatewayMAC=02:00:00:00:01:01\n"
                                   "\n"
                                   "[Network]\n"
                                   "Location=lab\n"
                                   "Domain=LAB.test\n";
        _cleanup_free_ char *error = NULL, *reason = NULL;
        NetIdFacts f = {.has_network = true};
        FwModel m;

        log_set_sink(quiet, NULL);
        ASSERT_OK(fw_model_init(&m));
        ASSERT_OK(fw_networks_parse("/n/home.conf", text, strlen(text), &m, &error));
        ASSERT_TRUE(error == NULL);
        ASSERT_TRUE(fw_model_has_location(&m, "lab"));
        ASSERT_TRUE(fw_model_has_location(&m, "untrusted"));
        f.fact[NETID_SSID] = "HomeNet";
        ASSERT_TRUE(fw_model_match(&m, &f, NULL) == NULL); /* every fact must match */
        f.fact[NETID_GATEWAY_MAC] = "02:00:00:00:01:01";
        const FwNetwork *n = fw_model_match(&m, &f, &reason);
        ASSERT_TRUE(n != NULL);
        ASSERT_STREQ(n->location, "home");
        ASSERT_STREQ(
            reason,
            "ssid \"HomeNet\" and gateway-mac \"02:00:00:00:01:01\" matched /n/home.conf:2");
        f = (NetIdFacts){.has_network = true};
        f.fact[NETID_DOMAIN] = "lab.test";
        n = fw_model_match(&m, &f, NULL);
        ASSERT_TRUE(n != NULL);
        ASSERT_STREQ(n->location, "lab");
        fw_model_done(&m);
}

TEST(networks_errors)
{
        static const struct {
                const char *text, *error;
        } cases[] = {
            {"[Network]\nSSID=x\n", "/n/t.conf:1: [Network] needs Location=."},
            {"[Network]\nLocation=home\n", "/n/t.conf:1: [Network] needs at least one of"},
            {"[Network]\nLocation=Home Sweet\nSSID=x\n", "/n/t.conf:2: Location=Home Sweet: a"},
            {"[Network]\nLocation=home\nGatewayMAC=02:00\n",
             "/n/t.conf:3: GatewayMAC=02:00 is not"},
            {"[Network]\nLocation=home\nDHCPServer=300.1.1.1\n", "/n/t.conf:3: DHCPServer="},
            {"[Network]\nLocation=home\nColour=blue\n", "/n/t.conf:3: Unknown key Colour="},
            {"[Networks]\n", "/n/t.conf:1: Unknown section [Networks]"},
            {"Location=home\n", "/n/t.conf:1: Assignment Location= outside of any section."},
        };
        log_set_sink(quiet, NULL);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *error = NULL;
                FwModel m;
                ASSERT_OK(fw_model_init(&m));
                ASSERT_EQ(fw_networks_parse("/n/t.conf", cases[i].text, strlen(cases[i].text), &m,
                                            &error),
                          -EINVAL);
                ASSERT_TRUE(error != NULL);
                if (strncmp(error, cases[i].error, strlen(cases[i].error)) != 0)
                        TEST_FAIL("case %zu: got \"%s\"", i, error);
                fw_model_done(&m);
        }
}

TEST(profile_rules_and_check)
{
        static const char text[] = "[Profile]\n"
                                   "Location=home work\n"
                                   "[Rule]\n"
                                   "Protocol=tcp\n"
                                   "Port=22000\n"
                                   "App=org.syncthing\n"
                                   "[Rule]\n"
                                   "Action=reject\n"
                                   "Protocol=udp\n"
                                   "Port=5000-5010\n"
                                   "Address=192.0.2.0/26\n"
                                   "[Rule]\n"
                                   "Direction=out\n"
                                   "Action=drop\n"
                                   "Protocol=tcp\n"
                                   "Port=25\n";
        _cleanup_free_ char *error = NULL, *d0 = NULL, *d1 = NULL;
        FwModel m;
        FwCheck c;

        log_set_sink(quiet, NULL);
        ASSERT_OK(profile(&m, text, &error));
        ASSERT_EQ(m.n_rules, 3u);
        ASSERT_STREQ(m.rules[0].id, "t.conf:3");
        ASSERT_STREQ(m.rules[0].source, "/etc/roam/firewall.d/t.conf:3");
        ASSERT_EQ(m.rules[1].family, AF_INET);
        d0 = fw_rule_describe(&m.rules[0]);
        d1 = fw_rule_describe(&m.rules[1]);
        ASSERT_STREQ(d0, "tcp 22000 app org.syncthing");
        ASSERT_STREQ(d1, "udp 5000-5010 from 192.0.2.0/26");

        /* the port is open to the app's sockets only */
        ASSERT_OK(fw_model_check_inbound(&m, "home", "wifi0", BEARER_WIFI, true, FW_PROTO_TCP,
                                         22000, "org.syncthing", &c));
        ASSERT_TRUE(c.accepted && c.rule == &m.rules[0]);
        ASSERT_OK(fw_model_check_inbound(&m, "home", "wifi0", BEARER_WIFI, true, FW_PROTO_TCP,
                                         22000, "", &c));
        ASSERT_TRUE(!c.accepted && c.rule == NULL && c.action == FW_ACTION_REJECT);
        ASSERT_STREQ(c.builtin, "built-in:default");
        /* public has no such rule, and drops */
        ASSERT_OK(fw_model_check_inbound(&m, "public", "wifi0", BEARER_WIFI, true, FW_PROTO_TCP,
                                         22000, "org.syncthing", &c));
        ASSERT_TRUE(!c.accepted && c.action == FW_ACTION_DROP);
        /* ssh: the explicit default decides */
        ASSERT_OK(fw_model_check_inbound(&m, "untrusted", "eth0", BEARER_ETHERNET, true,
                                         FW_PROTO_TCP, 22, "", &c));
        ASSERT_TRUE(c.accepted);
        ASSERT_STREQ(c.builtin, "built-in:ssh");
        ASSERT_OK(fw_model_check_inbound(&m, "untrusted", "eth0", BEARER_ETHERNET, false,
                                         FW_PROTO_TCP, 22, "", &c));
        ASSERT_TRUE(!c.accepted);
        ASSERT_OK(fw_model_check_inbound(&m, "untrusted", "eth0", BEARER_ETHERNET, false,
                                         FW_PROTO_UDP, 68, "", &c));
        ASSERT_TRUE(c.accepted);
        ASSERT_STREQ(c.builtin, "built-in:dhcp");
        /* what firewalld's zones let in: mDNS and Samba browsing at home only */
        ASSERT_OK(fw_model_check_inbound(&m, "home", "wifi0", BEARER_WIFI, false, FW_PROTO_UDP,
                                         5353, "", &c));
        ASSERT_TRUE(c.accepted && c.rule == NULL);
        ASSERT_STREQ(c.builtin, "built-in:mdns");
        ASSERT_OK(fw_model_check_inbound(&m, "home", "wifi0", BEARER_WIFI, false, FW_PROTO_UDP, 138,
                                         "", &c));
        ASSERT_TRUE(c.accepted);
        ASSERT_STREQ(c.builtin, "built-in:samba-client");
        ASSERT_OK(fw_model_check_inbound(&m, "public", "wifi0", BEARER_WIFI, false, FW_PROTO_UDP,
                                         5353, "", &c));
        ASSERT_TRUE(!c.accepted);
        ASSERT_OK(fw_model_check_inbound(&m, "work", "wifi0", BEARER_WIFI, false, FW_PROTO_UDP, 137,
                                         "", &c));
        ASSERT_TRUE(!c.accepted);
        ASSERT_OK(fw_model_check_inbound(&m, "home", "wifi0", BEARER_WIFI, false, FW_PROTO_TCP,
                                         5353, "", &c));
        ASSERT_TRUE(!c.accepted);
        ASSERT_EQ(fw_model_check_inbound(&m, "home", "wifi0", BEARER_WIFI, true, FW_PROTO_ICMP, 1,
                                         "", &c),
                  -EINVAL);
        ASSERT_EQ(fw_model_inbound_default(&m, "work"), FW_ACTION_REJECT);
        ASSERT_EQ(fw_model_inbound_default(&m, "public"), FW_ACTION_DROP);
        fw_model_done(&m);
}

TEST(profile_errors)
{
        static const struct {
                const char *text, *error;
        } cases[] = {
            {"[Rule]\nPort=22\n", "t.conf:1: [Rule] before a [Profile]"},
            {"[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=0\n", "t.conf:5: Port=0: a"},
            {"[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=70000\n", "t.conf:5: Port=7"},
            {"[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=90-80\n", "t.conf:5: Port=9"},
            {"[Profile]\nLocation=home\n[Rule]\nPort=80\n", "t.conf:3: Port= needs Protocol="},
            {"[Profile]\nLocation=home\n[Rule]\nAddress=192.0.2.1/24\n",
             "t.conf:4: Address=192.0.2.1/24 has bits set"},
            {"[Profile]\nLocation=home\n[Rule]\nAddress=2001:db8::/129\n",
             "t.conf:4: Address=2001:db8::/129 is not"},
            {"[Profile]\nLocation=home\n[Rule]\nFamily=ipv6\nAddress=192.0.2.0/24\n",
             "t.conf:3: Address= is of another family"},
            {"[Profile]\nLocation=home\n[Rule]\nAction=allow\n", "t.conf:4: Action=allow:"},
            {"[Profile]\nLocation=home\n[Rule]\nApp=../x\n", "t.conf:4: App=../x is not"},
            {"[Profile]\nLocation=home\nInbound=accept\n", "t.conf:3: Inbound=accept: drop or"},
            {"[Profile]\nLocation=home\n[Profile]\nLocation=work\n", "t.conf:3: A second"},
            {"[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=22\n[Rule]\nAction=drop\n"
             "Protocol=tcp\nPort=22\n",
             "/etc/roam/firewall.d/t.conf:6: drop tcp 22 contradicts "
             "/etc/roam/firewall.d/t.conf:3 (accept) in location home"},
            {"[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=22\x01\n",
             "t.conf:5: Control character"},
        };
        log_set_sink(quiet, NULL);
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *error = NULL;
                FwModel m;
                ASSERT_EQ(profile(&m, cases[i].text, &error), -EINVAL);
                ASSERT_TRUE(error != NULL);
                if (!strstr(error, cases[i].error))
                        TEST_FAIL("case %zu: got \"%s\"", i, error);
                fw_model_done(&m);
        }
}

TEST(choices_roundtrip)
{
        static const char text[] = "# comment\nhome wifi:Home Net:02:00:00:00:01:01\n"
                                   "lab ethernet:gw=02:00:00:00:00:09\n";
        _cleanup_free_ char *out = NULL;
        FwChoice *c = NULL, *again = NULL;
        size_t n = 0, n2 = 0;

        ASSERT_OK(fw_choices_parse(text, strlen(text), &c, &n));
        ASSERT_EQ(n, 2u);
        ASSERT_STREQ(c[0].network_id, "wifi:Home Net:02:00:00:00:01:01");
        ASSERT_OK(fw_choices_format(c, n, &out));
        ASSERT_OK(fw_choices_parse(out, strlen(out), &again, &n2));
        ASSERT_EQ(n2, 2u);
        ASSERT_STREQ(again[1].location, "lab");
        fw_choices_free(c, n);
        fw_choices_free(again, n2);
        ASSERT_EQ(fw_choices_parse("Home x\n", 7, &c, &n), -EINVAL);
        ASSERT_EQ(fw_choices_parse("home\n", 5, &c, &n), -EINVAL);
}
