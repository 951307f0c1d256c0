/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-wifi-nm-message.h"

int32_t wifi_nm_strength_to_dbm(uint8_t strength)
{
        /* NM: quality = 100 - |clamp(dBm, -100, -40) + 40| * 100 / 60 */
        if (strength > 100)
                strength = 100;
        return -100 + (int32_t)((strength * 60 + 50) / 100);
}

WifiSecurity wifi_nm_security(uint32_t flags, uint32_t wpa, uint32_t rsn)
{
        uint32_t km = wpa | rsn;

        if (km & (NM_KM_8021X | NM_KM_SUITE_B))
                return WIFI_SECURITY_ENTERPRISE;
        if ((km & NM_KM_SAE) && (km & NM_KM_PSK))
                return WIFI_SECURITY_WPA2_WPA3;
        if (km & NM_KM_SAE)
                return WIFI_SECURITY_WPA3;
        if ((rsn & NM_KM_PSK))
                return WIFI_SECURITY_WPA2;
        if ((wpa & NM_KM_PSK))
                return WIFI_SECURITY_WPA;
        if (km & NM_KM_OWE)
                return WIFI_SECURITY_OWE;
        if (flags & NM_AP_PRIVACY)
                return WIFI_SECURITY_WEP;
        return WIFI_SECURITY_OPEN;
}

