/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-wifi-dpp.h"
#include "roamd-wifi-wpa-parse.h"

void wifi_dpp_credential_erase(WifiDppCredential *c)
{
        if (c)
                explicit_bzero(c, sizeof(*c));
}

int wifi_dpp_akm_security(const char *akm, WifiSecurity *ret)
{
        /* hostap's dpp_akm_str(): "psk", "sae", "psk+sae", "dpp", "dpp+sae", "dpp+psk+sae",
         * "dot1x". A DPP AKM joins with a connector (roamd's joins carry a passphrase), but the
         * mixed ones carry the passphrase too. */
        if (streq(akm, "psk"))
                *ret = WIFI_SECURITY_WPA2;
        else if (streq(akm, "sae") || streq(akm, "dpp+sae"))
                *ret = WIFI_SECURITY_WPA3;
        else if (streq(akm, "psk+sae") || streq(akm, "dpp+psk+sae"))
                *ret = WIFI_SECURITY_WPA2_WPA3;
        else
                return -EOPNOTSUPP;
        return 0;
}

static int unhex(char c)
{
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
}

int wifi_dpp_pass_decode(const char *hex, WifiDppCredential *c)
{
        size_t n = strlen(hex);
        char p[64];

        /* wpa_snprintf_hex() of the passphrase: two lowercase digits a byte */
        if (n % 2 || n / 2 < 8 || n / 2 > 63)
                return -EBADMSG;
        for (size_t i = 0; i < n / 2; i++) {
                int hi = unhex(hex[2 * i]), lo = unhex(hex[2 * i + 1]);
                if (hi < 0 || lo < 0 || hi * 16 + lo < 0x20 || hi * 16 + lo > 0x7e) {
                        explicit_bzero(p, sizeof(p));
                        return -EBADMSG; /* a WPA passphrase is printable ASCII */
                }
                p[i] = (char)(hi * 16 + lo);
        }
        memcpy(c->passphrase, p, n / 2);
        c->passphrase[n / 2] = 0;
        c->passphrase_len = n / 2;
        explicit_bzero(p, sizeof(p));
        return 0;
}

int wifi_dpp_psk_decode(const char *hex, WifiDppCredential *c)
{
        if (strlen(hex) != 64)
                return -EBADMSG;
        for (size_t i = 0; i < 64; i++)
                if (unhex(hex[i]) < 0)
                        return -EBADMSG;
        memcpy(c->passphrase, hex, 64);
        c->passphrase[64] = 0;
        c->passphrase_len = 64;
        return 0;
}

int wifi_dpp_ssid_decode(const char *text, size_t len, WifiDppCredential *c)
{
        uint8_t ssid[WIFI_SSID_MAX];
        size_t n;
        uint32_t cp;

        if (wifi_wpa_ssid_decode(text, len, ssid, &n) < 0 || n == 0)
                return -EBADMSG;
        for (size_t i = 0; i < n;) {
                int k = roam_utf8_decode((const char *)ssid + i, n - i, &cp);
                if (k <= 0)
                        return -EBADMSG;
                i += (size_t)k;
        }
        memcpy(c->ssid, ssid, n);
        c->ssid_len = n;
        return 0;
}
