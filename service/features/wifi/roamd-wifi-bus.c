/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* org.roam1.WiFi on the link objects of Wi-Fi links (docs/dbus-api.md). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-core.h"
#include "roamd-wifi-uri.h"
#include "roamd-wifi.h"

#define ACTION_SCAN   "org.roam1.wifi-scan"
#define ACTION_JOIN   "org.roam1.wifi-join"
#define ACTION_MANAGE "org.roam1.wifi-manage"
#define ACTION_SHARE  "org.roam1.wifi-share"

static int wifi_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                     void **found, sd_bus_error *error)
{
        WifiService *s = userdata;
        const char *e = path + strlen(ROAM_LINK_PATH_PREFIX);
        char *end;
        long idx;
        WifiIface *i;

        if (strncmp(path, ROAM_LINK_PATH_PREFIX "/", strlen(ROAM_LINK_PATH_PREFIX) + 1) != 0)
                return 0;
        e++;
        idx = strtol(e, &end, 10);
        if (end == e || *end || idx <= 0 || idx > INT32_MAX)
                return 0;
        i = wifi_service_iface(s, (int)idx);
        if (!i)
                return 0;
        *found = i;
        return 1;
}

/* ---- properties ---- */

static int get_backend(sd_bus *bus, const char *path, const char *interface, const char *property,
                       sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;

        if (streq(property, "WiFiBackend"))
                return sd_bus_message_append(reply, "s", wifi_owner_to_string(i->owner));
        return sd_bus_message_append(reply, "s", i->why ?: "");
}

static int get_scanning(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;

        if (streq(property, "Scanning"))
                return sd_bus_message_append(reply, "b", i->scanning);
        return sd_bus_message_append(reply, "t", i->last_scan_usec);
}

static int get_join(sd_bus *bus, const char *path, const char *interface, const char *property,
                    sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        WifiJoin *j = i->join;

        return sd_bus_message_append(reply, "(us)", j ? j->id : 0,
                                     j && j->has_step ? wifi_join_step_to_string(j->step) : "");
}

/* ---- calls answered later ---- */

WifiCall *wifi_call_new(WifiIface *i, sd_bus_message *m, WifiOpKind kind)
{
        WifiCall *c = calloc(1, sizeof(*c));

        if (!c)
                return NULL;
        c->iface = i;
        c->msg = sd_bus_message_ref(m);
        c->kind = kind;
        c->security = _WIFI_SECURITY_INVALID;
        c->next = i->calls;
        i->calls = c;
        return c;
}

void wifi_call_free(WifiCall *c)
{
        if (!c)
                return;
        for (WifiCall **p = &c->iface->calls; *p; p = &(*p)->next)
                if (*p == c) {
                        *p = c->next;
                        break;
                }
        if (c->op && c->iface->backend)
                c->iface->backend->ops->cancel(c->op);
        sd_bus_message_unref(c->msg);
        free(c);
}

static int reply_error(sd_bus_message *m, int error, const char *words)
{
        const char *name = error == -EOPNOTSUPP ? ROAM_ERROR_NOT_SUPPORTED
                           : error == -EBUSY    ? ROAM_ERROR_BUSY
                           : error == -EINVAL || error == -ERANGE || error == -ENOENT
                               ? ROAM_ERROR_INVALID_ARGS
                               : ROAM_ERROR_FAILED;
        return sd_bus_reply_method_errorf(m, name, "%s", words ?: strerror(-error));
}

static void on_call_done(int error, const char *words, void *userdata)
{
        WifiCall *c = userdata;

        c->op = NULL;
        if (error < 0)
                (void)reply_error(c->msg, error, words);
        else
                (void)sd_bus_reply_method_return(c->msg, "s", words ?: "");
        wifi_call_free(c);
}

static void on_scan_done(int error, const char *words, void *userdata)
{
        WifiCall *c = userdata;

        c->op = NULL;
        if (error < 0)
                (void)reply_error(c->msg, error, words);
        else
                (void)sd_bus_reply_method_return(c->msg, "");
        wifi_call_free(c);
}

static const char *signal_words(int32_t dbm)
{
        return dbm >= -55 ? "excellent" : dbm >= -65 ? "good" : dbm >= -75 ? "fair" : "weak";
}

