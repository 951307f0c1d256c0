/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "roam-app.h"
#include "roam-auth-call.h"
#include "roam-bus-name.h"
#include "roam-bus.h"
#include "roam-format.h"
#include "roam-live.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-verdict.h"

#define RETRY_MIN_USEC (1 * USEC_PER_SEC)
#define RETRY_MAX_USEC (30 * USEC_PER_SEC)

#define PROPERTIES_INTERFACE     "org.freedesktop.DBus.Properties"
#define OBJECT_MANAGER_INTERFACE "org.freedesktop.DBus.ObjectManager"

static inline bool isempty(const char *s)
{
        return !s || !*s;
}

static const char *const roam_live_state_table[_ROAM_LIVE_STATE_MAX] = {
    [ROAM_LIVE_NO_BUS] = "no-bus",   [ROAM_LIVE_NOT_RUNNING] = "not-running",
    [ROAM_LIVE_LOADING] = "loading", [ROAM_LIVE_READY] = "ready",
    [ROAM_LIVE_FAILED] = "failed",
};

DEFINE_STRING_TABLE_LOOKUP(roam_live_state, RoamLiveState);

struct RoamLive {
        sd_event *event;
        sd_bus *bus;
        BusNameWatch *roamd; /* org.roam1's owner, while there is a bus */
        sd_event_source *retry;
        uint64_t retry_usec;

        RoamLiveHandler handler;
        void *userdata;

        RoamLiveState state;
        char *problem;
        RoamModel *model;

        /* While loading: the manager's properties arrive first (into pending), then the links.
         * A reply of an older load (roamd restarted meanwhile) is told apart by generation. */
        RoamModel *pending;
        bool pending_manager_loaded;
        unsigned generation;
        sd_bus_slot *load_slot;
};

typedef struct ReprobeCall {
        RoamLive *live;
        unsigned generation;
        char *name;
} ReprobeCall;

typedef struct AppCall {
        RoamLive *live;
        unsigned generation;
        char *id;
        char *action;
} AppCall;

static void emit(RoamLive *live, const RoamLiveEvent *ev)
{
        if (live->handler)
                live->handler(live, ev, live->userdata);
}

static void set_state(RoamLive *live, RoamLiveState state, const char *problem)
{
        RoamLiveState old = live->state;

        (void)free_and_strdup(&live->problem, problem ? problem : "");
        if (old == state && state != ROAM_LIVE_FAILED)
                return;
        live->state = state;
        emit(live, &(RoamLiveEvent){.type = ROAM_LIVE_EVENT_STATE, .old_state = old});
}

/* Drops roamd's state: it went away, or the bus did. */
static void clear_model(RoamLive *live)
{
        RoamModel *m = NULL;

        live->load_slot = sd_bus_slot_unref(live->load_slot);
        live->pending = roam_model_free(live->pending);
        live->generation++;
        if (roam_model_new(&m) < 0) {
                log_oom();
                return;
        }
        roam_model_free(live->model);
        live->model = m;
}

static void schedule_retry(RoamLive *live);

static void drop_bus(RoamLive *live, const char *why)
{
        clear_model(live);
        live->roamd = bus_name_watch_free(live->roamd);
        live->bus = sd_bus_flush_close_unref(live->bus);
        set_state(live, ROAM_LIVE_NO_BUS, why);
        schedule_retry(live);
}

static void load_failed(RoamLive *live, int r, const sd_bus_error *error, const char *what)
{
        char buf[512];

        live->pending = roam_model_free(live->pending);
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                   SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                /* Gone between NameOwnerChanged and our call; its return is announced. */
                set_state(live, ROAM_LIVE_NOT_RUNNING, NULL);
                return;
        }
        if (sd_bus_error_is_set(error))
                snprintf(buf, sizeof(buf), "cannot %s: %s (%s)", what,
                         error->message ? error->message : "no message", error->name);
        else
                snprintf(buf, sizeof(buf), "cannot %s: %s", what, strerror(-r));
        log_debug("%s", buf);
        set_state(live, ROAM_LIVE_FAILED, buf);
}

