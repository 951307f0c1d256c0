#!/usr/bin/python3
"""A test double of roamd's D-Bus API v1 (docs/dbus-api.md), for testing the `roam` client
without a kernel world: it owns org.roam1 on the bus named by DBUS_SYSTEM_BUS_ADDRESS and
exports /org/roam1 (org.roam1.Manager, org.freedesktop.DBus.ObjectManager) and one
/org/roam1/link/<ifindex> object (org.roam1.Link) per link of a scenario, with every
property in its documented D-Bus type.

Usage: fake_roamd.py SCENARIO.json

The scenario is JSON, properties named as on the bus:
  {"manager": {"Version": "...", "State": "online", "BestLink": "/org/roam1/link/3", ...},
   "links": [{"Index": 3, "Name": "wifi0", "Addresses": [[4, "192.0.2.10", 24, "global"]],
              ...}]}
Missing properties get neutral defaults. Two keys exist only to test the client's robustness:
"_extra" (properties a newer roamd might add, sent as strings) and "_types" (send a property
with a wrong signature, e.g. {"MTU": "s"}).

A link may carry "_reprobe": properties that a successful Reprobe() applies (as a probe
round would); without it, Reprobe() only sets LastProbe to now.

Prints READY on stdout once the name is owned; runs until SIGTERM or SIGINT. Tests change
the state while it runs through stdin, one JSON command a line, each answered by one line
("OK" or "OK <json>", "ERROR <why>") after the signals went out:
  {"op": "set", "link": 3, "props": {...}}   change link properties (PropertiesChanged)
  {"op": "manager", "props": {...}}          change manager properties
  {"op": "add", "link": {...}}               a new link (InterfacesAdded)
  {"op": "remove", "link": 3}                a link vanishes (InterfacesRemoved)
  {"op": "reprobes"}                         the indexes Reprobe() was called on, in order
Needs Debian's python3-dbus and python3-gi: run with /usr/bin/python3.
"""
import grp
import json
import os
import pwd
import signal
import sys
import time

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BUS_NAME = "org.roam1"
MANAGER_PATH = "/org/roam1"
LINK_PATH_PREFIX = "/org/roam1/link"
MANAGER_IFACE = "org.roam1.Manager"
LINK_IFACE = "org.roam1.Link"
PROPS_IFACE = "org.freedesktop.DBus.Properties"
OM_IFACE = "org.freedesktop.DBus.ObjectManager"

# Property name -> (D-Bus signature, default), in the order of docs/dbus-api.md.
MANAGER_PROPERTIES = {
    "Version": ("s", "0.1.0"),
    "State": ("s", "offline"),
    "BestLink": ("o", "/"),
    "ConfigFile": ("s", "/etc/roam/roamd.conf"),
}

LINK_PROPERTIES = {
    "Index": ("i", 0),
    "Name": ("s", ""),
    "Bearer": ("s", "ethernet"),
    "BearerSource": ("s", "sysfs"),
    "Kind": ("s", ""),
    "Driver": ("s", ""),
    "HardwareAddress": ("s", ""),
    "MTU": ("u", 1500),
    "AdminUp": ("b", False),
    "Carrier": ("b", False),
    "OperState": ("s", "down"),
    "State": ("s", "no-carrier"),
    "Addresses": ("a(isus)", []),
    "Gateways": ("a(is)", []),
    "DNS": ("a(is)", []),
    "DNSSource": ("s", "none"),
    "Domains": ("as", []),
    "CaptivePortalURL": ("s", ""),
    "Connectivity": ("s", "offline"),
    "ConnectivityReason": ("s", "not-probed"),
    "Connectivity4": ("s", "offline"),
    "ConnectivityReason4": ("s", "not-probed"),
    "Connectivity6": ("s", "offline"),
    "ConnectivityReason6": ("s", "not-probed"),
    "PortalURL": ("s", ""),
    "LastProbe": ("t", 0),
    "ProbeDuration": ("t", 0),
    "CaptivePortal": ("a{sv}", {}),
}