static const char *band_words(uint32_t mhz)
{
        return mhz >= 5925 ? "6 GHz" : mhz >= 4900 ? "5 GHz" : mhz >= 2400 ? "2.4 GHz" : NULL;
}

static int append_network(sd_bus_message *r, const WifiNetwork *w)
{
        char name[WIFI_SSID_MAX * 4 + 1];
        int k;

        if (wifi_ssid_to_display(w->ssid, w->ssid_len, name, sizeof(name)) < 0)
                snprintf(name, sizeof(name), "?");
        k = sd_bus_message_open_container(r, 'r', "aysa{sv}");
        if (k >= 0)
                k = sd_bus_message_append_array(r, 'y', w->ssid, w->ssid_len);
        if (k >= 0)
                k = sd_bus_message_append(r, "s", name);
        if (k >= 0)
                k = sd_bus_message_open_container(r, 'a', "{sv}");
        if (k >= 0 && w->has_signal)
                k = sd_bus_message_append(r, "{sv}{sv}", "signal", "i", w->signal_dbm,
                                          "signal-words", "s", signal_words(w->signal_dbm));
        if (k >= 0 && w->security >= 0)
                k = sd_bus_message_append(r, "{sv}", "security", "s",
                                          wifi_security_to_string(w->security));
        if (k >= 0 && band_words(w->freq_mhz))
                k = sd_bus_message_append(r, "{sv}", "band", "s", band_words(w->freq_mhz));
        if (k >= 0 && w->in_range)
                k = sd_bus_message_append(r, "{sv}", "bssids", "u", w->n_bssids);
        if (k >= 0)
                k = sd_bus_message_append(r, "{sv}{sv}{sv}{sv}", "known", "b", w->known,
                                          "connected", "b", w->connected, "autoconnect", "b",
                                          w->autoconnect, "in-range", "b", w->in_range);
        if (k >= 0 && w->has_priority)
                k = sd_bus_message_append(r, "{sv}", "priority", "i", w->priority);
        if (k >= 0 && w->last_connected_usec)
                k = sd_bus_message_append(r, "{sv}", "last-connected", "t", w->last_connected_usec);
        if (k >= 0)
                k = sd_bus_message_close_container(r);
        if (k >= 0)
                k = sd_bus_message_close_container(r);
        return k;
}

static void on_list_done(int error, const char *words, const WifiNetworkList *l, void *userdata)
{
        WifiCall *c = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        c->op = NULL;
        if (error < 0) {
                (void)reply_error(c->msg, error, words);
                wifi_call_free(c);
                return;
        }
        r = sd_bus_message_new_method_return(c->msg, &reply);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "(aysa{sv})");
        for (size_t k = 0; r >= 0 && k < l->n; k++)
                r = append_network(reply, &l->networks[k]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        if (r < 0)
                (void)reply_error(c->msg, r, "roamd could not build the answer");
        wifi_call_free(c);
}

/* ---- methods ---- */

static int no_backend(WifiIface *i, sd_bus_error *error)
{
        return sd_bus_error_setf(error, ROAM_ERROR_NOT_SUPPORTED, "%s",
                                 i->why ?: "Nobody runs Wi-Fi on this interface");
}

static int not_supported(WifiIface *i, WifiOpKind op, sd_bus_error *error)
{
        const char *why = i->backend->ops->why_not(i->backend, op);
        return sd_bus_error_setf(error, ROAM_ERROR_NOT_SUPPORTED, "%s",
                                 why ?: "The interface's owner does not offer this");
}

static int call_error(WifiIface *i, WifiOpKind op, int r, sd_bus_error *error)
{
        if (r == -EOPNOTSUPP)
                return not_supported(i, op, error);
        if (r == -EBUSY)
                return sd_bus_error_setf(error, ROAM_ERROR_BUSY, "Already running on %s",
                                         i->ifname);
        if (r == -EINVAL || r == -ERANGE)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Invalid arguments");
        if (r == -EILSEQ) /* iwd: its networks' names are UTF-8 strings */
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "%s names networks by text, and this name is not UTF-8",
                                         wifi_owner_to_name(i->owner));
        return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "%s: %s", wifi_owner_to_name(i->owner),
                                 strerror(-r));
}

