/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roamd-bt.h"
#include "roamd-client-wpa.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-bt-nfc.h"
#include "roamd-wifi-wpa-save.h"
#include "roamd-wifi.h"
#include "roamd-wpa.h"

/* The WiFi credentials of an NFC tag, added to wpa_supplicant over its control socket:
 * ADD_NETWORK, SET_NETWORK ssid/key_mgmt/proto/psk (or wep_key0), ENABLE_NETWORK per
 * credential, then one SAVE_CONFIG. Not WPS_NFC_TAG_READ: wpa_supplicant 2.10 answers it OK
 * for a WPA-Enterprise credential it then ignores and for a WEP one whose key it drops, names
 * no network id, and disables the other networks while it looks for the new one (written to
 * the file with update_config=1). With ADD_NETWORK roamd adds exactly what it showed the user,
 * knows the network's id, refuses what cannot work before sending anything, and removes what
 * it added when a later step fails, so a failure changes nothing. A network wpa_supplicant
 * already has under the same SSID (LIST_NETWORKS first) is the one the tag updates: it is
 * removed once its replacement is in, so touching a tag twice, or a tag with a new key,
 * leaves one network. */

#define NFC_WIFI_MAX (NDEF_MAX_CARRIERS * WSC_MAX_CREDENTIALS)
#define NFC_SETS_MAX 6
#define NFC_PHRASE   160
#define NFC_SENTENCE 256
#define NFC_OLD_MAX  8

typedef enum NfcStep {
        NFC_STEP_LIST,
        NFC_STEP_ADD,
        NFC_STEP_SET,
        NFC_STEP_ENABLE,
        NFC_STEP_REPLACE,
        NFC_STEP_SAVE,
        NFC_STEP_REMOVE,
        _NFC_STEP_MAX,
        _NFC_STEP_INVALID = -EINVAL,
} NfcStep;

typedef struct NfcCred {
        size_t carrier, index;
        const WscCredential *cr;
        char *sets[NFC_SETS_MAX]; /* "ssid 4142", "psk \"...\"": SET_NETWORK N <this> */
        size_t n_sets;
        int id;               /* the network's id once ADD_NETWORK answered, else -1 */
        int old[NFC_OLD_MAX]; /* networks with the same SSID, removed once this one is in */
        size_t n_old, n_replaced;
        char action[NFC_PHRASE];
} NfcCred;

struct NfcWifi {
        Bt *bt;
        NfcWifi *next;
        NdefHandover *h;
        sd_bus_message *call;
        char *ifname;
        NfcCred creds[NFC_WIFI_MAX];
        size_t n_creds;
        size_t cur;    /* the credential being added, or removed while rolling back */
        size_t set;    /* its next SET_NETWORK */
        size_t old;    /* NFC_STEP_REPLACE: the next old network of creds[cur] */
        int list_last; /* NFC_STEP_LIST: the last network id listed so far, -1 none */
        NfcStep step;
        WpaRequest *req;
        WifiWpaSave *save; /* NFC_STEP_SAVE: SAVE_CONFIG that keeps the file's mode */
        char failure[NFC_SENTENCE];
        bool unsure; /* a request failed without an answer: it may have changed something */
        char skipped[NDEF_MAX_CARRIERS][NFC_PHRASE];
};

static void cred_done(NfcCred *c)
{
        for (size_t i = 0; i < c->n_sets; i++) {
                /* Keys do not linger in freed memory. */
                explicit_bzero(c->sets[i], strlen(c->sets[i]));
                free(c->sets[i]);
        }
        c->n_sets = 0;
}

static NfcWifi *nfc_wifi_free(NfcWifi *w)
{
        if (!w)
                return NULL;
        wpa_request_cancel(w->req);
        wifi_wpa_save_free(w->save);
        for (size_t i = 0; i < w->n_creds; i++)
                cred_done(&w->creds[i]);
        sd_bus_message_unref(w->call);
        ndef_handover_free(w->h);
        free(w->ifname);
        free(w);
        return NULL;
}

