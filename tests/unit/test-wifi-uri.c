/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "roamd-wifi-uri.h"
#include "test.h"

static int parse(const char *s, WifiUri *u, char *err)
{
        return wifi_uri_parse(s, strlen(s), u, err, WIFI_URI_ERROR_MAX);
}

static bool ssid_is(const WifiUri *u, const char *s)
{
        return u->ssid_len == strlen(s) && memcmp(u->ssid, s, strlen(s)) == 0;
}

TEST(wifi_uri_zxing_and_networkmanager)
{
        WifiUri u;
        char err[WIFI_URI_ERROR_MAX];

        /* NetworkManager's share text (its test's shape), the key long enough for WPA */
        ASSERT_OK(parse("WIFI:T:WPA;S:MyNet;P:passXY12;H:true;;", &u, err));
        ASSERT_TRUE(ssid_is(&u, "MyNet"));
        ASSERT_EQ(u.security, WIFI_SECURITY_PSK);
        ASSERT_STREQ(u.passphrase, "passXY12");
        ASSERT_TRUE(u.hidden);
        ASSERT_TRUE(!u.raw_psk);

        /* ZXing's escapes: \ before \ ; , " : (NM's test SSID a;b:c,d\e"f) */
        ASSERT_OK(parse("WIFI:S:a\\;b\\:c\\,d\\\\e\\\"f;T:WPA;P:hello\\;there;;", &u, err));
        ASSERT_TRUE(ssid_is(&u, "a;b:c,d\\e\"f"));
        ASSERT_STREQ(u.passphrase, "hello;there");

        /* an all-hex passphrase in quotes is a passphrase, not a raw key */
        ASSERT_OK(parse("WIFI:T:WPA;S:x;P:\"deadbeef\";;", &u, err));
        ASSERT_STREQ(u.passphrase, "deadbeef");
        ASSERT_TRUE(!u.raw_psk);
        /* 64 hex digits unquoted: a raw PSK (Android) */
        ASSERT_OK(parse("WIFI:T:WPA;S:x;P:0123456789abcdef0123456789abcdef0123456789abcdef0123"
                        "456789abcdef;;",
                        &u, err));
        ASSERT_TRUE(u.raw_psk);

        /* open: nopass or no T:, any order, the last ; may be missing */
        ASSERT_OK(parse("WIFI:S:Cafe Guest;T:nopass;;", &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_OPEN);
        ASSERT_OK(parse("WIFI:S:Cafe;", &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_OPEN);
        ASSERT_TRUE(!u.hidden);
        ASSERT_OK(parse("wifi:S:Cafe", &u, err));

        /* ZXing's WEP example */
        ASSERT_OK(parse("WIFI:T:WEP;S:TenChars;P:0123456789;;", &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_WEP);

        /* a percent is a character: the WPA3 specification's %-encoding is not decoded */
        ASSERT_OK(parse("WIFI:T:WPA;S:100%25;P:pa%3Bss99;;", &u, err));
        ASSERT_TRUE(ssid_is(&u, "100%25"));
        ASSERT_STREQ(u.passphrase, "pa%3Bss99");

        /* a trailing newline from a scanner */
        ASSERT_OK(parse("WIFI:S:x;;\n", &u, err));
        wifi_uri_erase(&u);
}

TEST(wifi_uri_android)
{
        WifiUri u;
        char err[WIFI_URI_ERROR_MAX];

        /* AOSP WifiUriParser's forms: T:SAE, R:1 (transition disable) */
        ASSERT_OK(parse("WIFI:S:WifiSSID;T:SAE;P:password;;", &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_WPA3);
        ASSERT_TRUE(u.wpa3_only);
        ASSERT_OK(parse("WIFI:S:WifiSSID;T:WPA;R:1;P:password;;", &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_WPA3);
        ASSERT_OK(parse("WIFI:S:WifiSSID;T:WPA;R:0;P:password;;", &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_PSK);
        /* SAE passwords are not bound to 8..63 */
        ASSERT_OK(parse("WIFI:T:SAE;S:x;P:short;;", &u, err));
        ASSERT_STREQ(u.passphrase, "short");
}

TEST(wifi_uri_enterprise)
{
        WifiUri u;
        char err[WIFI_URI_ERROR_MAX];

        ASSERT_OK(parse("WIFI:T:WPA2-EAP;S:eduroam;E:PEAP;PH2:MSCHAPV2;A:anon;I:alice;P:secret;;",
                        &u, err));
        ASSERT_EQ(u.security, WIFI_SECURITY_ENTERPRISE);
        ASSERT_EQ(u.eap, WIFI_EAP_PEAP);
        ASSERT_STREQ(u.phase2, "MSCHAPV2");
        ASSERT_STREQ(u.identity, "alice");
        ASSERT_STREQ(u.anonymous_identity, "anon");
        ASSERT_STREQ(u.passphrase, "secret");
        /* ZXing: an old writer's phase 2 in H: */
        ASSERT_OK(parse("WIFI:S:e;E:TTLS;H:PAP;I:bob;P:pw;;", &u, err));
        ASSERT_EQ(u.eap, WIFI_EAP_TTLS);
        ASSERT_STREQ(u.phase2, "PAP");
        ASSERT_TRUE(!u.hidden);
}

TEST(wifi_uri_refused)
{
        static const struct {
                const char *text, *needle;
        } bad[] = {
            {"WIFI:T:WPA;P:password;;", "without a network name"},
            {"WIFI:S:;;", "without a network name"},
            {"WIFI:S:a;S:b;;", "given twice"},
            {"WIFI:T:WPA;S:x;P:short;;", "8 to 63"},
            {"WIFI:T:WPA;S:x;P:\x01\x02\x03\x04\x05\x06\x07\x08;;", "8 to 63"},
            {"WIFI:S:x;P:secret;;", "open network"},
            {"WIFI:T:WEP;S:x;P:abc;;", "WEP key"},
            {"WIFI:T:WPA;S:x;H:maybe;P:password;;", "H: must be"},
            {"WIFI:T:XYZ;S:x;;", "unknown type"},
            {"WIFI:S:x;E:TLS;;", "not supported"},
            {"WIFI:T:SAE;S:x;I:id;P:pw;;", "identifiers"},
            {"WIFI:S:x;;junk", "goes on after"},
            {"WIFI:S:x\\", "lone backslash"},
            {"WIFI:S:123456789012345678901234567890123;;", "at most 32"},
            {"WIFI:Sx;;", "NAME:"},
            {"HTTP://x", "must start with WIFI:"},
            {"WIFI:T:SAE;S:x;P:a\xe2\x80\xae"
             "b;;",
             "must be text"},
        };
        WifiUri u;
        char err[WIFI_URI_ERROR_MAX];

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = 0;
                if (parse(bad[i].text, &u, err) != -EINVAL)
                        TEST_FAIL("case %zu accepted", i);
                if (!strstr(err, bad[i].needle))
                        TEST_FAIL("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].needle);
        }
        /* a NUL inside the text */
        ASSERT_EQ(wifi_uri_parse("WIFI:S:a\0b;;", 12, &u, err, sizeof(err)), -EINVAL);
}

TEST(wifi_uri_format_round_trip)
{
        char out[512];
        WifiUri u;
        char err[WIFI_URI_ERROR_MAX];

        ASSERT_OK(wifi_uri_format((const uint8_t *)"MyNet", 5, WIFI_SECURITY_WPA2, "passXY", true,
                                  out, sizeof(out)));
        ASSERT_STREQ(out, "WIFI:T:WPA;S:MyNet;P:passXY;H:true;;");
        ASSERT_OK(wifi_uri_format((const uint8_t *)"a;b:c,d\\e\"f", 11, WIFI_SECURITY_OPEN, NULL,
                                  false, out, sizeof(out)));
        ASSERT_STREQ(out, "WIFI:T:nopass;S:a\\;b\\:c\\,d\\\\e\\\"f;;");
        ASSERT_OK(wifi_uri_format((const uint8_t *)"x", 1, WIFI_SECURITY_WPA3, "deadbeef", false,
                                  out, sizeof(out)));
        ASSERT_STREQ(out, "WIFI:T:WPA;S:x;P:\"deadbeef\";;");
        ASSERT_OK(parse(out, &u, err));
        ASSERT_STREQ(u.passphrase, "deadbeef");
        ASSERT_TRUE(!u.raw_psk);
        ASSERT_OK(wifi_uri_format((const uint8_t *)"Home", 4, WIFI_SECURITY_WPA2_WPA3,
                                  "it's; a \"key\"", false, out, sizeof(out)));
        ASSERT_OK(parse(out, &u, err));
        ASSERT_STREQ(u.passphrase, "it's; a \"key\"");
        ASSERT_EQ(wifi_uri_format((const uint8_t *)"e", 1, WIFI_SECURITY_ENTERPRISE, "x", false,
                                  out, sizeof(out)),
                  -EINVAL);
        ASSERT_EQ(wifi_uri_format((const uint8_t *)"Home", 4, WIFI_SECURITY_WPA2, "password1",
                                  false, out, 20),
                  -ENOBUFS);
        wifi_uri_erase(&u);
}

static int dpp(const char *s, DppUri *d, char *err)
{
        return dpp_uri_parse(s, strlen(s), d, err, WIFI_URI_ERROR_MAX);
}

TEST(dpp_uri)
{
        DppUri d;
        char err[WIFI_URI_ERROR_MAX];
        /* the example of hostap's README-DPP / the Easy Connect specification */
        const char *ex =
            "DPP:C:81/1,115/36;M:5254005828e5;V:2;I:SN=4774LH2b4044;"
            "K:MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgADURzxmttZoIRIPWGoQMV00XHWCAQIhXruVWOz0"
            "NjlkIA=;;";

        ASSERT_OK(dpp(ex, &d, err));
        ASSERT_STREQ(d.channels, "81/1,115/36");
        ASSERT_STREQ(d.mac, "52:54:00:58:28:e5");
        ASSERT_STREQ(d.info, "SN=4774LH2b4044");
        ASSERT_EQ(d.version, 2);
        ASSERT_EQ(d.key_len, 59u); /* a DER P-256 key: 30 39 ... */
        ASSERT_OK(dpp("DPP:K:MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgADURzxmttZoIRIPWGoQMV00XHWCAQIhXru"
                      "VWOz0NjlkIA=;;",
                      &d, err));
        ASSERT_OK(dpp("DPP:B:x;K:AAAA;;", &d, err)); /* unknown tokens skipped */

        static const struct {
                const char *text, *needle;
        } bad[] = {
            {"DPP:C:81/1;;", "without a public key"},
            {"DPP:K:AAAA;", "does not end with ;;"},
            {"DPP:K:AAAA", "does not end with ;"},
            {"DPP:K:AA*A;;", "not base64"},
            {"DPP:K:AAA;;", "not base64"},
            {"DPP:K:AAAA;K:AAAA;;", "two public keys"},
            {"DPP:M:5254005828;K:AAAA;;", "12 hex"},
            {"DPP:C:81-1;K:AAAA;;", "CLASS/CHANNEL"},
            {"DPP:V:0;K:AAAA;;", "1 to 255"},
            {"DPP:I:a\x1b"
             ";K:AAAA;;",
             "printable"},
            {"DPP:K:AAAA;;x", "goes on after"},
            {"DPP:xyz;;", "LETTER:"},
            {"WIFI:S:x;;", "must start with DPP:"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                err[0] = 0;
                if (dpp(bad[i].text, &d, err) != -EINVAL)
                        TEST_FAIL("case %zu accepted", i);
                if (!strstr(err, bad[i].needle))
                        TEST_FAIL("case %zu: \"%s\" lacks \"%s\"", i, err, bad[i].needle);
        }
}
