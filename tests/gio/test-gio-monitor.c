/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libgioroam.so against a roamd double on a private bus (GTestDBus's dbus-daemon, given to the
 * module as the system bus), each case in a process of its own (GLib's default monitor is
 * one per process), under G_DEBUG=fatal-warnings (meson's environment): GLib chooses roam's
 * monitor when roamd answers, another when it does not, or is too old; Changed from roamd is
 * heard, from anyone else it is not; can_reach asks roamd; roamd leaving hands the answers to
 * the next monitor until it is back.
 *
 * The double is strict where roamd is: its methods have roamd's signatures (GDBus refuses
 * others), an address is 4 or 16 bytes, Subscribe twice changes nothing, Changed is unicast. */
#include <gio/gio.h>
#include <string.h>

#define ROAM_BUS_NAME "org.roam1"
#define MONITOR_PATH  "/org/roam1/monitor"
#define MONITOR_IFACE "org.roam1.AppMonitor"
#define WAIT_SECONDS  10

static const char introspection[] =
    "<node><interface name='org.roam1.AppMonitor'>"
    " <method name='Subscribe'><arg type='u' direction='out'/><arg type='s' direction='out'/>"
    "  <arg type='b' direction='out'/><arg type='s' direction='out'/>"
    "  <arg type='b' direction='out'/></method>"
    " <method name='Unsubscribe'/>"
    " <method name='CanReach'><arg type='ay' direction='in'/><arg type='b' direction='out'/>"
    "  <arg type='s' direction='out'/></method>"
    " <signal name='Changed'><arg type='b'/><arg type='s'/><arg type='b'/></signal>"
    "</interface></node>";

/* ---- the double: its own connection and context, in a thread ---- */

typedef struct Double {
        GMutex lock;
        guint32 version;
        gboolean available, metered;
        char *connectivity;
        GPtrArray *subscribers; /* unique names */
        GDBusConnection *bus;
        GMainContext *context;
        GMainLoop *loop;
        GThread *thread;
        guint object_id;
} Double;

static void double_method(GDBusConnection *bus, const char *sender, const char *path,
                          const char *iface, const char *method, GVariant *params,
                          GDBusMethodInvocation *call, gpointer userdata)
{
        Double *d = userdata;

        g_mutex_lock(&d->lock);
        if (g_str_equal(method, "Subscribe")) {
                gboolean known = FALSE;

                for (guint i = 0; i < d->subscribers->len; i++)
                        known |= g_str_equal(d->subscribers->pdata[i], sender);
                if (!known)
                        g_ptr_array_add(d->subscribers, g_strdup(sender));
                g_dbus_method_invocation_return_value(
                    call, g_variant_new("(usbsb)", d->version, "org.test.App", d->available,
                                        d->connectivity, d->metered));
        } else if (g_str_equal(method, "Unsubscribe")) {
                g_dbus_method_invocation_return_value(call, NULL);
        } else {
                gsize n;
                g_autoptr(GVariant) a = g_variant_get_child_value(params, 0);
                const guint8 *addr = g_variant_get_fixed_array(a, &n, 1);

                if (n != 4 && n != 16)
                        g_dbus_method_invocation_return_dbus_error(
                            call, "org.roam1.Error.InvalidArguments",
                            "An address is 4 (IPv4) or 16 (IPv6) bytes.");
                else if (n == 4 && addr[0] == 192 && addr[1] == 0 && addr[2] == 2)
                        g_dbus_method_invocation_return_value(call,
                                                              g_variant_new("(bs)", TRUE, ""));
                else
                        g_dbus_method_invocation_return_value(
                            call, g_variant_new("(bs)", FALSE,
                                                "the app's policy lets it reach the local "
                                                "networks only"));
        }
        g_mutex_unlock(&d->lock);
}

static const GDBusInterfaceVTable double_vtable = {double_method, NULL, NULL, {0}};

static gpointer double_thread(gpointer userdata)
{
        Double *d = userdata;

        g_main_context_push_thread_default(d->context);
        g_main_loop_run(d->loop);
        g_main_context_pop_thread_default(d->context);
        return NULL;
}

