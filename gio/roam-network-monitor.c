/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GLib's GNetworkMonitor answered by roamd (docs/apps-hear.md): loaded into every GLib process
 * that asks g_network_monitor_get_default(), so it is small, starts no thread of its own
 * (GDBus's worker is GLib's), blocks only in its initialisation (one call, 2 s at most) and
 * logs nothing but debug messages. Its initialisation fails when roamd is not on the system
 * bus, does not answer org.roam1.AppMonitor, or answers an older version: GLib then takes the
 * next monitor (NetworkManager's, netlink's) as it would without this module. When roamd
 * leaves later, the monitor GLib would have taken answers in its place until roamd is back. */
#include <gio/gio.h>

#include "roam-network-monitor.h"

#define ROAM_BUS_NAME          "org.roam1"
#define ROAM_MONITOR_PATH      "/org/roam1/monitor"
#define ROAM_MONITOR_INTERFACE "org.roam1.AppMonitor"
#define ROAM_MONITOR_API       1u
#define ROAM_CALL_TIMEOUT_MS   2000

struct _RoamNetworkMonitor {
        GObject parent;
        GDBusConnection *bus;
        char *owner; /* roamd's unique name: only its signals count */
        char *app;   /* the app roamd answers for (debug messages) */
        guint signal_id, watch_id;
        gboolean available, metered;
        GNetworkConnectivity connectivity;
        /* while roamd is away: the monitor GLib would have chosen without this module */
        GNetworkMonitor *fallback;
        gulong fallback_changed;
        GCancellable *resubscribe;
};

enum {
        PROP_0,
        PROP_NETWORK_AVAILABLE,
        PROP_NETWORK_METERED,
        PROP_CONNECTIVITY,
        PROP_BACKEND,
};

static void roam_network_monitor_iface_init(GNetworkMonitorInterface *iface);
static void roam_network_monitor_initable_iface_init(GInitableIface *iface);

/* GNetworkMonitor requires GInitable: that one first */
G_DEFINE_DYNAMIC_TYPE_EXTENDED(
    RoamNetworkMonitor, roam_network_monitor, G_TYPE_OBJECT, 0,
    G_IMPLEMENT_INTERFACE_DYNAMIC(G_TYPE_INITABLE, roam_network_monitor_initable_iface_init)
        G_IMPLEMENT_INTERFACE_DYNAMIC(G_TYPE_NETWORK_MONITOR, roam_network_monitor_iface_init))

static gboolean connectivity_from_string(const char *s, GNetworkConnectivity *ret)
{
        static const struct {
                const char *word;
                GNetworkConnectivity value;
        } table[] = {
            {"local", G_NETWORK_CONNECTIVITY_LOCAL},
            {"limited", G_NETWORK_CONNECTIVITY_LIMITED},
            {"portal", G_NETWORK_CONNECTIVITY_PORTAL},
            {"full", G_NETWORK_CONNECTIVITY_FULL},
        };

        for (gsize i = 0; i < G_N_ELEMENTS(table); i++)
                if (g_str_equal(s, table[i].word)) {
                        *ret = table[i].value;
                        return TRUE;
                }
        return FALSE;
}

/* One place the answer changes: notify what moved, then network-changed. */
static void set_answer(RoamNetworkMonitor *self, gboolean available,
                       GNetworkConnectivity connectivity, gboolean metered)
{
        gboolean changed = FALSE;

        g_object_freeze_notify(G_OBJECT(self));
        if (self->available != available) {
                self->available = available;
                g_object_notify(G_OBJECT(self), "network-available");
                changed = TRUE;
        }
        if (self->connectivity != connectivity) {
                self->connectivity = connectivity;
                g_object_notify(G_OBJECT(self), "connectivity");
                changed = TRUE;
        }
        if (self->metered != metered) {
                self->metered = metered;
                g_object_notify(G_OBJECT(self), "network-metered");
        }
        g_object_thaw_notify(G_OBJECT(self));
        if (changed)
                g_signal_emit_by_name(self, "network-changed", available);
}

/* "(bsb)" or the same three at the end of Subscribe's answer. */
static gboolean read_answer(GVariant *v, gsize first, gboolean *available,
                            GNetworkConnectivity *connectivity, gboolean *metered)
{
        const char *word;

        g_variant_get_child(v, first, "b", available);
        g_variant_get_child(v, first + 1, "&s", &word);
        g_variant_get_child(v, first + 2, "b", metered);
        return connectivity_from_string(word, connectivity);
}

