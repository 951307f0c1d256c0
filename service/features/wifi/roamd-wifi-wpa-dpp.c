/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-client-wpa.h"
#include "roamd-core.h"
#include "roamd-wifi-uri.h"
#include "roamd-wifi-wpa-dpp.h"
#include "roamd-wifi-wpa-parse.h"
#include "roamd-wpa.h"

/* A DPP enrollee on a bare wpa_supplicant (hostap's README-DPP, dpp_supplicant.c):
 * GET_CAPABILITY dpp (built with CONFIG_DPP: "DPP=N"), DRIVER_FLAGS (the wired driver cannot
 * leave its channel: it answers DPP_LISTEN with OK and listens on nothing, so a WIRED driver is
 * refused in words before), STATUS (this interface's address for the URI),
 * DPP_BOOTSTRAP_GEN type=qrcode chan=81/1 mac=..., DPP_BOOTSTRAP_GET_URI, DPP_LISTEN 2412 (the
 * channel the URI names). Then the configurator's events: DPP-CONF-RECEIVED, DPP-CONFOBJ-AKM,
 * -SSID (wpa_ssid_txt()), -PASS (hex) or -PSK (hex); DPP-CONF-FAILED, DPP-FAIL <why>,
 * DPP-AUTH-INIT-FAILED and DPP-NOT-COMPATIBLE end it. The credential goes to the core, which
 * joins it through the ordinary join (wrong key, save, mode of the file: as any join), so
 * wpa_supplicant's own dpp_config_processing is not needed. Listening stops and the bootstrap
 * key is removed on every end (DPP_STOP_LISTEN, DPP_BOOTSTRAP_REMOVE). */

#define LISTEN_CHANNEL "81/1"
#define LISTEN_MHZ     "2412"
#define SHARE_USEC     (120 * USEC_PER_SEC)

typedef enum Step {
        STEP_CAPABILITY,
        STEP_DRIVER,
        STEP_STATUS,
        STEP_GEN,
        STEP_URI,
        STEP_LISTEN,
        STEP_LISTENING, /* waiting for a configurator */
        /* the configurator's, after STATUS */
        STEP_SECRET,  /* the passphrase of the network, asked (wpa_supplicant keeps it) */
        STEP_QR,      /* DPP_QR_CODE: the peer's id */
        STEP_AUTH,    /* DPP_AUTH_INIT */
        STEP_SHARING, /* the events */
        _STEP_MAX,
        _STEP_INVALID = -EINVAL,
} Step;

typedef struct WpaEnroll {
        WifiEnroll base;
        Core *core;
        char *ifname;
        WpaClient *client;
        WpaSubscription *sub;
        WpaRequest *req;
        const WifiEnrollReport *report;
        void *userdata;
        Step step;
        int boot_id; /* -1: none made */
        bool listening;
        char mac[13];
        char *uri;
        bool conf;   /* DPP-CONF-RECEIVED came: the CONFOBJ events follow */
        bool akm_ok; /* DPP-CONFOBJ-AKM named a security roamd joins with a passphrase */
        char akm[16];
        WifiDppCredential cred;
        /* a configurator (JoinUri of a DPP: text): what it sends, reported as a join */
        bool configurator;
        const WifiJoinReport *jreport;
        char *peer_uri;
        int peer_id; /* DPP_QR_CODE's, -1: none */
        sd_event *event;
        sd_event_source *timer;
        char name[WIFI_SSID_MAX * 4 + 1];
} WpaEnroll;

static const char *prefix_of(WpaEnroll *e)
{
        const char *prefix = NULL;
        WpaClient *c = e->core->wpa ? wpa_client_for(e->core->wpa, e->ifname, &prefix) : NULL;

        return c == e->client ? prefix : NULL;
}

static bool current(WpaEnroll *e)
{
        const char *prefix;

        return e->core->wpa && wpa_client_for(e->core->wpa, e->ifname, &prefix) == e->client;
}

