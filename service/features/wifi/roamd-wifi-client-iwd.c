/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "roam-bus-name.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-config.h"
#include "roam-text.h"
#include "roamd-core.h"
#include "roamd-wifi-client-iwd.h"
#include "roamd-wifi-iwd-dpp.h"

/* Wi-Fi through iwd's D-Bus API (docs/wifi.md; research wifi-join.md §1.b): scan =
 * Station.Scan and Scanning going false; list = the Network objects (GetOrderedNetworks for
 * their signal) and the KnownNetwork objects, also out of range; join = Network.Connect or
 * Station.ConnectHiddenNetwork, the passphrase given to iwd through roamd's agent when iwd asks
 * (RequestPassphrase); forget = KnownNetwork.Forget; autoconnect = KnownNetwork.AutoConnect.
 * A wrong passphrase is Connect's net.connman.iwd.Failed after roamd's agent answered: the
 * join asks for a new one (JoinNeedsSecret wrong-key) and connects again, and iwd asks the
 * agent again (network_connect_failed() set ask_passphrase). iwd saves a profile only after a
 * success, so a wrong first passphrase leaves nothing behind. 802.1X: iwd joins only from a
 * provisioning file, which roamd writes (0600, O_EXCL + rename, without the password, which
 * iwd asks of the agent) and removes when the join does not connect. Not offered here:
 * priority (iwd ranks networks itself), DPP enrollment. Share reads Passphrase= from iwd's
 * NAME.psk (as root). */

#define IWD_BUS_NAME   "net.connman.iwd"
#define IWD_PATH       "/net/connman/iwd"
#define IWD_AGENT_MGR  "net.connman.iwd.AgentManager"
#define IWD_AGENT_IF   "net.connman.iwd.Agent"
#define IWD_DEVICE_IF  "net.connman.iwd.Device"
#define IWD_STATION_IF "net.connman.iwd.Station"
#define IWD_NETWORK_IF "net.connman.iwd.Network"
#define IWD_KNOWN_IF   "net.connman.iwd.KnownNetwork"
#define PROPS_IF       "org.freedesktop.DBus.Properties"
#define OM_IF          "org.freedesktop.DBus.ObjectManager"
#define AGENT_PATH     "/org/roam1/wifi/iwd_agent"
#define CALL_TIMEOUT   (25 * USEC_PER_SEC)
/* Connect() returns once connected (with iwd's own DHCP, ~30 s per BSS) or failed; it may wait
 * for the agent too (120 s) */
#define CONNECT_TIMEOUT (180 * USEC_PER_SEC)
#define SCAN_TIMEOUT    (30 * USEC_PER_SEC)
#define MAX_WRONG_KEYS  5
#define PROFILE_WAIT    (10 * USEC_PER_SEC)

typedef struct IwdBackend IwdBackend;

typedef struct IwdNet {
        char *path;
        char name[WIFI_SSID_MAX + 1];
        char type[16];
        bool connected, known, autoconnect, hidden;
        int32_t signal; /* 100 * dBm; 0 not in range */
        char *known_path;
} IwdNet;

struct WifiOp {
        IwdBackend *b;
        WifiOpKind kind;
        struct WifiOp *next;
        sd_bus_slot *call, *match;
        sd_event_source *timer;

        WifiDoneFn done;
        WifiListFn list;
        WifiShareFn share;
        void *userdata;

        IwdNet *nets;
        size_t n_nets;
        bool have_objects;

        char ssid[WIFI_SSID_MAX + 1];
        char shown[WIFI_SSID_MAX * 4 + 1]; /* the SSID in words: controls and bidi escaped */
        bool on;

        /* join */
        WifiJoinReport report;
        bool hidden;
        char *net_path;          /* the Network iwd asks a passphrase for */
        char *passphrase;        /* the next answer to iwd's agent */
        sd_bus_message *pending; /* iwd's RequestPassphrase waiting for the user */
        bool asked_user, answered, open;
        /* 802.1X: the profile roamd wrote for this join (removed unless it connects) */
        WifiEap eap;
        char *identity, *password, *anonymous_identity, *ca_file, *domain, *phase2;
        char *profile;
        bool pending_user; /* the pending request wants (user, password) */
        bool await_known;  /* iwd has yet to read the profile roamd wrote */
        unsigned wrong_keys;
        bool done_called;
};

struct IwdBackend {
        WifiBackend base;
        sd_bus *bus;
        BusNameWatch *iwd;
        sd_bus_slot *agent_register, *match_props;
        char *station_path;
        WifiOp *ops;
};

/* roamd's one agent on the bus connection (iwd allows one per connection): the backends'
 * joins it answers for. */
static IwdBackend *agent_backends[8];
/* iwd's state directory when roamd has no configuration (tests/wifi/wifi-drive.c) */
static char state_dir_default[PATH_MAX] = "/var/lib/iwd";

void wifi_iwd_set_state_directory(const char *dir)
{
        snprintf(state_dir_default, sizeof(state_dir_default), "%s", dir);
}

/* [WiFi] IwdStateDirectory=, read when used (a reload may change it) */
static const char *state_dir(const IwdBackend *b)
{
        const Core *core = b->base.core;

        return core->config && core->config->wifi.iwd_state_dir ? core->config->wifi.iwd_state_dir
                                                                : state_dir_default;
}
static sd_bus_slot *agent_vtable_slot;

static const char *iwd_why_not(const WifiBackend *b, WifiOpKind op)
{
        (void)b;
        switch (op) {
        case WIFI_OP_SET_PRIORITY:
                return "iwd has no priority for known networks: it ranks them itself";
        case WIFI_OP_CONFIGURE:
                return "iwd's ConfigureEnrollee does not say whether the device received the "
                       "network, so roamd does not configure devices through iwd";
        case WIFI_OP_JOIN: /* iwd_join()'s only -EOPNOTSUPP */
                return "iwd joins a hidden 802.1X network only by autoconnect, from a "
                       "provisioning file in its state directory";
        case WIFI_OP_ENROLL: /* roamd-wifi-iwd-dpp.c */
        case WIFI_OP_SHARE:
        case WIFI_OP_SCAN:
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
        case WIFI_OP_FORGET:
        case WIFI_OP_SET_AUTOCONNECT:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                break;
        }
        return NULL;
}

/* ---- operations ------------------------------------------------------------------------ */
static void wipe(char **s)
{
        if (*s) {
                explicit_bzero(*s, strlen(*s));
                free(*s);
                *s = NULL;
        }
}

static void nets_free(WifiOp *op)
{
        for (size_t i = 0; i < op->n_nets; i++) {
                free(op->nets[i].path);
                free(op->nets[i].known_path);
        }
        free(op->nets);
        op->nets = NULL;
        op->n_nets = 0;
}

