/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>

#include "roamd-wifi-wpa-parse.h"
#include "test.h"

TEST(wifi_wpa_flags)
{
        /* the flags wpa_supplicant 2.10 prints (ctrl_iface.c wpa_supplicant_ie_txt()) */
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-PSK-CCMP][ESS]"), WIFI_SECURITY_WPA2);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA-PSK-TKIP][ESS]"), WIFI_SECURITY_WPA);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA-PSK-CCMP+TKIP][WPA2-PSK-CCMP+TKIP][ESS]"),
                  WIFI_SECURITY_WPA2);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-PSK+SAE-CCMP][ESS]"), WIFI_SECURITY_WPA2_WPA3);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-SAE-CCMP][SAE-H2E][ESS]"), WIFI_SECURITY_WPA3);
        ASSERT_EQ(wifi_wpa_flags_security("[RSN-SAE-CCMP][MESH]"), WIFI_SECURITY_WPA3);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-EAP-CCMP][ESS]"), WIFI_SECURITY_ENTERPRISE);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-EAP-SUITE-B-192-GCMP-256][ESS]"),
                  WIFI_SECURITY_ENTERPRISE);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-OWE-CCMP][ESS]"), WIFI_SECURITY_OWE);
        /* the open half of an OWE transition pair is open */
        ASSERT_EQ(wifi_wpa_flags_security("[OWE-TRANS][ESS]"), WIFI_SECURITY_OPEN);
        ASSERT_EQ(wifi_wpa_flags_security("[WEP][ESS]"), WIFI_SECURITY_WEP);
        ASSERT_EQ(wifi_wpa_flags_security("[ESS][WPS]"), WIFI_SECURITY_OPEN);
        ASSERT_EQ(wifi_wpa_flags_security(""), WIFI_SECURITY_OPEN);
        ASSERT_EQ(wifi_wpa_flags_security("[WPA2-PSK-CCMP"), WIFI_SECURITY_OPEN); /* cut */
}

TEST(wifi_wpa_ssid_text)
{
        uint8_t ssid[WIFI_SSID_MAX];
        size_t n;
        char hex[65];

        /* printf_encode(): \" \\ \e \n \r \t and \xNN */
        ASSERT_OK(wifi_wpa_ssid_decode("a\\\"b\\\\c\\e\\n\\xff", 15, ssid, &n));
        ASSERT_EQ(n, 8u);
        ASSERT_TRUE(memcmp(ssid, "a\"b\\c\x1b\n\xff", 8) == 0);
        ASSERT_EQ(wifi_wpa_ssid_decode("a\\q", 3, ssid, &n), -EBADMSG);
        ASSERT_EQ(wifi_wpa_ssid_decode("a\\x4", 4, ssid, &n), -EBADMSG);
        ASSERT_EQ(wifi_wpa_ssid_decode("a\tb", 3, ssid, &n), -EBADMSG);
        ASSERT_EQ(wifi_wpa_ssid_decode("123456789012345678901234567890123", 33, ssid, &n),
                  -EBADMSG);
        wifi_wpa_ssid_hex((const uint8_t *)"Home\xff", 5, hex);
        ASSERT_STREQ(hex, "486f6d65ff");
}

static int parse_group(const char *reply, size_t len, WifiNetworkList *l, bool *complete,
                       int64_t *last)
{
        WifiWpaBss *b = NULL;
        size_t n = 0;
        int r = wifi_wpa_bss_parse(reply, len, &b, &n, complete, last);

        if (r >= 0)
                r = wifi_wpa_bss_group(b, n, l);
        free(b);
        return r;
}

