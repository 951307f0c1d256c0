/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-core.h"
#include "roamd-link.h"
#include "roamd-links.h"
#include "roamd-monitor.h"
#include "roamd-stats.h"
#include "roamd-wake-run.h"

/* One connection that listens: the app it speaks for is fixed when it subscribes (from its
 * cgroup then), and its subscription ends with the connection (sd_bus_track). */
struct MonitorSub {
        Monitor *m;
        char *sender; /* its unique name: where Changed goes */
        char *app_id;
        uid_t uid;   /* the user whose subtree holds its cgroup, UID_INVALID: none */
        uid_t owner; /* the connection's user, for the cap per user */
        MonitorAnswer told;
        MonitorAnswer held; /* an answer bringing it online, until its turn */
        bool holding;
        sd_bus_track *track;
};

struct Monitor {
        Core *core;
        Apps *apps;
        WakeRun *wake; /* NULL: no ordered wake-up, nothing is held */
        Stats *stats;  /* roaming and budgets; NULL without usage counting */
        MonitorSub **subs;
        size_t n_subs;
        unsigned apps_watch, wake_watch;
        unsigned links_watch; /* a link's modem registration: its metered answer */
        sd_bus_slot *slot;
};

static bool answer_equal(const MonitorAnswer *a, const MonitorAnswer *b)
{
        return a->available == b->available && a->connectivity == b->connectivity &&
               a->metered == b->metered;
}

/* The link an instance's traffic leaves by: IPv4's route, else IPv6's, else the link its
 * state is about. */
static Link *view_link(Monitor *m, const AppView *v)
{
        int ifindex = v->route[0] ?: v->route[1] ?: v->state_link;

        return ifindex > 0 ? links_get(m->core->links, ifindex) : NULL;
}

void monitor_answer_for(Monitor *m, App *app, uid_t uid, MonitorAnswer *ret)
{
        AppView v;
        Link *l;

        if (!app || app_view(app, uid, &v) < 0) {
                monitor_answer(NULL, false, ret);
                return;
        }
        l = view_link(m, &v);
        monitor_answer(&v, l && stats_link_metered_for(m->stats, l, app->id), ret);
}

/* Whether an answer that brings app online waits: a wake-listed app hears it at its turn (its
 * gate opened, the time gate with it), the others once every listed app's turn began. Not
 * once the last turn ended: an unmodified app never says Done, so the last turn ends by
 * going quiet, seconds of an idle link (bench_gio.py measured 4 s of 10 apps' 12). */
static bool wake_holds(Monitor *m, const char *app_id)
{
        Wake *q = m->wake ? m->wake->queue : NULL;
        WakeQueueState qs;
        WakeAppState st;

        if (!q)
                return false;
        qs = wake_queue_state(q);
        if (qs == WAKE_QUEUE_OFFLINE || qs == WAKE_QUEUE_FINISHED)
                return false; /* no wake-up under way */
        if (wake_app_state(q, app_id, &st, NULL) >= 0)
                return st == WAKE_APP_WAITING || st == WAKE_APP_OPENING;
        for (size_t i = 0; i < wake_count(q); i++) {
                (void)wake_nth(q, i, NULL, &st, NULL);
                if (st == WAKE_APP_WAITING || st == WAKE_APP_OPENING)
                        return true;
        }
        return false;
}

static void sub_tell(MonitorSub *s, const MonitorAnswer *a)
{
        int r;

        s->holding = false;
        if (answer_equal(&s->told, a))
                return;
        r = monitor_bus_send(s->m, s->sender, a);
        if (r < 0) {
                log_debug_errno(r, "monitor: cannot tell %s (%s): %m", s->sender, s->app_id);
                return;
        }
        s->told = *a;
}

static void sub_update(MonitorSub *s, const MonitorAnswer *a)
{
        bool online = a->connectivity == ROAM_CONNECTIVITY_FULL &&
                      s->told.connectivity != ROAM_CONNECTIVITY_FULL;

        if (online && wake_holds(s->m, s->app_id)) {
                s->held = *a;
                s->holding = true;
                return;
        }
        sub_tell(s, a);
}

static void on_app_state(Apps *a, App *app, void *userdata)
{
        Monitor *m = userdata;

        for (size_t i = 0; i < m->n_subs; i++) {
                MonitorSub *s = m->subs[i];
                MonitorAnswer ans;

                if (!streq(s->app_id, app->id))
                        continue;
                monitor_answer_for(m, app, s->uid, &ans);
                sub_update(s, &ans);
        }
}

/* A link's modem registration changed (LINK_CHANGE_MODEM): roaming is metered, so every
 * subscriber whose traffic leaves by that link is answered again (nothing else changed for
 * the others). */
