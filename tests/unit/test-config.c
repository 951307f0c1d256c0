/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <syslog.h>

#include "roam-log.h"
#include "roamd-config.h"
#include "test.h"

static char captured[8192];

static void capture(int level, const char *msg, void *userdata)
{
        size_t n = strlen(captured);

        if (level <= LOG_ERR)
                snprintf(captured + n, sizeof(captured) - n, "%s\n", msg);
}

static int parse(const char *text, Config **ret)
{
        captured[0] = 0;
        log_set_sink(capture, NULL);
        return config_parse_string("test.conf", text, strlen(text), ret);
}

TEST(config_defaults)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_EQ(c->log_level, LOG_INFO);
        ASSERT_STREQ(c->sysfs_path, "/sys");
        ASSERT_STREQ(c->dhcpcd_lease_dir, "/var/lib/dhcpcd");
        ASSERT_STREQ(c->dhcpcd_ra_dir, "/run/dhcpcd/hook-state/resolv.conf");
        ASSERT_STREQ(c->resolv_conf, "/etc/resolv.conf");
        ASSERT_EQ(c->n_dns_sources, 4);
        ASSERT_EQ(c->dns_sources[0], DNS_SOURCE_RESOLVED);
        ASSERT_EQ(c->n_bearers, 0);
        config_free(c);
}

TEST(config_full)
{
        Config *c = NULL;
        const char *text = "# comment\n"
                           "; another\n"
                           "\n"
                           "[Daemon]\n"
                           "LogLevel = debug\n"
                           "SysfsPath=/tmp/sys\n"
                           "[DNS]\n"
                           "Sources=dhcpcd, resolv.conf\n"
                           "DhcpcdLeaseDir=/run/leases\n"
                           "DhcpcdRADir=/run/ra\n"
                           "ResolvConf=/run/resolv.conf\n"
                           "[Bearers]\n"
                           "wifi0=wifi\n"
                           "wwan*=cellular\n"
                           "[LinkDNS]\n"
                           "eth0=192.0.2.53 2001:db8:0:0::53\n";

        ASSERT_OK(parse(text, &c));
        ASSERT_EQ(c->log_level, LOG_DEBUG);
        ASSERT_STREQ(c->sysfs_path, "/tmp/sys");
        ASSERT_EQ(c->n_dns_sources, 2);
        ASSERT_EQ(c->dns_sources[0], DNS_SOURCE_DHCPCD);
        ASSERT_EQ(c->dns_sources[1], DNS_SOURCE_RESOLV_CONF);
        ASSERT_STREQ(c->dhcpcd_lease_dir, "/run/leases");
        ASSERT_STREQ(c->dhcpcd_ra_dir, "/run/ra");
        ASSERT_EQ(config_bearer_override(c, "wifi0"), BEARER_WIFI);
        ASSERT_EQ(config_bearer_override(c, "wwan3"), BEARER_CELLULAR);
        ASSERT_EQ(config_bearer_override(c, "eth0"), _BEARER_INVALID);
        ASSERT_TRUE(config_dns_pin(c, "eth0") != NULL);
        ASSERT_EQ(config_dns_pin(c, "eth0")->n_servers, 2);
        ASSERT_STREQ(config_dns_pin(c, "eth0")->servers[1].text, "2001:db8::53");
        ASSERT_TRUE(config_dns_pin(c, "eth1") == NULL);
        config_free(c);
}