static int method_scan(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        WifiCall *c;
        int r = bus_check_authorized(m, ACTION_SCAN, error);

        if (r != 0)
                return r;
        if (!i->backend)
                return no_backend(i, error);
        c = wifi_call_new(i, m, WIFI_OP_SCAN);
        if (!c)
                return -ENOMEM;
        r = i->backend->ops->scan(i->backend, on_scan_done, c, &c->op);
        if (r < 0) {
                wifi_call_free(c);
                return call_error(i, WIFI_OP_SCAN, r, error);
        }
        return 1;
}

static int method_get_networks(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        WifiCall *c;
        int r;

        if (!i->backend)
                return no_backend(i, error);
        c = wifi_call_new(i, m, WIFI_OP_LIST);
        if (!c)
                return -ENOMEM;
        r = i->backend->ops->list(i->backend, on_list_done, c, &c->op);
        if (r < 0) {
                wifi_call_free(c);
                return call_error(i, WIFI_OP_LIST, r, error);
        }
        return 1;
}

static int read_ssid(sd_bus_message *m, uint8_t ssid[WIFI_SSID_MAX], size_t *len,
                     sd_bus_error *error)
{
        const void *p;
        size_t n;
        int r = sd_bus_message_read_array(m, 'y', &p, &n);

        if (r < 0)
                return r;
        if (n == 0 || n > WIFI_SSID_MAX)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "An SSID has 1 to 32 bytes (this one %zu)", n);
        memcpy(ssid, p, n);
        *len = n;
        return 0;
}

static int method_ssid_op(sd_bus_message *m, WifiIface *i, WifiOpKind kind, sd_bus_error *error)
{
        uint8_t ssid[WIFI_SSID_MAX];
        size_t len;
        int b = 0, prio = 0;
        WifiCall *c;
        int r = bus_check_authorized(m, ACTION_MANAGE, error);

        if (r != 0)
                return r;
        r = read_ssid(m, ssid, &len, error);
        if (r < 0)
                return r;
        if (kind == WIFI_OP_SET_AUTOCONNECT)
                r = sd_bus_message_read(m, "b", &b);
        else if (kind == WIFI_OP_SET_PRIORITY)
                r = sd_bus_message_read(m, "i", &prio);
        if (r < 0)
                return r;
        if (!i->backend)
                return no_backend(i, error);
        c = wifi_call_new(i, m, kind);
        if (!c)
                return -ENOMEM;
        const WifiBackendOps *o = i->backend->ops;
        r = kind == WIFI_OP_FORGET ? o->forget(i->backend, ssid, len, on_call_done, c, &c->op)
            : kind == WIFI_OP_SET_AUTOCONNECT
                ? o->set_autoconnect(i->backend, ssid, len, b, on_call_done, c, &c->op)
                : o->set_priority(i->backend, ssid, len, prio, on_call_done, c, &c->op);
        if (r < 0) {
                wifi_call_free(c);
                return call_error(i, kind, r, error);
        }
        return 1;
}

static int method_forget(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        return method_ssid_op(m, userdata, WIFI_OP_FORGET, error);
}

static int method_set_autoconnect(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        return method_ssid_op(m, userdata, WIFI_OP_SET_AUTOCONNECT, error);
}

static int method_set_priority(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        return method_ssid_op(m, userdata, WIFI_OP_SET_PRIORITY, error);
}

/* A string value of the request: clean one-line text (it goes into the owner's config). */
static int read_text(sd_bus_message *m, const char *key, char **dst, sd_bus_error *error)
{
        const char *v;
        int r = sd_bus_message_read(m, "s", &v);

        if (r < 0)
                return r;
        if (strlen(v) > 255 || !roam_text_is_clean(v, ROAM_TEXT_STRICT) || strchr(v, '"'))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "\"%s\" must be one line of text without quotes", key);
        return free_and_strdup(dst, v) < 0 ? -ENOMEM : 0;
}

static int read_secret(sd_bus_message *m, const char *key, char **dst, size_t *len,
                       sd_bus_error *error)
{
        const void *p;
        size_t n;
        int r = sd_bus_message_read_array(m, 'y', &p, &n);

        if (r < 0)
                return r;
        if (n == 0 || n > 128 || memchr(p, 0, n))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "\"%s\" must be 1 to 128 bytes without NUL", key);
        if (*dst) {
                explicit_bzero(*dst, strlen(*dst));
                free(*dst);
        }
        *dst = malloc(n + 1);
        if (!*dst)
                return -ENOMEM;
        memcpy(*dst, p, n);
        (*dst)[n] = 0;
        if (len)
                *len = n;
        return 0;
}