static void double_own(Double *d, gboolean own)
{
        g_autoptr(GVariant) r = g_dbus_connection_call_sync(
            d->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            own ? "RequestName" : "ReleaseName",
            own ? g_variant_new("(su)", ROAM_BUS_NAME, 4) : g_variant_new("(s)", ROAM_BUS_NAME),
            NULL, G_DBUS_CALL_FLAGS_NONE, -1, NULL, NULL);
        g_assert_nonnull(r);
}

static Double *double_start(const char *address, guint32 version, gboolean export, gboolean own)
{
        Double *d = g_new0(Double, 1);
        g_autoptr(GDBusNodeInfo) node = g_dbus_node_info_new_for_xml(introspection, NULL);
        g_autoptr(GError) error = NULL;

        g_mutex_init(&d->lock);
        d->version = version;
        d->available = TRUE;
        d->connectivity = g_strdup("portal");
        d->metered = TRUE;
        d->subscribers = g_ptr_array_new_with_free_func(g_free);
        d->context = g_main_context_new();
        d->loop = g_main_loop_new(d->context, FALSE);
        g_main_context_push_thread_default(d->context);
        d->bus = g_dbus_connection_new_for_address_sync(
            address,
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
            NULL, NULL, &error);
        g_assert_no_error(error);
        if (export)
                d->object_id = g_dbus_connection_register_object(
                    d->bus, MONITOR_PATH, node->interfaces[0], &double_vtable, d, NULL, &error);
        g_assert_no_error(error);
        g_main_context_pop_thread_default(d->context);
        d->thread = g_thread_new("roamd-double", double_thread, d);
        if (own)
                double_own(d, TRUE);
        return d;
}

/* A new answer, told to each subscriber alone, as roamd does. */
static void double_set(Double *d, gboolean available, const char *connectivity, gboolean metered)
{
        g_mutex_lock(&d->lock);
        d->available = available;
        g_free(d->connectivity);
        d->connectivity = g_strdup(connectivity);
        d->metered = metered;
        for (guint i = 0; i < d->subscribers->len; i++)
                g_assert_true(g_dbus_connection_emit_signal(
                    d->bus, d->subscribers->pdata[i], MONITOR_PATH, MONITOR_IFACE, "Changed",
                    g_variant_new("(bsb)", available, connectivity, metered), NULL));
        g_mutex_unlock(&d->lock);
}

/* ---- the process under test ---- */

static GTestDBus *bus_up(void)
{
        GTestDBus *bus = g_test_dbus_new(G_TEST_DBUS_NONE);

        g_test_dbus_up(bus);
        /* the module asks the system bus: this one */
        g_setenv("DBUS_SYSTEM_BUS_ADDRESS", g_test_dbus_get_bus_address(bus), TRUE);
        return bus;
}

/* The daemon stopped before GLib's system bus connection sees it close (GDBus would end the
 * process: exit-on-close), then let go of: nothing is left for LeakSanitizer. */
static void bus_down(GTestDBus *bus)
{
        g_test_dbus_stop(bus);
        g_object_unref(bus);
}

static gboolean on_timeout(gpointer userdata)
{
        g_error("no %s within %d s", (const char *)userdata, WAIT_SECONDS);
        return G_SOURCE_REMOVE;
}

/* Runs the default context until *flag, at most WAIT_SECONDS. */
static void wait_for(gboolean *flag, const char *what)
{
        guint t = g_timeout_add_seconds(WAIT_SECONDS, on_timeout, (gpointer)what);

        while (!*flag)
                g_main_context_iteration(NULL, TRUE);
        g_source_remove(t);
}

static void on_changed(GNetworkMonitor *m, gboolean available, gpointer userdata)
{
        *(gboolean *)userdata = TRUE;
}

static void on_count(GNetworkMonitor *m, gboolean available, gpointer userdata)
{
        (*(int *)userdata)++;
}

static void on_notify(GObject *o, GParamSpec *p, gpointer userdata)
{
        *(gboolean *)userdata = TRUE;
}

static char *backend(GNetworkMonitor *m)
{
        char *s = NULL;

        g_object_get(m, "backend", &s, NULL);
        return s;
}