static void nfc_wifi_unlink(NfcWifi *w)
{
        for (NfcWifi **p = &w->bt->nfc_wifi; *p; p = &(*p)->next)
                if (*p == w) {
                        *p = w->next;
                        break;
                }
}

void nfc_wifi_free_all(Bt *bt)
{
        while (bt->nfc_wifi) {
                NfcWifi *w = bt->nfc_wifi;
                bt->nfc_wifi = w->next;
                nfc_wifi_free(w);
        }
}

bool nfc_wifi_wanted(const NdefHandover *h)
{
        for (size_t k = 0; k < h->n_carriers; k++)
                if (h->carriers[k].kind == NDEF_CARRIER_WIFI && h->carriers[k].wsc.n_credentials)
                        return true;
        return false;
}

static void ssid_words(const WscCredential *cr, char *out, size_t size)
{
        size_t o = 0;

        for (size_t i = 0; i < cr->ssid_len && o + 5 < size; i++) {
                uint8_t b = cr->ssid[i];
                if (b >= 0x20 && b < 0x7f && b != '\\' && b != '"')
                        out[o++] = (char)b;
                else
                        o += (size_t)snprintf(out + o, size - o, "\\x%02x", b);
        }
        out[o] = 0;
}

/* An SSID as LIST_NETWORKS prints it (wpa_ssid_txt() → printf_encode() in hostap's
 * src/utils/common.c): printable ASCII as is, \" \\ \e \n \r \t, other bytes \xNN. */
static void ssid_list_text(const WscCredential *cr, char *out, size_t size)
{
        size_t o = 0;

        for (size_t i = 0; i < cr->ssid_len && o + 5 < size; i++) {
                uint8_t b = cr->ssid[i];
                const char *esc = b == '"'    ? "\\\""
                                  : b == '\\' ? "\\\\"
                                  : b == 0x1b ? "\\e"
                                  : b == '\n' ? "\\n"
                                  : b == '\r' ? "\\r"
                                  : b == '\t' ? "\\t"
                                              : NULL;
                if (esc)
                        o += (size_t)snprintf(out + o, size - o, "%s", esc);
                else if (b >= 0x20 && b <= 0x7e)
                        out[o++] = (char)b;
                else
                        o += (size_t)snprintf(out + o, size - o, "\\x%02x", b);
        }
        out[o] = 0;
}

/* LIST_NETWORKS' answer: a header line, then "id TAB ssid TAB bssid TAB flags" per network.
 * Each network whose SSID is a credential's becomes that credential's old network. Returns
 * the highest id listed (-1: none). */
static int find_old_networks(NfcWifi *w, const char *reply)
{
        const char *line = strchr(reply, '\n');
        int last = -1;

        while (line && *++line) {
                const char *tab = strchr(line, '\t'), *end = strchr(line, '\n');
                char *idend;
                long id = strtol(line, &idend, 10);

                if (!end)
                        end = line + strlen(line);
                if (tab && tab < end && idend == tab && id >= 0 && id <= INT32_MAX) {
                        const char *ssid = tab + 1, *ssid_end = strchr(ssid, '\t');

                        last = MAX(last, (int)id);
                        size_t n = (ssid_end && ssid_end < end ? ssid_end : end) - ssid;

                        for (size_t i = 0; i < w->n_creds; i++) {
                                NfcCred *c = &w->creds[i];
                                char text[32 * 4 + 1];

                                if (c->n_sets == 0 || c->n_old >= NFC_OLD_MAX)
                                        continue;
                                ssid_list_text(c->cr, text, sizeof(text));
                                if (strlen(text) == n && memcmp(text, ssid, n) == 0) {
                                        c->old[c->n_old++] = (int)id;
                                        break;
                                }
                        }
                }
                line = *end ? end : NULL;
        }
        return last;
}

static bool all_hex(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
                        return false;
        return true;
}

static bool all_printable(const uint8_t *p, size_t n)
{
        /* Control bytes cannot travel in a one-line control-socket command. */
        for (size_t i = 0; i < n; i++)
                if (p[i] < 0x20 || p[i] == 0x7f)
                        return false;
        return true;
}

