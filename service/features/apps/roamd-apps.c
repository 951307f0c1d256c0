/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "roam-bus-name.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roam-app-id.h"
#include "roamd-apps-internal.h"
#include "roamd-apps.h"
#include "roamd-cgroup.h"
#include "roamd-class.h"
#include "roamd-coexist.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-netlink.h"
#include "roamd-nft.h"
#include "roamd-reconcile.h"
#include "roamd-route.h"
#include "roamd-verdict.h"

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

App *app_free(App *app)
{
        if (!app)
                return NULL;
        sd_event_source_disable_unref(app->grant_timer);
        for (size_t i = 0; i < app->n_cgroups; i++)
                free(app->cgroups[i].path);
        free(app->cgroups);
        free(app->users); /* their classes' refs are the caller's (app_forget_if_unused()) */
        free(app->route[0]);
        free(app->route[1]);
        free(app->state_text);
        free(app->path);
        free(app->id);
        free(app);
        return NULL;
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

const AppsDefaultRoute *apps_default_route(Apps *a)
{
        return &a->default_route;
}

unsigned apps_default_watch_add(Apps *a, AppsDefaultFn fn, void *userdata)
{
        return watch_list_add(&a->default_watches, (void *)fn, userdata, NULL);
}

void apps_default_watch_remove(Apps *a, unsigned id)
{
        if (a && id > 0)
                (void)watch_list_remove(&a->default_watches, id);
}

static void call_default_watch(void *callback, void *userdata, void *ctx)
{
        ((AppsDefaultFn)callback)(ctx, userdata);
}

static void call_state_watch(void *callback, void *userdata, void *ctx)
{
        App *app = ctx;

        ((AppsStateFn)callback)(app->apps, app, userdata);
}

/* The default app's class says where an app with the default policy goes: no second route
 * computation for the global state. */
static void default_route_refresh(Apps *a)
{
        const AppClass *c = a->app_default ? a->app_default->cls : NULL;
        AppsDefaultRoute d = {
            .kernel = route_tables_main_default(a->routes, AF_INET)
                          ?: route_tables_main_default(a->routes, AF_INET6),
        };

        if (c && a->started)
                switch (c->state) {
                case APP_STATE_ONLINE:
                case APP_STATE_ONLINE_FOR_TASK:
                        d = (AppsDefaultRoute){.known = true,
                                               .link = c->route[0] ?: c->route[1],
                                               .verdict = VERDICT_ONLINE,
                                               .kernel = d.kernel};
                        break;
                case APP_STATE_VIA_NOT_ONLINE:
                        d = (AppsDefaultRoute){.known = true,
                                               .link = c->state_link,
                                               .verdict = c->state_verdict,
                                               .kernel = d.kernel};
                        break;
                case APP_STATE_BLOCKED_NO_LINK:
                case APP_STATE_OFFLINE_NO_LINK:
                case APP_STATE_BLOCKED_VPN_DOWN:
                        d = (AppsDefaultRoute){
                            .known = true, .verdict = VERDICT_OFFLINE, .kernel = d.kernel};
                        break;
                case APP_STATE_LAN_ONLY:
                case APP_STATE_LAN_THROUGH_VPN:
                case APP_STATE_BLOCKED_DENIED:
                case APP_STATE_PORTAL_LOGIN:
                case APP_STATE_BLOCKED_NO_PORTAL:
                case _APP_STATE_MAX:
                case _APP_STATE_INVALID:
                        /* the default policy keeps apps off the internet: the links judge */
                        break;
                }
        if (d.known == a->default_route.known && d.link == a->default_route.link &&
            d.verdict == a->default_route.verdict && d.kernel == a->default_route.kernel)
                return;
        a->default_route = d;
        watch_list_notify(&a->default_watches, call_default_watch, a);
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
        if (app == a->app_default)
                default_route_refresh(a);
        watch_list_notify(&a->state_watches, call_state_watch, app);
}

unsigned apps_state_watch_add(Apps *a, AppsStateFn fn, void *userdata)
{
        return watch_list_add(&a->state_watches, (void *)fn, userdata, NULL);
}

void apps_state_watch_remove(Apps *a, unsigned id)
{
        if (a && id > 0)
                (void)watch_list_remove(&a->state_watches, id);
}

int app_view(const App *app, uid_t uid, AppView *ret)
{
        const AppClass *c = app_ref_class(app, uid);

        if (!c)
                return -ENODATA;
        *ret = (AppView){
            .state = c->state,
            .access = c->key.access,
            .bearers = c->key.bearers,
            .route = {c->route[0], c->route[1]},
            .state_link = c->state_link,
            .state_verdict = c->state_verdict,
        };
        return 0;
}

App *apps_find_by_cgroup(Apps *a, const char *path, uid_t *ret_uid)
{
        App *best = NULL;
        size_t best_len = 0;
        uid_t uid = UID_INVALID;

        for (size_t i = 0; i < a->n_apps; i++) {
                App *app = a->apps[i];

                for (size_t k = 0; k < app->n_cgroups; k++) {
                        const char *p = app->cgroups[k].path;
                        size_t n = strlen(p);

                        if (app->cgroups[k].gone)
                                continue; /* a new cgroup may have its path */
                        if (n == 1 && p[0] == '/')
                                n = 0; /* the root holds everything */
                        if (strncmp(path, p, n) != 0 || (path[n] != 0 && path[n] != '/') ||
                            (best && n <= best_len))
                                continue;
                        best = app;
                        best_len = n;
                        uid = app->cgroups[k].uid;
                }
        }
        if (!best)
                best = a->app_default;
        *ret_uid = uid;
        return best;
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

        r = cgroup_tree_new(a->core->event, c->system_cgroups, apps_on_cgroup, a, &a->cgroups);
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
                r = app_class_ensure(a, a->apps[i], NULL, &a->apps[i]->cls);
                if (r < 0)
                        return log_oom();
                a->apps[i]->cls->refs++;
                /* the cgroups scanned so far in users' subtrees: their instances' classes */
                r = app_user_classes_start(a, a->apps[i]);
                if (r < 0)
                        return log_oom();
        }
        r_routes = apps_route_sync(a);
        /* the one transaction of every part (stats, firewall...): the apps own table inet
         * roam, so their part goes first and its install replaces the table */
        reconcile_set_txn(a->reconcile, &apps_txn_ops, &apps_part, a);
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
        reconcile_settle(a->reconcile); /* (see apps_reclass()) */
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
        r = apps_reclass_all(a);
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
                reconcile_set_txn(a->reconcile, NULL, NULL, NULL);
        }
        apps_apply_pass_free(a->pass);
        coexist_report_done(&a->coexist);
        nft_engine_free(a->nft); /* the table stays: fail closed */
        watch_list_clear(&a->cgroup_watches);
        watch_list_clear(&a->default_watches);
        watch_list_clear(&a->state_watches);
        free(a);
        return NULL;
}