/* Every error path: the text, and the file:line message it must produce. */
static const struct {
        const char *text;
        const char *message;
} errors[] = {
    {"Foo=bar\n", "test.conf:1: Assignment Foo= outside of any section."},
    {"[Daemon\n", "test.conf:1: Malformed section header: [Daemon"},
    {"[Daemon] x\n", "test.conf:1: Malformed section header: [Daemon] x"},
    {"[Dae mon]\n", "test.conf:1: Invalid section name: [Dae mon]"},
    {"[]\n", "test.conf:1: Invalid section name: []"},
    {"[Probe]\nStallInterval=0.1\n",
     "test.conf:2: StallInterval= must be 0 (off) or a duration from 0.5 to 60 seconds, got "
     "\"0.1\"."},
    {"[Probe]\nStallInterval=90\n", "test.conf:2: StallInterval= must be 0 (off)"},
    {"[Probe]\nStallInterval=nan\n", "test.conf:2: StallInterval= must be 0 (off)"},
    {"[Probe]\nStallReprobeMin=0\n", "test.conf:2: StallReprobeMin= must be a positive duration"},
    {"[Probe]\nDNSWatchInterval=0.5\n",
     "test.conf:2: DNSWatchInterval= must be 0 (off) or a duration from 1 to 3600 seconds, got "
     "\"0.5\"."},
    {"[Probe]\nDNSWatchInterval=7200\n", "test.conf:2: DNSWatchInterval= must be 0 (off)"},
    {"[Probe]\nRecheckInterval=nan\n", "test.conf:2: RecheckInterval= must be a positive"},
    {"[Nope]\nA=b\n", "test.conf:2: Unknown section [Nope]."},
    {"[Apps]\nEnforce=sometimes\n", "test.conf:2: Enforce= must be a boolean"},
    {"[Apps]\nStateFile=relative\n", "test.conf:2: StateFile= must be an absolute path"},
    {"[Apps]\nSystemCgroups=/ok x\n", "test.conf:2: SystemCgroups= takes absolute cgroup paths"},
    {"[Apps]\nSystemCgroups=/a/../b\n", "test.conf:2: SystemCgroups= takes absolute"},
    {"[Apps]\nMaxAppsPerUser=0\n", "test.conf:2: MaxAppsPerUser="},
    {"[Apps]\nColour=1\n", "test.conf:2: Unknown key Colour= in section [Apps]."},
    {"[Apps]\nDefaultFollows=best\n", "test.conf:2: DefaultFollows= must be verdict or kernel"},
    {"[Routing]\nPreferOnline=maybe\n", "test.conf:2: PreferOnline= must be a boolean"},
    {"[Time]\nGateTimeout=soon\n", "test.conf:2: GateTimeout= must be a duration from 0 to 600s"},
    {"[Time]\nGateTimeout=601\n", "test.conf:2: GateTimeout= must be a duration from 0 to 600s"},
    {"[Time]\nStateFile=time.state\n", "test.conf:2: StateFile= must be an absolute path"},
    {"[Time]\nSetClock=sometimes\n",
     "test.conf:2: SetClock= must be yes, no or auto, got \"sometimes\"."},
    {"[Routing]\nFirewallMask=0x50000000\n",
     "test.conf:2: FirewallMask= must be 3 to 7 contiguous"},
    {"[Routing]\nFirewallMask=0x3\n", "test.conf:2: FirewallMask= must be 3 to 7 contiguous"},
    {"[Routing]\nFirewallMask=0xff000000\n", "test.conf:2: FirewallMask= must be 3 to 7"},
    {"[Routing]\nTableBase=-1\n", "test.conf:2: TableBase= must be a number"},
    {"[Routing]\nRulePriority=40000\n",
     "test.conf:2: RulePriority= must be a number from 1 to 32000"},
    {"[Daemon]\nLogLevel\n", "test.conf:2: Expected Key=Value, got: LogLevel"},
    {"[Daemon]\n=x\n", "test.conf:2: Invalid or empty key."},
    {"[Daemon]\nLog Level=x\n", "test.conf:2: Invalid or empty key."},
    {"[Daemon]\n\nLogLevel=loud\n", "test.conf:3: Unknown LogLevel \"loud\""},
    {"[Daemon]\nColour=blue\n", "test.conf:2: Unknown key Colour= in section [Daemon]."},
    {"[Daemon]\nSysfsPath=sys\n", "test.conf:2: SysfsPath= must be an absolute path"},
    {"[DNS]\nSources=resolved carrier-pigeon\n",
     "test.conf:2: Unknown DNS source \"carrier-pigeon\""},
    {"[DNS]\nSources=config\n", "test.conf:2: Unknown DNS source \"config\""},
    {"[DNS]\nSources=dhcpcd dhcpcd\n", "test.conf:2: DNS source \"dhcpcd\" listed twice."},
    {"[DNS]\nDhcpcdLeaseDir=relative\n", "test.conf:2: DhcpcdLeaseDir= must be an absolute"},
    {"[DNS]\nResolvConf=x\n", "test.conf:2: ResolvConf= must be an absolute path"},
    {"[DNS]\nTimeout=3\n", "test.conf:2: Unknown key Timeout= in section [DNS]."},
    {"[Bearers]\nwifi0=radio\n", "test.conf:2: Unknown bearer \"radio\" for wifi0"},
    {"[Bearers]\nwifi0=\n", "test.conf:2: Unknown bearer \"\" for wifi0"},
    {"[Bearers]\na/b=wifi\n", "test.conf:2: Invalid interface name or pattern \"a/b\"."},
    {"[Bearers]\nwifi0=wifi\nwifi0=cellular\n", "test.conf:3: Bearer for wifi0 set twice."},
    {"[LinkDNS]\neth0=\n", "test.conf:2: No DNS servers given for eth0."},
    {"[LinkDNS]\neth0=192.0.2.300\n", "test.conf:2: Invalid DNS server address \"192.0.2.300\"."},
    {"[LinkDNS]\neth0=1.1.1.1 1.1.1.2 1.1.1.3 1.1.1.4 1.1.1.5 1.1.1.6 1.1.1.7 1.1.1.8 1.1.1.9 "
     "1.1.1.10 1.1.1.11 1.1.1.12 1.1.1.13 1.1.1.14 1.1.1.15 1.1.1.16 1.1.1.17\n",
     "test.conf:2: Too many DNS servers for eth0 (at most 16)."},
    {"[LinkDNS]\neth0=192.0.2.1\neth0=192.0.2.2\n", "test.conf:3: DNS servers for eth0 set twice."},
    {"[LinkDNS]\nx:y=192.0.2.1\n", "test.conf:2: Invalid interface name or pattern \"x:y\"."},
    {"[Daemon]\nLogLevel=info\x01\n", "test.conf:2: Control character or NUL byte in line."},
    {"[WiFi]\nEnable=maybe\n", "test.conf:2: Enable= must be a boolean"},
    {"[WiFi]\nControlDirectory=run/wpa\n", "test.conf:2: ControlDirectory= must be an absolute"},
    {"[WiFi]\nGlobalControl=/\n", "test.conf:2: GlobalControl= cannot be /."},
    {"[WiFi]\nClientDirectory=/"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaaa\n",
     "test.conf:2: ClientDirectory= is too long for a socket path"},
    {"[WiFi]\nRequestTimeout=50ms\n", "test.conf:2: RequestTimeout= must be a duration from"},
    {"[WiFi]\nRequestTimeout=2m\n", "test.conf:2: RequestTimeout= must be a duration from"},
    {"[WiFi]\nDeviceName=say \"hi\"\n", "test.conf:2: DeviceName= must be 1 to 32"},
    {"[WiFi]\nDeviceName=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", "test.conf:2: DeviceName= must be"},
    {"[WiFi]\nBackend=connman\n", "test.conf:2: Backend= must be auto, networkmanager, iwd or"},
    {"[WiFi]\nChannel=6\n", "test.conf:2: Unknown key Channel= in section [WiFi]."},
    {"[Bluetooth]\nEnable=maybe\n", "test.conf:2: Enable= must be a boolean"},
    {"[Bluetooth]\nQuestionTimeout=90s\n",
     "test.conf:2: QuestionTimeout= must be a duration between 1ms and 55s"},
    {"[Bluetooth]\nNfcDiscoveryTimeout=0\n", "test.conf:2: NfcDiscoveryTimeout= must be"},
    {"[Bluetooth]\nNfcOfferTimeout=601s\n",
     "test.conf:2: NfcOfferTimeout= must be a duration between 1ms and 600s"},
    {"[Bluetooth]\nAgent=no\n", "test.conf:2: Unknown key Agent= in section [Bluetooth]."},
};

