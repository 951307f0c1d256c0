/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "roamd-wifi-owner.h"
#include "test.h"

static void answer(WifiOwnerAnswer *a, WifiOwner o, int error, bool manages, const char *why)
{
        a[o].asked = true;
        a[o].error = error;
        a[o].manages = manages;
        snprintf(a[o].why, sizeof(a[o].why), "%s", why);
}

TEST(wifi_owner_nm_first_even_with_a_wpa_socket)
{
        /* Debian: NM's supplicant has a control socket for wlan0 too; NM still owns it. */
        WifiOwnerAnswer a[_WIFI_OWNER_MAX] = {};
        char why[512];

        answer(a, WIFI_OWNER_NETWORKMANAGER, 0, true, "NetworkManager manages wlan0");
        answer(a, WIFI_OWNER_WPA_SUPPLICANT, 0, true, "wpa_supplicant answers on wlan0");
        ASSERT_EQ(wifi_owner_decide(_WIFI_OWNER_INVALID, a, why, sizeof(why)),
                  WIFI_OWNER_NETWORKMANAGER);
        ASSERT_STREQ(why, "NetworkManager manages wlan0");
}

TEST(wifi_owner_order)
{
        WifiOwnerAnswer a[_WIFI_OWNER_MAX] = {};
        char why[512];

        answer(a, WIFI_OWNER_NETWORKMANAGER, 0, false, "NetworkManager leaves wlan0 unmanaged");
        answer(a, WIFI_OWNER_IWD, 0, true, "iwd runs a station on wlan0");
        answer(a, WIFI_OWNER_WPA_SUPPLICANT, 0, true, "x");
        ASSERT_EQ(wifi_owner_decide(_WIFI_OWNER_INVALID, a, why, sizeof(why)), WIFI_OWNER_IWD);

        /* ConnMan before the socket, and named in words as not supported */
        memset(a, 0, sizeof(a));
        answer(a, WIFI_OWNER_NETWORKMANAGER, -ENOENT, false, "");
        answer(a, WIFI_OWNER_IWD, 0, false, "iwd is not running");
        answer(a, WIFI_OWNER_CONNMAN, 0, true, "ConnMan runs Wi-Fi");
        answer(a, WIFI_OWNER_WPA_SUPPLICANT, 0, true, "x");
        ASSERT_EQ(wifi_owner_decide(_WIFI_OWNER_INVALID, a, why, sizeof(why)), WIFI_OWNER_CONNMAN);
        ASSERT_TRUE(strstr(why, "cannot join through ConnMan yet") != NULL);

        /* the bare supplicant */
        memset(a, 0, sizeof(a));
        answer(a, WIFI_OWNER_NETWORKMANAGER, 0, false, "NetworkManager is not running");
        answer(a, WIFI_OWNER_IWD, 0, false, "iwd is not running");
        answer(a, WIFI_OWNER_CONNMAN, 0, false, "ConnMan is not running");
        answer(a, WIFI_OWNER_WPA_SUPPLICANT, 0, true, "wpa_supplicant answers on wlan0");
        ASSERT_EQ(wifi_owner_decide(_WIFI_OWNER_INVALID, a, why, sizeof(why)),
                  WIFI_OWNER_WPA_SUPPLICANT);
        ASSERT_STREQ(why, "wpa_supplicant answers on wlan0");
}