static int read_request(sd_bus_message *m, WifiJoinRequest *q, sd_bus_error *error)
{
        bool has_ssid = false;
        int r;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key, *sig;
                char *s = NULL;

                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                sig = streq(key, "ssid") || streq(key, "passphrase") || streq(key, "password")
                          ? "ay"
                      : streq(key, "hidden") || streq(key, "remember") || streq(key, "autoconnect")
                          ? "b"
                          : "s";
                r = sd_bus_message_enter_container(m, 'v', sig);
                if (r < 0)
                        return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                 "\"%s\" must be of type %s", key, sig);
                if (streq(key, "ssid")) {
                        r = read_ssid(m, q->ssid, &q->ssid_len, error);
                        has_ssid = true;
                } else if (streq(key, "passphrase"))
                        r = read_secret(m, key, &q->passphrase, &q->passphrase_len, error);
                else if (streq(key, "password"))
                        r = read_secret(m, key, &q->password, NULL, error);
                else if (streq(sig, "b")) {
                        int b;
                        r = sd_bus_message_read(m, "b", &b);
                        if (streq(key, "hidden"))
                                q->hidden = b;
                        else if (streq(key, "remember"))
                                q->remember = b;
                        else
                                q->autoconnect = b;
                } else if (streq(key, "security") || streq(key, "eap")) {
                        r = read_text(m, key, &s, error);
                        if (r >= 0 && streq(key, "security")) {
                                q->security = wifi_security_from_string(s);
                                if (q->security < 0)
                                        r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                              "Unknown security \"%s\"", s);
                        } else if (r >= 0) {
                                q->eap = wifi_eap_from_string(s);
                                if (q->eap < 0)
                                        r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                              "EAP method must be peap or ttls");
                                else
                                        q->security = WIFI_SECURITY_ENTERPRISE;
                        }
                        free(s);
                } else if (streq(key, "identity"))
                        r = read_text(m, key, &q->identity, error);
                else if (streq(key, "anonymous-identity"))
                        r = read_text(m, key, &q->anonymous_identity, error);
                else if (streq(key, "phase2"))
                        r = read_text(m, key, &q->phase2, error);
                else if (streq(key, "domain"))
                        r = read_text(m, key, &q->domain, error);
                else if (streq(key, "ca-file")) {
                        r = read_text(m, key, &q->ca_file, error);
                        if (r >= 0 && q->ca_file[0] != '/')
                                r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                                      "\"ca-file\" must be an absolute path");
                } else
                        r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Unknown key \"%s\"",
                                              key);
                if (r < 0)
                        return r;
                r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        if (r < 0)
                return r;
        if (!has_ssid)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "\"ssid\" is required");
        if (q->hidden && q->security < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "A hidden network needs \"security\"");
        if (q->security == WIFI_SECURITY_ENTERPRISE && q->eap < 0)
                q->eap = WIFI_EAP_PEAP;
        return 0;
}

static int start_join(WifiIface *i, sd_bus_message *m, const WifiJoinRequest *q, uint32_t *id,
                      sd_bus_error *error)
{
        int r;

        if (!i->backend)
                return no_backend(i, error);
        r = wifi_iface_join(i, q, sd_bus_message_get_sender(m), id);
        if (r < 0)
                return call_error(i, WIFI_OP_JOIN, r, error);
        return 0;
}

static int method_join(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        WifiJoinRequest q = {.security = _WIFI_SECURITY_INVALID,
                             .eap = _WIFI_EAP_INVALID,
                             .remember = true,
                             .autoconnect = true};
        uint32_t id;
        int r = bus_check_authorized(m, ACTION_JOIN, error);

        if (r != 0)
                return r;
        r = read_request(m, &q, error);
        if (r >= 0)
                r = start_join(i, m, &q, &id, error);
        wifi_join_request_done(&q);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "u", id);
}

/* Only the bus name that started a join answers or ends it (root too): another local user
 * must neither put a key into someone's join nor learn when it is asked. */
