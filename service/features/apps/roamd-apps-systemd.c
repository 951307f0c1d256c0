/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* `roam run` when systemd manages the machine: the system manager creates a transient scope
 * app-roam-<ID>-<random>.scope in app.slice with the caller in it (StartTransientUnit), roamd
 * adopts its cgroup and installs the app's nftables element, and only then answers, so the
 * caller's exec after the reply already runs governed. The name is the XDG form
 * (app-<launcher>-<ID>-<RANDOM>.scope): systemd allows no '@' (an instance) in a scope's
 * name. */
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-apps.h"
#include "roamd-cgroup.h"
#include "roamd-core.h"

#define SD_BUS_DEST      "org.freedesktop.systemd1"
#define SD_BUS_PATH      "/org/freedesktop/systemd1"
#define SD_BUS_MANAGER   "org.freedesktop.systemd1.Manager"
#define RUN_TIMEOUT_USEC (15 * USEC_PER_SEC)
/* systemd's UNIT_NAME_MAX is 256 with the NUL */
#define UNIT_NAME_MAX_LEN 255
#define SCOPE_PREFIX      "app-roam-"
#define SCOPE_SUFFIX      ".scope"
#define SCOPE_RANDOM_LEN  16

struct RunRequest {
        Apps *apps;
        RunRequest *next;
        sd_bus_message *call; /* the RunApp call, answered when the scope is ready */
        char *app_id;
        char *unit;
        int pidfd;
        pid_t pid;
        sd_bus_slot *match_slot, *start_slot;
        sd_bus_slot *query_slot; /* GetUnit, then the scope's ControlGroup */
        sd_event_source *timeout;
};

bool apps_systemd_running(Apps *a)
{
        /* sd_booted()'s test, then the manager on the bus we were given. */
        return access("/run/systemd/system", F_OK) == 0 && apps_systemd_on_bus(a);
}

static RunRequest *run_request_free(RunRequest *q)
{
        if (!q)
                return NULL;
        sd_bus_slot_unref(q->match_slot);
        sd_bus_slot_unref(q->start_slot);
        sd_bus_slot_unref(q->query_slot);
        sd_event_source_disable_unref(q->timeout);
        sd_bus_message_unref(q->call);
        if (q->pidfd >= 0)
                close(q->pidfd);
        free(q->app_id);
        free(q->unit);
        free(q);
        return NULL;
}

static void run_request_done(RunRequest *q)
{
        RunRequest **p = apps_runs(q->apps);

        for (; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        break;
                }
        run_request_free(q);
}

void apps_systemd_free_all(Apps *a)
{
        RunRequest **p = apps_runs(a);

        while (*p) {
                RunRequest *q = *p;
                *p = q->next;
                run_request_free(q);
        }
}

static void run_fail(RunRequest *q, const char *name, const char *fmt, ...) _printf_(3, 4);
static void run_fail(RunRequest *q, const char *name, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        log_warning("app %s: systemd scope %s: %s", q->app_id, strempty(q->unit), strempty(msg));
        (void)sd_bus_reply_method_errorf(q->call, name, "%s", msg ? msg : "systemd failed");
        /* the app made for this run, when nothing else keeps it */
        App *app = apps_get(q->apps, q->app_id);
        if (app)
                app_forget_if_unused(q->apps, app);
        run_request_done(q);
}

