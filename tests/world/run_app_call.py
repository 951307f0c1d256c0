# SPDX-License-Identifier: LGPL-2.1-or-later
"""Calls the manager's RunApp the way a hostile or careless client could: with a pidfd of any
process, not only its own. Prints "ok CGROUP" or "error NAME MESSAGE" and exits 0 either way.

usage: run_app_call.py APP_ID ONLINE_FOR_USEC PID|self"""
import os
import sys

import dbus


def main():
    app_id, online_for, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    pid = os.getpid() if target == "self" else int(target)
    fd = os.pidfd_open(pid)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    try:
        cgroup = bus.call_blocking("org.roam1", "/org/roam1", "org.roam1.Manager", "RunApp",
                                   "sht", (app_id, dbus.types.UnixFd(fd), online_for),
                                   timeout=20)
        print("ok", cgroup)
    except dbus.exceptions.DBusException as e:
        print("error", e.get_dbus_name(), e.get_dbus_message())
    return 0


if __name__ == "__main__":
    sys.exit(main())
