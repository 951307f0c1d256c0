/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roamd-client-wpa.h"
#include "roamd-core.h"
#include "roamd-wifi-wpa-parse.h"
#include "roamd-wifi-wpa-dpp.h"
#include "roamd-wifi-wpa-save.h"
#include "roamd-wifi-wpa.h"
#include "roamd-wpa.h"

/* Joining through a bare wpa_supplicant's control socket. A join adds a network of its own
 * (ADD_NETWORK, SET_NETWORK ssid in hex, key_mgmt and key, ieee80211w, scan_ssid for hidden
 * ones, the EAP fields), then SELECT_NETWORK, which disables every other network: which ones
 * were enabled is read first (LIST_NETWORKS) and exactly those are enabled again when the join
 * ends, either way. On success older networks of the same SSID are removed (the new one
 * replaces them) and, when asked to remember, SAVE_CONFIG through wifi_wpa_save() (the file's
 * mode kept); on failure or cancel the network roamd added is removed again, so a wrong first
 * key never lands in the file. Events of the interface (CTRL-EVENT-CONNECTED,
 * -SSID-TEMP-DISABLED reason=WRONG_KEY|AUTH_FAILED|CONN_FAILED, -EAP-STARTED, -EAP-FAILURE,
 * -NETWORK-NOT-FOUND, -SCAN-RESULTS) drive the join and the scan. */

#define JOIN_ATTEMPT_USEC (60 * USEC_PER_SEC)
#define SCAN_USEC         (30 * USEC_PER_SEC)
/* wpa_supplicant keeps any number of networks; past this many roamd stops reading them */
#define KNOWN_MAX 10000
/* a BSS page holds one 4096-byte reply: a few dozen BSSes; past this many pages roamd stops */
#define BSS_PAGES_MAX 256

typedef struct WpaBackend WpaBackend;

typedef enum JoinState {
        JOIN_LIST,   /* LIST_NETWORKS: what is enabled, what has this SSID */
        JOIN_BSS,    /* BSS RANGE: the security of a visible network */
        JOIN_NEED,   /* waiting for a secret */
        JOIN_SETUP,  /* ADD_NETWORK, SET_NETWORK..., SELECT_NETWORK */
        JOIN_WAIT,   /* waiting for the events */
        JOIN_FINISH, /* re-enable, remove, save */
        _JOIN_STATE_MAX,
        _JOIN_STATE_INVALID = -EINVAL,
} JoinState;

struct WifiOp {
        WpaBackend *b;
        WifiOp *next;
        WifiOpKind kind;
        WpaRequest *req;
        WifiWpaSave *save;
        sd_event_source *timer;
        void *userdata;
        WifiDoneFn done;
        WifiListFn list_cb;
        /* commands sent one after the other, each answered OK (ADD_NETWORK: an id) */
        char **cmds;
        size_t n_cmds, i_cmd;
        void (*after)(WifiOp *op); /* when every command was answered */
        uint8_t ssid[WIFI_SSID_MAX];
        size_t ssid_len;
        WifiNetworkList list;
        WifiWpaBss *bsses; /* BSS: the BSSes of the pages read so far */
        size_t n_bsses;
        unsigned bss_pages;
        WifiWpaKnown *known;
        size_t n_known;
        int known_last; /* LIST_NETWORKS: the last id listed so far, -1 none */
        size_t i_prio;  /* the known network whose priority is asked (GET_NETWORK) */
        bool remember_save;

        /* a join */
        JoinState state;
        WifiJoinRequest req_copy;
        const WifiJoinReport *report;
        WifiSecurity security;
        int id; /* the network roamd added, -1 none */
        int *enabled;
        size_t n_enabled;
        bool wrong_key_asked;
        /* the server's certificate wpa_supplicant refused (EAP-TLS-CERT-ERROR), cleaned; the
         * EAP failure that follows is said with it, not as a refused password */
        char cert_error[160];
        WifiSecretKind need_kind;
        WifiJoinResult result;
        char words[WIFI_WORDS_MAX];
};

struct WpaBackend {
        WifiBackend base;
        WpaClient *client; /* the client subscribed to (roamd-wpa.c's) */
        WpaSubscription *sub;
        WifiOp *ops;
        WifiOp *scan, *join;
};

static const char *prefix_of(WpaBackend *b)
{
        const char *prefix = NULL;
        WpaClient *c = wpa_client_for(b->base.core->wpa, b->base.ifname, &prefix);

        return c ? prefix : NULL;
}

/* The client that reaches the interface now; a different one than subscribed to means
 * wpa_supplicant left (and maybe came back): the owner is decided again. */
static WpaClient *client_of(WpaBackend *b)
{
        const char *prefix;
        WpaClient *c =
            b->base.core->wpa ? wpa_client_for(b->base.core->wpa, b->base.ifname, &prefix) : NULL;

        return c && c == b->client ? c : NULL;
}

static void ssid_words(const uint8_t *ssid, size_t len, char *out, size_t size)
{
        if (wifi_ssid_to_display(ssid, len, out, size) < 0)
                snprintf(out, size, "(a network)");
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
        if (op->b->scan == op)
                op->b->scan = NULL;
        if (op->b->join == op)
                op->b->join = NULL;
        wpa_request_cancel(op->req);
        wifi_wpa_save_free(op->save);
        sd_event_source_disable_unref(op->timer);
        for (size_t i = 0; i < op->n_cmds; i++) {
                explicit_bzero(op->cmds[i], strlen(op->cmds[i])); /* may hold a key */
                free(op->cmds[i]);
        }
        free(op->cmds);
        free(op->bsses);
        free(op->known);
        free(op->enabled);
        wifi_network_list_done(&op->list);
        wifi_join_request_done(&op->req_copy);
        free(op);
}

static WifiOp *op_new(WpaBackend *b, WifiOpKind kind, void *userdata)
{
        WifiOp *op = calloc(1, sizeof(*op));

        if (!op)
                return NULL;
        op->b = b;
        op->kind = kind;
        op->userdata = userdata;
        op->id = -1;
        op->next = b->ops;
        b->ops = op;
        return op;
}

static int op_add(WifiOp *op, const char *fmt, ...) _printf_(2, 3);
static int op_add(WifiOp *op, const char *fmt, ...)
{
        va_list ap;
        char **a;
        int n;

        /* one command a network at most (re-enabling every network a join disabled) */
        if (op->n_cmds >= KNOWN_MAX + 32)
                return -E2BIG;
        a = reallocarray(op->cmds, op->n_cmds + 1, sizeof(char *));
        if (!a)
                return -ENOMEM;
        op->cmds = a;
        va_start(ap, fmt);
        n = vasprintf(&op->cmds[op->n_cmds], fmt, ap);
        va_end(ap);
        if (n < 0)
                return -ENOMEM;
        op->n_cmds++;
        return 0;
}

static void op_clear_cmds(WifiOp *op)
{
        for (size_t i = 0; i < op->n_cmds; i++) {
                explicit_bzero(op->cmds[i], strlen(op->cmds[i]));
                free(op->cmds[i]);
        }
        op->n_cmds = op->i_cmd = 0;
}