static void op_free(WifiOp *op)
{
        if (!op)
                return;
        for (WifiOp **p = &op->b->ops; *p; p = &(*p)->next)
                if (*p == op) {
                        *p = op->next;
                        break;
                }
        if (op->pending) {
                (void)sd_bus_reply_method_errorf(op->pending, IWD_AGENT_IF ".Error.Canceled",
                                                 "The join was canceled in roamd");
                op->pending = sd_bus_message_unref(op->pending);
        }
        sd_bus_slot_unref(op->call);
        sd_bus_slot_unref(op->match);
        sd_event_source_disable_unref(op->timer);
        nets_free(op);
        free(op->net_path);
        wipe(&op->passphrase);
        wipe(&op->password);
        free(op->identity);
        free(op->anonymous_identity);
        free(op->ca_file);
        free(op->domain);
        free(op->phase2);
        free(op->profile);
        free(op);
}

void wifi_iwd_cancel(WifiOp *op)
{
        if (!op)
                return;
        /* a join roamd gives up: iwd's Connect is answered Aborted once the agent's request
         * is refused; a connection already made by it is disconnected */
        if (op->kind == WIFI_OP_JOIN && !op->done_called && op->profile)
                (void)unlink(op->profile);
        if (op->kind == WIFI_OP_JOIN && !op->done_called && op->b->station_path && op->answered)
                (void)sd_bus_call_method_async(op->b->bus, NULL, IWD_BUS_NAME, op->b->station_path,
                                               IWD_STATION_IF, "Disconnect", NULL, NULL, "");
        op_free(op);
}

static WifiOp *op_new(IwdBackend *b, WifiOpKind kind, void *userdata)
{
        WifiOp *op = calloc(1, sizeof(*op));

        if (!op)
                return NULL;
        op->b = b;
        op->kind = kind;
        op->userdata = userdata;
        op->eap = _WIFI_EAP_INVALID;
        op->next = b->ops;
        b->ops = op;
        return op;
}

static const char *bus_error_words(const sd_bus_error *e)
{
        return e && e->message ? e->message : "iwd did not answer";
}

static int finish_done(WifiOp *op, int error, const char *words)
{
        WifiDoneFn cb = op->done;
        void *userdata = op->userdata;

        op_free(op);
        cb(error, words, userdata);
        return 0;
}

static void join_done(WifiOp *op, WifiJoinResult result, const char *words)
{
        const WifiJoinReport report = op->report;
        void *userdata = op->userdata;

        log_info("Wi-Fi join on %s through iwd: %s", op->b->base.ifname,
                 wifi_join_result_to_string(result));
        if (result != WIFI_JOIN_CONNECTED && op->profile && unlink(op->profile) < 0)
                log_warning_errno(errno, "iwd profile %s not removed: %m", op->profile);
        op->done_called = true;
        op_free(op);
        report.done(result, words, userdata);
}

static int fail(WifiOp *op, int error, const char *words)
{
        if (op->kind == WIFI_OP_JOIN) {
                join_done(op, WIFI_JOIN_REFUSED, words);
                return 0;
        }
        if (op->kind == WIFI_OP_SHARE) {
                WifiShareFn cb = op->share;
                void *userdata = op->userdata;
                op_free(op);
                cb(error, words, NULL, userdata);
                return 0;
        }
        if (op->kind == WIFI_OP_LIST || op->kind == WIFI_OP_KNOWN) {
                WifiListFn cb = op->list;
                void *userdata = op->userdata;
                op_free(op);
                cb(error, words, NULL, userdata);
                return 0;
        }
        return finish_done(op, error, words);
}

static int call_async(WifiOp *op, const char *path, const char *iface, const char *member,
                      sd_bus_message_handler_t handler, uint64_t timeout, const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = sd_bus_message_new_method_call(op->b->bus, &m, IWD_BUS_NAME, path, iface, member);
        if (r < 0)
                return r;
        (void)sd_bus_message_set_auto_start(m, 0);
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        op->call = sd_bus_slot_unref(op->call);
        return sd_bus_call_async(op->b->bus, &op->call, m, handler, op, timeout);
}

/* ---- iwd's objects ---------------------------------------------------------------------- */
static IwdNet *net_add(WifiOp *op, const char *path)
{
        IwdNet *a = realloc(op->nets, (op->n_nets + 1) * sizeof(IwdNet));

        if (!a)
                return NULL;
        op->nets = a;
        a[op->n_nets] = (IwdNet){.path = strdup(path)};
        if (!a[op->n_nets].path)
                return NULL;
        return &a[op->n_nets++];
}

/* One interface's properties of GetManagedObjects (an a{sv}) into the network; the station's
 * path when it is the Device named ifname. */
static int read_props(sd_bus_message *m, const char *iface, IwdNet *n, IwdBackend *b,
                      const char *path, bool *is_our_device)
{
        const char *key, *s;
        int r, v;

        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                r = sd_bus_message_read(m, "s", &key);
                if (r < 0)
                        return r;
                if (streq(iface, IWD_DEVICE_IF) && streq(key, "Name")) {
                        r = sd_bus_message_read(m, "v", "s", &s);
                        if (r >= 0 && streq(s, b->base.ifname))
                                *is_our_device = true;
                } else if (n && streq(key, "Name")) {
                        r = sd_bus_message_read(m, "v", "s", &s);
                        if (r >= 0)
                                snprintf(n->name, sizeof(n->name), "%s", s);
                } else if (n && streq(key, "Type")) {
                        r = sd_bus_message_read(m, "v", "s", &s);
                        if (r >= 0)
                                snprintf(n->type, sizeof(n->type), "%s", s);
                } else if (n && streq(key, "Connected")) {
                        r = sd_bus_message_read(m, "v", "b", &v);
                        n->connected = v;
                } else if (n && streq(key, "AutoConnect")) {
                        r = sd_bus_message_read(m, "v", "b", &v);
                        n->autoconnect = v;
                } else if (n && streq(key, "Hidden")) {
                        r = sd_bus_message_read(m, "v", "b", &v);
                        n->hidden = v;
                } else if (n && streq(key, "KnownNetwork")) {
                        r = sd_bus_message_read(m, "v", "o", &s);
                        if (r >= 0 && free_and_strdup(&n->known_path, s) < 0)
                                r = -ENOMEM;
                } else
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        (void)path;
        return r < 0 ? r : sd_bus_message_exit_container(m);
}

static void op_work(WifiOp *op);

/* Networks of our station (IwdNet with type) and known networks (known = true, in_range
 * false until a Network names them). */
