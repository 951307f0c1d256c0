# SPDX-License-Identifier: LGPL-2.1-or-later
"""Calls an app's wake methods from whatever cgroup it runs in (the test puts it in an app's
or another's). Prints one line per call: "ok" or "error NAME MESSAGE"; exits 0 either way.

usage: wake_call.py APP_ID register [MAX_DELAY_USEC] | done | register-twice |
                                    register-bad-priority | register-bad-options |
                                    register-hold SECONDS [MAX_DELAY_USEC]
                                    | connect-on-wake HOST PORT

register-bad-options: one Register per bad option set (an unknown key, wrong types, a delay
out of range; the first fault of several), a line each.

connect-on-wake: prints "ready" once it listens for the app's Wake signal; at the signal,
one TCP connect to HOST:PORT, no retry ("connected" or "refused ERRNO"), then Done."""
import errno
import os
import socket
import sys
import time

import dbus


def call(bus, path, method, sig="", args=()):
    try:
        bus.call_blocking("org.roam1", path, "org.roam1.App", method, sig, args, timeout=10)
        print("ok", flush=True)
    except dbus.exceptions.DBusException as e:
        print("error", e.get_dbus_name(), e.get_dbus_message(), flush=True)


def connect_on_wake(app_id, host, port):
    """The app that connects the instant it hears Wake: one attempt, no retry."""
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    path = bus.call_blocking("org.roam1", "/org/roam1", "org.roam1.Manager", "GetApp", "s",
                             (app_id,))
    loop = GLib.MainLoop()

    def on_wake(period, reason):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect((host, port))
            print("connected", flush=True)
        except OSError as e:
            print("refused", errno.errorcode.get(e.errno, str(e)), flush=True)
        finally:
            s.close()
        call(bus, path, "Done")
        loop.quit()

    bus.add_signal_receiver(on_wake, signal_name="Wake", dbus_interface="org.roam1.App",
                            bus_name="org.roam1", path=path)
    # the match is in place once a round trip through the bus returned
    bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                      "GetId", "", ())
    print("ready", flush=True)
    loop.run()
    return 0


def main():
    app_id, what = sys.argv[1], sys.argv[2]
    if what == "connect-on-wake":
        return connect_on_wake(app_id, sys.argv[3], int(sys.argv[4]))
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
    if what == "register-bad-options":
        for bad in ({"Colour": dbus.String("red")}, {"Class": dbus.UInt32(1)},
                    {"NeedsTime": dbus.String("yes")}, {"EstimatedBytes": dbus.Int64(5)},
                    {"MaxDelayUSec": dbus.UInt64(0)},
                    {"MaxDelayUSec": dbus.UInt64(24 * 3600 * 1000000 + 1),
                     "Colour": dbus.String("red")},
                    {"Wake": dbus.UInt32(1)}):
            call(bus, path, "Register", "a{sv}", (dbus.Dictionary(bad, signature="sv"),))
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