static int op_request(WifiOp *op, const char *cmd, WpaReplyFn fn)
{
        WpaClient *c = client_of(op->b);

        if (!c)
                return -ENOTCONN;
        return wpa_client_request(c, prefix_of(op->b), cmd, fn, op, &op->req);
}

/* A command whose answer nobody waits for (cleaning up after a cancelled join). */
static void fire(WpaBackend *b, const char *cmd)
{
        WpaClient *c = client_of(b);

        if (c)
                (void)wpa_client_request(c, prefix_of(b), cmd, NULL, NULL, NULL);
}

static void op_fail(WifiOp *op, int error, const char *words);
static void join_end(WifiOp *op, WifiJoinResult result, const char *fmt, ...) _printf_(3, 4);

static void reply_short(const char *reply, char *out, size_t size)
{
        snprintf(out, size, "%.*s", (int)MIN(strcspn(reply, "\n"), (size_t)40), reply);
}

/* The field a SET_NETWORK command sets, for messages (never its value: it may be a key). */
static void cmd_words(const char *cmd, char *out, size_t size)
{
        if (strncmp(cmd, "SET_NETWORK ", 12) == 0) {
                const char *f = strchr(cmd + 12, ' ');
                f = f ? f + 1 : cmd;
                snprintf(out, size, "the network's %.*s", (int)strcspn(f, " "), f);
        } else
                snprintf(out, size, "%.*s", (int)strcspn(cmd, " "), cmd);
}

static void on_cmd(WpaClient *c, int error, const char *reply, size_t len, void *userdata);

static void op_next_cmd(WifiOp *op)
{
        int r;

        if (op->i_cmd >= op->n_cmds) {
                op_clear_cmds(op);
                op->after(op);
                return;
        }
        r = op_request(op, op->cmds[op->i_cmd], on_cmd);
        if (r < 0)
                op_fail(op, r, "wpa_supplicant no longer runs this interface");
}

static void on_cmd(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WifiOp *op = userdata;
        const char *cmd = op->cmds[op->i_cmd];
        char what[64], answer[48], words[WIFI_WORDS_MAX];

        op->req = NULL;
        cmd_words(cmd, what, sizeof(what));
        if (error < 0) {
                snprintf(words, sizeof(words), "wpa_supplicant did not answer %s (%s)", what,
                         strerror(-error));
                op_fail(op, error, words);
                return;
        }
        if (streq(cmd, "ADD_NETWORK")) {
                char *end;
                long id = strtol(reply, &end, 10);
                if (end == reply || (*end && *end != '\n') || id < 0 || id > INT32_MAX) {
                        reply_short(reply, answer, sizeof(answer));
                        snprintf(words, sizeof(words), "wpa_supplicant refused ADD_NETWORK (%s)",
                                 answer);
                        op_fail(op, -EIO, words);
                        return;
                }
                op->id = (int)id;
                /* the commands after it name the network: "SET_NETWORK %d" was written as -1 */
                for (size_t i = op->i_cmd + 1; i < op->n_cmds; i++) {
                        char *p = strstr(op->cmds[i], " -1");
                        if (p) {
                                char *n = NULL;
                                if (asprintf(&n, "%.*s %d%s", (int)(p - op->cmds[i]), op->cmds[i],
                                             op->id, p + 3) < 0) {
                                        op_fail(op, -ENOMEM, "out of memory");
                                        return;
                                }
                                explicit_bzero(op->cmds[i], strlen(op->cmds[i]));
                                free(op->cmds[i]);
                                op->cmds[i] = n;
                        }
                }
        } else if (!wpa_reply_is_ok(reply, len)) {
                reply_short(reply, answer, sizeof(answer));
                snprintf(words, sizeof(words), "wpa_supplicant refused %s (%s)", what, answer);
                op_fail(op, -EIO, words);
                return;
        }
        op->i_cmd++;
        op_next_cmd(op);
}

/* ---- LIST_NETWORKS ---- */

/* wpa_supplicant answers the whole lines that fit in its 4096-byte reply
 * (ctrl_iface.c wpa_supplicant_ctrl_iface_list_networks()); "LIST_NETWORKS LAST_ID=N" lists
 * from after network N: roamd pages on until a page lists no network after the last one. */
static void on_list_networks(WpaClient *c, int error, const char *reply, size_t len,
                             void *userdata);

static int list_networks_page(WifiOp *op)
{
        char cmd[48];

        if (op->known_last < 0)
                return op_request(op, "LIST_NETWORKS", on_list_networks);
        snprintf(cmd, sizeof(cmd), "LIST_NETWORKS LAST_ID=%d", op->known_last);
        return op_request(op, cmd, on_list_networks);
}

static int op_list_networks(WifiOp *op, void (*after)(WifiOp *op))
{
        op->after = after;
        op->n_known = 0;
        op->known_last = -1;
        return list_networks_page(op);
}

static void on_list_networks(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WifiOp *op = userdata;
        /* a row is 8 bytes at least ("0\t\tany\t\n"): room for every row of this page */
        size_t room = MIN(len / 8 + 1, (size_t)KNOWN_MAX - MIN(op->n_known, (size_t)KNOWN_MAX));
        WifiWpaKnown *a;
        size_t n = 0;
        int last = op->known_last, r;

        op->req = NULL;
        if (error < 0) {
                op_fail(op, error, "wpa_supplicant did not answer LIST_NETWORKS");
                return;
        }
        a = reallocarray(op->known, op->n_known + room + 1, sizeof(WifiWpaKnown));
        if (!a) {
                op_fail(op, -ENOMEM, "out of memory");
                return;
        }
        op->known = a;
        if (wifi_wpa_list_parse(reply, len, op->known + op->n_known, room, &n) < 0) {
                op_fail(op, -EBADMSG, "wpa_supplicant's LIST_NETWORKS answer is malformed");
                return;
        }
        /* only rows after the last one count: a daemon that ignored LAST_ID would list the
         * first page again, forever */
        for (size_t i = 0; i < n; i++) {
                WifiWpaKnown *k = &op->known[op->n_known + i];

                if (k->id > last)
                        last = k->id;
                else if (op->known_last >= 0) {
                        n = i;
                        break;
                }
        }
        op->n_known += n;
        if (n > 0 && last > op->known_last && op->n_known < KNOWN_MAX) {
                op->known_last = last;
                r = list_networks_page(op);
                if (r < 0)
                        op_fail(op, r, "wpa_supplicant no longer runs this interface");
                return;
        }
        op->after(op);
}

static bool known_is(const WifiWpaKnown *k, const uint8_t *ssid, size_t len)
{
        return k->ssid_len == len && memcmp(k->ssid, ssid, len) == 0;
}

/* ---- scan ---- */

static int on_scan_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WifiOp *op = userdata;
        WpaBackend *b = op->b;
        WifiDoneFn cb = op->done;
        void *ud = op->userdata;

        op_free(op);
        b->base.events->scanning(false, b->base.userdata);
        cb(-ETIMEDOUT, "wpa_supplicant's scan did not end within 30 s", ud);
        return 0;
}

