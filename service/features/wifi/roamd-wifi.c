/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-bus-name.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-link.h"
#include "roamd-links.h"
#include "roamd-probe.h"
#include "roamd-wifi-client-iwd.h"
#include "roamd-wifi-client-nm.h"
#include "roamd-wifi-probe.h"
#include "roamd-wifi-wpa.h"
#include "roamd-wifi.h"

/* The owners that talk on the bus: their coming (or going) decides the owner anew. */
static const char *const wifi_owner_bus_names[] = {
    "org.freedesktop.NetworkManager",
    "net.connman.iwd",
};

#define SECRET_WAIT_USEC  (120 * USEC_PER_SEC)
#define VERDICT_WAIT_USEC (30 * USEC_PER_SEC)

/* The backends roamd has, by owner: how each is made and asked (NULL: none here). */
static const WifiBackendNewFn backend_new[_WIFI_OWNER_MAX] = {
    [WIFI_OWNER_NETWORKMANAGER] = wifi_nm_new,
    [WIFI_OWNER_IWD] = wifi_iwd_new,
    [WIFI_OWNER_WPA_SUPPLICANT] = wifi_wpa_new,
};

static void iface_detect(WifiIface *i);

WifiJoin *wifi_join_free(WifiJoin *j)
{
        if (!j)
                return NULL;
        if (j->op && j->iface->backend)
                j->iface->backend->ops->cancel(j->op);
        wifi_enroll_free(j->enroll); /* stops listening at the owner */
        sd_bus_message_unref(j->enroll_call);
        sd_event_source_disable_unref(j->timer);
        free(j->sender);
        free(j);
        return NULL;
}

/* The join's end, said once on the bus; the join is gone after it. */
void wifi_join_finish(WifiJoin *j, WifiJoinResult result, const char *words)
{
        WifiIface *i = j->iface;
        uint32_t id = j->id;
        char w[WIFI_WORDS_MAX];
        bool silent;

        snprintf(w, sizeof(w), "%s", words ?: "");
        silent = wifi_enroll_join_end(j, w);
        log_info("%s: join %u ended: %s (%s)", i->ifname, id, wifi_join_result_to_string(result),
                 w);
        i->join = NULL;
        wifi_join_free(j);
        wifi_bus_emit_changed(i, "Join", NULL);
        if (!silent)
                wifi_bus_join_done(i, id, result, w);
}

void wifi_join_step(WifiJoin *j, WifiJoinStep step, const char *words)
{

        if (j->has_step && j->step == step)
                return;
        log_info("%s: join %u: %s -> %s", j->iface->ifname, j->id,
                 j->has_step ? wifi_join_step_to_string(j->step) : "start",
                 wifi_join_step_to_string(step));
        j->step = step;
        j->has_step = true;
        wifi_bus_emit_changed(j->iface, "Join", NULL);
        wifi_bus_join_step(j, step, words);
}

static int on_secret_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WifiJoin *j = userdata;

        j->timer = sd_event_source_disable_unref(j->timer);
        wifi_join_finish(j,
                         !j->wrong_key_asked ? WIFI_JOIN_TIMEOUT
                         : j->eap_asked      ? WIFI_JOIN_AUTH_FAILED
                                             : WIFI_JOIN_WRONG_KEY,
                         !j->wrong_key_asked ? "No passphrase came within 2 minutes"
                         : j->eap_asked ? "The network refused the user name or password, and no "
                                          "other came within 2 minutes"
                                        : "The network refused the passphrase, and no other came "
                                          "within 2 minutes");
        return 0;
}

static void on_needs_secret(WifiSecretKind kind, WifiSecretWhy why, void *userdata)
{
        WifiJoin *j = userdata;

        log_info("%s: join %u needs a secret (%s, %s)", j->iface->ifname, j->id,
                 wifi_secret_kind_to_string(kind), wifi_secret_why_to_string(why));
        j->wrong_key_asked = why == WIFI_SECRET_WHY_WRONG_KEY;
        j->eap_asked = kind == WIFI_SECRET_IDENTITY_PASSWORD;
        j->timer = sd_event_source_disable_unref(j->timer);
        (void)sd_event_add_time_relative(j->iface->service->core->event, &j->timer, CLOCK_MONOTONIC,
                                         SECRET_WAIT_USEC, 0, on_secret_timeout, j);
        wifi_bus_join_needs_secret(j, kind, why);
}