static int on_objects(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        IwdBackend *b = op->b;
        const char *path, *iface;
        int r;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return fail(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        nets_free(op);
        r = sd_bus_message_enter_container(m, 'a', "{oa{sa{sv}}}");
        while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "oa{sa{sv}}")) > 0) {
                bool ours = false;
                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
                while (r >= 0 && (r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
                        IwdNet *n = NULL;
                        r = sd_bus_message_read(m, "s", &iface);
                        if (r >= 0 &&
                            (streq(iface, IWD_NETWORK_IF) || streq(iface, IWD_KNOWN_IF))) {
                                n = net_add(op, path);
                                if (!n)
                                        r = -ENOMEM;
                                else
                                        n->known = streq(iface, IWD_KNOWN_IF);
                        }
                        if (r >= 0)
                                r = read_props(m, iface, n, b, path, &ours);
                        if (r >= 0 && ours && free_and_strdup(&b->station_path, path) < 0)
                                r = -ENOMEM;
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0)
                return fail(op, -EBADMSG, "iwd's objects could not be read");
        if (!b->station_path) {
                char words[WIFI_WORDS_MAX];
                snprintf(words, sizeof(words), "iwd has no station %s", b->base.ifname);
                return fail(op, -ENODEV, words);
        }
        /* networks of other stations are not ours */
        for (size_t i = 0; i < op->n_nets;) {
                IwdNet *n = &op->nets[i];
                if (!n->known && strncmp(n->path, b->station_path, strlen(b->station_path)) != 0) {
                        free(n->path);
                        free(n->known_path);
                        op->nets[i] = op->nets[--op->n_nets];
                } else
                        i++;
        }
        op->have_objects = true;
        op_work(op);
        return 0;
}

static int read_objects(WifiOp *op)
{
        return call_async(op, "/", OM_IF, "GetManagedObjects", on_objects, CALL_TIMEOUT, NULL);
}

static IwdNet *find(WifiOp *op, const char *name, bool known)
{
        for (size_t i = 0; i < op->n_nets; i++)
                if (op->nets[i].known == known && streq(op->nets[i].name, name))
                        return &op->nets[i];
        return NULL;
}

/* ---- list and known -------------------------------------------------------------------- */
static WifiSecurity type_security(const char *type)
{
        if (streq(type, "open"))
                return WIFI_SECURITY_OPEN;
        if (streq(type, "psk"))
                return WIFI_SECURITY_PSK;
        if (streq(type, "wep"))
                return WIFI_SECURITY_WEP;
        return WIFI_SECURITY_ENTERPRISE; /* 8021x, hotspot */
}

static int on_ordered(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        _cleanup_(wifi_network_list_done) WifiNetworkList l = {};
        const char *path;
        int16_t signal;
        int r;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return fail(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        r = sd_bus_message_enter_container(m, 'a', "(on)");
        while (r >= 0 && (r = sd_bus_message_read(m, "(on)", &path, &signal)) > 0)
                for (size_t i = 0; i < op->n_nets; i++)
                        if (!op->nets[i].known && streq(op->nets[i].path, path))
                                op->nets[i].signal = signal;
        if (r < 0)
                return fail(op, -EBADMSG, "iwd's networks could not be read");
        l.networks = calloc(MAX(op->n_nets, (size_t)1), sizeof(WifiNetwork));
        if (!l.networks)
                return fail(op, -ENOMEM, "Out of memory");
        for (int pass = 0; pass < 2; pass++) /* networks in range first, then known ones */
                for (size_t i = 0; i < op->n_nets; i++) {
                        const IwdNet *n = &op->nets[i];
                        WifiNetwork *w = NULL;
                        if (n->known != (pass == 1))
                                continue;
                        if (op->kind == WIFI_OP_KNOWN && !n->known)
                                continue;
                        for (size_t k = 0; k < l.n; k++)
                                if (l.networks[k].ssid_len == strlen(n->name) &&
                                    memcmp(l.networks[k].ssid, n->name, strlen(n->name)) == 0)
                                        w = &l.networks[k];
                        if (!w) {
                                w = &l.networks[l.n++];
                                w->ssid_len = strlen(n->name);
                                memcpy(w->ssid, n->name, w->ssid_len);
                                w->security = type_security(n->type);
                        }
                        if (n->known) {
                                w->known = true;
                                w->autoconnect = n->autoconnect;
                        } else {
                                w->in_range = true;
                                w->connected = n->connected;
                                w->has_signal = n->signal != 0;
                                w->signal_dbm = n->signal / 100;
                                w->n_bssids = 1;
                        }
                }
        WifiListFn cb = op->list;
        void *ud = op->userdata;
        op_free(op);
        cb(0, NULL, &l, ud);
        return 0;
}

/* ---- scan ------------------------------------------------------------------------------ */
static int on_scan_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        return finish_done(userdata, -ETIMEDOUT, "iwd did not finish the scan in 30 s");
}

static int on_scan(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return finish_done(op, -EBUSY, bus_error_words(sd_bus_message_get_error(m)));
        return 0; /* Scanning going false ends it (on_station_props) */
}

/* ---- join ------------------------------------------------------------------------------ */
static void join_step(WifiOp *op, WifiJoinStep step)
{
        op->report.step(step, NULL, op->userdata);
}

static int connect_again(WifiOp *op);

static int on_connect(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);
        char words[WIFI_WORDS_MAX];

        op->call = sd_bus_slot_unref(op->call);
        if (!e) {
                snprintf(words, sizeof(words), "Joined %s", op->shown);
                join_done(op, WIFI_JOIN_CONNECTED, words);
                return 0;
        }
        if (sd_bus_error_has_name(e, "net.connman.iwd.Failed") && !op->open) {
                /* the 4-way handshake failed (with roamd's answer or a saved passphrase): iwd
                 * asks the agent again on the next Connect */
                op->answered = false;
                if (++op->wrong_keys >= MAX_WRONG_KEYS) {
                        snprintf(words, sizeof(words), "\"%s\" refused the %s", op->shown,
                                 op->eap >= 0 ? "user name or password" : "passphrase");
                        join_done(op, op->eap >= 0 ? WIFI_JOIN_AUTH_FAILED : WIFI_JOIN_WRONG_KEY,
                                  words);
                        return 0;
                }
                op->asked_user = true;
                op->report.needs_secret(op->eap >= 0 ? WIFI_SECRET_IDENTITY_PASSWORD
                                                     : WIFI_SECRET_PASSPHRASE,
                                        WIFI_SECRET_WHY_WRONG_KEY, op->userdata);
                return 0;
        }
        if (sd_bus_error_has_name(e, "net.connman.iwd.InvalidFormat")) {
                op->answered = false;
                op->asked_user = true;
                op->report.needs_secret(WIFI_SECRET_PASSPHRASE, WIFI_SECRET_WHY_KEY_FORMAT,
                                        op->userdata);
                return 0;
        }
        if (sd_bus_error_has_name(e, "net.connman.iwd.NotFound")) {
                snprintf(words, sizeof(words), "No network \"%s\" answered", op->shown);
                join_done(op, WIFI_JOIN_NOT_FOUND, words);
                return 0;
        }
        if (sd_bus_error_has_name(e, "net.connman.iwd.Aborted")) {
                join_done(op, WIFI_JOIN_CANCELED, "iwd aborted the join");
                return 0;
        }
        snprintf(words, sizeof(words), "iwd: %s", bus_error_words(e));
        join_done(op, WIFI_JOIN_REFUSED, words);
        return 0;
}