static void scan_end(WpaBackend *b, bool ok)
{
        WifiOp *op = b->scan;
        WifiDoneFn cb = op->done;
        void *ud = op->userdata;

        op_free(op);
        b->base.events->scanning(false, b->base.userdata);
        if (ok)
                b->base.events->networks_changed(b->base.userdata);
        cb(ok ? 0 : -EIO, ok ? NULL : "wpa_supplicant's scan failed", ud);
}

static void on_scan(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WifiOp *op = userdata;
        char answer[48], words[WIFI_WORDS_MAX];

        op->req = NULL;
        /* FAIL-BUSY: a scan runs already; its results end this one too */
        if (error >= 0 && (wpa_reply_is_ok(reply, len) || strncmp(reply, "FAIL-BUSY", 9) == 0))
                return;
        if (error < 0)
                snprintf(words, sizeof(words), "wpa_supplicant did not answer SCAN (%s)",
                         strerror(-error));
        else {
                reply_short(reply, answer, sizeof(answer));
                snprintf(words, sizeof(words), "wpa_supplicant refused SCAN (%s)", answer);
        }
        op_fail(op, error < 0 ? error : -EIO, words);
}

static int wpa_scan(WifiBackend *base, WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        WpaBackend *b = (WpaBackend *)base;
        WifiOp *op;
        int r;

        if (b->scan)
                return -EBUSY;
        op = op_new(b, WIFI_OP_SCAN, userdata);
        if (!op)
                return -ENOMEM;
        op->done = cb;
        r = sd_event_add_time_relative(b->base.core->event, &op->timer, CLOCK_MONOTONIC, SCAN_USEC,
                                       0, on_scan_timeout, op);
        if (r >= 0)
                r = op_request(op, "SCAN", on_scan);
        if (r < 0) {
                op_free(op);
                return r;
        }
        b->scan = op;
        b->base.events->scanning(true, b->base.userdata);
        *ret = op;
        return 0;
}

/* ---- list, known ---- */

static void list_done(WifiOp *op)
{
        WifiListFn cb = op->list_cb;
        void *ud = op->userdata;
        WifiNetworkList l = op->list;

        op->list = (WifiNetworkList){};
        op_free(op);
        cb(0, NULL, &l, ud);
        wifi_network_list_done(&l);
}

/* Marks the networks in range with what wpa_supplicant knows of them, and adds the known ones
 * out of range. */
static void list_merge_known(WifiOp *op)
{
        for (size_t k = 0; k < op->n_known; k++) {
                const WifiWpaKnown *kn = &op->known[k];
                WifiNetwork *w = NULL;

                for (size_t i = 0; i < op->list.n; i++)
                        if (op->list.networks[i].ssid_len == kn->ssid_len &&
                            memcmp(op->list.networks[i].ssid, kn->ssid, kn->ssid_len) == 0)
                                w = &op->list.networks[i];
                if (!w) {
                        WifiNetwork *a =
                            reallocarray(op->list.networks, op->list.n + 1, sizeof(WifiNetwork));
                        if (!a)
                                continue;
                        op->list.networks = a;
                        w = &a[op->list.n++];
                        *w = (WifiNetwork){.security = _WIFI_SECURITY_INVALID};
                        memcpy(w->ssid, kn->ssid, kn->ssid_len);
                        w->ssid_len = kn->ssid_len;
                }
                /* several saved networks of one SSID: wpa_supplicant tries the highest first */
                if (!w->has_priority || kn->priority > w->priority)
                        w->priority = kn->priority;
                w->has_priority = true;
                w->known = true;
                w->connected = w->connected || kn->current;
                w->autoconnect = w->autoconnect || !kn->disabled;
        }
}

/* LIST_NETWORKS has no priority: GET_NETWORK N priority for each saved network, one after the
 * other (the value without newline; an INT field always has one, 0 unless set). */
static void on_priority(WpaClient *c, int error, const char *reply, size_t len, void *userdata);

static void list_next_priority(WifiOp *op)
{
        char cmd[48];
        int r;

        if (op->i_prio >= op->n_known) {
                list_merge_known(op);
                list_done(op);
                return;
        }
        snprintf(cmd, sizeof(cmd), "GET_NETWORK %d priority", op->known[op->i_prio].id);
        r = op_request(op, cmd, on_priority);
        if (r < 0)
                op_fail(op, r, "wpa_supplicant no longer runs this interface");
}

static void on_priority(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WifiOp *op = userdata;
        char *end;
        long v;

        op->req = NULL;
        if (error < 0) {
                op_fail(op, error, "wpa_supplicant did not answer GET_NETWORK");
                return;
        }
        /* FAIL: the network went away meanwhile; anything else not a number: left at 0 */
        errno = 0;
        v = strtol(reply, &end, 10);
        if (end != reply && (!*end || *end == '\n') && errno == 0 && v >= INT32_MIN &&
            v <= INT32_MAX)
                op->known[op->i_prio].priority = (int32_t)v;
        op->i_prio++;
        list_next_priority(op);
}

static void list_after_known(WifiOp *op)
{
        op->i_prio = 0;
        list_next_priority(op);
}

static void on_bss(WpaClient *c, int error, const char *reply, size_t len, void *userdata);

/* The BSS list, a page at a time: wpa_supplicant answers the whole BSSes that fit in one
 * 4096-byte reply and ends the list's last one with "####"; the next page asks from the id
 * after the last BSS read (RANGE=N-: every BSS from id N on). */
static int op_bss(WifiOp *op)
{
        op->bss_pages = 0;
        op->n_bsses = 0;
        return op_request(op, "BSS RANGE=ALL MASK=" WIFI_WPA_BSS_MASK, on_bss);
}

static void on_bss(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WifiOp *op = userdata;
        bool complete;
        int64_t last;
        int r;

        op->req = NULL;
        if (error < 0) {
                op_fail(op, error, "wpa_supplicant did not answer BSS");
                return;
        }
        if (wifi_wpa_bss_parse(reply, len, &op->bsses, &op->n_bsses, &complete, &last) < 0) {
                op_fail(op, -EBADMSG, "wpa_supplicant's BSS answer is malformed");
                return;
        }
        if (!complete && last >= 0 && last < UINT32_MAX && ++op->bss_pages < BSS_PAGES_MAX) {
                char cmd[64];

                snprintf(cmd, sizeof(cmd), "BSS RANGE=%" PRIi64 "- MASK=" WIFI_WPA_BSS_MASK,
                         last + 1);
                r = op_request(op, cmd, on_bss);
                if (r < 0)
                        op_fail(op, r, "wpa_supplicant no longer runs this interface");
                return;
        }
        if (!complete)
                log_debug("%s: wpa_supplicant's BSS list ended without its last BSS; the "
                          "networks after the cut are left out.",
                          op->b->base.ifname);
        r = wifi_wpa_bss_group(op->bsses, op->n_bsses, &op->list);
        free(op->bsses);
        op->bsses = NULL;
        op->n_bsses = 0;
        if (r < 0) {
                op_fail(op, r, "out of memory");
                return;
        }
        if (op->kind == WIFI_OP_JOIN) {
                op->after(op);
                return;
        }
        r = op_list_networks(op, list_after_known);
        if (r < 0)
                op_fail(op, r, "wpa_supplicant no longer runs this interface");
}

