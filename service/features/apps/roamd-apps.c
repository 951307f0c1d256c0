/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "roam-bus-name.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roamd-app-id.h"
#include "roamd-apps.h"
#include "roamd-cgroup.h"
#include "roamd-class.h"
#include "roamd-coexist.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-netlink.h"
#include "roamd-nft.h"
#include "roamd-portal.h"
#include "roamd-reconcile.h"
#include "roamd-route.h"

struct AppClass {
        char name[NFT_CLASS_NAME_MAX];
        AppPolicy key;  /* the policy as enforced (access allow while online for a task) */
        bool system;    /* the system policy: never routed by mark */
        bool portal;    /* the portal-login app's: pinned to the captive link */
        unsigned refs;  /* apps in this class */
        bool installed; /* its chain exists in the kernel */
        NftClass spec;  /* what the chain holds */
        int route[2];   /* ifindex new flows take per family, 0 none */
        AppState state;
        int state_link, state_verdict; /* APP_STATE_VIA_NOT_ONLINE: which link, its verdict */
};

typedef struct CgroupRef {
        uint64_t id;
        App *app;
        unsigned level;
        bool installed;
} CgroupRef;

struct Apps {
        Core *core;
        Portal *portal;           /* its login link's traffic gets a class of its own */
        WatchList cgroup_watches; /* told of each cgroup event first */
        NftEngine *nft;
        RouteTables *routes;
        CgroupTree *cgroups;
        bool started;

        App **apps; /* sorted by id */
        size_t n_apps;
        App *app_default, *app_system, *app_user;
        AppClass **classes;
        size_t n_classes;
        unsigned class_counter;
        CgroupRef *refs; /* sorted by id */
        size_t n_refs;
        unsigned level_refs[NFT_LEVEL_MAX];
        uint64_t root_id;

        AppPolicySet config_set, runtime_set;
        char *installed_sets;     /* text form of lan, vpn ifaces, vpn dns as last installed */
        RunRequest *runs;         /* `roam run` calls waiting for systemd */
        BusNameWatch *systemd;    /* whether systemd's manager is on the bus */
        Reconcile *reconcile;     /* the manager's: passes, retries, the Degraded reason */
        struct ApplyPass *pass;   /* between the pass's sync and done */
        CoexistReport coexist;    /* others' mark bits inside our mask */
        uint64_t cap_warned_usec; /* the last MaxAppsPerUser= warning (CLOCK_MONOTONIC) */
        unsigned cap_suppressed;  /* warnings left out since */
        sd_bus_slot *app_slot, *app_enum_slot;
};

static const AppPolicy NO_KEYS = {.set = 0};

bool apps_systemd_on_bus(Apps *a)
{
        return bus_name_watch_has_owner(a->systemd);
}

RunRequest **apps_runs(Apps *a)
{
        return &a->runs;
}

sd_bus_slot **apps_slot(Apps *a, bool enumerator)
{
        return enumerator ? &a->app_enum_slot : &a->app_slot;
}

Core *apps_core(Apps *a)
{
        return a->core;
}

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

/* ---- apps ---- */

static int app_cmp(const void *k, const void *e)
{
        return strcmp(k, (*(App *const *)e)->id);
}

App *apps_get(Apps *a, const char *id)
{
        App **p;

        if (!id || a->n_apps == 0)
                return NULL;
        p = bsearch(id, a->apps, a->n_apps, sizeof(App *), app_cmp);
        return p ? *p : NULL;
}

size_t apps_count(Apps *a)
{
        return a->n_apps;
}

App *apps_nth(Apps *a, size_t i)
{
        return i < a->n_apps ? a->apps[i] : NULL;
}

static App *app_free(App *app)
{
        if (!app)
                return NULL;
        sd_event_source_disable_unref(app->grant_timer);
        for (size_t i = 0; i < app->n_cgroups; i++)
                free(app->cgroups[i].path);
        free(app->cgroups);
        free(app->route[0]);
        free(app->route[1]);
        free(app->state_text);
        free(app->path);
        free(app->id);
        free(app);
        return NULL;
}

/* The login browser of a captive portal (docs/portal.md): a class of its own. */
static bool app_is_portal_login(const App *app)
{
        return streq(app->id, ROAM_APP_PORTAL_LOGIN);
}

/* The cap of uid's processes: built-in, then the keys of "user", then of "user:UID". Read
 * from the policy sets, so it is known whether or not an object exists for it. */
static void user_cap(Apps *a, uid_t uid, AppPolicy *ret)
{
        char id[32];
        int k;

        app_policy_init_builtin(ret);
        snprintf(id, sizeof(id), APP_ID_USER_PREFIX "%u", (unsigned)uid);
        const AppPolicySet *sets[] = {&a->config_set, &a->runtime_set};
        const char *ids[] = {APP_ID_USER, id};

        for (size_t i = 0; i < ELEMENTSOF(ids); i++) {
                /* the object's keys are the current ones (a change reclasses before it is
                 * saved to the set) */
                const App *x = apps_get(a, ids[i]);
                if (x) {
                        app_policy_layer(ret, &x->config);
                        app_policy_layer(ret, &x->runtime);
                        continue;
                }
                for (size_t j = 0; j < ELEMENTSOF(sets); j++) {
                        k = app_policy_set_find(sets[j], ids[i]);
                        if (k >= 0)
                                app_policy_layer(ret, &sets[j]->entries[k].policy);
                }
        }
        ret->set = APP_KEY_ALL;
}

/* p, never looser than cap: the stricter access, VPN and bearers of the two. Where the two
 * cannot both hold (bearers with nothing in common, vpn required and forbidden), nothing is
 * allowed. */
static void policy_cap(AppPolicy *p, const AppPolicy *cap)
{
        if (cap->access == APP_ACCESS_DENY ||
            (cap->access == APP_ACCESS_LAN && p->access == APP_ACCESS_ALLOW))
                p->access = cap->access;
        if (cap->bearers != 0) {
                uint32_t b = p->bearers != 0 ? p->bearers & cap->bearers : cap->bearers;
                if (b == 0)
                        p->access = APP_ACCESS_DENY;
                else
                        p->bearers = b;
        }
        if (cap->vpn != APP_VPN_ANY) {
                if (p->vpn != APP_VPN_ANY && p->vpn != cap->vpn)
                        p->access = APP_ACCESS_DENY;
                else
                        p->vpn = cap->vpn;
        }
}

/* p capped by every user whose subtree holds a cgroup of app (a scope name there is the
 * user's choice, so it is honoured only as far as the user's policy allows). */
static void app_cap_by_users(Apps *a, const App *app, AppPolicy *p)
{
        for (size_t i = 0; i < app->n_cgroups; i++) {
                uid_t uid = app->cgroups[i].uid;
                bool seen = false;
                AppPolicy cap;

                if (uid == UID_INVALID)
                        continue;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = app->cgroups[j].uid == uid;
                if (seen)
                        continue;
                user_cap(a, uid, &cap);
                policy_cap(p, &cap);
        }
}

