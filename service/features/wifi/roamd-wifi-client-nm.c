/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-core.h"
#include "roamd-wifi-client-nm.h"
#include "roamd-wifi-nm-agent.h"
#include "roamd-wifi-nm-message.h"

/* Wi-Fi through NetworkManager's D-Bus API (docs/wifi.md; research wifi-join.md §1.a):
 * scan = Device.Wireless.RequestScan and LastScan; list = GetAllAccessPoints and the saved
 * 802-11-wireless profiles; join = AddAndActivateConnection2 with persist disk (remember) or
 * volatile, followed through the device's StateChanged; secrets through roamd's agent
 * (roamd-wifi-nm-agent.c); forget = Settings.Connection.Delete; autoconnect and priority =
 * Update2 of the profile; share = GetSecrets of its security setting. Every call is
 * asynchronous; an operation owns its call, its matches and its timer, and wifi_nm_cancel()
 * drops them all. Nothing is ever sent to wpa_supplicant: NM owns the interface. */

#define NM_BUS_NAME      "org.freedesktop.NetworkManager"
#define NM_PATH          "/org/freedesktop/NetworkManager"
#define NM_IF            "org.freedesktop.NetworkManager"
#define NM_DEVICE_IF     NM_IF ".Device"
#define NM_WIRELESS_IF   NM_IF ".Device.Wireless"
#define NM_AP_IF         NM_IF ".AccessPoint"
#define NM_SETTINGS_PATH NM_PATH "/Settings"
#define NM_SETTINGS_IF   NM_IF ".Settings"
#define NM_CONN_IF       NM_IF ".Settings.Connection"
#define NM_ACTIVE_IF     NM_IF ".Connection.Active"
#define PROPS_IF         "org.freedesktop.DBus.Properties"
#define CALL_TIMEOUT     (25 * USEC_PER_SEC)
#define SCAN_TIMEOUT     (30 * USEC_PER_SEC)

/* NMDeviceState, NMDeviceStateReason (nm-dbus-interface.h) */
enum {
        NM_DEVICE_UNMANAGED = 10,
        NM_DEVICE_PREPARE = 40,
        NM_DEVICE_NEED_AUTH = 60,
        NM_DEVICE_IP_CONFIG = 70,
        NM_DEVICE_ACTIVATED = 100,
        NM_DEVICE_DEACTIVATING = 110,
        NM_DEVICE_FAILED = 120,
        NM_REASON_NO_SECRETS = 7,
        NM_REASON_SUPPLICANT_TIMEOUT = 11,
        NM_REASON_SSID_NOT_FOUND = 53,
        NM_AC_DEACTIVATED = 4,
};
typedef struct NmBackend NmBackend;

/* What an operation reads before its work. */
enum {
        NEED_APS = 1 << 0,
        NEED_ACTIVE_AP = 1 << 1,
        NEED_KNOWN = 1 << 2,
};

struct WifiOp {
        NmBackend *b; /* NULL for a probe */
        sd_bus *bus;
        WifiOpKind kind; /* _WIFI_OP_INVALID for a probe */
        struct WifiOp *next;

        sd_bus_slot *call, *match_dev, *match_ac, *match_wifi;
        sd_event_source *timer;

        WifiDoneFn done;
        WifiListFn list;
        WifiShareFn share;
        WifiProbeFn probe;
        void *userdata;
        char *ifname; /* a probe's */

        /* what it reads */
        unsigned need;
        char **ap_paths;
        size_t n_ap_paths, next_ap;
        NmAp *aps;
        size_t n_aps;
        char *active_ap;
        char **conn_paths;
        size_t n_conn_paths, next_conn;
        NmKnown *known;
        size_t n_known, next_target;

        /* forget, set_*, share, join: the network */
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        bool on;
        int32_t value;

        /* join */
        WifiJoinRequest req;
        WifiJoinReport report;
        char *conn_path, *active_path;
        sd_bus_message *pending; /* NM's GetSecrets, answered by secret() */
        WifiSecretKind pending_kind;
        bool secret_given, sae_only;
        int last_step;
        bool done_called;
};

struct NmBackend {
        WifiBackend base;
        sd_bus *bus;
        NmAgent *agent;
        BusNameWatch *nm;
        char *dev_path;
        sd_bus_slot *match_dev_removed, *match_ap_added, *match_ap_removed;
        WifiOp *ops;
};

static const char *nm_why_not(const WifiBackend *b, WifiOpKind op)
{
        (void)b;
        if (op == WIFI_OP_ENROLL)
                return "NetworkManager cannot enroll a device by DPP (Wi-Fi Easy Connect)";
        if (op == WIFI_OP_CONFIGURE)
                return "NetworkManager cannot configure a device by DPP (Wi-Fi Easy Connect)";
        return NULL;
}

