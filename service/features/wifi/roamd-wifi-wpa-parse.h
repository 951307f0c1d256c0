/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What wpa_supplicant's control socket says about networks, read into the backend's types
 * (pure; table-tested in tests/unit/test-wifi-wpa-parse.c, fuzzed by fuzz-wifi-wpa):
 * - `BSS RANGE=ALL MASK=0x21887` and `BSS RANGE=N- MASK=0x21887` (id, bssid, freq, level,
 *   flags, ssid, and the "====" after each BSS: WPA_BSS_MASK_DELIM; "####" after the last one
 *   of the whole list) -> one WifiNetwork per SSID, the strongest BSS's values;
 * - `LIST_NETWORKS [LAST_ID=N]` (header, then id TAB ssid TAB bssid TAB flags) -> the known
 *   networks;
 * - an SSID as wpa_ssid_txt() prints it (printf_encode(): \\ \" \e \n \r \t \xNN) back to its
 *   bytes;
 * - the security of a BSS from its flags ([WPA2-PSK-CCMP], [WPA2-PSK+SAE-CCMP],
 *   [WPA2-SAE-CCMP], [WPA2-EAP-CCMP], [WPA2-OWE-CCMP], [WEP], [OWE-TRANS]...). */

#include "roamd-wifi-backend.h"

/* BSS's mask: WPA_BSS_MASK_ID|BSSID|FREQ|LEVEL|FLAGS|SSID|DELIM (src/common/wpa_ctrl.h) */
#define WIFI_WPA_BSS_MASK "0x21887"

/* -EBADMSG for a malformed SSID text. */
int wifi_wpa_ssid_decode(const char *text, size_t len, uint8_t ssid[WIFI_SSID_MAX],
                         size_t *ret_len);
/* The SSID as SET_NETWORK takes it: lowercase hex, no quotes (any bytes). out: 65 bytes. */
void wifi_wpa_ssid_hex(const uint8_t *ssid, size_t len, char *out);

WifiSecurity wifi_wpa_flags_security(const char *flags);

/* A BSS of a BSS RANGE reply. */
typedef struct WifiWpaBss {
        uint8_t bssid[6];
        bool has_bssid;
        WifiNetwork n; /* its SSID (none: a hidden AP's beacon), signal, band, security */
} WifiWpaBss;

/* Appends the BSSes of a BSS RANGE reply to *bsses (*n of them; WIFI_WPA_BSS_MAX at most).
 * wpa_supplicant answers in one 4096-byte reply the whole BSSes that fit
 * (ctrl_iface.c wpa_supplicant_ctrl_iface_bss(): print_bss_info() writes nothing of one that
 * does not), and ends the last BSS of its list with "####" instead of "====".
 * *ret_complete: the reply holds the list's end ("####", or nothing at all: no BSS from
 * there on); else the next page starts after *ret_last_id, the id of the last whole BSS
 * (-1: none). -EBADMSG for malformed text. */
#define WIFI_WPA_BSS_MAX 4096
int wifi_wpa_bss_parse(const char *reply, size_t len, WifiWpaBss **bsses, size_t *n,
                       bool *ret_complete, int64_t *ret_last_id);

/* The networks of the BSSes, appended to list: one per SSID with the strongest BSS's values.
 * A BSS without a name (a hidden AP's beacon) whose BSSID also has a named BSS (the probe
 * response that named it, once a network with scan_ssid=1 probed for it) is that network's,
 * not a hidden one: a joined hidden network is one row. */
int wifi_wpa_bss_group(const WifiWpaBss *bsses, size_t n, WifiNetworkList *list);

typedef struct WifiWpaKnown {
        int id;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        bool disabled, current, temp_disabled;
        int32_t priority; /* not in LIST_NETWORKS: GET_NETWORK N priority */
} WifiWpaKnown;

/* LIST_NETWORKS: up to max rows into known; *ret_n rows. -EBADMSG for malformed text. */
int wifi_wpa_list_parse(const char *reply, size_t len, WifiWpaKnown *known, size_t max,
                        size_t *ret_n);

/* The configuration file a wpa_supplicant command line (NUL-separated, /proc/PID/cmdline)
 * gives interface ifname: the -c of the -i ifname's group (groups are separated by -N).
 * *ret is a copy, possibly relative to the process's working directory. -ENOENT when that
 * command line does not run ifname or gives it no file. */
int wifi_wpa_cmdline_config(const char *cmdline, size_t len, const char *ifname, char **ret);