static int on_verdict_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WifiJoin *j = userdata;
        char w[WIFI_WORDS_MAX];

        j->timer = sd_event_source_disable_unref(j->timer);
        snprintf(w, sizeof(w), "%s; the link's verdict did not come within 30 s", j->words);
        wifi_join_finish(j, WIFI_JOIN_CONNECTED, w);
        return 0;
}

static void join_verdict(WifiJoin *j, const Link *l)
{
        char w[WIFI_WORDS_MAX];

        if (!j->has_step || j->step != WIFI_JOIN_STEP_CHECKING || j->op ||
            l->verdict.verdict == VERDICT_CHECKING ||
            (l->prober && prober_round_running(l->prober)))
                return;
        if (l->verdict.verdict == VERDICT_PORTAL) {
                snprintf(w, sizeof(w), "%s: behind a captive portal%s%s", j->words,
                         l->portal_url ? ", log in at " : "", l->portal_url ?: "");
                wifi_join_finish(j, WIFI_JOIN_PORTAL, w);
                return;
        }
        snprintf(w, sizeof(w), "%s. %s.", j->words,
                 l->verdict.verdict == VERDICT_ONLINE    ? "Online"
                 : l->verdict.verdict == VERDICT_PARTIAL ? "Online, partly"
                 : l->verdict.verdict == VERDICT_LOCAL   ? "Local network only"
                                                         : "Not online");
        wifi_join_finish(j, WIFI_JOIN_CONNECTED, w);
}

/* The owner joined: a new probe round of the link says the rest (online, local, a portal). */
static void join_check(WifiJoin *j)
{
        Link *l = links_get(j->iface->service->core->links, j->iface->ifindex);

        wifi_join_step(j, WIFI_JOIN_STEP_CHECKING, NULL);
        j->timer = sd_event_source_disable_unref(j->timer);
        if (!l || link_reprobe(l) < 0 ||
            sd_event_add_time_relative(j->iface->service->core->event, &j->timer, CLOCK_MONOTONIC,
                                       VERDICT_WAIT_USEC, 0, on_verdict_timeout, j) < 0) {
                wifi_join_finish(j, WIFI_JOIN_CONNECTED, j->words);
                return;
        }
        /* facts that need no probe (no address yet) decide at once */
        join_verdict(j, l);
}

static void on_step(WifiJoinStep step, const char *words, void *userdata)
{
        wifi_join_step(userdata, step, words);
}

void wifi_join_owner_done(WifiJoin *j, WifiJoinResult result, const char *words)
{
        j->op = NULL;     /* the backend dropped it */
        j->enroll = NULL; /* a DPP configurator's too */
        if (result == WIFI_JOIN_CONNECTED) {
                snprintf(j->words, sizeof(j->words), "%s", words ?: "Joined");
                join_check(j);
                return;
        }
        wifi_join_finish(j, result, words);
}

static void on_done(WifiJoinResult result, const char *words, void *userdata)
{
        wifi_join_owner_done(userdata, result, words);
}

const WifiJoinReport wifi_join_report = {
    .step = on_step,
    .needs_secret = on_needs_secret,
    .done = on_done,
};

WifiJoin *wifi_join_new(WifiIface *i, const char *sender)
{
        WifiJoin *j = calloc(1, sizeof(*j));

        if (!j)
                return NULL;
        j->iface = i;
        j->id = ++i->service->next_join ?: ++i->service->next_join;
        j->sender = strdup(sender ?: "");
        if (!j->sender) {
                free(j);
                return NULL;
        }
        return j;
}

int wifi_join_start_backend(WifiJoin *j, const WifiJoinRequest *q)
{
        WifiBackend *b = j->iface->backend;

        if (!b)
                return -EOPNOTSUPP;
        memcpy(j->ssid, q->ssid, q->ssid_len);
        j->ssid_len = q->ssid_len;
        return b->ops->join(b, q, &wifi_join_report, j, &j->op);
}