static int wpa_list(WifiBackend *base, WifiListFn cb, void *userdata, WifiOp **ret)
{
        WpaBackend *b = (WpaBackend *)base;
        WifiOp *op = op_new(b, WIFI_OP_LIST, userdata);
        int r;

        if (!op)
                return -ENOMEM;
        op->list_cb = cb;
        r = op_bss(op);
        if (r < 0) {
                op_free(op);
                return r;
        }
        *ret = op;
        return 0;
}

static int wpa_known(WifiBackend *base, WifiListFn cb, void *userdata, WifiOp **ret)
{
        WpaBackend *b = (WpaBackend *)base;
        WifiOp *op = op_new(b, WIFI_OP_KNOWN, userdata);
        int r;

        if (!op)
                return -ENOMEM;
        op->list_cb = cb;
        r = op_list_networks(op, list_after_known);
        if (r < 0) {
                op_free(op);
                return r;
        }
        *ret = op;
        return 0;
}

/* ---- forget, autoconnect, priority: commands on every network of the SSID, then a save ---- */

static void on_changed_saved(int error, const char *words, void *userdata)
{
        WifiOp *op = userdata;
        WifiDoneFn cb = op->done;
        void *ud = op->userdata;
        char w[WIFI_WORDS_MAX];
        WpaBackend *b = op->b;

        op->save = NULL;
        snprintf(w, sizeof(w), "%s", words);
        op_free(op);
        b->base.events->networks_changed(b->base.userdata);
        /* not saved (update_config=0) is no failure: it holds until wpa_supplicant restarts */
        cb(0, error == -EROFS ? "done for now; not saved (wpa_supplicant's update_config=0)" : w,
           ud);
}

static void change_save(WifiOp *op)
{
        WpaClient *c = client_of(op->b);
        int r = c ? wifi_wpa_save(c, prefix_of(op->b), op->b->base.ifname, on_changed_saved, op,
                                  &op->save)
                  : -ENOTCONN;
        if (r < 0)
                op_fail(op, r, "wpa_supplicant no longer runs this interface");
}

static int change_start(WpaBackend *b, WifiOpKind kind, const uint8_t *ssid, size_t len,
                        void (*after)(WifiOp *op), WifiDoneFn cb, void *userdata, WifiOp **ret,
                        int32_t value)
{
        WifiOp *op;
        int r;

        if (len == 0 || len > WIFI_SSID_MAX)
                return -EINVAL;
        op = op_new(b, kind, userdata);
        if (!op)
                return -ENOMEM;
        op->done = cb;
        memcpy(op->ssid, ssid, len);
        op->ssid_len = len;
        op->id = value; /* the new priority, or autoconnect's 0/1 */
        r = op_list_networks(op, after);
        if (r < 0) {
                op_free(op);
                return r;
        }
        *ret = op;
        return 0;
}

static void change_after_list(WifiOp *op)
{
        char name[WIFI_SSID_MAX * 4 + 1], words[WIFI_WORDS_MAX];
        int r = 0;

        for (size_t k = 0; k < op->n_known && r >= 0; k++) {
                int id = op->known[k].id;
                if (!known_is(&op->known[k], op->ssid, op->ssid_len))
                        continue;
                switch (op->kind) {
                case WIFI_OP_FORGET:
                        r = op_add(op, "REMOVE_NETWORK %d", id);
                        break;
                case WIFI_OP_SET_AUTOCONNECT:
                        r = op_add(op, "%s_NETWORK %d", op->id ? "ENABLE" : "DISABLE", id);
                        break;
                case WIFI_OP_SET_PRIORITY:
                        r = op_add(op, "SET_NETWORK %d priority %d", id, op->id);
                        break;
                case WIFI_OP_SCAN:
                case WIFI_OP_LIST:
                case WIFI_OP_KNOWN:
                case WIFI_OP_JOIN:
                case WIFI_OP_SHARE:
                case WIFI_OP_ENROLL:
                case WIFI_OP_CONFIGURE:
                case _WIFI_OP_MAX:
                case _WIFI_OP_INVALID:
                        break;
                }
        }
        if (r < 0) {
                op_fail(op, r, "too many networks of that name");
                return;
        }
        if (op->n_cmds == 0) {
                ssid_words(op->ssid, op->ssid_len, name, sizeof(name));
                snprintf(words, sizeof(words), "wpa_supplicant has no saved network named %s",
                         name);
                op_fail(op, -ENOENT, words);
                return;
        }
        op->after = change_save;
        op_next_cmd(op);
}

static int wpa_forget(WifiBackend *base, const uint8_t *ssid, size_t len, WifiDoneFn cb,
                      void *userdata, WifiOp **ret)
{
        return change_start((WpaBackend *)base, WIFI_OP_FORGET, ssid, len, change_after_list, cb,
                            userdata, ret, 0);
}

static int wpa_set_autoconnect(WifiBackend *base, const uint8_t *ssid, size_t len, bool on,
                               WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        return change_start((WpaBackend *)base, WIFI_OP_SET_AUTOCONNECT, ssid, len,
                            change_after_list, cb, userdata, ret, on);
}

static int wpa_set_priority(WifiBackend *base, const uint8_t *ssid, size_t len, int32_t priority,
                            WifiDoneFn cb, void *userdata, WifiOp **ret)
{
        if (priority < 0 || priority > 1000000)
                return -ERANGE;
        return change_start((WpaBackend *)base, WIFI_OP_SET_PRIORITY, ssid, len, change_after_list,
                            cb, userdata, ret, priority);
}

/* ---- join ---- */

static bool printable(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
                        return false; /* one line on the socket */
        return true;
}

static bool all_hex(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!strchr("0123456789abcdefABCDEF", s[i]) || !s[i])
                        return false;
        return true;
}

/* A Wi-Fi radio (cfg80211's phy80211 link in sysfs), not a wired port run by -Dwired. */
static bool is_radio(const char *ifname)
{
        char p[128];

        snprintf(p, sizeof(p), "/sys/class/net/%s/phy80211", ifname);
        return access(p, F_OK) >= 0;
}

static bool needs_passphrase(WifiSecurity s)
{
        return s == WIFI_SECURITY_WPA || s == WIFI_SECURITY_WPA2 || s == WIFI_SECURITY_WPA3 ||
               s == WIFI_SECURITY_WPA2_WPA3 || s == WIFI_SECURITY_PSK || s == WIFI_SECURITY_WEP;
}

static void join_setup(WifiOp *op);

