/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The policy in force: an app's own layers capped by its users' (effective), the class that
 * calls for (shared by every app with the same key), moving apps between classes in one
 * transaction, and the changes at runtime that move them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roam-app-id.h"
#include "roamd-apps-internal.h"
#include "roamd-apps.h"
#include "roamd-class.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-nft.h"
#include "roamd-portal.h"
#include "roamd-reconcile.h"
#include "roamd-route.h"

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

void app_compute_effective(Apps *a, App *app)
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
        /* A user's cap binds that user's instance only (app_class_key()): a scope a user
         * names like an app must not restrict the app elsewhere. */
        app->effective = app->own;
}

/* ---- classes ---- */

/* uid: the key of user uid's instance of the app (UID_INVALID: the app's own). */
static void app_class_key(App *app, uid_t uid, AppPolicy *key, bool *system)
{
        Apps *a = app->apps;

        *key = app->own;
        if (app->online_until != 0)
                key->access = APP_ACCESS_ALLOW; /* online for a task; the VPN rule stays */
        /* a user's instance: never looser than the user's policy, a grant included (a scope
         * name in a user's subtree is the user's choice, honoured only as far as the user's
         * policy allows) */
        if (!app->special && uid != UID_INVALID) {
                AppPolicy cap;
                user_cap(a, uid, &cap);
                policy_cap(key, &cap);
        }
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

void app_class_drop(Apps *a, AppClass *c)
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
int app_class_world_build(Apps *a, ClassWorld *w, ClassLink **ret_links)
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
            .prefer_online = c->config->apps.default_follows == DEFAULT_FOLLOWS_VERDICT,
        };
        *ret_links = links;
        return 0;
}

void app_class_compute(const ClassWorld *w, AppClass *c, NftClass *ret)
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

static int app_class_ensure_for(Apps *a, App *app, uid_t uid, NftTxn *t, AppClass **ret)
{
        AppPolicy key;
        bool system;
        AppClass *c;
        int r;

        app_class_key(app, uid, &key, &system);
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
        r = app_class_world_build(a, &w, &links);
        if (r < 0) {
                app_class_drop(a, c);
                return r;
        }
        app_class_compute(&w, c, &c->spec);
        if (t) {
                r = nft_txn_put_class(t, c->name, &c->spec, false);
                if (r < 0) {
                        app_class_drop(a, c);
                        return r;
                }
        }
        *ret = c;
        return 1;
}

int app_class_ensure(Apps *a, App *app, NftTxn *t, AppClass **ret)
{
        return app_class_ensure_for(a, app, UID_INVALID, t, ret);
}

/* ---- users' instances ---- */

static AppUserClass *user_slot(const App *app, uid_t uid)
{
        for (size_t i = 0; i < app->n_users; i++)
                if (app->users[i].uid == uid)
                        return &app->users[i];
        return NULL;
}

AppClass *app_ref_class(const App *app, uid_t uid)
{
        const AppUserClass *u;

        if (app->special || uid == UID_INVALID)
                return app->cls;
        u = user_slot(app, uid);
        return u ? u->cls : NULL;
}

bool app_class_missing(const App *app)
{
        if (!app->cls)
                return true;
        for (size_t i = 0; i < app->n_users; i++)
                if (!app->users[i].cls)
                        return true;
        return false;
}

/* Whether a user's subtree holds a cgroup of app (no instances for the special policies). */
static bool app_has_user(const App *app, uid_t uid)
{
        if (app->special)
                return false;
        for (size_t i = 0; i < app->n_cgroups; i++)
                if (app->cgroups[i].uid == uid)
                        return true;
        return false;
}

/* A slot, without a class yet, for each user whose subtree holds a cgroup of app. */
static int user_slots_add(App *app)
{
        for (size_t i = 0; i < app->n_cgroups; i++) {
                uid_t uid = app->cgroups[i].uid;
                AppUserClass *n;

                if (app->special || uid == UID_INVALID || user_slot(app, uid))
                        continue;
                n = reallocarray(app->users, app->n_users + 1, sizeof(AppUserClass));
                if (!n)
                        return -ENOMEM;
                app->users = n;
                n[app->n_users++] = (AppUserClass){.uid = uid};
        }
        return 0;
}

