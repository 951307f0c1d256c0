/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the parts of the apps share, not for other modules: roamd-apps.c (the apps, their
 * objects and state, start, reload), roamd-apps-classes.c (the policy in force, the classes,
 * moves between them), roamd-apps-cgroup.c (the cgroups governed) and roamd-apps-reconcile.c
 * (the apps' part of the reconciler's passes). */

#include "roam-bus-name.h"
#include "roamd-apps.h"
#include "roamd-class.h"
#include "roamd-coexist.h"
#include "roamd-nft.h"
#include "roamd-reconcile.h"

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
        uid_t uid;      /* the user whose subtree holds it (its instance's class), or UID_INVALID */
        bool installed; /* the kernel accepted its element */
        /* The cgroup is gone; the ref stays (and its app lists it) until the kernel accepted
         * its element's removal (a reconciler pass). */
        bool gone;
        /* in the pass in flight: its element's add, its removal (done applies them) */
        bool adding, removing;
} CgroupRef;

struct Apps {
        Core *core;
        Portal *portal;            /* its login link's traffic gets a class of its own */
        WatchList cgroup_watches;  /* told of each cgroup event first */
        WatchList default_watches; /* told when default_route changed */
        WatchList state_watches;   /* told after app_refresh() */
        AppsDefaultRoute default_route;
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

/* roamd-apps.c */
App *app_free(App *app);

/* roamd-apps-classes.c */
void app_compute_effective(Apps *a, App *app);
/* The class of app's cgroups in uid's subtree (UID_INVALID: outside every user's, and every
 * cgroup of a special policy): NULL while it is not made yet. */
AppClass *app_ref_class(const App *app, uid_t uid);
/* Whether a class of app (its own, or one of its users') is still to be made. */
bool app_class_missing(const App *app);
/* Makes the classes of app's users' instances without a transaction (at start). */
int app_user_classes_start(Apps *a, App *app);
/* Lets go of the classes of app's users' instances (the app is forgotten). */
void app_user_classes_release(Apps *a, App *app);
int app_class_ensure(Apps *a, App *app, NftTxn *t, AppClass **ret);
int app_class_world_build(Apps *a, ClassWorld *w, ClassLink **ret_links);
void app_class_compute(const ClassWorld *w, AppClass *c, NftClass *ret);
void app_class_drop(Apps *a, AppClass *c);
int apps_reclass(Apps *a, App **apps, size_t n);
int apps_reclass_all(Apps *a);
void app_emit_policy(App *app);

/* roamd-apps-cgroup.c */
CgroupRef *apps_cgroup_ref_find(Apps *a, uint64_t id, size_t *pos);
/* The ref at pos leaves (its element is not in the kernel): its app forgets the cgroup. */
void apps_cgroup_ref_drop(Apps *a, size_t pos);
void apps_on_cgroup(CgroupTree *t, CgroupEvent ev, const CgroupNode *n, void *userdata);

/* roamd-apps-reconcile.c */
int apps_route_sync(Apps *a);
int apps_resync(void *userdata);
struct ApplyPass *apps_apply_pass_free(struct ApplyPass *p);
extern const ReconcileTxnOps apps_txn_ops;
extern const ReconcilePart apps_part;