static int cred_add_set(NfcCred *c, const char *fmt, ...) _printf_(2, 3);
static int cred_add_set(NfcCred *c, const char *fmt, ...)
{
        va_list ap;
        int n;

        if (c->n_sets >= NFC_SETS_MAX)
                return -E2BIG;
        va_start(ap, fmt);
        n = vasprintf(&c->sets[c->n_sets], fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        c->n_sets++;
        return 0;
}

/* The SET_NETWORK commands for one credential. 0, or 1 when it is not something roamd can add
 * (why in skip), or -EINVAL for a key wpa_supplicant cannot take (why in err). */
static int cred_commands(NfcCred *c, const char **skip, char *err, size_t err_size)
{
        const WscCredential *cr = c->cr;
        uint16_t auth = cr->auth_type, encr = cr->encr_type;
        char ssid[32 * 4 + 1], hex[2 * 32 + 1];
        int len = (int)cr->key_len;
        int r;

        ssid_words(cr, ssid, sizeof(ssid));
        if (cr->ssid_len == 0) {
                snprintf(err, err_size, "A WiFi network on the tag has no SSID.");
                return -EINVAL;
        }
        if ((auth & (WSC_AUTH_WPA | WSC_AUTH_WPA2)) &&
            !(auth & (WSC_AUTH_WPAPSK | WSC_AUTH_WPA2PSK))) {
                *skip = "not added: a WPA-Enterprise network needs a login the tag does not carry";
                return 1;
        }
        for (size_t i = 0; i < cr->ssid_len; i++)
                snprintf(hex + 2 * i, 3, "%02x", cr->ssid[i]);
        r = cred_add_set(c, "ssid %s", hex); /* hex: any bytes, no quoting */
        if (r < 0)
                return r;
        if (auth & (WSC_AUTH_WPAPSK | WSC_AUTH_WPA2PSK)) {
                r = cred_add_set(c, "key_mgmt WPA-PSK");
                if (r >= 0 && !(auth & WSC_AUTH_WPAPSK))
                        r = cred_add_set(c, "proto RSN");
                else if (r >= 0 && !(auth & WSC_AUTH_WPA2PSK))
                        r = cred_add_set(c, "proto WPA");
                if (r < 0)
                        return r;
                if (len == 64 && all_hex(cr->key, 64))
                        return cred_add_set(c, "psk %.*s", len, (const char *)cr->key);
                if (len >= 8 && len <= 63 && all_printable(cr->key, cr->key_len))
                        return cred_add_set(c, "psk \"%.*s\"", len, (const char *)cr->key);
                snprintf(err, err_size,
                         "The key of the WiFi network \"%s\" on the tag is not a WPA key (8 to 63 "
                         "printable characters or 64 hex digits; it has %d bytes).",
                         ssid, len);
                return -EINVAL;
        }
        r = cred_add_set(c, "key_mgmt NONE");
        if (r < 0 || !((auth & WSC_AUTH_SHARED) || (encr & WSC_ENCR_WEP)))
                return r;
        if ((len == 5 || len == 13) && all_printable(cr->key, cr->key_len))
                r = cred_add_set(c, "wep_key0 \"%.*s\"", len, (const char *)cr->key);
        else if ((len == 10 || len == 26) && all_hex(cr->key, cr->key_len))
                r = cred_add_set(c, "wep_key0 %.*s", len, (const char *)cr->key);
        else {
                snprintf(err, err_size,
                         "The key of the WiFi network \"%s\" on the tag is not a WEP key (5 or 13 "
                         "characters, 10 or 26 hex digits; it has %d bytes).",
                         ssid, len);
                return -EINVAL;
        }
        if (r >= 0)
                r = cred_add_set(c, "auth_alg %s", (auth & WSC_AUTH_SHARED) ? "SHARED" : "OPEN");
        return r;
}

/* The field a SET_NETWORK command sets, for messages (never its value: it may be a key). */
static void set_field(const char *set, char *out, size_t size)
{
        snprintf(out, size, "%.*s", (int)strcspn(set, " "), set);
}

static void reply_words(const char *reply, char *out, size_t size)
{
        snprintf(out, size, "%.*s", (int)MIN(strcspn(reply, "\n"), (size_t)40), reply);
}

static void nfc_wifi_send(NfcWifi *w);

static void nfc_wifi_fail_reply(NfcWifi *w)
{
        Bt *bt = w->bt;
        bool left = w->unsure;

        for (size_t i = 0; i < w->n_creds; i++)
                left = left || w->creds[i].id >= 0;
        /* The sentence ends with what became of the networks added before the failure. */
        strncat(w->failure,
                left ? "; wpa_supplicant may keep what it added before (it did not answer)."
                     : "; nothing was changed.",
                sizeof(w->failure) - strlen(w->failure) - 1);
        log_warning("NFC: %s", w->failure);
        bt_event(bt, "The WiFi network of an NFC tag was not added: %s", w->failure);
        (void)sd_bus_reply_method_errorf(w->call, ROAM_ERROR_FAILED, "%s", w->failure);
        nfc_wifi_unlink(w);
        nfc_wifi_free(w);
}

/* A step failed: the sentence, then the networks added so far are removed (last first). */
static void nfc_wifi_fail(NfcWifi *w, const char *fmt, ...) _printf_(2, 3);
static void nfc_wifi_fail(NfcWifi *w, const char *fmt, ...)
{
        char why[NFC_SENTENCE - 80];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        snprintf(w->failure, sizeof(w->failure), "%s", why);
        w->step = NFC_STEP_REMOVE;
        w->cur = w->n_creds;
        nfc_wifi_send(w);
}

static void nfc_wifi_succeed(NfcWifi *w, bool saved)
{
        Bt *bt = w->bt;
        NfcWifiActions actions = {};
        char ssid[32 * 4 + 1] = "", replaced[64];
        size_t added = 0;

        for (size_t k = 0; k < NDEF_MAX_CARRIERS; k++)
                if (w->skipped[k][0])
                        actions[k][0] = w->skipped[k];
        for (size_t i = 0; i < w->n_creds; i++) {
                NfcCred *c = &w->creds[i];
                if (c->id < 0)
                        continue;
                replaced[0] = 0;
                for (size_t j = 0, o = 0; j < c->n_replaced && o < sizeof(replaced); j++)
                        o += (size_t)snprintf(replaced + o, sizeof(replaced) - o, "%s%d",
                                              j == 0                   ? " in place of network "
                                              : j + 1 == c->n_replaced ? " and "
                                                                       : ", ",
                                              c->old[j]);
                snprintf(c->action, sizeof(c->action),
                         saved ? "added to wpa_supplicant on %s as network %d%s, saved"
                               : "added to wpa_supplicant on %s as network %d%s, not saved "
                                 "(SAVE_CONFIG failed: update_config=0 or a read-only file)",
                         w->ifname, c->id, replaced);
                actions[c->carrier][c->index] = c->action;
                if (!added++)
                        ssid_words(c->cr, ssid, sizeof(ssid));
        }
        for (size_t i = 0; i < w->n_creds; i++)
                if (w->creds[i].id < 0 && !actions[w->creds[i].carrier][w->creds[i].index])
                        actions[w->creds[i].carrier][w->creds[i].index] = w->creds[i].action;
        if (added == 1)
                bt_event(
                    bt,
                    "The WiFi network \"%s\" from an NFC tag was added to wpa_supplicant on %s%s",
                    ssid, w->ifname, saved ? "" : " (not saved)");
        else if (added > 1)
                bt_event(bt,
                         "%zu WiFi networks from an NFC tag were added to wpa_supplicant on %s%s",
                         added, w->ifname, saved ? "" : " (not saved)");
        nfc_wifi_unlink(w);
        (void)nfc_finish(bt, TAKE_PTR(w->h), true, actions, w->call);
        nfc_wifi_free(w);
}

static void on_reply(WpaClient *client, int error, const char *reply, size_t len, void *userdata)
{
        NfcWifi *w = userdata;
        NfcCred *c = w->cur < w->n_creds ? &w->creds[w->cur] : NULL;
        char words[48], field[32];
        bool ok = error >= 0 && wpa_reply_is_ok(reply, len);

        w->req = NULL;
        if (w->step == NFC_STEP_REMOVE) {
                if (!ok)
                        w->unsure = true;
                if (error == -ECANCELED || error == -ECONNRESET)
                        nfc_wifi_fail_reply(w);
                else
                        nfc_wifi_send(w); /* on to the next one */
                return;
        }
        if (error == -ECANCELED || error == -ECONNRESET) {
                /* The client is gone or going (wpa_supplicant left, roamd stops): nothing can
                 * be removed, and roamd's view of the interfaces may be half torn down. */
                snprintf(w->failure, sizeof(w->failure), "wpa_supplicant on %s went away",
                         w->ifname);
                nfc_wifi_fail_reply(w);
                return;
        }
        if (error < 0 && w->step == NFC_STEP_REPLACE) {
                /* The new networks are in; an old one left beside them is no failure. */
                log_warning("NFC: wpa_supplicant on %s did not answer REMOVE_NETWORK %d: %s",
                            w->ifname, c->old[w->old], strerror(-error));
                w->old++;
                nfc_wifi_send(w);
                return;
        }
        if (error < 0) {
                /* Without an answer the request may or may not have been carried out. */
                if (error == -ETIMEDOUT)
                        w->unsure = true;
                nfc_wifi_fail(w,
                              error == -ETIMEDOUT ? "wpa_supplicant on %s did not answer in time%s"
                                                  : "wpa_supplicant on %s could not be asked (%s)",
                              w->ifname, error == -ETIMEDOUT ? "" : strerror(-error));
                return;
        }
        reply_words(reply, words, sizeof(words));
        switch (w->step) {
        case NFC_STEP_LIST: {
                int last = -1;

                /* Without a list the tag's networks are only added (as before there was one). */
                if (strncmp(reply, "FAIL", 4) != 0 && strncmp(reply, "UNKNOWN COMMAND", 15) != 0)
                        last = find_old_networks(w, reply);
                else
                        log_info("NFC: wpa_supplicant on %s did not list its networks (%s)",
                                 w->ifname, words);
                /* A reply holds the whole lines that fit in wpa_supplicant's 4096 bytes: the
                 * next page starts after the last network listed, until a page lists none. */
                if (last > w->list_last) {
                        w->list_last = last;
                        break;
                }
                w->step = NFC_STEP_ADD;
                break;
        }
        case NFC_STEP_ADD: {
                char *end;
                long id = strtol(reply, &end, 10);
                if (end == reply || (*end && *end != '\n') || id < 0 || id > INT32_MAX) {
                        nfc_wifi_fail(w, "wpa_supplicant on %s refused ADD_NETWORK (%s)", w->ifname,
                                      words);
                        return;
                }
                c->id = (int)id;
                w->step = NFC_STEP_SET;
                w->set = 0;
                break;
        }
        case NFC_STEP_SET:
                if (!ok) {
                        set_field(c->sets[w->set], field, sizeof(field));
                        nfc_wifi_fail(w, "wpa_supplicant on %s refused the network's %s (%s)",
                                      w->ifname, field, words);
                        return;
                }
                if (++w->set == c->n_sets)
                        w->step = NFC_STEP_ENABLE;
                break;
        case NFC_STEP_ENABLE:
                if (!ok) {
                        nfc_wifi_fail(w, "wpa_supplicant on %s refused ENABLE_NETWORK (%s)",
                                      w->ifname, words);
                        return;
                }
                while (++w->cur < w->n_creds && w->creds[w->cur].n_sets == 0)
                        ;
                if (w->cur == w->n_creds) {
                        /* All in: now the networks they replace go. */
                        w->step = NFC_STEP_REPLACE;
                        w->cur = w->old = 0;
                }
                break;
        case NFC_STEP_REPLACE:
                /* A network that cannot be removed stays beside the new one: said, not fatal. */
                if (ok)
                        c->n_replaced++;
                else
                        log_warning("NFC: wpa_supplicant on %s kept network %d (%s)", w->ifname,
                                    c->old[w->old], words);
                w->old++;
                break;
        case NFC_STEP_SAVE:
                /* FAIL here is update_config=0: the networks stay for this run. */
                nfc_wifi_succeed(w, ok);
                return;
        case NFC_STEP_REMOVE:
        case _NFC_STEP_MAX:
        case _NFC_STEP_INVALID:
                return;
        }
        nfc_wifi_send(w);
}

static void on_saved(int error, const char *words, void *userdata)
{
        NfcWifi *w = userdata;

        w->save = NULL;
        /* -EROFS is update_config=0: the networks stay for this run. Any other failure left
         * them in wpa_supplicant too: the save is the last step. */
        nfc_wifi_succeed(w, error >= 0);
}

/* NFC_STEP_REPLACE: the next old network to remove (cur, old), or false when none is left. */
static bool next_old(NfcWifi *w)
{
        for (; w->cur < w->n_creds; w->cur++, w->old = 0)
                if (w->creds[w->cur].id >= 0 && w->old < w->creds[w->cur].n_old)
                        return true;
        return false;
}

static void nfc_wifi_send(NfcWifi *w)
{
        _cleanup_free_ char *cmd = NULL;
        const char *prefix = NULL;
        WpaClient *client = wpa_client_for(w->bt->core->wpa, w->ifname, &prefix);
        NfcCred *c = w->cur < w->n_creds ? &w->creds[w->cur] : NULL;
        int r = 0;

        if (w->step == NFC_STEP_REMOVE) {
                /* Back over the credentials; the next one added gets removed. */
                while (w->cur > 0 && w->creds[w->cur - 1].id < 0)
                        w->cur--;
                if (w->cur == 0 || !client) {
                        nfc_wifi_fail_reply(w);
                        return;
                }
                c = &w->creds[--w->cur];
                r = asprintf(&cmd, "REMOVE_NETWORK %d", c->id);
                c->id = -1; /* unsure is set when the removal fails */
                if (r < 0 || wpa_client_request(client, prefix, cmd, on_reply, w, &w->req) < 0) {
                        w->unsure = true;
                        nfc_wifi_fail_reply(w);
                }
                return;
        }
        if (!client) {
                nfc_wifi_fail(w, "wpa_supplicant stopped running %s", w->ifname);
                return;
        }
        if (w->step == NFC_STEP_REPLACE && !next_old(w))
                w->step = NFC_STEP_SAVE;
        c = w->cur < w->n_creds ? &w->creds[w->cur] : NULL;
        switch (w->step) {
        case NFC_STEP_LIST:
                if (w->list_last < 0)
                        cmd = strdup("LIST_NETWORKS");
                else
                        r = asprintf(&cmd, "LIST_NETWORKS LAST_ID=%d", w->list_last);
                break;
        case NFC_STEP_REPLACE:
                r = asprintf(&cmd, "REMOVE_NETWORK %d", c->old[w->old]);
                break;
        case NFC_STEP_ADD:
                cmd = strdup("ADD_NETWORK");
                break;
        case NFC_STEP_SET:
                r = asprintf(&cmd, "SET_NETWORK %d %s", c->id, c->sets[w->set]);
                break;
        case NFC_STEP_ENABLE:
                r = asprintf(&cmd, "ENABLE_NETWORK %d", c->id);
                break;
        case NFC_STEP_SAVE:
                /* the file's mode kept: wpa_supplicant rewrites it under its own umask */
                r = wifi_wpa_save(client, prefix, w->ifname, on_saved, w, &w->save);
                if (r < 0)
                        nfc_wifi_fail(w, "cannot send to wpa_supplicant on %s: %s", w->ifname,
                                      strerror(-r));
                return;
        case NFC_STEP_REMOVE:
        case _NFC_STEP_MAX:
        case _NFC_STEP_INVALID:
                break;
        }
        if (r < 0 || !cmd)
                r = -ENOMEM;
        else
                r = wpa_client_request(client, prefix, cmd, on_reply, w, &w->req);
        if (cmd)
                explicit_bzero(cmd, strlen(cmd));
        if (r < 0)
                nfc_wifi_fail(w, "cannot send to wpa_supplicant on %s: %s", w->ifname,
                              strerror(-r));
}

/* The tag's first network that a Join can take (WPA/WPA2 personal or open), through the
 * owner's backend; without one (or without a backend for that owner) nothing is added and the
 * answer says who owns the interface. */
static int nfc_wifi_through_owner(Bt *bt, WifiIface *wi, NdefHandover *h, sd_bus_message *call,
                                  sd_bus_error *error)
{
        NfcWifiActions actions = {};
        char done[NFC_PHRASE], refused[NFC_PHRASE];
        const WscCredential *pick = NULL;
        size_t pk = 0, pj = 0;
        bool bt_too = false;
        uint32_t id = 0;
        int r = -EOPNOTSUPP;

        for (size_t k = 0; k < h->n_carriers; k++) {
                const NdefCarrier *car = &h->carriers[k];
                if (car->kind != NDEF_CARRIER_WIFI) {
                        bt_too = true;
                        continue;
                }
                for (size_t j = 0; j < car->wsc.n_credentials && !pick; j++) {
                        uint16_t a = car->wsc.credentials[j].auth_type;
                        if ((a & (WSC_AUTH_WPAPSK | WSC_AUTH_WPA2PSK)) || a == WSC_AUTH_OPEN) {
                                pick = &car->wsc.credentials[j];
                                pk = k, pj = j;
                        }
                }
        }
        if (pick && wi->backend) {
                WifiJoinRequest q = {
                    .ssid_len = pick->ssid_len,
                    .security = _WIFI_SECURITY_INVALID, /* the owner sees the network */
                    .eap = _WIFI_EAP_INVALID,
                    .remember = true,
                    .autoconnect = true,
                };
                memcpy(q.ssid, pick->ssid, pick->ssid_len);
                if (pick->key_len) {
                        q.passphrase = strndup((const char *)pick->key, pick->key_len);
                        q.passphrase_len = pick->key_len;
                }
                r = wifi_iface_join(wi, &q, sd_bus_message_get_sender(call), &id);
                wifi_join_request_done(&q);
        }
        snprintf(refused, sizeof(refused),
                 "not added: %s runs %s and roam does not write beside it (%s)",
                 wifi_owner_to_name(wi->owner), wi->ifname,
                 r == -EBUSY ? "a join runs there" : wi->why ?: "no way to join through it here");
        snprintf(done, sizeof(done), "joining through %s on %s (join %u)",
                 wifi_owner_to_name(wi->owner), wi->ifname, id);
        for (size_t k = 0; k < h->n_carriers; k++)
                for (size_t j = 0; j < WSC_MAX_CREDENTIALS; j++)
                        if (h->carriers[k].kind == NDEF_CARRIER_WIFI)
                                actions[k][j] = r >= 0 && k == pk && j == pj ? done : refused;
        log_info("NFC: %s", r >= 0 ? done : refused);
        if (r >= 0 || bt_too)
                return nfc_finish(bt, h, true, actions, call);
        ndef_handover_free(h);
        bt_event(bt, "The WiFi network of an NFC tag was not added: %s runs %s",
                 wifi_owner_to_name(wi->owner), wi->ifname);
        return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                 "%s runs %s, so roam does not add the tag's WiFi network beside "
                                 "it (%s); nothing was changed.",
                                 wifi_owner_to_name(wi->owner), wi->ifname,
                                 wi->why ?: "no way to join through it here");
}

