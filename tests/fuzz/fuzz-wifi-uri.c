/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-wifi-uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A QR code's text: a WIFI: or a DPP: URI (both parsers see every input). What WIFI: accepts
 * must format back into a text that parses to the same network and key. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char err[WIFI_URI_ERROR_MAX], out[1024];
        WifiUri u, v;
        DppUri d;

        if (dpp_uri_parse((const char *)data, size, &d, err, sizeof(err)) == 0 && d.key_len == 0)
                abort();
        if (wifi_uri_parse((const char *)data, size, &u, err, sizeof(err)) < 0)
                return 0;
        if (u.ssid_len == 0 || u.ssid_len > WIFI_SSID_MAX || u.passphrase_len > WIFI_URI_KEY_MAX ||
            strlen(u.passphrase) != u.passphrase_len)
                abort();
        if ((u.security == WIFI_SECURITY_PSK || u.security == WIFI_SECURITY_OPEN) &&
            memchr(u.ssid, 0, u.ssid_len) == NULL &&
            wifi_uri_format(u.ssid, u.ssid_len, u.security, u.passphrase, u.hidden, out,
                            sizeof(out)) == 0) {
                if (wifi_uri_parse(out, strlen(out), &v, err, sizeof(err)) < 0)
                        abort();
                if (v.ssid_len != u.ssid_len || memcmp(v.ssid, u.ssid, u.ssid_len) != 0 ||
                    strcmp(v.passphrase, u.passphrase) != 0 || v.hidden != u.hidden)
                        abort();
                wifi_uri_erase(&v);
        }
        wifi_uri_erase(&u);
        return 0;
}