/* ---- operations ------------------------------------------------------------------------ */
static void op_free(WifiOp *op)
{
        if (!op)
                return;
        if (op->b)
                for (WifiOp **p = &op->b->ops; *p; p = &(*p)->next)
                        if (*p == op) {
                                *p = op->next;
                                break;
                        }
        if (op->pending)
                (void)nm_agent_reply_error(&op->pending,
                                           "org.freedesktop.NetworkManager."
                                           "SecretAgent.UserCanceled",
                                           "The join was canceled in roamd");
        if (op->b && op->conn_path)
                nm_agent_remove_join(op->b->agent, op->conn_path);
        sd_bus_slot_unref(op->call);
        sd_bus_slot_unref(op->match_dev);
        sd_bus_slot_unref(op->match_ac);
        sd_bus_slot_unref(op->match_wifi);
        sd_event_source_disable_unref(op->timer);
        for (size_t i = 0; i < op->n_ap_paths; i++)
                free(op->ap_paths[i]);
        free(op->ap_paths);
        for (size_t i = 0; i < op->n_aps; i++)
                free(op->aps[i].path);
        free(op->aps);
        free(op->active_ap);
        for (size_t i = 0; i < op->n_conn_paths; i++)
                free(op->conn_paths[i]);
        free(op->conn_paths);
        for (size_t i = 0; i < op->n_known; i++) {
                free(op->known[i].path);
                free(op->known[i].key_mgmt);
                sd_bus_message_unref(op->known[i].settings);
        }
        free(op->known);
        wifi_join_request_done(&op->req);
        free(op->conn_path);
        free(op->active_path);
        free(op->ifname);
        sd_bus_unref(op->bus);
        free(op);
}

static void delete_profile(WifiOp *op)
{
        (void)sd_bus_call_method_async(op->bus, NULL, NM_BUS_NAME, op->conn_path, NM_CONN_IF,
                                       "Delete", NULL, NULL, "");
}

void wifi_nm_cancel(WifiOp *op)
{
        if (!op)
                return;
        /* a join roamd gives up is deactivated at NM, and the profile it made goes (as nmcli
         * deletes the one a failed "device wifi connect" made): nothing half-joined stays */
        if (op->kind == WIFI_OP_JOIN && op->active_path && !op->done_called)
                (void)sd_bus_call_method_async(op->bus, NULL, NM_BUS_NAME, NM_PATH, NM_IF,
                                               "DeactivateConnection", NULL, NULL, "o",
                                               op->active_path);
        if (op->kind == WIFI_OP_JOIN && op->conn_path && !op->done_called)
                delete_profile(op);
        op_free(op);
}

static WifiOp *op_new(NmBackend *b, WifiOpKind kind, void *userdata)
{
        WifiOp *op = calloc(1, sizeof(*op));

        if (!op)
                return NULL;
        op->b = b;
        op->bus = sd_bus_ref(b->bus);
        op->kind = kind;
        op->userdata = userdata;
        op->req.security = _WIFI_SECURITY_INVALID;
        op->req.eap = _WIFI_EAP_INVALID;
        op->last_step = -1;
        op->next = b->ops;
        b->ops = op;
        return op;
}

static const char *bus_error_words(const sd_bus_error *e)
{
        return e && e->message ? e->message : "NetworkManager did not answer";
}

static int finish_done(WifiOp *op, int error, const char *words)
{
        WifiDoneFn cb = op->done;
        void *userdata = op->userdata;

        op_free(op);
        cb(error, words, userdata);
        return 0;
}

static int finish_list(WifiOp *op, int error, const char *words, const WifiNetworkList *l)
{
        WifiListFn cb = op->list;
        void *userdata = op->userdata;

        op_free(op);
        cb(error, words, l, userdata);
        return 0;
}

static int fail(WifiOp *op, int error, const char *words)
{
        switch (op->kind) {
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
                return finish_list(op, error, words, NULL);
        case WIFI_OP_SHARE: {
                WifiShareFn cb = op->share;
                void *userdata = op->userdata;
                op_free(op);
                cb(error, words, NULL, userdata);
                return 0;
        }
        case WIFI_OP_JOIN: {
                const WifiJoinReport report = op->report;
                void *userdata = op->userdata;
                op->done_called = true;
                op_free(op);
                report.done(WIFI_JOIN_REFUSED, words, userdata);
                return 0;
        }
        case WIFI_OP_SCAN:
        case WIFI_OP_FORGET:
        case WIFI_OP_SET_AUTOCONNECT:
        case WIFI_OP_SET_PRIORITY:
        case WIFI_OP_ENROLL:
        case WIFI_OP_CONFIGURE:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                break;
        }
        return finish_done(op, error, words);
}

static int call_async(WifiOp *op, const char *path, const char *iface, const char *member,
                      sd_bus_message_handler_t handler, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(op->bus, &m, NM_BUS_NAME, path, iface, member);
        if (r < 0)
                return r;
        /* never start NetworkManager: roamd joins through an owner that runs */
        (void)sd_bus_message_set_auto_start(m, 0);
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        op->call = sd_bus_slot_unref(op->call);
        return sd_bus_call_async(op->bus, &op->call, m, handler, op, CALL_TIMEOUT);
}

static void op_next(WifiOp *op);
static void op_work(WifiOp *op);
static int backend_watch_device(NmBackend *b, const char *path);

/* ---- reading NM's state ---------------------------------------------------------------- */
static int on_device(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        const char *path;
        char words[WIFI_WORDS_MAX];

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL)) {
                snprintf(words, sizeof(words), "NetworkManager has no device %s: %s",
                         op->b->base.ifname, bus_error_words(sd_bus_message_get_error(m)));
                return fail(op, -ENODEV, words);
        }
        if (sd_bus_message_read(m, "o", &path) < 0 || backend_watch_device(op->b, path) < 0)
                return fail(op, -EBADMSG, "NetworkManager's answer could not be read");
        op_next(op);
        return 0;
}