TEST(wifi_owner_none_says_every_reason)
{
        WifiOwnerAnswer a[_WIFI_OWNER_MAX] = {};
        char why[1024];

        answer(a, WIFI_OWNER_NETWORKMANAGER, 0, false, "NetworkManager is not running");
        answer(a, WIFI_OWNER_IWD, -ETIMEDOUT, false, "");
        answer(a, WIFI_OWNER_CONNMAN, 0, false, "ConnMan is not running");
        answer(a, WIFI_OWNER_WPA_SUPPLICANT, 0, false,
               "no wpa_supplicant control socket for wlan0");
        ASSERT_EQ(wifi_owner_decide(_WIFI_OWNER_INVALID, a, why, sizeof(why)), WIFI_OWNER_NONE);
        ASSERT_STREQ(why, "NetworkManager is not running; iwd did not answer (Connection timed "
                          "out); ConnMan is not running; no wpa_supplicant control socket for "
                          "wlan0");

        memset(a, 0, sizeof(a));
        ASSERT_EQ(wifi_owner_decide(_WIFI_OWNER_INVALID, a, why, sizeof(why)), WIFI_OWNER_NONE);
        ASSERT_STREQ(why, "Nobody runs Wi-Fi on this interface");
}

TEST(wifi_owner_override_asks_one_owner)
{
        WifiOwnerAnswer a[_WIFI_OWNER_MAX] = {};
        char why[512];

        /* Backend=wpa_supplicant: NM's answer does not count, the socket does */
        answer(a, WIFI_OWNER_NETWORKMANAGER, 0, true, "NetworkManager manages wlan0");
        answer(a, WIFI_OWNER_WPA_SUPPLICANT, 0, true, "wpa_supplicant answers on wlan0");
        ASSERT_EQ(wifi_owner_decide(WIFI_OWNER_WPA_SUPPLICANT, a, why, sizeof(why)),
                  WIFI_OWNER_WPA_SUPPLICANT);

        /* Backend=iwd without iwd: none, never another owner */
        memset(a, 0, sizeof(a));
        answer(a, WIFI_OWNER_NETWORKMANAGER, 0, true, "NetworkManager manages wlan0");
        answer(a, WIFI_OWNER_IWD, 0, false, "iwd is not running");
        ASSERT_EQ(wifi_owner_decide(WIFI_OWNER_IWD, a, why, sizeof(why)), WIFI_OWNER_NONE);
        ASSERT_STREQ(why, "iwd is not running; [WiFi] Backend=iwd asks iwd only");
}

TEST(wifi_words)
{
        ASSERT_STREQ(wifi_owner_to_string(WIFI_OWNER_WPA_SUPPLICANT), "wpa_supplicant");
        ASSERT_EQ(wifi_owner_from_string("networkmanager"), WIFI_OWNER_NETWORKMANAGER);
        ASSERT_EQ(wifi_security_from_string("wpa2/wpa3"), WIFI_SECURITY_WPA2_WPA3);
        ASSERT_STREQ(wifi_join_result_to_string(WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE),
                     "wrong-key-or-out-of-range");
        ASSERT_STREQ(wifi_secret_kind_to_string(WIFI_SECRET_IDENTITY_PASSWORD),
                     "identity+password");
        ASSERT_EQ(wifi_join_step_from_string("bogus"), _WIFI_JOIN_STEP_INVALID);
}

TEST(wifi_ssid_display)
{
        char out[WIFI_SSID_MAX * 4 + 1];

        ASSERT_EQ(wifi_ssid_to_display((const uint8_t *)"Home", 4, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "Home");
        ASSERT_EQ(wifi_ssid_to_display(NULL, 0, out, sizeof(out)), 0);
        ASSERT_STREQ(out, "(hidden network)");
        /* UTF-8 stays; a newline, a backslash, a broken byte and a bidi override do not */
        ASSERT_EQ(wifi_ssid_to_display((const uint8_t *)"caf\xc3\xa9\n\\\xff\xe2\x80\xae", 11, out,
                                       sizeof(out)),
                  0);
        ASSERT_STREQ(out, "caf\xc3\xa9\\x0a\\\\\\xff\\xe2\\x80\\xae");
        /* 32 control bytes fit the worst case */
        uint8_t ctl[32] = {};
        ASSERT_EQ(wifi_ssid_to_display(ctl, 32, out, sizeof(out)), 0);
        ASSERT_EQ(strlen(out), 128u);
}
