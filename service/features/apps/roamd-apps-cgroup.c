/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The cgroups the apps govern: each one's app and nftables element (a verdict map per level),
 * what the cgroup tree tells, told first to the apps' cgroup watchers. */
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-apps-internal.h"
#include "roamd-apps.h"
#include "roamd-cgroup.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-nft.h"
#include "roamd-reconcile.h"

unsigned apps_cgroup_watch_add(Apps *a, AppsCgroupFn fn, void *userdata)
{
        return watch_list_add(&a->cgroup_watches, (void *)fn, userdata, NULL);
}

void apps_cgroup_watch_remove(Apps *a, unsigned id)
{
        if (a)
                (void)watch_list_remove(&a->cgroup_watches, id);
}

static void call_cgroup_watch(void *callback, void *userdata, void *ctx)
{
        const AppsCgroupEvent *ev = ctx;

        ((AppsCgroupFn)callback)(ev->apps, ev, userdata);
}

/* ---- cgroups ---- */

CgroupRef *apps_cgroup_ref_find(Apps *a, uint64_t id, size_t *pos)
{
        size_t lo = 0, hi = a->n_refs;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (a->refs[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (pos)
                *pos = lo;
        return lo < a->n_refs && a->refs[lo].id == id ? &a->refs[lo] : NULL;
}

static int levels_with(Apps *a, unsigned level, int delta, bool levels[NFT_LEVEL_MAX])
{
        for (int l = 0; l < NFT_LEVEL_MAX; l++)
                levels[l] = a->level_refs[l] > 0;
        if (level < NFT_LEVEL_MAX)
                levels[level] = (int)a->level_refs[level] + delta > 0;
        return 0;
}

static int app_add_cgroup_ref(App *app, const CgroupNode *n)
{
        AppCgroup *nc = realloc(app->cgroups, sizeof(AppCgroup) * (app->n_cgroups + 1));
        if (!nc)
                return -ENOMEM;
        app->cgroups = nc;
        nc[app->n_cgroups] =
            (AppCgroup){.id = n->id, .level = n->level, .path = strdup(n->path), .uid = n->cls.uid};
        if (!nc[app->n_cgroups].path)
                return -ENOMEM;
        app->n_cgroups++;
        return 0;
}

static void app_del_cgroup_ref(App *app, uint64_t id)
{
        for (size_t i = 0; i < app->n_cgroups; i++)
                if (app->cgroups[i].id == id) {
                        free(app->cgroups[i].path);
                        app->cgroups[i] = app->cgroups[--app->n_cgroups];
                        return;
                }
}

/* An app with nothing to remember: no policy of its own (drop-in or runtime), no grant, no
 * cgroup. Its object is dropped so create/remove cycles of scopes do not grow roamd. */
static bool app_is_unused(const App *app)
{
        return !app->special && app->config.set == 0 && app->runtime.set == 0 &&
               app->online_until == 0 && app->n_cgroups == 0 && !app->grant_timer;
}

static bool app_has_policy(Apps *a, const char *id)
{
        return app_policy_set_find(&a->config_set, id) >= 0 ||
               app_policy_set_find(&a->runtime_set, id) >= 0;
}

/* Apps without a policy of their own that have a cgroup in uid's subtree. */
static size_t apps_of_user(Apps *a, uid_t uid)
{
        size_t n = 0;

        for (size_t i = 0; i < a->n_apps; i++) {
                const App *app = a->apps[i];
                if (app->special || app->config.set != 0 || app->runtime.set != 0)
                        continue;
                for (size_t j = 0; j < app->n_cgroups; j++)
                        if (app->cgroups[j].uid == uid) {
                                n++;
                                break;
                        }
        }
        return n;
}

/* A new app (no object yet, no policy of its own) in uid's subtree when uid already has
 * [Apps] MaxAppsPerUser= of them. Apps with a policy are never refused an object: their
 * policy may be stricter than the user's. */
static bool app_over_user_cap(Apps *a, const char *id, uid_t uid)
{
        if (uid == UID_INVALID || apps_get(a, id) || app_has_policy(a, id))
                return false;
        return apps_of_user(a, uid) >= a->core->config->apps.max_apps_per_user;
}

static void warn_over_cap(Apps *a, const CgroupNode *n)
{
        uint64_t now = clock_now_usec(CLOCK_MONOTONIC);

        /* at most one line per 10 s: a user making scopes in a loop must not flood the log */
        if (a->cap_warned_usec != 0 && now - a->cap_warned_usec < 10 * USEC_PER_SEC) {
                a->cap_suppressed++;
                return;
        }
        log_warning("cgroup %s: user %u already has %u apps without a policy of their own "
                    "([Apps] MaxAppsPerUser=); app %s gets no object and meets the user's "
                    "policy (%u similar messages suppressed).",
                    n->path, (unsigned)n->cls.uid, a->core->config->apps.max_apps_per_user,
                    n->cls.app_id, a->cap_suppressed);
        a->cap_warned_usec = now;
        a->cap_suppressed = 0;
}

/* user:UID, made when new, for a cgroup of that user that is in no app of its own. */
static int user_app(Apps *a, const CgroupNode *n, App **ret)
{
        char id[32];
        int r;

        if (n->cls.uid == UID_INVALID)
                return -EINVAL;
        snprintf(id, sizeof(id), APP_ID_USER_PREFIX "%u", (unsigned)n->cls.uid);
        r = app_get_or_create(a, id, ret);
        if (r < 0)
                return log_warning_errno(r, "cgroup %s: cannot track %s: %m", n->path, id);
        return 0;
}

/* Drops app when it is unused: InterfacesRemoved, then its class loses a user (a class no
 * app uses any more leaves the kernel on the reconciler's pass). */
void app_forget_if_unused(Apps *a, App *app)
{
        size_t pos;

        if (!a->started || !app_is_unused(app))
                return;
        for (pos = 0; pos < a->n_apps && a->apps[pos] != app; pos++)
                ;
        if (pos == a->n_apps)
                return;
        log_debug("app %s: no policy and no cgroup left, forgetting it", app->id);
        (void)apps_bus_retract(app);
        memmove(&a->apps[pos], &a->apps[pos + 1], sizeof(App *) * (a->n_apps - pos - 1));
        a->n_apps--;
        if (app->cls) {
                app->cls->refs--;
                if (app->cls->refs == 0)
                        reconcile_schedule(a->reconcile); /* the pass removes its chain */
        }
        app_user_classes_release(a, app);
        app_free(app);
}

static void on_cgroup_added(Apps *a, const CgroupNode *n)
{
        CgroupRef *nr;
        App *app = NULL;
        size_t pos;
        int r;

        if (n->level == 0)
                return; /* the root always holds the default policy (roamd warns when it runs there)
                         */
        if (n->level >= NFT_LEVEL_MAX) {
                log_warning("cgroup %s is %u levels deep; roamd governs up to %d.", n->path,
                            n->level, NFT_LEVEL_MAX - 1);
                return;
        }
        switch (n->cls.kind) {
        case CGROUP_KIND_APP:
                /* a scope named like a policy ("default", "system", "user") is no app */
                if (app_id_is_special(n->cls.app_id))
                        return;
                /* a user past the cap makes no more objects: the scope meets the user's
                 * policy, which is what an app without a policy of its own gets anyway */
                if (app_over_user_cap(a, n->cls.app_id, n->cls.uid)) {
                        warn_over_cap(a, n);
                        r = user_app(a, n, &app);
                        if (r < 0)
                                return;
                        break;
                }
                r = app_get_or_create(a, n->cls.app_id, &app);
                if (r < 0) {
                        log_warning_errno(r, "cgroup %s: cannot track app %s: %m", n->path,
                                          n->cls.app_id);
                        return;
                }
                break;
        case CGROUP_KIND_SYSTEM:
                app = a->app_system;
                break;
        case CGROUP_KIND_USER:
                /* user-UID.slice and user@UID.service: whatever below them is in no app (a
                 * cgroup the user made and moved into, too) meets the user's policy */
                r = user_app(a, n, &app);
                if (r < 0)
                        return;
                break;
        case CGROUP_KIND_OTHER:
        case _CGROUP_KIND_MAX:
        case _CGROUP_KIND_INVALID:
                return;
        }
        if (apps_cgroup_ref_find(a, n->id, &pos))
                return;
        nr = realloc(a->refs, sizeof(CgroupRef) * (a->n_refs + 1));
        if (!nr)
                return (void)log_oom();
        a->refs = nr;
        memmove(&a->refs[pos + 1], &a->refs[pos], sizeof(CgroupRef) * (a->n_refs - pos));
        a->refs[pos] = (CgroupRef){.id = n->id, .app = app, .level = n->level, .uid = n->cls.uid};
        a->n_refs++;
        if (app_add_cgroup_ref(app, n) < 0)
                return (void)log_oom();
        log_debug("cgroup %s (id %llu, level %u) belongs to %s", n->path, (unsigned long long)n->id,
                  n->level, app->id);

        if (!a->started) {
                a->level_refs[n->level]++;
                a->refs[pos].installed = true; /* the start transaction carries it */
                return;
        }
        /* A cgroup in a user's subtree is that user's instance of the app: the app's policy
         * capped by the user's, a class that may be new. That first, so its element never
         * carries a looser class; it binds this user's instance only. */
        if (!app->special && n->cls.uid != UID_INVALID && app->cls) {
                r = app_reclass(a, app);
                if (r < 0) {
                        /* no element: it meets the user's own policy until the retry */
                        note_refused(a, "cgroup element", r);
                        return;
                }
        }
        if (!app_ref_class(app, n->cls.uid)) {
                /* its class could not be made: the reconciler makes it, then the element */
                reconcile_note_failed(a->reconcile, "app class", -EIO);
                return;
        }
        /* Its element comes with the reconciler's next pass (asynchronous: the loop never
         * waits for the kernel here); done counts it installed once the kernel accepted it.
         * Meanwhile the cgroup meets its parent's policy. Run and a systemd scope's adoption
         * install it at once (apps_cgroup_install()): the caller moves in only then. */
        reconcile_schedule(a->reconcile);
}

int apps_cgroup_install(Apps *a, uint64_t id)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        bool levels[NFT_LEVEL_MAX];
        CgroupRef *ref;
        AppClass *cls;
        int r;

        /* a pass carrying it ends first, when its answer is there */
        reconcile_settle(a->reconcile);
        ref = apps_cgroup_ref_find(a, id, NULL);
        if (!ref || ref->gone)
                return -ENOENT;
        if (ref->installed)
                return 0;
        if (ref->adding)
                return -EBUSY; /* the pass carrying it still awaits the kernel's answer */
        cls = app_ref_class(ref->app, ref->uid);
        if (!cls || !cls->installed)
                return -EIO; /* its class comes first, with the reconciler's pass */
        /* The element, in one transaction with its map if the level is new: the caller
         * waits for it anyway (its process moves in only once governed). */
        r = nft_txn_new(a->nft, &t);
        if (r < 0)
                return r;
        /* found again: a rebuild of the table (nft_txn_new() after an unanswered commit)
         * may have carried it */
        ref = apps_cgroup_ref_find(a, id, NULL);
        if (!ref || ref->gone)
                return -ENOENT;
        if (ref->installed)
                return 0;
        levels_with(a, ref->level, +1, levels);
        r = nft_txn_set_levels(t, levels);
        if (r >= 0)
                r = nft_txn_elem(t, ref->level, ref->id, cls->name, true);
        if (r >= 0)
                r = nft_txn_commit(t);
        if (r < 0) {
                /* Not installed: the reconciler adds it on its next pass. */
                log_error_errno(r, "cgroup %llu: cannot add it to nftables: %m",
                                (unsigned long long)id);
                reconcile_note_failed(a->reconcile, "cgroup element", r);
                return r;
        }
        a->level_refs[ref->level]++;
        ref->installed = true;
        apps_bus_emit_changed(ref->app, "Cgroups", NULL);
        return 0;
}

void apps_cgroup_ref_drop(Apps *a, size_t pos)
{
        CgroupRef ref = a->refs[pos];
        App *app = ref.app;
        int r;

        memmove(&a->refs[pos], &a->refs[pos + 1], sizeof(CgroupRef) * (a->n_refs - pos - 1));
        a->n_refs--;
        app_del_cgroup_ref(app, ref.id);
        if (a->started)
                apps_bus_emit_changed(app, "Cgroups", NULL);
        if (a->started && !app->special && ref.uid != UID_INVALID) {
                /* the user's last cgroup of it: its instance's class goes */
                r = app_reclass(a, app);
                if (r < 0)
                        note_refused(a, "policy of an app whose user's cgroup ended", r);
        }
        app_forget_if_unused(a, app);
}

static void on_cgroup_removed(Apps *a, const CgroupNode *n)
{
        size_t pos;
        CgroupRef *ref = apps_cgroup_ref_find(a, n->id, &pos);

        if (!ref || ref->gone)
                return;
        if (a->started && (ref->installed || ref->adding)) {
                /* Its element leaves with the reconciler's next pass. The bus no longer lists
                 * it; the ref (and the instance's class its element jumps to) stays until
                 * the kernel accepted the removal (done drops it). */
                ref->gone = true;
                for (size_t i = 0; i < ref->app->n_cgroups; i++)
                        if (ref->app->cgroups[i].id == n->id)
                                ref->app->cgroups[i].gone = true;
                apps_bus_emit_changed(ref->app, "Cgroups", NULL);
                reconcile_schedule(a->reconcile);
                return;
        }
        if (ref->installed)
                a->level_refs[ref->level]--;
        apps_cgroup_ref_drop(a, pos);
}

void apps_on_cgroup(CgroupTree *t, CgroupEvent ev, const CgroupNode *n, void *userdata)
{
        Apps *a = userdata;

        /* The pass in flight ends first: its done counts the cgroups' elements it carried,
         * and must not see one this event adds or removes (nor race its own commit). */
        reconcile_settle(a->reconcile);

        /* the usage counters first: a removed cgroup's last bytes are read before it goes */
        watch_list_notify(
            &a->cgroup_watches, call_cgroup_watch,
            &(AppsCgroupEvent){
                .apps = a, .event = ev, .node = n, .nft = a->nft, .started = a->started});

        switch (ev) {
        case CGROUP_EVENT_ADDED:
                on_cgroup_added(a, n);
                break;
        case CGROUP_EVENT_REMOVED:
                on_cgroup_removed(a, n);
                break;
        case _CGROUP_EVENT_MAX:
        case _CGROUP_EVENT_INVALID:
                break;
        }
}

CgroupTree *apps_cgroups(Apps *a)
{
        return a->cgroups;
}