TEST(config_wifi)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_TRUE(c->wifi.enable);
        ASSERT_STREQ(c->wifi.control_dir, "/run/wpa_supplicant");
        ASSERT_STREQ(c->wifi.client_dir, "/run/roam/wpa");
        ASSERT_TRUE(c->wifi.global_control == NULL && c->wifi.p2p_device_name == NULL);
        ASSERT_EQ(c->wifi.timeout_usec, 10 * 1000000ULL);
        config_free(c);
        ASSERT_OK(parse("[WiFi]\nEnable=no\nControlDirectory=/run/w\nGlobalControl=/run/w/g\n"
                        "ClientDirectory=/run/c\nRequestTimeout=500ms\nDeviceName=Kitchen laptop\n",
                        &c));
        ASSERT_TRUE(!c->wifi.enable);
        ASSERT_STREQ(c->wifi.control_dir, "/run/w");
        ASSERT_STREQ(c->wifi.global_control, "/run/w/g");
        ASSERT_STREQ(c->wifi.client_dir, "/run/c");
        ASSERT_EQ(c->wifi.timeout_usec, 500000);
        ASSERT_STREQ(c->wifi.p2p_device_name, "Kitchen laptop");
        ASSERT_TRUE(c->wifi.backend == NULL); /* auto */
        config_free(c);
        ASSERT_OK(parse("[WiFi]\nBackend=iwd\n", &c));
        ASSERT_STREQ(c->wifi.backend, "iwd");
        config_free(c);
        ASSERT_OK(parse("[WiFi]\nBackend=iwd\nBackend=auto\n", &c));
        ASSERT_TRUE(c->wifi.backend == NULL);
        config_free(c);
        log_set_sink(NULL, NULL);
}