static int on_ap_paths(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return fail(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        if (nm_read_paths(m, &op->ap_paths, &op->n_ap_paths) < 0)
                return fail(op, -EBADMSG, "NetworkManager's access points could not be read");
        op_next(op);
        return 0;
}

static int on_ap_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        NmAp *ap;

        op->call = sd_bus_slot_unref(op->call);
        /* an AP gone between the list and its read is simply not there any more */
        if (!sd_bus_message_is_method_error(m, NULL)) {
                NmAp *a = realloc(op->aps, (op->n_aps + 1) * sizeof(NmAp));
                if (!a)
                        return fail(op, -ENOMEM, "Out of memory");
                op->aps = a;
                ap = &a[op->n_aps];
                *ap = (NmAp){.path = strdup(op->ap_paths[op->next_ap - 1])};
                if (!ap->path)
                        return fail(op, -ENOMEM, "Out of memory");
                op->n_aps++;
                if (nm_read_ap(m, ap) < 0)
                        return fail(op, -EBADMSG, "an access point could not be read");
        }
        op_next(op);
        return 0;
}

static int on_active_ap(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        const char *p = NULL;

        op->call = sd_bus_slot_unref(op->call);
        if (!sd_bus_message_is_method_error(m, NULL) && sd_bus_message_read(m, "v", "o", &p) >= 0 &&
            !streq(p, "/"))
                op->active_ap = strdup(p);
        op_next(op);
        return 0;
}

