#!/usr/bin/python3
"""A test double of roamd's D-Bus API v1 (docs/dbus-api.md), for testing the `roam` client
without a kernel world: it owns org.roam1 on the bus named by DBUS_SYSTEM_BUS_ADDRESS and
exports /org/roam1 (org.roam1.Manager, org.freedesktop.DBus.ObjectManager), one
/org/roam1/link/<ifindex> object (org.roam1.Link) per link of a scenario and one
/org/roam1/app/<escaped id> object (org.roam1.App) per app, always with `default` and
`system`, with every property in its documented D-Bus type.

Usage: fake_roamd.py SCENARIO.json

The scenario is JSON, properties named as on the bus:
  {"manager": {"Version": "...", "State": "online", "BestLink": "/org/roam1/link/3", ...},
   "links": [{"Index": 3, "Name": "wifi0", "Addresses": [[4, "192.0.2.10", 24, "global"]],
              ...}]}
Apps are listed under "apps": [{"Id": "org.example.Mail", "Access": "deny", ...}]; `default`
and `system` are added when the scenario leaves them out. The app methods (GetApp,
SetAppPolicy, ResetAppPolicy, RunApp, App.OnlineFor, App.Release; App.Register and App.Done
of the ordered wake-up, which need WakeState "awake" for Done; Manager.WakeNow, which needs
a wake-listed app; SetAppPolicy's wake=, no or 0-100) check their arguments as
the contract says, in roamd's order and with roamd's messages (service/features/apps/roamd-apps-bus.c:
arguments first, then authorization), and change the objects with PropertiesChanged / InterfacesAdded /
InterfacesRemoved; the State they derive is simple (a grant: "online for a task", deny:
"blocked: access denied", lan: "local networks only", vpn=required without an online vpn
link: "blocked: VPN down", else "online"). RunApp reads the pid of the pidfd from
/proc/self/fdinfo and refuses a pidfd of another process than the caller. "_now" (µs) fixes
the clock the fake uses for OnlineUntil; "_deny_uids" lists uids that get AccessDenied as if
they were neither root nor in group netdev (tests run as root).

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
  {"op": "app", "id": "x", "props": {...}}   change app properties (PropertiesChanged)
  {"op": "add_app", "app": {...}}            a new app (InterfacesAdded)
  {"op": "remove_app", "id": "x"}            an app vanishes (InterfacesRemoved)
  {"op": "wake", "id": "x", "reason": "turn", "period": 1, "props": {...}}
                                             an app's turn: its properties, then App.Wake
  {"op": "deny", "uids": [0]}                these uids get AccessDenied from now on
  {"op": "fail", "message": "..."}           the next app method that changes something
                                             answers org.roam1.Error.Failed with it
  {"op": "calls"}                            the app method calls: [method, id, argument]
  {"op": "runs"}                             RunApp calls: {"id", "pid", "usec", "cgroup"}
  {"op": "portal", "sessions": [...]}        replace org.roam1.Portal's Sessions
  {"op": "portal_calls"}                     the Portal method calls: [method, link, ...]
                                             (Login: user, the password read from the fd)
  {"op": "budget", "budgets": [...]}         replace the budgets, signal BudgetChanged
  {"op": "time", "props": {...}}             change org.roam1.Time's properties
The scenario's "portal_sessions" (a list of session dictionaries, keys as on the bus) makes
/org/roam1/portal (org.roam1.Portal) exist. Its "time" ({"State", "Gate", "Bound": [t, e],
"Sources": [[kind, witness, origin, t, e, verdict, reason]], "Reasons": [...], and, when given,
"ClockState", "ClockReason"}) makes /org/roam1/time (org.roam1.Time) exist. Its
"monitor_listeners" ({app ID: connections}) makes /org/roam1/monitor (org.roam1.AppMonitor's
Listeners) exist.
The firewall (FIREWALL-API.md, docs/firewall.md): links carry NetworkId, NetworkIdentity,
Location, LocationSource, LocationReason and LocationWanted ("" unless given: as from a roamd
without it); the manager FirewallError, Locations, SSH and SSHLetIn (SSH=always unless
the scenario's "manager" says otherwise). The
scenario's "firewall_rules" lists the rules GetFirewallRules() returns, each
[link, location, direction, action, match, app, source, id, packets, bytes]. SetLocation
checks its arguments, then who asks (AccessDenied for "_deny_uids"), then moves the link to
the location (LocationSource "user") and swaps its rules: the rules of that link are
replaced by the scenario's "firewall_profiles"[location] (same rows, link and location filled
in). CheckInbound walks the link's inbound rules in order: a match "PROTO PORT" (or
"PROTO FIRST-LAST") with the rule's app "" or the asked app decides; a match "any" always
does; without one the default policy drops. "_firewall_off" (a message) makes the three
methods answer org.roam1.Error.Failed with it, as roamd does with [Firewall] Enable=no. More
commands:
  {"op": "location_calls"}                   the SetLocation calls: [link, location]
  {"op": "rules", "rules": [...]}            replace the rules in force
  {"op": "usage_rows", "rows": [...]}        replace the usage rows (no signal, as roamd)
The scenario's "usage" makes /org/roam1 answer
org.roam1.Usage: {"rows": [[owner, link, roaming, bytes in, bytes out, packets in, packets
out], ...], "history": [[hour start, roaming, bytes in, bytes out, packets in, packets out],
...], "budgets": [[app, links, limit, used, start, end, warn percent, state], ...]}; everyone
(all) needs authorization, as roamd does, else the caller gets the rows of its own uid; the
"link" and "app" filters keep the rows of that link and app.
The scenario's "peers" (a list of org.roam1.Peer property dictionaries, as on the bus) makes
WiFi Direct devices exist below /org/roam1/peer/ (in GetManagedObjects) and gives the manager
P2PState and P2PDevice ("p2p": {"P2PState": ..., "P2PDevice": ...}); "bluetooth" (a dictionary
of org.roam1.Bluetooth properties) makes /org/roam1/bluetooth exist. Both are read-only here:
enough for what `roam p2p peers` and `roam bt` print.
A link with "_wifi" is a Wi-Fi link with org.roam1.WiFi (fake_wifi.py says how, and its
commands: wifi_calls, wifi_joins, wifi_set, wifi_enroll).
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

import fake_wifi

BUS_NAME = "org.roam1"
MANAGER_PATH = "/org/roam1"
LINK_PATH_PREFIX = "/org/roam1/link"
APP_PATH_PREFIX = "/org/roam1/app"
MANAGER_IFACE = "org.roam1.Manager"
LINK_IFACE = "org.roam1.Link"
APP_IFACE = "org.roam1.App"
PROPS_IFACE = "org.freedesktop.DBus.Properties"
OM_IFACE = "org.freedesktop.DBus.ObjectManager"
USAGE_IFACE = "org.roam1.Usage"
PEER_IFACE = "org.roam1.Peer"
# what roamd answers a caller it refuses where polkit is not running (roamd-bus-auth.c)
NO_POLKIT_DENIED = "Only root or members of group netdev may do this (polkit is not running)."
PEER_PATH_PREFIX = "/org/roam1/peer"
BLUETOOTH_IFACE = "org.roam1.Bluetooth"
BLUETOOTH_PATH = "/org/roam1/bluetooth"

MANAGER_P2P_PROPERTIES = {
    "P2PState": ("s", "idle"),
    "P2PDevice": ("s", "p2p-dev-wlan0"),
}

PEER_PROPERTIES = {
    "Address": ("s", ""),
    "Name": ("s", ""),
    "DeviceType": ("s", "device"),
    "PrimaryDeviceType": ("s", ""),
    "ConfigMethods": ("as", ["push-button"]),
    "State": ("s", "available"),
    "Method": ("s", ""),
    "PIN": ("s", ""),
    "Incoming": ("b", False),
    "GroupInterface": ("s", ""),
    "GroupRole": ("s", ""),
    "Reason": ("s", ""),
}

BLUETOOTH_PROPERTIES = {
    "Available": ("b", True),
    "AgentRegistered": ("b", True),
    "Adapters": ("a(sssbbbb)", []),
    "Devices": ("a(ssssnbbbiss)", []),
    "Question": ("(ussss)", [0, "none", "", "", ""]),
    "NfcOffer": ("(us)", [0, ""]),
    "LastEvent": ("s", ""),
}

# Property name -> (D-Bus signature, default), in the order of docs/dbus-api.md.
MANAGER_PROPERTIES = {
    "Version": ("s", "0.1.0"),
    "State": ("s", "offline"),
    "BestLink": ("o", "/"),
    # as roamd: the link State is about; BestLink's unless the scenario names another
    "DefaultLink": ("o", None),
    "StateReason": ("s", ""),
    "ConfigFile": ("s", "/etc/roam/roamd.conf"),
    "FirewallError": ("s", ""),
    "Locations": ("as", ["home", "work", "public", "untrusted"]),
    # [Firewall] SSH= as roamd publishes it (its default, always: TCP 22 in everywhere)
    "SSH": ("s", "always"),
    "SSHLetIn": ("as", ["home", "work", "public", "untrusted"]),
    "Degraded": ("s", ""),
    "DegradedSince": ("t", 0),
    "MarkConflicts": ("as", []),
    "FirewallMaskSuggestion": ("s", ""),
    "WakeQueue": ("s", "finished"),
    "WakePeriod": ("t", 1),
    "TimeGate": ("b", True),
    "TimeGateReason": ("s", "time not required"),
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
    "NTPServers": ("as", []),
    "CaptivePortalURL": ("s", ""),
    "Connectivity": ("s", "offline"),
    "ConnectivityReason": ("s", "not-probed"),
    "Connectivity4": ("s", "offline"),
    "ConnectivityReason4": ("s", "not-probed"),
    "Connectivity6": ("s", "offline"),
    "ConnectivityReason6": ("s", "not-probed"),
    "PortalURL": ("s", ""),
    "Nat64Prefix": ("s", ""),
    "WorkingMTU4": ("u", 0),
    "WorkingMTU6": ("u", 0),
    "LastProbe": ("t", 0),
    "ProbeDuration": ("t", 0),
    "CaptivePortal": ("a{sv}", {}),
    "WiFiState": ("s", ""),
    "WiFiSSID": ("s", ""),
    "WiFiSignal": ("i", 0),
    "WiFiLinkSpeed": ("u", 0),
    "NetworkId": ("s", ""),
    "NetworkIdentity": ("a{ss}", {}),
    "Location": ("s", ""),
    "LocationSource": ("s", ""),
    "LocationReason": ("s", ""),
    "LocationWanted": ("s", ""),
}

APP_PROPERTIES = {
    "Id": ("s", ""),
    "Access": ("s", "allow"),
    "Bearers": ("as", []),
    "VPN": ("s", "any"),
    "Handover": ("s", "sticky"),
    "Source": ("s", "builtin"),
    "Route4": ("s", ""),
    "Route6": ("s", ""),
    "State": ("s", "online"),
    "OnlineUntil": ("t", 0),
    "Cgroups": ("as", []),
    "Wake": ("i", -1),
    "WakeSlice": ("t", 10_000_000),
    "WakeBytes": ("t", 0),
    "WakeState": ("s", ""),
    "WakeReason": ("s", ""),
    "WakeSince": ("t", 0),
}
APP_STATES = ("online", "online for a task", "local networks only", "blocked: access denied",
              "blocked: VPN down", "blocked: no allowed link")
APP_SETTINGS = {
    "access": ("Access", ("allow", "lan", "deny")),
    "vpn": ("VPN", ("any", "required", "forbidden")),
    "handover": ("Handover", ("sticky", "move")),
    "bearers": ("Bearers", None),
    "wake": ("Wake", None),
    "wake-slice": ("WakeSlice", None),
    "wake-bytes": ("WakeBytes", None),
}
APP_KEYS = "access, bearers, vpn, handover, wake, wake-slice, wake-bytes"
SLICE_UNITS = {"": 1_000_000, "s": 1_000_000, "ms": 1000, "min": 60_000_000, "h": 3_600_000_000}
BYTES_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_unit(key, value, units, what):
    """wake-slice= and wake-bytes= as roamd parses them: digits, then one of the units."""
    digits = value[:len(value) - len(value.lstrip("0123456789"))]
    if not digits or value[len(digits):] not in units:
        raise fake_error("InvalidArguments", f"invalid value '{value}' for {key} ({what})")
    return int(digits) * units[value[len(digits):]]
APP_BEARERS = ("ethernet", "wifi", "cellular", "bluetooth", "wifi-direct", "vpn", "lowpan")
UNTIL_RELEASED = 2**64 - 1
DAY_USEC = 86400 * 1_000_000

# Members of Link.CaptivePortal and their types (docs/dbus-api.md).
CAPPORT_MEMBERS = {
    "Captive": "b", "UserPortalURL": "s", "VenueInfoURL": "s", "SecondsRemaining": "t",
    "BytesRemaining": "t", "CanExtendSession": "b", "Error": "s",
}
VERDICTS = ("offline", "local", "portal", "partial", "online")
REASONS = ("not-probed", "no-carrier", "no-address", "link-local-only", "no-route",
           "gateway-unreachable", "dns-failed", "http-timeout", "http-failed", "portal-redirect",
           "portal-content", "portal-dns", "capport", "https-failed", "portal-certificate",
           "http-cached", "walled-garden", "mtu", "ok")

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
    if signature == "a{ss}":
        return dbus.Dictionary({dbus.String(k): dbus.String(v) for k, v in value.items()},
                               signature="ss")
    if signature == "a(isus)":
        return dbus.Array([dbus.Struct((dbus.Int32(f), dbus.String(a), dbus.UInt32(p),
                                        dbus.String(s)), signature="isus")
                           for f, a, p, s in value], signature="(isus)")
    if signature == "a(is)":
        return dbus.Array([dbus.Struct((dbus.Int32(f), dbus.String(a)), signature="is")
                           for f, a in value], signature="(is)")
    if signature.startswith("(") and signature.endswith(")") and "(" not in signature[1:]:
        inner = signature[1:-1]
        return dbus.Struct([to_dbus(c, v) for c, v in zip(inner, value, strict=True)],
                           signature=inner)
    if signature.startswith("a(") and signature.endswith(")"):
        return dbus.Array([to_dbus(signature[1:], v) for v in value], signature=signature[1:])
    if signature == "n":
        return dbus.Int16(value)
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
    if values.get("LocationSource", "") not in ("", "config", "user", "default", "tunnel"):
        raise ValueError(f"LocationSource {values['LocationSource']!r} is not config, user, "
                         "default or tunnel")


def build_properties(table, values, only=None):
    """All properties of an interface as a{sv}, defaults for what values lacks; with only,
    just the properties named there (for PropertiesChanged)."""
    values = dict(values)
    extra = values.pop("_extra", {})
    types = values.pop("_types", {})
    values.pop("_reprobe", None)
    values.pop("_wifi", None)
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
        if table is MANAGER_PROPERTIES and name == "DefaultLink" and value is None:
            value = values.get("BestLink", "/")
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
        self.path = path
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
                NO_POLKIT_DENIED,
                name="org.roam1.Error.AccessDenied")
        self.manager.reprobes.append(self.index)
        changes = dict(self.values.get("_reprobe", {}))
        changes.setdefault("LastProbe", int(time.time() * 1_000_000))
        # roamd announces the verdict first, then the round's timing.
        verdict = {k: v for k, v in changes.items() if k not in ("LastProbe", "ProbeDuration")}
        if verdict:
            self.update(verdict)
        self.update({k: v for k, v in changes.items() if k in ("LastProbe", "ProbeDuration")})


DENY_UIDS = set()  # tests: uids treated as unauthorized


class WiFiLink(fake_wifi.WiFiObject, Link):
    """A link with "_wifi": org.roam1.WiFi too (fake_wifi.py)."""

    def __init__(self, conn, values, manager=None):
        super().__init__(conn, values, manager)
        self.wifi_init(values["_wifi"])


def make_link(conn, values, manager=None):
    return (WiFiLink if "_wifi" in values else Link)(conn, values, manager)


def link_interfaces(link):
    ifaces = {LINK_IFACE: link.props}
    if isinstance(link, WiFiLink):
        ifaces[fake_wifi.WIFI_IFACE] = link.wifi_props
    return dbus.Dictionary(ifaces, signature="sa{sv}")


def authorized(conn, sender):
    """uid 0, or a member of group netdev (docs/dbus-api.md); never a uid in DENY_UIDS."""
    uid = conn.get_unix_user(sender)
    if uid in DENY_UIDS:
        return False
    if uid == 0:
        return True
    try:
        netdev = grp.getgrnam("netdev").gr_gid
        user = pwd.getpwuid(uid)
    except KeyError:
        return False
    return netdev in os.getgrouplist(user.pw_name, user.pw_gid)


def path_encode(prefix, s):
    """sd_bus_path_encode(): every byte but a-z, A-Z and (not first) 0-9 as _XX."""
    if not s:
        return prefix + "/_"
    out = []
    for i, b in enumerate(s.encode()):
        c = chr(b)
        if (c.isascii() and c.isalpha()) or (i > 0 and c.isascii() and c.isdigit()):
            out.append(c)
        else:
            out.append("_%02x" % b)
    return prefix + "/" + "".join(out)


def app_id_valid(app_id):
    """shared/roam-app-id.c: 1-255 of [A-Za-z0-9._-], starting alphanumeric, no '..'."""
    if not app_id or len(app_id) > 255 or not app_id[0].isascii() or not app_id[0].isalnum():
        return False
    if ".." in app_id:
        return False
    return all(c.isascii() and (c.isalnum() or c in "._-") for c in app_id)


def derive_state(v, configured, manager):
    """State and routes of app values v, the way roamd would decide them (simplified)."""
    routes = {"Route4": configured.get("Route4", ""), "Route6": configured.get("Route6", "")}
    if v.get("OnlineUntil", 0):
        state = "online for a task"
    elif v.get("Access", "allow") == "deny":
        state, routes = "blocked: access denied", {"Route4": "", "Route6": ""}
    elif v.get("VPN", "any") == "required" and not manager.vpn_online():
        state, routes = "blocked: VPN down", {"Route4": "", "Route6": ""}
    elif v.get("Access", "allow") == "lan":
        state = "local networks only"
    else:
        state = "online"
    return dict(routes, State=state)


def parse_bearers(value):
    """bearers=: names separated by commas and/or spaces, or "all"; roamd's messages
    (service/features/apps/roamd-app-policy.c). The list comes back in roamd's bearer order."""
    names = [n for n in value.replace(",", " ").replace("\t", " ").split(" ") if n]
    known = ", ".join(APP_BEARERS)
    if not names:
        raise fake_error("InvalidArguments",
                         f"empty value for bearers (all, or a list of: {known})")
    if names == ["all"]:
        return []
    for i, n in enumerate(names):
        if n == "all":
            raise fake_error("InvalidArguments",
                             "'all' cannot be combined with other bearers in bearers")
        if n not in APP_BEARERS:
            raise fake_error("InvalidArguments", f"unknown bearer '{n}' in bearers ({known})")
        if n in names[:i]:
            raise fake_error("InvalidArguments", f"bearer '{n}' listed twice in bearers")
    return [b for b in APP_BEARERS if b in names]


