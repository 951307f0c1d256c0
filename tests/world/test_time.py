# SPDX-License-Identifier: LGPL-2.1-or-later
"""The time consensus (docs/time.md) with real HTTPS check servers: three links online, one of
them (cell0, in the mobile network) reaches a check server whose Date header lies by 2 h.
roamd names that link a falseticker, takes the bound from the other two (within seconds of
the real time) and settles; the time is saved as the last known good one. The host's clock
is never touched: roamd only reads it."""
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from roamworld import PROPS_IFACE, ROAM, WAIT, WHOAMI, DBusCallError, wait_for

WORLD = "wtime"
TIME_PATH = "/org/roam1/time"
TIME_IFACE = "org.roam1.Time"
LIE = -7200  # seconds: the mobile network's check server is two hours behind
AFTER_MOVE = 30

# In the mobile network, HTTPS from the LAN goes to the router's own check server (the
# world's certificate for probe.roam.test, the expected body, a lying Date).
LIAR_NFT = """table inet timeliar {
  chain pre {
    type nat hook prerouting priority -100;
    iifname "br0" meta nfproto ipv4 tcp dport 443 dnat ip to 198.51.100.65:8443
    iifname "br0" meta nfproto ipv6 tcp dport 443 dnat ip6 to [2001:db8:6::1]:8443
  }
}
"""


@pytest.fixture(autouse=True)
def needs_probes(world):
    if not world.probes:
        pytest.skip("this roamd has no connectivity probes")


def time_props(w):
    return w.call(TIME_PATH, PROPS_IFACE, "GetAll", "s", (TIME_IFACE,))


