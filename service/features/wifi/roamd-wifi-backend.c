/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-wifi-backend.h"

static const char *const wifi_owner_table[_WIFI_OWNER_MAX] = {
    [WIFI_OWNER_NONE] = "none",       [WIFI_OWNER_NETWORKMANAGER] = "networkmanager",
    [WIFI_OWNER_IWD] = "iwd",         [WIFI_OWNER_WPA_SUPPLICANT] = "wpa_supplicant",
    [WIFI_OWNER_CONNMAN] = "connman",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_owner, WifiOwner);

static const char *const wifi_owner_name_table[_WIFI_OWNER_MAX] = {
    [WIFI_OWNER_NONE] = "nobody",     [WIFI_OWNER_NETWORKMANAGER] = "NetworkManager",
    [WIFI_OWNER_IWD] = "iwd",         [WIFI_OWNER_WPA_SUPPLICANT] = "wpa_supplicant",
    [WIFI_OWNER_CONNMAN] = "ConnMan",
};

const char *wifi_owner_to_name(WifiOwner o)
{
        if ((int)o < 0 || o >= _WIFI_OWNER_MAX)
                return NULL;
        return wifi_owner_name_table[o];
}

static const char *const wifi_security_table[_WIFI_SECURITY_MAX] = {
    [WIFI_SECURITY_OPEN] = "open",
    [WIFI_SECURITY_OWE] = "owe",
    [WIFI_SECURITY_WEP] = "wep",
    [WIFI_SECURITY_WPA] = "wpa",
    [WIFI_SECURITY_WPA2] = "wpa2",
    [WIFI_SECURITY_WPA3] = "wpa3",
    [WIFI_SECURITY_WPA2_WPA3] = "wpa2/wpa3",
    [WIFI_SECURITY_ENTERPRISE] = "enterprise",
    [WIFI_SECURITY_PSK] = "psk",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_security, WifiSecurity);

static const char *const wifi_eap_table[_WIFI_EAP_MAX] = {
    [WIFI_EAP_PEAP] = "peap",
    [WIFI_EAP_TTLS] = "ttls",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_eap, WifiEap);

static const char *const wifi_join_step_table[_WIFI_JOIN_STEP_MAX] = {
    [WIFI_JOIN_STEP_SCANNING] = "scanning",
    [WIFI_JOIN_STEP_ASSOCIATING] = "associating",
    [WIFI_JOIN_STEP_AUTHENTICATING] = "authenticating",
    [WIFI_JOIN_STEP_CONFIGURING] = "configuring",
    [WIFI_JOIN_STEP_CHECKING] = "checking",
    [WIFI_JOIN_STEP_ENROLLING] = "enrolling",
    [WIFI_JOIN_STEP_SHARING] = "sharing",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_join_step, WifiJoinStep);

static const char *const wifi_join_result_table[_WIFI_JOIN_RESULT_MAX] = {
    [WIFI_JOIN_CONNECTED] = "connected",
    [WIFI_JOIN_WRONG_KEY] = "wrong-key",
    [WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE] = "wrong-key-or-out-of-range",
    [WIFI_JOIN_AUTH_FAILED] = "auth-failed",
    [WIFI_JOIN_NOT_FOUND] = "not-found",
    [WIFI_JOIN_TIMEOUT] = "timeout",
    [WIFI_JOIN_CANCELED] = "canceled",
    [WIFI_JOIN_REFUSED] = "refused",
    [WIFI_JOIN_PORTAL] = "portal",
    [WIFI_JOIN_SHARED] = "shared",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_join_result, WifiJoinResult);

static const char *const wifi_secret_kind_table[_WIFI_SECRET_KIND_MAX] = {
    [WIFI_SECRET_PASSPHRASE] = "passphrase",
    [WIFI_SECRET_IDENTITY_PASSWORD] = "identity+password",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_secret_kind, WifiSecretKind);

static const char *const wifi_secret_why_table[_WIFI_SECRET_WHY_MAX] = {
    [WIFI_SECRET_WHY_FIRST] = "first",
    [WIFI_SECRET_WHY_WRONG_KEY] = "wrong-key",
    [WIFI_SECRET_WHY_KEY_FORMAT] = "key-format",
};
DEFINE_STRING_TABLE_LOOKUP(wifi_secret_why, WifiSecretWhy);

void wifi_network_list_done(WifiNetworkList *l)
{
        if (!l)
                return;
        free(l->networks);
        l->networks = NULL;
        l->n = 0;
}

static void erase_free(char **s, size_t len)
{
        if (!*s)
                return;
        explicit_bzero(*s, len ? len : strlen(*s));
        free(*s);
        *s = NULL;
}

void wifi_join_request_done(WifiJoinRequest *r)
{
        if (!r)
                return;
        erase_free(&r->passphrase, r->passphrase_len);
        erase_free(&r->password, 0);
        free(r->identity);
        free(r->anonymous_identity);
        free(r->phase2);
        free(r->ca_file);
        free(r->domain);
        explicit_bzero(r, sizeof(*r));
}

void wifi_share_done(WifiShare *s)
{
        if (!s)
                return;
        erase_free(&s->passphrase, 0);
}

int wifi_backend_init(WifiBackend *b, const WifiBackendOps *ops, Core *core, const char *ifname,
                      int ifindex, const WifiBackendEvents *events, void *userdata)
{
        *b = (WifiBackend){
            .ops = ops,
            .core = core,
            .ifindex = ifindex,
            .events = events,
            .userdata = userdata,
        };
        b->ifname = strdup(ifname);
        return b->ifname ? 0 : -ENOMEM;
}

void wifi_backend_done(WifiBackend *b)
{
        if (!b)
                return;
        free(b->ifname);
        b->ifname = NULL;
}

int wifi_ssid_to_display(const uint8_t *ssid, size_t len, char *out, size_t size)
{
        size_t o = 0;

        if (size == 0)
                return -ENOBUFS;
        if (len == 0)
                return snprintf(out, size, "(hidden network)") < (int)size ? 0 : -ENOBUFS;
        for (size_t i = 0; i < len;) {
                uint32_t c;
                int n = roam_utf8_decode((const char *)ssid + i, len - i, &c);
                char buf[8];
                size_t k;

                if (n > 0 && !roam_char_is_control(c) && !roam_char_is_format(c) && c != '\\') {
                        memcpy(buf, ssid + i, (size_t)n);
                        k = (size_t)n;
                } else {
                        /* one escaped byte: a broken or invisible character stays visible and
                         * cannot forge another name */
                        n = 1;
                        k = (size_t)snprintf(buf, sizeof(buf), ssid[i] == '\\' ? "\\\\" : "\\x%02x",
                                             ssid[i]);
                }
                if (o + k + 1 > size)
                        return -ENOBUFS;
                memcpy(out + o, buf, k);
                o += k;
                i += (size_t)n;
        }
        out[o] = 0;
        return 0;
}
