/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>
#include <time.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roam-app-id.h"
#include "roamd-apps.h"
#include "roamd-core.h"
#include "roamd-wake-run.h"

/* A Register()ed app: its client is followed, and its registration ends with it. */
struct WakeReg {
        WakeRun *w;
        char *id;
        uid_t uid; /* the user whose subtree it came from, UID_INVALID: none (the system's) */
        sd_bus_track *track;
};

static WakeReg *reg_free(WakeReg *g)
{
        if (!g)
                return NULL;
        sd_bus_track_unref(g->track);
        free(g->id);
        free(g);
        return NULL;
}

void wake_regs_free(WakeRun *w)
{
        for (size_t i = 0; i < w->n_regs; i++)
                reg_free(w->regs[i]);
        free(w->regs);
        w->regs = NULL;
        w->n_regs = 0;
}

static WakeReg *reg_find(WakeRun *w, const char *id)
{
        for (size_t i = 0; i < w->n_regs; i++)
                if (streq(w->regs[i]->id, id))
                        return w->regs[i];
        return NULL;
}

static void reg_remove(WakeRun *w, WakeReg *g)
{
        for (size_t i = 0; i < w->n_regs; i++)
                if (w->regs[i] == g) {
                        memmove(&w->regs[i], &w->regs[i + 1],
                                (w->n_regs - i - 1) * sizeof(WakeReg *));
                        w->n_regs--;
                        break;
                }
        reg_free(g);
}

/* The app left the list: its registration goes with it. */
int wake_reg_drop(WakeRun *w, const char *id)
{
        WakeReg *g = reg_find(w, id);

        if (!g)
                return -ENOENT;
        reg_remove(w, g);
        return 0;
}

void wake_reg_cgroup_added(WakeRun *w, const char *id, uid_t uid)
{
        WakeReg *g = reg_find(w, id);

        if (!g || g->uid == UID_INVALID || g->uid == uid)
                return;
        /* user U's processes speak for U's instance of the app only: now that another one
         * exists, the registration is dropped (its client leaving would end the other's turn,
         * its options would be the other's); the turn goes on */
        log_info("wake: %s: a cgroup of it outside user %u's subtree appeared: the registration "
                 "made from there no longer speaks for the app",
                 id, (unsigned)g->uid);
        reg_remove(w, g);
        (void)wake_app_unregister(w->queue, id, false);
}

static int on_client_gone(sd_bus_track *track, void *userdata)
{
        WakeReg *g = userdata;
        WakeRun *w = g->w;
        _cleanup_free_ char *id = strdup(g->id);

        if (!id)
                return log_oom();
        log_info("wake: %s: the client that registered it went away", id);
        reg_remove(w, g);
        (void)wake_app_unregister(w->queue, id, true);
        return 0;
}

/* The App objects' wake members are a vtable of the WakeRun's own: the object found is the
 * App, the WakeRun is the userdata of the slot that runs (sd_bus_get_current_slot()). */
static WakeRun *current_wake(sd_bus *bus)
{
        sd_bus_slot *slot = sd_bus_get_current_slot(bus);

        return slot ? sd_bus_slot_get_userdata(slot) : NULL;
}

static WakeRun *app_wake(sd_bus_message *msg, sd_bus_error *error)
{
        WakeRun *w = current_wake(sd_bus_message_get_bus(msg));

        if (!w)
                sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                 "Apps are not governed here ([Apps] Enforce=no, or no cgroup v2; "
                                 "see roamd's log).");
        return w;
}

/* Whether the caller is a process of app: its cgroup is one of the app's, or below one;
 * *ret_uid: the user whose subtree holds that cgroup (UID_INVALID: none). */
static int caller_is_app(sd_bus_message *msg, App *app, uid_t *ret_uid)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        _cleanup_free_ char *text = NULL;
        char path[64];
        const char *cg = NULL;
        size_t size;
        pid_t pid;
        int r;

        r = sd_bus_query_sender_creds(msg, SD_BUS_CREDS_PID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r < 0 || sd_bus_creds_get_pid(creds, &pid) < 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        r = read_full_file(path, 64 * 1024, &text, &size);
        if (r < 0)
                return r;
        /* cgroup v2: the line "0::/path" */
        for (char *l = text; l && *l;) {
                char *nl = strchr(l, '\n');

                if (nl)
                        *nl = 0;
                if (strncmp(l, "0::", 3) == 0)
                        cg = l + 3;
                l = nl ? nl + 1 : NULL;
        }
        if (!cg)
                return -ENOMEDIUM;
        for (size_t i = 0; i < app->n_cgroups; i++) {
                const char *p = app->cgroups[i].path;
                size_t n = strlen(p);

                if (strncmp(cg, p, n) == 0 && (cg[n] == 0 || cg[n] == '/')) {
                        *ret_uid = app->cgroups[i].uid;
                        return 1;
                }
        }
        return 0;
}

