/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-apps.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-nft-wake.h"
#include "roamd-reconcile.h"
#include "roamd-stats-history.h"
#include "roamd-stats.h"
#include "roamd-wake-run.h"

static uint64_t mono_now(void *userdata)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        WakeRun *w = userdata;

        wake_tick(w->queue);
        return 0;
}

static void arm(void *userdata, uint64_t when)
{
        WakeRun *w = userdata;
        int r;

        if (when == UINT64_MAX) {
                if (w->timer)
                        (void)sd_event_source_set_enabled(w->timer, SD_EVENT_OFF);
                return;
        }
        if (!w->timer) {
                r = sd_event_add_time(w->core->event, &w->timer, CLOCK_MONOTONIC, when, 0, on_timer,
                                      w);
                if (r < 0) {
                        log_error_errno(r, "wake: cannot arm the timer: %m");
                        return;
                }
                (void)sd_event_source_set_description(w->timer, "wake");
                return;
        }
        (void)sd_event_source_set_time(w->timer, when);
        (void)sd_event_source_set_enabled(w->timer, SD_EVENT_ONESHOT);
}

/* What the app sent and received so far, read from the kernel's counters now. */
static uint64_t app_bytes(void *userdata, const char *id)
{
        WakeRun *w = userdata;
        Stats *s = w->stats;
        StatsCount c;

        if (!s || stats_read(s) < 0)
                return UINT64_MAX;
        c = stats_history_sum_app(stats_history(s), id); /* owners "app:ID", "user:U/app:ID" */
        return c.bytes_in + c.bytes_out;
}

/* An opening app (roamd-wake.h): its turn came; it is told once the pass that takes its
 * cgroups out of set wake_gate committed, never before (an app that connects the moment it
 * hears Wake must find its gate open). */
struct WakeOpen {
        WakeRun *w;
        char *id;
        uint64_t generation;
        ReconcileWait *wait;
};

static WakeOpen *open_free(WakeOpen *o)
{
        if (!o)
                return NULL;
        reconcile_wait_free(o->wait);
        free(o->id);
        free(o);
        return NULL;
}

static void opens_free(WakeRun *w)
{
        for (size_t i = 0; i < w->n_opens; i++)
                open_free(w->opens[i]);
        free(w->opens);
        w->opens = NULL;
        w->n_opens = 0;
}

/* The app is not opening any more (told, ended, a new period): its wait goes. */
static void open_drop(WakeRun *w, const char *id)
{
        for (size_t i = 0; i < w->n_opens; i++)
                if (streq(w->opens[i]->id, id)) {
                        open_free(w->opens[i]);
                        memmove(&w->opens[i], &w->opens[i + 1],
                                (w->n_opens - i - 1) * sizeof(WakeOpen *));
                        w->n_opens--;
                        return;
                }
}

static bool contains(const uint64_t *l, size_t n, uint64_t v);

/* Whether none of the app's cgroups is in set wake_gate as the kernel holds it (w->installed:
 * what the last committed pass put there). */
static bool gate_open(WakeRun *w, const char *id)
{
        App *app = apps_get(w->apps, id);

        for (size_t k = 0; app && k < app->n_cgroups; k++)
                if (contains(w->installed, w->n_installed, app->cgroups[k].id))
                        return false;
        return true;
}

static void on_open_pass(Reconcile *rc, int result, void *userdata)
{
        WakeOpen *o = userdata;
        WakeRun *w = o->w;
        uint64_t generation = o->generation;
        _cleanup_free_ char *id = NULL;
        int r;

        o->wait = reconcile_wait_free(o->wait);
        /* (-ENOMEDIUM: nothing is enforced here, so nothing is gated) */
        if (result == -ENOMEDIUM || gate_open(w, o->id)) {
                id = strdup(o->id);
                if (!id) {
                        log_oom();
                        return;
                }
                (void)wake_app_opened(w->queue, id, generation); /* frees o (open_drop) */
                return;
        }
        log_warning("wake: %s: its gate did not open (%s); it is told once a retry commits", o->id,
                    result < 0 ? strerror(-result) : "still in set wake_gate");
        /* the reconciler retries with its backoff: the next pass answers */
        r = reconcile_wait_next(rc, on_open_pass, o, NULL, &o->wait);
        if (r < 0)
                log_error_errno(r, "wake: %s: cannot wait for the reconciler's retry: %m", o->id);
        (void)wake_app_open_failed(w->queue, o->id, generation);
}

