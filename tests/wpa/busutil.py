"""Waits on roamd's bus by its signals: a condition is checked again each time roamd emits
something (PropertiesChanged, InterfacesAdded/Removed, its own signals), never on a timer."""
import time

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

MANAGER = "org.roam1.Manager"
PEER = "org.roam1.Peer"
LINK = "org.roam1.Link"


class RoamBus:
    def __init__(self, address):
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        self.bus = dbus.bus.BusConnection(address)
        self.got = False
        self.signals = []  # (member, args) of roamd's own signals
        self.link_changes = []  # (path, {changed property: value}) of Link PropertiesChanged
        self.bus.add_signal_receiver(self._on_signal, path_keyword="path",
                                     member_keyword="member", interface_keyword="iface")

    def _on_signal(self, *args, path=None, member=None, iface=None):
        if path and path.startswith("/org/roam1"):
            self.got = True
            if iface == MANAGER:
                self.signals.append((str(member), [str(a) for a in args]))
            if (member == "PropertiesChanged" and path.startswith("/org/roam1/link/") and
                    args and args[0] == LINK):
                self.link_changes.append((str(path), _py(args[1])))

    def wait(self, pred, timeout=10.0, what="condition"):
        ctx = GLib.MainContext.default()
        deadline = time.monotonic() + timeout
        fired = []
        src = GLib.timeout_add(int(timeout * 1000), lambda: fired.append(1) or False)
        try:
            while True:
                self.got = False
                v = pred()
                if v:
                    return v
                while not self.got and not fired:
                    ctx.iteration(True)
                if fired or time.monotonic() > deadline:
                    v = pred()
                    if v:
                        return v
                    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        finally:
            if not fired:
                GLib.source_remove(src)

    def obj(self, path):
        return self.bus.get_object("org.roam1", path, introspect=False)

    def get(self, path, iface, name):
        v = self.obj(path).Get(iface, name, dbus_interface="org.freedesktop.DBus.Properties")
        return _py(v)

    def get_all(self, path, iface):
        v = self.obj(path).GetAll(iface, dbus_interface="org.freedesktop.DBus.Properties")
        return _py(v)

    def call(self, path, iface, method, *args):
        return _py(getattr(self.obj(path), method)(*args, dbus_interface=iface))

    def manager(self, method, *args):
        return self.call("/org/roam1", MANAGER, method, *args)

    def objects(self):
        om = self.obj("/org/roam1")
        return _py(om.GetManagedObjects(dbus_interface="org.freedesktop.DBus.ObjectManager"))

    def peers(self):
        return {p: i[PEER] for p, i in self.objects().items() if PEER in i}

    def link_path(self, ifname):
        try:
            return self.manager("GetLinkByName", ifname)
        except dbus.DBusException:
            return None

    def link_prop(self, ifname, name):
        p = self.link_path(ifname)
        return self.get(p, LINK, name) if p else None

    def wait_signal(self, member, timeout=10.0):
        """The arguments of roamd's signal member (the first one seen)."""
        return self.wait(lambda: self.signal(member), timeout, what=f"signal {member}")

    def signal(self, member):
        for m, args in self.signals:
            if m == member:
                return args
        return None


def _py(v):
    if isinstance(v, dbus.Dictionary):
        return {str(k): _py(x) for k, x in v.items()}
    if isinstance(v, (dbus.Array, list, tuple)):
        return [_py(x) for x in v]
    if isinstance(v, dbus.Boolean):
        return bool(v)
    if isinstance(v, (dbus.String, dbus.ObjectPath)):
        return str(v)
    if isinstance(v, (dbus.UInt32, dbus.Int32, dbus.UInt64, dbus.Int64, dbus.Byte)):
        return int(v)
    return v
