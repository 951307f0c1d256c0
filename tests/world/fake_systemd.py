# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for systemd's system manager on the world's bus, for `roam run` under systemd:
the part of org.freedesktop.systemd1.Manager roamd uses (Subscribe, StartTransientUnit of a
scope with Slice and PIDs, GetUnit, JobNew/JobRemoved) and the Scope's ControlGroup. Like
systemd, it creates the scope's cgroup and moves the listed processes into it before the job
ends. Its hierarchy root is a subtree of the real one (the world's cgroup).

usage: fake_systemd.py CGROUP2_MOUNT ROOT [GETUNIT_DELAY_SECONDS]   (ROOT: e.g. /roam-world-NAME)

With a delay, GetUnit answers that late (a PID 1 under load), and says "GetUnit NAME" on
stdout when asked.

It refuses what systemd 252 refuses (src/basic/unit-name.c unit_name_is_valid(),
unit_name_to_type(); src/core/unit.c unit_add_name(); src/core/dbus-manager.c
method_start_transient_unit()/transient_unit_from_message(); src/core/dbus-scope.c; scope.c
scope_verify()), with its error names: a name that is not a valid unit name (characters,
length, an empty prefix, an unknown type), an instance ('@') in a scope's name, a type other
than a scope, a job mode it does not know, a unit already loaded, unknown properties, a Slice
that is no slice, PIDs that do not exist, a scope without PIDs, and an unprivileged caller
(systemd would ask polkit for org.freedesktop.systemd1.manage-units; the world has no
polkit for systemd, so: access denied)."""
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


UNIT_NAME_MAX = 256  # with the NUL
VALID_CHARS = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:-_.\\")
UNIT_TYPES = ("service", "mount", "swap", "socket", "target", "device", "automount", "timer",
              "path", "slice", "scope")
MAY_TEMPLATE = ("service", "socket", "target", "timer", "path")  # unit_type_may_template()
JOB_MODES = ("fail", "replace", "replace-irreversibly", "isolate", "flush",
             "ignore-dependencies", "ignore-requirements")
# what bus_scope_set_transient_property() and bus_unit_set_transient_property() take (the
# part a scope can be given that anyone might send; anything else is refused)
SCOPE_PROPS = {"Slice": "s", "Description": "s", "CollectMode": "s", "PIDs": "au",
               "Delegate": "b", "AddRef": "b", "TimeoutStopUSec": "t", "RuntimeMaxUSec": "t",
               "SendSIGHUP": "b", "KillMode": "s", "KillSignal": "i"}

INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"


def fail(name, text):
    raise dbus.exceptions.DBusException(text, name=name)


def unit_name_is_valid(n, plain=True, instance=True, template=False):
    """src/basic/unit-name.c unit_name_is_valid()"""
    if not n or len(n) >= UNIT_NAME_MAX:
        return False
    e = n.rfind(".")
    if e <= 0 or n[e + 1:] not in UNIT_TYPES:
        return False
    at = None
    for i, c in enumerate(n[:e]):
        if c == "@" and at is None:
            at = i
        if c not in VALID_CHARS and c != "@":
            return False
    if at == 0:
        return False
    if plain and at is None:
        return True
    if instance and at is not None and e > at + 1:
        return True
    if template and at is not None and e == at + 1:
        return True
    return False


TYPES = {"s": dbus.String, "b": dbus.Boolean, "t": dbus.UInt64, "i": dbus.Int32,
         "u": dbus.UInt32}


def has_signature(value, sig):
    if sig.startswith("a"):
        return isinstance(value, dbus.Array) and all(isinstance(x, TYPES[sig[1]]) for x in value)
    return isinstance(value, TYPES[sig])


def unit_type(n):
    """unit_name_to_type(): the suffix of a valid name"""
    return n[n.rfind(".") + 1:] if unit_name_is_valid(n, True, True, True) else None


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

    def _caller_uid(self, sender):
        return int(self.bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                          "org.freedesktop.DBus", "GetConnectionUnixUser", "s",
                                          [sender]))

    def _caller_pid(self, sender):
        return int(self.bus.call_blocking("org.freedesktop.DBus", "/org/freedesktop/DBus",
                                          "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                                          "s", [sender]))

    def _check_transient(self, name, mode, props, sender):
        """systemd 252's checks, in its order; returns (slice, pids)."""
        if self._caller_uid(sender) != 0:
            fail("org.freedesktop.DBus.Error.AccessDenied", "Access denied")
        if mode not in JOB_MODES:
            fail(INVALID_ARGS, "Job mode %s is invalid." % mode)
        t = unit_type(name)
        if t is None:
            fail(INVALID_ARGS, "Invalid unit name or type.")
        if t != "scope":  # the double makes scopes only: the rest is no part of roam
            fail(INVALID_ARGS, "Unit type %s is not supported by this double." % t)
        if not unit_name_is_valid(name, plain=True, instance=True):
            fail(INVALID_ARGS, "Unit name %s is not valid." % name)
        if "@" in name and t not in MAY_TEMPLATE:
            # unit_add_name(): "Templates are not allowed", -EINVAL back to the caller
            fail(INVALID_ARGS, "Invalid argument")
        if name in self.units:
            fail("org.freedesktop.systemd1.UnitExists",
                 "Unit %s was already loaded or has a fragment file." % name)
        slice_, pids = "system.slice", []
        for key, value in props:
            key = str(key)
            sig = SCOPE_PROPS.get(key)
            if sig is None:
                fail("org.freedesktop.DBus.Error.PropertyReadOnly",
                     "Cannot set property %s, or unknown property." % key)
            if not has_signature(value, sig):  # sd_bus_message_read() of the wrong type
                fail(INVALID_ARGS, "Invalid type for %s." % key)
            if key == "Slice":
                slice_ = str(value)
                if not unit_name_is_valid(slice_, plain=True, instance=False) \
                        or not slice_.endswith(".slice"):
                    fail(INVALID_ARGS, "Unit name '%s' is not a valid slice." % slice_)
            elif key == "CollectMode" and str(value) not in ("inactive", "inactive-or-failed"):
                fail(INVALID_ARGS, "Invalid collect mode: %s" % value)
            elif key == "PIDs":
                for x in value:
                    pid = int(x) or self._caller_pid(sender)
                    if not os.path.exists("/proc/%d" % pid):
                        fail("org.freedesktop.systemd1.NoSuchProcess",
                             "Process %d no longer exists." % pid)
                    pids.append(pid)
        if not pids:  # scope_verify(): the unit fails to load
            fail("org.freedesktop.DBus.Error.FileNotFound",
                 "Unit %s failed to load properly, please adjust/correct and reload service "
                 "manager: No such file or directory" % name)
        return slice_, pids

    @dbus.service.method(MANAGER, in_signature="ssa(sv)a(sa(sv))", out_signature="o",
                         sender_keyword="sender")
    def StartTransientUnit(self, name, mode, props, aux, sender=None):
        name, mode = str(name), str(mode)
        slice_, pids = self._check_transient(name, mode, props, sender)
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