static void record_initial_history(RoamModel *m, uint64_t now)
{
        for (size_t i = 0; i < m->n_links; i++) {
                RoamLink *l = m->links[i];

                roam_link_history_record(l, l->last_probe ? l->last_probe : now, true,
                                         l->last_probe != 0);
        }
}

static int on_managed_objects(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r;

        live->load_slot = sd_bus_slot_unref(live->load_slot);
        if (e) {
                load_failed(live, -sd_bus_message_get_errno(reply), e, "read roamd's links");
                return 0;
        }
        r = roam_model_read_managed_objects(live->pending, reply);
        if (r < 0) {
                load_failed(live, r, NULL, "read roamd's links");
                return 0;
        }
        record_initial_history(live->pending, roam_now());
        roam_model_free(live->model);
        live->model = TAKE_PTR(live->pending);
        set_state(live, ROAM_LIVE_READY, NULL);
        return 0;
}

static int new_call(RoamLive *live, sd_bus_message **ret, const char *path, const char *interface,
                    const char *member)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(live->bus, &m, ROAM_BUS_NAME, path, interface, member);
        if (r < 0)
                return r;
        /* roamd is a system service started by its unit: never ask the bus to activate it. */
        r = sd_bus_message_set_auto_start(m, false);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int call_async(RoamLive *live, sd_bus_slot **slot, const char *path, const char *interface,
                      const char *member, sd_bus_message_handler_t callback, void *userdata,
                      const char *types, ...)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = new_call(live, &m, path, interface, member);
        if (r < 0)
                return r;
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        return sd_bus_call_async(live->bus, slot, m, callback, userdata, 0);
}

static int on_manager_properties(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int r;

        live->load_slot = sd_bus_slot_unref(live->load_slot);
        if (e) {
                load_failed(live, -sd_bus_message_get_errno(reply), e, "read roamd's state");
                return 0;
        }
        r = roam_model_update_manager_properties(live->pending, reply);
        if (r < 0) {
                load_failed(live, r, NULL, "read roamd's state");
                return 0;
        }
        live->pending_manager_loaded = true;

        /* Only now the links: a link signal that arrives before their reply describes a change
         * the reply already holds (roamd's messages arrive in order), so it can be dropped. */
        r = call_async(live, &live->load_slot, ROAM_MANAGER_PATH, OBJECT_MANAGER_INTERFACE,
                       "GetManagedObjects", on_managed_objects, live, NULL);
        if (r < 0)
                load_failed(live, r, NULL, "ask roamd for its links");
        return 0;
}

static void load(RoamLive *live)
{
        int r;

        clear_model(live);
        r = roam_model_new(&live->pending);
        if (r < 0) {
                log_oom();
                return;
        }
        live->pending_manager_loaded = false;
        set_state(live, ROAM_LIVE_LOADING, NULL);

        r = call_async(live, &live->load_slot, ROAM_MANAGER_PATH, PROPERTIES_INTERFACE, "GetAll",
                       on_manager_properties, live, "s", ROAM_MANAGER_INTERFACE);
        if (r < 0)
                load_failed(live, r, NULL, "ask roamd for its state");
}

static bool link_changed(RoamLive *live, RoamLink *l, const char *old_verdict,
                         const char *old_reason, uint64_t old_probe)
{
        bool verdict_changed = !streq(old_verdict, l->connectivity);
        bool reason_changed = !streq(old_reason, l->connectivity_reason);

        roam_link_history_record(l, roam_now(), verdict_changed || reason_changed,
                                 l->last_probe != old_probe);
        return verdict_changed;
}

