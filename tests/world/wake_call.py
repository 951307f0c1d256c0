# SPDX-License-Identifier: LGPL-2.1-or-later
"""Calls an app's wake methods from whatever cgroup it runs in (the test puts it in an app's
or another's). Prints one line per call: "ok" or "error NAME MESSAGE"; exits 0 either way.

usage: wake_call.py APP_ID register [MAX_DELAY_USEC] | done | register-twice |
                                    register-bad-priority | register-bad-options |
                                    register-hold SECONDS [MAX_DELAY_USEC]
                                    | connect-on-wake HOST PORT | register-no-time SECONDS
                                    | stream-on-wake HOST PORT TICKS ESTIMATED_BYTES

register-bad-options: one Register per bad option set (an unknown key, wrong types, a delay
out of range; the first fault of several), a line each.

connect-on-wake: prints "ready" once it listens for the app's Wake signal; at the signal,
one TCP connect to HOST:PORT, no retry ("connected" or "refused ERRNO"), then Done.

register-no-time: Register(NeedsTime=false), then holds the registration that long.

stream-on-wake: Register(EstimatedBytes=ESTIMATED_BYTES), prints "ready" once it listens for
the app's Wake; at the signal it reads TICKS lines of whoami's stream at HOST:PORT (one each
100 ms), prints "streamed", then Done."""
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


def connect_on_wake(app_id, host, port, ticks=None, estimate=None):
    """The app that connects the instant it hears Wake: one attempt, no retry (and with
    ticks, reads that many lines of whoami's stream first)."""
    import dbus.mainloop.glib
    from gi.repository import GLib

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    path = bus.call_blocking("org.roam1", "/org/roam1", "org.roam1.Manager", "GetApp", "s",
                             (app_id,))
    loop = GLib.MainLoop()
    if estimate is not None:
        call(bus, path, "Register", "a{sv}", (dbus.Dictionary(
            {"EstimatedBytes": dbus.UInt64(estimate)}, signature="sv"),))

    def on_wake(period, reason):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(5)
        try:
            s.connect((host, port))
            if ticks is None:
                print("connected", flush=True)
            else:
                f = s.makefile("rwb")
                f.readline()  # whoami's "ADDRESS PORT"
                f.write(b"stream\n")
                f.flush()
                for _ in range(ticks):
                    assert f.readline().startswith(b"tick ")
                print("streamed", flush=True)
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
    if what == "stream-on-wake":
        return connect_on_wake(app_id, sys.argv[3], int(sys.argv[4]), int(sys.argv[5]),
                               int(sys.argv[6]))
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    path = bus.call_blocking("org.roam1", "/org/roam1", "org.roam1.Manager", "GetApp", "s",
                             (app_id,))
    opts = dbus.Dictionary({}, signature="sv")
    if what == "register" and len(sys.argv) > 3:
        opts["MaxDelayUSec"] = dbus.UInt64(int(sys.argv[3]))
    if what == "register-hold" and len(sys.argv) > 4:
        opts["MaxDelayUSec"] = dbus.UInt64(int(sys.argv[4]))
    if what == "register-no-time":
        opts["NeedsTime"] = dbus.Boolean(False)
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
    if what in ("register", "register-bad-priority", "register-hold", "register-no-time"):
        call(bus, path, "Register", "a{sv}", (opts,))
    elif what == "register-twice":
        call(bus, path, "Register", "a{sv}", (opts,))
        call(bus, path, "Register", "a{sv}", (opts,))
    elif what == "done":
        call(bus, path, "Done")
    if what in ("register-hold", "register-no-time"):
        time.sleep(float(sys.argv[3]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