int wifi_iface_join(WifiIface *i, const WifiJoinRequest *q, const char *sender, uint32_t *ret)
{
        WifiJoin *j;
        int r;

        if (!i->backend)
                return -EOPNOTSUPP;
        if (i->join)
                return -EBUSY;
        j = wifi_join_new(i, sender);
        if (!j)
                return -ENOMEM;
        r = wifi_join_start_backend(j, q);
        if (r < 0) {
                wifi_join_free(j);
                return r;
        }
        i->join = j;
        log_info("%s: join %u through %s started (secrets: %s)", i->ifname, j->id,
                 wifi_owner_to_name(i->owner), q->passphrase || q->password ? "given" : "none");
        wifi_bus_emit_changed(i, "Join", NULL);
        *ret = j->id;
        return 0;
}

int wifi_iface_join_secret(WifiIface *i, const WifiSecrets *s)
{
        WifiJoin *j = i->join;
        int r;

        if (!j || !(j->op || (j->enroll && j->enroll->secret)) || !i->backend)
                return -ENOENT;
        j->timer = sd_event_source_disable_unref(j->timer);
        /* a join's, or a DPP configurator's (the passphrase of the network it sends) */
        r = j->op ? i->backend->ops->secret(j->op, s) : j->enroll->secret(j->enroll, s);
        if (r >= 0)
                log_info("%s: join %u got its secret", i->ifname, j->id);
        return r;
}

void wifi_iface_join_cancel(WifiIface *i)
{
        WifiJoin *j = i->join;

        if (!j)
                return;
        /* After a wrong-key request, giving up is the answer "the key was wrong" (the CLI's
         * exit code for a wrong key comes from this). */
        wifi_join_finish(j,
                         !j->wrong_key_asked ? WIFI_JOIN_CANCELED
                         : j->eap_asked      ? WIFI_JOIN_AUTH_FAILED
                                             : WIFI_JOIN_WRONG_KEY,
                         !j->wrong_key_asked ? "The join was canceled"
                         : j->eap_asked      ? "The network refused the user name or password"
                                             : "The network refused the passphrase");
}

/* ---- the backend's news ---- */

static void on_networks_changed(void *userdata)
{
        (void)userdata; /* GetNetworks reads anew; nothing is kept here */
}