TEST(config_apps_and_routing)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_TRUE(c->apps.enforce);
        ASSERT_STREQ(c->apps.policy_dir, "/etc/roam/apps.d");
        ASSERT_STREQ(c->apps.state_file, "/var/lib/roam/apps.state");
        ASSERT_EQ(c->apps.mark_mask, 0x7f000000u);
        ASSERT_EQ(c->apps.table_base, 29000u);
        ASSERT_EQ(c->apps.rule_priority, 29000u);
        ASSERT_EQ(c->apps.max_apps_per_user, 256u);
        ASSERT_EQ(c->apps.default_follows, DEFAULT_FOLLOWS_VERDICT);
        config_free(c);
        ASSERT_OK(parse("[Apps]\nDefaultFollows=kernel\n", &c));
        ASSERT_EQ(c->apps.default_follows, DEFAULT_FOLLOWS_KERNEL);
        config_free(c);
        /* the old spelling */
        ASSERT_OK(parse("[Routing]\nPreferOnline=no\n", &c));
        ASSERT_EQ(c->apps.default_follows, DEFAULT_FOLLOWS_KERNEL);
        config_free(c);
        ASSERT_OK(parse("[Apps]\nEnforce=no\nPolicyDirectory=/p\nStateFile=/s\nMaxAppsPerUser=8\n"
                        "SystemCgroups=/vpn.service /x/y.scope\n"
                        "[Routing]\nFirewallMask=0x00070000\nTableBase=100\nRulePriority=900\n",
                        &c));
        ASSERT_TRUE(!c->apps.enforce);
        ASSERT_STREQ(c->apps.policy_dir, "/p");
        ASSERT_STREQ(c->apps.state_file, "/s");
        ASSERT_EQ(c->apps.max_apps_per_user, 8u);
        ASSERT_STREQ(c->apps.system_cgroups[0], "/vpn.service");
        ASSERT_STREQ(c->apps.system_cgroups[1], "/x/y.scope");
        ASSERT_TRUE(c->apps.system_cgroups[2] == NULL);
        ASSERT_EQ(c->apps.mark_mask, 0x00070000u);
        ASSERT_EQ(c->apps.table_base, 100u);
        ASSERT_EQ(c->apps.rule_priority, 900u);
        config_free(c);
        log_set_sink(NULL, NULL);
}