static void case_chosen_and_changed(void)
{
        GTestDBus *bus = bus_up();
        Double *d = double_start(g_test_dbus_get_bus_address(bus), 1, TRUE, TRUE);
        GNetworkMonitor *m = g_network_monitor_get_default();
        g_autofree char *who = NULL;
        gboolean changed = FALSE;

        g_assert_cmpstr(G_OBJECT_TYPE_NAME(m), ==, "RoamNetworkMonitor");
        who = backend(m);
        g_assert_cmpstr(who, ==, "roamd");
        g_assert_true(g_network_monitor_get_network_available(m));
        g_assert_cmpint(g_network_monitor_get_connectivity(m), ==, G_NETWORK_CONNECTIVITY_PORTAL);
        g_assert_true(g_network_monitor_get_network_metered(m));
        g_signal_connect(m, "network-changed", G_CALLBACK(on_changed), &changed);
        double_set(d, TRUE, "full", FALSE);
        wait_for(&changed, "network-changed after Changed");
        g_assert_cmpint(g_network_monitor_get_connectivity(m), ==, G_NETWORK_CONNECTIVITY_FULL);
        g_assert_false(g_network_monitor_get_network_metered(m));
        changed = FALSE;
        double_set(d, FALSE, "local", FALSE);
        wait_for(&changed, "network-changed to local");
        g_assert_false(g_network_monitor_get_network_available(m));
        g_assert_cmpint(g_network_monitor_get_connectivity(m), ==, G_NETWORK_CONNECTIVITY_LOCAL);
        bus_down(bus);
}

/* Someone else's Changed, unicast to the app, is not roamd's: ignored. */
static void case_foreign_changed(void)
{
        GTestDBus *bus = bus_up();
        Double *d = double_start(g_test_dbus_get_bus_address(bus), 1, TRUE, TRUE);
        Double *liar = double_start(g_test_dbus_get_bus_address(bus), 1, FALSE, FALSE);
        GNetworkMonitor *m = g_network_monitor_get_default();
        gboolean changed = FALSE;
        int count = 0;

        g_assert_cmpstr(G_OBJECT_TYPE_NAME(m), ==, "RoamNetworkMonitor");
        g_signal_connect(m, "network-changed", G_CALLBACK(on_changed), &changed);
        g_signal_connect(m, "network-changed", G_CALLBACK(on_count), &count);
        /* the liar sends to the app's connection (its unique name, from the double's list) */
        g_mutex_lock(&d->lock);
        g_ptr_array_add(liar->subscribers, g_strdup(d->subscribers->pdata[0]));
        g_mutex_unlock(&d->lock);
        double_set(liar, TRUE, "full", FALSE);
        g_assert_true(g_dbus_connection_flush_sync(liar->bus, NULL, NULL));
        /* then roamd's own: the only one heard */
        double_set(d, FALSE, "limited", FALSE);
        wait_for(&changed, "roamd's network-changed");
        g_assert_cmpint(count, ==, 1);
        g_assert_cmpint(g_network_monitor_get_connectivity(m), ==, G_NETWORK_CONNECTIVITY_LIMITED);
        g_assert_false(g_network_monitor_get_network_available(m));
        bus_down(bus);
}

static void assert_not_roams(void)
{
        gint64 t0 = g_get_monotonic_time();
        GNetworkMonitor *m = g_network_monitor_get_default();

        g_assert_cmpstr(G_OBJECT_TYPE_NAME(m), !=, "RoamNetworkMonitor");
        /* failing fast: GLib's choice is not held up */
        g_assert_cmpint(g_get_monotonic_time() - t0, <, 1500 * 1000);
}

static void case_no_roamd(void)
{
        GTestDBus *bus = bus_up();

        assert_not_roams();
        bus_down(bus);
}

static void case_roamd_too_old(void)
{
        GTestDBus *bus = bus_up();

        (void)double_start(g_test_dbus_get_bus_address(bus), 0, TRUE, TRUE);
        assert_not_roams();
        bus_down(bus);
}

/* roamd on the bus without the AppMonitor (an older one): UnknownObject, fallen back. */
static void case_roamd_without_monitor(void)
{
        GTestDBus *bus = bus_up();

        (void)double_start(g_test_dbus_get_bus_address(bus), 1, FALSE, TRUE);
        assert_not_roams();
        bus_down(bus);
}