int nm_read_paths(sd_bus_message *m, char ***ret, size_t *n)
{
        const char *p;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "o");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(m, "o", &p)) > 0) {
                char **a = realloc(*ret, (*n + 1) * sizeof(char *));
                if (!a)
                        return -ENOMEM;
                *ret = a;
                a[*n] = strdup(p);
                if (!a[*n])
                        return -ENOMEM;
                (*n)++;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

int nm_read_ap(sd_bus_message *m, NmAp *ap)
{
        const char *key;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                if (streq(key, "Ssid")) {
                        const void *p;
                        size_t n;
                        r = sd_bus_message_enter_container(m, 'v', "ay");
                        if (r >= 0)
                                r = sd_bus_message_read_array(m, 'y', &p, &n);
                        if (r < 0)
                                return r;
                        ap->ssid_len = MIN(n, (size_t)WIFI_SSID_MAX);
                        memcpy(ap->ssid, p, ap->ssid_len);
                        r = sd_bus_message_exit_container(m);
                } else if (streq(key, "Flags"))
                        r = sd_bus_message_read(m, "v", "u", &ap->flags);
                else if (streq(key, "WpaFlags"))
                        r = sd_bus_message_read(m, "v", "u", &ap->wpa);
                else if (streq(key, "RsnFlags"))
                        r = sd_bus_message_read(m, "v", "u", &ap->rsn);
                else if (streq(key, "Frequency"))
                        r = sd_bus_message_read(m, "v", "u", &ap->freq);
                else if (streq(key, "Strength"))
                        r = sd_bus_message_read(m, "v", "y", &ap->strength);
                else
                        r = sd_bus_message_skip(m, "v");
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

/* One profile's settings: the Wi-Fi ones are kept (type 802-11-wireless, infrastructure). */
int nm_read_known(sd_bus_message *m, NmKnown *k, bool *is_wifi)
{
        const char *setting, *key;
        int r;

        *is_wifi = false;
        r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
                r = sd_bus_message_read(m, "s", &setting);
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'a', "{sv}");
                if (r < 0)
                        return r;
                while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                        const char *s;
                        int b;
                        r = sd_bus_message_read(m, "s", &key);
                        if (r < 0)
                                return r;
                        if (streq(setting, "connection") && streq(key, "type")) {
                                r = sd_bus_message_read(m, "v", "s", &s);
                                if (r >= 0)
                                        *is_wifi = streq(s, "802-11-wireless");
                        } else if (streq(setting, "connection") && streq(key, "autoconnect")) {
                                r = sd_bus_message_read(m, "v", "b", &b);
                                k->autoconnect = b;
                        } else if (streq(setting, "connection") &&
                                   streq(key, "autoconnect-priority"))
                                r = sd_bus_message_read(m, "v", "i", &k->priority);
                        else if (streq(setting, "connection") && streq(key, "timestamp"))
                                r = sd_bus_message_read(m, "v", "t", &k->timestamp);
                        else if (streq(setting, "802-11-wireless") && streq(key, "ssid")) {
                                const void *p;
                                size_t n;
                                r = sd_bus_message_enter_container(m, 'v', "ay");
                                if (r >= 0)
                                        r = sd_bus_message_read_array(m, 'y', &p, &n);
                                if (r >= 0) {
                                        k->ssid_len = MIN(n, (size_t)WIFI_SSID_MAX);
                                        memcpy(k->ssid, p, k->ssid_len);
                                        r = sd_bus_message_exit_container(m);
                                }
                        } else if (streq(setting, "802-11-wireless") && streq(key, "hidden")) {
                                r = sd_bus_message_read(m, "v", "b", &b);
                                k->hidden = b;
                        } else if (streq(setting, "802-11-wireless-security") &&
                                   streq(key, "key-mgmt")) {
                                r = sd_bus_message_read(m, "v", "s", &s);
                                if (r >= 0 && free_and_strdup(&k->key_mgmt, s) < 0)
                                        r = -ENOMEM;
                        } else
                                r = sd_bus_message_skip(m, "v");
                        if (r < 0)
                                return r;
                        r = sd_bus_message_exit_container(m);
                        if (r < 0)
                                return r;
                }
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

WifiSecurity nm_known_security(const NmKnown *k)
{
        if (!k->key_mgmt || streq(k->key_mgmt, "none"))
                return k->key_mgmt ? WIFI_SECURITY_WEP : WIFI_SECURITY_OPEN;
        if (streq(k->key_mgmt, "sae"))
                return WIFI_SECURITY_WPA3;
        if (streq(k->key_mgmt, "wpa-psk"))
                return WIFI_SECURITY_WPA2;
        if (streq(k->key_mgmt, "owe"))
                return WIFI_SECURITY_OWE;
        return WIFI_SECURITY_ENTERPRISE;
}

/* Update2 with the profile's settings as read, one connection key replaced (NM replaces the
 * whole profile; secrets not sent are kept). */
int nm_append_update(sd_bus_message *u, sd_bus_message *settings, const char *key, char type,
                     const void *value)
{
        const char *setting, *k;
        int r;

        r = sd_bus_message_rewind(settings, true);
        if (r >= 0)
                r = sd_bus_message_enter_container(settings, 'a', "{sa{sv}}");
        if (r >= 0)
                r = sd_bus_message_open_container(u, 'a', "{sa{sv}}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(settings, 'e', "sa{sv}")) > 0) {
                r = sd_bus_message_read(settings, "s", &setting);
                if (r >= 0)
                        r = sd_bus_message_open_container(u, 'e', "sa{sv}");
                if (r >= 0)
                        r = sd_bus_message_append(u, "s", setting);
                if (r >= 0)
                        r = sd_bus_message_enter_container(settings, 'a', "{sv}");
                if (r >= 0)
                        r = sd_bus_message_open_container(u, 'a', "{sv}");
                if (r < 0)
                        return r;
                while ((r = sd_bus_message_enter_container(settings, 'e', "sv")) > 0) {
                        r = sd_bus_message_read(settings, "s", &k);
                        if (r < 0)
                                return r;
                        if (streq(setting, "connection") && streq(k, key))
                                r = sd_bus_message_skip(settings, "v");
                        else {
                                r = sd_bus_message_open_container(u, 'e', "sv");
                                if (r >= 0)
                                        r = sd_bus_message_append(u, "s", k);
                                if (r >= 0)
                                        r = sd_bus_message_copy(u, settings, false);
                                if (r >= 0)
                                        r = sd_bus_message_close_container(u);
                        }
                        if (r >= 0)
                                r = sd_bus_message_exit_container(settings);
                        if (r < 0)
                                return r;
                }
                if (r >= 0 && streq(setting, "connection")) {
                        if (type == 'b')
                                r = sd_bus_message_append(u, "{sv}", key, "b", *(const int *)value);
                        else
                                r = sd_bus_message_append(u, "{sv}", key, "i",
                                                          *(const int32_t *)value);
                }
                for (int i = 0; r >= 0 && i < 2; i++)
                        r = sd_bus_message_close_container(u);
                if (r >= 0)
                        r = sd_bus_message_exit_container(settings);
                if (r >= 0)
                        r = sd_bus_message_exit_container(settings);
                if (r < 0)
                        return r;
        }
        if (r >= 0)
                r = sd_bus_message_close_container(u);
        if (r >= 0)
                r = sd_bus_message_append(u, "u", 0u);
        if (r >= 0)
                r = sd_bus_message_append(u, "a{sv}", 0);
        return r;
}

int nm_read_share(sd_bus_message *m, WifiShare *s)
{
        const char *setting, *key, *psk;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
                r = sd_bus_message_read(m, "s", &setting);
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'a', "{sv}");
                while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                        r = sd_bus_message_read(m, "s", &key);
                        if (r >= 0 && streq(setting, "802-11-wireless-security") &&
                            streq(key, "psk")) {
                                r = sd_bus_message_read(m, "v", "s", &psk);
                                if (r >= 0 && !(s->passphrase = strdup(psk)))
                                        r = -ENOMEM;
                        } else if (r >= 0)
                                r = sd_bus_message_skip(m, "v");
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        return r;
}

