/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdlib.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-words.h"
#include "roamd-bus-auth.h"
#include "roam-app-id.h"
#include "roamd-apps.h"
#include "roamd-cgroup.h"
#include "roamd-core.h"

#define ONLINE_FOR_MAX_USEC (24ULL * 3600 * USEC_PER_SEC)

/* The manager's app methods are answered here with its Apps, NULL when apps are not
 * governed. */
static Apps *governed(Apps *a, sd_bus_error *error)
{
        if (!a)
                sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                 "Apps are not governed here ([Apps] Enforce=no, or no cgroup v2; "
                                 "see roamd's log).");
        return a;
}

/* A change the kernel (nftables, routing) did not take: it was applied as a whole or not. */
static int refused(sd_bus_error *error, int r)
{
        return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                 "The kernel refused the change (%s); nothing changed.",
                                 strerror(-r));
}

/* A change roamd keeps wanting: the reconciler retries it (apps_set_policy()). */
static int refused_retrying(sd_bus_error *error, int r)
{
        if (r == -EBUSY)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                         "The app's class is not in the kernel yet (see "
                                         "Manager.Degraded); nothing changed.");
        return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                 "The kernel refused the change (%s): the last good state stays "
                                 "in force, and roamd applies the change as soon as the kernel "
                                 "accepts it (see Manager.Degraded).",
                                 strerror(-r));
}

static int property_get_string(sd_bus *bus, const char *path, const char *interface,
                               const char *property, sd_bus_message *reply, void *userdata,
                               sd_bus_error *error)
{
        App *app = userdata;
        const char *v = NULL;

        if (streq(property, "Id"))
                v = app->id;
        else if (streq(property, "Access"))
                v = app_access_to_string(app->effective.access);
        else if (streq(property, "VPN"))
                v = app->id && streq(app->id, APP_ID_SYSTEM)
                        ? "any"
                        : app_vpn_to_string(app->effective.vpn);
        else if (streq(property, "Handover"))
                v = app_handover_to_string(app->effective.handover);
        else if (streq(property, "Source"))
                v = app_policy_source_to_string(app->runtime.set  ? APP_POLICY_SOURCE_RUNTIME
                                                : app->config.set ? APP_POLICY_SOURCE_CONFIG
                                                                  : APP_POLICY_SOURCE_BUILTIN);
        else if (streq(property, "Route4"))
                v = app->route[0];
        else if (streq(property, "Route6"))
                v = app->route[1];
        else if (streq(property, "State"))
                v = app->state_text ?: app_state_to_string(app->state);
        return sd_bus_message_append(reply, "s", strempty(v));
}

static int property_get_bearers(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        App *app = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        for (int b = 0; b < _BEARER_MAX; b++)
                if (app->effective.bearers & (1u << b)) {
                        r = sd_bus_message_append(reply, "s", bearer_to_string(b));
                        if (r < 0)
                                return r;
                }
        return sd_bus_message_close_container(reply);
}

/* The wake keys of the policy (docs/wake.md): the App object has them with the other keys,
 * whether or not the ordered wake-up runs, so a policy change emits them all in one signal. */
static int property_get_wake(sd_bus *bus, const char *path, const char *interface,
                             const char *property, sd_bus_message *reply, void *userdata,
                             sd_bus_error *error)
{
        App *app = userdata;

        if (streq(property, "Wake"))
                return sd_bus_message_append(reply, "i", app_policy_wake_priority(&app->effective));
        if (streq(property, "WakeSlice"))
                return sd_bus_message_append(reply, "t", app_policy_wake_slice(&app->effective));
        return sd_bus_message_append(reply, "t", app_policy_wake_bytes(&app->effective));
}

