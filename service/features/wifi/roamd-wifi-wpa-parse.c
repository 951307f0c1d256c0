/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-wifi-wpa-parse.h"

#define WIFI_LIST_MAX 256

static int hexval(char c)
{
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : -1;
}

/* hostap's printf_decode(), as strict as the encoder is regular */
int wifi_wpa_ssid_decode(const char *text, size_t len, uint8_t ssid[WIFI_SSID_MAX], size_t *ret_len)
{
        size_t n = 0;

        for (size_t i = 0; i < len; i++) {
                uint8_t b = (uint8_t)text[i];

                if (b == '\\') {
                        if (++i >= len)
                                return -EBADMSG;
                        switch (text[i]) {
                        case '\\':
                        case '"':
                                b = (uint8_t)text[i];
                                break;
                        case 'n':
                                b = '\n';
                                break;
                        case 'r':
                                b = '\r';
                                break;
                        case 't':
                                b = '\t';
                                break;
                        case 'e':
                                b = 0x1b;
                                break;
                        case 'x':
                                if (i + 2 >= len || hexval(text[i + 1]) < 0 ||
                                    hexval(text[i + 2]) < 0)
                                        return -EBADMSG;
                                b = (uint8_t)(hexval(text[i + 1]) << 4 | hexval(text[i + 2]));
                                i += 2;
                                break;
                        default:
                                return -EBADMSG;
                        }
                } else if (b < 0x20 || b == 0x7f)
                        return -EBADMSG;
                if (n >= WIFI_SSID_MAX)
                        return -EBADMSG;
                ssid[n++] = b;
        }
        *ret_len = n;
        return 0;
}

void wifi_wpa_ssid_hex(const uint8_t *ssid, size_t len, char *out)
{
        for (size_t i = 0; i < len && i < WIFI_SSID_MAX; i++)
                snprintf(out + 2 * i, 3, "%02x", ssid[i]);
        out[2 * MIN(len, (size_t)WIFI_SSID_MAX)] = 0;
}

WifiSecurity wifi_wpa_flags_security(const char *flags)
{
        bool psk = false, sae = false, eap = false, owe = false, wep = false, wpa1 = false,
             rsn = false;

        /* each [..] token: [WPA-PSK-TKIP], [WPA2-PSK+SAE-CCMP], [RSN-SAE-CCMP], [WEP], ... */
        for (const char *p = strchr(flags, '['); p; p = strchr(p + 1, '[')) {
                const char *end = strchr(p, ']');
                char tok[128];
                size_t n;

                if (!end)
                        break;
                n = MIN((size_t)(end - p - 1), sizeof(tok) - 1);
                memcpy(tok, p + 1, n);
                tok[n] = 0;
                if (streq(tok, "WEP")) {
                        wep = true;
                        continue;
                }
                bool is_wpa1 = strncmp(tok, "WPA-", 4) == 0;
                if (!is_wpa1 && strncmp(tok, "WPA2-", 5) != 0 && strncmp(tok, "RSN-", 4) != 0)
                        continue; /* [ESS], [WPS], [OWE-TRANS] (an open BSS), [SAE-H2E], ... */
                if (is_wpa1)
                        wpa1 = true;
                else
                        rsn = true;
                const char *akm = strchr(tok, '-') + 1;
                /* the AKMs are '+'-separated up to the cipher's '-' */
                psk = psk || strstr(akm, "PSK") != NULL;
                sae = sae || strstr(akm, "SAE") != NULL;
                eap = eap || strstr(akm, "EAP") != NULL;
                owe = owe || strstr(akm, "OWE") != NULL;
        }
        if (eap)
                return WIFI_SECURITY_ENTERPRISE;
        if (sae && psk)
                return WIFI_SECURITY_WPA2_WPA3;
        if (sae)
                return WIFI_SECURITY_WPA3;
        if (psk)
                return rsn ? WIFI_SECURITY_WPA2 : WIFI_SECURITY_WPA;
        if (owe)
                return WIFI_SECURITY_OWE;
        if (wep)
                return WIFI_SECURITY_WEP;
        if (wpa1 || rsn)
                return WIFI_SECURITY_WPA2; /* an AKM roam does not name: say WPA2 */
        return WIFI_SECURITY_OPEN;
}