TEST(config_probe)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_STREQ(c->probe.expect_body, "NetworkManager is online\n");
        ASSERT_EQ(c->probe.timeout_usec, 10 * USEC_PER_SEC);
        ASSERT_EQ(c->probe.stall_interval_usec, 2 * USEC_PER_SEC);
        ASSERT_EQ(c->probe.stall_reprobe_min_usec, 30 * USEC_PER_SEC);
        config_free(c);

        ASSERT_OK(parse("[Probe]\nStallInterval=0\nStallReprobeMin=5s\n", &c));
        ASSERT_EQ(c->probe.stall_interval_usec, 0);
        ASSERT_EQ(c->probe.stall_reprobe_min_usec, 5 * USEC_PER_SEC);
        config_free(c);
        ASSERT_OK(parse("[Probe]\nStallInterval=500ms\n", &c));
        ASSERT_EQ(c->probe.stall_interval_usec, 500 * USEC_PER_MSEC);
        ASSERT_EQ(c->probe.dns_watch_interval_usec, 30 * USEC_PER_SEC);
        config_free(c);
        ASSERT_OK(parse("[Probe]\nDNSWatchInterval=0\n", &c));
        ASSERT_EQ(c->probe.dns_watch_interval_usec, 0);
        config_free(c);
        ASSERT_OK(parse("[Probe]\nDNSWatchInterval=5\n", &c));
        ASSERT_EQ(c->probe.dns_watch_interval_usec, 5 * USEC_PER_SEC);
        config_free(c);

        ASSERT_OK(parse("[Probe]\n"
                        "HttpURL=http://probe.test/p\n"
                        "HttpsURL=https://probe.test:8443/p\n"
                        "ExpectStatus=204\n"
                        "ExpectBody=\n"
                        "ExpectAddresses=203.0.113.10, 2001:db8:ff::10\n"
                        "CAFile=/etc/ca.pem\n"
                        "Timeout=1.5s\n"
                        "DNSTimeout=500ms\n"
                        "RecheckInterval=60\n"
                        "MaxBodySize=4096\n",
                        &c));
        ASSERT_STREQ(c->probe.http_url, "http://probe.test/p");
        ASSERT_STREQ(c->probe.https_url, "https://probe.test:8443/p");
        ASSERT_EQ(c->probe.expect_status, 204);
        ASSERT_TRUE(c->probe.expect_body == NULL);
        ASSERT_EQ(c->probe.n_expect_addrs, 2);
        ASSERT_STREQ(c->probe.expect_addrs[1].text, "2001:db8:ff::10");
        ASSERT_STREQ(c->probe.ca_file, "/etc/ca.pem");
        ASSERT_EQ(c->probe.timeout_usec, 1500 * USEC_PER_MSEC);
        ASSERT_EQ(c->probe.dns_timeout_usec, 500 * USEC_PER_MSEC);
        ASSERT_EQ(c->probe.recheck_usec, 60 * USEC_PER_SEC);
        ASSERT_EQ(c->probe.max_body, 4096);
        config_free(c);

        ASSERT_OK(parse("[Probe]\nExpectBody=ok\\n\\tx\\\\\n", &c));
        ASSERT_STREQ(c->probe.expect_body, "ok\n\tx\\");
        config_free(c);
        log_set_sink(NULL, NULL);
}