static int on_conn_paths(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return fail(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        if (nm_read_paths(m, &op->conn_paths, &op->n_conn_paths) < 0)
                return fail(op, -EBADMSG, "NetworkManager's profiles could not be read");
        op_next(op);
        return 0;
}

static int on_settings(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        NmKnown k = {.autoconnect = true};
        bool is_wifi;

        op->call = sd_bus_slot_unref(op->call);
        if (!sd_bus_message_is_method_error(m, NULL)) {
                if (nm_read_known(m, &k, &is_wifi) < 0) {
                        free(k.key_mgmt);
                        return fail(op, -EBADMSG, "a NetworkManager profile could not be read");
                }
                if (is_wifi && k.ssid_len > 0) {
                        NmKnown *a = realloc(op->known, (op->n_known + 1) * sizeof(NmKnown));
                        if (!a) {
                                free(k.key_mgmt);
                                return fail(op, -ENOMEM, "Out of memory");
                        }
                        op->known = a;
                        k.path = strdup(op->conn_paths[op->next_conn - 1]);
                        k.settings = sd_bus_message_ref(m);
                        a[op->n_known++] = k;
                } else
                        free(k.key_mgmt);
        }
        op_next(op);
        return 0;
}

/* The next read the operation needs, or its work when it has read everything. */
static void op_next(WifiOp *op)
{
        NmBackend *b = op->b;
        int r;

        if (!b->dev_path)
                r = call_async(op, NM_PATH, NM_IF, "GetDeviceByIpIface", on_device, "s",
                               b->base.ifname);
        else if ((op->need & NEED_APS) && !op->ap_paths && op->next_ap == 0) {
                op->next_ap = 0;
                r = call_async(op, b->dev_path, NM_WIRELESS_IF, "GetAllAccessPoints", on_ap_paths,
                               NULL);
                op->need &= ~NEED_APS;
                op->need |= NEED_APS << 8; /* reading each AP now */
        } else if ((op->need & (NEED_APS << 8)) && op->next_ap < op->n_ap_paths)
                r = call_async(op, op->ap_paths[op->next_ap++], PROPS_IF, "GetAll", on_ap_props,
                               "s", NM_AP_IF);
        else if (op->need & NEED_ACTIVE_AP) {
                op->need &= ~NEED_ACTIVE_AP;
                r = call_async(op, b->dev_path, PROPS_IF, "Get", on_active_ap, "ss", NM_WIRELESS_IF,
                               "ActiveAccessPoint");
        } else if (op->need & NEED_KNOWN) {
                op->need &= ~NEED_KNOWN;
                op->need |= NEED_KNOWN << 8;
                r = call_async(op, NM_SETTINGS_PATH, NM_SETTINGS_IF, "ListConnections",
                               on_conn_paths, NULL);
        } else if ((op->need & (NEED_KNOWN << 8)) && op->next_conn < op->n_conn_paths)
                r = call_async(op, op->conn_paths[op->next_conn++], NM_CONN_IF, "GetSettings",
                               on_settings, NULL);
        else {
                op_work(op);
                return;
        }
        if (r < 0)
                (void)fail(op, r, "NetworkManager could not be asked");
}

/* ---- list and known -------------------------------------------------------------------- */
static bool same_ssid(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
        return an == bn && memcmp(a, b, an) == 0;
}

static WifiNetwork *find_network(WifiNetworkList *l, const uint8_t *ssid, size_t len)
{
        for (size_t i = 0; i < l->n; i++)
                if (same_ssid(l->networks[i].ssid, l->networks[i].ssid_len, ssid, len))
                        return &l->networks[i];
        return NULL;
}

static int build_list(WifiOp *op, bool with_aps, WifiNetworkList *l)
{
        size_t max = (with_aps ? op->n_aps : 0) + op->n_known;

        l->networks = calloc(MAX(max, (size_t)1), sizeof(WifiNetwork));
        if (!l->networks)
                return -ENOMEM;
        for (size_t i = 0; with_aps && i < op->n_aps; i++) {
                const NmAp *ap = &op->aps[i];
                WifiNetwork *n = find_network(l, ap->ssid, ap->ssid_len);
                int32_t dbm = wifi_nm_strength_to_dbm(ap->strength);
                bool connected = op->active_ap && streq(op->active_ap, ap->path);

                if (!n) {
                        n = &l->networks[l->n++];
                        *n = (WifiNetwork){.ssid_len = ap->ssid_len, .signal_dbm = INT32_MIN};
                        memcpy(n->ssid, ap->ssid, ap->ssid_len);
                        n->security = wifi_nm_security(ap->flags, ap->wpa, ap->rsn);
                        n->in_range = true;
                        n->has_signal = true;
                }
                n->n_bssids++;
                n->connected |= connected;
                if (dbm > n->signal_dbm) {
                        n->signal_dbm = dbm;
                        n->freq_mhz = ap->freq;
                }
        }
        for (size_t i = 0; i < op->n_known; i++) {
                const NmKnown *k = &op->known[i];
                WifiNetwork *n = find_network(l, k->ssid, k->ssid_len);

                if (!n) {
                        n = &l->networks[l->n++];
                        *n = (WifiNetwork){.ssid_len = k->ssid_len};
                        memcpy(n->ssid, k->ssid, k->ssid_len);
                        n->security = nm_known_security(k);
                }
                n->known = true;
                n->autoconnect = k->autoconnect;
                n->has_priority = true;
                n->priority = k->priority;
                if (k->timestamp * USEC_PER_SEC > n->last_connected_usec)
                        n->last_connected_usec = k->timestamp * USEC_PER_SEC;
        }
        return 0;
}

static void work_list(WifiOp *op)
{
        _cleanup_(wifi_network_list_done) WifiNetworkList l = {};

        if (build_list(op, op->kind == WIFI_OP_LIST, &l) < 0) {
                (void)finish_list(op, -ENOMEM, "Out of memory", NULL);
                return;
        }
        (void)finish_list(op, 0, NULL, &l);
}

/* ---- forget, autoconnect, priority, share ---------------------------------------------- */
static NmKnown *next_target(WifiOp *op)
{
        while (op->next_target < op->n_known) {
                NmKnown *k = &op->known[op->next_target++];
                if (same_ssid(k->ssid, k->ssid_len, op->ssid, op->ssid_len))
                        return k;
        }
        return NULL;
}

static int not_known(WifiOp *op)
{
        char name[WIFI_SSID_MAX * 4 + 1], words[WIFI_WORDS_MAX];

        (void)wifi_ssid_to_display(op->ssid, op->ssid_len, name, sizeof(name));
        snprintf(words, sizeof(words), "NetworkManager has no saved network \"%s\"", name);
        return fail(op, -ENOENT, words);
}

static void work_targets(WifiOp *op);

static int on_target_done(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return fail(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        work_targets(op); /* the next profile of the same SSID */
        return 0;
}

static int update_profile(WifiOp *op, NmKnown *k)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *u = NULL;
        int on = op->on;
        int r;

        r = sd_bus_message_new_method_call(op->bus, &u, NM_BUS_NAME, k->path, NM_CONN_IF,
                                           "Update2");
        if (r < 0)
                return r;
        (void)sd_bus_message_set_auto_start(u, 0);
        if (op->kind == WIFI_OP_SET_AUTOCONNECT)
                r = nm_append_update(u, k->settings, "autoconnect", 'b', &on);
        else
                r = nm_append_update(u, k->settings, "autoconnect-priority", 'i', &op->value);
        if (r < 0)
                return r;
        op->call = sd_bus_slot_unref(op->call);
        return sd_bus_call_async(op->bus, &op->call, u, on_target_done, op, CALL_TIMEOUT);
}

static int on_secrets(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        NmKnown *k = &op->known[op->next_target - 1];
        _cleanup_(wifi_share_done) WifiShare s = {};
        WifiShareFn cb = op->share;
        void *ud = op->userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return fail(op, -EACCES, bus_error_words(sd_bus_message_get_error(m)));
        sd_bus_message_sensitive(m);
        if (nm_read_share(m, &s) < 0)
                return fail(op, -EBADMSG, "NetworkManager's secrets could not be read");
        memcpy(s.ssid, k->ssid, k->ssid_len);
        s.ssid_len = k->ssid_len;
        s.security = nm_known_security(k);
        s.hidden = k->hidden;
        if (s.security == WIFI_SECURITY_ENTERPRISE)
                return fail(op, -EOPNOTSUPP, "an enterprise network cannot be shared as a QR code");
        if (s.security != WIFI_SECURITY_OPEN && s.security != WIFI_SECURITY_OWE && !s.passphrase)
                return fail(op, -ENOENT,
                            "NetworkManager keeps no passphrase for this network "
                            "(an agent owns it)");
        op_free(op);
        cb(0, NULL, &s, ud);
        return 0;
}

static void work_targets(WifiOp *op)
{
        NmKnown *k = next_target(op);
        int r = -EINVAL;

        if (!k) {
                (void)finish_done(op, 0, NULL);
                return;
        }
        switch (op->kind) {
        case WIFI_OP_FORGET:
                r = call_async(op, k->path, NM_CONN_IF, "Delete", on_target_done, NULL);
                break;
        case WIFI_OP_SET_AUTOCONNECT:
        case WIFI_OP_SET_PRIORITY:
                r = update_profile(op, k);
                break;
        case WIFI_OP_SHARE:
                r = call_async(op, k->path, NM_CONN_IF, "GetSecrets", on_secrets, "s",
                               "802-11-wireless-security");
                break;
        case WIFI_OP_SCAN:
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
        case WIFI_OP_JOIN:
        case WIFI_OP_ENROLL:
        case WIFI_OP_CONFIGURE:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                r = -EINVAL;
                break;
        }
        if (r < 0)
                (void)fail(op, r, "NetworkManager could not be asked");
}

static void start_targets(WifiOp *op)
{
        bool any = false;

        for (size_t i = 0; i < op->n_known; i++)
                any |= same_ssid(op->known[i].ssid, op->known[i].ssid_len, op->ssid, op->ssid_len);
        if (!any) {
                (void)not_known(op);
                return;
        }
        op->next_target = 0;
        work_targets(op);
}

/* ---- scan ------------------------------------------------------------------------------ */
static int on_scan_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        const char *iface;

        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, NM_WIRELESS_IF))
                return 0;
        /* LastScan in the changed properties: the scan NM was asked for ended */
        if (sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                const char *key;
                if (sd_bus_message_read(m, "s", &key) < 0)
                        return 0;
                if (streq(key, "LastScan"))
                        return finish_done(op, 0, NULL);
                if (sd_bus_message_skip(m, "v") < 0 || sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

static int on_scan_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        (void)s;
        (void)usec;
        return finish_done(userdata, -ETIMEDOUT, "NetworkManager did not finish the scan in 30 s");
}

static int on_request_scan(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return finish_done(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        return 0; /* LastScan's change ends it */
}

static void work_scan(WifiOp *op)
{
        int r;

        r = sd_bus_match_signal_async(op->bus, &op->match_wifi, NM_BUS_NAME, op->b->dev_path,
                                      PROPS_IF, "PropertiesChanged", on_scan_props, NULL, op);
        if (r >= 0)
                r = sd_event_add_time_relative(op->b->base.core->event, &op->timer, CLOCK_MONOTONIC,
                                               SCAN_TIMEOUT, 0, on_scan_timeout, op);
        if (r >= 0)
                r = call_async(op, op->b->dev_path, NM_WIRELESS_IF, "RequestScan", on_request_scan,
                               "a{sv}", 0);
        if (r < 0)
                (void)finish_done(op, r, "NetworkManager could not be asked to scan");
}

/* ---- join ------------------------------------------------------------------------------ */
static void join_step(WifiOp *op, WifiJoinStep step)
{
        if (op->last_step == (int)step)
                return;
        op->last_step = step;
        op->report.step(step, NULL, op->userdata);
}

static void join_done(WifiOp *op, WifiJoinResult result, const char *words)
{
        const WifiJoinReport report = op->report;
        void *userdata = op->userdata;

        log_info("Wi-Fi join on %s through NetworkManager: %s", op->b->base.ifname,
                 wifi_join_result_to_string(result));
        if (result != WIFI_JOIN_CONNECTED && op->conn_path)
                delete_profile(op);
        op->done_called = true;
        op_free(op);
        report.done(result, words, userdata);
}

static void on_agent_get_secrets(sd_bus_message *request, const char *setting, uint32_t flags,
                                 void *userdata)
{
        WifiOp *op = userdata;
        WifiSecretWhy why =
            flags & NM_SECRET_FLAG_REQUEST_NEW ? WIFI_SECRET_WHY_WRONG_KEY : WIFI_SECRET_WHY_FIRST;

        (void)nm_agent_reply_error(&op->pending,
                                   "org.freedesktop.NetworkManager.SecretAgent."
                                   "AgentCanceled",
                                   "a newer request replaced it");
        op->pending = sd_bus_message_ref(request);
        if (!(flags & NM_SECRET_FLAG_ALLOW_INTERACTION)) {
                (void)nm_agent_reply_error(&op->pending,
                                           "org.freedesktop.NetworkManager.SecretAgent.NoSecrets",
                                           "roamd asks people only when NM allows it");
                return;
        }
        op->pending_kind =
            streq(setting, "802-1x") ? WIFI_SECRET_IDENTITY_PASSWORD : WIFI_SECRET_PASSPHRASE;
        join_step(op, WIFI_JOIN_STEP_AUTHENTICATING);
        op->report.needs_secret(op->pending_kind, why, op->userdata);
}

static void on_agent_canceled(void *userdata)
{
        WifiOp *op = userdata;

        (void)nm_agent_reply_error(&op->pending,
                                   "org.freedesktop.NetworkManager.SecretAgent."
                                   "AgentCanceled",
                                   "NetworkManager canceled the request");
}

static const NmAgentJoinOps join_agent_ops = {
    .get_secrets = on_agent_get_secrets,
    .canceled = on_agent_canceled,
};

static int nm_secret(WifiOp *op, const WifiSecrets *secrets)
{
        _cleanup_erase_and_free_ char *value = NULL;
        int r;

        if (!op || op->kind != WIFI_OP_JOIN || !op->pending)
                return -EINVAL;
        if (op->pending_kind == WIFI_SECRET_PASSPHRASE) {
                if (!secrets->passphrase || memchr(secrets->passphrase, 0, secrets->passphrase_len))
                        return -EINVAL;
                value = strndup(secrets->passphrase, secrets->passphrase_len);
                if (!value)
                        return -ENOMEM;
                r = nm_agent_reply_secret(&op->pending, "802-11-wireless-security", "psk", value,
                                          NULL);
        } else {
                if (!secrets->password)
                        return -EINVAL;
                r = nm_agent_reply_secret(&op->pending, "802-1x", "password", secrets->password,
                                          secrets->identity);
        }
        op->secret_given = true;
        return r;
}

static WifiJoinResult wrong_secret_result(WifiOp *op)
{
        if (op->req.eap >= 0)
                return WIFI_JOIN_AUTH_FAILED;
        if (op->sae_only)
                return WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE;
        return WIFI_JOIN_WRONG_KEY;
}

static int on_device_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        uint32_t new, old, reason;
        char words[WIFI_WORDS_MAX], name[WIFI_SSID_MAX * 4 + 1];

        if (!op->active_path || sd_bus_message_read(m, "uuu", &new, &old, &reason) < 0)
                return 0;
        (void)wifi_ssid_to_display(op->req.ssid, op->req.ssid_len, name, sizeof(name));
        if (new >= NM_DEVICE_PREPARE &&new < NM_DEVICE_NEED_AUTH)
                join_step(op, WIFI_JOIN_STEP_ASSOCIATING);
        else if (new == NM_DEVICE_NEED_AUTH)
                join_step(op, WIFI_JOIN_STEP_AUTHENTICATING);
        else if (new >= NM_DEVICE_IP_CONFIG &&new < NM_DEVICE_ACTIVATED)
                join_step(op, WIFI_JOIN_STEP_CONFIGURING);
        else if (new == NM_DEVICE_ACTIVATED) {
                snprintf(words, sizeof(words), "Joined %s", name);
                join_done(op, WIFI_JOIN_CONNECTED, words);
        } else if (new == NM_DEVICE_FAILED) {
                if (reason == NM_REASON_SSID_NOT_FOUND) {
                        snprintf(words, sizeof(words), "No network \"%s\" answered", name);
                        join_done(op, WIFI_JOIN_NOT_FOUND, words);
                } else if (reason == NM_REASON_NO_SECRETS && op->secret_given) {
                        snprintf(words, sizeof(words), "\"%s\" refused the %s", name,
                                 op->req.eap >= 0 ? "user name or password" : "passphrase");
                        join_done(op, wrong_secret_result(op), words);
                } else if (reason == NM_REASON_SUPPLICANT_TIMEOUT) {
                        snprintf(words, sizeof(words), "\"%s\" did not answer in time", name);
                        join_done(op,
                                  op->sae_only ? WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE
                                               : WIFI_JOIN_TIMEOUT,
                                  words);
                } else {
                        snprintf(words, sizeof(words),
                                 "NetworkManager could not join \"%s\" (device state reason %u)",
                                 name, reason);
                        join_done(op, WIFI_JOIN_REFUSED, words);
                }
        }
        return 0;
}

static int on_active_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        uint32_t state, reason;

        if (sd_bus_message_read(m, "uu", &state, &reason) < 0 || state != NM_AC_DEACTIVATED)
                return 0;
        /* deactivated without the device failing: somebody else ended it */
        join_done(op, WIFI_JOIN_CANCELED, "NetworkManager ended the join");
        return 0;
}