static int property_get_cgroups(sd_bus *bus, const char *path, const char *interface,
                                const char *property, sd_bus_message *reply, void *userdata,
                                sd_bus_error *error)
{
        App *app = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "s");
        if (r < 0)
                return r;
        for (size_t i = 0; i < app->n_cgroups; i++) {
                if (app->cgroups[i].gone)
                        continue;
                r = sd_bus_message_append(reply, "s", app->cgroups[i].path);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_online_until(sd_bus *bus, const char *path, const char *interface,
                                     const char *property, sd_bus_message *reply, void *userdata,
                                     sd_bus_error *error)
{
        App *app = userdata;

        return sd_bus_message_append(reply, "t", app->online_until);
}

static int method_online_for(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        App *app = userdata;
        uint64_t usec;
        int r;

        r = sd_bus_message_read(msg, "t", &usec);
        if (r < 0)
                return r;
        if (app->special)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "%s is not an app: online for a task is for one app.",
                                         app->id);
        if (usec == 0 || (usec > ONLINE_FOR_MAX_USEC && usec != UINT64_MAX))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "The duration must be more than 0 and at most a day "
                                         "(or UINT64_MAX: until released).");
        r = bus_check_authorized(msg, "org.roam1.change-app-policy", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = apps_online_for(app->apps, app, usec);
        if (r < 0)
                return refused(error, r);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_release(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        App *app = userdata;
        int r;

        r = bus_check_authorized(msg, "org.roam1.change-app-policy", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = apps_release(app->apps, app);
        if (r < 0)
                return refused_retrying(error, r);
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable app_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Id", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Access", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Bearers", "as", property_get_bearers, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("VPN", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Handover", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Wake", "i", property_get_wake, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakeSlice", "t", property_get_wake, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakeBytes", "t", property_get_wake, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Source", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Route4", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Route6", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("State", "s", property_get_string, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("OnlineUntil", "t", property_get_online_until, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Cgroups", "as", property_get_cgroups, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("OnlineFor", SD_BUS_ARGS("t", usec), SD_BUS_NO_RESULT,
                            method_online_for, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Release", NULL, NULL, method_release, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

static int app_bus_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                        void **found, sd_bus_error *error)
{
        Apps *a = userdata;
        _cleanup_free_ char *id = NULL;
        App *app;

        if (sd_bus_path_decode(path, ROAM_APP_PATH_PREFIX, &id) <= 0)
                return 0;
        app = apps_get(a, id);
        if (!app)
                return 0;
        *found = app;
        return 1;
}

static int app_bus_enumerate(sd_bus *bus, const char *prefix, void *userdata, char ***nodes,
                             sd_bus_error *error)
{
        Apps *a = userdata;
        size_t n = apps_count(a);
        char **l = calloc(n + 1, sizeof(char *));

        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                l[i] = strdup(apps_nth(a, i)->path);
                if (!l[i]) {
                        strv_free(l);
                        return -ENOMEM;
                }
        }
        *nodes = l;
        return 0;
}

int apps_bus_setup(Apps *a)
{
        Core *c = apps_core(a);
        int r;

        if (!c->bus)
                return 0;
        r = sd_bus_add_fallback_vtable(c->bus, apps_slot(a, false), ROAM_APP_PATH_PREFIX,
                                       ROAM_APP_INTERFACE, app_vtable, app_bus_find, a);
        if (r < 0)
                return log_error_errno(r, "Failed to add app objects: %m");
        r = sd_bus_add_node_enumerator(c->bus, apps_slot(a, true), ROAM_APP_PATH_PREFIX,
                                       app_bus_enumerate, a);
        if (r < 0)
                return log_error_errno(r, "Failed to add app enumerator: %m");
        for (size_t i = 0; i < apps_count(a); i++)
                (void)apps_bus_announce(apps_nth(a, i));
        return 0;
}

int apps_bus_announce(App *app)
{
        Core *c = apps_core(app->apps);
        int r;

        if (!c->bus)
                return 0;
        r = sd_bus_emit_interfaces_added(c->bus, app->path, ROAM_APP_INTERFACE, NULL);
        if (r < 0)
                return log_warning_errno(r, "app %s: failed to emit InterfacesAdded: %m", app->id);
        return 0;
}

int apps_bus_retract(App *app)
{
        Core *c = apps_core(app->apps);
        int r;

        if (!c->bus)
                return 0;
        r = sd_bus_emit_interfaces_removed(c->bus, app->path, ROAM_APP_INTERFACE, NULL);
        if (r < 0)
                return log_warning_errno(r, "app %s: failed to emit InterfacesRemoved: %m",
                                         app->id);
        return 0;
}

void apps_bus_emit_changed_strv(App *app, char **names)
{
        Core *c = apps_core(app->apps);
        int r;

        if (!c->bus || !names || !names[0])
                return;
        r = sd_bus_emit_properties_changed_strv(c->bus, app->path, ROAM_APP_INTERFACE, names);
        if (r < 0)
                log_warning_errno(r, "app %s: failed to emit PropertiesChanged: %m", app->id);
}

void apps_bus_emit_changed(App *app, const char *first, ...)
{
        const char *names[16];
        size_t n = 0;
        va_list ap;

        if (!first)
                return;
        va_start(ap, first);
        for (const char *p = first; p && n < ELEMENTSOF(names) - 1; p = va_arg(ap, const char *))
                names[n++] = p;
        va_end(ap);
        names[n] = NULL;
        apps_bus_emit_changed_strv(app, (char **)names);
}

static int read_id(sd_bus_message *msg, const char **ret, sd_bus_error *error)
{
        int r = sd_bus_message_read(msg, "s", ret);
        if (r < 0)
                return r;
        if (!app_policy_id_is_valid(*ret))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Invalid app ID \"%.64s\": 1-255 characters of "
                                         "A-Z a-z 0-9 . _ -, starting with a letter or digit "
                                         "(or user:UID).",
                                         *ret);
        return 0;
}

/* The app a method names by ID: InvalidArguments or NoSuchApp otherwise. */
static int read_app(sd_bus_message *msg, Apps *apps, sd_bus_error *error, App **ret)
{
        Apps *a = governed(apps, error);
        const char *id;
        int r;

        if (!a)
                return -EOPNOTSUPP;
        r = read_id(msg, &id, error);
        if (r < 0)
                return r;
        *ret = apps_get(a, id);
        if (!*ret)
                return sd_bus_error_setf(error, ROAM_ERROR_NO_SUCH_APP, "No app %s.", id);
        return 0;
}

static int method_get_app(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Apps *apps = *(Apps *const *)userdata;
        App *app;
        int r;

        r = read_app(msg, apps, error, &app);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, "o", app->path);
}

static int method_set_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Apps *apps = *(Apps *const *)userdata;
        Apps *a = governed(apps, error);
        AppPolicy changes = {};
        const char *id, *key, *value;
        App *app;
        int r;

        if (!a)
                return -EOPNOTSUPP;
        r = read_id(msg, &id, error);
        if (r < 0)
                return r;
        /* Parse everything before asking anyone: bad input is refused as a whole. */
        r = sd_bus_message_enter_container(msg, 'a', "{ss}");
        if (r < 0)
                return r;
        while ((r = sd_bus_message_read(msg, "{ss}", &key, &value)) > 0) {
                _cleanup_free_ char *why = NULL;
                if (app_policy_assign(&changes, key, value, &why) < 0)
                        return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "%s",
                                                 why ? why : "invalid setting");
        }
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(msg);
        if (r < 0)
                return r;
        if (changes.set == 0)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "No settings given (%s).",
                                         roam_app_keys_text());
        if (streq(id, APP_ID_SYSTEM) && (changes.set & ~APP_KEY_ACCESS))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "The system policy has only an access; its traffic is "
                                         "routed by the main table.");
        r = bus_check_authorized(msg, "org.roam1.change-app-policy", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = apps_set_policy(a, id, &changes, &app);
        if (r < 0)
                return refused_retrying(error, r);
        return sd_bus_reply_method_return(msg, "o", app->path);
}