@pytest.fixture
def liar(w, tmp_path):
    pidfile = tmp_path / "liar.pid"
    ca = w.path("ca")
    p = subprocess.Popen(
        ["nsenter", "--net=/run/netns/roam-%s-mobile" % w.name, "--", "/usr/bin/python3",
         str(Path(__file__).parent / "httpd.py"), "--port", "8027", "--tls-port", "8443",
         "--cert", str(ca / "probe.pem"), "--key", str(ca / "probe.key"),
         "--route", "/roam-probe=roam-online\\n", "--date-offset", str(LIE),
         "--pidfile", str(pidfile)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(pidfile.exists, what="the lying check server")
        w.exec("mobile", "nft", "-f", "-", input=LIAR_NFT)
        yield
    finally:
        p.kill()
        p.wait()
        w.exec("mobile", "nft", "delete", "table", "inet", "timeliar", check=False)


def online(l):
    return l["Connectivity4"] == "online" and l["Connectivity6"] == "online"


def test_one_witness_settles_nothing_and_the_gate_opens_unverified(w):
    """The world as `up` makes it: only wifi0 online, one witness. The time is settling, and
    GateTimeout= (5 s) after the first online verdict the gate opens anyway: unverified."""
    w.wait_link("wifi0", online, what="wifi0 online")
    t = w.wait(lambda: (lambda t: t if t["Gate"] == "unverified" else None)(time_props(w)),
               timeout=WAIT, what="the gate open after its wait")
    assert t["State"] == "settling", t
    assert t["Reasons"][0] == "1 source so far; 2 must agree", t["Reasons"]
    assert t["Bound"] == (0, 0), t["Bound"]
    assert {s[1] for s in t["Sources"]} == {"link:wifi0"}, t["Sources"]
    r = w.dev(str(ROAM), "time", check=False)
    assert r.returncode == 0, r.stderr
    assert "Gate: open after the wait: time unverified" in r.stdout, r.stdout
    # issue 41 §5: the clock's reason is not Why's again (L21); the two samples of wifi0
    # (IPv4, IPv6) are named apart and say when they were taken (M1)
    assert "Clock: left alone: the time is not settled\n" in r.stdout, r.stdout
    if len(t["Sources"]) > 1:
        assert "  link:wifi0 IPv4: " in r.stdout and "  link:wifi0 IPv6: " in r.stdout, \
            r.stdout
    assert re.search(r"link:wifi0.*, taken \d+ s ago", r.stdout), r.stdout
    # M4: the apps were let out, yet the time is unverified: --require-time waits on
    r = w.dev(str(ROAM), "wait-online", "--require-time", "--timeout", "1", check=False)
    assert r.returncode == 1 and "time not verified" in r.stderr, (r.returncode, r.stderr)
    assert w.dev(str(ROAM), "wait-online", "--timeout", "5", check=False).returncode == 0
    # the wake queue's time gate is the same gate (roamd hands it over)
    m = w.manager()
    assert m["TimeGate"] is True or m["TimeGate"] == 1, m
    assert str(m["TimeGateReason"]).startswith("time unverified: 1 source so far"), m


def test_liar_is_named_and_the_bound_comes_from_the_others(w, liar):
    w.move("cell0", "mobile")
    w.move("eth0", "home")
    for name in ("wifi0", "cell0", "eth0"):
        w.wait_link(name, online, timeout=AFTER_MOVE, what="%s online" % name)

    # the liar really lies, seen with curl through cell0
    before = time.time()
    r = w.dev("curl", "-sS", "-m", "5", "-D", "-", "-o", "/dev/null", "--interface", "cell0",
              "--cacert", str(w.path("ca", "ca.pem")), "https://probe.roam.test/roam-probe")
    date = [x for x in r.stdout.splitlines() if x.lower().startswith("date:")]
    assert date, r.stdout
    said = time.mktime(time.strptime(date[0].split(":", 1)[1].strip(),
                                     "%a, %d %b %Y %H:%M:%S GMT")) - time.mktime(time.gmtime(0))
    # its Date (whole seconds) was made while curl ran, LIE away from this clock
    assert before + LIE - 1 <= said <= time.time() + LIE + 1, (date, before)

    def settled():
        t = time_props(w)
        witnesses = {s[1] for s in t["Sources"]}
        if t["State"] != "settled" or not {"link:wifi0", "link:cell0",
                                           "link:eth0"} <= witnesses:
            return None
        return t
    t = w.wait(settled, timeout=WAIT, what="the time settled with three witnesses")

    verdicts = {}
    for kind, witness, origin, _rt, _err, verdict, reason in t["Sources"]:
        if witness.startswith("link:"):
            assert kind == "https-date"
            assert "probe.roam.test" in origin and witness[5:] in origin, origin
            verdicts.setdefault(witness, set()).add((verdict, reason))
    assert {v for v, _ in verdicts["link:cell0"]} == {"falseticker"}, verdicts
    assert all("earlier than the time 2 of 3 sources agree on" in r
               for _, r in verdicts["link:cell0"]), verdicts
    assert {v for v, _ in verdicts["link:wifi0"]} == {"truechimer"}, verdicts
    assert {v for v, _ in verdicts["link:eth0"]} == {"truechimer"}, verdicts
    assert any("link:cell0 is a falseticker" in r for r in t["Reasons"]), t["Reasons"]
    assert "2 of 3 sources agree" in t["Reasons"][0], t["Reasons"]

    realtime, error = t["Bound"]
    now = time.time() * 1e6
    assert 0 < error < 2.5e6, error
    assert abs(realtime - now) < error + 1e6, (realtime, now, error)
    w.wait(lambda: time_props(w)["Gate"] == "open", what="the gate open")

    # settled: saved as the last known good time (a lower bound, so not later than now)
    saved = w.path("var-lib-roam", "time.state")
    wait_for(saved.exists, what="the saved time")
    text = saved.read_text()
    assert text.startswith("roam-time 1 ") and text.endswith("\n"), text
    assert now - 30e6 < int(text.split()[2]) <= time.time() * 1e6, text

    # the client says it in words
    r = w.dev(str(ROAM), "time", check=False)
    assert r.returncode == 0, r.stderr
    assert "settled" in r.stdout and "cell0" in r.stdout and "falseticker" in r.stdout, r.stdout


def test_manual_setting_is_authorized_and_the_saved_time_is_a_lower_bound(w):
    w.wait_link("wifi0", online, what="wifi0 online")
    now = int(time.time() * 1e6)
    # bad input first: nothing changes
    ok, err, out = w.call_as(0, TIME_PATH, TIME_IFACE, "SetManual", "uint64:5", "uint64:0")
    assert not ok and err == "org.roam1.Error.InvalidArguments", out
    ok, err, out = w.call_as(0, TIME_PATH, TIME_IFACE, "SetManual", "uint64:%d" % now,
                             "uint64:%d" % (2 * 86400 * 10**6))
    assert not ok and err == "org.roam1.Error.InvalidArguments", out
    # a user who is not authorized is refused
    ok, err, out = w.call_as(65534, TIME_PATH, TIME_IFACE, "SetManual", "uint64:%d" % now,
                             "uint64:2000000")
    assert not ok and err == "org.roam1.Error.AccessDenied", out
    assert "manual" not in {s[1] for s in time_props(w)["Sources"]}
    # root is: the manual setting agrees with wifi0's Date, two witnesses settle
    w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (now, 2_000_000))
    t = w.wait(lambda: (lambda t: t if t["State"] == "settled" else None)(time_props(w)),
               what="settled by the manual setting and wifi0")
    manual = [s for s in t["Sources"] if s[1] == "manual"]
    assert len(manual) == 1 and manual[0][0] == "manual" and manual[0][5] == "truechimer", manual
    assert manual[0][2] == "set by uid 0", manual

    # roamd exits (saving the time) and comes back: the saved time is its lower bound
    w.roamd_restart()
    saved = w.path("var-lib-roam", "time.state").read_text()
    lower = int(saved.split()[2])
    assert now - 10e6 < lower <= time.time() * 1e6, saved

    def has_lower_bound():
        t = time_props(w)
        return [s for s in t["Sources"] if s[0] == "saved"] or None
    s = w.wait(has_lower_bound, what="the saved time among the sources")[0]
    assert s[1] == "saved" and s[5] == "lower-bound", s
    assert s[2] == "/var/lib/roam/time.state", s
    assert s[3] - s[4] >= lower - 1, s  # aged from the file's time, never earlier


# Where tools/fetch-chronyd.sh unpacks Debian's chrony package (run-tests runs it and sets
# ROAM_CHRONYD): the package is never installed, it would start a clock daemon on the host.
FETCHED_CHRONYD = "/var/cache/roam-test/chrony/root/usr/sbin/chronyd"


def chronyd_binary():
    named = os.environ.get("ROAM_CHRONYD")
    if named:
        # named: it must be there (a run-tests whose fetch worked must not skip the test)
        assert os.access(named, os.X_OK), "ROAM_CHRONYD=%s is not an executable" % named
        return named
    for p in (FETCHED_CHRONYD, shutil.which("chronyd"), "/usr/sbin/chronyd"):
        if p and os.access(p, os.X_OK):
            return p
    return None


def test_chronyd_hears_the_agreed_time_on_its_sock_refclock(w, tmp_path):
    """A real chronyd in the device with -x (it never touches the clock) and a SOCK refclock
    at roamd's default path: once the time is settled, roamd's samples reach it (the source
    is reachable, its offset is small)."""
    chronyd = chronyd_binary()
    if not chronyd:
        pytest.skip("no chronyd (tools/fetch-chronyd.sh unpacks Debian's; ROAM_CHRONYD=PATH)")
    chronyc = os.path.join(os.path.dirname(os.path.dirname(chronyd)), "bin", "chronyc")
    if not os.access(chronyc, os.X_OK):
        chronyc = shutil.which("chronyc") or "/usr/bin/chronyc"
    conf = tmp_path / "chrony.conf"
    conf.write_text("refclock SOCK /run/chrony.roam.sock refid ROAM poll 1 filter 2\n"
                    "bindcmdaddress /run/roam-chrony/chronyd.sock\n"
                    "cmdport 0\n"
                    "pidfile /run/roam-chronyd.pid\n")
    tmp_path.chmod(0o755)
    # chronyd opens its command socket only in a directory others cannot enter
    w.dev("mkdir", "-p", "-m", "0750", "/run/roam-chrony")
    p = w.dev_popen([chronyd, "-x", "-d", "-u", "root", "-f", str(conf)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: w.dev("test", "-S", "/run/chrony.roam.sock", check=False).returncode == 0,
                 interval=0.2, what="chronyd's refclock socket")
        w.wait_link("wifi0", online, what="wifi0 online")
        w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (int(time.time() * 1e6), 2_000_000))
        w.wait(lambda: time_props(w)["State"] == "settled" or None, what="settled")

        seen = {}

        def roam_source():
            r = w.dev(chronyc, "-h", "/run/roam-chrony/chronyd.sock", "-n", "-c", "sources",
                      check=False)
            seen["out"] = r.stdout + r.stderr
            rows = [l.split(",") for l in r.stdout.splitlines() if ",ROAM," in l]
            return rows[0] if rows and int(rows[0][5], 8) != 0 else None
        try:
            row = wait_for(roam_source, timeout=20, interval=0.5,
                           what="chronyd's ROAM source reached")
        except TimeoutError:
            log = [x for x in w.roamd_log().splitlines() if "chrony" in x or "Time" in x]
            raise AssertionError("chronyc said: %r; roamd: %s" % (seen.get("out"), log[-8:]))
        # The offset roamd said (the agreed time's middle minus the clock): the host's clock
        # is right, so it lies within the agreed bound's error.
        error = time_props(w)["Bound"][1] / 1e6
        assert 0 < error < 2.5 and abs(float(row[8])) < error + 0.1, (row, error)
        assert "feeding chronyd's reference clock at /run/chrony.roam.sock" in w.roamd_log()
    finally:
        p.terminate()
        p.wait()


def chrony_sources(w):
    return [s for s in time_props(w)["Sources"] if s[0] == "chrony"]


def test_chronyd_tracking_is_a_witness_unless_it_echoes_roamd(w, tmp_path):
    """roamd reads back what the device's real chronyd (-x) tracks over its command socket:
    synchronised to an NTP server (a chronyd on the home router), chronyd's time is a sample
    of kind chrony, witness ntp, whose interval holds the real time; chronyd gone, the witness
    goes; chronyd following only roamd's own ROAM refclock is refused with its reason (it
    would echo roamd's time back); so is chronyd combining the ROAM refclock beside the NTP
    server (chronyc's '+': its time is partly roamd's), read from chronyd's sources; with
    noselect on the refclock chronyd's time is a sample again."""
    chronyd = chronyd_binary()
    if not chronyd:
        pytest.skip("no chronyd (tools/fetch-chronyd.sh unpacks Debian's; ROAM_CHRONYD=PATH)")
    chronyc = chronyc_binary(chronyd)
    tmp_path.chmod(0o755)
    log_at = len(w.roamd_log())

    def log():
        return w.roamd_log()[log_at:]

    def tracking():
        r = w.dev(chronyc, "-h", NTP_CMD_SOCKET, "-n", "-c", "tracking", check=False)
        return r.stdout.strip().split(",") if r.returncode == 0 else None

    def start_device_chronyd(text):
        conf = tmp_path / "device.conf"
        conf.write_text(text + "bindcmdaddress %s\ncmdport 0\npidfile %s\n"
                        % (NTP_CMD_SOCKET, tmp_path / "device.pid"))
        return w.dev_popen([chronyd, "-x", "-d", "-u", "root", "-f", str(conf)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    server_conf = tmp_path / "server.conf"
    server_conf.write_text("local stratum 8\nallow all\nbindcmdaddress /\ncmdport 0\n"
                           "pidfile %s\n" % (tmp_path / "server.pid"))
    server = subprocess.Popen(["nsenter", "--net=/run/netns/roam-%s-home" % w.name, "--",
                               chronyd, "-x", "-d", "-u", "root", "-f", str(server_conf)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    w.dev("mkdir", "-p", "-m", "0750", os.path.dirname(NTP_CMD_SOCKET))
    device = start_device_chronyd("server 192.0.2.1 iburst minpoll -2 maxpoll -2\n")
    try:
        w.wait_link("wifi0", online, what="wifi0 online")
        # chronyd synchronised to the home router's server (stratum 8 + 1)
        wait_for(lambda: (lambda t: t and t[1] == "192.0.2.1" and t[2] == "9"
                          and t[-1] == "Normal")(tracking()),
                 timeout=20, interval=0.5, what="chronyd synchronised to 192.0.2.1")
        w.write_config(w.default_config + "\n[Time]\nChronyCommandSocket=%s\n" % NTP_CMD_SOCKET)
        w.roamd_signal("HUP")  # a reload reads chronyd's tracking at once
        s = w.wait(lambda: chrony_sources(w) or None, what="chronyd's sample")[0]
        assert s[1] == "ntp", s
        assert s[2] == "chronyd, reference 192.0.2.1, stratum 9, 1 NTP source", s
        # the host's clock is the server's: the real time lies within the interval
        assert 0 < s[4] < 1_000_000, s
        assert abs(s[3] - time.time() * 1e6) < s[4] + 1_000_000, s
        assert "chronyd at %s follows 192.0.2.1, stratum 9: its time is a sample" \
            % NTP_CMD_SOCKET in log()

        # chronyd gone: its witness goes
        device.terminate()
        device.wait()
        w.roamd_signal("HUP")
        w.wait(lambda: not chrony_sources(w) or None, what="chronyd gone, its witness too")
        assert re.search("no chronyd listens at %s: its time is not read|chronyd at %s does "
                         "not say what it tracks" % (NTP_CMD_SOCKET, NTP_CMD_SOCKET), log())

        # chronyd following roamd's own reference clock: refused, never fed back
        device = start_device_chronyd(
            "refclock SOCK /run/chrony.roam.sock refid ROAM poll 1 filter 2\n")
        w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (int(time.time() * 1e6), 2_000_000))
        w.wait(lambda: time_props(w)["State"] == "settled" or None, what="settled")
        wait_for(lambda: (lambda t: t and t[0] == "524F414D" and t[-1] == "Normal")(tracking()),
                 timeout=30, interval=0.5, what="chronyd synchronised to roamd's ROAM refclock")
        w.roamd_signal("HUP")
        wait_for(lambda: "chronyd's time is refused: chronyd follows roamd's own reference "
                 "clock (refid ROAM): it would echo roamd's time" in log(),
                 what="the echo refused")
        assert chrony_sources(w) == [], time_props(w)["Sources"]

        def sources():
            r = w.dev(chronyc, "-h", NTP_CMD_SOCKET, "-n", "-c", "sources", check=False)
            return {f[2]: f[:2] for f in (line.split(",") for line in r.stdout.splitlines())
                    if len(f) > 2} if r.returncode == 0 else {}

        # the server and roamd's refclock, combined: the server is selected (the refclock's
        # precision of 1 s, as wide as roamd's agreed interval may be off in this world with
        # its HTTPS Date samples, weighs it down), the refclock combined beside it
        # (combinelimit lets its distance in). chronyd combines a source only once it has a
        # few updates: the wait is chronyd's filter at roamd's 2 s feed, not a timing.
        refclock = ("refclock SOCK /run/chrony.roam.sock refid ROAM poll 1 filter 2 "
                    "stratum 13 precision 1")
        device.terminate()
        device.wait()
        device = start_device_chronyd("server 192.0.2.1 iburst minpoll -2 maxpoll -2\n%s\n"
                                      "combinelimit 100000\n" % refclock)
        wait_for(lambda: (lambda s: s.get("192.0.2.1") == ["^", "*"]
                          and s.get("ROAM") == ["#", "+"])(sources()),
                 timeout=60, interval=0.5, what="chronyd combines ROAM beside 192.0.2.1")
        at = len(log())
        w.roamd_signal("HUP")
        wait_for(lambda: "chronyd's time is refused: chronyd combines roamd's own reference "
                 "clock (refid ROAM) with its NTP sources: its time is partly roamd's, echoed "
                 "back" in log()[at:], what="the combined echo refused")
        assert chrony_sources(w) == [], time_props(w)["Sources"]

        # noselect: chronyd measures the refclock but leaves it out: its time is a witness
        device.terminate()
        device.wait()
        device = start_device_chronyd("server 192.0.2.1 iburst minpoll -2 maxpoll -2\n"
                                      "%s noselect\ncombinelimit 100000\n" % refclock)
        wait_for(lambda: (lambda s: s.get("192.0.2.1") == ["^", "*"]
                          and s.get("ROAM") == ["#", "?"])(sources()),
                 timeout=30, interval=0.5, what="chronyd selects 192.0.2.1, ROAM noselect")
        w.roamd_signal("HUP")
        s = w.wait(lambda: chrony_sources(w) or None, what="chronyd's sample again")[0]
        assert s[2] == "chronyd, reference 192.0.2.1, stratum 9, 1 NTP source", s
        assert abs(s[3] - time.time() * 1e6) < s[4] + 1_000_000, s
    finally:
        for p in (device, server):
            p.terminate()
            p.wait()


TIMEDATED = "org.freedesktop.timedate1"
TIMEDATED_TEMPLATE = str(Path(__file__).parent.parent / "dbusmock" / "timedated.py")
TIMEDATED_PATH = "/org/freedesktop/timedate1"
MOCK_IFACE = "org.freedesktop.DBus.Mock"
HOUR = 3600 * 10**6


@pytest.fixture
def no_dates(w):
    """roamd without HTTPS Date samples (its HTTPS check asks for a page the check server does
    not have, so no answer is the expected one), started afresh: only the manual setting and
    the saved time speak. Afterwards the saved time (a wrong one, on purpose) is forgotten."""
    state = w.path("var-lib-roam", "time.state")
    w.write_config(w.default_config.replace("/roam-probe", "/roam-no-date"))
    w.roamd_restart()
    try:
        yield w
    finally:
        w.roamd_stop()
        state.unlink(missing_ok=True)
        w.write_config()
        w.roamd_start()


@pytest.fixture
def timedated(w):
    """The timedated double (tests/dbusmock/timedated.py: as strict as systemd's) on the
    world's own bus with NTP off: its SetTime is only recorded; the host's clock
    (CLOCK_REALTIME cannot be namespaced) is never set."""
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                             TIMEDATED_TEMPLATE, "--parameters", '{"NTP": false}'], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: w.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                "s", [TIMEDATED], dest="org.freedesktop.DBus"),
                 what="the timedated mock")
        yield mock
    finally:
        mock.terminate()
        mock.wait(10)


def set_time_calls(w):
    calls = w.call(TIMEDATED_PATH, MOCK_IFACE, "GetCalls", dest=TIMEDATED)
    return [list(c[2]) for c in calls if str(c[1]) == "SetTime"]


def clock_is(w, state):
    t = time_props(w)
    return t if t["ClockState"] == state else None


def test_without_a_clock_daemon_roamd_steps_the_clock_through_timedated(w, no_dates, timedated):
    """The agreed time (a manual setting an hour ahead) is far from the clock and timedated
    says no clock daemon runs: roamd calls SetTime(agreed, false, false) and says
    ClockStepped with the offset. With NTP on, timedated gone, or a manual time before the
    saved lower bound, nothing is set, and ClockState/ClockReason say why."""
    host_before = time.time() - time.monotonic()  # the wall clock against a steady one
    assert time_props(w)["ClockState"] == "unsettled"
    with w.monitor() as mon:
        ahead = int(time.time() * 1e6) + HOUR
        w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (ahead, 2_000_000))
        _, sig = mon.wait_signal(lambda m: m["member"] == "ClockStepped")
    assert (sig["path"], sig["interface"]) == (TIME_PATH, TIME_IFACE)
    offset, reason = sig["payload"]["data"]
    assert abs(offset - HOUR) < 10 * 10**6, sig
    assert "1 of 1 sources agree" in reason, reason
    calls = set_time_calls(w)
    assert len(calls) == 1, calls
    usec, relative, interactive = calls[0]
    assert abs(usec - (time.time() * 1e6 + HOUR)) < 10 * 10**6, calls
    assert (bool(relative), bool(interactive)) == (False, False)
    t = time_props(w)
    assert t["ClockState"] == "stepped" and "stepped" in t["ClockReason"], t["ClockReason"]
    assert re.search(r"Time: clock stepped \S+ \S+ UTC -> \S+ \S+ UTC \(the clock was -(59|60) min "
                     r"off the agreed time \(1 of 1 sources agree", w.roamd_log())
    # the host's clock was not touched (the mock sets nothing): the wall clock kept its place
    # against the monotonic clock, however long this took (a step would move it by an hour)
    assert abs(time.time() - time.monotonic() - host_before) < 60

    # a clock daemon keeps the clock: refused, and said so
    w.call(TIMEDATED_PATH, TIMEDATED, "SetNTP", "bb", (True, False), dest=TIMEDATED)
    w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (ahead + 5 * 10**6, 2_000_000))
    t = w.wait(lambda: clock_is(w, "clock-daemon"), what="refused: a clock daemon")
    assert "a clock daemon keeps the clock (timedated: NTP yes" in t["ClockReason"], t
    assert len(set_time_calls(w)) == 1

    # timedated not there: refused, and said so
    timedated.terminate()
    timedated.wait(10)
    w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (ahead + 10 * 10**6, 2_000_000))
    t = w.wait(lambda: clock_is(w, "no-timedated"), what="refused: no timedated")
    assert t["ClockReason"].startswith("timedated did not answer"), t

    # roamd saved the hour-ahead time (a lower bound after a restart); a manual time now is
    # before it: the consensus refuses it, and the clock is left alone
    w.roamd_restart()
    w.call(TIME_PATH, TIME_IFACE, "SetManual", "tt", (int(time.time() * 1e6), 2_000_000))
    t = w.wait(lambda: clock_is(w, "unsettled") if time_props(w)["State"] == "disputed"
               else None, what="the manual time refused")
    assert any("earlier than the last known good time" in r for r in t["Reasons"]), t
    assert t["ClockReason"] == "the time is disputed: no source is left that can be believed", t