static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        Monitor *m = userdata;

        if (ev->type != LINKS_EVENT_CHANGED || !(ev->mask & LINK_CHANGE_MODEM))
                return;
        for (size_t i = 0; i < m->n_subs; i++) {
                MonitorSub *s = m->subs[i];
                App *app = apps_get(m->apps, s->app_id);
                MonitorAnswer ans;
                AppView v;

                if (!app || app_view(app, s->uid, &v) < 0 || view_link(m, &v) != ev->link)
                        continue;
                monitor_answer_for(m, app, s->uid, &ans);
                sub_update(s, &ans);
        }
}

/* A turn or the queue moved: the answers held for it go out. */
static void release_held(Monitor *m, bool of_app, const char *id)
{
        for (size_t i = 0; i < m->n_subs; i++) {
                MonitorSub *s = m->subs[i];

                if (s->holding && (of_app == streq_ptr(id, s->app_id)) && !wake_holds(m, s->app_id))
                        sub_tell(s, &s->held);
        }
}

/* A turn or the queue moved: the answers held for it go out, the app whose turn began first,
 * then the others that waited for it (an unlisted app waits for every listed app's turn). */
static void on_wake(WakeRun *w, const char *id, void *userdata)
{
        Monitor *m = userdata;

        if (id)
                release_held(m, true, id);
        release_held(m, false, id);
}

static MonitorSub *sub_free(MonitorSub *s)
{
        if (!s)
                return NULL;
        sd_bus_track_unref(s->track);
        free(s->sender);
        free(s->app_id);
        free(s);
        return NULL;
}

static MonitorSub *sub_find(Monitor *m, const char *sender)
{
        for (size_t i = 0; i < m->n_subs; i++)
                if (streq(m->subs[i]->sender, sender))
                        return m->subs[i];
        return NULL;
}

static void sub_remove(Monitor *m, MonitorSub *s)
{
        for (size_t i = 0; i < m->n_subs; i++)
                if (m->subs[i] == s) {
                        memmove(&m->subs[i], &m->subs[i + 1],
                                (m->n_subs - i - 1) * sizeof(MonitorSub *));
                        m->n_subs--;
                        break;
                }
        sub_free(s);
}

static int on_sub_gone(sd_bus_track *track, void *userdata)
{
        MonitorSub *s = userdata;

        sub_remove(s->m, s);
        return 0;
}

int monitor_caller(Monitor *m, sd_bus_message *msg, App **ret_app, uid_t *ret_uid)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        _cleanup_free_ char *text = NULL;
        const char *cg = NULL;
        char path[64];
        size_t size;
        pid_t pid;
        int r;

        /* the bus's own record of the peer's pid (SO_PEERCRED), then its cgroup now */
        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0 || sd_bus_creds_get_pid(creds, &pid) < 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        r = read_full_file(path, 64 * 1024, &text, &size);
        if (r < 0)
                return -ESRCH;
        for (char *l = text; l && *l;) {
                char *nl = strchr(l, '\n');

                if (nl)
                        *nl = 0;
                if (strncmp(l, "0::", 3) == 0)
                        cg = l + 3;
                l = nl ? nl + 1 : NULL;
        }
        if (!cg)
                return -ESRCH;
        *ret_app = apps_find_by_cgroup(m->apps, cg, ret_uid);
        return *ret_app ? 0 : -ESRCH;
}

static size_t subs_of_user(Monitor *m, uid_t owner)
{
        size_t n = 0;

        for (size_t i = 0; i < m->n_subs; i++)
                n += m->subs[i]->owner == owner;
        return n;
}

int monitor_subscribe(Monitor *m, sd_bus_message *msg, App *app, uid_t uid, MonitorAnswer *ret)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *sender = sd_bus_message_get_sender(msg);
        uid_t owner = UID_INVALID;
        MonitorSub *s, **l;
        int r;

        if (!sender)
                return -ESRCH;
        s = sub_find(m, sender);
        if (s) {
                *ret = s->told;
                return 0;
        }
        if (sd_bus_query_sender_creds(msg, SD_BUS_CREDS_EUID, &creds) >= 0)
                (void)sd_bus_creds_get_euid(creds, &owner);
        if (m->n_subs >= MONITOR_SUBS_MAX ||
            (owner != 0 && subs_of_user(m, owner) >= MONITOR_SUBS_PER_USER_MAX))
                return -EUSERS;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->m = m;
        s->uid = uid;
        s->owner = owner;
        s->sender = strdup(sender);
        s->app_id = strdup(app->id);
        r = s->sender && s->app_id ? sd_bus_track_new(m->core->bus, &s->track, on_sub_gone, s)
                                   : -ENOMEM;
        if (r >= 0)
                r = sd_bus_track_add_sender(s->track, msg);
        l = r >= 0 ? reallocarray(m->subs, m->n_subs + 1, sizeof(MonitorSub *)) : NULL;
        if (!l) {
                sub_free(s);
                return r < 0 ? r : -ENOMEM;
        }
        m->subs = l;
        m->subs[m->n_subs++] = s;
        /* what holds now; but an app that waits for its turn (or for the listed apps' turns)
         * hears the internet only then: limited until its turn, as its connections are */
        monitor_answer_for(m, app, uid, &s->told);
        if (s->told.connectivity == ROAM_CONNECTIVITY_FULL && wake_holds(m, s->app_id)) {
                s->held = s->told;
                s->holding = true;
                s->told.connectivity = ROAM_CONNECTIVITY_LIMITED;
        }
        *ret = s->told;
        return 0;
}