/* Whether every cgroup of app is in uid's subtree: then user uid's processes speak for the
 * whole app. A scope a user names like an app is that user's instance only. */
static bool app_is_users(const App *app, uid_t uid)
{
        for (size_t i = 0; i < app->n_cgroups; i++)
                if (app->cgroups[i].uid != uid)
                        return false;
        return true;
}

static int check_caller(sd_bus_message *msg, App *app, const char *what, uid_t *ret_uid,
                        sd_bus_error *error)
{
        uid_t uid = UID_INVALID;
        int r = caller_is_app(msg, app, &uid);

        if (r > 0 && uid != UID_INVALID && !app_is_users(app, uid))
                return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                         "%s: the caller's cgroup is in user %u's subtree, and "
                                         "app %s runs elsewhere too (another user's or the "
                                         "system's): a user's processes act for that user's "
                                         "instance of an app only.",
                                         what, (unsigned)uid, app->id);
        if (r > 0) {
                if (ret_uid)
                        *ret_uid = uid;
                return 0;
        }
        if (r < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                         "%s: cannot tell the caller's cgroup (%s).", what,
                                         strerror(-r));
        return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                 "%s is for a process of app %s; the caller is not one.", what,
                                 app->id);
}

/* ---- org.roam1.App: the queue's state, Register, Done, Wake ---- */
/* (the wake keys of the policy, Wake, WakeSlice and WakeBytes, are the App object's own:
 * roamd-apps-bus.c) */

typedef struct RegisterOptions {
        uint64_t max_delay, bytes;
        bool needs_time;
} RegisterOptions;

static int set_max_delay(sd_bus_message *m, const char *key, void *field)
{
        uint64_t *v = field;
        int r = bus_map_u64(m, key, v);

        return r < 0 ? r : *v == 0 || *v > 24ULL * 3600 * USEC_PER_SEC ? -ERANGE : 0;
}

/* Class is accepted (its type checked) and not used. */
static const BusMapEntry register_map[] = {
    {"Class", "s", bus_map_ignore, 0},
    {"EstimatedBytes", "t", bus_map_u64, offsetof(RegisterOptions, bytes)},
    {"MaxDelayUSec", "t", set_max_delay, offsetof(RegisterOptions, max_delay)},
    {"NeedsTime", "b", bus_map_bool, offsetof(RegisterOptions, needs_time)},
    {},
};

/* Everything is read before anything changes: bad input is refused as a whole. */
static int read_register_options(sd_bus_message *msg, RegisterOptions *o, sd_bus_error *error)
{
        const char *key;
        int r;

        r = bus_map_read_flags(msg, register_map, BUS_MAP_REFUSE_UNKNOWN, o, &key);
        if (r >= 0 || !key)
                return r;
        if (r == -ERANGE)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "MaxDelayUSec must be more than 0 and at most a day.");
        if (r == -ENOKEY && (streq(key, "Priority") || streq(key, "Wake")))
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "An app's rank comes from its policy (wake=), never "
                                        "from the app.");
        if (r == -ENOKEY)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Unknown option \"%.64s\" (Class, EstimatedBytes, "
                                         "MaxDelayUSec, NeedsTime).",
                                         key);
        if (r == -EBADMSG)
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS,
                                         "Option %s has the wrong type.", key);
        return r;
}