static void on_changed(GDBusConnection *bus, const char *sender, const char *path,
                       const char *interface, const char *signal, GVariant *params,
                       gpointer userdata)
{
        RoamNetworkMonitor *self = userdata;
        GNetworkConnectivity connectivity;
        gboolean available, metered;

        /* the signal is unicast to us; still, only roamd's own counts, and only while it is
         * the one answering */
        if (!self->owner || g_strcmp0(sender, self->owner) != 0 || self->fallback)
                return;
        if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(bsb)")) ||
            !read_answer(params, 0, &available, &connectivity, &metered)) {
                g_debug("roam: roamd's Changed has an unknown form; ignored");
                return;
        }
        set_answer(self, available, connectivity, metered);
}

/* ---- roamd away: the monitor GLib would have taken answers ---- */

static void copy_fallback(RoamNetworkMonitor *self)
{
        GNetworkMonitor *f = self->fallback;

        set_answer(self, g_network_monitor_get_network_available(f),
                   g_network_monitor_get_connectivity(f), g_network_monitor_get_network_metered(f));
}

static void on_fallback_changed(GNetworkMonitor *f, gboolean available, gpointer userdata)
{
        copy_fallback(userdata);
}

/* The extension point's monitors, best first, without this one: the first whose
 * initialisation succeeds (the base monitor, at the end, always does). */
static GNetworkMonitor *fallback_new(void)
{
        GIOExtensionPoint *ep = g_io_extension_point_lookup(G_NETWORK_MONITOR_EXTENSION_POINT_NAME);

        for (GList *l = ep ? g_io_extension_point_get_extensions(ep) : NULL; l; l = l->next) {
                GType type = g_io_extension_get_type(l->data);
                gpointer m;

                if (type == ROAM_TYPE_NETWORK_MONITOR)
                        continue;
                m = g_initable_new(type, NULL, NULL, NULL);
                if (m)
                        return m;
        }
        return NULL;
}

static void fallback_start(RoamNetworkMonitor *self)
{
        if (self->fallback)
                return;
        g_clear_pointer(&self->owner, g_free);
        self->fallback = fallback_new();
        g_debug("roam: roamd left the bus; %s answers until it is back",
                self->fallback ? G_OBJECT_TYPE_NAME(self->fallback) : "nothing");
        if (!self->fallback)
                return;
        self->fallback_changed = g_signal_connect(self->fallback, "network-changed",
                                                  G_CALLBACK(on_fallback_changed), self);
        g_object_notify(G_OBJECT(self), "backend");
        copy_fallback(self);
}

static void fallback_stop(RoamNetworkMonitor *self)
{
        if (!self->fallback)
                return;
        g_clear_signal_handler(&self->fallback_changed, self->fallback);
        g_clear_object(&self->fallback);
        g_object_notify(G_OBJECT(self), "backend");
}

/* ---- Subscribe: once at init (blocking, bounded), again when roamd comes back ---- */

static GDBusMessage *subscribe_message(void)
{
        GDBusMessage *msg = g_dbus_message_new_method_call(ROAM_BUS_NAME, ROAM_MONITOR_PATH,
                                                           ROAM_MONITOR_INTERFACE, "Subscribe");

        /* never start roamd for a GLib process: it runs or it does not */
        g_dbus_message_set_flags(msg, G_DBUS_MESSAGE_FLAGS_NO_AUTO_START);
        return msg;
}

/* roamd's answer to Subscribe: its unique name and the first answer taken. */
static gboolean subscribed(RoamNetworkMonitor *self, GDBusMessage *reply, GError **error)
{
        GVariant *body;
        GNetworkConnectivity connectivity;
        gboolean available, metered;
        guint32 version;
        const char *app;

        if (g_dbus_message_to_gerror(reply, error))
                return FALSE;
        body = g_dbus_message_get_body(reply);
        if (!body || !g_variant_is_of_type(body, G_VARIANT_TYPE("(usbsb)"))) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                                    "roamd's Subscribe answered an unknown form");
                return FALSE;
        }
        g_variant_get_child(body, 0, "u", &version);
        g_variant_get_child(body, 1, "&s", &app);
        if (version < ROAM_MONITOR_API) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                            "roamd's AppMonitor is version %u; %u is needed", version,
                            ROAM_MONITOR_API);
                return FALSE;
        }
        if (!read_answer(body, 2, &available, &connectivity, &metered)) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                                    "roamd answered an unknown connectivity");
                return FALSE;
        }
        g_free(self->owner);
        self->owner = g_strdup(g_dbus_message_get_sender(reply));
        g_free(self->app);
        self->app = g_strdup(app);
        fallback_stop(self);
        set_answer(self, available, connectivity, metered);
        g_debug("roam: roamd (%s) answers for app %s", self->owner, self->app);
        return TRUE;
}