int nfc_wifi_start(Bt *bt, NdefHandover *h, sd_bus_message *call, sd_bus_error *error)
{
        NfcWifi *w;
        const char *ifname = wpa_station_ifname(bt->core->wpa);
        char err[NFC_SENTENCE] = "";
        size_t todo = 0;
        WifiIface *wi;
        int r;

        /* The interface's owner decides (issue 43): a Wi-Fi link that NetworkManager, iwd or
         * ConnMan runs gets nothing written into a wpa_supplicant beside it (NM's own
         * supplicant has a control socket too); its owner's Join takes the tag's network, or
         * nobody does. */
        wi = ifname ? wifi_service_iface_by_name(bt->wifi, ifname) : NULL;
        for (size_t k = 0; !wi && bt->wifi && k < bt->wifi->n_ifaces; k++)
                if (bt->wifi->ifaces[k]->owner != WIFI_OWNER_NONE)
                        wi = bt->wifi->ifaces[k];
        if (wi && wi->owner != WIFI_OWNER_WPA_SUPPLICANT)
                return nfc_wifi_through_owner(bt, wi, h, call, error);

        if (!ifname) {
                /* Alternative carriers: a Bluetooth one can still be used. */
                NfcWifiActions actions = {};
                bool bt_too = false;

                for (size_t k = 0; k < h->n_carriers; k++) {
                        if (h->carriers[k].kind != NDEF_CARRIER_WIFI)
                                bt_too = true;
                        for (size_t j = 0; j < WSC_MAX_CREDENTIALS; j++)
                                actions[k][j] = "not added: no WiFi interface is run by "
                                                "wpa_supplicant";
                }
                if (bt_too)
                        return nfc_finish(bt, h, true, actions, call);
                ndef_handover_free(h);
                bt_event(bt, "The WiFi network of an NFC tag was not added: no WiFi interface is "
                             "run by wpa_supplicant");
                return sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                        "No WiFi interface is run by wpa_supplicant, so the tag's "
                                        "WiFi network cannot be added; nothing was changed.");
        }
        w = calloc(1, sizeof(*w));
        if (!w) {
                ndef_handover_free(h);
                return -ENOMEM;
        }
        w->h = h;
        w->bt = bt;
        w->ifname = strdup(ifname);
        if (!w->ifname) {
                nfc_wifi_free(w);
                return -ENOMEM;
        }
        for (size_t k = 0; k < h->n_carriers; k++) {
                const NdefCarrier *car = &h->carriers[k];
                if (car->kind != NDEF_CARRIER_WIFI)
                        continue;
                if (car->wsc.n_credentials == 0)
                        snprintf(w->skipped[k], sizeof(w->skipped[k]),
                                 "not added: a WPS password token, not a network");
                for (size_t j = 0; j < car->wsc.n_credentials; j++) {
                        NfcCred *c = &w->creds[w->n_creds++];
                        const char *skip = NULL;

                        c->carrier = k;
                        c->index = j;
                        c->cr = &car->wsc.credentials[j];
                        c->id = -1;
                        r = cred_commands(c, &skip, err, sizeof(err));
                        if (r == -EINVAL) {
                                nfc_wifi_free(w);
                                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                         "%s Nothing was changed.", err);
                        }
                        if (r < 0) {
                                nfc_wifi_free(w);
                                return r;
                        }
                        if (skip)
                                snprintf(c->action, sizeof(c->action), "%s", skip);
                        else
                                todo++;
                }
        }
        w->call = sd_bus_message_ref(call);
        w->next = bt->nfc_wifi;
        bt->nfc_wifi = w;
        if (todo == 0) {
                /* Only enterprise networks: nothing to hand over, said per network. */
                nfc_wifi_succeed(w, false);
                return 0;
        }
        while (w->creds[w->cur].n_sets == 0)
                w->cur++;
        log_info("NFC: adding %zu WiFi network%s from a tag to wpa_supplicant on %s", todo,
                 todo == 1 ? "" : "s", ifname);
        w->step = NFC_STEP_LIST;
        w->list_last = -1;
        nfc_wifi_send(w);
        return 0;
}