static void app_compute_effective(Apps *a, App *app)
{
        app_policy_init_builtin(&app->own);
        /* Apps without a rule of their own follow the default policy's keys, so a strict
         * default also covers apps nobody configured yet. The login browser is roam's own
         * app, let out by the user's approval of a portal: only its own keys apply (a deny
         * of its own still refuses it), or a strict default would leave no way to log in. */
        if (!app->special && a->app_default && !app_is_portal_login(app)) {
                app_policy_layer(&app->own, &a->app_default->config);
                app_policy_layer(&app->own, &a->app_default->runtime);
        }
        /* one user's policy layers over the one for every user */
        if (app_id_user_uid(app->id, NULL) && a->app_user) {
                app_policy_layer(&app->own, &a->app_user->config);
                app_policy_layer(&app->own, &a->app_user->runtime);
        }
        app_policy_layer(&app->own, &app->config);
        app_policy_layer(&app->own, &app->runtime);
        app->own.set |= APP_KEY_ALL; /* the wake keys stay unset unless a layer set them */
        app->effective = app->own;
        if (!app->special)
                app_cap_by_users(a, app, &app->effective);
}

int app_get_or_create(Apps *a, const char *id, App **ret)
{
        App *app, **n;
        size_t pos = 0;
        int r;

        app = apps_get(a, id);
        if (app) {
                *ret = app;
                return 0;
        }
        if (!app_policy_id_is_valid(id))
                return -EINVAL;
        app = calloc(1, sizeof(*app));
        if (!app)
                return -ENOMEM;
        app->apps = a;
        app->id = strdup(id);
        app->special = app_id_is_special(id);
        app->state = APP_STATE_ONLINE;
        r = sd_bus_path_encode(ROAM_APP_PATH_PREFIX, id, &app->path);
        if (!app->id || r < 0) {
                app_free(app);
                return -ENOMEM;
        }
        int k = app_policy_set_find(&a->config_set, id);
        if (k >= 0)
                app->config = a->config_set.entries[k].policy;
        k = app_policy_set_find(&a->runtime_set, id);
        if (k >= 0)
                app->runtime = a->runtime_set.entries[k].policy;
        app_compute_effective(a, app);

        n = realloc(a->apps, sizeof(App *) * (a->n_apps + 1));
        if (!n) {
                app_free(app);
                return -ENOMEM;
        }
        a->apps = n;
        while (pos < a->n_apps && strcmp(a->apps[pos]->id, id) < 0)
                pos++;
        memmove(&a->apps[pos + 1], &a->apps[pos], sizeof(App *) * (a->n_apps - pos));
        a->apps[pos] = app;
        a->n_apps++;
        if (a->started) {
                (void)apps_bus_announce(app);
                r = app_reclass(a, app);
                if (r < 0)
                        log_warning_errno(r, "app %s: cannot install its class: %m", id);
        }
        *ret = app;
        return 1;
}

/* ---- classes ---- */

static void app_class_key(App *app, AppPolicy *key, bool *system)
{
        Apps *a = app->apps;

        *key = app->own;
        if (app->online_until != 0)
                key->access = APP_ACCESS_ALLOW; /* online for a task; the VPN rule stays */
        /* never looser than its users' policies, a grant included */
        if (!app->special)
                app_cap_by_users(a, app, key);
        /* A user's processes in no app: the default policy, capped by the user's. */
        if (app_id_user_uid(app->id, NULL) && a->app_default) {
                AppPolicy cap = *key;
                *key = a->app_default->effective;
                policy_cap(key, &cap);
        }
        *system = app == app->apps->app_system;
        if (*system) {
                /* The system policy has only an access: its traffic is routed by main. */
                key->bearers = 0;
                key->vpn = APP_VPN_ANY;
                key->handover = APP_HANDOVER_STICKY;
        }
}

static bool class_key_equal(const AppClass *c, const AppPolicy *key, bool system, bool portal)
{
        return c->system == system && c->portal == portal && c->key.access == key->access &&
               c->key.bearers == key->bearers && c->key.vpn == key->vpn &&
               c->key.handover == key->handover;
}

static AppClass *class_find(Apps *a, const AppPolicy *key, bool system, bool portal)
{
        for (size_t i = 0; i < a->n_classes; i++)
                if (class_key_equal(a->classes[i], key, system, portal))
                        return a->classes[i];
        return NULL;
}

static int class_new(Apps *a, const AppPolicy *key, bool system, bool portal, AppClass **ret)
{
        AppClass *c, **n;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        n = realloc(a->classes, sizeof(AppClass *) * (a->n_classes + 1));
        if (!n) {
                free(c);
                return -ENOMEM;
        }
        a->classes = n;
        c->key = *key;
        c->system = system;
        c->portal = portal;
        snprintf(c->name, sizeof(c->name), "%s%u", system ? "system_" : "class_",
                 ++a->class_counter);
        a->classes[a->n_classes++] = c;
        *ret = c;
        return 0;
}

static void class_drop(Apps *a, AppClass *c)
{
        for (size_t i = 0; i < a->n_classes; i++)
                if (a->classes[i] == c) {
                        a->classes[i] = a->classes[--a->n_classes];
                        free(c);
                        return;
                }
}

/* The snapshot the class compiler works on: every link with its bearer, verdicts, ready
 * routing slot and default metrics. */
static int class_world_build(Apps *a, ClassWorld *w, ClassLink **ret_links)
{
        Core *c = a->core;
        ClassLink *links = calloc(c->links->n_links + 1, sizeof(ClassLink));

        if (!links)
                return -ENOMEM;
        for (size_t i = 0; i < c->links->n_links; i++) {
                Link *l = c->links->links[i];
                links[i] = (ClassLink){
                    .ifindex = l->ifindex,
                    .bearer = l->bearer,
                    .verdict = {(int)l->verdict4.verdict, (int)l->verdict6.verdict},
                    .slot = route_tables_slot(a->routes, l->ifindex),
                    .metric = {route_tables_default_metric(a->routes, l->ifindex, AF_INET),
                               route_tables_default_metric(a->routes, l->ifindex, AF_INET6)},
                };
        }
        *w = (ClassWorld){
            .links = links,
            .n_links = c->links->n_links,
            .main_default = {route_tables_main_default(a->routes, AF_INET),
                             route_tables_main_default(a->routes, AF_INET6)},
            .vpn_link = route_tables_vpn_link(a->routes),
            .vpn_carries = {route_tables_vpn_carries(a->routes, AF_INET),
                            route_tables_vpn_carries(a->routes, AF_INET6)},
            .vpn_slot = nft_slot_vpn(nft_engine_mask(a->nft)),
            .portal_link = portal_login_link(a->portal),
            .prefer_online = c->config->apps.prefer_online,
        };
        *ret_links = links;
        return 0;
}