static void open_gate(void *userdata, const char *id, uint64_t generation)
{
        WakeRun *w = userdata;
        WakeOpen *o, **l;
        int r;

        open_drop(w, id);
        o = calloc(1, sizeof(*o));
        l = o ? reallocarray(w->opens, w->n_opens + 1, sizeof(WakeOpen *)) : NULL;
        if (l)
                w->opens = l;
        if (!l || !(o->id = strdup(id))) {
                free(o);
                log_oom();
                return;
        }
        o->w = w;
        o->generation = generation;
        w->opens[w->n_opens++] = o;
        /* the pass that carries the change: the app left the waiting ones, its cgroups leave
         * the set (part_prepare) */
        r = reconcile_wait(w->core->reconcile, on_open_pass, o, NULL, &o->wait);
        if (r < 0)
                log_error_errno(r, "wake: %s: cannot wait for the pass that opens its gate: %m",
                                id);
}

static void app_changed(void *userdata, const char *id, WakeAppState old, WakeAppState new,
                        WakeReason why, uint64_t generation)
{
        WakeRun *w = userdata;

        if (old == WAKE_APP_OPENING && new != WAKE_APP_OPENING)
                open_drop(w, id);
        /* The gate follows in the next pass. */
        if (old == WAKE_APP_WAITING || new == WAKE_APP_WAITING)
                reconcile_schedule(w->core->reconcile);
        wake_bus_app_changed(w, id, old, new, why, generation);
}

static void queue_changed(void *userdata, WakeQueueState old, WakeQueueState new)
{
        wake_bus_queue_changed(userdata);
}

static void gate_changed(void *userdata)
{
        wake_bus_queue_changed(userdata);
}

static void cap_changed(void *userdata)
{
        wake_bus_cap_changed(userdata);
}

static const WakeOps wake_ops = {
    .now = mono_now,
    .arm = arm,
    .bytes = app_bytes,
    .app_changed = app_changed,
    .open = open_gate,
    .queue_changed = queue_changed,
    .gate_changed = gate_changed,
    .cap_changed = cap_changed,
};

/* The link the apps' traffic takes (Manager.DefaultLink, handed over by the composition
 * root): its bearer and its round trip are what the turns share, not the best link's. */
static Link *default_link(WakeRun *w)
{
        return w->link ? links_get(w->core->links, w->link) : NULL;
}

static unsigned cap_for(WakeRun *w)
{
        const WakeConfigSection *c = &w->core->config->wake;
        Link *link = default_link(w);

        if (link && link->bearer >= 0 && link->bearer < _BEARER_MAX &&
            c->at_once_bearer[link->bearer] > 0)
                return c->at_once_bearer[link->bearer];
        return c->at_once;
}

/* The slow-link rule (docs/wake.md): the last probe RTT of the link the apps' traffic takes
 * at or above [Wake] SlowRTTSec= makes the cap 1; unmeasured is not slow. A fact for the
 * queue. */
static void slow_update(WakeRun *w)
{
        uint64_t limit = w->core->config->wake.slow_rtt_usec;
        Link *link = default_link(w);
        char why[128];
        bool slow;

        if (!link || link->probe_rtt_usec == 0 || limit == 0) {
                (void)wake_set_slow(w->queue, false, NULL);
                return;
        }
        slow = link->probe_rtt_usec >= limit;
        (void)snprintf(why, sizeof(why), "%s's probe RTT %" PRIu64 " ms %s %" PRIu64 " ms",
                       strempty(link->info.name), link->probe_rtt_usec / USEC_PER_MSEC,
                       slow ? ">=" : "<", limit / USEC_PER_MSEC);
        if (wake_set_slow(w->queue, slow, why) < 0)
                log_oom();
}