static int connect_again(WifiOp *op)
{
        join_step(op, WIFI_JOIN_STEP_ASSOCIATING);
        if (op->hidden)
                return call_async(op, op->b->station_path, IWD_STATION_IF, "ConnectHiddenNetwork",
                                  on_connect, CONNECT_TIMEOUT, "s", op->ssid);
        return call_async(op, op->net_path, IWD_NETWORK_IF, "Connect", on_connect, CONNECT_TIMEOUT,
                          NULL);
}

/* RequestUserPassword / RequestUserNameAndPassword answered with the join's identity and
 * password; consumes *request */
static int answer_user(WifiOp *op, sd_bus_message **request)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *req = TAKE_PTR(*request);
        int r;

        op->answered = true;
        if (op->pending_user)
                r = sd_bus_reply_method_return(req, "ss", strempty(op->identity), op->password);
        else
                r = sd_bus_reply_method_return(req, "s", op->password);
        wipe(&op->password);
        return r;
}

static int iwd_secret(WifiOp *op, const WifiSecrets *secrets)
{
        int r;

        if (!op || op->kind != WIFI_OP_JOIN || !op->asked_user)
                return -EINVAL;
        if (op->eap >= 0) {
                if (!secrets->password)
                        return -EINVAL;
                if (secrets->identity && free_and_strdup(&op->identity, secrets->identity) < 0)
                        return -ENOMEM;
                wipe(&op->password);
                op->password = strdup(secrets->password);
                if (!op->password)
                        return -ENOMEM;
                op->asked_user = false;
                if (op->pending)
                        return answer_user(op, &op->pending);
                r = connect_again(op);
                return r < 0 ? r : 0;
        }
        if (!secrets->passphrase || memchr(secrets->passphrase, 0, secrets->passphrase_len))
                return -EINVAL;
        wipe(&op->passphrase);
        op->passphrase = strndup(secrets->passphrase, secrets->passphrase_len);
        if (!op->passphrase)
                return -ENOMEM;
        op->asked_user = false;
        if (op->pending) { /* iwd is waiting for it */
                op->answered = true;
                r = sd_bus_reply_method_return(op->pending, "s", op->passphrase);
                op->pending = sd_bus_message_unref(op->pending);
                wipe(&op->passphrase);
                return r;
        }
        /* after a wrong one: connect again, and iwd asks the agent for it */
        r = connect_again(op);
        return r < 0 ? r : 0;
}

/* storage.c: the SSID itself when it is [A-Za-z0-9 _-], else '=' and its hex */
static void profile_name(const char *ssid, char *out, size_t size)
{
        bool plain = true;
        size_t o = 0;

        for (const char *c = ssid; *c; c++)
                plain &= (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                         (*c >= '0' && *c <= '9') || *c == ' ' || *c == '_' || *c == '-';
        if (plain) {
                snprintf(out, size, "%s.8021x", ssid);
                return;
        }
        o += (size_t)snprintf(out, size, "=");
        for (const char *c = ssid; *c && o + 3 < size; c++)
                o += (size_t)snprintf(out + o, size - o, "%02x", (unsigned char)*c);
        snprintf(out + o, size - o, ".8021x");
}

/* A value on one line of iwd's settings file: no line breaks, nothing that starts a section */
static bool profile_value_ok(const char *v)
{
        return !v || !strpbrk(v, "\r\n");
}

static bool same_word(const char *a, const char *b)
{
        return strcasecmp(a, b) == 0;
}

/* --phase2 (NetworkManager's phase2-auth, wpa_supplicant's phase2 "auth=") as iwd's
 * EAP-<M>-Phase2-Method. Inside PEAP it names an EAP method (eap-peap.c checks it as one, by
 * name in any case); inside TTLS "auth=" is TTLS's own authentication without EAP, which iwd
 * names Tunneled-PAP, -CHAP, -MSCHAP and -MSCHAPv2 (eap-ttls.c, compared exactly). Anything
 * iwd would refuse, or would read as something else, is said here in words instead. */
static int iwd_phase2(WifiEap eap, const char *phase2, const char **ret, char *words, size_t size)
{
        bool ttls = eap == WIFI_EAP_TTLS;

        if (!phase2 || same_word(phase2, "mschapv2"))
                *ret = ttls ? "Tunneled-MSCHAPv2" : "MSCHAPV2";
        else if (same_word(phase2, "pap") && ttls)
                *ret = "Tunneled-PAP";
        else if ((same_word(phase2, "gtc") || same_word(phase2, "md5")) && !ttls)
                *ret = same_word(phase2, "gtc") ? "GTC" : "MD5";
        else {
                if (same_word(phase2, "pap"))
                        snprintf(words, size,
                                 "PEAP carries only EAP methods inside (MSCHAPV2, GTC, MD5), and "
                                 "PAP is none: iwd refuses it; PAP is for TTLS");
                else if (ttls && (same_word(phase2, "gtc") || same_word(phase2, "md5")))
                        snprintf(words, size,
                                 "TTLS's phase 2 is PAP or MSCHAPV2 without EAP, and %s is an EAP "
                                 "method: roamd asks it of iwd only inside PEAP",
                                 same_word(phase2, "gtc") ? "GTC" : "MD5");
                else
                        snprintf(words, size, "roamd gives iwd no phase-2 method by this name");
                return -EINVAL;
        }
        return 0;
}

/* The provisioning file iwd reads for an 802.1X network (iwd.network(5)), written as iwd writes
 * its own: a 0600 temporary file made with O_EXCL, then renamed, never over a profile that is
 * there (RENAME_NOREPLACE): roamd does not replace what the admin provisioned. The password is
 * left out, so iwd asks roamd's agent for it (RequestUserPassword) and it never reaches disk. */
static int write_profile(WifiOp *op, char *words, size_t size)
{
        const char *m = op->eap == WIFI_EAP_TTLS ? "TTLS" : "PEAP", *phase2;
        char name[2 * WIFI_SSID_MAX + 16], path[PATH_MAX], tmp[PATH_MAX];
        _cleanup_fclose_ FILE *f = NULL;
        int fd, r;

        if (!op->identity || !profile_value_ok(op->identity) ||
            !profile_value_ok(op->anonymous_identity) || !profile_value_ok(op->ca_file) ||
            !profile_value_ok(op->domain) || !profile_value_ok(op->phase2)) {
                snprintf(words, size,
                         "an 802.1X join needs an identity, and no value may hold a "
                         "line break");
                return -EINVAL;
        }
        r = iwd_phase2(op->eap, op->phase2, &phase2, words, size);
        if (r < 0)
                return r;
        profile_name(op->ssid, name, sizeof(name));
        snprintf(path, sizeof(path), "%s/%s", state_dir(op->b), name);
        snprintf(tmp, sizeof(tmp), "%s/.roam-XXXXXX", state_dir(op->b));
        fd = mkostemp(tmp, O_CLOEXEC); /* O_CREAT|O_EXCL, mode 0600 */
        if (fd < 0) {
                r = -errno;
                snprintf(words, size, "iwd's profile for \"%s\" could not be written in %s: %s",
                         op->shown, state_dir(op->b), strerror(-r));
                return r;
        }
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                close(fd);
                (void)unlink(tmp);
                snprintf(words, size, "iwd's profile could not be written: %s", strerror(-r));
                return r;
        }
        fprintf(f, "[Security]\nEAP-Method=%s\nEAP-Identity=%s\n", m,
                op->anonymous_identity ?: op->identity);
        if (op->ca_file)
                fprintf(f, "EAP-%s-CACert=%s\n", m, op->ca_file);
        if (op->domain)
                fprintf(f, "EAP-%s-ServerDomainMask=%s\n", m, op->domain);
        fprintf(f, "EAP-%s-Phase2-Method=%s\nEAP-%s-Phase2-Identity=%s\n", m, phase2, m,
                op->identity);
        fprintf(f, "[Settings]\nAutoConnect=%s\n", op->on ? "true" : "false");
        r = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
        if (r >= 0 && renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE) < 0)
                r = -errno;
        if (r < 0) {
                (void)unlink(tmp);
                snprintf(words, size,
                         r == -EEXIST ? "iwd already has a profile for \"%s\" (%s): roamd does "
                                        "not replace it"
                                      : "iwd's profile for \"%s\" could not be written (%s)",
                         op->shown, r == -EEXIST ? path : strerror(-r));
                return r;
        }
        op->profile = strdup(path);
        log_info("Wi-Fi: wrote iwd's profile %s (0600, no password in it)", path);
        return op->profile ? 0 : -ENOMEM;
}