static void class_compute(const ClassWorld *w, AppClass *c, NftClass *ret)
{
        ClassResult res;

        if (c->portal)
                class_compile_portal_login(&c->key, w, &res);
        else
                class_compile(&c->key, c->system, w, &res);
        *ret = res.spec;
        c->route[0] = res.route[0];
        c->route[1] = res.route[1];
        c->state = res.state;
        c->state_link = res.state_link;
        c->state_verdict = res.state_verdict;
}

static int class_ensure(Apps *a, App *app, NftTxn *t, AppClass **ret)
{
        AppPolicy key;
        bool system;
        AppClass *c;
        int r;

        app_class_key(app, &key, &system);
        c = class_find(a, &key, system, app_is_portal_login(app));
        if (c) {
                *ret = c;
                return 0;
        }
        r = class_new(a, &key, system, app_is_portal_login(app), &c);
        if (r < 0)
                return r;
        ClassWorld w;
        _cleanup_free_ ClassLink *links = NULL;
        r = class_world_build(a, &w, &links);
        if (r < 0) {
                class_drop(a, c);
                return r;
        }
        class_compute(&w, c, &c->spec);
        if (t) {
                r = nft_txn_put_class(t, c->name, &c->spec, false);
                if (r < 0) {
                        class_drop(a, c);
                        return r;
                }
        }
        *ret = c;
        return 1;
}

/* ---- app state as seen on the bus ---- */

/* The one place an app's state changes: logs old -> new; true when it changed (the caller
 * emits PropertiesChanged with its other changes). */
static bool app_set_state(App *app, AppState state, const char *text)
{
        char *t;

        if (app->state == state && streq(strempty(app->state_text), text))
                return false;
        t = strdup(text);
        if (!t) {
                log_oom();
                return false;
        }
        log_info("app %s: %s -> %s", app->id, strempty(app->state_text), text);
        app->state = state;
        free(app->state_text);
        app->state_text = t;
        return true;
}

void app_refresh(App *app, bool emit)
{
        Apps *a = app->apps;
        const char *changed[4];
        _cleanup_free_ char *via = NULL;
        const char *text;
        size_t n = 0;

        for (int f = 0; f < 2; f++) {
                Link *l = app->cls && app->cls->route[f]
                              ? links_get(a->core->links, app->cls->route[f])
                              : NULL;
                const char *name = l ? l->info.name : NULL;
                if (!streq(strempty(name), strempty(app->route[f]))) {
                        free(app->route[f]);
                        app->route[f] = name ? strdup(name) : NULL;
                        changed[n++] = f ? "Route6" : "Route4";
                }
        }
        AppState state = app->cls ? app->cls->state : APP_STATE_ONLINE;
        if (state == APP_STATE_ONLINE && app->online_until != 0 &&
            app->effective.access != APP_ACCESS_ALLOW && app->cls &&
            app->cls->spec.kind == NFT_CLASS_ROUTE && (app->cls->route[0] || app->cls->route[1]))
                state = APP_STATE_ONLINE_FOR_TASK;
        text = app_state_to_string(state);
        if (state == APP_STATE_VIA_NOT_ONLINE) {
                /* the link and its verdict, as the words table says them */
                Link *l = links_get(a->core->links, app->cls->state_link);
                via = roam_app_state_via((RoamVerdict)app->cls->state_verdict,
                                         l ? l->info.name : NULL);
                if (via)
                        text = via;
        }
        if (app_set_state(app, state, text))
                changed[n++] = "State";
        if (emit && n > 0)
                apps_bus_emit_changed(app, n > 0 ? changed[0] : NULL, n > 1 ? changed[1] : NULL,
                                      n > 2 ? changed[2] : NULL, NULL);
}

static void emit_policy(App *app);

/* ---- cgroups ---- */

static CgroupRef *ref_find(Apps *a, uint64_t id, size_t *pos)
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
        app_free(app);
}

static void on_cgroup_added(Apps *a, const CgroupNode *n)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        bool levels[NFT_LEVEL_MAX];
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
        if (ref_find(a, n->id, &pos))
                return;
        nr = realloc(a->refs, sizeof(CgroupRef) * (a->n_refs + 1));
        if (!nr)
                return (void)log_oom();
        a->refs = nr;
        memmove(&a->refs[pos + 1], &a->refs[pos], sizeof(CgroupRef) * (a->n_refs - pos));
        a->refs[pos] = (CgroupRef){.id = n->id, .app = app, .level = n->level};
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
        /* A cgroup in a user's subtree may tighten the app's policy: that first, so its
         * element never carries a looser class. */
        if (!app->special && n->cls.uid != UID_INVALID && app->cls) {
                AppPolicy before = app->effective;
                app_compute_effective(a, app);
                r = app_reclass(a, app);
                if (!app_policy_equal(&before, &app->effective))
                        emit_policy(app);
                if (r < 0) {
                        /* no element: it meets the user's own policy until the retry */
                        note_refused(a, "cgroup element", r);
                        return;
                }
        }
        if (!app->cls) {
                /* its class could not be made: the reconciler makes it, then the element */
                reconcile_note_failed(a->reconcile, "app class", -EIO);
                return;
        }
        /* The element first, in one transaction with its map if the level is new. */
        r = nft_txn_new(a->nft, &t);
        if (r >= 0) {
                levels_with(a, n->level, +1, levels);
                r = nft_txn_set_levels(t, levels);
        }
        if (r >= 0)
                r = nft_txn_elem(t, n->level, n->id, app->cls->name, true);
        if (r >= 0)
                r = nft_txn_commit(t);
        if (r < 0) {
                /* Not installed: the reconciler adds it on its next pass. */
                log_error_errno(r, "cgroup %s: cannot add it to nftables: %m", n->path);
                reconcile_note_failed(a->reconcile, "cgroup element", r);
                return;
        }
        a->level_refs[n->level]++;
        ref_find(a, n->id, NULL)->installed = true;
        apps_bus_emit_changed(app, "Cgroups", NULL);
}