/* The scope's cgroup is known: govern it, check the caller is in it, answer. */
static int run_adopt(RunRequest *q, const char *cgroup)
{
        _cleanup_free_ char *want = NULL, *line = NULL, *procfile = NULL;
        const CgroupNode *n = NULL;
        int r;

        /* The element first (ADDED commits it), then check the caller really is in there. */
        r = apps_adopt_cgroup(q->apps, q->app_id, cgroup, &n);
        if (r < 0) {
                run_fail(q, ROAM_ERROR_FAILED, "cannot govern the scope's cgroup: %s",
                         strerror(-r));
                return 0;
        }
        r = pidfd_still(q->pidfd, q->pid);
        if (r < 0) {
                run_fail(q, ROAM_ERROR_INVALID_ARGS, "the caller is gone: %s", strerror(-r));
                return 0;
        }
        if (asprintf(&procfile, "/proc/%d/cgroup", (int)q->pid) < 0 ||
            asprintf(&want, "0::%s", cgroup) < 0)
                return log_oom();
        /* the cgroup v2 line ("0::PATH"; hybrid systems list v1 hierarchies too) */
        r = read_full_file(procfile, 64 * 1024, &line, NULL);
        const char *v2 = r < 0 ? NULL : strstr(line, "\n0::");
        if (r >= 0 && strncmp(line, "0::", 3) == 0)
                v2 = line;
        else if (v2)
                v2++;
        if (!v2 || strncmp(v2, want, strlen(want)) != 0 ||
            (v2[strlen(want)] != '\n' && v2[strlen(want)] != '\0')) {
                run_fail(q, ROAM_ERROR_FAILED, "systemd did not move the caller into %s", cgroup);
                return 0;
        }
        log_info("app %s: process %d runs in %s (systemd scope %s)", q->app_id, (int)q->pid, cgroup,
                 q->unit);
        (void)sd_bus_reply_method_return(q->call, "s", cgroup);
        run_request_done(q);
        return 0;
}

static int on_control_group(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        RunRequest *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        const char *cgroup = NULL;

        q->query_slot = sd_bus_slot_unref(q->query_slot);
        if (e || sd_bus_message_enter_container(reply, 'v', "s") < 0 ||
            sd_bus_message_read(reply, "s", &cgroup) < 0 || !cgroup || cgroup[0] != '/') {
                run_fail(q, ROAM_ERROR_FAILED, "no cgroup for the scope: %s",
                         e && e->message ? e->message : "ControlGroup missing");
                return 0;
        }
        return run_adopt(q, cgroup);
}

static int on_get_unit(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        RunRequest *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        Core *c = apps_core(q->apps);
        const char *unit_path;
        int r;

        q->query_slot = sd_bus_slot_unref(q->query_slot);
        if (e || sd_bus_message_read(reply, "o", &unit_path) < 0) {
                run_fail(q, ROAM_ERROR_FAILED, "systemd does not know the scope: %s",
                         e && e->message ? e->message : "GetUnit failed");
                return 0;
        }
        r = sd_bus_call_method_async(c->bus, &q->query_slot, SD_BUS_DEST, unit_path,
                                     "org.freedesktop.DBus.Properties", "Get", on_control_group, q,
                                     "ss", "org.freedesktop.systemd1.Scope", "ControlGroup");
        if (r < 0)
                run_fail(q, ROAM_ERROR_FAILED, "cannot ask systemd for the scope's cgroup: %s",
                         strerror(-r));
        return 0;
}

/* The scope's job is done: its unit object, then its cgroup, asked without blocking the loop
 * (systemd may be slow: PID 1 under load answers in seconds). */
static int run_finish(RunRequest *q)
{
        Core *c = apps_core(q->apps);
        int r;

        if (q->query_slot) /* asked already */
                return 0;
        r = sd_bus_call_method_async(c->bus, &q->query_slot, SD_BUS_DEST, SD_BUS_PATH,
                                     SD_BUS_MANAGER, "GetUnit", on_get_unit, q, "s", q->unit);
        if (r < 0)
                run_fail(q, ROAM_ERROR_FAILED, "cannot ask systemd for the scope: %s",
                         strerror(-r));
        return 0;
}

static int on_job_removed(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        RunRequest *q = userdata;
        const char *job, *unit, *result;
        uint32_t id;

        if (sd_bus_message_read(msg, "uoss", &id, &job, &unit, &result) < 0 ||
            !streq(unit, q->unit))
                return 0;
        if (!streq(result, "done")) {
                run_fail(q, ROAM_ERROR_FAILED, "systemd could not start the scope (%s)", result);
                return 0;
        }
        return run_finish(q);
}