static void on_scanning(bool scanning, void *userdata)
{
        WifiIface *i = userdata;
        struct timespec ts;

        if (i->scanning == scanning)
                return;
        i->scanning = scanning;
        if (!scanning && clock_gettime(CLOCK_REALTIME, &ts) >= 0)
                i->last_scan_usec =
                    (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
        wifi_bus_emit_changed(i, "Scanning", scanning ? NULL : "LastScan", NULL);
}

static void iface_drop_backend(WifiIface *i, const char *why)
{
        while (i->calls) {
                WifiCall *c = i->calls;
                (void)sd_bus_reply_method_errorf(c->msg, ROAM_ERROR_FAILED, "%s", why);
                wifi_call_free(c);
        }
        if (i->join)
                wifi_join_finish(i->join, WIFI_JOIN_REFUSED, why);
        i->backend = wifi_backend_free(i->backend);
        if (i->scanning) {
                i->scanning = false;
                wifi_bus_emit_changed(i, "Scanning", NULL);
        }
}

static void on_lost(const char *words, void *userdata)
{
        WifiIface *i = userdata;

        log_info("%s: %s no longer runs it (%s)", i->ifname, wifi_owner_to_name(i->owner),
                 words ?: "");
        iface_drop_backend(i, words ?: "the owner went away");
        iface_detect(i);
}

static const WifiBackendEvents backend_events = {
    .networks_changed = on_networks_changed,
    .scanning = on_scanning,
    .lost = on_lost,
};

/* ---- the owner ---- */

static void iface_set_owner(WifiIface *i, WifiOwner owner, const char *why)
{
        bool changed = owner != i->owner;

        if (changed)
                log_info("%s: Wi-Fi owner %s -> %s", i->ifname, wifi_owner_to_string(i->owner),
                         wifi_owner_to_string(owner));
        if (changed || !i->backend)
                iface_drop_backend(i, "the interface's Wi-Fi owner changed");
        i->owner = owner;
        if (!i->backend && backend_new[owner]) {
                int r = backend_new[owner](i->service->core, i->ifname, i->ifindex, &backend_events,
                                           i, &i->backend);
                if (r < 0) {
                        log_warning_errno(r, "%s: cannot use %s: %m", i->ifname,
                                          wifi_owner_to_name(owner));
                        i->owner = WIFI_OWNER_NONE;
                }
        }
        (void)free_and_strdup(&i->why, why);
        wifi_bus_emit_changed(i, "WiFiBackend", "WiFiBackendWhy", NULL);
}

static void on_owner(WifiOwner owner, const char *why, void *userdata)
{
        WifiIface *i = userdata;
        char w[WIFI_WORDS_MAX * 2];

        i->detect = wifi_owner_detect_free(i->detect);
        if (owner != WIFI_OWNER_NONE && !backend_new[owner] && owner != WIFI_OWNER_CONNMAN) {
                /* detected, but this roamd has no backend for it: never another owner */
                snprintf(w, sizeof(w), "%s; roam cannot join through %s in this build", why,
                         wifi_owner_to_name(owner));
                why = w;
        }
        iface_set_owner(i, owner, why);
        if (i->redetect) {
                i->redetect = false;
                iface_detect(i);
        }
}

static void iface_detect(WifiIface *i)
{
        const char *b = i->service->core->config->wifi.backend;
        int r;

        if (i->detect) {
                i->redetect = true;
                return;
        }
        r = wifi_owner_detect(i->service->core, i->ifname,
                              b ? wifi_owner_from_string(b) : _WIFI_OWNER_INVALID,
                              &i->service->probes, on_owner, i, &i->detect);
        if (r < 0)
                log_warning_errno(r, "%s: cannot decide the Wi-Fi owner: %m", i->ifname);
}

/* ---- the interfaces follow the links ---- */

static void iface_free(WifiIface *i)
{
        if (!i)
                return;
        i->detect = wifi_owner_detect_free(i->detect);
        iface_drop_backend(i, "the link went away");
        free(i->ifname);
        free(i->path);
        free(i->why);
        free(i);
}

WifiIface *wifi_service_iface(WifiService *s, int ifindex)
{
        for (size_t k = 0; s && k < s->n_ifaces; k++)
                if (s->ifaces[k]->ifindex == ifindex)
                        return s->ifaces[k];
        return NULL;
}

WifiIface *wifi_service_iface_by_name(WifiService *s, const char *ifname)
{
        for (size_t k = 0; s && k < s->n_ifaces; k++)
                if (streq(s->ifaces[k]->ifname, ifname))
                        return s->ifaces[k];
        return NULL;
}

static void iface_add(WifiService *s, Link *l)
{
        WifiIface *i, **n;

        if (l->bearer != BEARER_WIFI || wifi_service_iface(s, l->ifindex) || !l->info.name)
                return;
        i = calloc(1, sizeof(*i));
        if (!i)
                return (void)log_oom();
        *i = (WifiIface){.service = s, .ifindex = l->ifindex, .owner = WIFI_OWNER_NONE};
        i->ifname = strdup(l->info.name);
        i->path = strdup(l->path);
        i->why = strdup("Deciding who runs Wi-Fi here");
        n = reallocarray(s->ifaces, s->n_ifaces + 1, sizeof(*n));
        if (!i->ifname || !i->path || !i->why || !n) {
                iface_free(i);
                return (void)log_oom();
        }
        s->ifaces = n;
        n[s->n_ifaces++] = i;
        wifi_bus_iface_added(i);
        iface_detect(i);
}

static void iface_remove(WifiService *s, int ifindex)
{
        for (size_t k = 0; k < s->n_ifaces; k++) {
                WifiIface *i = s->ifaces[k];
                if (i->ifindex != ifindex)
                        continue;
                memmove(s->ifaces + k, s->ifaces + k + 1,
                        sizeof(*s->ifaces) * (s->n_ifaces - k - 1));
                s->n_ifaces--;
                wifi_bus_iface_removed(i);
                iface_free(i);
                return;
        }
}

static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        WifiService *s = userdata;
        WifiIface *i;

        switch (ev->type) {
        case LINKS_EVENT_NEW:
                iface_add(s, ev->link);
                break;
        case LINKS_EVENT_CHANGED:
                i = wifi_service_iface(s, ev->link->ifindex);
                if (i && ev->link->bearer != BEARER_WIFI)
                        iface_remove(s, ev->link->ifindex);
                else if (!i)
                        iface_add(s, ev->link);
                else if (i->owner == WIFI_OWNER_NONE)
                        iface_detect(i); /* an owner may have come: the probes are cheap */
                break;
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_PROBED:
                i = wifi_service_iface(s, ev->link->ifindex);
                if (i && i->join)
                        join_verdict(i->join, ev->link);
                break;
        case LINKS_EVENT_GONE:
                iface_remove(s, ev->link->ifindex);
                break;
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_SYNCED:
        case LINKS_EVENT_LOCATION:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

void wifi_service_wpa_news(WifiService *s, const char *ifname)
{
        WifiIface *i = wifi_service_iface_by_name(s, ifname);

        if (!i)
                return;
        if (i->owner == WIFI_OWNER_WPA_SUPPLICANT && i->backend && !wifi_wpa_current(i->backend)) {
                on_lost("wpa_supplicant's control socket went", i);
                return;
        }
        if (i->owner == WIFI_OWNER_NONE)
                iface_detect(i);
}

int wifi_service_new(Core *core, WifiService **ret)
{
        WifiService *s = calloc(1, sizeof(*s));

        if (!s)
                return -ENOMEM;
        s->core = core;
        /* every owner is asked, with or without its backend here: the answer keeps roamd out
         * of an interface another daemon runs */
        s->probes.probe[WIFI_OWNER_NETWORKMANAGER] = wifi_probe_nm;
        s->probes.cancel[WIFI_OWNER_NETWORKMANAGER] = wifi_probe_cancel;
        s->probes.probe[WIFI_OWNER_IWD] = wifi_probe_iwd;
        s->probes.cancel[WIFI_OWNER_IWD] = wifi_probe_cancel;
        s->probes.probe[WIFI_OWNER_CONNMAN] = wifi_probe_connman;
        s->probes.cancel[WIFI_OWNER_CONNMAN] = wifi_probe_cancel;
        s->probes.probe[WIFI_OWNER_WPA_SUPPLICANT] = wifi_wpa_probe;
        s->probes.cancel[WIFI_OWNER_WPA_SUPPLICANT] = wifi_wpa_ops.cancel;
        *ret = s;
        return 0;
}

/* An owner that talks on the bus came or went: every interface decided anew (one it runs
 * also hears it from its backend; a detection already running goes once more). */
static int on_owner_name(BusNameWatch *w, const char *owner, void *userdata)
{
        WifiService *s = userdata;

        for (size_t k = 0; k < ELEMENTSOF(s->owner_names); k++)
                if (s->owner_names[k] == w)
                        log_info("Wi-Fi: %s %s the bus", wifi_owner_bus_names[k],
                                 *owner ? "joined" : "left");
        for (size_t k = 0; k < s->n_ifaces; k++)
                iface_detect(s->ifaces[k]);
        return 0;
}

int wifi_service_start(WifiService *s)
{
        Links *links = s->core->links;
        int r;

        r = wifi_bus_setup(s);
        if (r < 0)
                return r;
        for (size_t k = 0; s->core->bus && k < ELEMENTSOF(s->owner_names); k++) {
                r = bus_name_watch_new(s->core->bus, wifi_owner_bus_names[k], on_owner_name, s,
                                       &s->owner_names[k]);
                if (r < 0)
                        return r;
        }
        s->links_watch = links_watch_add(links, on_links, s, NULL);
        if (!s->links_watch)
                return -ENOMEM;
        for (size_t k = 0; k < links->n_links; k++)
                iface_add(s, links->links[k]);
        return 0;
}

WifiService *wifi_service_free(WifiService *s)
{
        if (!s)
                return NULL;
        if (s->links_watch)
                links_watch_remove(s->core->links, s->links_watch);
        while (s->n_ifaces) {
                WifiIface *i = s->ifaces[--s->n_ifaces];
                wifi_bus_iface_removed(i);
                iface_free(i);
        }
        free(s->ifaces);
        for (size_t k = 0; k < ELEMENTSOF(s->owner_names); k++)
                bus_name_watch_free(s->owner_names[k]);
        sd_bus_slot_unref(s->slot);
        free(s);
        return NULL;
}