static int method_reset_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Apps *apps = *(Apps *const *)userdata;
        App *app;
        int r;

        r = read_app(msg, apps, error, &app);
        if (r < 0)
                return r;
        r = bus_check_authorized(msg, "org.roam1.change-app-policy", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = apps_reset_policy(app->apps, app);
        if (r < 0)
                return refused_retrying(error, r);
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_run(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Apps *apps = *(Apps *const *)userdata;
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        Apps *a = governed(apps, error);
        const char *id, *cgroup = NULL;
        uint64_t online_for;
        pid_t pid;
        uid_t uid;
        int pidfd, r;

        if (!a)
                return -EOPNOTSUPP;
        r = read_id(msg, &id, error);
        if (r < 0)
                return r;
        r = sd_bus_message_read(msg, "ht", &pidfd, &online_for);
        if (r < 0)
                return r;
        if (app_id_is_special(id))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "%s is a policy, not an app to run under.", id);
        if (online_for > ONLINE_FOR_MAX_USEC && online_for != UINT64_MAX)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "online_for_usec must be at most a day (or UINT64_MAX).");
        r = bus_check_authorized(msg, "org.roam1.run-app", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        /* A grant is a policy change: running does not include it. */
        if (online_for > 0) {
                r = bus_check_authorized(msg, "org.roam1.change-app-policy", error);
                if (r != 0) /* refused, or polkit asked: answered later */
                        return r;
        }
        /* What the bus proves (its daemon took both from the connection's SO_PEERCRED), not
         * what /proc says now: no AUGMENT. */
        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_PID | SD_BUS_CREDS_EUID, &creds);
        if (r < 0 || sd_bus_creds_get_pid(creds, &pid) < 0 ||
            sd_bus_creds_get_euid(creds, &uid) < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                         "Cannot determine the caller's process.");
        /* Before any app, cgroup or grant exists: a refused call leaves nothing behind. */
        r = pidfd_check_caller(pidfd, pid, uid);
        if (r < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "The pidfd must be the calling process's own (%s).",
                                         strerror(-r));
        if (apps_systemd_running(a)) {
                App *app;
                if (!apps_systemd_id_fits(id))
                        return sd_bus_error_setf(
                            error, ROAM_ERROR_INVALID_ARGS,
                            "%s is too long for a systemd scope's name (app-roam-ID-RANDOM.scope: "
                            "at most 255 characters, each '-' of the ID counting 4).",
                            id);
                r = apps_run_prepare(a, id, online_for, &app);
                if (r >= 0)
                        r = apps_systemd_run(a, id, msg, pidfd, pid);
                if (r >= 0)
                        return 1; /* answered when systemd's scope is ready */
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "Cannot run under %s: %s.", id,
                                         strerror(-r));
        }
        r = apps_run(a, id, pidfd, pid, uid, online_for, &cgroup);
        if (r == -EPERM || r == -ESRCH || r == -EBADF || r == -EINVAL)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "The pidfd must be the calling process's own (%s).",
                                         strerror(-r));
        if (r < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "Cannot run under %s: %s.", id,
                                         strerror(-r));
        return sd_bus_reply_method_return(msg, "s", cgroup);
}

