/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "roam-log.h"
#include "roam-text.h"
#include "roam-util.h"
#include "roamd-client-wpa.h"
#include "roamd-wpa.h"

typedef struct WpaIface {
        Wpa *wpa;
        char *name;
        WpaClient *client; /* per-interface socket; NULL on the global interface */
        WpaSubscription *sub;
        WpaRequest *status;
        bool status_again; /* an event came while STATUS was on the wire */
        WpaRequest *signal;
        sd_event_source *signal_timer; /* armed only while associated */
        bool signal_again;             /* a SIGNAL-CHANGE came while SIGNAL_POLL was out */
        bool up;
        WpaStation st;
} WpaIface;

struct Wpa {
        sd_event *event;
        Config *const *config;
        bool initial_netns;
        WpaHooks hooks;
        void *userdata;
        WpaDir *dir;
        WpaClient *global;
        WpaSubscription *global_sub;
        WpaRequest *interfaces;
        WpaIface **ifaces;
        size_t n_ifaces;
        char *p2p_iface; /* the interface roamd-p2p uses */
};

static void station_done(WpaStation *s)
{
        free(s->wpa_state);
        free(s->ssid);
        free(s->bssid);
        free(s->key_mgmt);
        free(s->p2p_device_address);
        *s = (WpaStation){};
}

static WpaClient *iface_client(WpaIface *i)
{
        return i->client ? i->client : i->wpa->global;
}

static const char *iface_prefix(WpaIface *i)
{
        return i->client ? NULL : i->name;
}

static bool name_is_group(const char *n)
{
        /* wpa_supplicant names group interfaces p2p-<dev>-<n>; the P2P device is p2p-dev-<dev>. */
        return strncmp(n, "p2p-", 4) == 0 && strncmp(n, "p2p-dev-", 8) != 0;
}

static void wpa_pick_p2p(Wpa *w)
{
        WpaIface *best = NULL;

        for (size_t k = 0; k < w->n_ifaces; k++) {
                WpaIface *i = w->ifaces[k];
                if (!i->up || !i->st.p2p_device_address || name_is_group(i->name))
                        continue;
                if (!best || (strncmp(i->name, "p2p-dev-", 8) == 0 &&
                              strncmp(best->name, "p2p-dev-", 8) != 0))
                        best = i;
        }
        if (streq_ptr(best ? best->name : NULL, w->p2p_iface))
                return;
        free(w->p2p_iface);
        w->p2p_iface = best ? strdup(best->name) : NULL;
        if (best && !w->p2p_iface) {
                log_oom();
                best = NULL;
        }
        log_info("WiFi Direct device: %s", best ? best->name : "none");
        if (w->hooks.p2p_device)
                w->hooks.p2p_device(best ? iface_client(best) : NULL,
                                    best ? iface_prefix(best) : NULL, best ? best->name : NULL,
                                    w->userdata);
}

static void iface_poll_signal(WpaIface *i);

static void wpa_station_changed(Wpa *w, const char *ifname, const char *const *names)
{
        if (w->hooks.station)
                w->hooks.station(ifname, (char **)names, w->userdata);
}

static bool station_associated(const WpaStation *st)
{
        return streq_ptr(st->wpa_state, "COMPLETED");
}

static void iface_set_signal(WpaIface *i, int32_t dbm, uint32_t speed)
{
        if (i->st.signal_dbm == dbm && i->st.link_speed == speed)
                return;
        i->st.signal_dbm = dbm;
        i->st.link_speed = speed;
        wpa_station_changed(i->wpa, i->name,
                            (const char *const[]){"WiFiSignal", "WiFiLinkSpeed", NULL});
}

static void iface_stop_signal(WpaIface *i)
{
        i->signal = wpa_request_cancel(i->signal);
        i->signal_timer = sd_event_source_disable_unref(i->signal_timer);
        i->signal_again = false;
}

static int on_signal_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        WpaIface *i = userdata;

        i->signal_timer = sd_event_source_disable_unref(i->signal_timer);
        iface_poll_signal(i);
        return 0;
}