TIMESYNCD = "org.freedesktop.timesync1"
TIMESYNCD_PATH = "/org/freedesktop/timesync1"
TIMESYNCD_TEMPLATE = str(Path(__file__).parent.parent / "dbusmock" / "timesyncd.py")


def ntp_sources(w):
    return [s for s in time_props(w)["Sources"] if s[0] == "ntp"]


def test_timesyncds_ntp_state_is_a_witness(w):
    """systemd-timesyncd's last NTP packet (a dbusmock template written from its documented
    API, tests/dbusmock/timesyncd.py: it never touches the clock) is a sample of kind ntp,
    witness ntp; a spike is refused with its reason; timesyncd gone, the witness is."""
    w.wait_link("wifi0", online, what="wifi0 online")
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                             TIMESYNCD_TEMPLATE], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: w.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                "s", [TIMESYNCD], dest="org.freedesktop.DBus"),
                 what="the timesyncd mock")
        # no packet yet: no sample
        w.call(TIMESYNCD_PATH, PROPS_IFACE, "GetAll", "s", (TIMESYNCD + ".Manager",),
               dest=TIMESYNCD)
        assert ntp_sources(w) == []
        # a packet from a server 200 ms ahead, 20 ms round trip: timesyncd slews
        w.call(TIMESYNCD_PATH, MOCK_IFACE, "ReceivePacket", "xtuub",
               (200_000, 20_000, 2, 0, False), dest=TIMESYNCD)
        s = w.wait(lambda: ntp_sources(w) or None, what="the NTP sample")[0]
        assert s[1] == "ntp" and s[2] == "systemd-timesyncd, server ntp.roam.test", s
        # its interval: the real time + 200 ms, ± root distance + jitter + the slew's 200 ms
        assert abs(s[3] - (time.time() * 1e6 + 200_000)) < 2e6, s
        assert 200_000 < s[4] < 400_000, s
        assert s[5] == "truechimer", s
        # a spike is refused, with its reason
        w.call(TIMESYNCD_PATH, MOCK_IFACE, "ReceivePacket", "xtuub",
               (200_000, 20_000, 2, 0, True), dest=TIMESYNCD)
        wait_for(lambda: "its last NTP packet is refused: timesyncd called the packet a spike"
                 in w.roamd_log(), what="the spike refused")
        # issue 39: the double refuses what timesyncd refuses
        manager = TIMESYNCD + ".Manager"
        for bad in (["ntp..roam.test"], ["x" * 64 + ".test"],
                    ["ok.test", ".".join(["x" * 63] * 4) + ".test"]):
            with pytest.raises(DBusCallError) as e:
                w.call(TIMESYNCD_PATH, manager, "SetRuntimeNTPServers", "as", (bad,),
                       dest=TIMESYNCD)
            assert e.value.name == "org.freedesktop.DBus.Error.InvalidArgs", (bad, e.value)
        r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            "--", "dbus-send", "--bus=" + w.address, "--print-reply",
                            "--dest=" + TIMESYNCD, TIMESYNCD_PATH,
                            manager + ".SetRuntimeNTPServers", "array:string:ntp.roam.test"],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode != 0 and "org.freedesktop.DBus.Error.AccessDenied" in r.stderr, r
        w.call(TIMESYNCD_PATH, manager, "SetRuntimeNTPServers", "as",
               (["ntp.roam.test", "192.0.2.1", "2001:db8::1"],), dest=TIMESYNCD)
        assert w.call(TIMESYNCD_PATH, PROPS_IFACE, "Get", "ss", (manager, "RuntimeNTPServers"),
                      dest=TIMESYNCD) == ["ntp.roam.test", "192.0.2.1", "2001:db8::1"]
    finally:
        mock.terminate()
        mock.wait(10)
    w.wait(lambda: not ntp_sources(w) or None, what="timesyncd gone, its witness too")