/* The next thing a join waits for: a secret the request lacks, or the setup. */
static void join_continue(WifiOp *op)
{
        const WifiJoinRequest *q = &op->req_copy;

        if (op->security == WIFI_SECURITY_ENTERPRISE && (!q->identity || !q->password)) {
                op->state = JOIN_NEED;
                op->need_kind = WIFI_SECRET_IDENTITY_PASSWORD;
                op->report->needs_secret(WIFI_SECRET_IDENTITY_PASSWORD, WIFI_SECRET_WHY_FIRST,
                                         op->userdata);
                return;
        }
        if (needs_passphrase(op->security) && !q->passphrase) {
                op->state = JOIN_NEED;
                op->need_kind = WIFI_SECRET_PASSPHRASE;
                op->report->needs_secret(WIFI_SECRET_PASSPHRASE, WIFI_SECRET_WHY_FIRST,
                                         op->userdata);
                return;
        }
        join_setup(op);
}

/* The SET_NETWORK lines of the key; 1 when the passphrase has the wrong form for this
 * security (the join asks again, why key-format). */
static int join_key_cmds(WifiOp *op)
{
        const WifiJoinRequest *q = &op->req_copy;
        const char *p = q->passphrase;
        size_t n = q->passphrase_len;
        bool hex64 = n == 64 && all_hex(p, 64);
        bool wpa_ok = hex64 || (n >= 8 && n <= 63 && printable(p, n));
        int r = 0;

        switch (op->security) {
        case WIFI_SECURITY_OPEN:
                return op_add(op, "SET_NETWORK -1 key_mgmt NONE");
        case WIFI_SECURITY_OWE:
                r = op_add(op, "SET_NETWORK -1 key_mgmt OWE");
                return r < 0 ? r : op_add(op, "SET_NETWORK -1 ieee80211w 2");
        case WIFI_SECURITY_WPA:
        case WIFI_SECURITY_WPA2:
        case WIFI_SECURITY_PSK:
                if (!wpa_ok)
                        return 1;
                r = op_add(op, "SET_NETWORK -1 key_mgmt WPA-PSK");
                break;
        case WIFI_SECURITY_WPA2_WPA3:
                if (!wpa_ok || hex64)
                        return 1;
                r = op_add(op, "SET_NETWORK -1 key_mgmt WPA-PSK SAE");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 ieee80211w 1");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 sae_password \"%.*s\"", (int)n, p);
                break;
        case WIFI_SECURITY_WPA3:
                /* SAE passwords are not bound to 8..63 (psk's rule) */
                if (n == 0 || !printable(p, n))
                        return 1;
                r = op_add(op, "SET_NETWORK -1 key_mgmt SAE");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 ieee80211w 2");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 sae_password \"%.*s\"", (int)n, p);
                return r;
        case WIFI_SECURITY_WEP:
                if ((n == 5 || n == 13) && printable(p, n))
                        r = op_add(op, "SET_NETWORK -1 wep_key0 \"%.*s\"", (int)n, p);
                else if ((n == 10 || n == 26) && all_hex(p, n))
                        r = op_add(op, "SET_NETWORK -1 wep_key0 %.*s", (int)n, p);
                else
                        return 1;
                return r < 0 ? r : op_add(op, "SET_NETWORK -1 key_mgmt NONE");
        case WIFI_SECURITY_ENTERPRISE: {
                /* WPA-EAP on a radio; on a wired port (wpa_supplicant -Dwired, no phy80211)
                 * plain IEEE8021X, since wpa_supplicant would pick WPA-EAP there and wait for
                 * a 4-way handshake no switch sends; no dynamic WEP keys (eapol_flags 0) */
                const char *phase2 = q->phase2                 ? q->phase2
                                     : q->eap == WIFI_EAP_TTLS ? "pap"
                                                               : "mschapv2";
                char up[16];
                size_t k;

                if (!printable(q->identity, strlen(q->identity)) ||
                    !printable(q->password, strlen(q->password)) ||
                    (q->domain && !printable(q->domain, strlen(q->domain))) ||
                    (q->anonymous_identity &&
                     !printable(q->anonymous_identity, strlen(q->anonymous_identity))))
                        return 1;
                for (k = 0; phase2[k] && k < sizeof(up) - 1; k++)
                        up[k] = (char)(phase2[k] >= 'a' && phase2[k] <= 'z' ? phase2[k] - 32
                                                                            : phase2[k]);
                up[k] = 0;
                if (!streq(up, "MSCHAPV2") && !streq(up, "PAP") && !streq(up, "GTC") &&
                    !streq(up, "MD5"))
                        return 1;
                r = op_add(op, "SET_NETWORK -1 key_mgmt %s",
                           is_radio(op->b->base.ifname) ? "WPA-EAP" : "IEEE8021X");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 eapol_flags 0");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 eap %s",
                                   q->eap == WIFI_EAP_TTLS ? "TTLS" : "PEAP");
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 identity \"%s\"", q->identity);
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 password \"%s\"", q->password);
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 phase2 \"auth=%s\"", up);
                if (r >= 0 && q->anonymous_identity)
                        r = op_add(op, "SET_NETWORK -1 anonymous_identity \"%s\"",
                                   q->anonymous_identity);
                if (r >= 0)
                        r = op_add(op, "SET_NETWORK -1 ca_cert \"%s\"",
                                   q->ca_file ? q->ca_file : "/etc/ssl/certs/ca-certificates.crt");
                if (r >= 0 && q->domain)
                        r = op_add(op, "SET_NETWORK -1 domain_suffix_match \"%s\"", q->domain);
                return r;
        }
        case _WIFI_SECURITY_MAX:
        case _WIFI_SECURITY_INVALID:
                return 1;
        }
        if (r >= 0)
                r = hex64 ? op_add(op, "SET_NETWORK -1 psk %.*s", (int)n, p)
                          : op_add(op, "SET_NETWORK -1 psk \"%.*s\"", (int)n, p);
        return r;
}

static int on_join_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WifiOp *op = userdata;

        op->timer = sd_event_source_disable_unref(op->timer);
        join_end(op, WIFI_JOIN_TIMEOUT, "wpa_supplicant did not join the network within 60 s");
        return 0;
}

static void join_selected(WifiOp *op)
{
        int r;

        if (op->state != JOIN_SETUP)
                return; /* an event came before SELECT_NETWORK's OK and moved on */
        op->state = JOIN_WAIT;
        op->timer = sd_event_source_disable_unref(op->timer);
        r = sd_event_add_time_relative(op->b->base.core->event, &op->timer, CLOCK_MONOTONIC,
                                       JOIN_ATTEMPT_USEC, 0, on_join_timeout, op);
        if (r < 0) {
                join_end(op, WIFI_JOIN_REFUSED, "roamd could not set a timer");
                return;
        }
        op->report->step(WIFI_JOIN_STEP_ASSOCIATING, NULL, op->userdata);
}