def fake_error(name, message):
    return dbus.exceptions.DBusException(message, name=f"org.roam1.Error.{name}")


class App(PropertiesObject):
    def __init__(self, conn, values, manager):
        app_id = values.get("Id", "")
        if not app_id_valid(app_id):
            raise ValueError(f"invalid app Id {app_id!r}")
        if "State" in values and values["State"] not in APP_STATES and "_types" not in values:
            raise ValueError(f"State {values['State']!r} is not one of {APP_STATES}")
        self.id = app_id
        self.path = path_encode(APP_PATH_PREFIX, app_id)
        self.values = dict(values)
        # What the configuration says: ResetAppPolicy goes back to it.
        self.configured = dict(values)
        self.manager = manager
        super().__init__(conn, self.path, APP_IFACE, build_properties(APP_PROPERTIES, values))

    def update(self, changes):
        unknown = set(changes) - set(APP_PROPERTIES)
        if unknown:
            raise ValueError(f"unknown properties {sorted(unknown)}")
        changes = {k: v for k, v in changes.items() if self.values.get(k) != v}
        if not changes:
            return
        self.values.update(changes)
        changed = build_properties(APP_PROPERTIES, self.values, only=set(changes))
        self.props.update(changed)
        self.PropertiesChanged(APP_IFACE, changed, dbus.Array([], signature="s"))

    def change(self, changes):
        """Applies a change of policy or grant, with the State and routes it leads to."""
        self.update(dict(changes, **self.derive(dict(self.values, **changes))))

    def derive(self, v):
        return derive_state(v, self.configured, self.manager)

    @dbus.service.method(APP_IFACE, in_signature="t", sender_keyword="sender")
    def OnlineFor(self, usec, sender=None):
        self.manager.record("OnlineFor", self.id, int(usec))
        if self.id in ("default", "system"):
            raise fake_error("InvalidArguments",
                             f"{self.id} is not an app: online for a task is for one app.")
        if usec == 0 or (usec > DAY_USEC and usec != UNTIL_RELEASED):
            raise fake_error("InvalidArguments",
                             "The duration must be more than 0 and at most a day "
                             "(or UINT64_MAX: until released).")
        self.manager.check_change(sender)
        until = UNTIL_RELEASED if usec == UNTIL_RELEASED else self.manager.now() + int(usec)
        self.change({"OnlineUntil": until})

    @dbus.service.method(APP_IFACE, in_signature="a{sv}", sender_keyword="sender")
    def Register(self, options, sender=None):
        self.manager.record("Register", self.id, sorted(str(k) for k in options))
        if self.values.get("WakeState", "") == "":
            raise fake_error("Failed", f"App {self.id} is not wake-listed (its policy has no "
                             "wake=).")

    @dbus.service.method(APP_IFACE, sender_keyword="sender")
    def Done(self, sender=None):
        self.manager.record("Done", self.id, None)
        if self.values.get("WakeState") != "awake":
            raise fake_error("Failed", f"App {self.id} has no turn running.")
        self.update({"WakeState": "done", "WakeReason": "done"})

    @dbus.service.signal(APP_IFACE, signature="ts")
    def Wake(self, period, reason):
        pass

    @dbus.service.method(APP_IFACE, sender_keyword="sender")
    def Release(self, sender=None):
        self.manager.record("Release", self.id, None)
        self.manager.check_change(sender)
        self.change({"OnlineUntil": 0})