static int on_profile_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WifiOp *op = userdata;

        op->timer = sd_event_source_disable_unref(op->timer);
        op->await_known = false;
        if (connect_again(op) < 0)
                join_done(op, WIFI_JOIN_REFUSED, "iwd could not be asked to join");
        return 0;
}

static void work_join(WifiOp *op)
{
        char words[WIFI_WORDS_MAX];
        IwdNet *n;
        int r;

        if (!op->hidden) {
                n = find(op, op->ssid, false);
                if (!n) {
                        snprintf(words, sizeof(words),
                                 "iwd sees no network \"%s\" (scan, or join it as hidden)",
                                 op->shown);
                        join_done(op, WIFI_JOIN_NOT_FOUND, words);
                        return;
                }
                if (op->eap >= 0 && !streq(n->type, "8021x")) {
                        snprintf(words, sizeof(words), "\"%s\" is not an 802.1X network",
                                 op->shown);
                        join_done(op, WIFI_JOIN_REFUSED, words);
                        return;
                }
                if (streq(n->type, "8021x") && !n->known_path) {
                        if (op->eap < 0) {
                                join_done(op, WIFI_JOIN_REFUSED,
                                          "an 802.1X network needs eap and identity");
                                return;
                        }
                        r = write_profile(op, words, sizeof(words));
                        if (r < 0) {
                                join_done(op, WIFI_JOIN_REFUSED, words);
                                return;
                        }
                }
                op->open = streq(n->type, "open");
                if (free_and_strdup(&op->net_path, n->path) < 0) {
                        join_done(op, WIFI_JOIN_REFUSED, "Out of memory");
                        return;
                }
        }
        nets_free(op);
        if (op->profile) {
                /* iwd reads a new profile when its directory watch says so: Connect once the
                 * Network has its KnownNetwork (on_props), or after 10 s (iwd then answers) */
                op->await_known = true;
                r = sd_event_add_time_relative(op->b->base.core->event, &op->timer, CLOCK_MONOTONIC,
                                               PROFILE_WAIT, 0, on_profile_timeout, op);
        } else
                r = connect_again(op);
        if (r < 0)
                join_done(op, WIFI_JOIN_REFUSED, "iwd could not be asked to join");
}

/* [Security] Passphrase= of iwd's profile NAME.psk (root reads it: iwd writes it 0600) */
static int read_passphrase(const IwdBackend *b, const char *ssid, char **ret)
{
        char name[2 * WIFI_SSID_MAX + 16], path[PATH_MAX], line[256];
        _cleanup_fclose_ FILE *f = NULL;
        bool security = false;
        int fd;

        profile_name(ssid, name, sizeof(name));
        strcpy(name + strlen(name) - strlen(".8021x"), ".psk");
        snprintf(path, sizeof(path), "%s/%s", state_dir(b), name);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "r");
        if (!f) {
                close(fd);
                return -errno;
        }
        while (fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\r\n")] = 0;
                if (line[0] == '[')
                        security = streq(line, "[Security]");
                else if (security && strncmp(line, "Passphrase=", 11) == 0) {
                        *ret = strdup(line + 11);
                        explicit_bzero(line, sizeof(line));
                        return *ret ? 0 : -ENOMEM;
                }
        }
        explicit_bzero(line, sizeof(line));
        return -ENOENT;
}

static void work_share(WifiOp *op)
{
        _cleanup_(wifi_share_done) WifiShare sh = {};
        char words[WIFI_WORDS_MAX];
        WifiShareFn cb = op->share;
        void *ud = op->userdata;
        IwdNet *n = find(op, op->ssid, true);
        int r = 0;

        if (!n) {
                snprintf(words, sizeof(words), "iwd has no known network \"%s\"", op->shown);
                (void)fail(op, -ENOENT, words);
                return;
        }
        sh.ssid_len = strlen(op->ssid);
        memcpy(sh.ssid, op->ssid, sh.ssid_len);
        sh.hidden = n->hidden;
        sh.security = type_security(n->type);
        if (sh.security == WIFI_SECURITY_ENTERPRISE) {
                (void)fail(op, -EOPNOTSUPP, "an enterprise network cannot be shared as a QR code");
                return;
        }
        if (sh.security == WIFI_SECURITY_PSK)
                r = read_passphrase(op->b, op->ssid, &sh.passphrase);
        if (r < 0) {
                snprintf(words, sizeof(words),
                         r == -ENOENT ? "iwd keeps no passphrase for \"%s\" (only the key made "
                                        "from it, or no profile file)"
                                      : "iwd's profile for \"%s\" could not be read",
                         op->shown);
                (void)fail(op, r, words);
                return;
        }
        op_free(op);
        cb(0, NULL, &sh, ud);
}