static void on_reached(GObject *source, GAsyncResult *res, gpointer userdata)
{
        GError **error = userdata;

        if (g_network_monitor_can_reach_finish(G_NETWORK_MONITOR(source), res, error))
                *error = g_error_new_literal(G_IO_ERROR, 0, "reached");
}

static void case_can_reach(void)
{
        GTestDBus *bus = bus_up();
        Double *d = double_start(g_test_dbus_get_bus_address(bus), 1, TRUE, TRUE);
        GNetworkMonitor *m = g_network_monitor_get_default();
        g_autoptr(GSocketConnectable) lan = g_network_address_new("192.0.2.7", 80);
        g_autoptr(GSocketConnectable) far = g_network_address_new("203.0.113.10", 80);
        g_autoptr(GError) error = NULL;
        GError *async = NULL;

        (void)d;
        g_assert_true(g_network_monitor_can_reach(m, lan, NULL, &error));
        g_assert_no_error(error);
        g_assert_false(g_network_monitor_can_reach(m, far, NULL, &error));
        g_assert_error(error, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE);
        g_assert_nonnull(strstr(error->message, "local networks only"));
        g_network_monitor_can_reach_async(m, far, NULL, on_reached, &async);
        while (!async)
                g_main_context_iteration(NULL, TRUE);
        g_assert_error(async, G_IO_ERROR, G_IO_ERROR_HOST_UNREACHABLE);
        g_clear_error(&async);
        g_network_monitor_can_reach_async(m, lan, NULL, on_reached, &async);
        while (!async)
                g_main_context_iteration(NULL, TRUE);
        g_assert_cmpstr(async->message, ==, "reached");
        g_clear_error(&async);
        bus_down(bus);
}

static void case_fallback_and_back(void)
{
        GTestDBus *bus = bus_up();
        Double *d = double_start(g_test_dbus_get_bus_address(bus), 1, TRUE, TRUE);
        GNetworkMonitor *m = g_network_monitor_get_default();
        g_autofree char *away = NULL, *back = NULL;
        gboolean moved = FALSE;

        g_assert_cmpstr(G_OBJECT_TYPE_NAME(m), ==, "RoamNetworkMonitor");
        g_signal_connect(m, "notify::backend", G_CALLBACK(on_notify), &moved);
        double_own(d, FALSE);
        wait_for(&moved, "the fallback");
        away = backend(m);
        g_assert_cmpstr(away, !=, "roamd");
        /* roamd back, with another answer: taken from its Subscribe */
        g_mutex_lock(&d->lock);
        g_free(d->connectivity);
        d->connectivity = g_strdup("limited");
        g_mutex_unlock(&d->lock);
        moved = FALSE;
        double_own(d, TRUE);
        wait_for(&moved, "roamd again");
        back = backend(m);
        g_assert_cmpstr(back, ==, "roamd");
        g_assert_cmpint(g_network_monitor_get_connectivity(m), ==, G_NETWORK_CONNECTIVITY_LIMITED);
        bus_down(bus);
}

typedef struct Case {
        const char *path;
        void (*fn)(void);
} Case;

static const Case cases[] = {
    {"/gio/monitor/chosen-and-changed", case_chosen_and_changed},
    {"/gio/monitor/foreign-changed-ignored", case_foreign_changed},
    {"/gio/monitor/no-roamd", case_no_roamd},
    {"/gio/monitor/roamd-too-old", case_roamd_too_old},
    {"/gio/monitor/roamd-without-monitor", case_roamd_without_monitor},
    {"/gio/monitor/can-reach", case_can_reach},
    {"/gio/monitor/fallback-and-back", case_fallback_and_back},
};

static void run_case(gconstpointer data)
{
        const Case *c = data;

        if (g_test_subprocess()) {
                c->fn();
                return;
        }
        g_test_trap_subprocess(NULL, 30 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_INHERIT_STDERR);
        g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
        g_test_init(&argc, &argv, NULL);
        for (gsize i = 0; i < G_N_ELEMENTS(cases); i++)
                g_test_add_data_func(cases[i].path, &cases[i], run_case);
        return g_test_run();
}