static int on_add_and_activate(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        const char *conn, *active;
        int r;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL)) {
                join_done(op, WIFI_JOIN_REFUSED, bus_error_words(sd_bus_message_get_error(m)));
                return 0;
        }
        r = sd_bus_message_read(m, "oo", &conn, &active);
        if (r < 0 || free_and_strdup(&op->conn_path, conn) < 0 ||
            free_and_strdup(&op->active_path, active) < 0) {
                join_done(op, WIFI_JOIN_REFUSED, "NetworkManager's answer could not be read");
                return 0;
        }
        r = nm_agent_add_join(op->b->agent, op->conn_path, &join_agent_ops, op);
        if (r >= 0)
                r = sd_bus_match_signal_async(op->bus, &op->match_ac, NM_BUS_NAME, op->active_path,
                                              NM_ACTIVE_IF, "StateChanged", on_active_state, NULL,
                                              op);
        if (r < 0) {
                (void)sd_bus_call_method_async(op->bus, NULL, NM_BUS_NAME, NM_PATH, NM_IF,
                                               "DeactivateConnection", NULL, NULL, "o",
                                               op->active_path);
                join_done(op, WIFI_JOIN_REFUSED, "roamd could not follow the join");
                return 0;
        }
        join_step(op, WIFI_JOIN_STEP_ASSOCIATING);
        return 0;
}