TEST(wifi_wpa_bss_range)
{
        /* BSS RANGE=ALL MASK=0x21887: id, bssid, freq, level, flags, ssid, then ====, and ####
         * after the list's last BSS (ctrl_iface.c since 2013); two BSSes of one SSID (the
         * stronger wins), a hidden one */
        static const char reply[] = "id=3\nbssid=02:00:00:00:01:00\nfreq=2412\nlevel=-70\n"
                                    "flags=[WPA2-PSK-CCMP][ESS]\nssid=Home\n====\n"
                                    "id=4\nbssid=02:00:00:00:02:00\nfreq=5180\nlevel=-48\n"
                                    "flags=[WPA2-PSK+SAE-CCMP][ESS]\nssid=Home\n====\n"
                                    "id=5\nbssid=02:00:00:00:03:00\nfreq=2437\nlevel=-80\n"
                                    "flags=[ESS]\nssid=\n####\n";
        WifiNetworkList l = {};
        bool complete;
        int64_t last;

        ASSERT_OK(parse_group(reply, strlen(reply), &l, &complete, &last));
        ASSERT_TRUE(complete);
        ASSERT_EQ(last, 5);
        ASSERT_EQ(l.n, 2u);
        ASSERT_EQ(l.networks[0].ssid_len, 4u);
        ASSERT_EQ(l.networks[0].n_bssids, 2u);
        ASSERT_EQ(l.networks[0].signal_dbm, -48);
        ASSERT_EQ(l.networks[0].freq_mhz, 5180u);
        ASSERT_EQ(l.networks[0].security, WIFI_SECURITY_WPA2_WPA3);
        ASSERT_TRUE(l.networks[0].in_range);
        ASSERT_EQ(l.networks[1].ssid_len, 0u);
        wifi_network_list_done(&l);

        /* a page: the whole BSSes that fit, the last one ends in ====: the next page starts
         * after id 4 */
        ASSERT_OK(parse_group(reply, 186, &l, &complete, &last));
        ASSERT_TRUE(!complete);
        ASSERT_EQ(last, 4);
        ASSERT_EQ(l.n, 1u);
        ASSERT_EQ(l.networks[0].n_bssids, 2u);
        wifi_network_list_done(&l);
        /* a line cut short (no whole BSS) */
        ASSERT_OK(parse_group(reply, 30, &l, &complete, &last));
        ASSERT_TRUE(!complete);
        ASSERT_EQ(last, -1);
        ASSERT_EQ(l.n, 0u);
        /* nothing from there on */
        ASSERT_OK(parse_group("", 0, &l, &complete, &last));
        ASSERT_TRUE(complete);
        ASSERT_EQ(parse_group("garbage\n", 8, &l, &complete, &last), -EBADMSG);
        ASSERT_EQ(parse_group("level=x\n====\n", 13, &l, &complete, &last), -EBADMSG);
        ASSERT_EQ(parse_group("====\n", 5, &l, &complete, &last), -EBADMSG);
        ASSERT_EQ(parse_group("id=1\n####\nid=2\n====\n", 20, &l, &complete, &last), -EBADMSG);
        ASSERT_EQ(parse_group("id=-1\n####\n", 11, &l, &complete, &last), -EBADMSG);
        ASSERT_EQ(parse_group("bssid=02:00:00:00:01\n####\n", 26, &l, &complete, &last), -EBADMSG);
        wifi_network_list_done(&l);
}

TEST(wifi_wpa_bss_hidden_named)
{
        /* a hidden AP's beacon (no SSID) and, once probed by name, its probe response (the
         * same BSSID, named): one network; another hidden AP stays the hidden row */
        static const char reply[] = "id=7\nbssid=02:00:00:00:03:00\nfreq=2412\nlevel=-70\n"
                                    "flags=[WPA2-PSK-CCMP][ESS]\nssid=\n====\n"
                                    "id=8\nbssid=02:00:00:00:04:00\nfreq=2412\nlevel=-75\n"
                                    "flags=[ESS]\nssid=\n====\n"
                                    "id=9\nbssid=02:00:00:00:03:00\nfreq=2412\nlevel=-70\n"
                                    "flags=[WPA2-PSK-CCMP][ESS]\nssid=Bunker\n####\n";
        WifiNetworkList l = {};
        bool complete;
        int64_t last;

        ASSERT_OK(parse_group(reply, strlen(reply), &l, &complete, &last));
        ASSERT_TRUE(complete);
        ASSERT_EQ(l.n, 2u);
        ASSERT_EQ(l.networks[0].ssid_len, 0u);
        ASSERT_EQ(l.networks[0].n_bssids, 1u);
        ASSERT_EQ(l.networks[0].signal_dbm, -75);
        ASSERT_EQ(l.networks[1].ssid_len, 6u);
        ASSERT_EQ(l.networks[1].n_bssids, 1u);
        wifi_network_list_done(&l);
}