/* What the enrollment left at wpa_supplicant goes, nobody waits for the answers. */
static void stop_at_owner(WpaEnroll *e)
{
        char cmd[48];

        e->req = wpa_request_cancel(e->req);
        if (!current(e))
                return;
        if (e->listening)
                (void)wpa_client_request(e->client, prefix_of(e), "DPP_STOP_LISTEN", NULL, NULL,
                                         NULL);
        if (e->boot_id >= 0) {
                snprintf(cmd, sizeof(cmd), "DPP_BOOTSTRAP_REMOVE %d", e->boot_id);
                (void)wpa_client_request(e->client, prefix_of(e), cmd, NULL, NULL, NULL);
        }
        if (e->peer_id >= 0) {
                /* the peer's key, and the exchange DPP_AUTH_INIT began */
                (void)wpa_client_request(e->client, prefix_of(e), "DPP_STOP_LISTEN", NULL, NULL,
                                         NULL);
                snprintf(cmd, sizeof(cmd), "DPP_BOOTSTRAP_REMOVE %d", e->peer_id);
                (void)wpa_client_request(e->client, prefix_of(e), cmd, NULL, NULL, NULL);
        }
        e->listening = false;
        e->boot_id = e->peer_id = -1;
}

static void enroll_free(WifiEnroll *base)
{
        WpaEnroll *e = (WpaEnroll *)base;

        if (!e)
                return;
        stop_at_owner(e);
        wpa_subscription_free(e->sub);
        wifi_dpp_credential_erase(&e->cred);
        sd_event_source_disable_unref(e->timer);
        sd_event_unref(e->event);
        free(e->peer_uri);
        free(e->uri);
        free(e->ifname);
        free(e);
}

