"""End to end (issue 43): the real roam (its CLI, and its TUI on a pty) against the real roamd,
wpa_supplicant's control socket answered by the station double (fakewpa.py: a scan with
networks, what an AP says to a wrong key), in a network of real servers
(tests/integration/probenet.py: a gateway, dnsmasq, check servers over HTTP and HTTPS). A person
joins Home (WPA2) from the Wi-Fi screen typing the passphrase, a wrong one said in words and
asked again in place, then sees the link's verdict; joins Cafe (open) behind a captive portal
and lands on the portal screen; the CLI says the same verdicts after its joins."""
import os
import subprocess
import sys

import dbus
import pytest

from fakewpa import FakeWpa
from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet
from test_wifi_join import WifiBus

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "tui"))
sys.path.insert(0, os.path.join(TOP, "tests", "client"))
from tuidriver import Tui  # noqa: E402

ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
PSK = "correct horse battery"
PORTAL = "http://192.0.2.1/login?from=probe"
PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]


@pytest.fixture
def net():
    n = ProbeNet("wifie2e")
    n.fake = None
    try:
        yield n
        rc = n.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{n.log()[-4000:]}"
    finally:
        if n.fake:
            n.fake.close()
        n.close()


def online(net):
    net.internet()
    net.dns(*PROBE)
    net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
    net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")


def captive(net):
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal", extra=["--portal-url", PORTAL])


def start(net):
    ctrl = os.path.join(net.dir, "ctrl")
    net.fake = FakeWpa(ctrl, ifname="d0", p2p=False).start()
    net.fake.bsses = [
        {"id": 1, "bssid": "02:00:00:00:01:00", "freq": 5180, "level": -48,
         "flags": "[WPA2-PSK-CCMP][ESS]", "ssid": b"Home", "psk": PSK},
        {"id": 2, "bssid": "02:00:00:00:02:00", "freq": 2437, "level": -57,
         "flags": "[ESS]", "ssid": b"Cafe", "psk": None},
    ]
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


def roam(net, *args, stdin=None):
    return subprocess.run([ROAM, "wifi", *args], env=dict(net.env, LC_ALL="C.UTF-8"),
                          input=stdin, capture_output=True, text=True, timeout=60)


def test_cli_join_then_online(net):
    online(net)
    start(net)
    p = roam(net, "join", "Home", "--passphrase-file", "-", stdin="wrong horse battery\n")
    assert p.returncode == 4 and "Home refused the passphrase." in p.stderr, p
    p = roam(net, "join", "Home", "--passphrase-file", "-", stdin=PSK + "\n")
    assert p.returncode == 0, p.stdout + p.stderr + net.log()[-3000:]
    assert p.stdout.splitlines() == [
        "Joining Home on d0...",
        "Joined Home (saved; roamd could not find wpa_supplicant's file to check its mode). "
        "Online.",
        "d0: online (checks answered)."], p.stdout
    assert PSK not in net.log()


def test_cli_join_then_portal(net):
    captive(net)
    start(net)
    p = roam(net, "join", "Cafe")
    assert p.returncode == 0, p.stdout + p.stderr + net.log()[-3000:]
    lines = p.stdout.splitlines()
    assert lines[0] == "Joining Cafe on d0..."
    assert lines[1].startswith("Joined Cafe (saved") and lines[1].endswith(
        ": behind a captive portal, log in at " + PORTAL), lines
    assert lines[2] == (f"Behind a captive portal: log in at {PORTAL} (roam portal d0, or roam "
                        "portal browse d0).")


def tui(net, tmp_path):
    # the real clock: roamd's LastProbe is real time
    return Tui(net.env, tmp_path, extra_env={"ROAM_TEST_NOW": ""})


def said(t, *texts, screen="wifi"):
    def ok(t):
        return t.frame.screen == screen and all(x in " ".join(t.text().split()) for x in texts)
    if t.frames and ok(t):
        return t
    return t.wait(ok, 10, f"the {screen} screen saying {texts!r}")


def open_wifi(t):
    t.wait_for(screen="overview", text="d0")
    # d0's network is new to roam: not now
    if "a network roam has not seen" in t.text():
        t.settle()
        t.key("u")
        t.wait_for(screen="overview", text="stays untrusted for this session")
    t.key("\r")
    t.wait_for(screen="link", text="d0")
    t.key("w")
    return said(t, "Wi-Fi on d0 through wpa_supplicant")


def select(t, name):
    for _ in range(10):
        if name in t.cursor_line() and t.cursor_line().startswith(">"):
            return
        before = t.cursor_line()
        t.key("j")
        t.wait(lambda t: t.cursor_line() != before, what="the selection to move after j")
    raise AssertionError(f"{name} never selected:\n{t.text()}")


def test_tui_join_wrong_passphrase_then_online(net, tmp_path):
    online(net)
    start(net)
    t = tui(net, tmp_path)
    try:
        open_wifi(t)
        said(t, "Home", "Cafe")
        select(t, "Home")
        t.key("\r")
        said(t, "Join Home (WPA2)", "Passphrase")
        t.key("wrong horse battery")
        assert "wrong horse" not in t.text()
        t.key("\r")
        said(t, "Home refused this passphrase. Check it (it is case-sensitive) and try again.")
        t.settle()
        t.key(PSK + "\r")
        said(t, "Joined Home. d0: online.")
        assert PSK not in t.text()
    finally:
        t.close()
    assert PSK not in net.log() and "wrong horse" not in net.log()
    # the wrong key was tried, then removed; the right one saved
    sent = " ".join(net.fake.requests)
    assert 'psk "wrong horse battery"' in sent and f'psk "{PSK}"' in sent
    assert [n["ssid"] for n in net.fake.networks.values()] == ["Home"]


def test_tui_join_then_portal_screen(net, tmp_path):
    captive(net)
    start(net)
    t = tui(net, tmp_path)
    try:
        open_wifi(t)
        said(t, "Cafe")
        select(t, "Cafe")
        t.key("\r")
        t.wait_for(screen="portal", text="d0")
        said(t, PORTAL, screen="portal")
    finally:
        t.close()
