/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall's location -> ruleset (roamd-firewall-chain.c, what roamd-firewall.c hands the
 * reconciler's transaction for each link): which rules a link gets at home, at work, in public
 * and on an untrusted network, with per-app inbound ports keyed by the app's cgroups from the
 * fake core. */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "fake-core.h"
#include "roam-macro.h"
#include "roamd-firewall-chain.h"
#include "test.h"

static const char home_work[] = "[Profile]\n"
                                "Location=home work\n"
                                "[Rule]\n"
                                "Protocol=tcp\n"
                                "Port=22000\n"
                                "App=org.syncthing\n"
                                "[Rule]\n"
                                "Protocol=udp\n"
                                "Port=5353\n";
static const char public[] = "[Profile]\n"
                             "Location=public\n"
                             "Inbound=reject\n"
                             "[Rule]\n"
                             "Direction=out\n"
                             "Action=drop\n"
                             "Protocol=tcp\n"
                             "Port=25\n";

static FakeCore core;
static FwModel model;

static void setup(void)
{
        _cleanup_free_ char *error = NULL;

        core = (FakeCore){};
        fw_model_done(&model);
        ASSERT_OK(fw_model_init(&model));
        ASSERT_OK(fw_profile_parse("/etc/roam/firewall.d/10-home.conf", home_work,
                                   strlen(home_work), &model, &error));
        ASSERT_OK(fw_profile_parse("/etc/roam/firewall.d/20-public.conf", public, strlen(public),
                                   &model, &error));
        ASSERT_OK(fw_model_check(&model, &error));
}

/* The chain as one line: "ID:ACTION:PROTO:PORT[:cgLEVEL/ID]" per rule, then "=> FINAL". */
static char *render(const char *location, FwDirection dir, FirewallSsh ssh)
{
        _cleanup_(fw_chain_done) FwChain c = {};
        char *s = NULL;
        size_t size = 0;
        FILE *f;

        ASSERT_OK(fw_chain_build(&model, location, "wlan0", BEARER_WIFI, fw_ssh_open(ssh, location),
                                 dir, fake_app_cgroup, &core, &c));
        f = open_memstream(&s, &size);
        ASSERT_TRUE(f);
        for (size_t i = 0; i < c.n; i++) {
                const FwNftRule *r = &c.rules[i];
                fprintf(f, "%s:%s:%s:%u", r->id, fw_action_to_string(r->action),
                        fw_proto_to_string(r->proto), r->port_min);
                if (r->has_cgroup)
                        fprintf(f, ":cg%u/%llu", r->cgroup_level, (unsigned long long)r->cgroup_id);
                if (r->has_local) {
                        char a[INET6_ADDRSTRLEN];
                        ASSERT_TRUE(inet_ntop(r->local.family, &r->local.addr, a, sizeof(a)));
                        fprintf(f, ":to%s/%u", a, r->local.prefixlen);
                }
                fputc(' ', f);
        }
        fprintf(f, "=> %s", fw_action_to_string(c.final));
        fclose(f);
        return s;
}

#define CHECK(loc, dir, ssh, want)                                                                 \
        do {                                                                                       \
                _cleanup_free_ char *_got = render(loc, dir, ssh);                                 \
                ASSERT_STREQ(_got, want);                                                          \
        } while (0)

/* What firewalld's zones let in (roamd-firewall-conf.c): home mDNS, Samba browsing and DHCPv6,
 * work and public DHCPv6 alone, untrusted none. */
#define HOME_SVC                                                                                   \
        "built-in:mdns:accept:udp:5353:to224.0.0.251/32 "                                          \
        "built-in:mdns:accept:udp:5353:toff02::fb/128 "                                            \
        "built-in:samba-client:accept:udp:137 built-in:samba-client:accept:udp:138 "               \
        "built-in:dhcpv6-client:accept:udp:546:tofe80::/64 "
#define PUBLIC_SVC "built-in:dhcpv6-client:accept:udp:546:tofe80::/64 "