static void work_join(WifiOp *op)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        const NmAp *best = NULL;
        WifiSecurity sec = op->req.security;
        int r;

        if (!op->req.hidden) {
                for (size_t i = 0; i < op->n_aps; i++)
                        if (same_ssid(op->aps[i].ssid, op->aps[i].ssid_len, op->req.ssid,
                                      op->req.ssid_len) &&
                            (!best || op->aps[i].strength > best->strength))
                                best = &op->aps[i];
                if (!best) {
                        char name[WIFI_SSID_MAX * 4 + 1], words[WIFI_WORDS_MAX];
                        (void)wifi_ssid_to_display(op->req.ssid, op->req.ssid_len, name,
                                                   sizeof(name));
                        snprintf(words, sizeof(words),
                                 "NetworkManager sees no network \"%s\" (scan, or join it as "
                                 "hidden)",
                                 name);
                        join_done(op, WIFI_JOIN_NOT_FOUND, words);
                        return;
                }
                sec = wifi_nm_security(best->flags, best->wpa, best->rsn);
        }
        op->sae_only = sec == WIFI_SECURITY_WPA3;
        op->secret_given = op->req.passphrase || op->req.password;
        r = sd_bus_match_signal_async(op->bus, &op->match_dev, NM_BUS_NAME, op->b->dev_path,
                                      NM_DEVICE_IF, "StateChanged", on_device_state, NULL, op);
        if (r >= 0)
                r = sd_bus_message_new_method_call(op->bus, &m, NM_BUS_NAME, NM_PATH, NM_IF,
                                                   "AddAndActivateConnection2");
        if (r >= 0) /* a passphrase goes in it */
                r = sd_bus_message_sensitive(m);
        if (r >= 0)
                r = sd_bus_message_set_auto_start(m, 0);
        if (r >= 0)
                r = nm_append_connection(m, &op->req, sec);
        if (r >= 0)
                r = sd_bus_message_append(m, "oo", op->b->dev_path, best ? best->path : "/");
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 1, "persist", "s",
                                          op->req.remember ? "disk" : "volatile");
        if (r >= 0)
                r = sd_bus_call_async(op->bus, &op->call, m, on_add_and_activate, op, CALL_TIMEOUT);
        if (r < 0) {
                join_done(op, WIFI_JOIN_REFUSED, "NetworkManager could not be asked to join");
                return;
        }
        /* NM has the secrets now (or asks the agent): roamd keeps none beyond this point */
        if (op->req.passphrase)
                explicit_bzero(op->req.passphrase, strlen(op->req.passphrase));
        if (op->req.password)
                explicit_bzero(op->req.password, strlen(op->req.password));
        join_step(op, WIFI_JOIN_STEP_ASSOCIATING);
}