static void on_cgroup_removed(Apps *a, const CgroupNode *n)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        bool levels[NFT_LEVEL_MAX];
        size_t pos;
        CgroupRef *ref = ref_find(a, n->id, &pos);
        App *app;
        int r = 0;

        if (!ref)
                return;
        app = ref->app;
        if (ref->installed && a->started) {
                r = nft_txn_new(a->nft, &t);
                if (r >= 0)
                        r = nft_txn_elem(t, ref->level, ref->id, NULL, false);
                if (r >= 0) {
                        levels_with(a, ref->level, -1, levels);
                        r = nft_txn_set_levels(t, levels);
                }
                if (r >= 0)
                        r = nft_txn_commit(t);
                if (r < 0)
                        log_warning_errno(r, "cgroup %s: cannot remove it from nftables: %m",
                                          n->path);
        }
        if (ref->installed && r >= 0)
                a->level_refs[ref->level]--;
        memmove(&a->refs[pos], &a->refs[pos + 1], sizeof(CgroupRef) * (a->n_refs - pos - 1));
        a->n_refs--;
        app_del_cgroup_ref(app, n->id);
        if (a->started)
                apps_bus_emit_changed(app, "Cgroups", NULL);
        if (a->started && !app->special && n->cls.uid != UID_INVALID) {
                AppPolicy before = app->effective;
                app_compute_effective(a, app);
                if (!app_policy_equal(&before, &app->effective))
                        emit_policy(app);
                r = app_reclass(a, app);
                if (r < 0)
                        note_refused(a, "policy of an app whose user's cgroup ended", r);
        }
        app_forget_if_unused(a, app);
}

static void on_cgroup(CgroupTree *t, CgroupEvent ev, const CgroupNode *n, void *userdata)
{
        Apps *a = userdata;

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

/* ---- links: routing tables, sets, class chains ---- */

/* Everything add_sets() puts in the kernel, as text: the sets are rewritten only when it
 * changes. Built in one pass (this runs on every sync). */
static int sets_text(Apps *a, char **ret)
{
        Core *c = a->core;
        int vpn = route_tables_vpn_link(a->routes);
        const NftPrefix *on;
        const uint32_t *slots;
        size_t n_on, n_slots, size = 0;
        char *buf = NULL;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < c->links->n_links; i++) {
                Link *l = c->links->links[i];
                if (l->bearer == BEARER_VPN)
                        fprintf(f, "vpnif=%d;", l->ifindex);
                for (size_t k = 0; l->ifindex == vpn && k < l->info.n_dns; k++)
                        fprintf(f, "dns=%s;", l->info.dns[k].text);
        }
        on = route_tables_onlink(a->routes, &n_on);
        for (size_t i = 0; i < n_on; i++) {
                char addr[INET6_ADDRSTRLEN] = "";
                inet_ntop(on[i].family, &on[i].addr, addr, sizeof(addr));
                fprintf(f, "on=%s/%u;", addr, on[i].prefixlen);
        }
        slots = route_tables_slots(a->routes, &n_slots);
        for (size_t i = 0; i < n_slots; i++)
                if (slots[i])
                        fprintf(f, "slot%zu=%u;", i, slots[i]);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        return 0;
}

static int add_sets(Apps *a, NftTxn *t)
{
        Core *c = a->core;
        _cleanup_free_ NftPrefix *pfx = NULL;
        _cleanup_free_ uint32_t *vpnifs = NULL;
        size_t n_pfx = 0, n_vpn = 0, cap = 8;
        struct in_addr dns4;
        struct in6_addr dns6;
        bool have4 = false, have6 = false;
        const char *fixed[] = {"169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32", "fe80::/10",
                               "ff00::/8"};
        int r;

        pfx = calloc(cap, sizeof(NftPrefix));
        vpnifs = calloc(c->links->n_links + 1, sizeof(uint32_t));
        if (!pfx || !vpnifs)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                char buf[64], *slash;
                snprintf(buf, sizeof(buf), "%s", fixed[i]);
                slash = strchr(buf, '/');
                *slash = 0;
                pfx[n_pfx].family = strchr(buf, ':') ? AF_INET6 : AF_INET;
                pfx[n_pfx].prefixlen = (unsigned)atoi(slash + 1);
                inet_pton(pfx[n_pfx].family, buf, &pfx[n_pfx].addr);
                n_pfx++;
        }
        for (size_t i = 0; i < c->links->n_links; i++)
                if (c->links->links[i]->bearer == BEARER_VPN)
                        vpnifs[n_vpn++] = (uint32_t)c->links->links[i]->ifindex;
        /* Local networks: the on-link prefixes of the main table (a VPN's are remote). */
        size_t n_on;
        const NftPrefix *on = route_tables_onlink(a->routes, &n_on);
        NftPrefix *np = realloc(pfx, sizeof(NftPrefix) * (n_pfx + n_on + 1));
        if (!np)
                return -ENOMEM;
        pfx = np;
        memcpy(&pfx[n_pfx], on, sizeof(NftPrefix) * n_on);
        n_pfx += n_on;
        int vpn = route_tables_vpn_link(a->routes);
        Link *vl = vpn ? links_get(c->links, vpn) : NULL;
        for (size_t k = 0; vl && k < vl->info.n_dns; k++) {
                if (vl->info.dns[k].family == AF_INET && !have4)
                        have4 = inet_pton(AF_INET, vl->info.dns[k].text, &dns4) == 1;
                if (vl->info.dns[k].family == AF_INET6 && !have6)
                        have6 = inet_pton(AF_INET6, vl->info.dns[k].text, &dns6) == 1;
        }
        size_t ns;
        const uint32_t *slots = route_tables_slots(a->routes, &ns);
        if ((r = nft_txn_set_lan(t, AF_INET, pfx, n_pfx)) < 0 ||
            (r = nft_txn_set_lan(t, AF_INET6, pfx, n_pfx)) < 0 ||
            (r = nft_txn_set_vpn_ifaces(t, vpnifs, n_vpn)) < 0 ||
            (r = nft_txn_set_slots(t, slots, ns)) < 0 ||
            (r = nft_txn_set_vpn_dns(t, have4 ? &dns4 : NULL, have6 ? &dns6 : NULL)) < 0)
                return r;
        return 0;
}

static int route_sync(Apps *a)
{
        Core *c = a->core;
        _cleanup_free_ RouteLinkInput *in = calloc(c->links->n_links + 1, sizeof(RouteLinkInput));

        if (!in)
                return -ENOMEM;
        for (size_t i = 0; i < c->links->n_links; i++) {
                Link *l = c->links->links[i];
                in[i].ifindex = l->ifindex;
                in[i].usable = l->bearer != BEARER_VIRTUAL && l->info.carrier &&
                               (link_has_global(l, AF_INET) || link_has_global(l, AF_INET6));
                in[i].vpn = l->bearer == BEARER_VPN;
                in[i].global4 = link_has_global(l, AF_INET);
                in[i].global6 = link_has_global(l, AF_INET6);
        }
        return route_tables_sync(a->routes, in, c->links->n_links);
}

/* Refs the kernel does not have yet (a failed add): their elements, with their apps'
 * classes, in t. Returns how many. */
