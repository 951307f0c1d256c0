"""`roam --plain`: the line mode for screen readers, driven through pipes."""
import os
import re
import select
import subprocess
import time

import pytest

from fakebus import ROAM

CLOCK = r"\d\d:\d\d:\d\d "
WLAN0 = {
    "Index": 3, "Name": "wlan0", "Bearer": "wifi", "Carrier": True, "AdminUp": True,
    "OperState": "up", "State": "routable", "Addresses": [[4, "192.0.2.10", 24, "global"]],
    "Connectivity": "portal", "ConnectivityReason": "portal-redirect",
    "PortalURL": "http://portal.example/login",
}
ETH0 = {"Index": 2, "Name": "eth0", "Bearer": "ethernet", "Connectivity": "offline",
        "ConnectivityReason": "no-carrier"}
PORTAL = {"manager": {"State": "portal", "BestLink": "/org/roam1/link/3"},
          "links": [WLAN0, ETH0]}


class Plain:
    def __init__(self, env):
        self.proc = subprocess.Popen([ROAM, "--plain"], env=dict(env, TZ="UTC"),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.buf = b""
        self.lines = []

    def expect(self, pattern, timeout=10):
        """Reads lines until one matches pattern (a regex, fullmatch); returns it."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                line = line.decode()
                self.lines.append(line)
                if re.fullmatch(pattern, line):
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line matching {pattern!r}; got: {self.lines}")
            ready, _, _ = select.select([self.proc.stdout], [], [], left)
            if ready:
                data = os.read(self.proc.stdout.fileno(), 65536)
                if not data:
                    raise AssertionError(f"roam exited; got: {self.lines}")
                self.buf += data

    def send(self, line):
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
        self.proc.wait(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            f.close()


@pytest.fixture
def plain(bus):
    started = []

    def start():
        p = Plain(bus.env)
        started.append(p)
        return p

    yield start
    for p in started:
        p.close()


def test_plain_state_and_changes(roamd, plain):
    fake = roamd(PORTAL)
    p = plain()
    p.expect(r"State: Behind a captive portal on wlan0: log in at http://portal\.example/login")
    p.expect(r"eth0 \(ethernet\): offline, no carrier, no probe yet; no address")
    p.expect(r"wlan0 \(wifi\): portal, redirected to a login page, no probe yet; "
             r"addresses 192\.0\.2\.10/24; log in at http://portal\.example/login")
    fake.send(op="set", link=3, props={"Connectivity": "online", "ConnectivityReason": "ok",
                                       "PortalURL": ""})
    p.expect(CLOCK + r"wlan0: portal -> online \(checks answered\)")
    fake.send(op="manager", props={"State": "online"})
    p.expect(CLOCK + r"state: portal -> online: Online via wlan0 \(wifi\)")
    fake.send(op="add", link={"Index": 5, "Name": "wwan0", "Bearer": "cellular"})
    p.expect(CLOCK + r"wwan0 appeared: wwan0 \(cellular\): offline, not probed yet; no address")
    fake.send(op="remove", link=5)
    p.expect(CLOCK + r"wwan0 vanished\.")


def test_plain_commands(roamd, plain):
    fake = roamd(PORTAL)
    p = plain()
    p.expect(r"State: .*")
    p.expect(r"wlan0 .*")
    p.send("help")
    p.expect(r"  reprobe NAME .*")
    p.send("links")
    p.expect(r"eth0 \(ethernet\): offline.*")
    # The WiFi signal in words, when wpa_supplicant reports one.
    fake.send(op="set", link=3, props={"WiFiState": "COMPLETED", "WiFiSSID": "Cafe",
                                       "WiFiSignal": -74, "WiFiLinkSpeed": 0})
    # roam reads the bus in order: once a link added after the change is announced, the
    # change has reached roam's model too
    fake.send(op="add", link={"Index": 5, "Name": "wwan0", "Bearer": "cellular"})
    p.expect(CLOCK + r"wwan0 appeared: .*")
    fake.send(op="remove", link=5)
    p.expect(CLOCK + r"wwan0 vanished\.")
    p.send("links")
    p.expect(r"wlan0 \(wifi\): .*; WiFi Cafe, signal weak, -74 dBm")
    p.send("link wlan0")
    p.expect(r"  IPv6: offline, no probe round has ended yet, or the link is never probed")
    p.expect(r"  Seen at \d\d:\d\d:\d\d: portal, redirected to a login page")
    p.send("link nosuch")
    p.expect(r"No link named 'nosuch'\. Type links to see them\.")
    p.send("frobnicate now")
    p.expect(r"Unknown command 'frobnicate now'\. Type help for the list\.")
    p.send("reprobe wlan0")
    p.expect(CLOCK + r"roamd is probing wlan0 again\.")
    assert fake.send(op="reprobes") == [3]
    p.send("quit")
    assert p.proc.wait(timeout=10) == 0


def test_plain_roamd_absent_goes_and_returns(bus, roamd, plain):
    p = plain()
    p.expect(r"roamd is not running; waiting for it\.")
    p.send("status")  # waits for roamd's state (test_plain_input.py)
    fake = roamd(PORTAL)
    p.expect(CLOCK + r"roamd is back\.")
    p.expect(r"State: Behind a captive portal .*")
    p.expect(r"State: Behind a captive portal .*")  # the answer
    fake.close()
    p.expect(CLOCK + r"roamd went away; waiting for it to return\.")


def test_plain_end_of_input_keeps_watching(roamd, bus):
    """From a pipe, end of input does not end plain mode: it goes on like a log."""
    fake = roamd(PORTAL)
    p = Plain(bus.env)
    try:
        p.expect(r"State: .*")
        p.proc.stdin.close()
        fake.send(op="set", link=3, props={"Connectivity": "local",
                                           "ConnectivityReason": "http-timeout"})
        p.expect(CLOCK + r"wlan0: portal -> local \(HTTP check timed out\)")
    finally:
        p.proc.terminate()
        p.proc.wait(timeout=10)


def test_plain_usage_errors(bus):
    for args in (["--plain", "status"], ["--plain", "--json"]):
        r = subprocess.run([ROAM, *args], env=bus.env, capture_output=True, text=True,
                           timeout=10)
        assert r.returncode == 2
        assert "roam --help" in r.stderr


APPS = {
    "manager": {"State": "online", "BestLink": "/org/roam1/link/3"},
    "links": [dict(WLAN0, Connectivity="online", ConnectivityReason="ok", PortalURL="")],
    "apps": [
        {"Id": "org.example.Mail", "Bearers": ["wifi", "ethernet"], "VPN": "required",
         "Source": "config", "State": "blocked: VPN down",
         "Cgroups": ["/user.slice/user-1000.slice/app.slice/app-gnome-org.example.Mail-1.scope"]},
        {"Id": "org.example.Chat", "Access": "deny", "State": "blocked: access denied"},
        {"Id": "default", "Route4": "wlan0", "Route6": "/org/roam1/link/3"},
    ],
    "_now": 1_700_000_000_000_000,
}


def test_plain_apps(roamd, plain):
    """The apps in line form, and every action of the apps screen as a command."""
    fake = roamd(APPS)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.expect(r"app org\.example\.Chat: blocked: access denied; access deny, bearers all, VPN any, "
             r"handover sticky; route none")
    p.expect(r"app org\.example\.Mail: blocked: VPN down; access allow, bearers wifi,ethernet, "
             r"VPN required, handover sticky; route none")
    p.expect(r"app default: online; access allow, bearers all, VPN any, handover sticky; "
             r"route v4 wlan0, v6 wlan0")
    p.expect(r"app system: online; .*")
    p.send("help")
    p.expect(r"  app ID online-for DURATION .*")
    p.send("apps")
    p.expect(r"app org\.example\.Chat: .*")
    p.send("app org.example.Mail")
    p.expect(r"  VPN: required, only through a VPN")
    p.expect(r"  Cgroup: /user\.slice/.*-org\.example\.Mail-1\.scope")
    p.send("app org.example.Nothing")
    p.expect(r"No app 'org\.example\.Nothing'\. Type apps to see them\.")

    p.send("app org.example.Mail set vpn=any handover=move")
    p.expect(CLOCK + r"app org\.example\.Mail: policy now access allow, bearers wifi,ethernet, "
             r"VPN any, handover move")
    p.expect(CLOCK + r"app org\.example\.Mail: blocked: VPN down -> online")
    p.expect(CLOCK + r"Done: org\.example\.Mail set vpn=any handover=move\.")
    p.send("app org.example.Chat online-for 10m")
    p.expect(CLOCK + r"app org\.example\.Chat: blocked: access denied -> online for a task "
             r"until 22:23:20")
    p.expect(CLOCK + r"Done: org\.example\.Chat online for 10 minutes\.")
    p.send("app org.example.Chat release")
    p.expect(CLOCK + r"Done: org\.example\.Chat grant released\.")
    p.send("app org.example.Mail reset")
    p.expect(CLOCK + r"Done: org\.example\.Mail policy reset\.")
    p.send("app org.example.New set access=lan")
    p.expect(CLOCK + r"appeared: app org\.example\.New: local networks only; access lan, .*")
    p.send("app org.example.New reset")
    p.expect(CLOCK + r"app org\.example\.New vanished\.")
    assert [c[0] for c in fake.send(op="calls")] == [
        "SetAppPolicy", "OnlineFor", "Release", "ResetAppPolicy", "SetAppPolicy",
        "ResetAppPolicy"]

    # Refused locally, by roamd, and for lack of rights: said in words.
    p.send("app org.example.Mail set vpn")
    p.expect(r"'vpn' is not a setting: give key=value \(keys: access, bearers, vpn, handover, wake, wake-slice, "
             r"wake-bytes\)\.")
    p.send("app org.example.Mail online-for 2d")
    p.expect(r"'2d' is not a duration: .*")
    p.send("app org.example.Mail frob")
    p.expect(r"Say: app org\.example\.Mail set KEY=VALUE\.\.\., .*")
    p.send("app org.example.Mail set foo=bar")
    p.expect(CLOCK + r"Cannot change org\.example\.Mail \(set foo=bar\): unknown key 'foo' "
             r"\(known: access, bearers, vpn, handover, wake, wake-slice, wake-bytes\)")
    fake.send(op="deny", uids=[0])
    p.send("app org.example.Mail set access=deny")
    p.expect(CLOCK + r"Not allowed to change org\.example\.Mail: Only root or members of group "
             r"netdev may do this \(polkit is not running\)\.")
    p.send("quit")
    assert p.proc.wait(timeout=10) == 0


def test_one_sentence_everywhere(roamd, plain, bus):
    """`roam status`, plain mode (and the TUI, tests/tui) say the global state in the same
    sentence, from the one table in shared/roam-words.c."""
    roamd(PORTAL)
    sentence = "Behind a captive portal on wlan0: log in at http://portal.example/login"
    r = subprocess.run([ROAM, "status"], env=bus.env, capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[0] == f"State: {sentence}"
    p = plain()
    assert p.expect(r"State: .*") == f"State: {sentence}"


def test_plain_burst_settles_causes_first(roamd, plain):
    """An uplink move is a burst of signals: printed once settled (300 ms of quiet), the links
    first, then the global state they make, then the apps; an app that flapped and came back
    prints nothing."""
    fake = roamd(dict(APPS, apps=APPS["apps"] + [
        {"Id": "org.example.Maps", "State": "online", "Route4": "wlan0"}]))
    p = plain()
    p.expect(r"app system: .*")
    # The effect first, as roamd may send it; then the cause; then the apps.
    fake.send(op="manager", props={"State": "local"})
    fake.send(op="set", link=3, props={"Connectivity": "local",
                                       "ConnectivityReason": "http-timeout"})
    for state in ("blocked: no allowed link", "online", "blocked: no allowed link", "online"):
        fake.send(op="app", id="org.example.Maps", props={"State": state})
    fake.send(op="app", id="org.example.Chat", props={"State": "local networks only"})
    first = len(p.lines)
    p.expect(CLOCK + r"app org\.example\.Chat: blocked: access denied -> local networks only")
    p.send("help")
    p.expect(r"Changes are printed as they happen, .*")  # help's first line
    burst = [re.sub(CLOCK, "", line) for line in p.lines[first:-1]]
    assert burst == [
        "wlan0: online -> local (HTTP check timed out)",
        "state: online -> local: Local network only on wlan0: no Internet",
        "app org.example.Chat: blocked: access denied -> local networks only",
    ], burst


def test_plain_never_echoes_control_characters(roamd, plain):
    fake = roamd(PORTAL)
    p = plain()
    p.expect(r"wlan0 .*")
    p.send("frob\x1b[2J\x07now\x7f \u009b31m")
    line = p.expect(r"Unknown command .*")
    assert line == "Unknown command 'frob?[2J?now? ?31m'. Type help for the list."
    fake.send(op="add", link={"Index": 7, "Name": "ev\x1b]2;x\x07il", "Bearer": "wifi"})
    line = p.expect(CLOCK + r"ev.*appeared: .*")
    assert "\x1b" not in line and "\x07" not in line and "ev?]2;x?il appeared" in line


def test_plain_grant_time_is_the_grants(roamd, plain):
    """A grant held back by a VPN rule: the time is the grant's, never "blocked until"."""
    fake = roamd(APPS)
    p = plain()
    p.expect(r"app system: .*")
    fake.send(op="app", id="org.example.Mail", props={"OnlineUntil": APPS["_now"] + 600_000_000})
    p.expect(CLOCK + r"app org\.example\.Mail: blocked: VPN down -> blocked: VPN down; online "
             r"for a task until 22:23:20")


def test_plain_help_layout(roamd, bus):
    """help says first how changes come, then the commands, every line within 80 columns
    (L4 of the new-user report: the sentence was line 21 of 48, five lines were longer)."""
    import subprocess
    from fakebus import ROAM
    roamd(PORTAL)
    r = subprocess.run([ROAM, "--plain"], input="help\nquit\n", env=bus.env,
                       capture_output=True, text=True, timeout=30)
    lines = r.stdout.splitlines()
    start = lines.index("Changes are printed as they happen, one line each, with the time.")
    assert lines[start + 1] == "Commands:", lines[start:start + 3]
    helps = lines[start:]
    assert len(helps) > 30, helps
    assert all(len(line) <= 80 for line in helps), [l for l in helps if len(l) > 80]