static void op_work(WifiOp *op)
{
        switch (op->kind) {
        case WIFI_OP_SCAN:
                work_scan(op);
                break;
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
                work_list(op);
                break;
        case WIFI_OP_JOIN:
                work_join(op);
                break;
        case WIFI_OP_FORGET:
        case WIFI_OP_SET_AUTOCONNECT:
        case WIFI_OP_SET_PRIORITY:
        case WIFI_OP_SHARE:
                start_targets(op);
                break;
        case WIFI_OP_ENROLL:
        case WIFI_OP_CONFIGURE:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                (void)fail(op, -EOPNOTSUPP, "not offered");
                break;
        }
}

/* ---- the backend's operations ---------------------------------------------------------- */
static int nm_scan(WifiBackend *base, WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        NmBackend *b = (NmBackend *)base;
        WifiOp *op;

        op = op_new(b, WIFI_OP_SCAN, userdata);
        if (!op)
                return -ENOMEM;
        op->done = cb;
        *ret = op;
        op_next(op);
        return 0;
}

static int nm_list_common(WifiBackend *base, WifiOpKind kind, WifiListFn cb, void *userdata,
                          WifiOp **ret)
{
        NmBackend *b = (NmBackend *)base;
        WifiOp *op;

        op = op_new(b, kind, userdata);
        if (!op)
                return -ENOMEM;
        op->list = cb;
        op->need = NEED_KNOWN | (kind == WIFI_OP_LIST ? NEED_APS | NEED_ACTIVE_AP : 0);
        *ret = op;
        op_next(op);
        return 0;
}

static int nm_list(WifiBackend *b, WifiListFn cb, void *userdata, WifiOp **ret)
{
        return nm_list_common(b, WIFI_OP_LIST, cb, userdata, ret);
}

static int nm_known(WifiBackend *b, WifiListFn cb, void *userdata, WifiOp **ret)
{
        return nm_list_common(b, WIFI_OP_KNOWN, cb, userdata, ret);
}

static int copy_str(char **dst, const char *src)
{
        if (!src)
                return 0;
        *dst = strdup(src);
        return *dst ? 0 : -ENOMEM;
}

static int nm_join(WifiBackend *base, const WifiJoinRequest *req, const WifiJoinReport *report,
                   void *userdata, WifiOp **ret)
{
        NmBackend *b = (NmBackend *)base;
        WifiOp *op;
        int r;

        for (WifiOp *o = b->ops; o; o = o->next)
                if (o->kind == WIFI_OP_JOIN)
                        return -EBUSY;
        if (req->ssid_len == 0 || req->ssid_len > WIFI_SSID_MAX)
                return -EINVAL;
        if (req->hidden && req->security < 0)
                return -EINVAL;
        op = op_new(b, WIFI_OP_JOIN, userdata);
        if (!op)
                return -ENOMEM;
        op->report = *report;
        op->req = *req;
        op->req.passphrase = op->req.identity = op->req.anonymous_identity = NULL;
        op->req.password = op->req.phase2 = op->req.ca_file = op->req.domain = NULL;
        if (req->passphrase) {
                op->req.passphrase = strndup(req->passphrase, req->passphrase_len);
                r = op->req.passphrase ? 0 : -ENOMEM;
        } else
                r = 0;
        if (r >= 0)
                r = copy_str(&op->req.identity, req->identity);
        if (r >= 0)
                r = copy_str(&op->req.anonymous_identity, req->anonymous_identity);
        if (r >= 0)
                r = copy_str(&op->req.password, req->password);
        if (r >= 0)
                r = copy_str(&op->req.phase2, req->phase2);
        if (r >= 0)
                r = copy_str(&op->req.ca_file, req->ca_file);
        if (r >= 0)
                r = copy_str(&op->req.domain, req->domain);
        if (r < 0) {
                op_free(op);
                return r;
        }
        op->need = req->hidden ? 0 : NEED_APS;
        *ret = op;
        op_next(op);
        return 0;
}

static int nm_target(WifiBackend *base, WifiOpKind kind, const uint8_t *ssid, size_t len,
                     void *userdata, WifiOp **ret, WifiOp **out)
{
        NmBackend *b = (NmBackend *)base;
        WifiOp *op;

        if (len == 0 || len > WIFI_SSID_MAX)
                return -EINVAL;
        op = op_new(b, kind, userdata);
        if (!op)
                return -ENOMEM;
        memcpy(op->ssid, ssid, len);
        op->ssid_len = len;
        op->need = NEED_KNOWN;
        *out = op;
        *ret = op;
        return 0;
}

static int nm_forget(WifiBackend *b, const uint8_t *ssid, size_t len, WifiDoneFn cb, void *userdata,
                     WifiOp **ret)
{
        WifiOp *op;
        int r = nm_target(b, WIFI_OP_FORGET, ssid, len, userdata, ret, &op);

        if (r < 0)
                return r;
        op->done = cb;
        op_next(op);
        return 0;
}