/* The end: the report's last call, then the enrollment is gone. */
static void enroll_end(WpaEnroll *e, WifiJoinResult result, const char *fmt, ...) _printf_(3, 4);
static void enroll_end(WpaEnroll *e, WifiJoinResult result, const char *fmt, ...)
{
        const WifiEnrollReport *report = e->report;
        const WifiJoinReport *jreport = e->jreport;
        void *ud = e->userdata;
        char words[WIFI_WORDS_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(words, sizeof(words), fmt, ap);
        va_end(ap);
        log_info("%s: DPP %s through wpa_supplicant ended: %s", e->ifname,
                 e->configurator ? "configuration" : "enrollment", words);
        enroll_free(&e->base);
        if (jreport)
                jreport->done(result, words, ud);
        else
                report->done(result, words, ud);
}

static void enroll_received(WpaEnroll *e)
{
        const WifiEnrollReport *report = e->report;
        void *ud = e->userdata;
        WifiDppCredential c = e->cred;

        log_info("%s: DPP configuration received (%s)", e->ifname, e->akm);
        enroll_free(&e->base);
        report->received(&c, ud);
        wifi_dpp_credential_erase(&c);
}

static int request(WpaEnroll *e, const char *cmd);
static void configurator_status(WpaEnroll *e, const char *reply, size_t len);
static void configurator_auth(WpaEnroll *e);
static void configurator_event(WpaEnroll *e, const WpaEvent *ev);
static int on_share_timeout(sd_event_source *s, uint64_t usec, void *userdata);

static void short_reply(const char *reply, size_t len, char *out, size_t size)
{
        size_t n = MIN(MIN(len, strcspn(reply, "\n")), (size_t)40);

        snprintf(out, size, "%.*s", (int)n, reply);
        roam_text_mark_inplace(out);
}

static void on_reply(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WpaEnroll *e = userdata;
        char cmd[96], answer[48];
        char *end;
        long id;
        int r = 0;

        e->req = NULL;
        if (error < 0) {
                enroll_end(e, WIFI_JOIN_REFUSED, "wpa_supplicant did not answer (%s)",
                           strerror(-error));
                return;
        }
        short_reply(reply, len, answer, sizeof(answer));
        switch (e->step) {
        case STEP_CAPABILITY:
                /* "DPP=1" or "DPP=2"; a build without CONFIG_DPP: FAIL or UNKNOWN COMMAND */
                if (len < 5 || strncmp(reply, "DPP=", 4) != 0) {
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "This wpa_supplicant was built without Wi-Fi Easy Connect "
                                   "(DPP): it answered %s",
                                   answer);
                        return;
                }
                e->step = STEP_DRIVER;
                r = request(e, "DRIVER_FLAGS");
                break;
        case STEP_DRIVER: {
                /* "%016llx:\n" then one flag name a line (driver_flag_to_string()) */
                bool wired = false;
                for (const char *p = reply; p < reply + len;) {
                        size_t n = strcspn(p, "\n");
                        if (n == 5 && strncmp(p, "WIRED", 5) == 0)
                                wired = true;
                        p += n + (p[n] == '\n');
                        if (!*p)
                                break;
                }
                if (wired) {
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "wpa_supplicant runs %s with its wired driver, which has no "
                                   "radio for Wi-Fi Easy Connect (DPP)",
                                   e->ifname);
                        return;
                }
                e->step = STEP_STATUS;
                r = request(e, "STATUS");
                break;
        }
        case STEP_STATUS: {
                WpaKv kv = {};
                const char *a;
                size_t k = 0;

                if (e->configurator) {
                        configurator_status(e, reply, len);
                        return;
                }
                if (wpa_kv_parse(reply, len, &kv) < 0 || !(a = wpa_kv_get(&kv, "address")) ||
                    !wpa_mac_valid(a)) {
                        wpa_kv_done(&kv);
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "wpa_supplicant's STATUS names no address for %s", e->ifname);
                        return;
                }
                for (const char *p = a; *p && k < 12; p++)
                        if (*p != ':')
                                e->mac[k++] = *p;
                e->mac[k] = 0;
                wpa_kv_done(&kv);
                e->step = STEP_GEN;
                snprintf(cmd, sizeof(cmd), "DPP_BOOTSTRAP_GEN type=qrcode chan=%s mac=%s",
                         LISTEN_CHANNEL, e->mac);
                r = request(e, cmd);
                break;
        }
        case STEP_GEN:
                id = strtol(reply, &end, 10);
                if (end == reply || (*end && *end != '\n') || id < 0 || id > INT32_MAX) {
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "wpa_supplicant refused DPP_BOOTSTRAP_GEN (%s)", answer);
                        return;
                }
                e->boot_id = (int)id;
                e->step = STEP_URI;
                snprintf(cmd, sizeof(cmd), "DPP_BOOTSTRAP_GET_URI %d", e->boot_id);
                r = request(e, cmd);
                break;
        case STEP_URI: {
                DppUri d;
                char err[WIFI_URI_ERROR_MAX];

                /* the URI is shown to people and put in a QR code: it is read like any DPP:
                 * text first (no newline: the reply has none) */
                if (len == 0 || reply[len - 1] == '\n' ||
                    dpp_uri_parse(reply, len, &d, err, sizeof(err)) < 0) {
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "wpa_supplicant's DPP_BOOTSTRAP_GET_URI answer is not a DPP "
                                   "URI (%s)",
                                   answer);
                        return;
                }
                e->uri = strndup(reply, len);
                if (!e->uri) {
                        enroll_end(e, WIFI_JOIN_REFUSED, "out of memory");
                        return;
                }
                e->step = STEP_LISTEN;
                r = request(e, "DPP_LISTEN " LISTEN_MHZ);
                break;
        }
        case STEP_LISTEN:
                if (!wpa_reply_is_ok(reply, len)) {
                        enroll_end(e, WIFI_JOIN_REFUSED, "wpa_supplicant refused DPP_LISTEN (%s)",
                                   answer);
                        return;
                }
                e->listening = true;
                e->step = STEP_LISTENING;
                log_info("%s: listening for a DPP configurator on %s MHz", e->ifname, LISTEN_MHZ);
                e->report->uri(e->uri, e->userdata);
                return;
        case STEP_QR:
                id = strtol(reply, &end, 10);
                if (end == reply || (*end && *end != '\n') || id < 0 || id > INT32_MAX) {
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "wpa_supplicant refused the device's code (DPP_QR_CODE: %s)",
                                   answer);
                        return;
                }
                e->peer_id = (int)id;
                configurator_auth(e);
                return;
        case STEP_AUTH:
                if (!wpa_reply_is_ok(reply, len)) {
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "wpa_supplicant refused to start Wi-Fi Easy Connect with the "
                                   "device (DPP_AUTH_INIT: %s)",
                                   answer);
                        return;
                }
                e->step = STEP_SHARING;
                if (sd_event_add_time_relative(e->event, &e->timer, CLOCK_MONOTONIC, SHARE_USEC, 0,
                                               on_share_timeout, e) < 0) {
                        enroll_end(e, WIFI_JOIN_REFUSED, "roamd could not set a timer");
                        return;
                }
                e->jreport->step(WIFI_JOIN_STEP_SHARING, "sending the network to the device",
                                 e->userdata);
                return;
        case STEP_LISTENING:
        case STEP_SECRET:
        case STEP_SHARING:
        case _STEP_MAX:
        case _STEP_INVALID:
                break;
        }
        if (r < 0)
                enroll_end(e, WIFI_JOIN_REFUSED, "wpa_supplicant no longer runs %s", e->ifname);
}