static int join_caller(WifiIface *i, sd_bus_message *m, uint32_t id, sd_bus_error *error)
{
        sd_bus_creds *creds = NULL;
        uid_t uid = (uid_t)-1;

        if (!i->join || i->join->id != id)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "No join %u runs on %s",
                                         id, i->ifname);
        if (streq_ptr(sd_bus_message_get_sender(m), i->join->sender))
                return 0;
        if (sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds) >= 0)
                (void)sd_bus_creds_get_euid(creds, &uid);
        sd_bus_creds_unref(creds);
        if (uid == 0)
                return 0;
        return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                 "Join %u belongs to the program that started it", id);
}

static int method_join_secret(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        WifiJoinRequest q = {};
        WifiSecrets s;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "u", &id);
        if (r < 0)
                return r;
        r = join_caller(i, m, id, error);
        if (r < 0)
                return r;
        /* the same keys as Join's */
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        break;
                bool bytes = streq(key, "passphrase") || streq(key, "password");
                if (!bytes && !streq(key, "identity")) {
                        r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Unknown key \"%s\"",
                                              key);
                        break;
                }
                r = sd_bus_message_enter_container(m, 'v', bytes ? "ay" : "s");
                if (r < 0) {
                        r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                              "\"%s\" has the wrong type", key);
                        break;
                }
                r = streq(key, "passphrase")
                        ? read_secret(m, key, &q.passphrase, &q.passphrase_len, error)
                    : streq(key, "password") ? read_secret(m, key, &q.password, NULL, error)
                                             : read_text(m, key, &q.identity, error);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r >= 0)
                r = sd_bus_message_exit_container(m);
        if (r >= 0) {
                s = (WifiSecrets){.passphrase = q.passphrase,
                                  .passphrase_len = q.passphrase_len,
                                  .identity = q.identity,
                                  .password = q.password};
                r = wifi_iface_join_secret(i, &s);
                if (r < 0)
                        r = sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                              "Join %u does not wait for that secret now", id);
        }
        wifi_join_request_done(&q);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "");
}

static int method_join_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        uint32_t id;
        int r;

        r = sd_bus_message_read(m, "u", &id);
        if (r < 0)
                return r;
        r = join_caller(i, m, id, error);
        if (r < 0) {
                /* someone else may end it with the right to manage networks */
                if (!i->join || i->join->id != id)
                        return r;
                sd_bus_error_free(error);
                r = bus_check_authorized(m, ACTION_MANAGE, error);
                if (r != 0)
                        return r;
        }
        wifi_iface_join_cancel(i);
        return sd_bus_reply_method_return(m, "");
}

static void on_share(int error, const char *words, const WifiShare *sh, void *userdata)
{
        WifiCall *c = userdata;
        char uri[512];

        c->op = NULL;
        if (error < 0)
                (void)reply_error(c->msg, error, words);
        else if (wifi_uri_format(sh->ssid, sh->ssid_len, sh->security, sh->passphrase, sh->hidden,
                                 uri, sizeof(uri)) < 0)
                (void)reply_error(c->msg, -EOPNOTSUPP,
                                  "This network's security cannot be shared as a WIFI: code");
        else {
                (void)sd_bus_reply_method_return(c->msg, "s", uri);
                explicit_bzero(uri, sizeof(uri));
        }
        wifi_call_free(c);
}

static int method_share(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        uint8_t ssid[WIFI_SSID_MAX];
        size_t len;
        WifiCall *c;
        int r = bus_check_authorized(m, ACTION_SHARE, error);

        if (r != 0)
                return r;
        r = read_ssid(m, ssid, &len, error);
        if (r < 0)
                return r;
        if (!i->backend)
                return no_backend(i, error);
        c = wifi_call_new(i, m, WIFI_OP_SHARE);
        if (!c)
                return -ENOMEM;
        r = i->backend->ops->share(i->backend, ssid, len, on_share, c, &c->op);
        if (r < 0) {
                wifi_call_free(c);
                return call_error(i, WIFI_OP_SHARE, r, error);
        }
        return 1;
}

/* DPP enrollee: answered later (roamd-wifi-enroll.c), with the join's id and the URI. */
static int method_enroll(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        int r = bus_check_authorized(m, ACTION_JOIN, error);

        if (r != 0)
                return r;
        if (!i->backend)
                return no_backend(i, error);
        r = wifi_iface_enroll(i, m);
        return r < 0 ? call_error(i, WIFI_OP_ENROLL, r, error) : 1;
}