static void on_signal_poll(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WpaIface *i = userdata;
        WpaKv kv = {};
        const char *rssi, *speed;
        long dbm = 0;
        unsigned long mbit = 0;
        int r;

        i->signal = NULL;
        if (error < 0)
                return;
        if (!station_associated(&i->st))
                return;
        if (wpa_kv_parse(reply, len, &kv) < 0 || !(rssi = wpa_kv_get(&kv, "RSSI"))) {
                /* FAIL: the driver reports no signal (the wired one); not asked again until
                 * the next association. */
                log_debug("%s: no signal from wpa_supplicant (%.*s)", i->name,
                          (int)strcspn(reply, "\n"), reply);
                wpa_kv_done(&kv);
                iface_set_signal(i, 0, 0);
                return;
        }
        {
                char *end;
                long v = strtol(rssi, &end, 10);
                if (!*end && v > -200 && v < 0)
                        dbm = v;
                speed = wpa_kv_get(&kv, "LINKSPEED");
                if (speed) {
                        unsigned long u = strtoul(speed, &end, 10);
                        if (!*end && u < 1000000)
                                mbit = u;
                }
        }
        wpa_kv_done(&kv);
        iface_set_signal(i, (int32_t)dbm, (uint32_t)mbit);
        if (i->signal_again) {
                i->signal_again = false;
                iface_poll_signal(i);
                return;
        }
        r = sd_event_add_time_relative(i->wpa->event, &i->signal_timer, CLOCK_MONOTONIC,
                                       (*i->wpa->config)->wifi.signal_interval_usec,
                                       USEC_PER_SEC / 10, on_signal_timer, i);
        if (r < 0)
                log_warning("%s: cannot arm the signal timer: %s", i->name, strerror(-r));
}

static void iface_poll_signal(WpaIface *i)
{
        int r;

        if (i->signal) {
                i->signal_again = true;
                return;
        }
        i->signal_timer = sd_event_source_disable_unref(i->signal_timer);
        r = wpa_client_request(iface_client(i), iface_prefix(i), "SIGNAL_POLL", on_signal_poll, i,
                               &i->signal);
        if (r < 0)
                log_debug("%s: SIGNAL_POLL not sent: %s", i->name, strerror(-r));
}

static void iface_set_station(WpaIface *i, WpaStation *st)
{
        bool changed = !streq_ptr(i->st.wpa_state, st->wpa_state) ||
                       !streq_ptr(i->st.ssid, st->ssid) || !streq_ptr(i->st.bssid, st->bssid) ||
                       !streq_ptr(i->st.key_mgmt, st->key_mgmt) || i->st.freq != st->freq;
        bool p2p_changed = !streq_ptr(i->st.p2p_device_address, st->p2p_device_address);

        if (changed)
                log_info("%s: wpa_supplicant %s -> %s%s%s", i->name, strempty(i->st.wpa_state),
                         strempty(st->wpa_state), st->ssid ? ", SSID " : "", strempty(st->ssid));
        bool was_associated = station_associated(&i->st);
        bool roamed = !streq_ptr(i->st.bssid, st->bssid);
        int32_t dbm = i->st.signal_dbm;
        uint32_t speed = i->st.link_speed;

        station_done(&i->st);
        i->st = *st;
        *st = (WpaStation){};
        /* The signal belongs to an association: kept while it lasts, asked anew after a
         * (re)association, forgotten when it ends. */
        if (station_associated(&i->st) && was_associated && !roamed) {
                i->st.signal_dbm = dbm;
                i->st.link_speed = speed;
        } else {
                i->st.signal_dbm = dbm;
                i->st.link_speed = speed;
                iface_stop_signal(i);
                iface_set_signal(i, 0, 0);
                if (station_associated(&i->st))
                        iface_poll_signal(i);
        }
        if (changed)
                wpa_station_changed(i->wpa, i->name,
                                    (const char *const[]){"WiFiState", "WiFiSSID", "WiFiBSSID",
                                                          "WiFiKeyMgmt", "WiFiFrequency", NULL});
        if (changed) /* the SSID is part of the network's identity (roamd-firewall.c) */
                i->wpa->hooks.changed(i->wpa->userdata);
        if (p2p_changed)
                wpa_pick_p2p(i->wpa);
}

static int dup_opt(const WpaKv *kv, const char *key, char **dst)
{
        const char *v = wpa_kv_get(kv, key);

        if (!v)
                return 0;
        *dst = strdup(v);
        return *dst ? 0 : -ENOMEM;
}

static void iface_refresh(WpaIface *i);