static int append_ssid(sd_bus_message *m, const uint8_t *ssid, size_t len)
{
        int r = sd_bus_message_open_container(m, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", "ssid");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', ssid, len);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}

static int open_setting(sd_bus_message *m, const char *name)
{
        int r = sd_bus_message_open_container(m, 'e', "sa{sv}");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", name);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        return r;
}

static int close_setting(sd_bus_message *m)
{
        int r = sd_bus_message_close_container(m);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

/* The connection dict of research §1.a: for a visible network only what NM cannot learn from
 * the AP (never key-mgmt: NM picks wpa-psk or sae itself); for a hidden one everything. */
int nm_append_connection(sd_bus_message *m, const WifiJoinRequest *q, WifiSecurity sec)
{
        bool secured = sec != WIFI_SECURITY_OPEN && sec != WIFI_SECURITY_OWE;
        int r;

        r = sd_bus_message_open_container(m, 'a', "{sa{sv}}");
        if (r >= 0)
                r = open_setting(m, "connection");
        if (r >= 0)
                r = sd_bus_message_append(m, "{sv}", "autoconnect", "b", q->autoconnect);
        if (r >= 0)
                r = close_setting(m);
        if (r >= 0 && q->hidden) {
                r = open_setting(m, "802-11-wireless");
                if (r >= 0)
                        r = append_ssid(m, q->ssid, q->ssid_len);
                if (r >= 0)
                        r = sd_bus_message_append(m, "{sv}", "hidden", "b", 1);
                if (r >= 0)
                        r = close_setting(m);
        }
        if (r >= 0 && (secured || q->eap >= 0)) {
                r = open_setting(m, "802-11-wireless-security");
                if (r >= 0 && q->eap >= 0)
                        r = sd_bus_message_append(m, "{sv}", "key-mgmt", "s", "wpa-eap");
                else if (r >= 0 && q->hidden)
                        r = sd_bus_message_append(m, "{sv}", "key-mgmt", "s",
                                                  sec == WIFI_SECURITY_WPA3 ? "sae" : "wpa-psk");
                if (r >= 0 && q->eap < 0 && q->passphrase)
                        r = sd_bus_message_append(m, "{sv}", "psk", "s", q->passphrase);
                if (r >= 0)
                        r = close_setting(m);
        }
        if (r >= 0 && q->eap >= 0) {
                _cleanup_free_ char *ca = NULL;
                const char *eap = q->eap == WIFI_EAP_TTLS ? "ttls" : "peap";

                if (asprintf(&ca, "file://%s", q->ca_file ?: NM_SYSTEM_CA_FILE) < 0)
                        return -ENOMEM;
                r = open_setting(m, "802-1x");
                if (r >= 0)
                        r = sd_bus_message_append(m, "{sv}", "eap", "as", 1, eap);
                if (r >= 0 && q->identity)
                        r = sd_bus_message_append(m, "{sv}", "identity", "s", q->identity);
                if (r >= 0 && q->anonymous_identity)
                        r = sd_bus_message_append(m, "{sv}", "anonymous-identity", "s",
                                                  q->anonymous_identity);
                if (r >= 0 && q->password)
                        r = sd_bus_message_append(m, "{sv}", "password", "s", q->password);
                if (r >= 0)
                        r = sd_bus_message_append(m, "{sv}", "phase2-auth", "s",
                                                  q->phase2 ?: "mschapv2");
                if (r >= 0) { /* a path NUL-terminated in the byte array, as NM wants it */
                        r = sd_bus_message_open_container(m, 'e', "sv");
                        if (r >= 0)
                                r = sd_bus_message_append(m, "s", "ca-cert");
                        if (r >= 0)
                                r = sd_bus_message_open_container(m, 'v', "ay");
                        if (r >= 0)
                                r = sd_bus_message_append_array(m, 'y', ca, strlen(ca) + 1);
                        if (r >= 0)
                                r = sd_bus_message_close_container(m);
                        if (r >= 0)
                                r = sd_bus_message_close_container(m);
                }
                if (r >= 0 && q->domain)
                        r = sd_bus_message_append(m, "{sv}", "domain-suffix-match", "s", q->domain);
                if (r >= 0)
                        r = close_setting(m);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        return r;
}