TEST(wifi_wpa_list_networks)
{
        static const char reply[] = "network id / ssid / bssid / flags\n"
                                    "0\toffice\tany\t[DISABLED]\n"
                                    "1\tHome\\x21\tany\t[CURRENT]\n"
                                    "2\tcafe\t02:00:00:00:01:00\t[TEMP-DISABLED]\n";
        WifiWpaKnown k[4];
        size_t n;

        ASSERT_OK(wifi_wpa_list_parse(reply, strlen(reply), k, 4, &n));
        ASSERT_EQ(n, 3u);
        ASSERT_TRUE(k[0].disabled && !k[0].current);
        ASSERT_EQ(k[1].id, 1);
        ASSERT_TRUE(k[1].current && k[1].ssid_len == 5 && memcmp(k[1].ssid, "Home!", 5) == 0);
        ASSERT_TRUE(k[2].temp_disabled);
        ASSERT_OK(wifi_wpa_list_parse(reply, strlen(reply), k, 2, &n));
        ASSERT_EQ(n, 2u);
        ASSERT_EQ(wifi_wpa_list_parse("FAIL\n", 5, k, 4, &n), -EBADMSG);
        ASSERT_EQ(wifi_wpa_list_parse("network id / ssid / bssid / flags\nx\ty\n", 38, k, 4, &n),
                  -EBADMSG);
}

TEST(wifi_wpa_cmdline)
{
        /* Debian's wpa_supplicant@.service and ifupdown's forms, -N groups */
        static const char a[] = "/sbin/wpa_supplicant\0-c/etc/wpa_supplicant/wpa_supplicant-wlan0"
                                ".conf\0-Dnl80211,wext\0-iwlan0\0";
        static const char b[] = "wpa_supplicant\0-B\0-i\0eth0\0-c\0/etc/eth.conf\0-N\0-i\0wlan0"
                                "\0-c\0wlan.conf\0-D\0nl80211\0";
        static const char nm[] = "/sbin/wpa_supplicant\0-u\0-s\0-O\0DIR=/run/wpa_supplicant "
                                 "GROUP=netdev\0";
        char *p = NULL;

        ASSERT_OK(wifi_wpa_cmdline_config(a, sizeof(a) - 1, "wlan0", &p));
        ASSERT_STREQ(p, "/etc/wpa_supplicant/wpa_supplicant-wlan0.conf");
        free(p);
        ASSERT_OK(wifi_wpa_cmdline_config(b, sizeof(b) - 1, "wlan0", &p));
        ASSERT_STREQ(p, "wlan.conf");
        free(p);
        ASSERT_OK(wifi_wpa_cmdline_config(b, sizeof(b) - 1, "eth0", &p));
        ASSERT_STREQ(p, "/etc/eth.conf");
        free(p);
        ASSERT_EQ(wifi_wpa_cmdline_config(b, sizeof(b) - 1, "wlan1", &p), -ENOENT);
        /* NetworkManager's supplicant has no file (D-Bus interfaces): nothing to check */
        ASSERT_EQ(wifi_wpa_cmdline_config(nm, sizeof(nm) - 1, "wlan0", &p), -ENOENT);
        ASSERT_EQ(wifi_wpa_cmdline_config("-i", 2, "wlan0", &p), -ENOENT);
}
