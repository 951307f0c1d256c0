# SPDX-License-Identifier: LGPL-2.1-or-later
"""Calls an app's wake methods from whatever cgroup it runs in (the test puts it in an app's
or another's). Prints one line per call: "ok" or "error NAME MESSAGE"; exits 0 either way.

usage: wake_call.py APP_ID register [MAX_DELAY_USEC] | done | register-twice |
                                    register-bad-priority | register-hold SECONDS [MAX_DELAY_USEC]"""
import os
import sys
import time

import dbus


def call(bus, path, method, sig="", args=()):
    try:
        bus.call_blocking("org.roam1", path, "org.roam1.App", method, sig, args, timeout=10)
        print("ok", flush=True)
    except dbus.exceptions.DBusException as e:
        print("error", e.get_dbus_name(), e.get_dbus_message(), flush=True)


def main():
    app_id, what = sys.argv[1], sys.argv[2]
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    path = bus.call_blocking("org.roam1", "/org/roam1", "org.roam1.Manager", "GetApp", "s",
                             (app_id,))
    opts = dbus.Dictionary({}, signature="sv")
    if what == "register" and len(sys.argv) > 3:
        opts["MaxDelayUSec"] = dbus.UInt64(int(sys.argv[3]))
    if what == "register-hold" and len(sys.argv) > 4:
        opts["MaxDelayUSec"] = dbus.UInt64(int(sys.argv[4]))
    if what == "register-bad-priority":
        opts["Priority"] = dbus.Byte(100)
    if what in ("register", "register-bad-priority", "register-hold"):
        call(bus, path, "Register", "a{sv}", (opts,))
    elif what == "register-twice":
        call(bus, path, "Register", "a{sv}", (opts,))
        call(bus, path, "Register", "a{sv}", (opts,))
    elif what == "done":
        call(bus, path, "Done")
    if what == "register-hold":
        time.sleep(float(sys.argv[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