static void join_setup(WifiOp *op)
{
        const WifiJoinRequest *q = &op->req_copy;
        char hex[2 * WIFI_SSID_MAX + 1];
        int r;

        op->state = JOIN_SETUP;
        op_clear_cmds(op);
        wifi_wpa_ssid_hex(q->ssid, q->ssid_len, hex);
        /* a retry after a wrong key changes the key of the network added before */
        if (op->id < 0)
                r = op_add(op, "ADD_NETWORK");
        else
                r = 0;
        if (r >= 0)
                r = op_add(op, "SET_NETWORK -1 ssid %s", hex);
        if (r >= 0 && q->hidden)
                r = op_add(op, "SET_NETWORK -1 scan_ssid 1");
        if (r >= 0) {
                r = join_key_cmds(op);
                if (r == 1) {
                        op_clear_cmds(op);
                        op->state = JOIN_NEED;
                        op->need_kind = op->security == WIFI_SECURITY_ENTERPRISE
                                            ? WIFI_SECRET_IDENTITY_PASSWORD
                                            : WIFI_SECRET_PASSPHRASE;
                        op->report->needs_secret(op->need_kind, WIFI_SECRET_WHY_KEY_FORMAT,
                                                 op->userdata);
                        return;
                }
        }
        if (r >= 0 && !q->autoconnect && q->remember)
                r = 0; /* disabled after the join, below */
        if (r >= 0)
                r = op_add(op, "SELECT_NETWORK -1");
        if (r < 0) {
                join_end(op, WIFI_JOIN_REFUSED, "roamd could not build the commands");
                return;
        }
        if (op->id >= 0)
                for (size_t i = 0; i < op->n_cmds; i++) {
                        char *p = strstr(op->cmds[i], " -1");
                        char *n = NULL;
                        if (!p || asprintf(&n, "%.*s %d%s", (int)(p - op->cmds[i]), op->cmds[i],
                                           op->id, p + 3) < 0)
                                continue;
                        explicit_bzero(op->cmds[i], strlen(op->cmds[i]));
                        free(op->cmds[i]);
                        op->cmds[i] = n;
                }
        op->after = join_selected;
        op_next_cmd(op);
}

static void join_after_bss(WifiOp *op)
{
        const WifiJoinRequest *q = &op->req_copy;
        char name[WIFI_SSID_MAX * 4 + 1];

        for (size_t i = 0; i < op->list.n; i++)
                if (op->list.networks[i].ssid_len == q->ssid_len &&
                    memcmp(op->list.networks[i].ssid, q->ssid, q->ssid_len) == 0) {
                        op->security = op->list.networks[i].security;
                        wifi_network_list_done(&op->list);
                        join_continue(op);
                        return;
                }
        ssid_words(q->ssid, q->ssid_len, name, sizeof(name));
        join_end(op, WIFI_JOIN_NOT_FOUND,
                 "No network named %s answered (if it is hidden, join it as a hidden network)",
                 name);
}

static void join_after_list(WifiOp *op)
{
        const WifiJoinRequest *q = &op->req_copy;
        int r;

        op->n_enabled = 0;
        free(op->enabled);
        op->enabled = calloc(MAX(op->n_known, (size_t)1), sizeof(int));
        if (!op->enabled) {
                join_end(op, WIFI_JOIN_REFUSED, "out of memory");
                return;
        }
        for (size_t k = 0; k < op->n_known; k++)
                if (!op->known[k].disabled)
                        op->enabled[op->n_enabled++] = op->known[k].id;
        if (op->security >= 0) {
                join_continue(op);
                return;
        }
        op->state = JOIN_BSS;
        op->after = join_after_bss;
        r = op_bss(op);
        if (r < 0)
                join_end(op, WIFI_JOIN_REFUSED, "wpa_supplicant no longer runs this interface");
        (void)q;
}

static int wpa_join(WifiBackend *base, const WifiJoinRequest *q, const WifiJoinReport *report,
                    void *userdata, WifiOp **ret)
{
        WpaBackend *b = (WpaBackend *)base;
        WifiOp *op;
        int r;

        if (b->join)
                return -EBUSY;
        if (q->ssid_len == 0 || q->ssid_len > WIFI_SSID_MAX || (q->hidden && q->security < 0))
                return -EINVAL;
        op = op_new(b, WIFI_OP_JOIN, userdata);
        if (!op)
                return -ENOMEM;
        op->report = report;
        op->security = q->security;
        op->req_copy = (WifiJoinRequest){
            .ssid_len = q->ssid_len,
            .hidden = q->hidden,
            .security = q->security,
            .eap = q->eap,
            .remember = q->remember,
            .autoconnect = q->autoconnect,
            .passphrase_len = q->passphrase_len,
        };
        memcpy(op->req_copy.ssid, q->ssid, q->ssid_len);
        r = 0;
#define DUP(f)                                                                                     \
        if (r >= 0 && q->f && !(op->req_copy.f = strdup(q->f)))                                    \
                r = -ENOMEM;
        DUP(identity);
        DUP(anonymous_identity);
        DUP(password);
        DUP(phase2);
        DUP(ca_file);
        DUP(domain);
#undef DUP
        if (r >= 0 && q->passphrase) {
                op->req_copy.passphrase = malloc(q->passphrase_len + 1);
                if (op->req_copy.passphrase) {
                        memcpy(op->req_copy.passphrase, q->passphrase, q->passphrase_len);
                        op->req_copy.passphrase[q->passphrase_len] = 0;
                } else
                        r = -ENOMEM;
        }
        if (r >= 0) {
                op->state = JOIN_LIST;
                r = op_list_networks(op, join_after_list);
        }
        if (r < 0) {
                op_free(op);
                return r;
        }
        b->join = op;
        *ret = op;
        return 0;
}

static int wpa_secret(WifiOp *op, const WifiSecrets *s)
{
        WifiJoinRequest *q = &op->req_copy;

        if (op->kind != WIFI_OP_JOIN || op->state != JOIN_NEED)
                return -EINVAL;
        if (op->need_kind == WIFI_SECRET_PASSPHRASE) {
                if (!s->passphrase)
                        return -EINVAL;
                if (q->passphrase) {
                        explicit_bzero(q->passphrase, q->passphrase_len);
                        free(q->passphrase);
                }
                q->passphrase = malloc(s->passphrase_len + 1);
                if (!q->passphrase)
                        return -ENOMEM;
                memcpy(q->passphrase, s->passphrase, s->passphrase_len);
                q->passphrase[s->passphrase_len] = 0;
                q->passphrase_len = s->passphrase_len;
        } else {
                if (!s->identity || !s->password)
                        return -EINVAL;
                free(q->identity);
                if (q->password) {
                        explicit_bzero(q->password, strlen(q->password));
                        free(q->password);
                }
                q->identity = strdup(s->identity);
                q->password = strdup(s->password);
                if (!q->identity || !q->password)
                        return -ENOMEM;
        }
        join_continue(op);
        return 0;
}

/* ---- the end of a join: others enabled again, ours removed or kept (and saved) ---- */

static void join_report(WifiOp *op)
{
        const WifiJoinReport *report = op->report;
        WifiJoinResult result = op->result;
        void *ud = op->userdata;
        char words[WIFI_WORDS_MAX];
        WpaBackend *b = op->b;

        snprintf(words, sizeof(words), "%s", op->words);
        op_free(op);
        b->base.events->networks_changed(b->base.userdata);
        report->done(result, words, ud);
}

