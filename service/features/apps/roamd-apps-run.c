/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Apps' grants (online for a task, release) and `roam run` without systemd: the app's
 * cgroup, its nftables element, then the caller's process moved into it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-apps.h"
#include "roamd-cgroup.h"
#include "roamd-core.h"

static uint64_t now(clockid_t clock)
{
        struct timespec ts;
        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

static int on_grant_end(sd_event_source *s, uint64_t usec, void *userdata)
{
        App *app = userdata;

        log_info("app %s: online for a task ended", app->id);
        (void)apps_release(app->apps, app);
        /* a grant given to an app that never ran (or no longer runs) kept it alone */
        app_forget_if_unused(app->apps, app);
        return 0;
}

int apps_online_for(Apps *a, App *app, uint64_t usec)
{
        uint64_t old = app->online_until;
        int r;

        if (app->special)
                return -EINVAL;
        app->online_until = usec == UINT64_MAX ? UINT64_MAX : now(CLOCK_REALTIME) + usec;
        r = app_reclass(a, app);
        if (r < 0) {
                app->online_until = old;
                return r;
        }
        app->grant_timer = sd_event_source_disable_unref(app->grant_timer);
        if (usec != UINT64_MAX) {
                r = sd_event_add_time_relative(apps_core(a)->event, &app->grant_timer,
                                               CLOCK_MONOTONIC, usec, USEC_PER_SEC / 10,
                                               on_grant_end, app);
                if (r < 0)
                        log_warning_errno(r, "app %s: cannot arm the end of its grant: %m",
                                          app->id);
        }
        log_info("app %s: online for a task %s", app->id,
                 usec == UINT64_MAX ? "until released" : "for a while");
        app_refresh(app, true);
        apps_bus_emit_changed(app, "OnlineUntil", NULL);
        return 0;
}

int apps_release(Apps *a, App *app)
{
        uint64_t old = app->online_until;
        int r;

        app->grant_timer = sd_event_source_disable_unref(app->grant_timer);
        if (old == 0)
                return 0;
        app->online_until = 0;
        r = app_reclass(a, app);
        /* A grant that ended stays ended: when the kernel refuses, the reconciler retries. */
        apps_bus_emit_changed(app, "OnlineUntil", NULL);
        if (r < 0) {
                _cleanup_free_ char *what = NULL;
                if (asprintf(&what, "end of the grant of app %s", app->id) < 0)
                        return log_oom();
                note_refused(a, what, r);
                return r;
        }
        app_refresh(app, true);
        return 0;
}

int apps_run_prepare(Apps *a, const char *id, uint64_t online_for_usec, App **ret)
{
        App *app;
        int r;

        if (!app_id_is_valid(id) || app_id_is_special(id))
                return -EINVAL;
        r = app_get_or_create(a, id, &app);
        if (r < 0)
                return r;
        if (!app->cls)
                return -EIO;
        if (online_for_usec > 0) {
                r = apps_online_for(a, app, online_for_usec);
                if (r < 0)
                        return r;
        }
        *ret = app;
        return 0;
}

int apps_adopt_cgroup(Apps *a, const char *app_id, const char *path, const CgroupNode **ret)
{
        const CgroupNode *n = NULL;
        int r;

        r = cgroup_tree_adopt(apps_cgroups(a), path, &n);
        if (r < 0)
                return r;
        if (n->cls.kind != CGROUP_KIND_APP || !streq(n->cls.app_id, app_id))
                return -EBADSLT; /* not named as this app's scope */
        r = apps_cgroup_install(a, n->id);
        if (r < 0)
                return r == -EBUSY ? -EIO : r;
        *ret = n;
        return 0;
}

int apps_run(Apps *a, const char *id, int pidfd, pid_t caller, uid_t caller_uid,
             uint64_t online_for_usec, const char **ret_cgroup)
{
        const CgroupNode *n = NULL;
        App *app;
        int r;

        r = apps_run_prepare(a, id, online_for_usec, &app);
        if (r < 0)
                return r;
        /* The cgroup and its element first (the ADDED event commits it), then the move. */
        r = cgroup_tree_make_app(apps_cgroups(a), id, &n);
        if (r < 0) {
                app_forget_if_unused(a, app);
                return log_warning_errno(r, "app %s: cannot create its cgroup: %m", id);
        }
        r = apps_cgroup_install(a, n->id);
        if (r < 0)
                return log_warning_errno(EIO, "app %s: its cgroup is not in nftables, not moving",
                                         id);
        r = cgroup_tree_move_pidfd(apps_cgroups(a), n, pidfd, caller, caller_uid);
        if (r < 0)
                return log_warning_errno(r, "app %s: cannot move process %d into %s: %m", id,
                                         (int)caller, n->path);
        log_info("app %s: process %d runs in %s", id, (int)caller, n->path);
        *ret_cgroup = n->path;
        return 0;
}