static int add_pending_refs(Apps *a, NftTxn *t, bool levels[NFT_LEVEL_MAX])
{
        int n = 0, r;

        for (int l = 0; l < NFT_LEVEL_MAX; l++)
                levels[l] = a->level_refs[l] > 0;
        for (size_t i = 0; i < a->n_refs; i++)
                if (!a->refs[i].installed && a->refs[i].app->cls && a->refs[i].app->cls->installed)
                        levels[a->refs[i].level] = true;
        r = nft_txn_set_levels(t, levels);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_refs; i++) {
                CgroupRef *ref = &a->refs[i];
                if (ref->installed || !ref->app->cls || !ref->app->cls->installed)
                        continue;
                r = nft_txn_elem(t, ref->level, ref->id, ref->app->cls->name, true);
                if (r < 0)
                        return r;
                n++;
        }
        return n;
}

static int apps_reclass(Apps *a, App **apps, size_t n);

/* Moves the apps whose class is missing or whose move the kernel refused. On failure *what
 * names the first ("policy of app X", or "app class" for one without a class yet), so
 * Degraded keeps naming what waits. */
static int reclass_pending(Apps *a, char **what)
{
        _cleanup_free_ App **pending = calloc(a->n_apps + 1, sizeof(App *));
        size_t n = 0;
        int r;

        if (!pending)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_apps; i++)
                if (!a->apps[i]->cls || a->apps[i]->reclass_pending)
                        pending[n++] = a->apps[i];
        r = n > 0 ? apps_reclass(a, pending, n) : 0;
        if (r < 0 && pending[0]->cls && asprintf(what, "policy of app %s", pending[0]->id) < 0)
                *what = NULL;
        return r;
}

typedef struct ClassSaved {
        int route[2];
        AppState state;
        int state_link, state_verdict;
} ClassSaved;

/* What the pass's sync computed, for its done. */
typedef struct ApplyPass {
        char *sets; /* the sets' text, when they were rewritten */
        NftClass *specs;
        ClassSaved *saved;
        size_t n_classes;
        int n_pending;
} ApplyPass;

static ApplyPass *apply_pass_free(ApplyPass *p)
{
        if (!p)
                return NULL;
        free(p->sets);
        free(p->specs);
        free(p->saved);
        free(p);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(ApplyPass *, apply_pass_free);

/* The apps' part of a pass (the reconciler runs it: roamd-reconcile.c). Before the
 * transaction: apps whose class could not be made earlier get one, apps whose move the
 * kernel refused are moved (own transaction), and the routes and rules the links call for
 * are added. */
static void part_prepare(void *userdata, Reconcile *rc)
{
        Apps *a = userdata;
        _cleanup_free_ char *what = NULL;
        int r;

        if (!a->started)
                return;
        r = reclass_pending(a, &what);
        if (r < 0)
                reconcile_failed(rc, what ?: "app class", r);
        r = route_sync(a);
        if (r < 0)
                reconcile_failed(rc, "routes and ip rules", r);
}

/* Into the pass's transaction: sets, class chains whose contents changed, pending cgroup
 * elements. */
static int part_sync(void *userdata, NftTxn *t)
{
        Apps *a = userdata;
        _cleanup_free_ ClassLink *world_links = NULL;
        ClassWorld world;
        bool levels[NFT_LEVEL_MAX];
        ApplyPass *p;
        int r;

        if (!a->started)
                return 0;
        a->pass = apply_pass_free(a->pass);
        p = a->pass = calloc(1, sizeof(ApplyPass));
        if (!p)
                return -ENOMEM;
        if (sets_text(a, &p->sets) >= 0 && !streq(p->sets, strempty(a->installed_sets))) {
                r = add_sets(a, t);
                if (r < 0)
                        return r;
        } else {
                free(p->sets);
                p->sets = NULL;
        }
        p->specs = calloc(a->n_classes + 1, sizeof(NftClass));
        p->saved = calloc(a->n_classes + 1, sizeof(ClassSaved));
        if (!p->specs || !p->saved)
                return -ENOMEM;
        r = class_world_build(a, &world, &world_links);
        if (r < 0)
                return r;
        p->n_classes = a->n_classes;
        for (size_t i = 0; i < a->n_classes; i++) {
                AppClass *c = a->classes[i];
                p->saved[i] = (ClassSaved){
                    {c->route[0], c->route[1]}, c->state, c->state_link, c->state_verdict};
                /* no app uses it any more (its last one was forgotten): its chain goes */
                if (c->refs == 0) {
                        if (r >= 0 && c->installed)
                                r = nft_txn_del_class(t, c->name);
                        continue;
                }
                class_compute(&world, c, &p->specs[i]);
                if (r >= 0 && memcmp(&p->specs[i], &c->spec, sizeof(NftClass)) != 0)
                        r = nft_txn_put_class(t, c->name, &p->specs[i], c->installed);
        }
        if (r < 0)
                return r;
        p->n_pending = add_pending_refs(a, t, levels);
        return p->n_pending < 0 ? p->n_pending : 0;
}

static void installed_full(Apps *a);

/* After the commit: what was committed counts as installed and what is no longer used is
 * removed; after a failure the last good state stays in force (nothing is removed before
 * nftables stopped using it). */
static void part_done(void *userdata, Reconcile *rc, int result, bool full)
{
        Apps *a = userdata;
        _cleanup_(apply_pass_freep) ApplyPass *p = TAKE_PTR(a->pass);
        int r;

        if (full) {
                if (result >= 0)
                        installed_full(a);
                return;
        }
        if (!a->started)
                return;
        if (result < 0) {
                for (size_t i = 0; p && p->saved && i < MIN(p->n_classes, a->n_classes); i++) {
                        a->classes[i]->route[0] = p->saved[i].route[0];
                        a->classes[i]->route[1] = p->saved[i].route[1];
                        a->classes[i]->state = p->saved[i].state;
                        a->classes[i]->state_link = p->saved[i].state_link;
                        a->classes[i]->state_verdict = p->saved[i].state_verdict;
                }
                return;
        }
        for (size_t i = 0; i < MIN(p->n_classes, a->n_classes); i++) {
                a->classes[i]->spec = p->specs[i];
                a->classes[i]->installed = true;
        }
        for (size_t i = 0; i < a->n_classes;)
                if (a->classes[i]->refs == 0)
                        class_drop(a, a->classes[i]); /* swaps the last into i */
                else
                        i++;
        if (p->n_pending > 0)
                for (size_t i = 0; i < a->n_refs; i++) {
                        CgroupRef *ref = &a->refs[i];
                        if (ref->installed || !ref->app->cls)
                                continue;
                        ref->installed = true;
                        a->level_refs[ref->level]++;
                        apps_bus_emit_changed(ref->app, "Cgroups", NULL);
                }
        if (p->sets) {
                free(a->installed_sets);
                a->installed_sets = TAKE_PTR(p->sets);
        }
        r = route_tables_prune(a->routes);
        if (r < 0)
                reconcile_failed(rc, "removing old routes and ip rules", r);
        for (size_t i = 0; i < a->n_apps; i++)
                app_refresh(a->apps[i], true);
}

/* Reads everybody else's use of the packet mark and reports what overlaps ours. */
static void coexist_check(Apps *a)
{
        uint32_t mask = a->core->config->apps.mark_mask;
        CoexistReport rep;
        int r;

        r = coexist_scan(mask, a->core->config->apps.rule_priority, &rep);
        if (r < 0) {
                log_warning_errno(r, "Cannot read the ruleset and ip rules for mark conflicts: %m");
                return;
        }
        STRV_FOREACH (c, rep.conflicts)
                log_warning("Mark conflict: %s, inside FirewallMask=0x%08x.", *c, mask);
        if (rep.conflicts && rep.suggest)
                log_warning("FirewallMask=0x%08x is free of every other user's bits: set it in "
                            "[Routing] of roamd.conf.",
                            rep.suggest);
        else if (rep.conflicts)
                log_warning("No free mask as wide as 0x%08x is left.", mask);
        bool changed =
            !strv_equal(rep.conflicts, a->coexist.conflicts) || rep.suggest != a->coexist.suggest;
        coexist_report_done(&a->coexist);
        a->coexist = rep;
        if (changed && a->started)
                core_emit_manager_changed(a->core, "MarkConflicts", "FirewallMaskSuggestion", NULL);
}

char **apps_mark_conflicts(Apps *a)
{
        return a ? a->coexist.conflicts : NULL;
}

uint32_t apps_mask_suggestion(Apps *a)
{
        return a ? a->coexist.suggest : 0;
}

/* ---- policy changes ---- */

typedef struct Move {
        App *app;
        AppClass *to;
} Move;

/* Moves every app of apps[] to the class its current effective policy and grant call for, in
 * ONE transaction (a change of the default policy moves many apps at once). On failure
 * nothing changed in the kernel and every app keeps its class. */
static int apps_reclass(Apps *a, App **apps, size_t n)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        _cleanup_free_ Move *moves = calloc(n + 1, sizeof(Move));
        _cleanup_free_ AppClass **created = calloc(n + 1, sizeof(AppClass *));
        size_t n_moves = 0, n_created = 0;
        int r;

        if (!moves || !created)
                return -ENOMEM;
        r = nft_txn_new(a->nft, &t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                App *app = apps[i];
                AppClass *c = NULL;
                int k = class_ensure(a, app, t, &c);

                if (k < 0) {
                        r = k;
                        break;
                }
                if (k > 0)
                        created[n_created++] = c;
                if (c == app->cls)
                        continue;
                moves[n_moves++] = (Move){app, c};
                for (size_t j = 0; j < app->n_cgroups && r >= 0; j++) {
                        CgroupRef *ref = ref_find(a, app->cgroups[j].id, NULL);
                        /* a cgroup the kernel does not have yet gets its element from the
                         * reconciler, with the class the app has then */
                        if (!ref || !ref->installed)
                                continue;
                        r = nft_txn_elem(t, app->cgroups[j].level, app->cgroups[j].id, NULL, false);
                        if (r >= 0)
                                r = nft_txn_elem(t, app->cgroups[j].level, app->cgroups[j].id,
                                                 c->name, true);
                }
                if (r >= 0 && app == a->app_default) {
                        r = nft_txn_elem(t, 0, a->root_id, NULL, false);
                        if (r >= 0)
                                r = nft_txn_elem(t, 0, a->root_id, c->name, true);
                }
        }
        /* Class chains no app uses any more go in the same transaction, after their
         * elements moved away. */
        for (size_t i = 0; i < a->n_classes && r >= 0; i++) {
                AppClass *c = a->classes[i];
                long refs = c->refs;
                for (size_t m = 0; m < n_moves; m++)
                        refs += (moves[m].to == c) - (moves[m].app->cls == c);
                if (refs == 0 && c->installed)
                        r = nft_txn_del_class(t, c->name);
        }
        if (r >= 0)
                r = nft_txn_commit(t);
        if (r < 0) {
                for (size_t i = 0; i < n_created; i++)
                        class_drop(a, created[i]);
                /* each keeps its class; the reconciler moves them when the kernel accepts */
                for (size_t i = 0; i < n; i++)
                        apps[i]->reclass_pending = true;
                return r;
        }
        for (size_t i = 0; i < n; i++)
                apps[i]->reclass_pending = false;
        for (size_t i = 0; i < n_created; i++)
                created[i]->installed = true;
        for (size_t m = 0; m < n_moves; m++) {
                AppClass *old = moves[m].app->cls;
                moves[m].to->refs++;
                moves[m].app->cls = moves[m].to;
                if (old)
                        old->refs--;
        }
        for (size_t i = 0; i < a->n_classes;) {
                AppClass *c = a->classes[i];
                if (c->refs == 0 && c->installed) {
                        class_drop(a, c); /* swaps the last into i */
                        continue;
                }
                i++;
        }
        for (size_t m = 0; m < n_moves; m++)
                app_refresh(moves[m].app, true);
        return 0;
}

