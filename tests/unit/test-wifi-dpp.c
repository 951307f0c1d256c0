/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "roamd-client-wpa-parse.h"
#include "roamd-wifi-dpp.h"
#include "test.h"

TEST(wifi_dpp_akm)
{
        WifiSecurity s;

        /* hostap's dpp_akm_str() words */
        ASSERT_OK(wifi_dpp_akm_security("psk", &s));
        ASSERT_EQ(s, WIFI_SECURITY_WPA2);
        ASSERT_OK(wifi_dpp_akm_security("sae", &s));
        ASSERT_EQ(s, WIFI_SECURITY_WPA3);
        ASSERT_OK(wifi_dpp_akm_security("psk+sae", &s));
        ASSERT_EQ(s, WIFI_SECURITY_WPA2_WPA3);
        ASSERT_OK(wifi_dpp_akm_security("dpp+psk+sae", &s));
        ASSERT_EQ(s, WIFI_SECURITY_WPA2_WPA3);
        ASSERT_EQ(wifi_dpp_akm_security("dpp", &s), -EOPNOTSUPP);
        ASSERT_EQ(wifi_dpp_akm_security("dot1x", &s), -EOPNOTSUPP);
        ASSERT_EQ(wifi_dpp_akm_security("??", &s), -EOPNOTSUPP);
        ASSERT_EQ(wifi_dpp_akm_security("", &s), -EOPNOTSUPP);
}

TEST(wifi_dpp_pass_and_psk)
{
        WifiDppCredential c = {};

        /* wpa_snprintf_hex() of "right-pass-1" */
        ASSERT_OK(wifi_dpp_pass_decode("72696768742d706173732d31", &c));
        ASSERT_STREQ(c.passphrase, "right-pass-1");
        ASSERT_EQ(c.passphrase_len, 12u);
        ASSERT_OK(wifi_dpp_pass_decode("4142434445464748", &c)); /* 8, the shortest */
        ASSERT_STREQ(c.passphrase, "ABCDEFGH");
        ASSERT_EQ(wifi_dpp_pass_decode("41424344454647", &c), -EBADMSG);   /* 7 */
        ASSERT_EQ(wifi_dpp_pass_decode("414243444546474", &c), -EBADMSG);  /* odd */
        ASSERT_EQ(wifi_dpp_pass_decode("4142434445460a48", &c), -EBADMSG); /* a newline */
        ASSERT_EQ(wifi_dpp_pass_decode("41424344454647zz", &c), -EBADMSG);
        ASSERT_EQ(wifi_dpp_pass_decode("", &c), -EBADMSG);
        {
                char big[2 * 64 + 1];
                memset(big, '4', 128);
                big[128] = 0;
                ASSERT_EQ(wifi_dpp_pass_decode(big, &c), -EBADMSG); /* 64 characters */
                big[126] = 0;
                ASSERT_OK(wifi_dpp_pass_decode(big, &c)); /* 63 */
                ASSERT_EQ(c.passphrase_len, 63u);
        }
        ASSERT_OK(wifi_dpp_psk_decode(
            "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", &c));
        ASSERT_EQ(c.passphrase_len, 64u);
        ASSERT_STREQ(c.passphrase,
                     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
        ASSERT_EQ(wifi_dpp_psk_decode("0001", &c), -EBADMSG);
        ASSERT_EQ(wifi_dpp_psk_decode(
                      "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1g", &c),
                  -EBADMSG);
        wifi_dpp_credential_erase(&c);
        ASSERT_EQ(c.passphrase_len, 0u);
}

TEST(wifi_dpp_ssid)
{
        WifiDppCredential c = {};

        ASSERT_OK(wifi_dpp_ssid_decode("Cafe Guest ", 11, &c));
        ASSERT_EQ(c.ssid_len, 11u);
        ASSERT_TRUE(memcmp(c.ssid, "Cafe Guest ", 11) == 0);
        /* printf_encode() of UTF-8 bytes: \xNN, and it decodes to valid UTF-8 */
        ASSERT_OK(wifi_dpp_ssid_decode("Caf\\xc3\\xa9", 11, &c));
        ASSERT_EQ(c.ssid_len, 5u);
        ASSERT_TRUE(memcmp(c.ssid, "Caf\xc3\xa9", 5) == 0);
        ASSERT_OK(wifi_dpp_ssid_decode("a\\\"b", 4, &c));
        ASSERT_TRUE(memcmp(c.ssid, "a\"b", 3) == 0);
        /* not UTF-8, empty, malformed, too long */
        ASSERT_EQ(wifi_dpp_ssid_decode("\\xff\\xfeHome", 12, &c), -EBADMSG);
        ASSERT_EQ(wifi_dpp_ssid_decode("", 0, &c), -EBADMSG);
        ASSERT_EQ(wifi_dpp_ssid_decode("a\\q", 3, &c), -EBADMSG);
        ASSERT_EQ(wifi_dpp_ssid_decode("0123456789012345678901234567890123", 34, &c), -EBADMSG);
}

TEST(wifi_dpp_event_rest)
{
        WpaEvent e = {};

        /* the events as dpp_supplicant.c sends them: the SSID's spaces stay in rest */
        ASSERT_OK(wpa_event_parse("DPP-CONFOBJ-SSID  two  spaces ", 30, &e));
        ASSERT_STREQ(e.name, "DPP-CONFOBJ-SSID");
        ASSERT_STREQ(e.rest, " two  spaces ");
        wpa_event_done(&e);
        ASSERT_OK(wpa_event_parse("DPP-CONF-RECEIVED \n", 19, &e));
        ASSERT_STREQ(e.rest, "");
        wpa_event_done(&e);
        ASSERT_OK(wpa_event_parse("DPP-CONF-FAILED", 15, &e));
        ASSERT_STREQ(e.rest, "");
        wpa_event_done(&e);
        ASSERT_OK(wpa_event_parse("DPP-FAIL No Auth Confirm received", 33, &e));
        ASSERT_STREQ(e.rest, "No Auth Confirm received");
        wpa_event_done(&e);
        ASSERT_EQ(wpa_event_parse("DPP-FAIL a\n\nb", 13, &e), -EBADMSG);
}