static void on_status(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        WpaIface *i = userdata;
        WpaStation st = {};
        WpaKv kv = {};
        const char *f;
        int r;

        i->status = NULL;
        if (error < 0)
                return;
        r = wpa_kv_parse(reply, len, &kv);
        if (r < 0) {
                log_warning("%s: unusable STATUS reply from wpa_supplicant (%s).", i->name,
                            strerror(-r));
                return;
        }
        f = wpa_kv_get(&kv, "freq");
        if (f) {
                char *end;
                unsigned long v = strtoul(f, &end, 10);
                if (!*end && v < 1000000)
                        st.freq = (uint32_t)v;
        }
        if (dup_opt(&kv, "wpa_state", &st.wpa_state) < 0 || dup_opt(&kv, "ssid", &st.ssid) < 0 ||
            dup_opt(&kv, "bssid", &st.bssid) < 0 || dup_opt(&kv, "key_mgmt", &st.key_mgmt) < 0 ||
            dup_opt(&kv, "p2p_device_address", &st.p2p_device_address) < 0)
                log_oom();
        else
                iface_set_station(i, &st);
        station_done(&st);
        wpa_kv_done(&kv);
        if (i->status_again) {
                i->status_again = false;
                iface_refresh(i);
        }
}

static void iface_refresh(WpaIface *i)
{
        int r;

        if (i->status) {
                i->status_again = true;
                return;
        }
        r = wpa_client_request(iface_client(i), iface_prefix(i), "STATUS", on_status, i,
                               &i->status);
        if (r < 0)
                log_debug("%s: STATUS not sent: %s", i->name, strerror(-r));
}

static void iface_on_event(WpaIface *i, const WpaEvent *e)
{
        static const char *const quiet[] = {
            "CTRL-EVENT-SCAN-STARTED", "CTRL-EVENT-SCAN-RESULTS",  "CTRL-EVENT-BSS-ADDED",
            "CTRL-EVENT-BSS-REMOVED",  "CTRL-EVENT-SIGNAL-CHANGE", "CTRL-EVENT-TERMINATING",
        };

        if (strncmp(e->name, "CTRL-EVENT-", 11) != 0)
                return;
        if (streq(e->name, "CTRL-EVENT-SIGNAL-CHANGE")) {
                if (station_associated(&i->st))
                        iface_poll_signal(i);
                return;
        }
        for (size_t k = 0; k < ELEMENTSOF(quiet); k++)
                if (streq(e->name, quiet[k]))
                        return;
        iface_refresh(i);
}

static void on_iface_event(WpaClient *c, const WpaEvent *e, void *userdata)
{
        iface_on_event(userdata, e);
}

static void iface_set_up(WpaIface *i, bool up)
{
        WpaStation none = {};

        i->up = up;
        if (up) {
                iface_refresh(i);
                return;
        }
        i->status = wpa_request_cancel(i->status);
        i->status_again = false;
        iface_set_station(i, &none);
        wpa_pick_p2p(i->wpa);
}

static void on_iface_state(WpaClient *c, bool up, void *userdata)
{
        iface_set_up(userdata, up);
}

static WpaIface *wpa_find(Wpa *w, const char *name, size_t *idx)
{
        for (size_t k = 0; k < w->n_ifaces; k++)
                if (streq(w->ifaces[k]->name, name)) {
                        if (idx)
                                *idx = k;
                        return w->ifaces[k];
                }
        return NULL;
}

static void iface_free(WpaIface *i)
{
        if (!i)
                return;
        wpa_request_cancel(i->status);
        iface_stop_signal(i);
        wpa_subscription_free(i->sub);
        wpa_client_free(i->client);
        station_done(&i->st);
        free(i->name);
        free(i);
}

static void wpa_remove(Wpa *w, const char *name)
{
        size_t k;
        WpaIface *i = wpa_find(w, name, &k);

        if (!i)
                return;
        log_info("%s: wpa_supplicant no longer runs it.", name);
        memmove(w->ifaces + k, w->ifaces + k + 1, sizeof(WpaIface *) * (w->n_ifaces - k - 1));
        w->n_ifaces--;
        /* out of the table already: the link's properties read "none" */
        wpa_station_changed(w, i->name,
                            (const char *const[]){"WiFiState", "WiFiSSID", "WiFiBSSID",
                                                  "WiFiKeyMgmt", "WiFiFrequency", "WiFiSignal",
                                                  "WiFiLinkSpeed", NULL});
        iface_free(i);
        w->hooks.changed(w->userdata);
        wpa_pick_p2p(w);
}

