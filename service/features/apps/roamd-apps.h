/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Apps: who they are (cgroup v2 nodes), what they may do (policy), and how the kernel is
 * told (nftables classes and elements, policy routing). docs/apps.md has the user's view. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roam-watch.h"
#include "roamd-app-policy.h"
#include "roamd-cgroup.h"
#include "roamd-class.h"

typedef struct Core Core;
typedef struct Portal Portal;
typedef struct Apps Apps;
typedef struct AppClass AppClass;
typedef struct RunRequest RunRequest;
typedef struct RouteTables RouteTables;
typedef struct NftEngine NftEngine;

typedef struct AppCgroup {
        uint64_t id;
        unsigned level;
        char *path;
        uid_t uid; /* the user whose subtree holds it (user-UID.slice), or UID_INVALID */
        /* removed from the tree; kept (the instance's class with it) until the kernel
         * dropped its element, but no longer exported */
        bool gone;
} AppCgroup;

/* One user's instance of an app: its cgroups in that user's subtree, whose class is the
 * app's policy capped by the user's (the same class as the app's when the cap changes
 * nothing). A scope a user names like an app restricts that user's instance only. */
typedef struct AppUserClass {
        uid_t uid;
        AppClass *cls; /* NULL until the kernel has it (its cgroups wait for the reconciler) */
} AppUserClass;

typedef struct App {
        Apps *apps;
        char *id;
        char *path; /* D-Bus object path */
        bool special;
        AppPolicy config;      /* keys from /etc/roam/apps.d */
        AppPolicy runtime;     /* keys changed over D-Bus, kept in the state file */
        AppPolicy own;         /* builtin, then default's keys (for apps; "user"'s for user:UID),
                                * then config, runtime */
        AppPolicy effective;   /* own, what is in force for its cgroups outside users'
                                * subtrees; each user's instance is capped by that user's
                                * policy too (users[]) */
        uint64_t online_until; /* CLOCK_REALTIME µs; UINT64_MAX until released; 0 none */
        sd_event_source *grant_timer;
        AppClass *cls;
        AppUserClass *users; /* its users' instances (none for the special policies) */
        size_t n_users;
        AppCgroup *cgroups;
        size_t n_cgroups;
        char *route[2];       /* link names new flows take, per family; NULL none */
        AppState state;       /* changed only by app_set_state() */
        char *state_text;     /* State on the bus, naming the link when it is not online */
        bool reclass_pending; /* the kernel refused its move to the class its policy calls
                               * for: the last good class stays, the reconciler retries */
} App;

/* portal: whose login link's traffic the apps class apart (NULL: none). */
int apps_new(Core *core, Portal *portal, Apps **ret);
Apps *apps_free(Apps *a);

/* Loads policies, scans cgroups, and replaces table inet roam in one transaction. */
int apps_start(Apps *a);
/* Other tables' mark writes and ip rules inside our FirewallMask (Manager.MarkConflicts),
 * read at start and reload, and a free mask to use instead (0: none or no conflict). */
char **apps_mark_conflicts(Apps *a);
uint32_t apps_mask_suggestion(Apps *a);
/* Re-reads the drop-ins (malformed files are skipped, the rest apply). */
int apps_reload(Apps *a);

App *apps_get(Apps *a, const char *id);
size_t apps_count(Apps *a);
App *apps_nth(Apps *a, size_t i);

/* The route the default policy's traffic takes (the default app's class, as the reconciler's
 * last pass computed it): what the global state is judged by (Manager.State, DefaultLink,
 * StateReason in docs/dbus-api.md). */
typedef struct AppsDefaultRoute {
        bool known;  /* the default policy routes traffic (access=allow) and the apps started */
        int link;    /* the link its traffic leaves by (the one its state names), 0 none */
        int verdict; /* a Verdict: online when a family's link is online for it, else that
                      * link's; offline when no link takes it */
        int kernel;  /* the link of the kernel's default route (IPv4's, else IPv6's), 0 none */
} AppsDefaultRoute;
const AppsDefaultRoute *apps_default_route(Apps *a);
/* Told after a pass or a policy change moved the default route's link, verdict or the
 * kernel's default link. Returns the watcher's id (> 0), or 0 when out of memory. */
typedef void (*AppsDefaultFn)(Apps *a, void *userdata);
unsigned apps_default_watch_add(Apps *a, AppsDefaultFn fn, void *userdata);
void apps_default_watch_remove(Apps *a, unsigned id);

/* What one instance of an app has now: the class of its cgroups in uid's subtree
 * (UID_INVALID: outside every user's), as the last pass computed it. */
typedef struct AppView {
        AppState state;
        AppAccess access; /* the policy as enforced (allow while online for a task) */
        uint32_t bearers; /* 0: every bearer */
        int route[2];     /* ifindex new flows take per family, 0 none */
        int state_link;   /* APP_STATE_VIA_NOT_ONLINE: the link judged, and its verdict */
        int state_verdict;
} AppView;
/* -ENODATA while the instance's class is not made yet. */
int app_view(const App *app, uid_t uid, AppView *ret);
/* The app whose governed cgroup holds path (the deepest one: a process in a cgroup below an
 * app's is the app's, as for the kernel's verdict maps), *ret_uid the user whose subtree holds
 * that cgroup (UID_INVALID: none); the default app when no governed cgroup holds it. */
App *apps_find_by_cgroup(Apps *a, const char *path, uid_t *ret_uid);
/* Told after an app's state and routes were computed again (after each pass, a policy change,
 * a grant), whether they changed or not: a watcher compares what it told last. Returns the
 * watcher's id (> 0), or 0 when out of memory. */