# Members of Link.CaptivePortal and their types (docs/dbus-api.md).
CAPPORT_MEMBERS = {
    "Captive": "b", "UserPortalURL": "s", "VenueInfoURL": "s", "SecondsRemaining": "t",
    "BytesRemaining": "t", "CanExtendSession": "b", "Error": "s",
}
VERDICTS = ("offline", "local", "portal", "partial", "online")
REASONS = ("not-probed", "no-carrier", "no-address", "link-local-only", "no-route",
           "gateway-unreachable", "dns-failed", "http-timeout", "http-failed", "portal-redirect",
           "portal-content", "portal-dns", "capport", "https-failed", "ok")

LINK_STATES = ("no-carrier", "no-address", "link-local", "addressed", "routable")
BEARERS = ("ethernet", "wifi", "cellular", "bluetooth", "wifi-direct", "vpn", "lowpan", "virtual")


def to_dbus(signature, value):
    """Converts a JSON value to the dbus-python type of signature."""
    if signature == "s":
        return dbus.String(value)
    if signature == "o":
        return dbus.ObjectPath(value)
    if signature == "i":
        return dbus.Int32(value)
    if signature == "u":
        return dbus.UInt32(value)
    if signature == "b":
        return dbus.Boolean(value)
    if signature == "t":
        return dbus.UInt64(value)
    if signature == "a{sv}":
        unknown = set(value) - set(CAPPORT_MEMBERS)
        if unknown:
            raise ValueError(f"unknown CaptivePortal members {sorted(unknown)}")
        return dbus.Dictionary({k: to_dbus(CAPPORT_MEMBERS[k], v) for k, v in value.items()},
                               signature="sv")
    if signature == "as":
        return dbus.Array([dbus.String(v) for v in value], signature="s")
    if signature == "a(isus)":
        return dbus.Array([dbus.Struct((dbus.Int32(f), dbus.String(a), dbus.UInt32(p),
                                        dbus.String(s)), signature="isus")
                           for f, a, p, s in value], signature="(isus)")
    if signature == "a(is)":
        return dbus.Array([dbus.Struct((dbus.Int32(f), dbus.String(a)), signature="is")
                           for f, a in value], signature="(is)")
    raise ValueError(f"unsupported signature {signature}")


def check_values(values):
    """Refuses values the documented API cannot have (unless _types asks for wrong types)."""
    if "_types" in values:
        return
    for key in ("Connectivity", "Connectivity4", "Connectivity6"):
        if key in values and values[key] not in VERDICTS:
            raise ValueError(f"{key} {values[key]!r} is not one of {VERDICTS}")
    for key in ("ConnectivityReason", "ConnectivityReason4", "ConnectivityReason6"):
        if key in values and values[key] not in REASONS:
            raise ValueError(f"{key} {values[key]!r} is not one of {REASONS}")


def build_properties(table, values, only=None):
    """All properties of an interface as a{sv}, defaults for what values lacks; with only,
    just the properties named there (for PropertiesChanged)."""
    values = dict(values)
    extra = values.pop("_extra", {})
    types = values.pop("_types", {})
    values.pop("_reprobe", None)
    unknown = set(values) - set(table)
    if unknown:
        raise ValueError(f"scenario names unknown properties: {sorted(unknown)}")
    check_values(values)
    if table is MANAGER_PROPERTIES and "State" in values and "_types" not in values and \
            values["State"] not in VERDICTS:
        raise ValueError(f"Manager.State {values['State']!r} is not one of {VERDICTS}")
    props = dbus.Dictionary({}, signature="sv")
    for name, (signature, default) in table.items():
        if only is not None and name not in only:
            continue
        value = values.get(name, default)
        signature = types.get(name, signature)
        if signature == "s" and not isinstance(value, str):
            value = str(value)  # a deliberately wrong type
        props[name] = to_dbus(signature, value)
    for name, value in extra.items():
        props[name] = dbus.String(value)
    return props