TEST(config_bluetooth)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_TRUE(c->bluetooth.enable);
        ASSERT_EQ(c->bluetooth.question_timeout_usec, 30 * USEC_PER_SEC);
        ASSERT_EQ(c->bluetooth.nfc_offer_usec, 60 * USEC_PER_SEC);
        config_free(c);
        ASSERT_OK(parse("[Bluetooth]\nNfcOfferTimeout=300s\n", &c));
        ASSERT_EQ(c->bluetooth.nfc_offer_usec, 300 * USEC_PER_SEC);
        config_free(c);
        ASSERT_OK(
            parse("[Bluetooth]\nEnable=no\nQuestionTimeout=2s\nNfcDiscoveryTimeout=500ms\n", &c));
        ASSERT_TRUE(!c->bluetooth.enable);
        ASSERT_EQ(c->bluetooth.question_timeout_usec, 2 * USEC_PER_SEC);
        ASSERT_EQ(c->bluetooth.nfc_discovery_usec, 500 * USEC_PER_MSEC);
        config_free(c);
        log_set_sink(NULL, NULL);
}

TEST(config_errors_report_file_and_line)
{
        for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
                Config *c = NULL;
                int r = parse(errors[i].text, &c);

                if (r != -EINVAL)
                        TEST_FAIL("case %zu (%s): expected -EINVAL, got %d", i, errors[i].text, r);
                ASSERT_TRUE(c == NULL);
                if (!strstr(captured, errors[i].message))
                        TEST_FAIL("case %zu: expected message \"%s\", got \"%s\"", i,
                                  errors[i].message, captured);
        }
        log_set_sink(NULL, NULL);
}

TEST(config_reports_every_error)
{
        Config *c = NULL;

        ASSERT_EQ(parse("[Daemon]\nLogLevel=x\nFoo=1\n[Bearers]\nwlan0=nope\n", &c), -EINVAL);
        ASSERT_TRUE(strstr(captured, "test.conf:2:") != NULL);
        ASSERT_TRUE(strstr(captured, "test.conf:3:") != NULL);
        ASSERT_TRUE(strstr(captured, "test.conf:5:") != NULL);
        log_set_sink(NULL, NULL);
}

TEST(config_nul_byte_and_long_line)
{
        static const char text[] = "[Daemon]\nLogLevel=in\0fo\n";
        char *big;
        Config *c = NULL;
        int r;

        captured[0] = 0;
        log_set_sink(capture, NULL);
        ASSERT_EQ(config_parse_string("test.conf", text, sizeof(text) - 1, &c), -EINVAL);
        ASSERT_TRUE(strstr(captured, "test.conf:2: Control character or NUL byte") != NULL);

        big = malloc(10000);
        ASSERT_TRUE(big);
        memset(big, 'a', 9999);
        big[9999] = 0;
        memcpy(big, "[Daemon]\n", 9);
        r = parse(big, &c);
        free(big);
        ASSERT_EQ(r, -EINVAL);
        ASSERT_TRUE(strstr(captured, "test.conf:2: Line too long") != NULL);
        log_set_sink(NULL, NULL);
}

TEST(config_load_missing_file)
{
        Config *c = NULL;

        log_set_sink(capture, NULL);
        captured[0] = 0;
        ASSERT_EQ(config_load("/nonexistent/roamd.conf", false, &c), -ENOENT);
        ASSERT_TRUE(strstr(captured, "/nonexistent/roamd.conf: cannot read configuration") != NULL);
        ASSERT_OK(config_load("/nonexistent/roamd.conf", true, &c));
        ASSERT_TRUE(c != NULL);
        config_free(c);
        log_set_sink(NULL, NULL);
}

TEST(config_firewall)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_TRUE(c->firewall.enable);
        ASSERT_EQ(c->firewall.ssh, FIREWALL_SSH_ALWAYS);
        ASSERT_STREQ(c->firewall.networks_dir, "/etc/roam/networks.d");
        ASSERT_STREQ(c->firewall.state_file, "/var/lib/roam/locations.state");
        config_free(c);
        c = NULL;
        ASSERT_OK(parse("[Firewall]\nEnable=no\nSSH=trusted\nProfilesDirectory=/tmp/fw.d\n", &c));
        ASSERT_TRUE(!c->firewall.enable);
        ASSERT_EQ(c->firewall.ssh, FIREWALL_SSH_TRUSTED);
        ASSERT_STREQ(c->firewall.profiles_dir, "/tmp/fw.d");
        config_free(c);
        c = NULL;
        ASSERT_EQ(parse("[Firewall]\nSSH=sometimes\n", &c), -EINVAL);
        ASSERT_EQ(parse("[Firewall]\nZone=home\n", &c), -EINVAL);
}

