/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-wifi-wpa-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What wpa_supplicant answers about networks (BSS RANGE, LIST_NETWORKS) and a command line:
 * the reply of a daemon roamd does not control, and /proc of any process. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        WifiNetworkList l = {};
        WifiWpaBss *b = NULL;
        size_t nb = 0;
        WifiWpaKnown k[8];
        bool complete;
        int64_t last;
        size_t n;
        char *p = NULL;

        if (wifi_wpa_bss_parse((const char *)data, size, &b, &nb, &complete, &last) == 0 &&
            wifi_wpa_bss_group(b, nb, &l) == 0)
                for (size_t i = 0; i < l.n; i++)
                        if (l.networks[i].ssid_len > WIFI_SSID_MAX || l.networks[i].security < 0 ||
                            l.networks[i].n_bssids == 0)
                                abort();
        wifi_network_list_done(&l);
        free(b);
        if (wifi_wpa_list_parse((const char *)data, size, k, 8, &n) == 0)
                for (size_t i = 0; i < n; i++)
                        if (k[i].ssid_len > WIFI_SSID_MAX || k[i].id < 0)
                                abort();
        if (wifi_wpa_cmdline_config((const char *)data, size, "wlan0", &p) == 0 && !p[0])
                abort();
        free(p);
        return 0;
}