static int method_register(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        App *app = userdata;
        WakeRun *w = app_wake(msg, error);
        RegisterOptions o = {.needs_time = true};
        uid_t uid = UID_INVALID;
        WakeReg *g, **l;
        int r;

        if (!w)
                return -EOPNOTSUPP;
        r = read_register_options(msg, &o, error);
        if (r < 0)
                return r;

        r = check_caller(msg, app, "Register", &uid, error);
        if (r < 0)
                return r;
        if (wake_app_state(w->queue, app->id, NULL, NULL) < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED,
                                         "App %s is not wake-listed (its policy has no wake=).",
                                         app->id);
        if (reg_find(w, app->id))
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "App %s is registered already.",
                                         app->id);

        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->w = w;
        g->uid = uid;
        g->id = strdup(app->id);
        r = g->id ? sd_bus_track_new(sd_bus_message_get_bus(msg), &g->track, on_client_gone, g)
                  : -ENOMEM;
        if (r >= 0)
                r = sd_bus_track_add_sender(g->track, msg);
        l = r >= 0 ? reallocarray(w->regs, w->n_regs + 1, sizeof(WakeReg *)) : NULL;
        if (!l) {
                reg_free(g);
                return r < 0 ? r : -ENOMEM;
        }
        w->regs = l;
        w->regs[w->n_regs++] = g;
        r = wake_app_register(w->queue, app->id, o.max_delay, o.needs_time);
        if (r < 0) {
                reg_remove(w, g);
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "Cannot register %s: %s.",
                                         app->id, strerror(-r));
        }
        (void)wake_app_set_bytes(w->queue, app->id, app_policy_wake_bytes(&app->effective),
                                 o.bytes);
        log_info("wake: %s: registered (max delay %" PRIu64 " ms, %" PRIu64 " bytes estimated, %s)",
                 app->id, o.max_delay / 1000, o.bytes,
                 o.needs_time ? "needs time" : "time not needed");
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_done(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        App *app = userdata;
        WakeRun *w = app_wake(msg, error);
        int r;

        if (!w)
                return -EOPNOTSUPP;
        r = check_caller(msg, app, "Done", NULL, error);
        if (r < 0)
                return r;
        r = wake_app_done(w->queue, app->id);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "App %s is not wake-listed.",
                                         app->id);
        if (r == -ESTALE)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "App %s has no turn running.",
                                         app->id);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(msg, NULL);
}

static uint64_t clock_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}

/* The queue keeps CLOCK_MONOTONIC (steps of the clock do not move turns); clients show how
 * long an app waited or was awake from CLOCK_REALTIME, like every other time on the bus. */
static uint64_t since_realtime(uint64_t since)
{
        uint64_t mono = clock_usec(CLOCK_MONOTONIC), real = clock_usec(CLOCK_REALTIME);

        if (since == 0)
                return 0;
        return since >= mono ? real : real > mono - since ? real - (mono - since) : 1;
}

static int app_property(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error)
{
        App *app = userdata;
        WakeRun *w = current_wake(bus);
        WakeAppState st = _WAKE_APP_INVALID;
        WakeReason why = _WAKE_REASON_INVALID;
        bool listed = w && wake_app_state(w->queue, app->id, &st, &why) >= 0;

        if (streq(property, "WakeState"))
                return sd_bus_message_append(reply, "s",
                                             listed ? wake_app_state_to_string(st) : "");
        if (streq(property, "WakeSince"))
                return sd_bus_message_append(
                    reply, "t", listed ? since_realtime(wake_app_since(w->queue, app->id)) : 0);
        return sd_bus_message_append(reply, "s", listed ? wake_reason_to_string(why) : "");
}