static int list_add(WifiNetworkList *list, const WifiNetwork *bss)
{
        for (size_t i = 0; i < list->n; i++) {
                WifiNetwork *w = &list->networks[i];

                if (w->ssid_len != bss->ssid_len || memcmp(w->ssid, bss->ssid, bss->ssid_len))
                        continue;
                w->n_bssids++;
                if (bss->has_signal && (!w->has_signal || bss->signal_dbm > w->signal_dbm)) {
                        w->signal_dbm = bss->signal_dbm;
                        w->has_signal = true;
                        w->freq_mhz = bss->freq_mhz;
                        w->security = bss->security;
                }
                return 0;
        }
        if (list->n >= WIFI_LIST_MAX)
                return 0; /* more than anyone reads: the strongest are likely in already */
        WifiNetwork *a = reallocarray(list->networks, list->n + 1, sizeof(WifiNetwork));
        if (!a)
                return -ENOMEM;
        list->networks = a;
        a[list->n++] = *bss;
        return 0;
}

int wifi_wpa_bss_parse(const char *reply, size_t len, WifiWpaBss **bsses, size_t *n,
                       bool *ret_complete, int64_t *ret_last_id)
{
        WifiWpaBss cur = {};
        int64_t cur_id = -1, last_id = -1;
        bool open = false, complete = len == 0;

        for (size_t i = 0; i < len;) {
                const char *line = reply + i, *nl = memchr(line, '\n', len - i);
                size_t ln = nl ? (size_t)(nl - line) : len - i;
                char val[256];
                const char *eq;

                i += ln + (nl ? 1 : 0);
                if (!nl)
                        break; /* a line cut short: the BSS it began is left out */
                if (complete)
                        return -EBADMSG; /* nothing follows the list's end */
                if (ln == 4 && (memcmp(line, "====", 4) == 0 || memcmp(line, "####", 4) == 0)) {
                        if (!open)
                                return -EBADMSG;
                        if (*n < WIFI_WPA_BSS_MAX) {
                                WifiWpaBss *a = reallocarray(*bsses, *n + 1, sizeof(WifiWpaBss));
                                if (!a)
                                        return -ENOMEM;
                                *bsses = a;
                                a[(*n)++] = cur;
                        }
                        open = false;
                        last_id = cur_id;
                        complete = line[0] == '#';
                        continue;
                }
                if (ln == 0)
                        continue;
                eq = memchr(line, '=', ln);
                if (!eq || (size_t)(line + ln - eq - 1) >= sizeof(val))
                        return -EBADMSG;
                if (!open) {
                        cur = (WifiWpaBss){
                            .n = {.security = WIFI_SECURITY_OPEN, .in_range = true, .n_bssids = 1}};
                        cur_id = -1;
                        open = true;
                }
                size_t vn = (size_t)(line + ln - eq - 1);
                memcpy(val, eq + 1, vn);
                val[vn] = 0;
                size_t kn = (size_t)(eq - line);
                if (kn == 2 && memcmp(line, "id", 2) == 0) {
                        char *end;
                        unsigned long v = strtoul(val, &end, 10);
                        if (end == val || *end || val[0] == '-' || v > UINT32_MAX)
                                return -EBADMSG;
                        cur_id = (int64_t)v;
                } else if (kn == 5 && memcmp(line, "bssid", 5) == 0) {
                        unsigned b[6];
                        int used = 0;
                        if (vn != 17 ||
                            sscanf(val, "%2x:%2x:%2x:%2x:%2x:%2x%n", &b[0], &b[1], &b[2], &b[3],
                                   &b[4], &b[5], &used) != 6 ||
                            used != 17)
                                return -EBADMSG;
                        for (size_t k = 0; k < 6; k++)
                                cur.bssid[k] = (uint8_t)b[k];
                        cur.has_bssid = true;
                } else if (kn == 4 && memcmp(line, "ssid", 4) == 0) {
                        if (wifi_wpa_ssid_decode(val, vn, cur.n.ssid, &cur.n.ssid_len) < 0)
                                return -EBADMSG;
                } else if (kn == 5 && memcmp(line, "level", 5) == 0) {
                        char *end;
                        long v = strtol(val, &end, 10);
                        if (end == val || *end || v < -200 || v > 100)
                                return -EBADMSG;
                        cur.n.signal_dbm = (int32_t)v;
                        cur.n.has_signal = true;
                } else if (kn == 4 && memcmp(line, "freq", 4) == 0) {
                        char *end;
                        unsigned long v = strtoul(val, &end, 10);
                        if (end == val || *end || v > 100000)
                                return -EBADMSG;
                        cur.n.freq_mhz = (uint32_t)v;
                } else if (kn == 5 && memcmp(line, "flags", 5) == 0)
                        cur.n.security = wifi_wpa_flags_security(val);
        }
        if (ret_complete)
                *ret_complete = complete;
        if (ret_last_id)
                *ret_last_id = last_id;
        return 0;
}