/* forget and autoconnect: iwd's answer is the result */
static int on_simple(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;

        op->call = sd_bus_slot_unref(op->call);
        if (sd_bus_message_is_method_error(m, NULL))
                return finish_done(op, -EIO, bus_error_words(sd_bus_message_get_error(m)));
        return finish_done(op, 0, NULL);
}

static void op_work(WifiOp *op)
{
        IwdNet *n;
        char words[WIFI_WORDS_MAX];
        int r = 0;

        switch (op->kind) {
        case WIFI_OP_SCAN:
                r = sd_event_add_time_relative(op->b->base.core->event, &op->timer, CLOCK_MONOTONIC,
                                               SCAN_TIMEOUT, 0, on_scan_timeout, op);
                if (r >= 0)
                        r = call_async(op, op->b->station_path, IWD_STATION_IF, "Scan", on_scan,
                                       CALL_TIMEOUT, NULL);
                break;
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
                r = call_async(op, op->b->station_path, IWD_STATION_IF, "GetOrderedNetworks",
                               on_ordered, CALL_TIMEOUT, NULL);
                break;
        case WIFI_OP_JOIN:
                work_join(op);
                return;
        case WIFI_OP_FORGET:
        case WIFI_OP_SET_AUTOCONNECT:
                n = find(op, op->ssid, true);
                if (!n) {
                        snprintf(words, sizeof(words), "iwd has no known network \"%s\"",
                                 op->shown);
                        (void)finish_done(op, -ENOENT, words);
                        return;
                }
                if (op->kind == WIFI_OP_FORGET)
                        r = call_async(op, n->path, IWD_KNOWN_IF, "Forget", on_simple, CALL_TIMEOUT,
                                       NULL);
                else
                        r = call_async(op, n->path, PROPS_IF, "Set", on_simple, CALL_TIMEOUT, "ssv",
                                       IWD_KNOWN_IF, "AutoConnect", "b", (int)op->on);
                break;
        case WIFI_OP_SHARE:
                work_share(op);
                return;
        case WIFI_OP_SET_PRIORITY:
        case WIFI_OP_ENROLL:
        case WIFI_OP_CONFIGURE:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                r = -EOPNOTSUPP;
                break;
        }
        if (r < 0)
                (void)fail(op, r, "iwd could not be asked");
}

/* ---- the agent ------------------------------------------------------------------------- */
static IwdBackend *agent_owner_check(sd_bus_message *m, sd_bus_error *error)
{
        const char *sender = sd_bus_message_get_sender(m);

        for (size_t i = 0; i < ELEMENTSOF(agent_backends); i++) {
                IwdBackend *b = agent_backends[i];
                const char *iwd = b ? bus_name_watch_owner(b->iwd) : NULL;
                if (iwd && sender && streq(sender, iwd))
                        return b;
        }
        log_warning("iwd agent: %s called by %s, not iwd: refused", sd_bus_message_get_member(m),
                    strempty(sender));
        sd_bus_error_set(error, IWD_AGENT_IF ".Error.Canceled", "Only iwd may ask roamd's agent");
        return NULL;
}

static int method_request_passphrase(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        const char *network;
        int r;

        if (!agent_owner_check(m, error))
                return -EACCES;
        r = sd_bus_message_read(m, "o", &network);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(agent_backends); i++) {
                IwdBackend *b = agent_backends[i];
                for (WifiOp *op = b ? b->ops : NULL; op; op = op->next) {
                        if (op->kind != WIFI_OP_JOIN || op->done_called)
                                continue;
                        /* a hidden network's object appears with the join: take its path */
                        if (op->hidden && !op->net_path)
                                (void)free_and_strdup(&op->net_path, network);
                        if (!op->net_path || !streq(op->net_path, network))
                                continue;
                        join_step(op, WIFI_JOIN_STEP_AUTHENTICATING);
                        if (op->passphrase) {
                                op->answered = true;
                                r = sd_bus_reply_method_return(m, "s", op->passphrase);
                                wipe(&op->passphrase);
                                return r < 0 ? r : 1;
                        }
                        op->pending = sd_bus_message_unref(op->pending);
                        op->pending = sd_bus_message_ref(m);
                        op->asked_user = true;
                        op->report.needs_secret(WIFI_SECRET_PASSPHRASE,
                                                op->wrong_keys ? WIFI_SECRET_WHY_WRONG_KEY
                                                               : WIFI_SECRET_WHY_FIRST,
                                                op->userdata);
                        return 1;
                }
        }
        return sd_bus_error_set(error, IWD_AGENT_IF ".Error.Canceled",
                                "roamd is not joining this network");
}

static int method_request_user(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        bool with_user = streq(sd_bus_message_get_member(m), "RequestUserNameAndPassword");
        const char *network;
        int r;

        if (!agent_owner_check(m, error))
                return -EACCES;
        r = sd_bus_message_read(m, "o", &network);
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(agent_backends); i++)
                for (WifiOp *op = agent_backends[i] ? agent_backends[i]->ops : NULL; op;
                     op = op->next) {
                        if (op->kind != WIFI_OP_JOIN || op->done_called || op->eap < 0 ||
                            !op->net_path || !streq(op->net_path, network))
                                continue;
                        join_step(op, WIFI_JOIN_STEP_AUTHENTICATING);
                        op->pending_user = with_user;
                        op->pending = sd_bus_message_unref(op->pending);
                        op->pending = sd_bus_message_ref(m);
                        if (op->password)
                                return answer_user(op, &op->pending) < 0 ? -EIO : 1;
                        op->asked_user = true;
                        op->report.needs_secret(WIFI_SECRET_IDENTITY_PASSWORD,
                                                op->wrong_keys ? WIFI_SECRET_WHY_WRONG_KEY
                                                               : WIFI_SECRET_WHY_FIRST,
                                                op->userdata);
                        return 1;
                }
        return sd_bus_error_set(error, IWD_AGENT_IF ".Error.Canceled",
                                "roamd is not joining this network");
}

static int method_refuse(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        if (!agent_owner_check(m, error))
                return -EACCES;
        return sd_bus_error_set(error, IWD_AGENT_IF ".Error.Canceled",
                                "roamd answers passphrases only");
}

/* iwd gave up the request (timed out, out of range, shutdown) */
static int method_cancel(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        if (!agent_owner_check(m, error))
                return -EACCES;
        for (size_t i = 0; i < ELEMENTSOF(agent_backends); i++)
                for (WifiOp *op = agent_backends[i] ? agent_backends[i]->ops : NULL; op;
                     op = op->next)
                        op->pending = sd_bus_message_unref(op->pending);
        return sd_bus_reply_method_return(m, NULL);
}

