# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for systemd's system manager on the world's bus, for `roam run` under systemd:
the part of org.freedesktop.systemd1.Manager roamd uses (Subscribe, StartTransientUnit of a
scope with Slice and PIDs, GetUnit, JobNew/JobRemoved) and the Scope's ControlGroup. Like
systemd, it creates the scope's cgroup and moves the listed processes into it before the job
ends. Its hierarchy root is a subtree of the real one (the world's cgroup).

usage: fake_systemd.py CGROUP2_MOUNT ROOT [GETUNIT_DELAY_SECONDS]   (ROOT: e.g. /roam-world-NAME)

With a delay, GetUnit answers that late (a PID 1 under load), and says "GetUnit NAME" on
stdout when asked."""
import os
import sys

import dbus
import dbus.mainloop.glib
import dbus.service
from gi.repository import GLib

BUS_NAME = "org.freedesktop.systemd1"
PATH = "/org/freedesktop/systemd1"
MANAGER = "org.freedesktop.systemd1.Manager"
UNIT = "org.freedesktop.systemd1.Unit"
SCOPE = "org.freedesktop.systemd1.Scope"
PROPS = "org.freedesktop.DBus.Properties"


def escape_path(name):
    return "".join(c if c.isalnum() else "_%02x" % ord(c) for c in name)


class Unit(dbus.service.Object):
    def __init__(self, bus, name, cgroup):
        self.path = PATH + "/unit/" + escape_path(name)
        super().__init__(bus, self.path)
        self.props = {UNIT: {"Id": name, "ActiveState": "active"},
                      SCOPE: {"ControlGroup": cgroup}}

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, iface, prop):
        try:
            return self.props[iface][prop]
        except KeyError:
            raise dbus.exceptions.DBusException(
                "no property %s.%s" % (iface, prop),
                name="org.freedesktop.DBus.Error.UnknownProperty") from None

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        return self.props.get(iface, {})


class Manager(dbus.service.Object):
    def __init__(self, bus, mount, root, delay=0.0):
        super().__init__(bus, PATH)
        self.bus, self.mount, self.root = bus, mount, root.rstrip("/")
        self.delay = delay
        self.units = {}
        self.job = 0

    @dbus.service.method(MANAGER)
    def Subscribe(self):
        pass

    @dbus.service.method(MANAGER, in_signature="ssa(sv)a(sa(sv))", out_signature="o")
    def StartTransientUnit(self, name, mode, props, aux):
        name = str(name)
        if not name.endswith(".scope") or name in self.units:
            raise dbus.exceptions.DBusException(
                "unit %s exists or is not a scope" % name,
                name="org.freedesktop.systemd1.UnitExists")
        p = {str(k): v for k, v in props}
        slice_ = str(p.get("Slice", "system.slice"))
        pids = [int(x) for x in p.get("PIDs", [])]
        cgroup = "%s/%s/%s" % (self.root, slice_, name)
        fs = self.mount + cgroup
        os.makedirs(fs, exist_ok=True)
        for pid in pids:  # like systemd: the processes are in the scope when the job ends
            with open(os.path.join(fs, "cgroup.procs"), "w") as f:
                f.write("%d\n" % pid)
        self.units[name] = Unit(self.bus, name, cgroup)
        self.job += 1
        job = dbus.ObjectPath("%s/job/%d" % (PATH, self.job))
        jid = self.job
        GLib.idle_add(self._job_done, jid, job, name)
        print("started %s with %s in %s" % (name, pids, cgroup), flush=True)
        return job

    def _job_done(self, jid, job, name):
        self.JobNew(dbus.UInt32(jid), job, name)
        self.JobRemoved(dbus.UInt32(jid), job, name, "done")
        return False

    @dbus.service.method(MANAGER, in_signature="s", out_signature="o",
                         async_callbacks=("reply", "error"))
    def GetUnit(self, name, reply, error):
        u = self.units.get(str(name))
        if not u:
            error(dbus.exceptions.DBusException("no unit %s" % name,
                                                name="org.freedesktop.systemd1.NoSuchUnit"))
            return
        if not self.delay:
            reply(dbus.ObjectPath(u.path))
            return
        print("GetUnit %s" % name, flush=True)
        GLib.timeout_add(int(self.delay * 1000), lambda: reply(dbus.ObjectPath(u.path)) and False)

    @dbus.service.signal(MANAGER, signature="uos")
    def JobNew(self, jid, job, unit):
        pass

    @dbus.service.signal(MANAGER, signature="uoss")
    def JobRemoved(self, jid, job, unit, result):
        pass


def main():
    mount, root = sys.argv[1], sys.argv[2]
    delay = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    Manager(bus, mount, root, delay)
    name = dbus.service.BusName(BUS_NAME, bus)
    print("ready", flush=True)
    GLib.MainLoop().run()
    del name


if __name__ == "__main__":
    main()