static const sd_bus_vtable wake_app_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("WakeState", "s", app_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakeReason", "s", app_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakeSince", "t", app_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("Register", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
                            method_register, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Done", NULL, NULL, method_done, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("Wake", SD_BUS_ARGS("t", period, "s", reason), 0),
    SD_BUS_VTABLE_END,
};

static int wake_app_find(sd_bus *bus, const char *path, const char *interface, void *userdata,
                         void **found, sd_bus_error *error)
{
        WakeRun *w = userdata;
        _cleanup_free_ char *id = NULL;
        App *app;

        if (!w->apps || sd_bus_path_decode(path, ROAM_APP_PATH_PREFIX, &id) <= 0)
                return 0;
        app = apps_get(w->apps, id);
        if (!app)
                return 0;
        *found = app;
        return 1;
}

/* ---- org.roam1.Manager: the queue, the time gate, WakeNow ---- */

static int manager_property(sd_bus *bus, const char *path, const char *interface,
                            const char *property, sd_bus_message *reply, void *userdata,
                            sd_bus_error *error)
{
        WakeRun *w = userdata;
        const char *why = NULL;
        bool open = wake_time_gate_open(w->queue, &why);

        if (streq(property, "WakeQueue"))
                return sd_bus_message_append(
                    reply, "s", wake_queue_state_to_string(wake_queue_state(w->queue)));
        if (streq(property, "WakePeriod"))
                return sd_bus_message_append(reply, "t", wake_generation(w->queue));
        if (streq(property, "TimeGate"))
                return sd_bus_message_append(reply, "b", open);
        if (streq(property, "WakeCap"))
                return sd_bus_message_append(reply, "u", wake_cap(w->queue, NULL));
        if (streq(property, "WakeCapReason")) {
                const char *slow = NULL;

                (void)wake_cap(w->queue, &slow);
                return sd_bus_message_append(reply, "s", strempty(slow));
        }
        return sd_bus_message_append(reply, "s", strempty(why));
}

static int method_wake_now(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        WakeRun *w = userdata;
        const char *id;
        int r;

        r = sd_bus_message_read(msg, "s", &id);
        if (r < 0)
                return r;
        if (!app_policy_id_is_valid(id))
                return sd_bus_error_setf(error, ROAM_ERROR_INVALID_ARGS, "Invalid app ID.");
        if (wake_app_state(w->queue, id, NULL, NULL) < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_NO_SUCH_APP, "No wake-listed app %s.",
                                         id);
        r = bus_check_authorized(msg, "org.roam1.change-app-policy", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = wake_app_now(w->queue, id);
        if (r < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_FAILED, "Cannot wake %s: %s.", id,
                                         strerror(-r));
        return sd_bus_reply_method_return(msg, NULL);
}

static const sd_bus_vtable wake_manager_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("WakeQueue", "s", manager_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakePeriod", "t", manager_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("TimeGate", "b", manager_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("TimeGateReason", "s", manager_property, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakeCap", "u", manager_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("WakeCapReason", "s", manager_property, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("WakeNow", SD_BUS_ARGS("s", id), SD_BUS_NO_RESULT, method_wake_now,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int wake_bus_setup(WakeRun *w)
{
        sd_bus *bus = w->core->bus;
        int r;

        if (!bus)
                return 0;
        r = sd_bus_add_object_vtable(bus, &w->manager_slot, ROAM_MANAGER_PATH,
                                     ROAM_MANAGER_INTERFACE, wake_manager_vtable, w);
        if (r < 0)
                return r;
        return sd_bus_add_fallback_vtable(bus, &w->app_slot, ROAM_APP_PATH_PREFIX,
                                          ROAM_APP_INTERFACE, wake_app_vtable, wake_app_find, w);
}

unsigned wake_run_watch_add(WakeRun *w, WakeRunFn fn, void *userdata)
{
        return watch_list_add(&w->watches, (void *)fn, userdata, NULL);
}

void wake_run_watch_remove(WakeRun *w, unsigned id)
{
        if (w && id > 0)
                (void)watch_list_remove(&w->watches, id);
}

typedef struct WatchCtx {
        WakeRun *w;
        const char *id;
} WatchCtx;

static void call_watch(void *callback, void *userdata, void *ctx)
{
        const WatchCtx *c = ctx;

        ((WakeRunFn)callback)(c->w, c->id, userdata);
}

static void wake_bus_tell_watches(WakeRun *w, const char *id)
{
        WatchCtx c = {w, id};

        watch_list_notify(&w->watches, call_watch, &c);
}

static void wake_bus_app_signal(WakeRun *w, const char *id, WakeAppState old, WakeAppState new,
                                WakeReason why, uint64_t generation)
{
        sd_bus *bus = w->core->bus;
        App *app = w->apps ? apps_get(w->apps, id) : NULL;
        int r;

        if (!bus || !app || !w->manager_slot)
                return;
        (void)sd_bus_emit_properties_changed(bus, app->path, ROAM_APP_INTERFACE, "WakeState",
                                             "WakeReason", "WakeSince", NULL);
        /* Wake: only once its gate is open in the kernel (opening -> awake) */
        if (new != WAKE_APP_AWAKE || old == WAKE_APP_AWAKE)
                return;
        r = sd_bus_emit_signal(bus, app->path, ROAM_APP_INTERFACE, "Wake", "ts", generation,
                               wake_reason_to_string(why));
        if (r < 0)
                log_warning_errno(r, "wake: %s: cannot send Wake: %m", id);
}

void wake_bus_app_changed(WakeRun *w, const char *id, WakeAppState old, WakeAppState new,
                          WakeReason why, uint64_t generation)
{
        wake_bus_app_signal(w, id, old, new, why, generation);
        wake_bus_tell_watches(w, id);
}

void wake_bus_app_listed(WakeRun *w, const char *id)
{
        App *app = w->apps ? apps_get(w->apps, id) : NULL;

        if (w->core->bus && app && w->manager_slot)
                (void)sd_bus_emit_properties_changed(w->core->bus, app->path, ROAM_APP_INTERFACE,
                                                     "WakeState", "WakeReason", "WakeSince", NULL);
        wake_bus_tell_watches(w, id);
}

void wake_bus_queue_changed(WakeRun *w)
{
        if (w->core->bus && w->manager_slot)
                (void)sd_bus_emit_properties_changed(
                    w->core->bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE, "WakeQueue",
                    "WakePeriod", "TimeGate", "TimeGateReason", NULL);
        wake_bus_tell_watches(w, NULL);
}

void wake_bus_cap_changed(WakeRun *w)
{
        if (w->core->bus && w->manager_slot)
                (void)sd_bus_emit_properties_changed(w->core->bus, ROAM_MANAGER_PATH,
                                                     ROAM_MANAGER_INTERFACE, "WakeCap",
                                                     "WakeCapReason", NULL);
}