static int wpa_add(Wpa *w, const char *name, bool global)
{
        const WiFiConfig *cfg = &(*w->config)->wifi;
        WpaIface *i, **n;
        int r;

        if (wpa_find(w, name, NULL))
                return 0;
        /* Its name goes on the bus (P2PDevice, the link's facts): clean text or not at all. */
        if (strlen(name) >= WPA_IFNAME_MAX || !roam_text_is_clean(name, 0))
                return -EINVAL;
        i = calloc(1, sizeof(*i));
        if (!i)
                return -ENOMEM;
        i->wpa = w;
        i->name = strdup(name);
        if (!i->name) {
                free(i);
                return -ENOMEM;
        }
        if (!global) {
                _cleanup_free_ char *path = NULL;
                if (asprintf(&path, "%s/%s", cfg->control_dir, name) < 0 ||
                    wpa_client_new(w->event, path, cfg->client_dir, cfg->timeout_usec, &i->client) <
                        0) {
                        iface_free(i);
                        return -ENOMEM;
                }
                wpa_client_set_state_handler(i->client, on_iface_state, i);
                wpa_client_set_ping_interval(i->client, cfg->ping_interval_usec);
                r = wpa_client_subscribe(i->client, on_iface_event, i, &i->sub);
                if (r < 0) {
                        iface_free(i);
                        return r;
                }
        }
        n = realloc(w->ifaces, sizeof(*n) * (w->n_ifaces + 1));
        if (!n) {
                iface_free(i);
                return -ENOMEM;
        }
        w->ifaces = n;
        n[w->n_ifaces++] = i;
        log_info("%s: run by wpa_supplicant (%s).", name,
                 global ? "global control interface" : wpa_client_server(i->client));
        if (global)
                iface_set_up(i, true);
        else {
                r = wpa_client_connect(i->client);
                if (r < 0)
                        log_warning_errno(r, "%s: cannot reach wpa_supplicant yet: %m", name);
        }
        return 0;
}

/* Outside the initial network namespace (a container, a test) a control directory may be the
 * host's: only sockets of interfaces that live here are ours. The P2P device p2p-dev-X has no
 * netdev of its own; X counts. */
static bool iface_is_ours(Wpa *w, const char *name)
{
        if (w->initial_netns)
                return true;
        if (strncmp(name, "p2p-dev-", 8) == 0)
                name += 8;
        return w->hooks.has_link && w->hooks.has_link(name, w->userdata);
}

static void on_dir(WpaDir *d, const char *name, bool present, void *userdata)
{
        Wpa *w = userdata;

        if (!present) {
                wpa_remove(w, name);
                return;
        }
        if (!iface_is_ours(w, name)) {
                log_debug("%s: a wpa_supplicant socket for an interface of another network "
                          "namespace, ignored.",
                          name);
                return;
        }
        (void)wpa_add(w, name, false);
}

/* The global control interface: INTERFACES lists them; events carry IFNAME=. */

static void on_interfaces(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        Wpa *w = userdata;
        _cleanup_strv_free_ char **names = NULL;

        w->interfaces = NULL;
        if (error < 0)
                return;
        if (strv_split(reply, "\n", &names) < 0) {
                log_oom();
                return;
        }
        /* Gone since the last answer. */
        for (size_t k = w->n_ifaces; k > 0; k--)
                if (!strv_contains(names, w->ifaces[k - 1]->name))
                        wpa_remove(w, w->ifaces[k - 1]->name);
        STRV_FOREACH (n, names)
                if (**n && !strchr(*n, ' ') && !strchr(*n, '='))
                        (void)wpa_add(w, *n, true);
}

static void global_list(Wpa *w)
{
        if (!w->interfaces)
                (void)wpa_client_request(w->global, NULL, "INTERFACES", on_interfaces, w,
                                         &w->interfaces);
}

