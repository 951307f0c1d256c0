/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-core.h"
#include "roamd-wifi-probe.h"

/* Whether NetworkManager, iwd or ConnMan runs an interface, asked on the system bus, read
 * only: these answers are what keeps roamd out of an interface another daemon owns, whether
 * or not roamd has that owner's backend. Each probe is one or two asynchronous calls; a daemon
 * that is not on the bus answers "not running" at once (the bus refuses the call). */

#define NM_NAME      "org.freedesktop.NetworkManager"
#define NM_PATH      "/org/freedesktop/NetworkManager"
#define NM_DEVICE    "org.freedesktop.NetworkManager.Device"
#define IWD_NAME     "net.connman.iwd"
#define CONNMAN      "net.connman"
#define NM_DEV_WIFI  2
#define NM_UNMANAGED 10

typedef enum ProbeKind {
        PROBE_NM,
        PROBE_IWD,
        PROBE_CONNMAN,
        _PROBE_KIND_MAX,
        _PROBE_KIND_INVALID = -EINVAL,
} ProbeKind;

struct WifiOp {
        ProbeKind kind;
        Core *core;
        char *ifname;
        sd_bus_slot *slot;
        WifiProbeFn cb;
        void *userdata;
};

void wifi_probe_cancel(WifiOp *op)
{
        if (!op)
                return;
        sd_bus_slot_unref(op->slot);
        free(op->ifname);
        free(op);
}

static void probe_answer(WifiOp *op, int error, bool manages, const char *fmt, ...) _printf_(4, 5);
static void probe_answer(WifiOp *op, int error, bool manages, const char *fmt, ...)
{
        WifiProbeFn cb = op->cb;
        void *ud = op->userdata;
        char why[WIFI_WORDS_MAX];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        wifi_probe_cancel(op);
        cb(error, manages, why, ud);
}

static const char *const names[_PROBE_KIND_MAX] = {
    [PROBE_NM] = "NetworkManager",
    [PROBE_IWD] = "iwd",
    [PROBE_CONNMAN] = "ConnMan",
};

/* A call the bus refused because nobody owns the name: the daemon is not running. */
static bool not_running(const sd_bus_error *e)
{
        return sd_bus_error_has_name(e, SD_BUS_ERROR_NAME_HAS_NO_OWNER) ||
               sd_bus_error_has_name(e, SD_BUS_ERROR_SERVICE_UNKNOWN);
}

static int call_failed(WifiOp *op, sd_bus_message *m)
{
        const sd_bus_error *e = sd_bus_message_get_error(m);

        if (not_running(e))
                probe_answer(op, 0, false, "%s is not running", names[op->kind]);
        else
                probe_answer(op, -EIO, false, "%s did not answer (%s)", names[op->kind],
                             e->message ?: e->name);
        return 0;
}

/* ---- NetworkManager: GetDeviceByIpIface, then the device's type, Managed and State ---- */

static int on_nm_props(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        uint32_t type = 0, state = 0;
        int managed = 0, r;

        op->slot = sd_bus_slot_unref(op->slot);
        if (sd_bus_message_is_method_error(m, NULL))
                return call_failed(op, m);
        r = sd_bus_message_enter_container(m, 'a', "{sv}");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;
                r = sd_bus_message_read(m, "s", &key);
                if (r >= 0 && streq(key, "DeviceType"))
                        r = sd_bus_message_read(m, "v", "u", &type);
                else if (r >= 0 && streq(key, "State"))
                        r = sd_bus_message_read(m, "v", "u", &state);
                else if (r >= 0 && streq(key, "Managed"))
                        r = sd_bus_message_read(m, "v", "b", &managed);
                else if (r >= 0)
                        r = sd_bus_message_skip(m, "v");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0) {
                probe_answer(op, r, false, "NetworkManager's device answer is malformed");
                return 0;
        }
        if (type != NM_DEV_WIFI)
                probe_answer(op, 0, false, "NetworkManager does not see %s as Wi-Fi", op->ifname);
        else if (!managed || state == NM_UNMANAGED)
                probe_answer(op, 0, false, "NetworkManager leaves %s unmanaged", op->ifname);
        else
                probe_answer(op, 0, true, "NetworkManager manages %s", op->ifname);
        return 0;
}