int app_user_classes_start(Apps *a, App *app)
{
        int r = user_slots_add(app);

        for (size_t i = 0; r >= 0 && i < app->n_users; i++) {
                AppUserClass *u = &app->users[i];
                if (u->cls)
                        continue;
                r = app_class_ensure_for(a, app, u->uid, NULL, &u->cls);
                if (r >= 0)
                        u->cls->refs++;
        }
        return r < 0 ? r : 0;
}

void app_user_classes_release(Apps *a, App *app)
{
        for (size_t i = 0; i < app->n_users; i++) {
                AppClass *c = app->users[i].cls;
                if (!c)
                        continue;
                c->refs--;
                if (c->refs == 0)
                        reconcile_schedule(a->reconcile); /* the pass removes its chain */
        }
        free(app->users);
        app->users = NULL;
        app->n_users = 0;
}

/* ---- policy changes ---- */

/* One class an app's cgroups move off (from) and onto (to): the app's own (uid
 * UID_INVALID) or one user's instance's. from NULL: a new instance; to NULL: an instance
 * that ended (no cgroup of the user left). */
typedef struct Move {
        App *app;
        uid_t uid;
        AppClass *from, *to;
} Move;

/* Whether the cgroup of app in ref_uid's subtree has the class of the instance uid. */
static bool in_instance(const App *app, uid_t ref_uid, uid_t uid)
{
        if (app->special || ref_uid == UID_INVALID)
                return uid == UID_INVALID;
        return ref_uid == uid;
}

/* The elements of the instance's cgroups the kernel has, onto m->to. */
static int move_elements(Apps *a, NftTxn *t, const Move *m)
{
        App *app = m->app;
        int r = 0;

        if (!m->from || !m->to)
                return 0; /* a new instance's cgroups are not in the kernel yet; an ended one
                           * has none */
        for (size_t j = 0; j < app->n_cgroups && r >= 0; j++) {
                CgroupRef *ref;

                if (!in_instance(app, app->cgroups[j].uid, m->uid))
                        continue;
                ref = apps_cgroup_ref_find(a, app->cgroups[j].id, NULL);
                /* a cgroup the kernel does not have yet gets its element from the
                 * reconciler, with the class the app has then */
                if (!ref || !ref->installed)
                        continue;
                r = nft_txn_elem(t, app->cgroups[j].level, app->cgroups[j].id, NULL, false);
                if (r >= 0)
                        r = nft_txn_elem(t, app->cgroups[j].level, app->cgroups[j].id, m->to->name,
                                         true);
        }
        if (r >= 0 && app == a->app_default && m->uid == UID_INVALID) {
                r = nft_txn_elem(t, 0, a->root_id, NULL, false);
                if (r >= 0)
                        r = nft_txn_elem(t, 0, a->root_id, m->to->name, true);
        }
        return r;
}

/* The most moves (and classes made) app_moves() may add for app. */
static size_t moves_max(const App *app)
{
        return 1 + app->n_users + app->n_cgroups;
}

/* The moves app needs: its own class, and one per user's instance (new, changed, ended).
 * Classes made for them are put in t and noted in created. */
static int app_moves(Apps *a, App *app, NftTxn *t, Move *moves, size_t *n_moves, AppClass **created,
                     size_t *n_created)
{
        AppClass *c = NULL;
        int k;

        k = app_class_ensure(a, app, t, &c);
        if (k < 0)
                return k;
        if (k > 0)
                created[(*n_created)++] = c;
        if (c != app->cls)
                moves[(*n_moves)++] = (Move){app, UID_INVALID, app->cls, c};
        k = user_slots_add(app);
        if (k < 0)
                return k;
        for (size_t i = 0; i < app->n_users; i++) {
                AppUserClass *u = &app->users[i];

                c = NULL;
                if (app_has_user(app, u->uid)) {
                        k = app_class_ensure_for(a, app, u->uid, t, &c);
                        if (k < 0)
                                return k;
                        if (k > 0)
                                created[(*n_created)++] = c;
                }
                if (c != u->cls)
                        moves[(*n_moves)++] = (Move){app, u->uid, u->cls, c};
        }
        return 0;
}

/* Moves every app of apps[] (and each of its users' instances) to the class its current
 * effective policy and grant call for, in ONE transaction (a change of the default policy
 * moves many apps at once). On failure nothing changed in the kernel and every app keeps its
 * classes. */