int app_reclass(Apps *a, App *app)
{
        return apps_reclass(a, &app, 1);
}

static int state_save(Apps *a)
{
        int r = app_policy_state_save(a->core->config->apps.state_file, &a->runtime_set);
        if (r < 0)
                log_error_errno(r, "Cannot save app policies to %s: %m",
                                a->core->config->apps.state_file);
        return r;
}

static void emit_policy(App *app)
{
        apps_bus_emit_changed(app, "Access", "Bearers", "VPN", "Handover", "Source", NULL);
}

/* The kernel refused a move roamd wants: the last good state stays in force, Degraded says
 * what was refused (what: "policy of app org.x"), and the reconciler retries with backoff. */
void note_refused(Apps *a, const char *what, int error)
{
        log_warning_errno(error,
                          "%s: the kernel refused it; the last good state stays in force, "
                          "retrying: %m",
                          what);
        reconcile_note_failed(a->reconcile, what, error);
}

/* The default policy changed (its runtime or config keys): every app follows them, the
 * default itself included, all in one transaction. When the kernel refuses, the new
 * effective policies stay what roamd wants (apps keep their classes until a retry moves
 * them). */
static int reclass_all(Apps *a)
{
        _cleanup_free_ App **changed = calloc(a->n_apps + 1, sizeof(App *));
        _cleanup_free_ AppPolicy *before = calloc(a->n_apps + 1, sizeof(AppPolicy));
        size_t n = 0;
        int r;

        if (!changed || !before)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_apps; i++)
                before[i] = a->apps[i]->effective;
        /* the default and "user" first: the others layer their keys */
        app_compute_effective(a, a->app_default);
        if (a->app_user)
                app_compute_effective(a, a->app_user);
        /* every app: a class key also follows the caps of its users (and a user's class the
         * default policy) when its own policy is unchanged; apps whose class stays are
         * skipped by apps_reclass() */
        for (size_t i = 0; i < a->n_apps; i++) {
                app_compute_effective(a, a->apps[i]);
                changed[n++] = a->apps[i];
        }
        r = apps_reclass(a, changed, n);
        for (size_t i = 0; i < a->n_apps; i++)
                if (!app_policy_equal(&before[i], &a->apps[i]->effective))
                        emit_policy(a->apps[i]);
        return r;
}