static bool bssid_named(const WifiWpaBss *bsses, size_t n, const WifiWpaBss *hidden)
{
        for (size_t i = 0; i < n; i++)
                if (bsses[i].n.ssid_len > 0 && bsses[i].has_bssid &&
                    memcmp(bsses[i].bssid, hidden->bssid, 6) == 0)
                        return true;
        return false;
}

int wifi_wpa_bss_group(const WifiWpaBss *bsses, size_t n, WifiNetworkList *list)
{
        int r;

        for (size_t i = 0; i < n; i++) {
                if (bsses[i].n.ssid_len == 0 && bsses[i].has_bssid &&
                    bssid_named(bsses, n, &bsses[i]))
                        continue;
                r = list_add(list, &bsses[i].n);
                if (r < 0)
                        return r;
        }
        return 0;
}

int wifi_wpa_list_parse(const char *reply, size_t len, WifiWpaKnown *known, size_t max,
                        size_t *ret_n)
{
        size_t k = 0, i;
        const char *nl = memchr(reply, '\n', len);

        if (!nl || strncmp(reply, "network id", 10) != 0)
                return -EBADMSG;
        for (i = (size_t)(nl - reply) + 1; i < len;) {
                const char *line = reply + i, *end = memchr(line, '\n', len - i);
                size_t n = end ? (size_t)(end - line) : len - i;
                const char *t1, *t2, *t3;
                char idtext[12];

                i += n + (end ? 1 : 0);
                if (n == 0)
                        continue;
                t1 = memchr(line, '\t', n);
                t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(line + n - t1 - 1)) : NULL;
                t3 = t2 ? memchr(t2 + 1, '\t', (size_t)(line + n - t2 - 1)) : NULL;
                if (!t3 || (size_t)(t1 - line) >= sizeof(idtext) || t1 == line)
                        return -EBADMSG;
                if (k >= max)
                        break;
                WifiWpaKnown *w = &known[k];
                memcpy(idtext, line, (size_t)(t1 - line));
                idtext[t1 - line] = 0;
                char *idend;
                long id = strtol(idtext, &idend, 10);
                if (*idend || id < 0 || id > INT32_MAX)
                        return -EBADMSG;
                *w = (WifiWpaKnown){.id = (int)id};
                if (wifi_wpa_ssid_decode(t1 + 1, (size_t)(t2 - t1 - 1), w->ssid, &w->ssid_len) < 0)
                        return -EBADMSG;
                size_t fl = (size_t)(line + n - t3 - 1);
                char flags[128];
                snprintf(flags, sizeof(flags), "%.*s", (int)MIN(fl, sizeof(flags) - 1), t3 + 1);
                w->disabled = strstr(flags, "[DISABLED]") != NULL;
                w->current = strstr(flags, "[CURRENT]") != NULL;
                w->temp_disabled = strstr(flags, "[TEMP-DISABLED]") != NULL;
                k++;
        }
        *ret_n = k;
        return 0;
}

int wifi_wpa_cmdline_config(const char *cmdline_in, size_t len, const char *ifname, char **ret)
{
        _cleanup_free_ char *cmdline = NULL;
        const char *conf = NULL;
        bool mine = false;

        /* the last argument of a command line read from /proc ends with a NUL, but one cut
         * at the buffer's end (or any outside input) need not: parse a terminated copy */
        cmdline = malloc(len + 1);
        if (!cmdline)
                return -ENOMEM;
        memcpy(cmdline, cmdline_in, len);
        cmdline[len] = 0;
        for (size_t i = 0; i < len;) {
                const char *a = cmdline + i;
                size_t n = strlen(a);
                const char *next = i + n + 1 < len ? cmdline + i + n + 1 : NULL;
                bool takes_next = false;

                if (streq(a, "-N")) { /* the next interface's options */
                        if (mine && conf)
                                break;
                        mine = false;
                        conf = NULL;
                } else if (strncmp(a, "-i", 2) == 0) {
                        const char *v = a[2] ? a + 2 : next;
                        takes_next = !a[2];
                        mine = mine || (v && streq(v, ifname));
                } else if (strncmp(a, "-c", 2) == 0) {
                        conf = a[2] ? a + 2 : next;
                        takes_next = !a[2];
                }
                i += n + 1;
                if (takes_next && next)
                        i += strlen(next) + 1;
        }
        if (!mine || !conf || !*conf)
                return -ENOENT;
        *ret = strdup(conf);
        return *ret ? 0 : -ENOMEM;
}