int apps_reclass(Apps *a, App **apps, size_t n)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        _cleanup_free_ Move *moves = NULL;
        _cleanup_free_ AppClass **created = NULL;
        size_t n_moves = 0, n_created = 0, most = 1;
        int r;

        /* the pass in flight ends first: its done applies what it computed to the classes
         * by their place, which a move (a class made or dropped) changes */
        reconcile_settle(a->reconcile);

        for (size_t i = 0; i < n; i++)
                most += moves_max(apps[i]);
        moves = calloc(most, sizeof(Move));
        created = calloc(most, sizeof(AppClass *));
        if (!moves || !created)
                return -ENOMEM;
        r = nft_txn_new(a->nft, &t);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++)
                r = app_moves(a, apps[i], t, moves, &n_moves, created, &n_created);
        for (size_t m = 0; m < n_moves && r >= 0; m++)
                r = move_elements(a, t, &moves[m]);
        /* Class chains no app uses any more go in the same transaction, after their
         * elements moved away. */
        for (size_t i = 0; i < a->n_classes && r >= 0; i++) {
                AppClass *c = a->classes[i];
                long refs = c->refs;
                for (size_t m = 0; m < n_moves; m++)
                        refs += (moves[m].to == c) - (moves[m].from == c);
                if (refs == 0 && c->installed)
                        r = nft_txn_del_class(t, c->name);
        }
        if (r >= 0)
                r = nft_txn_commit(t);
        if (r < 0) {
                for (size_t i = 0; i < n_created; i++)
                        app_class_drop(a, created[i]);
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
                Move *mv = &moves[m];
                if (mv->to)
                        mv->to->refs++;
                if (mv->from)
                        mv->from->refs--;
                if (mv->uid == UID_INVALID) {
                        mv->app->cls = mv->to;
                        continue;
                }
                AppUserClass *u = user_slot(mv->app, mv->uid);
                if (mv->to)
                        u->cls = mv->to;
                else /* the instance ended */
                        *u = mv->app->users[--mv->app->n_users];
        }
        /* instances that ended without a class (made while the kernel refused) */
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < apps[i]->n_users;)
                        if (!apps[i]->users[j].cls && !app_has_user(apps[i], apps[i]->users[j].uid))
                                apps[i]->users[j] = apps[i]->users[--apps[i]->n_users];
                        else
                                j++;
        for (size_t i = 0; i < a->n_classes;) {
                AppClass *c = a->classes[i];
                if (c->refs == 0 && c->installed) {
                        app_class_drop(a, c); /* swaps the last into i */
                        continue;
                }
                i++;
        }
        for (size_t m = 0; m < n_moves; m++)
                if (moves[m].uid == UID_INVALID)
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

/* Every key of the policy is the App property of its name (the shared key table), and Source
 * says where they come from: one signal for all of them, never a key left out. */
void app_emit_policy(App *app)
{
        const char *names[_ROAM_APP_KEY_MAX + 2];
        size_t n = 0;

        for (RoamAppKey k = 0; k < _ROAM_APP_KEY_MAX; k++)
                names[n++] = roam_app_key_property_table[k];
        names[n++] = "Source";
        names[n] = NULL;
        apps_bus_emit_changed_strv(app, (char **)names);
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
int apps_reclass_all(Apps *a)
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
                        app_emit_policy(a->apps[i]);
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
                r = apps_reclass_all(a); /* default, user, user:UID: others follow their keys */
        else {
                app_compute_effective(a, app);
                r = app_reclass(a, app);
        }
        app_emit_policy(app);
        return r;
}

int apps_set_policy(Apps *a, const char *id, const AppPolicy *changes, App **ret)
{
        AppPolicy runtime;
        App *app;
        int r, k;

        reconcile_settle(a->reconcile); /* (see apps_reclass()) */
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
        int r;

        reconcile_settle(a->reconcile); /* (see apps_reclass()) */
        r = app_set_runtime(a, app, &NO_KEYS);

        (void)app_policy_set_remove(&a->runtime_set, app->id);
        (void)state_save(a);
        reconcile_schedule(a->reconcile);
        if (r < 0) {
                _cleanup_free_ char *what = NULL;
                if (asprintf(&what, "policy of app %s", app->id) < 0)
                        return log_oom();
                note_refused(a, what, r);
                return r;
        }
        /* an app only this policy kept (made by a typo, say) goes now, not at restart */
        app_forget_if_unused(a, app);
        return 0;
}