static void on_global_event(WpaClient *c, const WpaEvent *e, void *userdata)
{
        Wpa *w = userdata;
        WpaIface *i;

        if (streq(e->name, "CTRL-EVENT-INTERFACE-ADDED") ||
            streq(e->name, "CTRL-EVENT-INTERFACE-REMOVED")) {
                global_list(w);
                return;
        }
        i = e->ifname[0] ? wpa_find(w, e->ifname, NULL) : NULL;
        if (i)
                iface_on_event(i, e);
}

static void on_global_state(WpaClient *c, bool up, void *userdata)
{
        Wpa *w = userdata;

        if (up) {
                global_list(w);
                return;
        }
        w->interfaces = NULL;
        while (w->n_ifaces > 0)
                wpa_remove(w, w->ifaces[w->n_ifaces - 1]->name);
}

static void on_global_dir(WpaDir *d, const char *name, bool present, void *userdata)
{
        Wpa *w = userdata;
        const char *base = strrchr(wpa_client_server(w->global), '/') + 1;

        if (!streq(name, base))
                return;
        if (present) {
                int r = wpa_client_connect(w->global);
                if (r < 0)
                        log_warning_errno(r, "Cannot reach wpa_supplicant at %s yet: %m",
                                          wpa_client_server(w->global));
        } else
                wpa_client_disconnect(w->global);
}

int wpa_new(sd_event *event, Config *const *config, bool initial_netns, const WpaHooks *hooks,
            void *userdata, Wpa **ret)
{
        Wpa *w = calloc(1, sizeof(*w));

        if (!w)
                return -ENOMEM;
        w->event = event;
        w->config = config;
        w->initial_netns = initial_netns;
        w->hooks = *hooks;
        w->userdata = userdata;
        *ret = w;
        return 0;
}

int wpa_start(Wpa *w)
{
        const WiFiConfig *cfg = &(*w->config)->wifi;
        int r;

        if (cfg->global_control) {
                _cleanup_free_ char *dir = strdup(cfg->global_control);
                if (!dir)
                        return -ENOMEM;
                *strrchr(dir, '/') = 0;
                r = wpa_client_new(w->event, cfg->global_control, cfg->client_dir,
                                   cfg->timeout_usec, &w->global);
                if (r < 0)
                        return r;
                wpa_client_set_state_handler(w->global, on_global_state, w);
                wpa_client_set_ping_interval(w->global, cfg->ping_interval_usec);
                r = wpa_client_subscribe(w->global, on_global_event, w, &w->global_sub);
                if (r < 0)
                        return r;
                r = wpa_dir_new(w->event, *dir ? dir : "/", on_global_dir, w, &w->dir);
        } else
                r = wpa_dir_new(w->event, cfg->control_dir, on_dir, w, &w->dir);
        if (r < 0)
                return log_error_errno(r, "Cannot watch wpa_supplicant's control directory: %m");
        return 0;
}

Wpa *wpa_free(Wpa *w)
{
        if (!w)
                return NULL;
        wpa_dir_free(w->dir);
        for (size_t k = 0; k < w->n_ifaces; k++)
                iface_free(w->ifaces[k]);
        free(w->ifaces);
        wpa_request_cancel(w->interfaces);
        wpa_subscription_free(w->global_sub);
        wpa_client_free(w->global);
        free(w->p2p_iface);
        free(w);
        return NULL;
}

const WpaStation *wpa_station(Wpa *w, const char *ifname)
{
        WpaIface *i = w && ifname ? wpa_find(w, ifname, NULL) : NULL;

        return i && i->up ? &i->st : NULL;
}

WpaClient *wpa_client_for(Wpa *w, const char *ifname, const char **ret_prefix)
{
        WpaIface *i = w && ifname ? wpa_find(w, ifname, NULL) : NULL;

        if (!i || !i->up || !wpa_client_is_up(iface_client(i)))
                return NULL;
        if (ret_prefix)
                *ret_prefix = iface_prefix(i);
        return iface_client(i);
}

const char *wpa_station_ifname(Wpa *w)
{
        const char *best = NULL;

        /* P2P devices and groups are not where a network is joined. */
        for (size_t k = 0; w && k < w->n_ifaces; k++) {
                WpaIface *i = w->ifaces[k];
                if (!i->up || strncmp(i->name, "p2p-", 4) == 0 ||
                    !wpa_client_is_up(iface_client(i)))
                        continue;
                if (!best || strcmp(i->name, best) < 0)
                        best = i->name;
        }
        return best;
}