/* Gives app a new runtime policy and moves what follows from it (the app, or for the default
 * policy every app following it) in one transaction. On failure the policy stays what roamd
 * wants and the apps keep their classes (reclass_pending). */
static int app_set_runtime(Apps *a, App *app, const AppPolicy *runtime)
{
        int r;

        app->runtime = *runtime;
        if (app->special && app != a->app_system)
                r = reclass_all(a); /* default, user, user:UID: others follow their keys */
        else {
                app_compute_effective(a, app);
                r = app_reclass(a, app);
        }
        emit_policy(app);
        return r;
}

int apps_set_policy(Apps *a, const char *id, const AppPolicy *changes, App **ret)
{
        AppPolicy runtime;
        App *app;
        int r, k;

        if (streq(id, APP_ID_SYSTEM) && (changes->set & ~APP_KEY_ACCESS))
                return -EDOM; /* the system policy has only an access */
        r = app_get_or_create(a, id, &app);
        if (r < 0)
                return r;
        if (!app->cls)
                return -EBUSY; /* the reconciler makes it first */
        runtime = app->runtime;
        app_policy_layer(&runtime, changes);
        r = app_set_runtime(a, app, &runtime);
        k = app_policy_set_put(&a->runtime_set, id, changes);
        if (k >= 0)
                k = state_save(a);
        if (k < 0)
                log_warning_errno(k, "%s: the change could not be saved: %m", id);
        *ret = app;
        if (r < 0) {
                _cleanup_free_ char *what = NULL;
                if (asprintf(&what, "policy of app %s", id) < 0)
                        return log_oom();
                note_refused(a, what, r);
                return r;
        }
        log_info("app %s: policy changed at runtime", id);
        reconcile_schedule(a->reconcile); /* who else follows policy (the wake queue) */
        return 0;
}

int apps_reset_policy(Apps *a, App *app)
{
        int r = app_set_runtime(a, app, &NO_KEYS);

        (void)app_policy_set_remove(&a->runtime_set, app->id);
        (void)state_save(a);
        reconcile_schedule(a->reconcile);
        if (r < 0) {
                _cleanup_free_ char *what = NULL;
                if (asprintf(&what, "policy of app %s", app->id) < 0)
                        return log_oom();
                note_refused(a, what, r);
        }
        return r;
}

/* ---- start, reload ---- */

static int load_policies(Apps *a, AppPolicySet *config, AppPolicySet *runtime)
{
        _cleanup_(app_policy_state_damage_done) AppPolicyStateDamage damage = {};
        const AppsConfig *c = &a->core->config->apps;
        unsigned errors = 0;
        int r;

        r = app_policy_load_dir(c->policy_dir, config, &errors);
        if (r < 0 && r != -EINVAL)
                return log_error_errno(r, "Cannot read %s: %m", c->policy_dir);
        if (errors > 0)
                log_warning(
                    "%s: %u error(s); the files with errors were skipped, the others apply.",
                    c->policy_dir, errors);
        state_file_make_private(c->state_file);
        /* A damaged file keeps its good sections and fails closed for the rest (each said in
         * the log); never an empty start, which would turn every runtime deny into an allow. */
        r = app_policy_state_load(c->state_file, runtime, &damage);
        if (r == -ENOMEM)
                return r;
        return 0;
}

/* The whole table from the model, into a transaction (at start, and the rebuild after a
 * commit the kernel did not answer): the other parts follow with theirs. */
static int part_install(void *userdata, NftTxn *t)
{
        Apps *a = userdata;
        _cleanup_free_ ClassLink *links = NULL;
        ClassWorld w;
        bool levels[NFT_LEVEL_MAX];
        int r;

        r = nft_txn_replace_table(t);
        if (r < 0)
                return r;
        r = class_world_build(a, &w, &links);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_classes; i++) {
                class_compute(&w, a->classes[i], &a->classes[i]->spec);
                r = nft_txn_put_class(t, a->classes[i]->name, &a->classes[i]->spec, false);
                if (r < 0)
                        return r;
        }
        r = add_sets(a, t);
        if (r < 0)
                return r;
        for (int l = 0; l < NFT_LEVEL_MAX; l++)
                levels[l] = a->level_refs[l] > 0;
        for (size_t i = 0; i < a->n_refs; i++)
                if (a->refs[i].app->cls)
                        levels[a->refs[i].level] = true;
        r = nft_txn_set_levels(t, levels);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_refs; i++) {
                if (!a->refs[i].app->cls)
                        continue; /* the reconciler adds it with the app's class */
                r = nft_txn_elem(t, a->refs[i].level, a->refs[i].id, a->refs[i].app->cls->name,
                                 true);
                if (r < 0)
                        return r;
        }
        return nft_txn_elem(t, 0, a->root_id, a->app_default->cls->name, true);
}

/* What a committed install put in the kernel. */
static void installed_full(Apps *a)
{
        for (size_t i = 0; i < a->n_classes; i++)
                a->classes[i]->installed = true;
        for (size_t i = 0; i < a->n_refs; i++) {
                CgroupRef *ref = &a->refs[i];
                if (ref->installed || !ref->app->cls)
                        continue;
                ref->installed = true;
                a->level_refs[ref->level]++;
                if (a->started)
                        apps_bus_emit_changed(ref->app, "Cgroups", NULL);
        }
        free(a->installed_sets);
        a->installed_sets = NULL;
        (void)sets_text(a, &a->installed_sets);
}

/* After a commit the kernel did not answer (and the ruleset's generation moved): the whole
 * table again from the model, in one transaction, so nothing builds on a guess. */
static int apps_resync(void *userdata)
{
        Apps *a = userdata;
        int r = reconcile_install(a->reconcile);

        if (r >= 0)
                log_info("Table inet roam rebuilt from roamd's model.");
        return r;
}

static int txn_begin(void *userdata, NftTxn **ret)
{
        Apps *a = userdata;

        return nft_txn_new(a->nft, ret);
}

static void txn_free(NftTxn *t)
{
        nft_txn_free(t);
}

static const ReconcileTxnOps apps_txn_ops = {
    .begin = txn_begin,
    .commit = nft_txn_commit,
    .free = txn_free,
};

static const ReconcilePart apps_part = {
    .prepare = part_prepare,
    .install = part_install,
    .sync = part_sync,
    .done = part_done,
};