static int on_nm_device(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        const char *path;
        int r;

        op->slot = sd_bus_slot_unref(op->slot);
        if (sd_bus_message_is_method_error(m, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(m);
                if (!not_running(e) &&
                    sd_bus_error_has_name(e, "org.freedesktop.NetworkManager.UnknownDevice")) {
                        probe_answer(op, 0, false, "NetworkManager does not know %s", op->ifname);
                        return 0;
                }
                return call_failed(op, m);
        }
        r = sd_bus_message_read(m, "o", &path);
        if (r >= 0)
                r = sd_bus_call_method_async(op->core->bus, &op->slot, NM_NAME, path,
                                             "org.freedesktop.DBus.Properties", "GetAll",
                                             on_nm_props, op, "s", NM_DEVICE);
        if (r < 0)
                probe_answer(op, r, false, "NetworkManager could not be asked about %s",
                             op->ifname);
        return 0;
}

/* ---- iwd: a Device named ifname with a Station on the same object ---- */

static int on_iwd_objects(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        bool found = false, station = false;
        int r;

        op->slot = sd_bus_slot_unref(op->slot);
        if (sd_bus_message_is_method_error(m, NULL))
                return call_failed(op, m);
        r = sd_bus_message_enter_container(m, 'a', "{oa{sa{sv}}}");
        while (r > 0 && !found && (r = sd_bus_message_enter_container(m, 'e', "oa{sa{sv}}")) > 0) {
                bool is_station = false, named = false;
                const char *path;

                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0)
                        r = sd_bus_message_enter_container(m, 'a', "{sa{sv}}");
                while (r > 0 && (r = sd_bus_message_enter_container(m, 'e', "sa{sv}")) > 0) {
                        const char *iface;
                        r = sd_bus_message_read(m, "s", &iface);
                        if (r >= 0 && streq(iface, "net.connman.iwd.Station"))
                                is_station = true;
                        if (r >= 0 && streq(iface, "net.connman.iwd.Device")) {
                                r = sd_bus_message_enter_container(m, 'a', "{sv}");
                                while (r > 0 &&
                                       (r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                                        const char *key, *name;
                                        r = sd_bus_message_read(m, "s", &key);
                                        if (r >= 0 && streq(key, "Name")) {
                                                r = sd_bus_message_read(m, "v", "s", &name);
                                                named = r >= 0 && streq(name, op->ifname);
                                        } else if (r >= 0)
                                                r = sd_bus_message_skip(m, "v");
                                        if (r >= 0)
                                                r = sd_bus_message_exit_container(m);
                                }
                                if (r >= 0)
                                        r = sd_bus_message_exit_container(m);
                        } else if (r >= 0)
                                r = sd_bus_message_skip(m, "a{sv}");
                        if (r >= 0)
                                r = sd_bus_message_exit_container(m);
                }
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
                if (named) {
                        found = true;
                        station = is_station;
                }
        }
        if (r < 0)
                probe_answer(op, r, false, "iwd's object list is malformed");
        else if (!found)
                probe_answer(op, 0, false, "iwd does not run %s", op->ifname);
        else if (!station)
                probe_answer(op, 0, false, "iwd runs %s, but not as a station", op->ifname);
        else
                probe_answer(op, 0, true, "iwd runs a station on %s", op->ifname);
        return 0;
}

/* ---- ConnMan: a wifi technology ---- */

static int on_connman(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        WifiOp *op = userdata;
        bool wifi = false;
        int r;

        op->slot = sd_bus_slot_unref(op->slot);
        if (sd_bus_message_is_method_error(m, NULL))
                return call_failed(op, m);
        r = sd_bus_message_enter_container(m, 'a', "(oa{sv})");
        while (r > 0 && (r = sd_bus_message_enter_container(m, 'r', "oa{sv}")) > 0) {
                const char *path;
                r = sd_bus_message_read(m, "o", &path);
                if (r >= 0 && streq(path, "/net/connman/technology/wifi"))
                        wifi = true;
                if (r >= 0)
                        r = sd_bus_message_skip(m, "a{sv}");
                if (r >= 0)
                        r = sd_bus_message_exit_container(m);
        }
        if (r < 0)
                probe_answer(op, r, false, "ConnMan's technology list is malformed");
        else
                probe_answer(op, 0, wifi, wifi ? "ConnMan runs Wi-Fi" : "ConnMan runs no Wi-Fi");
        return 0;
}

static int probe_start(ProbeKind kind, Core *core, const char *ifname, WifiProbeFn cb,
                       void *userdata, WifiOp **ret)
{
        WifiOp *op;
        int r;

        if (!core->bus)
                return -ENOTCONN;
        op = calloc(1, sizeof(*op));
        if (!op)
                return -ENOMEM;
        *op = (WifiOp){.kind = kind, .core = core, .cb = cb, .userdata = userdata};
        op->ifname = strdup(ifname);
        if (!op->ifname) {
                free(op);
                return -ENOMEM;
        }
        switch (kind) {
        case PROBE_NM:
                r = sd_bus_call_method_async(core->bus, &op->slot, NM_NAME, NM_PATH, NM_NAME,
                                             "GetDeviceByIpIface", on_nm_device, op, "s", ifname);
                break;
        case PROBE_IWD:
                r = sd_bus_call_method_async(core->bus, &op->slot, IWD_NAME, "/",
                                             "org.freedesktop.DBus.ObjectManager",
                                             "GetManagedObjects", on_iwd_objects, op, "");
                break;
        case PROBE_CONNMAN:
                r = sd_bus_call_method_async(core->bus, &op->slot, CONNMAN, "/",
                                             "net.connman.Manager", "GetTechnologies", on_connman,
                                             op, "");
                break;
        case _PROBE_KIND_MAX:
        case _PROBE_KIND_INVALID:
                r = -EINVAL;
                break;
        }
        if (r < 0) {
                wifi_probe_cancel(op);
                return r;
        }
        *ret = op;
        return 0;
}

int wifi_probe_nm(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret)
{
        return probe_start(PROBE_NM, core, ifname, cb, userdata, ret);
}

int wifi_probe_iwd(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret)
{
        return probe_start(PROBE_IWD, core, ifname, cb, userdata, ret);
}

int wifi_probe_connman(Core *core, const char *ifname, WifiProbeFn cb, void *userdata, WifiOp **ret)
{
        return probe_start(PROBE_CONNMAN, core, ifname, cb, userdata, ret);
}