static void on_join_saved(int error, const char *words, void *userdata)
{
        WifiOp *op = userdata;
        size_t l = strlen(op->words);

        op->save = NULL;
        if (error == -EROFS)
                snprintf(op->words + l, sizeof(op->words) - l,
                         ", not saved (wpa_supplicant's update_config=0)");
        else
                snprintf(op->words + l, sizeof(op->words) - l, " (%s)", words);
        join_report(op);
}

static void join_finished(WifiOp *op)
{
        WpaClient *c;
        int r = -ENOTCONN;

        if (op->result != WIFI_JOIN_CONNECTED || !op->req_copy.remember) {
                join_report(op);
                return;
        }
        c = client_of(op->b);
        if (c)
                r = wifi_wpa_save(c, prefix_of(op->b), op->b->base.ifname, on_join_saved, op,
                                  &op->save);
        if (r < 0)
                join_report(op);
}

/* The commands that end a join (after a result or a cancel). */
static int join_cleanup_cmds(WifiOp *op, bool success)
{
        int r = 0;

        op_clear_cmds(op);
        if (!success && op->id >= 0)
                r = op_add(op, "REMOVE_NETWORK %d", op->id);
        for (size_t i = 0; i < op->n_enabled && r >= 0; i++)
                if (op->enabled[i] != op->id)
                        r = op_add(op, "ENABLE_NETWORK %d", op->enabled[i]);
        if (success) {
                /* the new network replaces older ones of the same SSID */
                for (size_t k = 0; k < op->n_known && r >= 0; k++)
                        if (op->known[k].id != op->id &&
                            known_is(&op->known[k], op->req_copy.ssid, op->req_copy.ssid_len))
                                r = op_add(op, "REMOVE_NETWORK %d", op->known[k].id);
                if (r >= 0 && !op->req_copy.autoconnect)
                        r = op_add(op, "DISABLE_NETWORK %d", op->id);
        }
        return r;
}

static void join_end(WifiOp *op, WifiJoinResult result, const char *fmt, ...)
{
        va_list ap;

        if (op->state == JOIN_FINISH)
                return;
        op->timer = sd_event_source_disable_unref(op->timer);
        wpa_request_cancel(op->req);
        op->req = NULL;
        op->result = result;
        va_start(ap, fmt);
        vsnprintf(op->words, sizeof(op->words), fmt, ap);
        va_end(ap);
        op->state = JOIN_FINISH;
        if (join_cleanup_cmds(op, result == WIFI_JOIN_CONNECTED) < 0 || !client_of(op->b)) {
                join_report(op);
                return;
        }
        /* a cleanup command that fails does not change the result: said in the log */
        op->after = join_finished;
        op_next_cmd(op);
}

static void op_fail(WifiOp *op, int error, const char *words)
{
        WifiDoneFn done = op->done;
        WifiListFn list_cb = op->list_cb;
        void *ud = op->userdata;
        char w[WIFI_WORDS_MAX];
        WpaBackend *b = op->b;

        switch (op->kind) {
        case WIFI_OP_JOIN:
                if (op->state == JOIN_FINISH) {
                        log_warning("%s: %s (while ending a join)", b->base.ifname, words);
                        op->i_cmd++;
                        op_next_cmd(op);
                        return;
                }
                join_end(op, WIFI_JOIN_REFUSED, "%s", words);
                return;
        case WIFI_OP_SCAN:
                op_free(op);
                b->base.events->scanning(false, b->base.userdata);
                done(error, words, ud);
                return;
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
                op_free(op);
                list_cb(error, words, NULL, ud);
                return;
        case WIFI_OP_FORGET:
        case WIFI_OP_SET_AUTOCONNECT:
        case WIFI_OP_SET_PRIORITY:
        case WIFI_OP_SHARE:
        case WIFI_OP_ENROLL:
        case WIFI_OP_CONFIGURE:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                snprintf(w, sizeof(w), "%s", words);
                op_free(op);
                if (done)
                        done(error, w, ud);
                return;
        }
}

/* ---- events ---- */

/* The value of key='...' in an event's text (wpa_supplicant quotes the certificate's subject
 * and its error that way, spaces kept), or "" . */
static void quoted_value(const char *rest, const char *key, char *out, size_t size)
{
        const char *p = rest ? strstr(rest, key) : NULL;
        const char *end;

        out[0] = 0;
        if (!p || p[strlen(key)] != '=' || p[strlen(key) + 1] != '\'')
                return;
        p += strlen(key) + 2;
        end = strchr(p, '\'');
        snprintf(out, size, "%.*s", (int)(end ? end - p : (ptrdiff_t)strlen(p)), p);
}

/* CTRL-EVENT-EAP-TLS-CERT-ERROR reason=N depth=N subject='...' err='...' (eap_peer/eap.c):
 * the server's certificate (or its domain) was not trusted. Its subject and error come from
 * the network: cleaned of controls and broken bytes before they are words. */
static void cert_error_note(WifiOp *op, const WpaEvent *e)
{
        char subject[96], err[64];

        quoted_value(e->rest, "subject", subject, sizeof(subject));
        quoted_value(e->rest, "err", err, sizeof(err));
        snprintf(op->cert_error, sizeof(op->cert_error), "%s%s%s", err[0] ? err : "refused",
                 subject[0] ? ", " : "", subject);
        roam_text_mark_inplace(op->cert_error);
}

static void eap_failed(WifiOp *op, const char *name)
{
        if (op->cert_error[0])
                join_end(op, WIFI_JOIN_AUTH_FAILED,
                         "%s's authentication server was not trusted (%s): check the CA "
                         "certificate and the server's domain",
                         name, op->cert_error);
        else
                join_end(op, WIFI_JOIN_AUTH_FAILED,
                         "%s refused the user name or password (EAP failure)", name);
}

