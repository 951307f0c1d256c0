# SPDX-License-Identifier: LGPL-2.1-or-later
"""A python3-dbusmock template of systemd-timesyncd (org.freedesktop.timesync1), written from
systemd's documented D-Bus API (org.freedesktop.timesync1(5)): the manager object with its
servers, poll intervals, the last NTP packet (NTPMessage, (uuuuittayttttbtt): leap, version,
mode, stratum, precision, root delay and dispersion in µs, the reference id, then the origin,
receive, transmit and destination timestamps in µs since the epoch, the spike flag, the
packet count and the jitter in µs) and SetRuntimeNTPServers. It never touches the clock.

Test method on the manager object (interface org.freedesktop.DBus.Mock):
  ReceivePacket(offset_usec, delay_usec, stratum, leap, spike): as if timesyncd had just
      received an answer from a server whose clock is offset_usec ahead of this one, after a
      round trip of delay_usec (half each way): NTPMessage changes (PropertiesChanged) and
      ServerName is "ntp.roam.test".
"""
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


def load(mock, parameters):
    mock.AddMethods(MAIN_IFACE, [
        ("SetRuntimeNTPServers", "as", "",
         'self.UpdateProperties("%s", {"RuntimeNTPServers": dbus.Array(args[0], signature="s")})'
         % MAIN_IFACE),
    ])
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