static int on_start_reply(sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        RunRequest *q = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);

        q->start_slot = sd_bus_slot_unref(q->start_slot);
        if (e)
                run_fail(q, ROAM_ERROR_FAILED, "StartTransientUnit failed: %s", e->message);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        run_fail(userdata, ROAM_ERROR_FAILED, "%s", "systemd did not start the scope in time");
        return 0;
}

/* The ID as it stands in a unit name: systemd's escaping of '-' (\x2d), the only character
 * of the app ID alphabet that is not valid in a name component as it is (a '-' separates the
 * launcher, the ID and the random part). */
static size_t escaped_len(const char *id)
{
        size_t n = 0;

        for (const char *c = id; *c; c++)
                n += *c == '-' ? 4 : 1;
        return n;
}

bool apps_systemd_id_fits(const char *id)
{
        return strlen(SCOPE_PREFIX) + escaped_len(id) + 1 + SCOPE_RANDOM_LEN +
                   strlen(SCOPE_SUFFIX) <=
               UNIT_NAME_MAX_LEN;
}

/* app-roam-<escaped ID>-<16 random hex digits>.scope: unique without a counter that restarts
 * with roamd (systemd refuses a name it still has loaded). */
static int unit_name(const char *id, char **ret)
{
        uint64_t rnd;
        char *p, *name;

        if (!apps_systemd_id_fits(id))
                return -ENAMETOOLONG;
        if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
                return -errno;
        name = malloc(UNIT_NAME_MAX_LEN + 1);
        if (!name)
                return -ENOMEM;
        p = stpcpy(name, SCOPE_PREFIX);
        for (const char *c = id; *c; c++)
                if (*c == '-')
                        p = stpcpy(p, "\\x2d");
                else
                        *p++ = *c;
        sprintf(p, "-%016" PRIx64 SCOPE_SUFFIX, rnd);
        *ret = name;
        return 0;
}

int apps_systemd_run(Apps *a, const char *app_id, sd_bus_message *call, int pidfd, pid_t pid)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        Core *core = apps_core(a);
        RunRequest *q;
        int r;

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        q->apps = a;
        q->pidfd = fcntl(pidfd, F_DUPFD_CLOEXEC, 3);
        q->pid = pid;
        q->call = sd_bus_message_ref(call);
        q->app_id = strdup(app_id);
        if (q->pidfd < 0 || !q->app_id) {
                run_request_free(q);
                return -ENOMEM;
        }
        r = unit_name(app_id, &q->unit);
        if (r < 0) {
                run_request_free(q);
                return r;
        }
        /* systemd sends job signals to subscribers only. */
        (void)sd_bus_call_method_async(core->bus, NULL, SD_BUS_DEST, SD_BUS_PATH, SD_BUS_MANAGER,
                                       "Subscribe", NULL, NULL, NULL);
        r = sd_bus_match_signal_async(core->bus, &q->match_slot, SD_BUS_DEST, SD_BUS_PATH,
                                      SD_BUS_MANAGER, "JobRemoved", on_job_removed, NULL, q);
        if (r >= 0)
                r = sd_bus_message_new_method_call(core->bus, &m, SD_BUS_DEST, SD_BUS_PATH,
                                                   SD_BUS_MANAGER, "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", q->unit, "fail");
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sv)", 4, "Slice", "s", "app.slice", "Description",
                                          "s", "roam app", "CollectMode", "s", "inactive-or-failed",
                                          "PIDs", "au", 1, (uint32_t)pid);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r >= 0)
                r = sd_bus_call_async(core->bus, &q->start_slot, m, on_start_reply, q,
                                      RUN_TIMEOUT_USEC);
        if (r >= 0)
                r = sd_event_add_time_relative(core->event, &q->timeout, CLOCK_MONOTONIC,
                                               RUN_TIMEOUT_USEC, 0, on_timeout, q);
        if (r < 0) {
                run_request_free(q);
                return r;
        }
        q->next = *apps_runs(a);
        *apps_runs(a) = q;
        log_debug("app %s: asking systemd for scope %s", app_id, q->unit);
        return 0;
}