static void join_event(WifiOp *op, const WpaEvent *e)
{
        const char *id = wpa_event_get(e, "id"), *reason = wpa_event_get(e, "reason");
        bool ours = id && op->id >= 0 && atoi(id) == op->id;
        char name[WIFI_SSID_MAX * 4 + 1];

        /* wpa_supplicant may send what SELECT_NETWORK caused before its OK */
        bool selecting = op->state == JOIN_SETUP && op->req && op->n_cmds &&
                         op->i_cmd == op->n_cmds - 1 &&
                         strncmp(op->cmds[op->i_cmd], "SELECT_NETWORK", 14) == 0;
        if (op->state != JOIN_WAIT && !selecting)
                return;
        ssid_words(op->req_copy.ssid, op->req_copy.ssid_len, name, sizeof(name));
        if (streq(e->name, "CTRL-EVENT-CONNECTED"))
                /* after SELECT_NETWORK only ours is enabled: this is ours */
                join_end(op, WIFI_JOIN_CONNECTED, "Joined %s", name);
        else if (streq(e->name, "CTRL-EVENT-EAP-STARTED"))
                op->report->step(WIFI_JOIN_STEP_AUTHENTICATING, NULL, op->userdata);
        else if (streq(e->name, "CTRL-EVENT-EAP-TLS-CERT-ERROR"))
                cert_error_note(op, e);
        else if (streq(e->name, "CTRL-EVENT-EAP-FAILURE"))
                eap_failed(op, name);
        else if (streq(e->name, "CTRL-EVENT-NETWORK-NOT-FOUND"))
                join_end(op, WIFI_JOIN_NOT_FOUND,
                         "No network named %s answered (if it is hidden, join it as a hidden "
                         "network)",
                         name);
        else if (streq(e->name, "CTRL-EVENT-SSID-TEMP-DISABLED") && ours && reason) {
                if (streq(reason, "WRONG_KEY") || streq(reason, "NO_PSK_AVAILABLE")) {
                        /* the key can be given again in place: the network stays, its key
                         * is replaced and it is selected again (which clears the back-off) */
                        op->timer = sd_event_source_disable_unref(op->timer);
                        op->req = wpa_request_cancel(op->req); /* SELECT's OK: not needed */
                        op_clear_cmds(op);
                        op->state = JOIN_NEED;
                        op->need_kind = WIFI_SECRET_PASSPHRASE;
                        op->wrong_key_asked = true;
                        op->report->needs_secret(WIFI_SECRET_PASSPHRASE, WIFI_SECRET_WHY_WRONG_KEY,
                                                 op->userdata);
                } else if (streq(reason, "AUTH_FAILED"))
                        eap_failed(op, name);
                else if (streq(reason, "CONN_FAILED") && op->security == WIFI_SECURITY_WPA3)
                        join_end(op, WIFI_JOIN_WRONG_KEY_OR_OUT_OF_RANGE,
                                 "%s did not accept the password, or it is out of reach: WPA3 "
                                 "cannot tell these apart",
                                 name);
                else
                        join_end(op, WIFI_JOIN_REFUSED, "wpa_supplicant could not join %s (%s)",
                                 name, reason);
        }
}

static void on_event(WpaClient *c, const WpaEvent *e, void *userdata)
{
        WpaBackend *b = userdata;

        if (e->ifname[0] && !streq(e->ifname, b->base.ifname))
                return;
        if (b->scan && streq(e->name, "CTRL-EVENT-SCAN-RESULTS"))
                scan_end(b, true);
        else if (b->scan && streq(e->name, "CTRL-EVENT-SCAN-FAILED"))
                scan_end(b, false);
        else if (!b->scan && streq(e->name, "CTRL-EVENT-SCAN-RESULTS"))
                b->base.events->networks_changed(b->base.userdata);
        if (b->join)
                join_event(b->join, e);
}

/* ---- cancel, free, what is not offered ---- */

static void wpa_cancel(WifiOp *op)
{
        WpaBackend *b;

        if (!op)
                return;
        b = op->b;
        if (op->kind == WIFI_OP_JOIN && op->state != JOIN_FINISH &&
            join_cleanup_cmds(op, false) >= 0)
                /* nobody waits for these answers: the join is gone */
                for (size_t i = 0; i < op->n_cmds; i++)
                        fire(b, op->cmds[i]);
        if (op->kind == WIFI_OP_SCAN)
                b->base.events->scanning(false, b->base.userdata);
        op_free(op);
}

static WifiBackend *wpa_backend_free(WifiBackend *base)
{
        WpaBackend *b = (WpaBackend *)base;

        if (!b)
                return NULL;
        while (b->ops) {
                WifiOp *op = b->ops;
                if (op->kind == WIFI_OP_JOIN)
                        wpa_cancel(op); /* what it added goes */
                else
                        op_free(op);
        }
        wpa_subscription_free(b->sub);
        wifi_backend_done(&b->base);
        free(b);
        return NULL;
}

static int wpa_share(WifiBackend *b, const uint8_t *ssid, size_t len, WifiShareFn cb,
                     void *userdata, WifiOp **ret)
{
        return -EOPNOTSUPP;
}

static const char *wpa_why_not(const WifiBackend *b, WifiOpKind op)
{
        switch (op) {
        case WIFI_OP_SHARE:
                return "wpa_supplicant never gives a saved key back over its control socket "
                       "(GET_NETWORK answers *)";
        case WIFI_OP_SCAN:
        case WIFI_OP_ENROLL: /* roamd-wifi-wpa-dpp.c */
        case WIFI_OP_CONFIGURE:
        case WIFI_OP_LIST:
        case WIFI_OP_KNOWN:
        case WIFI_OP_JOIN:
        case WIFI_OP_FORGET:
        case WIFI_OP_SET_AUTOCONNECT:
        case WIFI_OP_SET_PRIORITY:
        case _WIFI_OP_MAX:
        case _WIFI_OP_INVALID:
                break;
        }
        return NULL;
}

const WifiBackendOps wifi_wpa_ops = {
    .owner = WIFI_OWNER_WPA_SUPPLICANT,
    .why_not = wpa_why_not,
    .scan = wpa_scan,
    .list = wpa_list,
    .known = wpa_known,
    .join = wpa_join,
    .secret = wpa_secret,
    .forget = wpa_forget,
    .set_autoconnect = wpa_set_autoconnect,
    .set_priority = wpa_set_priority,
    .share = wpa_share,
    .enroll = wifi_wpa_enroll,
    .configure = wifi_wpa_configure,
    .cancel = wpa_cancel,
    .free = wpa_backend_free,
};

bool wifi_wpa_current(WifiBackend *base)
{
        return base && base->ops == &wifi_wpa_ops && client_of((WpaBackend *)base) != NULL;
}

int wifi_wpa_probe(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret)
{
        const char *prefix;
        WpaClient *c = core->wpa ? wpa_client_for(core->wpa, ifname, &prefix) : NULL;
        char why[WIFI_WORDS_MAX];

        if (c)
                snprintf(why, sizeof(why), "wpa_supplicant runs %s (%s)", ifname,
                         wpa_client_server(c));
        else
                snprintf(why, sizeof(why), "no wpa_supplicant control socket answers for %s",
                         ifname);
        *ret = NULL;
        cb(0, c != NULL, why, userdata); /* the detection goes on from the loop */
        return 0;
}

int wifi_wpa_new(Core *core, const char *ifname, int ifindex, const WifiBackendEvents *events,
                 void *userdata, WifiBackend **ret)
{
        const char *prefix;
        WpaBackend *b;
        int r;

        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        r = wifi_backend_init(&b->base, &wifi_wpa_ops, core, ifname, ifindex, events, userdata);
        if (r < 0) {
                free(b);
                return r;
        }
        b->client = core->wpa ? wpa_client_for(core->wpa, ifname, &prefix) : NULL;
        if (!b->client) {
                wpa_backend_free(&b->base);
                return -ENOTCONN;
        }
        r = wpa_client_subscribe(b->client, on_event, b, &b->sub);
        if (r < 0) {
                wpa_backend_free(&b->base);
                return r;
        }
        *ret = &b->base;
        return 0;
}