int apps_start(Apps *a)
{
        const AppsConfig *c = &a->core->config->apps;
        NftConfig nc = {.mark_mask = c->mark_mask};
        RouteConfig rc = {.mark_mask = c->mark_mask,
                          .table_base = c->table_base,
                          .rule_priority = c->rule_priority};
        struct stat st;
        App *app;
        int r, r_routes;

        a->reconcile = a->core->reconcile;
        /* `roam run` asks systemd for a scope when its manager is on the bus */
        r = a->core->bus ? bus_name_watch_new(a->core->bus, "org.freedesktop.systemd1", NULL, NULL,
                                              &a->systemd)
                         : 0;
        if (r < 0)
                return log_error_errno(r, "Failed to follow systemd on the bus: %m");
        r = nft_engine_new(&nc, &a->nft);
        if (r < 0)
                return r;
        nft_engine_set_resync(a->nft, apps_resync, a);
        r = route_tables_new(&rc, netlink_route_cache(a->core->netlink), &a->routes);
        if (r < 0)
                return r;
        r = load_policies(a, &a->config_set, &a->runtime_set);
        if (r < 0)
                return r;
        if (app_get_or_create(a, APP_ID_DEFAULT, &a->app_default) < 0 ||
            app_get_or_create(a, APP_ID_SYSTEM, &a->app_system) < 0 ||
            app_get_or_create(a, APP_ID_USER, &a->app_user) < 0)
                return log_oom();
        for (size_t i = 0; i < a->config_set.n; i++)
                if (app_get_or_create(a, a->config_set.entries[i].id, &app) < 0)
                        return log_oom();
        for (size_t i = 0; i < a->runtime_set.n; i++)
                if (app_get_or_create(a, a->runtime_set.entries[i].id, &app) < 0)
                        return log_oom();

        r = cgroup_tree_new(a->core->event, c->system_cgroups, on_cgroup, a, &a->cgroups);
        if (r < 0)
                return log_error_errno(r, "Cannot watch the cgroup v2 hierarchy: %m");
        if (stat(cgroup_tree_mount(a->cgroups), &st) < 0)
                return log_error_errno(errno, "Cannot stat %s: %m", cgroup_tree_mount(a->cgroups));
        a->root_id = (uint64_t)st.st_ino;
        a->level_refs[0]++;
        if (streq(cgroup_tree_own_path(a->cgroups), "/"))
                log_warning("roamd runs in the root cgroup: its own traffic falls under the "
                            "default policy. Run it in a cgroup of its own (roamd.service).");

        /* all first: a user's class follows the default's effective policy */
        for (size_t i = 0; i < a->n_apps; i++)
                app_compute_effective(a, a->apps[i]);
        for (size_t i = 0; i < a->n_apps; i++) {
                r = class_ensure(a, a->apps[i], NULL, &a->apps[i]->cls);
                if (r < 0)
                        return log_oom();
                a->apps[i]->cls->refs++;
        }
        r_routes = route_sync(a);
        /* the one transaction of every part (stats, firewall) replaces the table */
        r = reconcile_add_part(a->reconcile, RECONCILE_PART_APPS, &apps_part, a);
        if (r < 0)
                return r;
        reconcile_set_txn(a->reconcile, &apps_txn_ops, a);
        r = reconcile_install(a->reconcile);
        if (r < 0)
                return log_error_errno(r, "Cannot install table inet roam: %m");
        a->started = true;
        /* What an earlier roamd left and this one does not want goes now; what failed to be
         * added is retried. */
        reconcile_begin(a->reconcile);
        if (r_routes < 0)
                reconcile_failed(a->reconcile, "routes and ip rules", r_routes);
        r = route_tables_prune(a->routes);
        if (r < 0)
                reconcile_failed(a->reconcile, "removing old routes and ip rules", r);
        reconcile_end(a->reconcile);
        coexist_check(a);
        for (size_t i = 0; i < a->n_apps; i++)
                app_refresh(a->apps[i], false);
        log_info("Apps: %zu known, %zu cgroups governed, cgroup2 at %s, roamd in %s.", a->n_apps,
                 a->n_refs, cgroup_tree_mount(a->cgroups), cgroup_tree_own_path(a->cgroups));
        return apps_bus_setup(a);
}

int apps_reload(Apps *a)
{
        AppPolicySet config = {};
        unsigned errors = 0;
        int r;

        if (!a || !a->started)
                return 0;
        r = app_policy_load_dir(a->core->config->apps.policy_dir, &config, &errors);
        if (r < 0 && r != -EINVAL)
                return r;
        app_policy_set_done(&a->config_set);
        a->config_set = config;
        for (size_t i = 0; i < config.n; i++) {
                App *app;
                (void)app_get_or_create(a, config.entries[i].id, &app);
        }
        for (size_t i = 0; i < a->n_apps; i++) {
                App *app = a->apps[i];
                int k = app_policy_set_find(&a->config_set, app->id);
                app->config = k >= 0 ? a->config_set.entries[k].policy : NO_KEYS;
        }
        coexist_check(a);
        /* every app whose policy the new drop-ins change, in one transaction */
        r = reclass_all(a);
        if (r < 0)
                note_refused(a, "new drop-ins", r);
        return errors > 0 ? -EINVAL : r;
}

NftEngine *apps_nft(Apps *a)
{
        return a->nft;
}

RouteTables *apps_routes(Apps *a)
{
        return a->routes;
}

int apps_new(Core *core, Portal *portal, Apps **ret)
{
        Apps *a = calloc(1, sizeof(*a));

        if (!a)
                return -ENOMEM;
        a->core = core;
        a->portal = portal;
        *ret = a;
        return 0;
}

Apps *apps_free(Apps *a)
{
        if (!a)
                return NULL;
        apps_systemd_free_all(a);
        a->systemd = bus_name_watch_free(a->systemd);
        sd_bus_slot_unref(a->app_slot);
        sd_bus_slot_unref(a->app_enum_slot);
        cgroup_tree_free(a->cgroups);
        for (size_t i = 0; i < a->n_apps; i++)
                app_free(a->apps[i]);
        free(a->apps);
        for (size_t i = 0; i < a->n_classes; i++)
                free(a->classes[i]);
        free(a->classes);
        free(a->refs);
        app_policy_set_done(&a->config_set);
        app_policy_set_done(&a->runtime_set);
        free(a->installed_sets);
        route_tables_free(a->routes);
        if (a->reconcile) {
                reconcile_set_txn(a->reconcile, NULL, NULL);
                reconcile_remove_part(a->reconcile, RECONCILE_PART_APPS);
        }
        apply_pass_free(a->pass);
        coexist_report_done(&a->coexist);
        nft_engine_free(a->nft); /* the table stays: fail closed */
        watch_list_clear(&a->cgroup_watches);
        free(a);
        return NULL;
}

CgroupTree *apps_cgroups(Apps *a)
{
        return a->cgroups;
}

bool apps_cgroup_installed(Apps *a, uint64_t id)
{
        CgroupRef *ref = ref_find(a, id, NULL);

        return ref && ref->installed;
}
