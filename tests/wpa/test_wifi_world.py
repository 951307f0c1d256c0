"""A join through roamd's D-Bus, then the link's verdict, in a network of real servers
(tests/integration/probenet.py: a gateway, dnsmasq, check servers over HTTP and HTTPS in a
namespace of their own): Debian's real wpa_supplicant runs the device's end (-Dwired, made a
Wi-Fi link by [Bearers]). After the owner says connected, roamd probes the link anew and the
join ends with what that round found: online at the healthy café, a captive portal with its
login URL at the other one (the portal screen's flow starts from that)."""
import os

import dbus
import pytest

from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet
from realwpa import RealWpa
from test_wifi_join import WifiBus

PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]


@pytest.fixture
def net():
    n = ProbeNet("wifiworld")
    n.wpa = None
    try:
        yield n
        rc = n.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{n.log()[-4000:]}"
    finally:
        if n.wpa:
            n.wpa.close()
        n.close()


def start(net):
    ctrl = os.path.join(net.dir, "ctrl")
    net.wpa = RealWpa(net.name, "d0", ctrl, ssid=None, update_config=True).start()
    net.start_roamd(net.probe_config(
        f"[WiFi]\nControlDirectory={ctrl}\nClientDirectory={net.dir}/client\n"
        "[Bearers]\nd0=wifi\n"))
    bus = WifiBus(net.address)

    def owner():
        try:
            return str(bus.wifi_prop("d0", "WiFiBackend"))
        except dbus.DBusException:
            return None
    bus.wait(lambda: owner() == "wpa_supplicant", what="the owner")
    return bus


def join_cafe(bus):
    req = dbus.Dictionary({"ssid": dbus.ByteArray(b"cafe"), "security": "open"},
                          signature="sv")
    j = int(bus.wifi("d0", "Join", req))
    done = bus.wait(lambda: bus.wifi_signal("JoinDone", j), what="JoinDone")
    steps = [str(a[1]) for m, a in bus.wifi_signals if m == "JoinStep" and int(a[0]) == j]
    return done[1], done[2], steps


def test_join_then_online(net):
    net.internet()
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
    net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
    bus = start(net)
    result, words, steps = join_cafe(bus)
    assert (result, words) == ("connected", "Joined cafe (saved). Online."), net.log()[-3000:]
    assert steps == ["associating", "checking"]


def test_join_then_captive_portal(net):
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal",
               extra=["--portal-url", "http://192.0.2.1/login?from=probe"])
    bus = start(net)
    result, words, _ = join_cafe(bus)
    assert result == "portal", words
    assert words == ("Joined cafe (saved): behind a captive portal, log in at "
                     "http://192.0.2.1/login?from=probe")
    assert net.link_prop("d0", "PortalURL") == "http://192.0.2.1/login?from=probe"