static int on_properties_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;
        const char *interface, *path = sd_bus_message_get_path(m);
        int r;

        r = sd_bus_message_read_basic(m, 's', &interface);
        if (r < 0)
                return 0;

        if (streq(interface, ROAM_MANAGER_INTERFACE) && streq_ptr(path, ROAM_MANAGER_PATH)) {
                _cleanup_free_ char *old = NULL;
                RoamModel *target = live->state == ROAM_LIVE_READY                  ? live->model
                                    : live->pending && live->pending_manager_loaded ? live->pending
                                                                                    : NULL;

                if (!target)
                        return 0;
                old = strdup(target->state);
                if (!old)
                        return log_oom();
                r = roam_model_update_manager_properties(target, m);
                if (r < 0) {
                        log_warning_errno(r, "Ignored a change of roamd's state: %m");
                        return 0;
                }
                if (target == live->model)
                        emit(live, &(RoamLiveEvent){
                                       .type = ROAM_LIVE_EVENT_MANAGER,
                                       .old_verdict = old,
                                       .verdict_changed = !streq(old, live->model->state),
                                   });
                return 0;
        }

        if (streq(interface, ROAM_LINK_INTERFACE) && live->state == ROAM_LIVE_READY && path) {
                _cleanup_free_ char *old_verdict = NULL, *old_reason = NULL;
                RoamLink *l = roam_model_find_link(live->model, path);
                uint64_t old_probe;
                bool changed;

                if (!l)
                        return 0;
                old_verdict = strdup(l->connectivity);
                old_reason = strdup(l->connectivity_reason);
                if (!old_verdict || !old_reason)
                        return log_oom();
                old_probe = l->last_probe;
                r = roam_link_update_properties(l, m);
                if (r < 0) {
                        log_warning_errno(r, "Ignored a change of %s: %m", l->name);
                        return 0;
                }
                roam_model_sort_links(live->model);
                changed = link_changed(live, l, old_verdict, old_reason, old_probe);
                emit(live, &(RoamLiveEvent){
                               .type = ROAM_LIVE_EVENT_LINK_CHANGED,
                               .link = l,
                               .old_verdict = old_verdict,
                               .old_reason = old_reason,
                               .verdict_changed = changed,
                           });
        }

        if (streq(interface, ROAM_APP_INTERFACE) && live->state == ROAM_LIVE_READY && path) {
                _cleanup_free_ char *old_state = NULL, *old_policy = NULL;
                RoamApp *a = roam_model_find_app(live->model, path);

                if (!a)
                        return 0;
                old_state = roam_app_state_text(a);
                old_policy = roam_app_policy_text(a);
                if (!old_state || !old_policy)
                        return log_oom();
                r = roam_app_update_properties(a, m);
                if (r < 0) {
                        log_warning_errno(r, "Ignored a change of app %s: %m", a->id);
                        return 0;
                }
                roam_model_sort_apps(live->model);
                emit(live, &(RoamLiveEvent){
                               .type = ROAM_LIVE_EVENT_APP_CHANGED,
                               .app = a,
                               .old_app_state = old_state,
                               .old_app_policy = old_policy,
                           });
        }
        return 0;
}

static void add_link(RoamLive *live, RoamLink *fresh)
{
        RoamLink *l;

        /* Announced twice (should not happen): keep one object, and its history. */
        l = roam_model_find_link(live->model, fresh->path);
        if (l) {
                memcpy(fresh->history, l->history, sizeof(l->history));
                fresh->n_history = l->n_history;
                fresh->history_next = l->history_next;
        }
        roam_link_history_record(fresh, roam_now(), true, fresh->last_probe != 0);
        if (roam_model_add_link(live->model, fresh) < 0) {
                roam_link_free(fresh);
                log_oom();
                return;
        }
        emit(live, &(RoamLiveEvent){.type = ROAM_LIVE_EVENT_LINK_ADDED, .link = fresh});
}

static void add_app(RoamLive *live, RoamApp *fresh)
{
        if (roam_model_add_app(live->model, fresh) < 0) {
                roam_app_free(fresh);
                log_oom();
                return;
        }
        emit(live, &(RoamLiveEvent){.type = ROAM_LIVE_EVENT_APP_ADDED, .app = fresh});
}

static int on_interfaces_added(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;
        _cleanup_(roam_link_freep) RoamLink *link = NULL;
        _cleanup_(roam_app_freep) RoamApp *app = NULL;
        const char *path, *refused;
        int r;

        if (live->state != ROAM_LIVE_READY)
                return 0;
        r = sd_bus_message_read_basic(m, 'o', &path);
        if (r < 0)
                return 0;

        r = roam_model_read_object(m, path, NULL, &link, &app, &refused);
        if (r < 0 && refused) {
                log_warning_errno(r, "Ignored the new %s %s: %m", refused, path);
                return 0;
        }
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return 0;
        if (link)
                add_link(live, TAKE_PTR(link));
        if (app)
                add_app(live, TAKE_PTR(app));
        return 0;
}