static void on_resubscribed(GObject *source, GAsyncResult *res, gpointer userdata)
{
        g_autoptr(GError) error = NULL;
        g_autoptr(GDBusMessage) reply = g_dbus_connection_send_message_with_reply_finish(
            G_DBUS_CONNECTION(source), res, &error);
        RoamNetworkMonitor *self;

        if (!reply && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
                return; /* the monitor is gone, or roamd left again */
        self = userdata;
        g_clear_object(&self->resubscribe);
        if (!reply || !subscribed(self, reply, &error))
                g_debug("roam: roamd is back but does not answer: %s; %s answers", error->message,
                        self->fallback ? G_OBJECT_TYPE_NAME(self->fallback) : "nothing");
}

static void on_name_appeared(GDBusConnection *bus, const char *name, const char *owner,
                             gpointer userdata)
{
        RoamNetworkMonitor *self = userdata;
        g_autoptr(GDBusMessage) msg = NULL;

        if (g_strcmp0(owner, self->owner) == 0)
                return; /* the roamd we subscribed with */
        g_cancellable_cancel(self->resubscribe);
        g_clear_object(&self->resubscribe);
        self->resubscribe = g_cancellable_new();
        msg = subscribe_message();
        g_dbus_connection_send_message_with_reply(bus, msg, G_DBUS_SEND_MESSAGE_FLAGS_NONE,
                                                  ROAM_CALL_TIMEOUT_MS, NULL, self->resubscribe,
                                                  on_resubscribed, self);
}

static void on_name_vanished(GDBusConnection *bus, const char *name, gpointer userdata)
{
        RoamNetworkMonitor *self = userdata;

        g_cancellable_cancel(self->resubscribe);
        g_clear_object(&self->resubscribe);
        fallback_start(self);
}

static gboolean roam_network_monitor_initable_init(GInitable *initable, GCancellable *cancellable,
                                                   GError **error)
{
        RoamNetworkMonitor *self = ROAM_NETWORK_MONITOR(initable);
        g_autoptr(GDBusMessage) msg = NULL, reply = NULL;

        self->bus = g_bus_get_sync(G_BUS_TYPE_SYSTEM, cancellable, error);
        if (!self->bus)
                return FALSE;
        /* before Subscribe: a Changed sent right after its answer is not lost (it is
         * dispatched on this thread's context, after init returns and owner is known) */
        self->signal_id = g_dbus_connection_signal_subscribe(
            self->bus, NULL, ROAM_MONITOR_INTERFACE, "Changed", ROAM_MONITOR_PATH, NULL,
            G_DBUS_SIGNAL_FLAGS_NONE, on_changed, self, NULL);
        msg = subscribe_message();
        reply = g_dbus_connection_send_message_with_reply_sync(
            self->bus, msg, G_DBUS_SEND_MESSAGE_FLAGS_NONE, ROAM_CALL_TIMEOUT_MS, NULL, cancellable,
            error);
        if (!reply || !subscribed(self, reply, error))
                return FALSE;
        self->watch_id =
            g_bus_watch_name_on_connection(self->bus, ROAM_BUS_NAME, G_BUS_NAME_WATCHER_FLAGS_NONE,
                                           on_name_appeared, on_name_vanished, self, NULL);
        return TRUE;
}

/* ---- can_reach: each address of the connectable asked of roamd ---- */

static GVariant *address_bytes(GSocketAddress *sa)
{
        GInetAddress *a;

        if (!G_IS_INET_SOCKET_ADDRESS(sa))
                return NULL;
        a = g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(sa));
        return g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, g_inet_address_to_bytes(a),
                                         g_inet_address_get_native_size(a), 1);
}

static gboolean unreachable(GError **error, const char *why)
{
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE, "Host unreachable: %s",
                    why && *why ? why : "no address");
        return FALSE;
}