TEST(config_time)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_EQ(c->time.gate_timeout_usec, 5 * USEC_PER_SEC);
        ASSERT_STREQ(c->time.state_file, "/var/lib/roam/time.state");
        ASSERT_STREQ(c->time.chrony_socket, "/run/chrony.roam.sock");
        ASSERT_EQ(c->time.set_clock, TIME_SET_CLOCK_AUTO);
        config_free(c);
        c = NULL;
        ASSERT_OK(parse("[Time]\nGateTimeout=1500ms\nStateFile=/tmp/t.state\n", &c));
        ASSERT_EQ(c->time.gate_timeout_usec, 1500 * USEC_PER_MSEC);
        ASSERT_STREQ(c->time.state_file, "/tmp/t.state");
        config_free(c);
        c = NULL;
        ASSERT_OK(parse("[Time]\nSetClock=no\n", &c));
        ASSERT_EQ(c->time.set_clock, TIME_SET_CLOCK_NO);
        config_free(c);
        c = NULL;
        ASSERT_OK(parse("[Time]\nSetClock=yes\n", &c));
        ASSERT_EQ(c->time.set_clock, TIME_SET_CLOCK_YES);
        config_free(c);
        c = NULL;
        ASSERT_OK(parse("[Time]\nChronySocket=\n", &c));
        ASSERT_TRUE(c->time.chrony_socket == NULL);
        config_free(c);
        c = NULL;
        ASSERT_EQ(parse("[Time]\nChronySocket=relative.sock\n", &c), -EINVAL);
}

TEST(config_wake)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_EQ(c->wake.at_once, 1);
        ASSERT_EQ(c->wake.settle_usec, 1000000);
        ASSERT_EQ(c->wake.restart_usec, 30000000);
        ASSERT_EQ(c->wake.quiet_usec, 2000000);
        ASSERT_EQ(c->wake.max_delay_usec, 300000000);
        ASSERT_EQ(c->wake.slow_rtt_usec, 300000);
        config_free(c);
        c = NULL;
        ASSERT_OK(parse("[Wake]\nAtOnce=2\nAtOnce.ethernet=4\nSettleSec=500ms\nQuietSec=0\n"
                        "MaxDelaySec=60\nRestartSec=10s\nSlowRTTSec=0\n",
                        &c));
        ASSERT_EQ(c->wake.at_once, 2);
        ASSERT_EQ(c->wake.at_once_bearer[BEARER_ETHERNET], 4);
        ASSERT_EQ(c->wake.at_once_bearer[BEARER_WIFI], 0);
        ASSERT_EQ(c->wake.settle_usec, 500000);
        ASSERT_EQ(c->wake.quiet_usec, 0);
        ASSERT_EQ(c->wake.max_delay_usec, 60000000);
        ASSERT_EQ(c->wake.restart_usec, 10000000);
        ASSERT_EQ(c->wake.slow_rtt_usec, 0);
        config_free(c);
        c = NULL;
        ASSERT_EQ(parse("[Wake]\nAtOnce=0\n", &c), -EINVAL);
        ASSERT_STREQ(captured, "test.conf:2: AtOnce= must be a number from 1 to 64, got \"0\".\n");
        ASSERT_EQ(parse("[Wake]\nAtOnce.modem=2\n", &c), -EINVAL);
        ASSERT_EQ(parse("[Wake]\nSettleSec=soon\n", &c), -EINVAL);
        ASSERT_EQ(parse("[Wake]\nSlowRTTSec=slow\n", &c), -EINVAL);
        ASSERT_EQ(parse("[Wake]\nPriority=5\n", &c), -EINVAL);
}
