/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-client-wpa-parse.h"
#include "roamd-wifi-dpp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a DPP configurator (anyone in radio range) gets wpa_supplicant to say: an event line
 * read as roamd's enrollment reads it (name, rest), then its rest as the AKM, SSID, passphrase
 * and PSK of a configuration object. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        WpaEvent e = {};
        WifiDppCredential c = {};
        WifiSecurity s;

        if (wpa_event_parse((const char *)data, size, &e) < 0)
                return 0;
        if (!e.rest || strlen(e.rest) > size)
                abort();
        if (wifi_dpp_akm_security(e.rest, &s) == 0 && s < 0)
                abort();
        if (wifi_dpp_ssid_decode(e.rest, strlen(e.rest), &c) == 0 &&
            (c.ssid_len == 0 || c.ssid_len > WIFI_SSID_MAX))
                abort();
        if (wifi_dpp_pass_decode(e.rest, &c) == 0 &&
            (c.passphrase_len < 8 || c.passphrase_len > 63 ||
             strlen(c.passphrase) != c.passphrase_len))
                abort();
        if (wifi_dpp_psk_decode(e.rest, &c) == 0 && c.passphrase_len != 64)
                abort();
        wifi_dpp_credential_erase(&c);
        wpa_event_done(&e);
        return 0;
}