static int request(WpaEnroll *e, const char *cmd)
{
        if (!current(e))
                return -ENOTCONN;
        return wpa_client_request(e->client, prefix_of(e), cmd, on_reply, e, &e->req);
}

/* A configurator's words (DPP-FAIL's), safe for a sentence. */
static void outside_words(const char *text, char *out, size_t size)
{
        snprintf(out, size, "%.*s", 96, text ?: "");
        roam_text_mark_inplace(out);
}

static void on_event(WpaClient *c, const WpaEvent *ev, void *userdata)
{
        WpaEnroll *e = userdata;
        const char *rest = ev->rest ?: "";
        char why[128];

        if (ev->ifname[0] && !streq(ev->ifname, e->ifname))
                return;
        if (e->configurator) {
                if (e->step == STEP_SHARING)
                        configurator_event(e, ev);
                return;
        }
        if (e->step != STEP_LISTENING || strncmp(ev->name, "DPP-", 4) != 0)
                return;
        if (streq(ev->name, "DPP-CONF-RECEIVED")) {
                e->conf = true;
                e->akm_ok = false;
                wifi_dpp_credential_erase(&e->cred);
                e->cred.security = _WIFI_SECURITY_INVALID;
        } else if (streq(ev->name, "DPP-CONFOBJ-AKM") && e->conf) {
                outside_words(rest, e->akm, sizeof(e->akm));
                if (wifi_dpp_akm_security(rest, &e->cred.security) >= 0)
                        e->akm_ok = true;
                else
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "The configurator sent a network of AKM %s (a DPP connector "
                                   "or 802.1X): roam joins through wpa_supplicant with a "
                                   "passphrase only",
                                   e->akm);
        } else if (streq(ev->name, "DPP-CONFOBJ-SSID") && e->conf) {
                if (wifi_dpp_ssid_decode(rest, strlen(rest), &e->cred) < 0)
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "The configurator sent a network name that is not text "
                                   "(UTF-8)");
        } else if ((streq(ev->name, "DPP-CONFOBJ-PASS") || streq(ev->name, "DPP-CONFOBJ-PSK")) &&
                   e->conf) {
                bool pass = streq(ev->name, "DPP-CONFOBJ-PASS");
                int r = pass ? wifi_dpp_pass_decode(rest, &e->cred)
                             : wifi_dpp_psk_decode(rest, &e->cred);
                if (r < 0)
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "The configurator sent a %s that is not a WPA key",
                                   pass ? "passphrase" : "PSK");
                else if (!e->akm_ok || e->cred.ssid_len == 0)
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "The configurator's configuration lacks the network's name "
                                   "or security");
                else
                        enroll_received(e);
        } else if (streq(ev->name, "DPP-CONF-FAILED"))
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "The configurator did not send a network (DPP configuration failed)");
        else if (streq(ev->name, "DPP-FAIL")) {
                outside_words(rest, why, sizeof(why));
                enroll_end(e, WIFI_JOIN_REFUSED, "Wi-Fi Easy Connect failed: %s", why);
        } else if (streq(ev->name, "DPP-AUTH-INIT-FAILED"))
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "The configurator's DPP authentication did not complete");
        else if (streq(ev->name, "DPP-NOT-COMPATIBLE"))
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "The configurator and this device share no DPP role");
}

/* ---- the configurator ---- */

/* STATUS's key_mgmt (wpa_key_mgmt_txt()) of the network the interface is on, as what a DPP
 * configuration object carries; _WIFI_SECURITY_INVALID for what roam does not send. */
static WifiSecurity status_security(const char *key_mgmt)
{
        if (!key_mgmt)
                return _WIFI_SECURITY_INVALID;
        if (streq(key_mgmt, "WPA2-PSK") || streq(key_mgmt, "WPA-PSK") ||
            streq(key_mgmt, "WPA2-PSK-SHA256") || streq(key_mgmt, "FT-PSK"))
                return WIFI_SECURITY_WPA2;
        if (streq(key_mgmt, "SAE") || streq(key_mgmt, "FT-SAE") || streq(key_mgmt, "SAE-EXT-KEY"))
                return WIFI_SECURITY_WPA3;
        return _WIFI_SECURITY_INVALID;
}

