# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of systemd-timesyncd (org.freedesktop.timesync1), written from
systemd's documented D-Bus API (org.freedesktop.timesync1(5)): the manager object with its
servers, poll intervals, the last NTP packet (NTPMessage, (uuuuittayttttbtt): leap, version,
mode, stratum, precision, root delay and dispersion in µs, the reference id, then the origin,
receive, transmit and destination timestamps in µs since the epoch, the spike flag, the
packet count and the jitter in µs) and SetRuntimeNTPServers. It never touches the clock.

As strict as timesyncd-bus.c (systemd 252, issue 39): SetRuntimeNTPServers refuses a name
that is neither an address nor a valid DNS name (dns_name_is_valid_or_address(): labels of 1
to 63 bytes, at most 253 in all) with org.freedesktop.DBus.Error.InvalidArgs "Invalid NTP
server name or address, refusing: NAME", and a caller without CAP_SYS_TIME (no polkit here)
with AccessDenied; RuntimeNTPServers, like every property but NTPMessage, changes without
PropertiesChanged (timesyncd's vtable marks only NTPMessage EMITS_CHANGE).

Test method on the manager object (interface org.freedesktop.DBus.Mock):
  ReceivePacket(offset_usec, delay_usec, stratum, leap, spike): as if timesyncd had just
      received an answer from a server whose clock is offset_usec ahead of this one, after a
      round trip of delay_usec (half each way): NTPMessage changes (PropertiesChanged) and
      ServerName is "ntp.roam.test".
"""
import ipaddress
import time

import dbus

BUS_NAME = "org.freedesktop.timesync1"
MAIN_OBJ = "/org/freedesktop/timesync1"
MAIN_IFACE = "org.freedesktop.timesync1.Manager"
SYSTEM_BUS = True
MOCK_IFACE = "org.freedesktop.DBus.Mock"


def ntp_message(leap=0, stratum=0, root_delay=0, root_dispersion=0, origin=0, receive=0,
                transmit=0, destination=0, spike=False, count=0, jitter=0):
    return dbus.Struct((dbus.UInt32(leap), dbus.UInt32(4), dbus.UInt32(4), dbus.UInt32(stratum),
                        dbus.Int32(-20), dbus.UInt64(root_delay), dbus.UInt64(root_dispersion),
                        dbus.Array([dbus.Byte(x) for x in b"GPS\0"], signature="y"),
                        dbus.UInt64(origin), dbus.UInt64(receive), dbus.UInt64(transmit),
                        dbus.UInt64(destination), dbus.Boolean(spike), dbus.UInt64(count),
                        dbus.UInt64(jitter)), signature="uuuuittayttttbtt")


def name_is_valid_or_address(name):
    """shared/dns-domain.c dns_name_is_valid_or_address(), for names without escapes."""
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    text = name[:-1] if name.endswith(".") else name
    if not text:
        return True  # the root domain is a valid name
    if len(text.encode()) > 253 or "\\" in text:
        return False
    return all(0 < len(label.encode()) <= 63 and all(0x20 < ord(c) < 0x7f for c in label)
               for label in text.split("."))


@dbus.service.method(MAIN_IFACE, in_signature="as", out_signature="", sender_keyword="sender")
def SetRuntimeNTPServers(mock, servers, sender=None):
    for name in servers:
        if not name_is_valid_or_address(str(name)):
            raise dbus.exceptions.DBusException(
                "Invalid NTP server name or address, refusing: %s" % name,
                name="org.freedesktop.DBus.Error.InvalidArgs")
    bus = mock.connection.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
    if bus.GetConnectionUnixUser(sender, dbus_interface="org.freedesktop.DBus") != 0:
        raise dbus.exceptions.DBusException("Access denied",
                                            name="org.freedesktop.DBus.Error.AccessDenied")
    mock.props[MAIN_IFACE]["RuntimeNTPServers"] = dbus.Array(servers, signature="s")


def load(mock, parameters):
    mock.AddProperties(MAIN_IFACE, dbus.Dictionary({
        "LinkNTPServers": dbus.Array([], signature="s"),
        "SystemNTPServers": dbus.Array([], signature="s"),
        "RuntimeNTPServers": dbus.Array([], signature="s"),
        "FallbackNTPServers": dbus.Array(["ntp.roam.test"], signature="s"),
        "ServerName": dbus.String(""),
        "ServerAddress": dbus.Struct((dbus.Int32(0), dbus.Array([], signature="y")),
                                     signature="iay"),
        "RootDistanceMaxUSec": dbus.UInt64(5_000_000),
        "PollIntervalMinUSec": dbus.UInt64(32_000_000),
        "PollIntervalMaxUSec": dbus.UInt64(2048_000_000),
        "PollIntervalUSec": dbus.UInt64(0),
        "NTPMessage": ntp_message(),
        "Frequency": dbus.Int64(0),
    }, signature="sv"))
    mock.packets = 0


@dbus.service.method(MOCK_IFACE, in_signature="xtuub", out_signature="")
def ReceivePacket(self, offset_usec, delay_usec, stratum, leap, spike):
    now = int(time.time() * 1e6)
    t1 = now - delay_usec
    t2 = t1 + delay_usec // 2 + offset_usec
    t3 = t2 + 100
    t4 = now
    self.packets = getattr(self, "packets", 0) + 1
    # ServerName emits no change (as timesyncd's): set quietly, then the packet
    self.props[MAIN_IFACE]["ServerName"] = dbus.String("ntp.roam.test")
    self.props[MAIN_IFACE]["PollIntervalUSec"] = dbus.UInt64(32_000_000)
    msg = ntp_message(leap, stratum, 10_000, 20_000, t1, t2, t3, t4, spike, self.packets, 1_000)
    self.props[MAIN_IFACE]["NTPMessage"] = msg
    # dbusmock's UpdateProperties cannot wrap a struct: the signal by hand
    self.EmitSignal("org.freedesktop.DBus.Properties", "PropertiesChanged", "sa{sv}as",
                    [MAIN_IFACE, dbus.Dictionary({"NTPMessage": dbus.Struct(
                        msg, signature="uuuuittayttttbtt", variant_level=1)}, signature="sv"),
                     dbus.Array([], signature="s")])