typedef void (*AppsStateFn)(Apps *a, App *app, void *userdata);
unsigned apps_state_watch_add(Apps *a, AppsStateFn fn, void *userdata);
void apps_state_watch_remove(Apps *a, unsigned id);

/* Layers changes (keys set in it) over the app's runtime policy, creating the app when new.
 * Bad input changes nothing. When the kernel refuses the move (an error is returned), the
 * new policy is kept and saved as what roamd wants, the last good state stays in force, the
 * manager's Degraded says so, and the reconciler retries until the kernel accepts it. */
int apps_set_policy(Apps *a, const char *id, const AppPolicy *changes, App **ret);
int apps_reset_policy(Apps *a, App *app);
/* usec: duration, UINT64_MAX until released. */
int apps_online_for(Apps *a, App *app, uint64_t usec);
int apps_release(Apps *a, App *app);
/* Creates the app's cgroup and its nftables entries, then moves the caller (pidfd, checked
 * against the D-Bus caller's pid and uid) into it. */
int apps_run(Apps *a, const char *id, int pidfd, pid_t caller, uid_t caller_uid,
             uint64_t online_for_usec, const char **ret_cgroup);
/* The app (made when new) and its grant, before its cgroup exists. */
int apps_run_prepare(Apps *a, const char *id, uint64_t online_for_usec, App **ret);
/* Governs a cgroup someone else made for app_id (systemd's transient scope): its nftables
 * element is in force when this returns 0. */
int apps_adopt_cgroup(Apps *a, const char *app_id, const char *path, const CgroupNode **ret);

/* roamd-apps-systemd.c: `roam run` through systemd's StartTransientUnit when it runs. */
bool apps_systemd_running(Apps *a);
/* Answers call itself, once the scope exists and is governed (or with a named error). */
int apps_systemd_run(Apps *a, const char *app_id, sd_bus_message *call, int pidfd, pid_t pid);
void apps_systemd_free_all(Apps *a);
/* Whether app_id fits in a scope's name (app-roam-<escaped ID>-<random>.scope, at most 255
 * characters): a longer one is refused, never shortened (the name is how the cgroup is
 * recognised as the app's). */
bool apps_systemd_id_fits(const char *app_id);
RunRequest **apps_runs(Apps *a);
bool apps_systemd_on_bus(Apps *a);

Core *apps_core(Apps *a);

/* What the apps (roamd-apps*.c) share with their other parts (roamd-apps-run.c,
 * roamd-apps-systemd.c), not for other modules: */
/* The app with this ID, made (and announced, and classed) when new: 1 made, 0 known. */
int app_get_or_create(Apps *a, const char *id, App **ret);
/* Moves app to the class its policy and grant call for (one transaction). */
int app_reclass(Apps *a, App *app);
/* Recomputes the app's state and routes from its class (emit: PropertiesChanged). */
void app_refresh(App *app, bool emit);
/* The kernel refused what roamd wants (what: "policy of app X"): Degraded, and a retry. */
void note_refused(Apps *a, const char *what, int error);
/* Drops app (InterfacesRemoved) when nothing keeps it: no policy, grant or cgroup. */
void app_forget_if_unused(Apps *a, App *app);
CgroupTree *apps_cgroups(Apps *a);
/* The cgroup's element now, in a transaction of its own (the loop waits for the kernel's
 * answer): for Run and a scope's adoption, whose caller moves in only once governed; other
 * cgroups get theirs from the reconciler's pass. 0 when installed; -EBUSY: the pass in flight
 * carries it. */
int apps_cgroup_install(Apps *a, uint64_t id);

/* What the apps' cgroup tree told them, passed on to watchers before the apps' own
 * bookkeeping (the usage counters read a leaving cgroup's last bytes; the firewall's per-app
 * rules follow an app's cgroups). */
typedef struct AppsCgroupEvent {
        Apps *apps;
        CgroupEvent event;
        const CgroupNode *node;
        NftEngine *nft; /* the apps' engine */
        bool started;   /* apps_start() is done */
} AppsCgroupEvent;
typedef void (*AppsCgroupFn)(Apps *a, const AppsCgroupEvent *ev, void *userdata);
/* Returns the watcher's id (> 0), or 0 when out of memory. */
unsigned apps_cgroup_watch_add(Apps *a, AppsCgroupFn fn, void *userdata);
void apps_cgroup_watch_remove(Apps *a, unsigned id);
/* For roamd-stats.c: the engine and the routing slots (NULL before apps_start). */
NftEngine *apps_nft(Apps *a);
RouteTables *apps_routes(Apps *a);
/* The bus slots of the app objects, owned by Apps (unreferenced in apps_free()). */
sd_bus_slot **apps_slot(Apps *a, bool enumerator);

/* D-Bus (roamd-apps-bus.c) */
int apps_bus_setup(Apps *a);
int apps_bus_announce(App *app);
int apps_bus_retract(App *app);
void apps_bus_emit_changed(App *app, const char *first, ...);
void apps_bus_emit_changed_strv(App *app, char **names);
/* The apps' members of org.roam1.Manager (GetApp, SetAppPolicy, ResetAppPolicy, RunApp,
 * MarkConflicts, FirewallMaskSuggestion), registered also when apps are not governed: *apps is
 * read at each call, and NULL answers that they are not. */
int apps_bus_manager_setup(sd_bus *bus, Apps *const *apps, sd_bus_slot **ret);