static int on_interfaces_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;
        _cleanup_strv_free_ char **interfaces = NULL;
        const char *path;
        RoamLink *l;
        RoamApp *a;
        int r;

        if (live->state != ROAM_LIVE_READY)
                return 0;
        r = sd_bus_message_read(m, "o", &path);
        if (r >= 0)
                r = sd_bus_message_read_strv(m, &interfaces);
        if (r < 0)
                return 0;
        if (strv_contains(interfaces, ROAM_LINK_INTERFACE) &&
            (l = roam_model_find_link(live->model, path))) {
                emit(live, &(RoamLiveEvent){.type = ROAM_LIVE_EVENT_LINK_REMOVED, .link = l});
                (void)roam_model_remove_link(live->model, path);
        }
        if (strv_contains(interfaces, ROAM_APP_INTERFACE) &&
            (a = roam_model_find_app(live->model, path))) {
                emit(live, &(RoamLiveEvent){.type = ROAM_LIVE_EVENT_APP_REMOVED, .app = a});
                (void)roam_model_remove_app(live->model, path);
        }
        return 0;
}

/* App.Wake(t period, s reason): an app's turn began (docs/wake.md). Its WakeState change comes
 * as PropertiesChanged too; this says that a turn began, and why, once per turn. */
static int on_wake(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;
        const char *path = sd_bus_message_get_path(m), *reason;
        uint64_t period;
        RoamApp *a;

        if (live->state != ROAM_LIVE_READY || !path ||
            !(a = roam_model_find_app(live->model, path)))
                return 0;
        if (sd_bus_message_read(m, "ts", &period, &reason) < 0)
                return 0;
        emit(live, &(RoamLiveEvent){
                       .type = ROAM_LIVE_EVENT_APP_WAKE,
                       .app = a,
                       .wake_period = period,
                       .wake_reason = reason,
                   });
        return 0;
}

/* Every change of org.roam1's owner, not the first answer: load() asks roamd at once, and a
 * roamd that is not there says so in the error of that call. */
static int on_roamd_owner(BusNameWatch *w, const char *new_owner, void *userdata)
{
        RoamLive *live = userdata;

        if (isempty(new_owner)) {
                clear_model(live);
                set_state(live, ROAM_LIVE_NOT_RUNNING, NULL);
        } else
                load(live);
        return 0;
}

/* sd-bus hands its synthetic Local.Disconnected to filters without any AddMatch. */
static int on_message(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        RoamLive *live = userdata;

        if (sd_bus_message_is_signal(m, "org.freedesktop.DBus.Local", "Disconnected"))
                drop_bus(live, "the system bus closed the connection");
        return 0;
}

static int connect_bus(RoamLive *live)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        BusNameWatch *roamd = NULL;
        char buf[512];
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                const char *address = getenv("DBUS_SYSTEM_BUS_ADDRESS");

                snprintf(buf, sizeof(buf), "cannot connect to the system bus at %s: %s",
                         isempty(address) ? "unix:path=/run/dbus/system_bus_socket" : address,
                         strerror(-r));
                set_state(live, ROAM_LIVE_NO_BUS, buf);
                return r;
        }
        r = sd_bus_attach_event(bus, live->event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_add_filter(bus, NULL, on_message, live);
        /* The matches go out before the first call, and the bus daemon handles a connection's
         * messages in order: no change can slip between the snapshot and the subscription. */
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, NULL, ROAM_BUS_NAME, NULL, PROPERTIES_INTERFACE,
                                              "PropertiesChanged", on_properties_changed, NULL,
                                              live);
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, NULL, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                              OBJECT_MANAGER_INTERFACE, "InterfacesAdded",
                                              on_interfaces_added, NULL, live);
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, NULL, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                              OBJECT_MANAGER_INTERFACE, "InterfacesRemoved",
                                              on_interfaces_removed, NULL, live);
        if (r >= 0)
                r = sd_bus_match_signal_async(bus, NULL, ROAM_BUS_NAME, NULL, ROAM_APP_INTERFACE,
                                              "Wake", on_wake, NULL, live);
        if (r >= 0)
                r = bus_name_watch_new(bus, ROAM_BUS_NAME, on_roamd_owner, live, &roamd);
        if (r < 0) {
                snprintf(buf, sizeof(buf), "cannot subscribe to roamd's signals: %s", strerror(-r));
                set_state(live, ROAM_LIVE_NO_BUS, buf);
                return r;
        }
        live->bus = TAKE_PTR(bus);
        live->roamd = roamd;
        live->retry_usec = 0;
        load(live);
        return 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        RoamLive *live = userdata;

        if (connect_bus(live) < 0)
                schedule_retry(live);
        return 0;
}