static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        WakeRun *w = userdata;

        switch (ev->type) {
        case LINKS_EVENT_PROBED:
        case LINKS_EVENT_CHANGED:
                /* a new measure, or a bearer override of the apps' link */
                if (ev->link->ifindex != w->link)
                        break;
                slow_update(w);
                wake_set_cap(w->queue, cap_for(w));
                break;
        case LINKS_EVENT_GONE:
                if (ev->link->ifindex == w->link)
                        w->link = 0; /* the manager's state follows with the new link */
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_CAPPORT:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_SYNCED:
        case LINKS_EVENT_LOCATION:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

void wake_run_set_state(WakeRun *w, bool online, int ifindex)
{
        if (!w)
                return;
        w->link = ifindex;
        /* before the state: a link that just went online brings its measure */
        slow_update(w);
        wake_set_cap(w->queue, cap_for(w));
        wake_set_online(w->queue, online);
}

static void config_from(WakeRun *w, WakeConfig *c)
{
        const WakeConfigSection *s = &w->core->config->wake;

        *c = (WakeConfig){
            .settle_usec = s->settle_usec,
            .restart_usec = s->restart_usec,
            .quiet_usec = s->quiet_usec,
            .max_delay_usec = s->max_delay_usec,
            .cap = cap_for(w),
        };
}

/* ---- the gate: a part of the reconciler's pass ---- */

/* The queue follows the apps' policies: listed, ranked, or off the list. */
static void sync_apps(WakeRun *w)
{
        Apps *a = w->apps;
        _cleanup_strv_free_ char **gone = NULL;
        size_t n_gone = 0;

        for (size_t i = 0; i < apps_count(a); i++) {
                App *app = apps_nth(a, i);

                bool was;

                if (app->special)
                        continue;
                was = wake_app_state(w->queue, app->id, NULL, NULL) >= 0;
                (void)wake_app_put(w->queue, app->id, app_policy_wake_priority(&app->effective),
                                   app_policy_wake_slice(&app->effective));
                (void)wake_app_set_bytes(w->queue, app->id, app_policy_wake_bytes(&app->effective),
                                         UINT64_MAX);
                /* On the list or off it: its state is no longer or again "" (the queue tells
                 * only of changes of a listed app's state). */
                if (was != (wake_app_state(w->queue, app->id, NULL, NULL) >= 0))
                        wake_bus_app_listed(w, app->id);
        }
        for (size_t i = 0; i < wake_count(w->queue); i++) {
                const char *id = wake_nth(w->queue, i, NULL, NULL, NULL);
                App *app = apps_get(a, id);
                char **l;

                if (app && app_policy_wake_priority(&app->effective) >= 0)
                        continue;
                l = reallocarray(gone, n_gone + 2, sizeof(char *));
                if (!l)
                        return;
                gone = l;
                gone[n_gone] = strdup(id);
                gone[++n_gone] = NULL;
        }
        STRV_FOREACH (id, gone) {
                (void)wake_reg_drop(w, *id);
                (void)wake_app_put(w->queue, *id, APP_WAKE_NONE, 0);
                wake_bus_app_listed(w, *id); /* off the list: its state is "" again */
        }
}

/* The cgroup IDs whose new connections the gate refuses now. */
static int gated_cgroups(WakeRun *w, uint64_t **ret, size_t *ret_n)
{
        Apps *a = w->apps;
        uint64_t *l = NULL;
        size_t n = 0;

        for (size_t i = 0; i < wake_count(w->queue); i++) {
                const char *id = wake_nth(w->queue, i, NULL, NULL, NULL);
                App *app = apps_get(a, id);

                if (!app || !wake_app_gated(w->queue, id))
                        continue;
                for (size_t k = 0; k < app->n_cgroups; k++) {
                        uint64_t *nl = reallocarray(l, n + 1, sizeof(uint64_t));
                        if (!nl) {
                                free(l);
                                return -ENOMEM;
                        }
                        l = nl;
                        l[n++] = app->cgroups[k].id;
                }
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

static bool contains(const uint64_t *l, size_t n, uint64_t v)
{
        for (size_t i = 0; i < n; i++)
                if (l[i] == v)
                        return true;
        return false;
}

static void part_prepare(void *userdata, Reconcile *rc)
{
        WakeRun *w = userdata;

        sync_apps(w);
        free(w->pending);
        w->pending = NULL;
        w->n_pending = 0;
        w->pending_valid = gated_cgroups(w, &w->pending, &w->n_pending) >= 0;
        if (!w->pending_valid)
                reconcile_failed(rc, "wake gate", -ENOMEM);
}

static int part_install(void *userdata, NftTxn *t)
{
        WakeRun *w = userdata;
        int r;

        r = nft_wake_gate_install(t);
        if (r < 0)
                return r;
        if (!w->pending_valid) {
                free(w->pending);
                w->pending = NULL;
                w->n_pending = 0;
                w->pending_valid = gated_cgroups(w, &w->pending, &w->n_pending) >= 0;
                if (!w->pending_valid)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < w->n_pending; i++) {
                r = nft_wake_gate_elem(t, w->pending[i], true);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int part_sync(void *userdata, NftTxn *t)
{
        WakeRun *w = userdata;
        int r;

        if (!w->pending_valid)
                return 0;
        for (size_t i = 0; i < w->n_pending; i++)
                if (!contains(w->installed, w->n_installed, w->pending[i])) {
                        r = nft_wake_gate_elem(t, w->pending[i], true);
                        if (r < 0)
                                return r;
                }
        for (size_t i = 0; i < w->n_installed; i++)
                if (!contains(w->pending, w->n_pending, w->installed[i])) {
                        r = nft_wake_gate_elem(t, w->installed[i], false);
                        if (r < 0)
                                return r;
                }
        return 0;
}

static void part_done(void *userdata, Reconcile *rc, int result, bool full)
{
        WakeRun *w = userdata;

        if (result < 0 || !w->pending_valid) {
                if (full) {
                        /* the table was not replaced: what was in force stays */
                }
                return;
        }
        free(w->installed);
        w->installed = TAKE_PTR(w->pending);
        w->n_installed = w->n_pending;
        w->n_pending = 0;
        w->pending_valid = false;
}

static const ReconcilePart wake_part = {
    .prepare = part_prepare,
    .install = part_install,
    .sync = part_sync,
    .done = part_done,
};

static void on_apps_cgroup(Apps *a, const AppsCgroupEvent *ev, void *userdata)
{
        WakeRun *w = userdata;

        if (ev->event == CGROUP_EVENT_ADDED && ev->node->cls.kind == CGROUP_KIND_APP)
                wake_reg_cgroup_added(w, ev->node->cls.app_id, ev->node->cls.uid);
}

int wake_run_new(Core *core, Apps *apps, Stats *stats, WakeRun **ret)
{
        _cleanup_free_ WakeRun *w = NULL;
        WakeConfig c;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->core = core;
        w->apps = apps;
        w->stats = stats;
        config_from(w, &c);
        r = wake_new(&wake_ops, w, &c, &w->queue);
        if (r < 0)
                return r;
        w->links_watch = links_watch_add(core->links, on_links, w, NULL);
        if (w->links_watch == 0) {
                wake_free(w->queue);
                return -ENOMEM;
        }
        w->apps_watch = apps_cgroup_watch_add(apps, on_apps_cgroup, w);
        if (w->apps_watch == 0) {
                links_watch_remove(core->links, w->links_watch);
                wake_free(w->queue);
                return -ENOMEM;
        }
        r = w->part = reconcile_add_part(core->reconcile, &wake_part, w);
        if (r < 0) {
                apps_cgroup_watch_remove(apps, w->apps_watch);
                links_watch_remove(core->links, w->links_watch);
                wake_free(w->queue);
                return r;
        }
        sync_apps(w);
        /* offline until the composition root hands over the global state: wake_run_set_state() */
        r = wake_bus_setup(w);
        if (r < 0)
                log_warning_errno(r, "wake: no bus API: %m");
        reconcile_schedule(core->reconcile);
        *ret = TAKE_PTR(w);
        return 0;
}

WakeRun *wake_run_free(WakeRun *w)
{
        if (!w)
                return NULL;
        reconcile_remove_part(w->core->reconcile, w->part);
        links_watch_remove(w->core->links, w->links_watch);
        apps_cgroup_watch_remove(w->apps, w->apps_watch);
        sd_event_source_disable_unref(w->timer);
        sd_bus_slot_unref(w->manager_slot);
        sd_bus_slot_unref(w->app_slot);
        wake_regs_free(w);
        watch_list_clear(&w->watches);
        opens_free(w);
        /* (the queue's callbacks must not reach the bus or the reconciler any more) */
        w->timer = NULL;
        wake_free(w->queue);
        free(w->installed);
        free(w->pending);
        free(w);
        return NULL;
}

void wake_run_reload(WakeRun *w)
{
        WakeConfig c;

        if (!w)
                return;
        config_from(w, &c);
        wake_set_config(w->queue, &c);
        slow_update(w);
        wake_set_cap(w->queue, c.cap);
        reconcile_schedule(w->core->reconcile);
}