TEST(firewall_location_to_rules)
{
        setup();
        /* syncthing does not run: its rule matches nothing and is not there */
        CHECK("home", FW_DIRECTION_IN, FIREWALL_SSH_TRUSTED,
              "10-home.conf:7:accept:udp:5353 " HOME_SVC "built-in:ssh:accept:tcp:22 => reject");
        CHECK("work", FW_DIRECTION_IN, FIREWALL_SSH_TRUSTED,
              "10-home.conf:7:accept:udp:5353 " PUBLIC_SVC "built-in:ssh:accept:tcp:22 => reject");
        CHECK("public", FW_DIRECTION_IN, FIREWALL_SSH_TRUSTED, PUBLIC_SVC "=> reject");
        CHECK("untrusted", FW_DIRECTION_IN, FIREWALL_SSH_TRUSTED, "=> drop");
        CHECK("untrusted", FW_DIRECTION_IN, FIREWALL_SSH_ALWAYS,
              "built-in:ssh:accept:tcp:22 => drop");
        CHECK("home", FW_DIRECTION_IN, FIREWALL_SSH_NEVER,
              "10-home.conf:7:accept:udp:5353 " HOME_SVC "=> reject");
        /* a location of one's own is as strict as untrusted */
        CHECK("lab", FW_DIRECTION_IN, FIREWALL_SSH_NEVER, "=> drop");
        /* outbound: only public drops mail submission; everything else leaves */
        CHECK("public", FW_DIRECTION_OUT, FIREWALL_SSH_ALWAYS,
              "20-public.conf:4:drop:tcp:25 => accept");
        CHECK("home", FW_DIRECTION_OUT, FIREWALL_SSH_ALWAYS, "=> accept");
        CHECK("untrusted", FW_DIRECTION_OUT, FIREWALL_SSH_ALWAYS, "=> accept");
}

TEST(firewall_app_inbound_ports_follow_cgroups)
{
        setup();
        /* syncthing runs in two cgroups (two users): one rule per cgroup, keyed by its id */
        fake_cgroup_add(&core, 501, 3, "user:1000/app:org.syncthing", "org.syncthing");
        fake_cgroup_add(&core, 777, 3, "user:1000/app:org.other", "org.other");
        fake_cgroup_add(&core, 502, 3, "user:1001/app:org.syncthing", "org.syncthing");
        CHECK("home", FW_DIRECTION_IN, FIREWALL_SSH_NEVER,
              "10-home.conf:3:accept:tcp:22000:cg3/501 10-home.conf:3:accept:tcp:22000:cg3/502 "
              "10-home.conf:7:accept:udp:5353 " HOME_SVC "=> reject");
        /* not in public: the profile does not name it */
        CHECK("public", FW_DIRECTION_IN, FIREWALL_SSH_NEVER, PUBLIC_SVC "=> reject");
        ASSERT_TRUE(core.questions > 0);
}

TEST(firewall_chain_compare)
{
        _cleanup_(fw_chain_done) FwChain a = {}, b = {}, c = {};

        setup();
        fake_cgroup_add(&core, 501, 3, "user:1000/app:org.syncthing", "org.syncthing");
        ASSERT_OK(fw_chain_build(&model, "home", "wlan0", BEARER_WIFI, true, FW_DIRECTION_IN,
                                 fake_app_cgroup, &core, &a));
        ASSERT_OK(fw_chain_build(&model, "home", "wlan0", BEARER_WIFI, true, FW_DIRECTION_IN,
                                 fake_app_cgroup, &core, &b));
        /* the same inputs: nothing for the transaction to change */
        ASSERT_TRUE(fw_chain_equal(&a, &b));
        /* the app started a second cgroup: the chain differs */
        fake_cgroup_add(&core, 502, 3, "user:1001/app:org.syncthing", "org.syncthing");
        ASSERT_OK(fw_chain_build(&model, "home", "wlan0", BEARER_WIFI, true, FW_DIRECTION_IN,
                                 fake_app_cgroup, &core, &c));
        ASSERT_TRUE(!fw_chain_equal(&a, &c));
        ASSERT_EQ(c.n, a.n + 1);
        fw_model_done(&model);
}