static int property_get_marks(sd_bus *bus, const char *path, const char *interface,
                              const char *property, sd_bus_message *reply, void *userdata,
                              sd_bus_error *error)
{
        Apps *a = *(Apps *const *)userdata;

        if (streq(property, "FirewallMaskSuggestion")) {
                uint32_t v = apps_mask_suggestion(a);
                char buf[16] = "";
                if (v)
                        snprintf(buf, sizeof(buf), "0x%08x", v);
                return sd_bus_message_append(reply, "s", buf);
        }
        return sd_bus_message_append_strv(reply, apps_mark_conflicts(a));
}

/* The apps' members of org.roam1.Manager: a vtable of their own beside the manager's (sd-bus
 * merges the vtables of one interface on one path). */
static const sd_bus_vtable apps_manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("MarkConflicts", "as", property_get_marks, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("FirewallMaskSuggestion", "s", property_get_marks, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("GetApp", SD_BUS_ARGS("s", id), SD_BUS_RESULT("o", app), method_get_app,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("SetAppPolicy", SD_BUS_ARGS("s", id, "a{ss}", settings),
                            SD_BUS_RESULT("o", app), method_set_policy, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("ResetAppPolicy", SD_BUS_ARGS("s", id), SD_BUS_NO_RESULT,
                            method_reset_policy, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("RunApp", SD_BUS_ARGS("s", id, "h", pidfd, "t", online_for_usec),
                            SD_BUS_RESULT("s", cgroup), method_run, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int apps_bus_manager_setup(sd_bus *bus, Apps *const *apps, sd_bus_slot **ret)
{
        int r;

        r = sd_bus_add_object_vtable(bus, ret, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                                     apps_manager_vtable, (void *)apps);
        if (r < 0)
                return log_error_errno(r, "Failed to add the apps' manager members: %m");
        return 0;
}