static void schedule_retry(RoamLive *live)
{
        int r;

        live->retry_usec =
            live->retry_usec == 0 ? RETRY_MIN_USEC : MIN(live->retry_usec * 2, RETRY_MAX_USEC);
        r = sd_event_source_set_time_relative(live->retry, live->retry_usec);
        if (r >= 0)
                r = sd_event_source_set_enabled(live->retry, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule a new try to reach the bus: %m");
}

int roam_live_new(sd_event *event, RoamLiveHandler handler, void *userdata, RoamLive **ret)
{
        _cleanup_(roam_live_freep) RoamLive *live = NULL;
        int r;

        live = calloc(1, sizeof(*live));
        if (!live)
                return -ENOMEM;
        live->event = sd_event_ref(event);
        live->handler = handler;
        live->userdata = userdata;
        live->state = ROAM_LIVE_LOADING;
        live->problem = strdup("");
        if (!live->problem)
                return -ENOMEM;
        r = roam_model_new(&live->model);
        if (r < 0)
                return r;
        r = sd_event_add_time_relative(event, &live->retry, CLOCK_MONOTONIC, RETRY_MIN_USEC, 0,
                                       on_retry, live);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(live->retry, SD_EVENT_OFF);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(live);
        return 0;
}

RoamLive *roam_live_free(RoamLive *live)
{
        if (!live)
                return NULL;
        live->handler = NULL; /* no events from the teardown */
        sd_bus_slot_unref(live->load_slot);
        bus_name_watch_free(live->roamd);
        sd_bus_flush_close_unref(live->bus);
        sd_event_source_disable_unref(live->retry);
        sd_event_unref(live->event);
        roam_model_free(live->model);
        roam_model_free(live->pending);
        free(live->problem);
        free(live);
        return NULL;
}

int roam_live_start(RoamLive *live)
{
        if (connect_bus(live) < 0)
                schedule_retry(live);
        return 0;
}

RoamLiveState roam_live_get_state(const RoamLive *live)
{
        return live->state;
}

const char *roam_live_get_problem(const RoamLive *live)
{
        return live->problem;
}

sd_bus *roam_live_get_bus(const RoamLive *live)
{
        return live ? live->bus : NULL;
}

const RoamModel *roam_live_get_model(const RoamLive *live)
{
        return live->model;
}

static int on_reprobe_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        ReprobeCall *c = userdata;

        if (c->generation != c->live->generation)
                return 0; /* roamd went away meanwhile: that was announced already */
        emit(c->live, &(RoamLiveEvent){
                          .type = ROAM_LIVE_EVENT_REPROBE,
                          .link_name = c->name,
                          .error = sd_bus_message_get_error(reply),
                      });
        return 0;
}

static void reprobe_call_free(void *p)
{
        ReprobeCall *c = p;

        free(c->name);
        free(c);
}