int monitor_unsubscribe(Monitor *m, const char *sender)
{
        MonitorSub *s = sender ? sub_find(m, sender) : NULL;

        if (!s)
                return -ENOENT;
        sub_remove(m, s);
        return 0;
}

unsigned monitor_listeners(Monitor *m, const char *app_id)
{
        unsigned n = 0;

        for (size_t i = 0; i < m->n_subs; i++)
                n += streq(m->subs[i]->app_id, app_id);
        return n;
}

/* Whether addr lies in a prefix of one of the link's addresses (its LAN). */
static bool link_holds(const Link *l, int family, const uint8_t *addr)
{
        for (size_t i = 0; i < l->info.n_addrs; i++) {
                const LinkAddress *a = &l->info.addrs[i];
                uint8_t net[16];
                unsigned len = family == AF_INET ? 4 : 16, bits = a->prefixlen;

                if (a->addr.family != family || inet_pton(family, a->addr.text, net) != 1)
                        continue;
                if (bits > len * 8)
                        continue;
                if (memcmp(net, addr, bits / 8) != 0)
                        continue;
                if (bits % 8 == 0)
                        return true;
                uint8_t mask = (uint8_t)(0xff << (8 - bits % 8));
                if ((net[bits / 8] & mask) == (addr[bits / 8] & mask))
                        return true;
        }
        return false;
}

static bool addr_is_loopback(int family, const uint8_t *addr)
{
        static const uint8_t lo6[16] = {[15] = 1};

        return family == AF_INET ? addr[0] == 127 : memcmp(addr, lo6, 16) == 0;
}

bool monitor_can_reach(Monitor *m, App *app, uid_t uid, int family, const uint8_t *addr,
                       const char **why)
{
        Links *links = m->core->links;
        AppView v;

        if (addr_is_loopback(family, addr))
                return true;
        if (!app || app_view(app, uid, &v) < 0) {
                *why = "the app's policy is not in force yet";
                return false;
        }
        if (v.access == APP_ACCESS_DENY) {
                *why = "the app's policy denies it the network";
                return false;
        }
        /* the LAN of a link it may use: a link that is up, of a bearer its policy allows */
        for (size_t i = 0; i < links->n_links; i++) {
                const Link *l = links->links[i];
                const AppPolicy p = {.set = APP_KEY_BEARERS, .bearers = v.bearers};

                if (l->info.carrier && app_policy_allows_bearer(&p, l->bearer) &&
                    link_holds(l, family, addr))
                        return true;
        }
        if (v.access == APP_ACCESS_LAN) {
                *why = "the app's policy lets it reach the local networks only";
                return false;
        }
        if (v.route[family == AF_INET6]) {
                Link *l = links_get(links, v.route[family == AF_INET6]);
                if (l && l->verdict.verdict >= VERDICT_LOCAL)
                        return true;
        }
        *why =
            family == AF_INET6 ? "no IPv6 route the app may use" : "no IPv4 route the app may use";
        return false;
}

int monitor_new(Core *core, Apps *apps, WakeRun *wake, Stats *stats, Monitor **ret)
{
        Monitor *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->core = core;
        m->apps = apps;
        m->wake = wake;
        m->stats = stats;
        m->apps_watch = apps_state_watch_add(apps, on_app_state, m);
        m->links_watch = links_watch_add(core->links, on_links, m, NULL);
        if (m->apps_watch == 0 || m->links_watch == 0 ||
            (wake && (m->wake_watch = wake_run_watch_add(wake, on_wake, m)) == 0)) {
                monitor_free(m);
                return -ENOMEM;
        }
        r = monitor_bus_setup(m);
        if (r < 0) {
                monitor_free(m);
                return r;
        }
        *ret = m;
        return 0;
}

Monitor *monitor_free(Monitor *m)
{
        if (!m)
                return NULL;
        sd_bus_slot_unref(m->slot);
        apps_state_watch_remove(m->apps, m->apps_watch);
        if (m->links_watch)
                links_watch_remove(m->core->links, m->links_watch);
        wake_run_watch_remove(m->wake, m->wake_watch);
        for (size_t i = 0; i < m->n_subs; i++)
                sub_free(m->subs[i]);
        free(m->subs);
        free(m);
        return NULL;
}

sd_bus_slot **monitor_slot(Monitor *m)
{
        return &m->slot;
}

Core *monitor_core(Monitor *m)
{
        return m->core;
}