static gboolean roam_network_monitor_can_reach(GNetworkMonitor *monitor,
                                               GSocketConnectable *connectable,
                                               GCancellable *cancellable, GError **error)
{
        RoamNetworkMonitor *self = ROAM_NETWORK_MONITOR(monitor);
        g_autoptr(GSocketAddressEnumerator) e = NULL;
        g_autofree char *why = NULL;
        GError *err = NULL;

        if (self->fallback)
                return g_network_monitor_can_reach(self->fallback, connectable, cancellable, error);
        if (!self->available) {
                g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE,
                                    "Network unreachable");
                return FALSE;
        }
        e = g_socket_connectable_proxy_enumerate(connectable);
        for (;;) {
                g_autoptr(GSocketAddress) sa =
                    g_socket_address_enumerator_next(e, cancellable, &err);
                g_autoptr(GVariant) answer = NULL;
                GVariant *bytes;
                gboolean ok;
                const char *reason;

                if (!sa) {
                        if (err) {
                                g_propagate_error(error, err);
                                return FALSE;
                        }
                        return unreachable(error, why);
                }
                bytes = address_bytes(sa);
                if (!bytes)
                        continue;
                answer = g_dbus_connection_call_sync(
                    self->bus, self->owner, ROAM_MONITOR_PATH, ROAM_MONITOR_INTERFACE, "CanReach",
                    g_variant_new_tuple(&bytes, 1), G_VARIANT_TYPE("(bs)"),
                    G_DBUS_CALL_FLAGS_NO_AUTO_START, ROAM_CALL_TIMEOUT_MS, cancellable, error);
                if (!answer)
                        return FALSE;
                g_variant_get(answer, "(b&s)", &ok, &reason);
                if (ok)
                        return TRUE;
                g_free(why);
                why = g_strdup(reason);
        }
}

typedef struct ReachTask {
        GSocketAddressEnumerator *e;
        char *why;
} ReachTask;

static void reach_task_free(gpointer p)
{
        ReachTask *t = p;

        g_clear_object(&t->e);
        g_free(t->why);
        g_free(t);
}

static void reach_next(GTask *task);

static void on_reach_answer(GObject *source, GAsyncResult *res, gpointer userdata)
{
        g_autoptr(GTask) task = userdata;
        ReachTask *t = g_task_get_task_data(task);
        GError *error = NULL;
        g_autoptr(GVariant) answer =
            g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
        gboolean ok;
        const char *reason;

        if (!answer) {
                g_task_return_error(task, error);
                return;
        }
        g_variant_get(answer, "(b&s)", &ok, &reason);
        if (ok) {
                g_task_return_boolean(task, TRUE);
                return;
        }
        g_free(t->why);
        t->why = g_strdup(reason);
        reach_next(g_steal_pointer(&task));
}

static void on_reach_address(GObject *source, GAsyncResult *res, gpointer userdata)
{
        g_autoptr(GTask) task = userdata;
        RoamNetworkMonitor *self = g_task_get_source_object(task);
        ReachTask *t = g_task_get_task_data(task);
        GCancellable *cancellable = g_task_get_cancellable(task);
        GError *error = NULL;
        g_autoptr(GSocketAddress) sa = g_socket_address_enumerator_next_finish(
            G_SOCKET_ADDRESS_ENUMERATOR(source), res, &error);
        GVariant *bytes;

        if (!sa) {
                if (error)
                        g_task_return_error(task, error);
                else {
                        unreachable(&error, t->why);
                        g_task_return_error(task, error);
                }
                return;
        }
        bytes = address_bytes(sa);
        if (!bytes) {
                reach_next(g_steal_pointer(&task));
                return;
        }
        g_dbus_connection_call(self->bus, self->owner, ROAM_MONITOR_PATH, ROAM_MONITOR_INTERFACE,
                               "CanReach", g_variant_new_tuple(&bytes, 1), G_VARIANT_TYPE("(bs)"),
                               G_DBUS_CALL_FLAGS_NO_AUTO_START, ROAM_CALL_TIMEOUT_MS, cancellable,
                               on_reach_answer, g_steal_pointer(&task));
}

static void reach_next(GTask *task)
{
        ReachTask *t = g_task_get_task_data(task);

        g_socket_address_enumerator_next_async(t->e, g_task_get_cancellable(task), on_reach_address,
                                               task);
}

static void on_fallback_reached(GObject *source, GAsyncResult *res, gpointer userdata)
{
        g_autoptr(GTask) task = userdata;
        GError *error = NULL;

        if (g_network_monitor_can_reach_finish(G_NETWORK_MONITOR(source), res, &error))
                g_task_return_boolean(task, TRUE);
        else
                g_task_return_error(task, error);
}

