#!/usr/bin/python3
"""Test doubles of systemd-resolved's and NetworkManager's DNS D-Bus APIs.

They speak the documented interfaces roamd reads:
  org.freedesktop.resolve1 /org/freedesktop/resolve1 org.freedesktop.resolve1.Manager
      DNS a(iiay), Domains a(isb)
  org.freedesktop.NetworkManager /org/freedesktop/NetworkManager/DnsManager
      org.freedesktop.NetworkManager.DnsManager Configuration aa{sv}
State comes from a JSON file; SIGHUP re-reads it and emits PropertiesChanged.
Usage: fake_dns_services.py resolved|networkmanager STATE.json
"""
import ipaddress
import json
import signal
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

PROPS = "org.freedesktop.DBus.Properties"


class Props(dbus.service.Object):
    def __init__(self, bus, path, iface, state_file):
        super().__init__(bus, path)
        self.iface = iface
        self.state_file = state_file
        self.load()

    def load(self):
        with open(self.state_file) as f:
            self.state = json.load(f)

    @dbus.service.method(PROPS, in_signature="s", out_signature="a{sv}")
    def GetAll(self, iface):
        if iface != self.iface:
            raise dbus.exceptions.DBusException(
                "Unknown interface", name="org.freedesktop.DBus.Error.UnknownInterface")
        return self.props()

    @dbus.service.method(PROPS, in_signature="ss", out_signature="v")
    def Get(self, iface, name):
        return self.GetAll(iface)[name]

    @dbus.service.signal(PROPS, signature="sa{sv}as")
    def PropertiesChanged(self, iface, changed, invalidated):
        pass

    def reload(self):
        self.load()
        self.PropertiesChanged(self.iface, self.props(), [])


class Resolved(Props):
    def props(self):
        dns = dbus.Array([], signature="(iiay)")
        for ifindex, addr in self.state.get("dns", []):
            ip = ipaddress.ip_address(addr)
            fam = 2 if ip.version == 4 else 10
            dns.append(dbus.Struct((dbus.Int32(ifindex), dbus.Int32(fam),
                                    dbus.ByteArray(ip.packed)), signature="iiay"))
        # Raw entries let tests send what a broken peer might: wrong lengths, odd families.
        for ifindex, fam, hexaddr in self.state.get("dns_raw", []):
            dns.append(dbus.Struct((dbus.Int32(ifindex), dbus.Int32(fam),
                                    dbus.ByteArray(bytes.fromhex(hexaddr))), signature="iiay"))
        doms = dbus.Array([], signature="(isb)")
        for ifindex, dom, route_only in self.state.get("domains", []):
            doms.append(dbus.Struct((dbus.Int32(ifindex), dom, dbus.Boolean(route_only)),
                                    signature="isb"))
        return {"DNS": dns, "Domains": doms,
                "LLMNRHostname": dbus.String("fake"), "DNSSEC": dbus.String("no")}


class NetworkManager(Props):
    def props(self):
        conf = dbus.Array([], signature="a{sv}")
        for entry in self.state.get("configuration", []):
            d = dbus.Dictionary({}, signature="sv")
            d["nameservers"] = dbus.Array(entry.get("nameservers", []), signature="s")
            d["domains"] = dbus.Array(entry.get("domains", []), signature="s")
            d["interface"] = dbus.String(entry["interface"])
            d["priority"] = dbus.Int32(100)
            d["vpn"] = dbus.Boolean(False)
            conf.append(d)
        return {"Configuration": conf, "Mode": dbus.String("default"),
                "RcManager": dbus.String("unmanaged")}


def main():
    kind, state = sys.argv[1], sys.argv[2]
    DBusGMainLoop(set_as_default=True)
    bus = dbus.SystemBus()
    if kind == "resolved":
        obj = Resolved(bus, "/org/freedesktop/resolve1", "org.freedesktop.resolve1.Manager",
                       state)
        name = dbus.service.BusName("org.freedesktop.resolve1", bus)
    else:
        obj = NetworkManager(bus, "/org/freedesktop/NetworkManager/DnsManager",
                             "org.freedesktop.NetworkManager.DnsManager", state)
        name = dbus.service.BusName("org.freedesktop.NetworkManager", bus)
    loop = GLib.MainLoop()
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGHUP, lambda: obj.reload() or True)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: loop.quit() or False)
    print("ready", flush=True)
    loop.run()
    del name


if __name__ == "__main__":
    main()