static int method_release(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        if (!agent_owner_check(m, error))
                return -EACCES;
        return sd_bus_reply_method_return(m, NULL);
}

static const sd_bus_vtable agent_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD("RequestPassphrase", "o", "s", method_request_passphrase, 0),
    SD_BUS_METHOD("RequestPrivateKeyPassphrase", "o", "s", method_refuse, 0),
    SD_BUS_METHOD("RequestUserNameAndPassword", "o", "ss", method_request_user, 0),
    SD_BUS_METHOD("RequestUserPassword", "os", "s", method_request_user, 0),
    SD_BUS_METHOD("Cancel", "s", "", method_cancel, 0),
    SD_BUS_METHOD("Release", "", "", method_release, 0),
    SD_BUS_VTABLE_END,
};

static int on_agent_registered(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        IwdBackend *b = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        b->agent_register = sd_bus_slot_unref(b->agent_register);
        /* AlreadyExists: another backend of this connection registered the one agent */
        if (e && !sd_bus_error_has_name(e, "net.connman.iwd.AlreadyExists"))
                log_warning("iwd refused roamd's agent: %s", e->message);
        return 0;
}

/* ---- what the backend tells the core unasked ------------------------------------------- */
static bool changes_known_network(sd_bus_message *m)
{
        const char *iface, *key;

        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, IWD_NETWORK_IF) ||
            sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return false;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &key) < 0)
                        return false;
                if (streq(key, "KnownNetwork"))
                        return true;
                if (sd_bus_message_skip(m, "v") < 0 || sd_bus_message_exit_container(m) < 0)
                        return false;
        }
        return false;
}

static int on_station_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        IwdBackend *b = userdata;
        const char *iface, *key;
        int v;

        for (WifiOp *op = b->ops; op; op = op->next)
                if (op->kind == WIFI_OP_JOIN && op->await_known && op->net_path &&
                    streq(sd_bus_message_get_path(m), op->net_path)) {
                        /* the Network got its KnownNetwork: iwd has read the profile */
                        if (!changes_known_network(m))
                                return 0;
                        op->await_known = false;
                        op->timer = sd_event_source_disable_unref(op->timer);
                        if (connect_again(op) < 0)
                                join_done(op, WIFI_JOIN_REFUSED, "iwd could not be asked to join");
                        return 0;
                }
        if (!b->station_path || !streq(sd_bus_message_get_path(m), b->station_path))
                return 0;
        if (sd_bus_message_read(m, "s", &iface) < 0 || !streq(iface, IWD_STATION_IF))
                return 0;
        if (sd_bus_message_enter_container(m, 'a', "{sv}") < 0)
                return 0;
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                if (sd_bus_message_read(m, "s", &key) < 0)
                        return 0;
                if (streq(key, "Scanning") && sd_bus_message_read(m, "v", "b", &v) >= 0) {
                        b->base.events->scanning(v, b->base.userdata);
                        if (!v) {
                                b->base.events->networks_changed(b->base.userdata);
                                for (WifiOp *op = b->ops; op; op = op->next)
                                        if (op->kind == WIFI_OP_SCAN && !op->call) {
                                                (void)finish_done(op, 0, NULL);
                                                break;
                                        }
                        }
                        return 0;
                }
                if (sd_bus_message_skip(m, "v") < 0 || sd_bus_message_exit_container(m) < 0)
                        return 0;
        }
        return 0;
}

static int on_iwd_owner(BusNameWatch *w, const char *owner, void *userdata)
{
        IwdBackend *b = userdata;
        (void)w;

        b->agent_register = sd_bus_slot_unref(b->agent_register);
        if (!*owner) {
                free(b->station_path);
                b->station_path = NULL;
                b->base.events->lost("iwd stopped", b->base.userdata);
                return 0;
        }
        /* iwd forgets agents when it restarts */
        return sd_bus_call_method_async(b->bus, &b->agent_register, IWD_BUS_NAME, IWD_PATH,
                                        IWD_AGENT_MGR, "RegisterAgent", on_agent_registered, b, "o",
                                        AGENT_PATH);
}

/* ---- the backend's operations ---------------------------------------------------------- */
static int start(WifiBackend *base, WifiOpKind kind, void *userdata, WifiOp **ret, WifiOp **out)
{
        IwdBackend *b = (IwdBackend *)base;
        WifiOp *op;
        int r;

        op = op_new(b, kind, userdata);
        if (!op)
                return -ENOMEM;
        r = read_objects(op);
        if (r < 0) {
                op_free(op);
                return r;
        }
        *out = op;
        *ret = op;
        return 0;
}

static int iwd_scan(WifiBackend *b, WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = start(b, WIFI_OP_SCAN, userdata, ret, &op);

        if (r >= 0)
                op->done = cb;
        return r;
}

static int iwd_list(WifiBackend *b, WifiListFn cb, void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = start(b, WIFI_OP_LIST, userdata, ret, &op);

        if (r >= 0)
                op->list = cb;
        return r;
}

static int iwd_known(WifiBackend *b, WifiListFn cb, void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = start(b, WIFI_OP_KNOWN, userdata, ret, &op);

        if (r >= 0)
                op->list = cb;
        return r;
}

/* iwd names networks by a string (D-Bus's: UTF-8, no NUL; iwd lists only SSIDs that are
 * UTF-8): an SSID that is not cannot be asked for, -EILSEQ. */
static int ssid_name(const uint8_t *ssid, size_t len, char out[WIFI_SSID_MAX + 1])
{
        if (len == 0 || len > WIFI_SSID_MAX || memchr(ssid, 0, len))
                return -EINVAL;
        for (size_t i = 0; i < len;) {
                uint32_t c;
                int k = roam_utf8_decode((const char *)ssid + i, len - i, &c);

                if (k <= 0)
                        return -EILSEQ;
                i += (size_t)k;
        }
        memcpy(out, ssid, len);
        out[len] = 0;
        return 0;
}

/* op's SSID, and the SSID in words as the other owners' words have it */
static void op_set_ssid(WifiOp *op, const char name[WIFI_SSID_MAX + 1])
{
        memcpy(op->ssid, name, WIFI_SSID_MAX + 1);
        if (wifi_ssid_to_display((const uint8_t *)name, strlen(name), op->shown,
                                 sizeof(op->shown)) < 0)
                snprintf(op->shown, sizeof(op->shown), "(a network)");
}