static void roam_network_monitor_can_reach_async(GNetworkMonitor *monitor,
                                                 GSocketConnectable *connectable,
                                                 GCancellable *cancellable,
                                                 GAsyncReadyCallback callback, gpointer userdata)
{
        RoamNetworkMonitor *self = ROAM_NETWORK_MONITOR(monitor);
        GTask *task = g_task_new(self, cancellable, callback, userdata);
        ReachTask *t;

        g_task_set_source_tag(task, roam_network_monitor_can_reach_async);
        if (self->fallback) {
                g_network_monitor_can_reach_async(self->fallback, connectable, cancellable,
                                                  on_fallback_reached, task);
                return;
        }
        if (!self->available) {
                g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_NETWORK_UNREACHABLE,
                                        "Network unreachable");
                g_object_unref(task);
                return;
        }
        t = g_new0(ReachTask, 1);
        t->e = g_socket_connectable_proxy_enumerate(connectable);
        g_task_set_task_data(task, t, reach_task_free);
        reach_next(task);
}

static gboolean roam_network_monitor_can_reach_finish(GNetworkMonitor *monitor,
                                                      GAsyncResult *result, GError **error)
{
        return g_task_propagate_boolean(G_TASK(result), error);
}

/* ---- GObject ---- */

static void roam_network_monitor_get_property(GObject *object, guint prop_id, GValue *value,
                                              GParamSpec *pspec)
{
        RoamNetworkMonitor *self = ROAM_NETWORK_MONITOR(object);

        switch (prop_id) {
        case PROP_NETWORK_AVAILABLE:
                g_value_set_boolean(value, self->available);
                break;
        case PROP_NETWORK_METERED:
                g_value_set_boolean(value, self->metered);
                break;
        case PROP_CONNECTIVITY:
                g_value_set_enum(value, self->connectivity);
                break;
        case PROP_BACKEND:
                g_value_set_string(value,
                                   self->fallback ? G_OBJECT_TYPE_NAME(self->fallback) : "roamd");
                break;
        default:
                G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
                break;
        }
}

static void roam_network_monitor_finalize(GObject *object)
{
        RoamNetworkMonitor *self = ROAM_NETWORK_MONITOR(object);

        g_cancellable_cancel(self->resubscribe);
        g_clear_object(&self->resubscribe);
        if (self->watch_id)
                g_bus_unwatch_name(self->watch_id);
        if (self->bus && self->signal_id)
                g_dbus_connection_signal_unsubscribe(self->bus, self->signal_id);
        fallback_stop(self);
        g_clear_object(&self->bus);
        g_free(self->owner);
        g_free(self->app);
        G_OBJECT_CLASS(roam_network_monitor_parent_class)->finalize(object);
}

static void roam_network_monitor_init(RoamNetworkMonitor *self)
{
        self->connectivity = G_NETWORK_CONNECTIVITY_LOCAL;
}

static void roam_network_monitor_class_init(RoamNetworkMonitorClass *klass)
{
        GObjectClass *object_class = G_OBJECT_CLASS(klass);

        object_class->get_property = roam_network_monitor_get_property;
        object_class->finalize = roam_network_monitor_finalize;
        g_object_class_override_property(object_class, PROP_NETWORK_AVAILABLE, "network-available");
        g_object_class_override_property(object_class, PROP_NETWORK_METERED, "network-metered");
        g_object_class_override_property(object_class, PROP_CONNECTIVITY, "connectivity");
        /* who answers: "roamd", or the type of the monitor answering while it is away */
        g_object_class_install_property(
            object_class, PROP_BACKEND,
            g_param_spec_string("backend", NULL, NULL, "roamd",
                                G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
}

static void roam_network_monitor_class_finalize(RoamNetworkMonitorClass *klass)
{
}

static void roam_network_monitor_iface_init(GNetworkMonitorInterface *iface)
{
        iface->can_reach = roam_network_monitor_can_reach;
        iface->can_reach_async = roam_network_monitor_can_reach_async;
        iface->can_reach_finish = roam_network_monitor_can_reach_finish;
}

static void roam_network_monitor_initable_iface_init(GInitableIface *iface)
{
        iface->init = roam_network_monitor_initable_init;
}

void roam_network_monitor_register(GIOModule *module)
{
        roam_network_monitor_register_type(G_TYPE_MODULE(module));
        g_io_extension_point_implement(G_NETWORK_MONITOR_EXTENSION_POINT_NAME,
                                       ROAM_TYPE_NETWORK_MONITOR, "roam",
                                       ROAM_NETWORK_MONITOR_PRIORITY);
}