static void configurator_status(WpaEnroll *e, const char *reply, size_t len)
{
        WpaKv kv = {};
        const char *state, *ssid, *km;
        int r = wpa_kv_parse(reply, len, &kv);

        state = r >= 0 ? wpa_kv_get(&kv, "wpa_state") : NULL;
        ssid = r >= 0 ? wpa_kv_get(&kv, "ssid") : NULL;
        km = r >= 0 ? wpa_kv_get(&kv, "key_mgmt") : NULL;
        if (!streq_ptr(state, "COMPLETED") || !ssid ||
            wifi_dpp_ssid_decode(ssid, strlen(ssid), &e->cred) < 0) {
                wpa_kv_done(&kv);
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "%s is not on a network: a configurator sends the network it is on",
                           e->ifname);
                return;
        }
        e->cred.security = status_security(km);
        if (e->cred.security < 0) {
                char what[32];

                snprintf(what, sizeof(what), "%s", strempty(km));
                roam_text_mark_inplace(what);
                wpa_kv_done(&kv);
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "roam sends only WPA2 and WPA3 Personal networks by Wi-Fi Easy "
                           "Connect (this one is %s)",
                           what);
                return;
        }
        wpa_kv_done(&kv);
        if (wifi_ssid_to_display(e->cred.ssid, e->cred.ssid_len, e->name, sizeof(e->name)) < 0)
                snprintf(e->name, sizeof(e->name), "the network");
        /* wpa_supplicant never gives a key back (GET_NETWORK answers *): the person does */
        e->step = STEP_SECRET;
        e->jreport->needs_secret(WIFI_SECRET_PASSPHRASE, WIFI_SECRET_WHY_FIRST, e->userdata);
}

static int conf_secret(WifiEnroll *base, const WifiSecrets *s)
{
        WpaEnroll *e = (WpaEnroll *)base;
        _cleanup_free_ char *cmd = NULL;
        bool hex64;
        int r;

        if (e->step != STEP_SECRET || !s->passphrase)
                return -EINVAL;
        hex64 = s->passphrase_len == 64 && strspn(s->passphrase, "0123456789abcdefABCDEF") == 64;
        for (size_t i = 0; i < s->passphrase_len; i++)
                if ((unsigned char)s->passphrase[i] < 0x20 ||
                    (unsigned char)s->passphrase[i] > 0x7e)
                        return -EINVAL;
        if (!hex64 && (s->passphrase_len < 8 || s->passphrase_len > 63))
                return -EINVAL;
        if (hex64 && e->cred.security == WIFI_SECURITY_WPA3)
                return -EINVAL; /* SAE takes a password, not a PSK */
        memcpy(e->cred.passphrase, s->passphrase, s->passphrase_len);
        e->cred.passphrase[s->passphrase_len] = 0;
        e->cred.passphrase_len = s->passphrase_len;
        if (asprintf(&cmd, "DPP_QR_CODE %s", e->peer_uri) < 0)
                return -ENOMEM;
        e->step = STEP_QR;
        r = request(e, cmd);
        if (r < 0)
                e->step = STEP_SECRET;
        return r;
}

static void configurator_auth(WpaEnroll *e)
{
        char ssid[2 * WIFI_SSID_MAX + 1], key[2 * 64 + 1], cmd[384];
        bool psk = e->cred.passphrase_len == 64;
        int r;

        wifi_wpa_ssid_hex(e->cred.ssid, e->cred.ssid_len, ssid);
        if (psk)
                snprintf(key, sizeof(key), "%s", e->cred.passphrase);
        else
                for (size_t i = 0; i < e->cred.passphrase_len; i++)
                        snprintf(key + 2 * i, 3, "%02x", (uint8_t)e->cred.passphrase[i]);
        /* dpp.c's conf= words: the legacy credential of the network (sta-psk, sta-sae, both) */
        snprintf(cmd, sizeof(cmd), "DPP_AUTH_INIT peer=%d conf=%s ssid=%s %s=%s", e->peer_id,
                 e->cred.security == WIFI_SECURITY_WPA3 ? "sta-sae" : "sta-psk", ssid,
                 psk ? "psk" : "pass", key);
        wifi_dpp_credential_erase(&e->cred);
        e->step = STEP_AUTH;
        r = request(e, cmd);
        explicit_bzero(key, sizeof(key));
        explicit_bzero(cmd, sizeof(cmd));
        if (r < 0)
                enroll_end(e, WIFI_JOIN_REFUSED, "wpa_supplicant no longer runs %s", e->ifname);
}