static int method_join_uri(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        WifiIface *i = userdata;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        char err[WIFI_URI_ERROR_MAX], name[WIFI_SSID_MAX * 4 + 1];
        const char *text;
        int apply, r;
        WifiUri u;
        DppUri d;
        uint32_t id = 0;

        r = sd_bus_message_read(m, "sb", &text, &apply);
        if (r < 0)
                return r;
        if (apply) {
                /* configuring another device hands it this network's key: an admin, always */
                r = bus_check_authorized(
                    m, strncmp(text, "DPP:", 4) == 0 ? ACTION_SHARE : ACTION_JOIN, error);
                if (r != 0)
                        return r;
        }
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        if (strncmp(text, "DPP:", 4) == 0) {
                if (dpp_uri_parse(text, strlen(text), &d, err, sizeof(err)) < 0)
                        return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "%s", err);
                if (apply) {
                        if (!i->backend)
                                return no_backend(i, error);
                        r = wifi_iface_configure(i, text, sd_bus_message_get_sender(m), &id);
                        if (r < 0)
                                return call_error(i, WIFI_OP_CONFIGURE, r, error);
                }
                r = sd_bus_message_append(reply, "a{sv}", apply ? 6 : 5, "kind", "s", "dpp", "mac",
                                          "s", d.mac, "channels", "s", d.channels, "info", "s",
                                          d.info, "version", "u", (uint32_t)d.version, "join", "u",
                                          id);
                return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
        }
        if (wifi_uri_parse(text, strlen(text), &u, err, sizeof(err)) < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "%s", err);
        if (apply) {
                WifiJoinRequest q = {
                    .ssid_len = u.ssid_len,
                    .hidden = u.hidden,
                    /* T:WPA lets the owner pick WPA2 or WPA3, unless hidden */
                    .security = u.security == WIFI_SECURITY_PSK
                                    ? (u.hidden ? WIFI_SECURITY_WPA2 : _WIFI_SECURITY_INVALID)
                                : u.security == WIFI_SECURITY_OPEN && !u.hidden
                                    ? _WIFI_SECURITY_INVALID
                                    : u.security,
                    .eap = u.eap,
                    .remember = true,
                    .autoconnect = true,
                };
                memcpy(q.ssid, u.ssid, u.ssid_len);
                if (u.passphrase_len && u.security != WIFI_SECURITY_ENTERPRISE) {
                        q.passphrase = strdup(u.passphrase);
                        q.passphrase_len = u.passphrase_len;
                } else if (u.passphrase_len)
                        q.password = strdup(u.passphrase);
                if (u.identity[0])
                        q.identity = strdup(u.identity);
                if (u.anonymous_identity[0])
                        q.anonymous_identity = strdup(u.anonymous_identity);
                if (u.phase2[0])
                        q.phase2 = strdup(u.phase2);
                r = start_join(i, m, &q, &id, error);
                wifi_join_request_done(&q);
                if (r < 0) {
                        wifi_uri_erase(&u);
                        return r;
                }
        }
        if (wifi_ssid_to_display(u.ssid, u.ssid_len, name, sizeof(name)) < 0)
                name[0] = 0;
        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}", "kind", "s", "wifi",
                                          "name", "s", name, "security", "s",
                                          wifi_security_to_string(u.security), "hidden", "b",
                                          u.hidden, "has-passphrase", "b", u.passphrase_len > 0);
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'e', "sv");
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", "ssid");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', "ay");
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', u.ssid, u.ssid_len);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0 && apply)
                r = sd_bus_message_append(reply, "{sv}", "join", "u", id);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        wifi_uri_erase(&u);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

#define EC SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE

static const sd_bus_vtable wifi_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("WiFiBackend", "s", get_backend, 0, EC),
    SD_BUS_PROPERTY("WiFiBackendWhy", "s", get_backend, 0, EC),
    SD_BUS_PROPERTY("Scanning", "b", get_scanning, 0, EC),
    SD_BUS_PROPERTY("LastScan", "t", get_scanning, 0, EC),
    SD_BUS_PROPERTY("Join", "(us)", get_join, 0, EC),
    SD_BUS_METHOD("Scan", "", "", method_scan, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("GetNetworks", "", "a(aysa{sv})", method_get_networks,
                  SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Join", "a{sv}", "u", method_join,
                  SD_BUS_VTABLE_UNPRIVILEGED | SD_BUS_VTABLE_SENSITIVE),
    SD_BUS_METHOD("JoinSecret", "ua{sv}", "", method_join_secret,
                  SD_BUS_VTABLE_UNPRIVILEGED | SD_BUS_VTABLE_SENSITIVE),
    SD_BUS_METHOD("JoinCancel", "u", "", method_join_cancel, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Forget", "ay", "s", method_forget, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetAutoconnect", "ayb", "s", method_set_autoconnect, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("SetPriority", "ayi", "s", method_set_priority, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Share", "ay", "s", method_share,
                  SD_BUS_VTABLE_UNPRIVILEGED | SD_BUS_VTABLE_SENSITIVE),
    SD_BUS_METHOD("JoinUri", "sb", "a{sv}", method_join_uri,
                  SD_BUS_VTABLE_UNPRIVILEGED | SD_BUS_VTABLE_SENSITIVE),
    SD_BUS_METHOD("Enroll", "", "us", method_enroll, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL("JoinStep", "uss", 0),
    SD_BUS_SIGNAL("JoinNeedsSecret", "uss", 0),
    SD_BUS_SIGNAL("JoinDone", "uss", 0),
    SD_BUS_VTABLE_END,
};

int wifi_bus_setup(WifiService *s)
{
        int r;

        if (!s->core->bus)
                return 0;
        r = sd_bus_add_fallback_vtable(s->core->bus, &s->slot, ROAM_LINK_PATH_PREFIX,
                                       ROAM_WIFI_INTERFACE, wifi_vtable, wifi_find, s);
        if (r < 0)
                return log_error_errno(r, "Failed to add the Wi-Fi interface: %m");
        return 0;
}

void wifi_bus_iface_added(WifiIface *i)
{
        sd_bus *bus = i->service->core->bus;

        if (bus)
                (void)sd_bus_emit_interfaces_added(bus, i->path, ROAM_WIFI_INTERFACE, NULL);
}

void wifi_bus_iface_removed(WifiIface *i)
{
        sd_bus *bus = i->service->core->bus;

        if (bus)
                (void)sd_bus_emit_interfaces_removed(bus, i->path, ROAM_WIFI_INTERFACE, NULL);
}

void wifi_bus_emit_changed(WifiIface *i, const char *first, ...)
{
        sd_bus *bus = i->service->core->bus;
        const char *names[8];
        size_t n = 0;
        va_list ap;

        if (!bus || !first)
                return;
        names[n++] = first;
        va_start(ap, first);
        for (const char *p; n < ELEMENTSOF(names) - 1 && (p = va_arg(ap, const char *));)
                names[n++] = p;
        va_end(ap);
        names[n] = NULL;
        (void)sd_bus_emit_properties_changed_strv(bus, i->path, ROAM_WIFI_INTERFACE,
                                                  (char **)names);
}

void wifi_bus_join_step(WifiJoin *j, WifiJoinStep step, const char *words)
{
        sd_bus *bus = j->iface->service->core->bus;

        if (bus)
                (void)sd_bus_emit_signal(bus, j->iface->path, ROAM_WIFI_INTERFACE, "JoinStep",
                                         "uss", j->id, wifi_join_step_to_string(step), words ?: "");
}

void wifi_bus_join_needs_secret(WifiJoin *j, WifiSecretKind kind, WifiSecretWhy why)
{
        sd_bus *bus = j->iface->service->core->bus;

        if (bus)
                (void)sd_bus_emit_signal(
                    bus, j->iface->path, ROAM_WIFI_INTERFACE, "JoinNeedsSecret", "uss", j->id,
                    wifi_secret_kind_to_string(kind), wifi_secret_why_to_string(why));
}

void wifi_bus_join_done(WifiIface *i, uint32_t id, WifiJoinResult result, const char *words)
{
        sd_bus *bus = i->service->core->bus;

        if (bus)
                (void)sd_bus_emit_signal(bus, i->path, ROAM_WIFI_INTERFACE, "JoinDone", "uss", id,
                                         wifi_join_result_to_string(result), words ?: "");
}
