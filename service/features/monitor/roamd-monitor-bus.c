/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roam-app-id.h"
#include "roamd-core.h"
#include "roamd-monitor.h"

/* org.roam1.AppMonitor (docs/dbus-api.md): every caller is answered for its own app, found
 * from its cgroup; nothing a caller says names the app. */

static int caller_or_error(Monitor *m, sd_bus_message *msg, App **app, uid_t *uid,
                           sd_bus_error *error)
{
        int r = monitor_caller(m, msg, app, uid);

        if (r < 0)
                return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                         "Cannot tell the caller's app from its cgroup (%s).",
                                         strerror(-r));
        return 0;
}

static int append_answer(sd_bus_message *reply, const MonitorAnswer *a)
{
        return sd_bus_message_append(reply, "bsb", a->available,
                                     roam_connectivity_to_string(a->connectivity), a->metered);
}

static int method_subscribe(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Monitor *m = userdata;
        MonitorAnswer a;
        App *app;
        uid_t uid;
        int r;

        r = caller_or_error(m, msg, &app, &uid, error);
        if (r < 0)
                return r;
        r = monitor_subscribe(m, msg, app, uid, &a);
        if (r == -EUSERS)
                return sd_bus_error_set(error, ROAM_ERROR_FAILED,
                                        "Too many connections listen already.");
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "us", MONITOR_API_VERSION, app->id);
        if (r >= 0)
                r = append_answer(reply, &a);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int method_unsubscribe(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        (void)monitor_unsubscribe(userdata, sd_bus_message_get_sender(msg));
        return sd_bus_reply_method_return(msg, NULL);
}

static int method_get(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        Monitor *m = userdata;
        MonitorAnswer a;
        App *app;
        uid_t uid;
        int r;

        r = caller_or_error(m, msg, &app, &uid, error);
        if (r < 0)
                return r;
        monitor_answer_for(m, app, uid, &a);
        r = sd_bus_message_new_method_return(msg, &reply);
        if (r >= 0)
                r = sd_bus_message_append(reply, "s", app->id);
        if (r >= 0)
                r = append_answer(reply, &a);
        return r < 0 ? r : sd_bus_send(NULL, reply, NULL);
}

static int method_can_reach(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        Monitor *m = userdata;
        const void *addr;
        const char *why = "";
        size_t n;
        App *app;
        uid_t uid;
        bool ok;
        int r;

        r = sd_bus_message_read_array(msg, 'y', &addr, &n);
        if (r < 0)
                return r;
        if (n != 4 && n != 16)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        "An address is 4 (IPv4) or 16 (IPv6) bytes.");
        r = caller_or_error(m, msg, &app, &uid, error);
        if (r < 0)
                return r;
        ok = monitor_can_reach(m, app, uid, n == 4 ? AF_INET : AF_INET6, addr, &why);
        return sd_bus_reply_method_return(msg, "bs", ok, ok ? "" : why);
}

static int method_listeners(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        const char *id;
        int r;

        r = sd_bus_message_read(msg, "s", &id);
        if (r < 0)
                return r;
        if (!app_policy_id_is_valid(id))
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS, "Invalid app ID.");
        return sd_bus_reply_method_return(msg, "u", monitor_listeners(userdata, id));
}

static const sd_bus_vtable monitor_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS(
        "Subscribe", SD_BUS_NO_ARGS,
        SD_BUS_RESULT("u", version, "s", app, "b", available, "s", connectivity, "b", metered),
        method_subscribe, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD("Unsubscribe", NULL, NULL, method_unsubscribe, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS(
        "Get", SD_BUS_NO_ARGS,
        SD_BUS_RESULT("s", app, "b", available, "s", connectivity, "b", metered), method_get,
        SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("CanReach", SD_BUS_ARGS("ay", address),
                            SD_BUS_RESULT("b", reachable, "s", reason), method_can_reach,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Listeners", SD_BUS_ARGS("s", app), SD_BUS_RESULT("u", count),
                            method_listeners, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("Changed", SD_BUS_ARGS("b", available, "s", connectivity, "b", metered),
                            0),
    SD_BUS_VTABLE_END,
};

int monitor_bus_setup(Monitor *m)
{
        sd_bus *bus = monitor_core(m)->bus;

        if (!bus)
                return 0;
        return sd_bus_add_object_vtable(bus, monitor_slot(m), ROAM_MONITOR_PATH,
                                        ROAM_MONITOR_INTERFACE, monitor_vtable, m);
}

/* To the one connection (unicast): the other apps' processes never hear it. */
int monitor_bus_send(Monitor *m, const char *destination, const MonitorAnswer *a)
{
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *sig = NULL;
        sd_bus *bus = monitor_core(m)->bus;
        int r;

        if (!bus)
                return -ENOTCONN;
        r = sd_bus_message_new_signal(bus, &sig, ROAM_MONITOR_PATH, ROAM_MONITOR_INTERFACE,
                                      "Changed");
        if (r < 0)
                return r;
        r = sd_bus_message_set_destination(sig, destination);
        if (r >= 0)
                r = append_answer(sig, a);
        return r < 0 ? r : sd_bus_send(bus, sig, NULL);
}