static int nm_set_autoconnect(WifiBackend *b, const uint8_t *ssid, size_t len, bool on,
                              WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = nm_target(b, WIFI_OP_SET_AUTOCONNECT, ssid, len, userdata, ret, &op);

        if (r < 0)
                return r;
        op->done = cb;
        op->on = on;
        op_next(op);
        return 0;
}

static int nm_set_priority(WifiBackend *b, const uint8_t *ssid, size_t len, int32_t priority,
                           WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = nm_target(b, WIFI_OP_SET_PRIORITY, ssid, len, userdata, ret, &op);

        if (r < 0)
                return r;
        op->done = cb;
        op->value = priority;
        op_next(op);
        return 0;
}

static int nm_share(WifiBackend *b, const uint8_t *ssid, size_t len, WifiShareFn cb, void *userdata,
                    WifiOp **ret)
{
        WifiOp *op;
        int r = nm_target(b, WIFI_OP_SHARE, ssid, len, userdata, ret, &op);

        if (r < 0)
                return r;
        op->share = cb;
        op_next(op);
        return 0;
}

static int nm_enroll(WifiBackend *b, const WifiEnrollReport *report, void *userdata,
                     WifiEnroll **ret)
{
        (void)b;
        (void)report;
        (void)userdata;
        (void)ret;
        return -EOPNOTSUPP;
}

static int nm_configure(WifiBackend *b, const char *uri, const WifiJoinReport *report,
                        void *userdata, WifiEnroll **ret)
{
        return -EOPNOTSUPP;
}

static WifiBackend *nm_free(WifiBackend *base)
{
        NmBackend *b = (NmBackend *)base;

        if (!b)
                return NULL;
        while (b->ops)
                wifi_nm_cancel(b->ops);
        sd_bus_slot_unref(b->match_dev_removed);
        sd_bus_slot_unref(b->match_ap_added);
        sd_bus_slot_unref(b->match_ap_removed);
        bus_name_watch_free(b->nm);
        nm_agent_unref(b->agent);
        free(b->dev_path);
        sd_bus_unref(b->bus);
        wifi_backend_done(&b->base);
        free(b);
        return NULL;
}

static const WifiBackendOps nm_ops = {
    .owner = WIFI_OWNER_NETWORKMANAGER,
    .why_not = nm_why_not,
    .scan = nm_scan,
    .list = nm_list,
    .known = nm_known,
    .join = nm_join,
    .secret = nm_secret,
    .forget = nm_forget,
    .set_autoconnect = nm_set_autoconnect,
    .set_priority = nm_set_priority,
    .share = nm_share,
    .enroll = nm_enroll,
    .configure = nm_configure,
    .cancel = wifi_nm_cancel,
    .free = nm_free,
};

/* ---- what the backend tells the core unasked ------------------------------------------- */
static int on_nm_owner(BusNameWatch *w, const char *owner, void *userdata)
{
        NmBackend *b = userdata;
        (void)w;

        if (*owner)
                return 0;
        free(b->dev_path);
        b->dev_path = NULL;
        b->base.events->lost("NetworkManager stopped", b->base.userdata);
        return 0;
}

static int on_ap_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        NmBackend *b = userdata;
        (void)m;

        b->base.events->networks_changed(b->base.userdata);
        return 0;
}

static int on_device_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        NmBackend *b = userdata;
        const char *path;

        if (sd_bus_message_read(m, "o", &path) < 0 || !b->dev_path || !streq(path, b->dev_path))
                return 0;
        b->base.events->lost("NetworkManager no longer has the device", b->base.userdata);
        return 0;
}

static int backend_watch_device(NmBackend *b, const char *path)
{
        int r;

        if (free_and_strdup(&b->dev_path, path) < 0)
                return -ENOMEM;
        b->match_ap_added = sd_bus_slot_unref(b->match_ap_added);
        b->match_ap_removed = sd_bus_slot_unref(b->match_ap_removed);
        r = sd_bus_match_signal_async(b->bus, &b->match_ap_added, NM_BUS_NAME, path, NM_WIRELESS_IF,
                                      "AccessPointAdded", on_ap_changed, NULL, b);
        if (r >= 0)
                r = sd_bus_match_signal_async(b->bus, &b->match_ap_removed, NM_BUS_NAME, path,
                                              NM_WIRELESS_IF, "AccessPointRemoved", on_ap_changed,
                                              NULL, b);
        return r;
}

int wifi_nm_new(Core *core, const char *ifname, int ifindex, const WifiBackendEvents *events,
                void *userdata, WifiBackend **ret)
{
        NmBackend *b;
        int r;

        if (!core->bus)
                return -ENOTCONN;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        r = wifi_backend_init(&b->base, &nm_ops, core, ifname, ifindex, events, userdata);
        if (r < 0) {
                free(b);
                return r;
        }
        b->bus = sd_bus_ref(core->bus);
        b->agent = nm_agent_ref(core->bus);
        if (!b->agent) {
                nm_free(&b->base);
                return -ENOMEM;
        }
        r = bus_name_watch_new(core->bus, NM_BUS_NAME, on_nm_owner, b, &b->nm);
        if (r >= 0)
                r = sd_bus_match_signal_async(core->bus, &b->match_dev_removed, NM_BUS_NAME,
                                              NM_PATH, NM_IF, "DeviceRemoved", on_device_removed,
                                              NULL, b);
        if (r < 0) {
                nm_free(&b->base);
                return r;
        }
        *ret = &b->base;
        return 0;
}