class PropertiesObject(dbus.service.Object):
    """An object with one roam interface, readable through org.freedesktop.DBus.Properties."""

    def __init__(self, conn, path, interface, props):
        super().__init__(conn, path)
        self.interface = interface
        self.props = props

    @dbus.service.method(PROPS_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        if interface != self.interface or name not in self.props:
            raise dbus.exceptions.DBusException(
                f"no property {interface}.{name}",
                name="org.freedesktop.DBus.Error.UnknownProperty")
        return self.props[name]

    @dbus.service.method(PROPS_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        if interface != self.interface:
            return dbus.Dictionary({}, signature="sv")
        return self.props

    @dbus.service.method(PROPS_IFACE, in_signature="ssv")
    def Set(self, interface, name, value):
        raise dbus.exceptions.DBusException(
            f"property {interface}.{name} is read-only",
            name="org.freedesktop.DBus.Error.PropertyReadOnly")

    @dbus.service.signal(PROPS_IFACE, signature="sa{sv}as")
    def PropertiesChanged(self, interface, changed, invalidated):
        pass


class Link(PropertiesObject):
    def __init__(self, conn, values, manager=None):
        index = int(values["Index"])
        if index <= 0:
            raise ValueError("a link needs an Index > 0")
        for key, allowed in (("State", LINK_STATES), ("Bearer", BEARERS)):
            if key in values and values[key] not in allowed and "_types" not in values:
                raise ValueError(f"{key} {values[key]!r} is not one of {allowed}")
        self.index = index
        self.path = f"{LINK_PATH_PREFIX}/{index}"
        self.values = dict(values)
        self.manager = manager
        super().__init__(conn, self.path, LINK_IFACE, build_properties(LINK_PROPERTIES, values))

    def update(self, changes):
        """Applies changed properties and announces them with their values, as roamd does."""
        unknown = set(changes) - set(LINK_PROPERTIES)
        if unknown:
            raise ValueError(f"unknown properties {sorted(unknown)}")
        self.values.update(changes)
        changed = build_properties(LINK_PROPERTIES, self.values, only=set(changes))
        self.props.update(changed)
        self.PropertiesChanged(LINK_IFACE, changed, dbus.Array([], signature="s"))

    @dbus.service.method(LINK_IFACE, sender_keyword="sender")
    def Reprobe(self, sender=None):
        if not authorized(self.connection, sender):
            raise dbus.exceptions.DBusException(
                "only root or group netdev may re-probe",
                name="org.roam1.Error.AccessDenied")
        self.manager.reprobes.append(self.index)
        changes = dict(self.values.get("_reprobe", {}))
        changes.setdefault("LastProbe", int(time.time() * 1_000_000))
        # roamd announces the verdict first, then the round's timing.
        verdict = {k: v for k, v in changes.items() if k not in ("LastProbe", "ProbeDuration")}
        if verdict:
            self.update(verdict)
        self.update({k: v for k, v in changes.items() if k in ("LastProbe", "ProbeDuration")})


def authorized(conn, sender):
    """uid 0, or a member of group netdev (docs/dbus-api.md)."""
    uid = conn.get_unix_user(sender)
    if uid == 0:
        return True
    try:
        netdev = grp.getgrnam("netdev").gr_gid
        user = pwd.getpwuid(uid)
    except KeyError:
        return False
    return netdev in os.getgrouplist(user.pw_name, user.pw_gid)


class Manager(PropertiesObject):
    def __init__(self, conn, values, links):
        super().__init__(conn, MANAGER_PATH, MANAGER_IFACE,
                         build_properties(MANAGER_PROPERTIES, values))
        self.values = dict(values)
        self.links = links
        self.reprobes = []
        for link in links:
            link.manager = self

    def update(self, changes):
        self.values.update(changes)
        changed = build_properties(MANAGER_PROPERTIES, self.values, only=set(changes))
        self.props.update(changed)
        self.PropertiesChanged(MANAGER_IFACE, changed, dbus.Array([], signature="s"))

    def add_link(self, values):
        link = Link(self.connection, values, self)
        if any(other.index == link.index for other in self.links):
            link.remove_from_connection()
            raise ValueError(f"link {link.index} exists")
        self.links.append(link)
        self.InterfacesAdded(dbus.ObjectPath(link.path),
                             dbus.Dictionary({LINK_IFACE: link.props}, signature="sa{sv}"))

    def remove_link(self, index):
        link = self.find(index)
        self.links.remove(link)
        link.remove_from_connection()
        self.InterfacesRemoved(dbus.ObjectPath(link.path), dbus.Array([LINK_IFACE], signature="s"))

    def find(self, index):
        for link in self.links:
            if link.index == index:
                return link
        raise ValueError(f"no link {index}")

    def command(self, cmd):
        """One control command from stdin; returns the reply line."""
        op = cmd.get("op")
        if op == "set":
            self.find(cmd["link"]).update(cmd["props"])
        elif op == "manager":
            self.update(cmd["props"])
        elif op == "add":
            self.add_link(cmd["link"])
        elif op == "remove":
            self.remove_link(cmd["link"])
        elif op == "reprobes":
            return "OK " + json.dumps(self.reprobes)
        else:
            raise ValueError(f"unknown op {op!r}")
        return "OK"

    def _error(self, name, message):
        return dbus.exceptions.DBusException(message, name=f"org.roam1.Error.{name}")

    @dbus.service.method(OM_IFACE, out_signature="a{oa{sa{sv}}}")
    def GetManagedObjects(self):
        # Like sd-bus (and as the D-Bus spec says): only the objects below the manager's path,
        # never /org/roam1 itself.
        objects = dbus.Dictionary({}, signature="oa{sa{sv}}")
        for link in self.links:
            objects[dbus.ObjectPath(link.path)] = dbus.Dictionary(
                {LINK_IFACE: link.props}, signature="sa{sv}")
        return objects

    @dbus.service.signal(OM_IFACE, signature="oa{sa{sv}}")
    def InterfacesAdded(self, path, interfaces):
        pass

    @dbus.service.signal(OM_IFACE, signature="oas")
    def InterfacesRemoved(self, path, interfaces):
        pass

    @dbus.service.method(MANAGER_IFACE, in_signature="s", out_signature="o")
    def GetLinkByName(self, name):
        if not name or len(name.encode()) > 15 or "/" in name or any(c.isspace() for c in name):
            raise self._error("InvalidArguments", f"invalid interface name {name!r}")
        for link in self.links:
            if link.props["Name"] == name:
                return dbus.ObjectPath(link.path)
        raise self._error("NoSuchLink", f"no link named {name!r}")

    @dbus.service.method(MANAGER_IFACE, in_signature="i", out_signature="o")
    def GetLinkByIndex(self, ifindex):
        if ifindex <= 0:
            raise self._error("InvalidArguments", f"invalid ifindex {ifindex}")
        for link in self.links:
            if link.index == ifindex:
                return dbus.ObjectPath(link.path)
        raise self._error("NoSuchLink", f"no link with index {ifindex}")

    @dbus.service.method(MANAGER_IFACE, sender_keyword="sender")
    def Reload(self, sender=None):
        uid = self.connection.get_unix_user(sender)
        if uid != 0:
            raise self._error("AccessDenied", "only root or group netdev may reload")


def main():
    if len(sys.argv) != 2:
        print("usage: fake_roamd.py SCENARIO.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        scenario = json.load(f)

    DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    links = [Link(conn, values) for values in scenario.get("links", [])]
    manager = Manager(conn, scenario.get("manager", {}), links)
    name = dbus.service.BusName(BUS_NAME, conn, do_not_queue=True)

    loop = GLib.MainLoop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, loop.quit)

    def on_stdin(fd, condition):
        line = sys.stdin.readline()
        if not line:
            return False  # the test closed its end: keep serving
        try:
            reply = manager.command(json.loads(line))
        except (ValueError, KeyError, TypeError) as e:
            reply = f"ERROR {e}"
        # The signals are sent before the reply: the bus has them when the test reads it.
        conn.flush()
        print(reply, flush=True)
        return True

    if not sys.stdin.isatty():
        GLib.io_add_watch(sys.stdin.fileno(), GLib.IO_IN | GLib.IO_HUP, on_stdin)
    print("READY", flush=True)
    loop.run()
    del name, manager
    return 0


if __name__ == "__main__":
    sys.exit(main())