static int iwd_join(WifiBackend *base, const WifiJoinRequest *req, const WifiJoinReport *report,
                    void *userdata, WifiOp **ret)
{
        IwdBackend *b = (IwdBackend *)base;
        char name[WIFI_SSID_MAX + 1];
        WifiOp *op;
        int r;

        for (WifiOp *o = b->ops; o; o = o->next)
                if (o->kind == WIFI_OP_JOIN)
                        return -EBUSY;
        /* a hidden 802.1X network joins only by autoconnect from its file: not offered */
        if (req->hidden && (req->eap >= 0 || req->security == WIFI_SECURITY_ENTERPRISE))
                return -EOPNOTSUPP;
        r = ssid_name(req->ssid, req->ssid_len, name);
        if (r < 0)
                return r;
        r = start(base, WIFI_OP_JOIN, userdata, ret, &op);
        if (r < 0)
                return r;
        op_set_ssid(op, name);
        op->report = *report;
        op->eap = req->eap;
        op->on = req->autoconnect;
        if ((req->identity && !(op->identity = strdup(req->identity))) ||
            (req->password && !(op->password = strdup(req->password))) ||
            (req->anonymous_identity &&
             !(op->anonymous_identity = strdup(req->anonymous_identity))) ||
            (req->ca_file && !(op->ca_file = strdup(req->ca_file))) ||
            (req->domain && !(op->domain = strdup(req->domain))) ||
            (req->phase2 && !(op->phase2 = strdup(req->phase2)))) {
                op_free(op);
                return -ENOMEM;
        }
        op->hidden = req->hidden;
        op->open = req->hidden && req->security == WIFI_SECURITY_OPEN;
        if (req->passphrase) {
                op->passphrase = strndup(req->passphrase, req->passphrase_len);
                if (!op->passphrase) {
                        op_free(op);
                        return -ENOMEM;
                }
        }
        return 0;
}

static int iwd_target(WifiBackend *base, WifiOpKind kind, const uint8_t *ssid, size_t len,
                      WifiDoneFn cb, void *userdata, WifiOp **ret, WifiOp **out)
{
        char name[WIFI_SSID_MAX + 1];
        int r = ssid_name(ssid, len, name);

        if (r < 0)
                return r;
        r = start(base, kind, userdata, ret, out);
        if (r < 0)
                return r;
        op_set_ssid(*out, name);
        (*out)->done = cb;
        return 0;
}

static int iwd_forget(WifiBackend *b, const uint8_t *ssid, size_t len, WifiDoneFn cb,
                      void *userdata, WifiOp **ret)
{
        WifiOp *op;

        return iwd_target(b, WIFI_OP_FORGET, ssid, len, cb, userdata, ret, &op);
}

static int iwd_set_autoconnect(WifiBackend *b, const uint8_t *ssid, size_t len, bool on,
                               WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = iwd_target(b, WIFI_OP_SET_AUTOCONNECT, ssid, len, cb, userdata, ret, &op);

        if (r >= 0)
                op->on = on;
        return r;
}

static int iwd_set_priority(WifiBackend *b, const uint8_t *ssid, size_t len, int32_t priority,
                            WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        return -EOPNOTSUPP;
}

static int iwd_share(WifiBackend *b, const uint8_t *ssid, size_t len, WifiShareFn cb,
                     void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r = iwd_target(b, WIFI_OP_SHARE, ssid, len, NULL, userdata, ret, &op);

        if (r >= 0)
                op->share = cb;
        return r;
}

static WifiBackend *iwd_free(WifiBackend *base)
{
        IwdBackend *b = (IwdBackend *)base;
        bool last = true;

        if (!b)
                return NULL;
        while (b->ops)
                wifi_iwd_cancel(b->ops);
        for (size_t i = 0; i < ELEMENTSOF(agent_backends); i++) {
                if (agent_backends[i] == b)
                        agent_backends[i] = NULL;
                else if (agent_backends[i])
                        last = false;
        }
        if (last && bus_name_watch_has_owner(b->iwd))
                (void)sd_bus_call_method_async(b->bus, NULL, IWD_BUS_NAME, IWD_PATH, IWD_AGENT_MGR,
                                               "UnregisterAgent", NULL, NULL, "o", AGENT_PATH);
        sd_bus_slot_unref(b->agent_register);
        if (last)
                agent_vtable_slot = sd_bus_slot_unref(agent_vtable_slot);
        sd_bus_slot_unref(b->match_props);
        bus_name_watch_free(b->iwd);
        free(b->station_path);
        sd_bus_unref(b->bus);
        wifi_backend_done(&b->base);
        free(b);
        return NULL;
}

static const WifiBackendOps iwd_ops = {
    .owner = WIFI_OWNER_IWD,
    .why_not = iwd_why_not,
    .scan = iwd_scan,
    .list = iwd_list,
    .known = iwd_known,
    .join = iwd_join,
    .secret = iwd_secret,
    .forget = iwd_forget,
    .set_autoconnect = iwd_set_autoconnect,
    .set_priority = iwd_set_priority,
    .share = iwd_share,
    .enroll = wifi_iwd_enroll,
    .configure = wifi_iwd_configure,
    .cancel = wifi_iwd_cancel,
    .free = iwd_free,
};

int wifi_iwd_new(Core *core, const char *ifname, int ifindex, const WifiBackendEvents *events,
                 void *userdata, WifiBackend **ret)
{
        IwdBackend *b;
        size_t slot = ELEMENTSOF(agent_backends);
        bool first = true;
        int r;

        if (!core->bus)
                return -ENOTCONN;
        for (size_t i = 0; i < ELEMENTSOF(agent_backends); i++) {
                if (agent_backends[i])
                        first = false;
                else if (slot == ELEMENTSOF(agent_backends))
                        slot = i;
        }
        if (slot == ELEMENTSOF(agent_backends))
                return -ENOSPC;
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        r = wifi_backend_init(&b->base, &iwd_ops, core, ifname, ifindex, events, userdata);
        if (r < 0) {
                free(b);
                return r;
        }
        b->bus = sd_bus_ref(core->bus);
        agent_backends[slot] = b;
        /* the one agent object of this connection, made by the first backend, freed with the
         * last */
        r = first ? sd_bus_add_object_vtable(core->bus, &agent_vtable_slot, AGENT_PATH,
                                             IWD_AGENT_IF, agent_vtable, NULL)
                  : 0;
        if (r >= 0)
                r = sd_bus_match_signal_async(core->bus, &b->match_props, IWD_BUS_NAME, NULL,
                                              PROPS_IF, "PropertiesChanged", on_station_props, NULL,
                                              b);
        if (r >= 0)
                r = bus_name_watch_new_full(core->bus, IWD_BUS_NAME, BUS_NAME_WATCH_TELL_FIRST,
                                            on_iwd_owner, b, &b->iwd);
        if (r < 0) {
                iwd_free(&b->base);
                return r;
        }
        *ret = &b->base;
        return 0;
}