int roam_live_reprobe(RoamLive *live, const char *path)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        ReprobeCall *c;
        RoamLink *l;
        int r;

        if (live->state != ROAM_LIVE_READY)
                return -ENOTCONN;
        l = roam_model_find_link(live->model, path);
        if (!l)
                return -ENOENT;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->live = live;
        c->generation = live->generation;
        c->name = strdup(*l->name ? l->name : path);
        if (!c->name) {
                reprobe_call_free(c);
                return -ENOMEM;
        }
        /* The call outlives this function and frees its data however it ends (answered, or
         * dropped with the bus); polkit may want a password for it (roam-auth-call.h). */
        r = new_call(live, &m, path, ROAM_LINK_INTERFACE, "Reprobe");
        if (r >= 0)
                r = roam_auth_call_async(live->bus, NULL, m, on_reprobe_reply, c,
                                         reprobe_call_free);
        if (r < 0)
                reprobe_call_free(c);
        return r;
}

static int on_app_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
        AppCall *c = userdata;

        if (c->generation != c->live->generation)
                return 0; /* roamd went away meanwhile: that was announced already */
        emit(c->live, &(RoamLiveEvent){
                          .type = ROAM_LIVE_EVENT_APP_CALL,
                          .app_id = c->id,
                          .action = c->action,
                          .error = sd_bus_message_get_error(reply),
                      });
        return 0;
}

static void app_call_free(void *p)
{
        AppCall *c = p;

        free(c->id);
        free(c->action);
        free(c);
}

/* Sends m; the answer is announced as ROAM_LIVE_EVENT_APP_CALL. */
static int send_app_call(RoamLive *live, sd_bus_message *m, const char *id, const char *action)
{
        AppCall *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->live = live;
        c->generation = live->generation;
        c->id = strdup(id);
        c->action = strdup(action);
        if (!c->id || !c->action) {
                app_call_free(c);
                return -ENOMEM;
        }
        /* a change polkit may want a password for (roam-auth-call.h) */
        r = roam_auth_call_async(live->bus, NULL, m, on_app_reply, c, app_call_free);
        if (r < 0)
                app_call_free(c);
        return r;
}

static int new_app_call(RoamLive *live, sd_bus_message **ret, const char *id, bool on_object,
                        const char *member)
{
        const RoamApp *a;

        if (live->state != ROAM_LIVE_READY)
                return -ENOTCONN;
        if (!on_object)
                return new_call(live, ret, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE, member);
        a = roam_model_find_app_by_id(live->model, id);
        if (!a)
                return -ENOENT;
        return new_call(live, ret, a->path, ROAM_APP_INTERFACE, member);
}

int roam_live_set_app_policy(RoamLive *live, const char *id, char *const *settings,
                             const char *action)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_app_call(live, &m, id, false, "SetAppPolicy");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "s", id);
        if (r >= 0)
                r = sd_bus_message_open_container(m, SD_BUS_TYPE_ARRAY, "{ss}");
        for (size_t i = 0; r >= 0 && settings && settings[i]; i++) {
                const char *eq = strchr(settings[i], '=');
                _cleanup_free_ char *key = NULL;

                if (!eq)
                        return -EINVAL;
                key = strndup(settings[i], (size_t)(eq - settings[i]));
                if (!key)
                        return -ENOMEM;
                r = sd_bus_message_append(m, "{ss}", key, eq + 1);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r < 0)
                return r;
        return send_app_call(live, m, id, action);
}

int roam_live_reset_app_policy(RoamLive *live, const char *id, const char *action)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_app_call(live, &m, id, false, "ResetAppPolicy");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", id);
        if (r < 0)
                return r;
        return send_app_call(live, m, id, action);
}

int roam_live_app_online_for(RoamLive *live, const char *id, uint64_t usec, const char *action)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_app_call(live, &m, id, true, "OnlineFor");
        if (r >= 0)
                r = sd_bus_message_append(m, "t", usec);
        if (r < 0)
                return r;
        return send_app_call(live, m, id, action);
}

int roam_live_app_release(RoamLive *live, const char *id, const char *action)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_app_call(live, &m, id, true, "Release");
        if (r < 0)
                return r;
        return send_app_call(live, m, id, action);
}

int roam_live_wake_now(RoamLive *live, const char *id, const char *action)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = new_app_call(live, &m, id, false, "WakeNow");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", id);
        if (r < 0)
                return r;
        return send_app_call(live, m, id, action);
}