static int on_share_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WpaEnroll *e = userdata;

        e->timer = sd_event_source_disable_unref(e->timer);
        enroll_end(e, WIFI_JOIN_TIMEOUT,
                   "The device of the code did not take the network within 2 minutes");
        return 0;
}

/* The configurator's events (dpp_supplicant.c): DPP-CONF-SENT [wait_conn_status=1]
 * conf_status=N ends it (0: sent), as do the failures. */
static void configurator_event(WpaEnroll *e, const WpaEvent *ev)
{
        const char *status = wpa_event_get(ev, "conf_status");
        char why[128];

        if (streq(ev->name, "DPP-CONF-SENT")) {
                if (streq_ptr(status, "0"))
                        enroll_end(e, WIFI_JOIN_SHARED,
                                   "Sent %s to the device of the code (Wi-Fi Easy Connect)",
                                   e->name);
                else {
                        outside_words(status, why, sizeof(why));
                        enroll_end(e, WIFI_JOIN_REFUSED,
                                   "The device of the code refused %s (DPP status %s)", e->name,
                                   why);
                }
        } else if (streq(ev->name, "DPP-CONF-FAILED"))
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "The device of the code did not take %s (DPP configuration failed)",
                           e->name);
        else if (streq(ev->name, "DPP-AUTH-INIT-FAILED"))
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "The device of the code did not answer: is it showing its code, and "
                           "near?");
        else if (streq(ev->name, "DPP-FAIL")) {
                outside_words(ev->rest, why, sizeof(why));
                enroll_end(e, WIFI_JOIN_REFUSED, "Wi-Fi Easy Connect failed: %s", why);
        } else if (streq(ev->name, "DPP-NOT-COMPATIBLE"))
                enroll_end(e, WIFI_JOIN_REFUSED,
                           "The device of the code and this one share no DPP role");
}

int wifi_wpa_configure(WifiBackend *b, const char *uri, const WifiJoinReport *report,
                       void *userdata, WifiEnroll **ret)
{
        const char *prefix;
        WpaEnroll *e;
        int r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->base.free = enroll_free;
        e->base.secret = conf_secret;
        e->configurator = true;
        e->core = b->core;
        e->jreport = report;
        e->userdata = userdata;
        e->boot_id = e->peer_id = -1;
        e->step = STEP_CAPABILITY;
        e->event = sd_event_ref(b->core->event);
        e->ifname = strdup(b->ifname);
        e->peer_uri = strdup(uri);
        e->client = b->core->wpa ? wpa_client_for(b->core->wpa, b->ifname, &prefix) : NULL;
        if (!e->ifname || !e->peer_uri || !e->client || strchr(uri, '\n')) {
                r = !e->ifname || !e->peer_uri ? -ENOMEM : e->client ? -EINVAL : -ENOTCONN;
                enroll_free(&e->base);
                return r;
        }
        r = wpa_client_subscribe(e->client, on_event, e, &e->sub);
        if (r >= 0)
                r = request(e, "GET_CAPABILITY dpp");
        if (r < 0) {
                enroll_free(&e->base);
                return r;
        }
        *ret = &e->base;
        return 0;
}

int wifi_wpa_enroll(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                    WifiEnroll **ret)
{
        const char *prefix;
        WpaEnroll *e;
        int r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->base.free = enroll_free;
        e->core = b->core;
        e->report = report;
        e->userdata = userdata;
        e->boot_id = e->peer_id = -1;
        e->step = STEP_CAPABILITY;
        e->ifname = strdup(b->ifname);
        e->client = b->core->wpa ? wpa_client_for(b->core->wpa, b->ifname, &prefix) : NULL;
        if (!e->ifname || !e->client) {
                r = e->ifname ? -ENOTCONN : -ENOMEM;
                enroll_free(&e->base);
                return r;
        }
        r = wpa_client_subscribe(e->client, on_event, e, &e->sub);
        if (r >= 0)
                r = request(e, "GET_CAPABILITY dpp");
        if (r < 0) {
                enroll_free(&e->base);
                return r;
        }
        *ret = &e->base;
        return 0;
}