GPSD_PORT = 29470
GPSD_DOUBLE = str(Path(__file__).parent / "gpsd.py")
TPV = '{"class":"TPV","device":"/dev/ttyACM0","mode":%d,"time":"{now}","ept":0.005}'


def gnss_sources(w):
    return [s for s in time_props(w)["Sources"] if s[0] == "gnss"]


def test_gpsds_fix_time_is_a_witness(w, tmp_path):
    """A gpsd double in the device (tests/world/gpsd.py, its JSON protocol: VERSION, DEVICES
    and WATCH, then TPV reports with the real time) at [Time] GpsdAddress=: a TPV without a
    fix gives no sample, garbage is refused with its reason, a 3D fix is a sample of kind gnss,
    witness gnss; gpsd gone, the witness is."""
    w.wait_link("wifi0", online, what="wifi0 online")
    tmp_path.chmod(0o755)
    script = tmp_path / "gpsd.script"
    pidfile = tmp_path / "gpsd.pid"
    # no fix yet, then a line that is not JSON: the refusal says the no-fix TPV was read too
    script.write_text(TPV % 1 + "\n" + "$GPGGA,garbage\n")
    p = w.dev_popen(["/usr/bin/python3", GPSD_DOUBLE, "--port", str(GPSD_PORT), "--script",
                     str(script), "--pidfile", str(pidfile)],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(pidfile.exists, what="the gpsd double")
        w.write_config(w.default_config + "\n[Time]\nGpsdAddress=127.0.0.1:%d\n" % GPSD_PORT)
        w.roamd_signal("HUP")  # a reload follows the new address
        wait_for(lambda: "gpsd at 127.0.0.1:%d: a line is refused: not JSON" % GPSD_PORT
                 in w.roamd_log(), what="the garbage refused")
        assert gnss_sources(w) == []
        # a 3D fix: the real time ± ept + the latency
        tmp = script.with_name("gpsd.script.tmp")
        tmp.write_text(TPV % 3 + "\n")
        os.rename(tmp, script)
        s = w.wait(lambda: gnss_sources(w) or None, what="the GNSS sample")[0]
        assert s[1] == "gnss" and s[2] == "gpsd at 127.0.0.1:%d" % GPSD_PORT, s
        assert abs(s[3] - time.time() * 1e6) < 3e6, s
        assert s[4] == 505_000, s
    finally:
        p.kill()
        p.wait(10)
    w.wait(lambda: not gnss_sources(w) or None, what="gpsd gone, its witness too")


NTP_CMD_SOCKET = "/run/roam-chrony/chronyd.sock"


def chronyc_binary(chronyd):
    chronyc = os.path.join(os.path.dirname(os.path.dirname(chronyd)), "bin", "chronyc")
    if not os.access(chronyc, os.X_OK):
        chronyc = shutil.which("chronyc") or "/usr/bin/chronyc"
    return chronyc


def set_location(w, link, location):
    w.call("/org/roam1", "org.roam1.Manager", "SetLocation", "ss", (link, location))
    w.wait_link(link, lambda l: l["Location"] == location, timeout=10,
                what="%s at location %s" % (link, location))


def renew_leases(w):
    """home's dnsmasq reads its options again; dhcpcd asks afresh (without its DHCPv6 lease,
    which it would only confirm: dnsmasq's answer to a Confirm has no NTP option)."""
    os.kill(int(w.path("home-dnsmasq.pid").read_text().split()[0]), signal.SIGHUP)
    w.path("var-lib-dhcpcd", "wifi0.lease6").unlink(missing_ok=True)
    w.dhcpcd_restart()


def test_dhcp_ntp_servers_reach_chronyd_through_its_sourcedir(w, tmp_path):
    """The home network's DHCP names an NTP server (option 42 and DHCPv6 option 56: the home
    router, where a real chronyd serves time): roamd shows it as wifi0's NTPServers, writes
    wifi0.sources into chronyd's sourcedir and asks the device's real chronyd (-x) to reload
    its sources over its command socket; chronyd then polls the server. The lease loses the
    option: the file goes and chronyd drops the server."""
    chronyd = chronyd_binary()
    if not chronyd:
        pytest.skip("no chronyd (tools/fetch-chronyd.sh unpacks Debian's; ROAM_CHRONYD=PATH)")
    chronyc = chronyc_binary(chronyd)
    tmp_path.chmod(0o755)
    srcdir = tmp_path / "chrony-dhcp"
    # the NTP server: chronyd on the home router (its own network namespace only), serving
    # its own clock, never setting it, with no command socket
    server_conf = tmp_path / "server.conf"
    server_conf.write_text("local stratum 8\nallow all\nbindcmdaddress /\ncmdport 0\n"
                           "pidfile %s\n" % (tmp_path / "server.pid"))
    server = subprocess.Popen(["nsenter", "--net=/run/netns/roam-%s-home" % w.name, "--",
                               chronyd, "-x", "-d", "-u", "root", "-f", str(server_conf)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # the device's chronyd: Debian's way of taking DHCP's servers (a sourcedir), nothing else
    client_conf = tmp_path / "client.conf"
    client_conf.write_text("sourcedir %s\nbindcmdaddress %s\ncmdport 0\npidfile %s\n"
                           % (srcdir, NTP_CMD_SOCKET, tmp_path / "client.pid"))
    w.dev("mkdir", "-p", "-m", "0750", os.path.dirname(NTP_CMD_SOCKET))
    client = w.dev_popen([chronyd, "-x", "-d", "-u", "root", "-f", str(client_conf)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = {}

    def sources():
        r = w.dev(chronyc, "-h", NTP_CMD_SOCKET, "-n", "-c", "sources", check=False)
        seen["out"] = r.stdout + r.stderr
        return {l.split(",")[2]: l.split(",") for l in r.stdout.splitlines()
                if l.count(",") >= 8} if r.returncode == 0 else None

    def ntp_link(servers):
        return lambda l: sorted(l["NTPServers"]) == sorted(servers)

    try:
        wait_for(lambda: sources() == {}, interval=0.2, what="chronyd without sources")
        w.write_config(w.default_config + "\n[Time]\nChronySourceDir=%s\n"
                       "ChronyCommandSocket=%s\n" % (srcdir, NTP_CMD_SOCKET))
        w.roamd_signal("HUP")
        # a network the user trusts: DHCP's NTP servers count only there (issue 40 item 8)
        set_location(w, "wifi0", "home")
        w.path("home-dhcp-opts").write_text(
            "option:ntp-server,192.0.2.1\noption6:ntp-server,[2001:db8:1::1]\n")
        renew_leases(w)
        w.wait_link("wifi0", ntp_link(["192.0.2.1", "2001:db8:1::1"]), timeout=20,
                    what="wifi0's NTP servers from its leases")
        r = w.dev(str(ROAM), "status", check=False)
        assert "NTP servers:" in r.stdout and "192.0.2.1" in r.stdout, r.stdout
        f = srcdir / "wifi0.sources"
        wait_for(f.exists, what="wifi0.sources")
        lines = f.read_text().splitlines()
        assert lines[0].startswith("# roamd:"), lines
        assert sorted(lines[1:]) == ["server 192.0.2.1 iburst",
                                     "server 2001:db8:1::1 iburst"], lines
        # chronyd reloaded (roamd read its answer) and polls the home router's chronyd
        wait_for(lambda: "chronyd at %s reloads its sources" % NTP_CMD_SOCKET in w.roamd_log(),
                 what="chronyd's answer to reload sources")
        try:
            row = wait_for(lambda: (lambda s: s.get("192.0.2.1") if s and int(
                s.get("192.0.2.1", [0] * 6)[5], 8) != 0 else None)(sources()),
                timeout=20, interval=0.5, what="chronyd reached the DHCP server")
        except TimeoutError:
            raise AssertionError("chronyc said: %r" % seen.get("out"))
        assert row[0] == "^", row  # a server, as Debian's hooks make it
        assert "2001:db8:1::1" in sources(), seen

        # the lease loses the option: the file goes, chronyd drops the servers
        w.path("home-dhcp-opts").write_text("")
        renew_leases(w)
        w.wait_link("wifi0", ntp_link([]), timeout=20, what="wifi0 without NTP servers")
        wait_for(lambda: not f.exists(), what="wifi0.sources removed")
        wait_for(lambda: sources() == {}, timeout=10, interval=0.2,
                 what="chronyd without the DHCP servers")
    finally:
        w.path("home-dhcp-opts").write_text("")
        os.kill(int(w.path("home-dnsmasq.pid").read_text().split()[0]), signal.SIGHUP)
        for p in (client, server):
            p.terminate()
            p.wait()


def test_dhcp_ntp_servers_only_at_locations_the_user_trusts(w, tmp_path):
    """Any host on a public or untrusted network can answer DHCP: its NTP servers do not go
    to chronyd there. The same lease at home (or work) does: wifi0.sources appears when the
    user makes the network home, and goes when it is made untrusted again."""
    tmp_path.chmod(0o755)
    srcdir = tmp_path / "chrony-dhcp"
    f = srcdir / "wifi0.sources"
    try:
        w.write_config(w.default_config + "\n[Time]\nChronySourceDir=%s\n" % srcdir)
        w.roamd_signal("HUP")
        set_location(w, "wifi0", "public")
        w.path("home-dhcp-opts").write_text("option:ntp-server,192.0.2.1\n")
        renew_leases(w)
        # the sync that brings the servers to the link is the one that decides the file
        w.wait_link("wifi0", lambda l: l["NTPServers"] == ["192.0.2.1"], timeout=20,
                    what="wifi0's NTP server from its lease")
        assert not f.exists(), f.read_text()
        set_location(w, "wifi0", "home")
        wait_for(f.exists, what="wifi0.sources at home")
        assert "server 192.0.2.1 iburst" in f.read_text().splitlines(), f.read_text()
        set_location(w, "wifi0", "untrusted")
        wait_for(lambda: not f.exists(), what="wifi0.sources withdrawn on an untrusted network")
        assert "wifi0's NTP servers from DHCP withdrawn from chronyd (the link's location is " \
            "not home or work)" in w.roamd_log()
    finally:
        w.path("home-dhcp-opts").write_text("")
        renew_leases(w)
        w.write_config(w.default_config)
        w.roamd_stop()
        w.path("var-lib-roam", "locations.state").unlink(missing_ok=True)
        w.roamd_start()



def test_gpsd_address_held_by_an_unprivileged_user_is_no_witness(w):
    """While gpsd does not run, any local user may listen at its address and send made-up
    fixes. roamd trusts a gpsd only when the socket listening there is root's or the gpsd
    user's (sock_diag): the double started as nobody, with a 3D fix, is no witness (logged once
    with its uid); the same double started as root is."""
    w.wait_link("wifi0", online, what="wifi0 online")
    nobody = pwd.getpwnam("nobody").pw_uid
    # pytest's tmp_path is below a directory only root may enter: one nobody can use
    run = Path(tempfile.mkdtemp(prefix="roam-gpsd-"))
    run.chmod(0o777)
    script = run / "gpsd.script"
    script.write_text(TPV % 3 + "\n")
    script.chmod(0o644)
    port = GPSD_PORT + 1

    def double(uid, pidfile):
        p = w.dev_popen(["/usr/bin/python3", GPSD_DOUBLE, "--port", str(port), "--script",
                         str(script), "--pidfile", str(pidfile)], user=uid,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(pidfile.exists, what="the gpsd double")
        return p

    p = double(nobody, run / "nobody.pid")
    try:
        w.write_config(w.default_config + "\n[Time]\nGpsdAddress=127.0.0.1:%d\n" % port)
        w.roamd_signal("HUP")
        said = ("gpsd at 127.0.0.1:%d: its listening socket belongs to uid %d, not root or "
                "gpsd: not trusted as a time witness" % (port, nobody))
        wait_for(lambda: said in w.roamd_log(), what="the nobody's gpsd refused")
        assert gnss_sources(w) == []
    finally:
        p.kill()
        p.wait(10)
    # root's, at another port (a new address: roamd connects at once, not in 30 s)
    port = GPSD_PORT + 2
    p = double(None, run / "root.pid")
    try:
        w.write_config(w.default_config + "\n[Time]\nGpsdAddress=127.0.0.1:%d\n" % port)
        w.roamd_signal("HUP")
        s = w.wait(lambda: gnss_sources(w) or None, what="the GNSS sample of root's gpsd")[0]
        assert s[2] == "gpsd at 127.0.0.1:%d" % port, s
        assert w.roamd_log().count(said) == 1
    finally:
        p.kill()
        p.wait(10)
        shutil.rmtree(run, ignore_errors=True)
        w.write_config(w.default_config)
        w.roamd_signal("HUP")


def test_the_gates_wait_counts_from_the_default_routes_online(w):
    """The gate's wait ([Time] GateTimeout=, here 0) counts from the first online global
    state, not from the best link's: wifi0 is online, but the kernel's default route is
    eth0's in the living room (its LAN only) and with DefaultFollows=kernel apps' traffic
    takes it (Manager.State local). The gate stays closed: no app could get out to hear
    "online, time unverified". Once the default apps follow wifi0 (DefaultFollows=verdict),
    the state goes online and only then the gate opens."""
    w.roamd_stop()
    state = w.path("var-lib-roam", "time.state")
    if state.exists():
        state.unlink()  # a fresh device: no lower bound
    w.move("eth0", "living")
    try:
        w.write_config(w.default_config +
                       "\n[Apps]\nDefaultFollows=kernel\n[Time]\nGateTimeout=0\n")
        w.roamd_start()
        wait_for(lambda: kernel_default(w) == "eth0", 30, what="the kernel's default via eth0")
        links = w.wait(lambda: (lambda l: l if l["eth0"]["Connectivity4"] == "local" and
                                l["wifi0"]["Connectivity4"] == "online" else None)(w.links()),
                       40, what="eth0 local, wifi0 online")
        m = w.wait(lambda: (lambda m: m if m["State"] == "local" and
                            m["DefaultLink"] == links["eth0"]["_path"] else None)(w.manager()),
                   20, what="State local via eth0")
        assert m["BestLink"] == links["wifi0"]["_path"], m
        t = time_props(w)
        assert t["State"] == "settling", t  # wifi0's Date alone: nothing settles the gate
        assert t["Gate"] == "closed", t
        assert not m["TimeGate"] and str(m["TimeGateReason"]).startswith(
            "waiting for the time: 1 source so far"), m
        w.write_config(w.default_config + "\n[Apps]\nDefaultFollows=verdict\n"
                       "[Time]\nGateTimeout=0\n")
        w.roamd_signal("HUP")
        w.wait(lambda: time_props(w)["Gate"] == "unverified", what="the gate open")
        assert w.manager()["State"] == "online"
        log = w.roamd_log().rsplit("=== roamd-start ", 1)[-1]
        online = re.search(r"State \(the default route's\): \w+ -> online", log)
        assert online and online.start() < log.index("Time gate open after 0 ms"), log
    finally:
        w.restore()


def kernel_default(w, fam=4):
    out = w.dev("ip", "-%d" % fam, "route", "get", WHOAMI["inet"][fam]).stdout
    return out.split(" dev ")[1].split()[0]