class Manager(PropertiesObject):
    def __init__(self, conn, values, links):
        super().__init__(conn, MANAGER_PATH, MANAGER_IFACE,
                         build_properties(MANAGER_PROPERTIES, values))
        self.values = dict(values)
        self.links = links
        self.reprobes = []
        self.apps = []
        self.calls = []
        self.runs = []
        self.fail_next = None
        self.clock = None
        self.rules = []
        self.profiles = {}
        self.firewall_off = None
        self.location_calls = []
        self.usage = None
        self.peers = []
        self.bluetooth = None
        for link in links:
            link.manager = self

    # Apps

    def now(self):
        return self.clock if self.clock is not None else int(time.time() * 1_000_000)

    def vpn_online(self):
        return any(link.values.get("Bearer") == "vpn" and
                   link.values.get("Connectivity") == "online" for link in self.links)

    def record(self, method, app_id, argument):
        self.calls.append([method, app_id, argument])

    def check_change(self, sender):
        """Authorization and the injected failure of a method that changes something."""
        if not authorized(self.connection, sender):
            raise fake_error("AccessDenied", NO_POLKIT_DENIED)
        if self.fail_next is not None:
            message, self.fail_next = self.fail_next, None
            raise fake_error("Failed", message)

    # Usage (org.roam1.Usage)

    def usage_rows(self, flt, sender, key):
        if self.usage is None:
            raise dbus.exceptions.DBusException("no such interface",
                                                name="org.freedesktop.DBus.Error.UnknownMethod")
        if flt.get("all") and not authorized(self.connection, sender):
            raise fake_error("AccessDenied", "Reading everyone's usage needs authorization.")
        uid = self.connection.get_unix_user(sender)
        own = ("user:%d" % uid, "user:%d/" % uid)
        rows = self.usage.get(key, [])
        if key == "history":
            return rows
        # the link and app filters as roamd applies them (service/features/stats/roamd-stats-bus.c)
        if flt.get("link"):
            rows = [r for r in rows if r[1] == flt["link"]]
        if flt.get("app"):
            rows = [r for r in rows if r[0].split("/")[-1] == "app:" + flt["app"]]
        if flt.get("all"):
            return rows
        return [r for r in rows if r[0] == own[0] or r[0].startswith(own[1])]

    @dbus.service.method(USAGE_IFACE, in_signature="a{sv}", out_signature="a(ssbtttt)",
                         sender_keyword="sender")
    def GetUsage(self, flt, sender=None):
        return dbus.Array([dbus.Struct(r) for r in self.usage_rows(flt, sender, "rows")],
                          signature="(ssbtttt)")

    @dbus.service.method(USAGE_IFACE, in_signature="a{sv}", out_signature="a(tbtttt)",
                         sender_keyword="sender")
    def GetUsageHistory(self, flt, sender=None):
        return dbus.Array([dbus.Struct(r) for r in self.usage_rows(flt, sender, "history")],
                          signature="(tbtttt)")

    @dbus.service.method(USAGE_IFACE, in_signature="", out_signature="a(ssttttts)")
    def GetBudgets(self):
        return dbus.Array([dbus.Struct(b) for b in (self.usage or {}).get("budgets", [])],
                          signature="(ssttttts)")

    @dbus.service.signal(USAGE_IFACE, signature="sss")
    def BudgetChanged(self, app, links, state):
        pass

    def find_app(self, app_id):
        for app in self.apps:
            if app.id == app_id:
                return app
        return None

    def add_app(self, values, announce=True):
        if self.find_app(values.get("Id", "")):
            raise ValueError(f"app {values.get('Id')!r} exists")
        app = App(self.connection, values, self)
        self.apps.append(app)
        if announce:
            self.InterfacesAdded(dbus.ObjectPath(app.path),
                                 dbus.Dictionary({APP_IFACE: app.props}, signature="sa{sv}"))
        return app

    def remove_app(self, app_id):
        app = self.find_app(app_id)
        if not app:
            raise ValueError(f"no app {app_id!r}")
        self.apps.remove(app)
        app.remove_from_connection()
        self.InterfacesRemoved(dbus.ObjectPath(app.path), dbus.Array([APP_IFACE], signature="s"))

    def new_app(self, app_id, source, changes):
        """An app that had no object: the default policy with changes, announced once."""
        default = self.find_app("default")
        configured = {k: default.values[k] for k in ("Access", "Bearers", "VPN", "Handover",
                                                      "Route4", "Route6")
                      if default and k in default.values}
        values = dict(configured, **changes, Id=app_id, Source=source)
        values.update(derive_state(values, configured, self))
        app = self.add_app(values)
        app.configured = dict(configured, Source=None)  # no policy of its own
        return app

    def check_app_id(self, app_id):
        if not app_id_valid(app_id):
            raise fake_error("InvalidArguments",
                             f'Invalid app ID "{app_id[:64]}": 1-255 characters of A-Z a-z 0-9 '
                             ". _ -, starting with a letter or digit.")

    def update(self, changes):
        self.values.update(changes)
        only = set(changes)
        if "BestLink" in only and self.values.get("DefaultLink") is None:
            only.add("DefaultLink")  # (it follows BestLink, as roamd's does without a reason)
        changed = build_properties(MANAGER_PROPERTIES, self.values, only=only)
        self.props.update(changed)
        self.PropertiesChanged(MANAGER_IFACE, changed, dbus.Array([], signature="s"))

    def add_link(self, values):
        link = make_link(self.connection, values, self)
        if any(other.index == link.index for other in self.links):
            link.remove_from_connection()
            raise ValueError(f"link {link.index} exists")
        self.links.append(link)
        self.InterfacesAdded(dbus.ObjectPath(link.path), link_interfaces(link))

    def remove_link(self, index):
        link = self.find(index)
        self.links.remove(link)
        link.remove_from_connection()
        self.InterfacesRemoved(dbus.ObjectPath(link.path),
                               dbus.Array(list(link_interfaces(link)), signature="s"))

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
        elif op == "app":
            app = self.find_app(cmd["id"])
            if not app:
                raise ValueError(f"no app {cmd['id']!r}")
            app.update(cmd["props"])
        elif op == "wake":
            app = self.find_app(cmd["id"])
            if not app:
                raise ValueError(f"no app {cmd['id']!r}")
            app.update(cmd.get("props", {}))
            app.Wake(dbus.UInt64(cmd.get("period", 1)), cmd["reason"])
        elif op == "add_app":
            self.add_app(cmd["app"])
        elif op == "remove_app":
            self.remove_app(cmd["id"])
        elif op == "deny":
            DENY_UIDS.clear()
            DENY_UIDS.update(cmd["uids"])
        elif op == "fail":
            self.fail_next = cmd["message"]
        elif op == "calls":
            return "OK " + json.dumps(self.calls)
        elif op == "runs":
            return "OK " + json.dumps(self.runs)
        elif op == "portal":
            self.portal.update(cmd["sessions"])
        elif op == "time_calls":
            return "OK " + json.dumps(self.time.calls)
        elif op == "portal_calls":
            return "OK " + json.dumps(self.portal.calls)
        elif op == "location_calls":
            return "OK " + json.dumps(self.location_calls)
        elif op == "rules":
            self.rules = [list(r) for r in cmd["rules"]]
        elif op == "time":
            full = time_properties(cmd["props"])
            changed = {k: full[k] for k in cmd["props"]}
            self.time.props.update(changed)
            self.time.PropertiesChanged(TIME_IFACE, changed, [])
        elif op == "usage_rows":
            # counted bytes change without a signal, as roamd's counters do
            self.usage["rows"] = cmd["rows"]
        elif op == "wifi_calls":
            return "OK " + json.dumps([c for link in self.links
                                       for c in getattr(link, "wifi_calls", [])])
        elif op == "wifi_joins":
            return "OK " + json.dumps([{"id": j["id"], "ssid": j["ssid"].hex(),
                                        "passphrases": j["passphrases"]}
                                       for link in self.links for j in getattr(link, "joins", [])])
        elif op == "wifi_set":
            self.find(cmd["link"]).networks = [dict(n) for n in cmd["networks"]]
        elif op == "wifi_enroll":
            self.find(cmd["link"]).enroll_send(cmd.get("ssid"), cmd.get("fail"))
        elif op == "budget":
            self.usage["budgets"] = cmd["budgets"]
            for b in cmd["budgets"]:
                self.BudgetChanged(b[0], b[1], b[7])
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
            objects[dbus.ObjectPath(link.path)] = link_interfaces(link)
        for app in self.apps:
            objects[dbus.ObjectPath(app.path)] = dbus.Dictionary(
                {APP_IFACE: app.props}, signature="sa{sv}")
        for peer in self.peers:
            objects[dbus.ObjectPath(peer.path)] = dbus.Dictionary(
                {PEER_IFACE: peer.props}, signature="sa{sv}")
        if self.bluetooth:
            objects[dbus.ObjectPath(BLUETOOTH_PATH)] = dbus.Dictionary(
                {BLUETOOTH_IFACE: self.bluetooth.props}, signature="sa{sv}")
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

    @dbus.service.method(MANAGER_IFACE, in_signature="s", out_signature="o")
    def GetApp(self, app_id):
        self.check_app_id(app_id)
        app = self.find_app(app_id)
        if not app:
            raise fake_error("NoSuchApp", f"No app {app_id}.")
        return dbus.ObjectPath(app.path)

    @dbus.service.method(MANAGER_IFACE, in_signature="sa{ss}", out_signature="o",
                         sender_keyword="sender")
    def SetAppPolicy(self, app_id, settings, sender=None):
        self.record("SetAppPolicy", str(app_id), {str(k): str(v) for k, v in settings.items()})
        # In roamd's order: the arguments, then who asks; all before anything changes.
        self.check_app_id(app_id)
        changes = {}
        for key, value in settings.items():
            if key not in APP_SETTINGS:
                raise fake_error("InvalidArguments", f"unknown key '{key}' (known: {APP_KEYS})")
            prop, allowed = APP_SETTINGS[key]
            if key == "bearers":
                changes[prop] = parse_bearers(str(value))
            elif key == "wake":
                changes.update(self.wake_setting(app_id, str(value)))
            elif key == "wake-slice":
                usec = parse_unit(key, str(value), SLICE_UNITS, "a duration: 10s, 500ms, 2min")
                if not 100_000 <= usec <= 3_600_000_000:
                    raise fake_error("InvalidArguments",
                                     f"wake-slice '{value}' out of range (100ms to 1h)")
                changes[prop] = usec
            elif key == "wake-bytes":
                n = parse_unit(key, str(value), BYTES_UNITS, "a size: 500K, 2M, 1G")
                if n > 1024 << 30:
                    raise fake_error("InvalidArguments",
                                     f"wake-bytes '{value}' out of range (at most 1024G)")
                changes[prop] = n
            else:
                if value not in allowed:
                    raise fake_error("InvalidArguments",
                                     f"invalid value '{value}' for {key} ({', '.join(allowed)})")
                changes[prop] = str(value)
        if not changes:
            raise fake_error("InvalidArguments", f"No settings given ({APP_KEYS}).")
        if app_id == "system" and set(changes) - {"Access"}:
            raise fake_error("InvalidArguments",
                             "The system policy has only an access; its traffic is routed by "
                             "the main table.")
        self.check_change(sender)
        app = self.find_app(app_id)
        if app:
            app.change(dict(changes, Source="runtime"))
        else:
            app = self.new_app(str(app_id), "runtime", changes)
        return dbus.ObjectPath(app.path)

    def wake_setting(self, app_id, value):
        """wake=no or 0-100 as roamd parses it; a newly listed app waits for its turn."""
        if value == "no":
            return {"Wake": -1, "WakeState": "", "WakeReason": "", "WakeSince": 0}
        if not value.isdigit() or int(value) > 100:
            raise fake_error("InvalidArguments",
                             f"priority '{value}' out of range for wake (0-100)")
        app = self.find_app(app_id)
        if app and app.values.get("WakeState"):
            return {"Wake": int(value)}
        return {"Wake": int(value), "WakeState": "waiting", "WakeReason": "restart",
                "WakeSince": self.now()}

    @dbus.service.method(MANAGER_IFACE, in_signature="s", sender_keyword="sender")
    def WakeNow(self, app_id, sender=None):
        self.record("WakeNow", str(app_id), None)
        self.check_app_id(app_id)
        app = self.find_app(app_id)
        if not app or not app.values.get("WakeState"):
            raise fake_error("NoSuchApp", f"App {app_id} is not wake-listed.")
        self.check_change(sender)
        app.update({"WakeState": "awake", "WakeReason": "user", "WakeSince": self.now()})
        app.Wake(dbus.UInt64(self.values.get("WakePeriod", 1)), "user")

    @dbus.service.method(MANAGER_IFACE, in_signature="s", sender_keyword="sender")
    def ResetAppPolicy(self, app_id, sender=None):
        self.record("ResetAppPolicy", str(app_id), None)
        self.check_app_id(app_id)
        app = self.find_app(app_id)
        if not app:
            raise fake_error("NoSuchApp", f"No app {app_id}.")
        self.check_change(sender)
        if app.configured.get("Source") is None and not app.values.get("Cgroups"):
            self.remove_app(app.id)  # no policy and no cgroup: no object
            return
        reset = {k: v for k, v in app.configured.items()
                 if k in ("Access", "Bearers", "VPN", "Handover")}
        reset["Source"] = app.configured.get("Source") or "builtin"
        for key, (signature, default) in APP_PROPERTIES.items():
            if key in ("Access", "Bearers", "VPN", "Handover"):
                reset.setdefault(key, default)
        app.change(reset)

    @dbus.service.method(MANAGER_IFACE, in_signature="sht", out_signature="s",
                         sender_keyword="sender")
    def RunApp(self, app_id, pidfd, usec, sender=None):
        fd = pidfd.take()
        try:
            pid = None
            with open(f"/proc/self/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("Pid:"):
                        pid = int(line.split()[1])
        finally:
            os.close(fd)
        self.record("RunApp", str(app_id), int(usec))
        self.check_app_id(app_id)
        if app_id in ("default", "system"):
            raise fake_error("InvalidArguments", f"{app_id} is a policy, not an app to run under.")
        if usec > DAY_USEC and usec != UNTIL_RELEASED:
            raise fake_error("InvalidArguments",
                             "online_for_usec must be at most a day (or UINT64_MAX).")
        self.check_change(sender)
        caller = self.connection.call_blocking(
            "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
            "GetConnectionUnixProcessID", "s", (sender,))
        if pid is None or pid != int(caller):
            raise fake_error("InvalidArguments",
                             f"The pidfd must be the calling process's own (it names pid {pid}, "
                             f"the caller is {int(caller)}).")
        cgroup = f"/roam.slice/app-{app_id}.scope"
        changes = {}
        if usec:
            changes["OnlineUntil"] = (UNTIL_RELEASED if usec == UNTIL_RELEASED
                                      else self.now() + int(usec))
        app = self.find_app(app_id)
        if app:
            if cgroup not in app.values.get("Cgroups", []):
                changes["Cgroups"] = list(app.values.get("Cgroups", [])) + [cgroup]
            app.change(changes)
        else:
            self.new_app(str(app_id), "builtin", dict(changes, Cgroups=[cgroup]))
        self.runs.append({"id": str(app_id), "pid": pid, "usec": int(usec), "cgroup": cgroup})
        return cgroup

    @dbus.service.method(MANAGER_IFACE, sender_keyword="sender")
    def Reload(self, sender=None):
        uid = self.connection.get_unix_user(sender)
        if uid != 0:
            raise self._error("AccessDenied", NO_POLKIT_DENIED)


    # The firewall (FIREWALL-API.md)

    def firewall_link(self, name):
        """SetLocation's and CheckInbound's link: a name, or "" for the default-route link."""
        if name == "":
            for link in self.links:
                if link.path == self.values.get("BestLink", "/"):
                    return link
            raise dbus.exceptions.DBusException(
                "No link has the default route: name one.", name="org.roam1.Error.NoSuchLink")
        for link in self.links:
            if link.values.get("Name") == name:
                return link
        raise dbus.exceptions.DBusException(f"No link named {name!r}.",
                                            name="org.roam1.Error.NoSuchLink")

    def check_firewall_on(self):
        """[Firewall] Enable=no: the three methods answer Failed."""
        if self.firewall_off:
            raise fake_error("Failed", self.firewall_off)

    @dbus.service.method(MANAGER_IFACE, in_signature="ss", sender_keyword="sender")
    def SetLocation(self, link_name, location, sender=None):
        self.location_calls.append([str(link_name), str(location)])
        self.check_firewall_on()
        link = self.firewall_link(str(link_name))
        name = link.values.get("Name", "")
        known = list(self.props["Locations"])
        if location not in known:
            raise dbus.exceptions.DBusException(
                f"Unknown location {str(location)!r} (known: {', '.join(known)}).",
                name="org.roam1.Error.InvalidArguments")
        network = link.values.get("NetworkId", "")
        if not network:
            raise dbus.exceptions.DBusException(
                f"{name} is on no network now: nothing to remember.",
                name="org.roam1.Error.InvalidArguments")
        if not authorized(self.connection, sender):
            raise dbus.exceptions.DBusException(NO_POLKIT_DENIED,
                                                name="org.roam1.Error.AccessDenied")
        self.rules = [r for r in self.rules if r[0] != name] + [
            [name, str(location)] + list(r) for r in self.profiles.get(str(location), [])]
        link.update({"Location": str(location), "LocationSource": "user",
                     "LocationReason": f"you chose {location} for {network}",
                     "LocationWanted": str(location)})

    @dbus.service.method(MANAGER_IFACE, out_signature="a(sssssssstt)")
    def GetFirewallRules(self):
        self.check_firewall_on()
        return dbus.Array([dbus.Struct([dbus.String(v) for v in r[:8]] +
                                       [dbus.UInt64(r[8]), dbus.UInt64(r[9])])
                           for r in self.rules], signature="(sssssssstt)")

    @dbus.service.method(MANAGER_IFACE, in_signature="sqss", out_signature="bssss")
    def CheckInbound(self, proto, port, app, link_name):
        self.check_firewall_on()
        if proto not in ("tcp", "udp"):
            raise dbus.exceptions.DBusException(
                f"Unknown protocol {proto!r}: tcp or udp.", name="org.roam1.Error.InvalidArguments")
        if port == 0:
            raise dbus.exceptions.DBusException(
                "Port 0 is no port: 1 to 65535.", name="org.roam1.Error.InvalidArguments")
        link = self.firewall_link(str(link_name))
        name = link.values.get("Name", "")
        location = link.values.get("Location", "")
        for r in self.rules:
            if r[0] != name or r[2] != "in":
                continue
            words = r[4].split()
            hit = words == ["any"]
            if len(words) >= 2 and words[0] == proto:
                first, _, last = words[1].partition("-")
                if first.isdigit() and int(first) <= port <= int(last or first):
                    hit = r[5] in ("", app)
            if hit:
                return (r[3] == "accept", name, location, r[7],
                        f"{r[3]} by rule {r[7]} ({r[6]}): {r[4]}")
        return (False, name, location, "", "no rule matched: the default policy drops it")


TIME_PATH = "/org/roam1/time"
TIME_IFACE = "org.roam1.Time"
MONITOR_PATH = "/org/roam1/monitor"
MONITOR_IFACE = "org.roam1.AppMonitor"


class AppMonitor(dbus.service.Object):
    """org.roam1.AppMonitor's Listeners: the scenario's "monitor_listeners" {app ID: count};
    an invalid ID is refused as roamd refuses it."""

    def __init__(self, conn, listeners):
        super().__init__(conn, MONITOR_PATH)
        self.listeners = listeners

    @dbus.service.method(MONITOR_IFACE, in_signature="s", out_signature="u")
    def Listeners(self, app_id):
        if not app_id_valid(app_id) and app_id not in ("default", "system"):
            raise fake_error("org.roam1.Error.InvalidArguments", "Invalid app ID.")
        return dbus.UInt32(self.listeners.get(str(app_id), 0))


def time_properties(v):
    b = v.get("Bound", [0, 0])
    return {
        "State": dbus.String(v.get("State", "unknown")),
        "Gate": dbus.String(v.get("Gate", "closed")),
        "Bound": dbus.Struct((dbus.UInt64(b[0]), dbus.UInt64(b[1])), signature="tt"),
        "Sources": dbus.Array([dbus.Struct((k, w, o, dbus.UInt64(t), dbus.UInt64(e), vd, r),
                                           signature="sssttss")
                               for k, w, o, t, e, vd, r in v.get("Sources", [])],
                              signature="(sssttss)"),
        "Reasons": dbus.Array(v.get("Reasons", []), signature="s"),
        **{k: dbus.String(v[k]) for k in ("ClockState", "ClockReason", "Zone", "ZoneState",
                                          "ZoneReason") if k in v},
        **({"SourcesTaken": dbus.Array([dbus.UInt64(t) for t in v["SourcesTaken"]],
                                       signature="t")} if "SourcesTaken" in v else {}),
        **({"SourcesAt": dbus.UInt64(v["SourcesAt"])} if "SourcesAt" in v else {}),
        **({"ZoneCandidates": dbus.Array(v["ZoneCandidates"], signature="s")}
           if "ZoneCandidates" in v else {}),
    }


# What roamd's SetManual refuses (service/features/time/roamd-time-feed-bus.c).
MANUAL_MIN_USEC, MANUAL_MAX_USEC = 946684800 * 10**6, 4102444800 * 10**6
MANUAL_MAX_ERROR_USEC = 86400 * 10**6


class Time(PropertiesObject):
    """org.roam1.Time: its properties as the scenario says; SetZone and SetManual check their
    arguments, then who asks, as roamd does, and record the calls."""

    def __init__(self, conn, props, zones):
        super().__init__(conn, TIME_PATH, TIME_IFACE, props)
        self.zones = zones  # the zones of "this system's tzdata"
        self.calls = []

    @dbus.service.method(TIME_IFACE, in_signature="s", sender_keyword="sender")
    def SetZone(self, zone, sender=None):
        self.calls.append(["SetZone", str(zone)])
        if not authorized(self.connection, sender):
            raise fake_error("AccessDenied", "Only root or members of group netdev may do this.")
        if str(zone) not in self.zones:
            raise fake_error("InvalidArguments", "Not a time zone of this system's tzdata.")
        changed = {"Zone": dbus.String(zone), "ZoneState": dbus.String("settled"),
                   "ZoneReason": dbus.String("manual"),
                   "ZoneCandidates": dbus.Array([], signature="s")}
        self.props.update(changed)
        self.PropertiesChanged(TIME_IFACE, changed, [])

    @dbus.service.method(TIME_IFACE, in_signature="tt", sender_keyword="sender")
    def SetManual(self, realtime, error, sender=None):
        self.calls.append(["SetManual", int(realtime), int(error)])
        if not MANUAL_MIN_USEC <= realtime <= MANUAL_MAX_USEC:
            raise fake_error("InvalidArguments", "The time must lie between 2000 and 2100.")
        if error > MANUAL_MAX_ERROR_USEC:
            raise fake_error("InvalidArguments", "The error must be at most a day.")
        if not authorized(self.connection, sender):
            raise fake_error("AccessDenied", "Only root or members of group netdev may do this.")


PORTAL_PATH = "/org/roam1/portal"
PORTAL_IFACE = "org.roam1.Portal"
PORTAL_TYPES = {
    "ExpiresAt": "t", "BytesRemaining": "t", "WISPr": "b", "Approved": "b", "CanLogoff": "b",
    "HasSavedLogin": "b", "AlwaysLogIn": "b", "ExpiryWarning": "b", "Expired": "b",
    "CanExtendSession": "b", "BrowserLogin": "b",
}


def portal_sessions(sessions):
    return dbus.Array([dbus.Dictionary({k: to_dbus(PORTAL_TYPES.get(k, "s"), v)
                                        for k, v in s.items()}, signature="sv")
                       for s in sessions], signature="a{sv}")


class Portal(PropertiesObject):
    """org.roam1.Portal: Sessions as the scenario says; the methods only record."""

    def __init__(self, conn, sessions):
        super().__init__(conn, PORTAL_PATH, PORTAL_IFACE,
                         {"Sessions": portal_sessions(sessions)})
        self.calls = []

    def update(self, sessions):
        self.props["Sessions"] = portal_sessions(sessions)
        self.PropertiesChanged(PORTAL_IFACE, {"Sessions": self.props["Sessions"]}, [])

    @dbus.service.method(PORTAL_IFACE, in_signature="sb")
    def Approve(self, link, always):
        self.calls.append(["Approve", str(link), bool(always)])

    @dbus.service.method(PORTAL_IFACE, in_signature="s")
    def Decline(self, link):
        self.calls.append(["Decline", str(link)])

    @dbus.service.method(PORTAL_IFACE, in_signature="s")
    def Logoff(self, link):
        self.calls.append(["Logoff", str(link)])

    @dbus.service.method(PORTAL_IFACE, in_signature="s")
    def Forget(self, link):
        self.calls.append(["Forget", str(link)])

    @dbus.service.method(PORTAL_IFACE, in_signature="s")
    def Extend(self, link):
        self.calls.append(["Extend", str(link)])

    @dbus.service.method(PORTAL_IFACE, in_signature="sshbb")
    def Login(self, link, user, fd, save, always):
        n = fd.take()
        try:
            password = os.pread(n, 600, 0).decode()
        finally:
            os.close(n)
        self.calls.append(["Login", str(link), str(user), password, bool(save), bool(always)])


def main():
    if len(sys.argv) != 2:
        print("usage: fake_roamd.py SCENARIO.json", file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        scenario = json.load(f)

    DBusGMainLoop(set_as_default=True)
    conn = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
    links = [make_link(conn, values) for values in scenario.get("links", [])]
    manager = Manager(conn, scenario.get("manager", {}), links)
    manager.clock = scenario.get("_now")
    manager.rules = [list(r) for r in scenario.get("firewall_rules", [])]
    manager.profiles = scenario.get("firewall_profiles", {})
    manager.firewall_off = scenario.get("_firewall_off")
    manager.usage = scenario.get("usage")
    DENY_UIDS.update(scenario.get("_deny_uids", []))
    fake_wifi.hooks.update({"authorized": authorized, "error": fake_error,
                            "denied": NO_POLKIT_DENIED, "now": manager.now, "join_id": [0]})
    manager.portal = Portal(conn, scenario["portal_sessions"]) \
        if "portal_sessions" in scenario else None
    manager.time = Time(conn, time_properties(scenario["time"]),
                        scenario["time"].get("_zones", ["Europe/Berlin", "America/New_York",
                                                        "America/Detroit"])) \
        if "time" in scenario else None
    manager.monitor = AppMonitor(conn, scenario["monitor_listeners"]) \
        if "monitor_listeners" in scenario else None
    if "peers" in scenario:
        manager.props.update(build_properties(MANAGER_P2P_PROPERTIES, scenario.get("p2p", {})))
        manager.peers = [PropertiesObject(conn, PEER_PATH_PREFIX + "/" +
                                          v["Address"].replace(":", ""),
                                          PEER_IFACE, build_properties(PEER_PROPERTIES, v))
                         for v in scenario["peers"]]
    if "bluetooth" in scenario:
        manager.bluetooth = PropertiesObject(conn, BLUETOOTH_PATH, BLUETOOTH_IFACE,
                                             build_properties(BLUETOOTH_PROPERTIES,
                                                              scenario["bluetooth"]))
    apps = list(scenario.get("apps", []))
    for special in ("default", "system"):
        if not any(a.get("Id") == special for a in apps):
            apps.append({"Id": special, "Source": "builtin"})
    for values in apps:
        manager.add_app(values, announce=False)
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
