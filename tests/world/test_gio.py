# SPDX-License-Identifier: LGPL-2.1-or-later
"""Unmodified GLib apps hear roam (docs/apps-hear.md): real GLib clients (python3-gi's
Gio.NetworkMonitor.get_default(), and a small C program) in app cgroups of the world's device,
with roam's GIO module found through GIO_EXTRA_MODULES. Their monitor is roam's; each app
hears its own connectivity (its policy, its link's verdict), metered on a cellular link;
can_reach follows the app's policy; they fall back to GLib's netlink monitor while roamd is
stopped and come back to roamd when it returns; wake-listed apps hear network-changed in
their turn's order, the unlisted after them."""
import json
import os
import queue
import subprocess
import threading
import time

import pytest

from roamworld import MANAGER_IFACE, MANAGER_PATH, REPO, wait_for

WORLD = "tgio"
PY = "/usr/bin/python3"
HERE = os.path.dirname(os.path.abspath(__file__))
CLIENT = os.path.join(HERE, "gio_client.py")
BUILD = REPO / "build"
MODULES = BUILD / "gio"
C_CLIENT = BUILD / "tests" / "gio-client"
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
MONITOR_PATH = "/org/roam1/monitor"
MONITOR_IFACE = "org.roam1.AppMonitor"

pytestmark = pytest.mark.skipif(not (MODULES / "libgioroam.so").exists(),
                                reason="libgioroam.so not built (GLib's headers missing)")


def rel(app_id):
    return "%s/app-%s.scope" % (ROAM_SLICE, app_id)


class Client:
    """A GLib client in the device: its lines read by a thread into a queue."""

    def __init__(self, w, cgroup, argv=None, c=False):
        cmd = ["env", "GIO_EXTRA_MODULES=%s" % MODULES, "G_DEBUG=fatal-warnings"]
        cmd += [str(C_CLIENT)] if c else [PY, CLIENT, *(argv or [])]
        self.p = w.dev_popen(cmd, cgroup=cgroup, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.seen = []
        self.c = c
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line if self.c else json.loads(line))
        self.lines.put(None)

    def next(self, predicate=lambda e: True, timeout=10, what="a line"):
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            try:
                e = self.lines.get(timeout=max(left, 0.01))
            except queue.Empty:
                raise TimeoutError("%s: no %s in %.0f s; seen %s; stderr %s"
                                   % (self, what, timeout, self.seen, self._stderr()))
            if e is None:
                raise AssertionError("the client ended: %s %s" % (self.seen, self._stderr()))
            self.seen.append(e)
            if predicate(e):
                return e

    def _stderr(self):
        if self.p.poll() is None:
            return ""
        return self.p.stderr.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        err = self.p.stderr.read()
        self.p.stdout.close()
        self.p.stderr.close()
        # silent in normal operation, and never a warning (they are fatal here)
        return err


@pytest.fixture
def clients(w):
    made = []

    def start(cgroup, *argv, c=False):
        cl = Client(w, cgroup, list(argv), c)
        made.append(cl)
        return cl
    yield start
    for cl in made:
        err = cl.stop()
        assert "WARNING" not in err and "CRITICAL" not in err, err


def set_policy(w, app_id, **kw):
    return w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}", [app_id, kw])


def answer(cl):
    e = cl.next(what="its first answer")
    return e


def test_monitor_is_roams_and_each_app_hears_its_own(w, clients):
    set_policy(w, "org.test.Denied", access="deny")
    set_policy(w, "org.test.Lan", access="lan")
    set_policy(w, "org.test.Wired", bearers="ethernet")  # eth0 is dead: nothing routes
    full = answer(clients(rel("org.test.Full")))
    assert full["type"] == "RoamNetworkMonitor" and full["backend"] == "roamd", full
    assert (full["available"], full["connectivity"], full["metered"]) == (True, "full", False)
    denied = answer(clients(rel("org.test.Denied")))
    assert (denied["available"], denied["connectivity"]) == (False, "local"), denied
    lan = answer(clients(rel("org.test.Lan")))
    assert (lan["available"], lan["connectivity"]) == (True, "limited"), lan
    wired = answer(clients(rel("org.test.Wired")))
    assert (wired["available"], wired["connectivity"]) == (False, "local"), wired
    # a process in no app's cgroup is the default policy's
    other = answer(clients("roam-test/elsewhere"))
    assert (other["type"], other["connectivity"]) == ("RoamNetworkMonitor", "full"), other
    # the small C program: the same monitor and answer
    c = clients(rel("org.test.Full"), c=True).next(what="the C client's line")
    assert c.split() == ["start", "RoamNetworkMonitor", "available=1", "connectivity=full",
                         "metered=0"], c
    # each app's processes listen, as roamd counts them
    assert w.call(MONITOR_PATH, MONITOR_IFACE, "Listeners", "s", ["org.test.Full"]) == 2
    assert w.call(MONITOR_PATH, MONITOR_IFACE, "Listeners", "s", ["org.test.Lan"]) == 1


def test_policy_change_is_heard_by_that_app_only(w, clients):
    a = clients(rel("org.test.A"))
    b = clients(rel("org.test.B"))
    assert answer(a)["connectivity"] == "full" and answer(b)["connectivity"] == "full"
    set_policy(w, "org.test.A", access="deny")
    e = a.next(lambda e: e["event"] == "changed", what="A's network-changed")
    assert (e["available"], e["connectivity"]) == (False, "local"), e
    set_policy(w, "org.test.A", access="lan")
    e = a.next(lambda e: e["event"] == "changed", what="A's network-changed to lan")
    assert (e["available"], e["connectivity"]) == (True, "limited"), e
    # B heard nothing: the signal went to A's connection alone (B is told of its own change)
    set_policy(w, "org.test.B", access="deny")
    e = b.next(lambda e: e["event"] == "changed", what="B's network-changed")
    assert e["connectivity"] == "local" and all(x["event"] == "start" for x in b.seen[:-1]), b.seen


def test_can_reach_follows_the_apps_policy(w, clients):
    set_policy(w, "org.test.Lan", access="lan")
    set_policy(w, "org.test.Denied", access="deny")
    targets = ("192.0.2.1:80", "203.0.113.10:80")
    lan = clients(rel("org.test.Lan"), *targets)
    full = clients(rel("org.test.Full"), *targets)
    denied = clients(rel("org.test.Denied"), *targets)

    def reach(cl):
        got = {}
        while len(got) < len(targets):
            e = cl.next(lambda e: e["event"] == "reach", what="can_reach answers")
            got[e["target"]] = (e["sync"], e["async"])
        return got
    r = reach(lan)
    assert r["192.0.2.1:80"] == (True, True), r  # wifi0's LAN (home)
    assert "local networks only" in r["203.0.113.10:80"][0], r
    assert "local networks only" in r["203.0.113.10:80"][1], r
    r = reach(full)
    assert r == {t: (True, True) for t in targets}, r
    r = reach(denied)
    assert all("unreachable" in v[0].lower() and "unreachable" in v[1].lower()
               for v in r.values()), r


def test_portal_and_cellular_metered(w, clients):
    set_policy(w, "org.test.Cell", bearers="cellular")
    cell = clients(rel("org.test.Cell"))
    e = answer(cell)
    # cell0 is in the living room: a LAN without a way out
    assert (e["available"], e["connectivity"], e["metered"]) == (True, "limited", True), e
    w.move("cell0", "mobile")
    e = cell.next(lambda e: e["event"] == "changed" and e["connectivity"] == "full", 30,
                  what="the cellular link online")
    assert e["metered"] is True and e["available"] is True, e
    full = clients(rel("org.test.Full"))
    assert answer(full)["connectivity"] == "full"
    # wifi0 behind the cafe's portal, cell0 kept off: the default route's link is a portal
    w.carrier("cell0", False)
    w.move("wifi0", "cafe")
    e = full.next(lambda e: e["connectivity"] == "portal", 30, what="the portal")
    assert e["available"] is True and e["metered"] is False, e


def test_roaming_link_is_metered(w, clients):
    cl = clients(rel("org.test.Full"))
    e = answer(cl)
    assert (e["connectivity"], e["metered"]) == ("full", False), e
    # wifi0 counts as roaming ([Roaming], as a modem's registration would say): metered
    w.write_config(w.default_config + "\n[Roaming]\nwifi0=yes\n")
    w.roamd_signal("HUP")
    e = cl.next(lambda e: e["event"] == "metered", 20, what="metered")
    assert (e["metered"], e["connectivity"]) == (True, "full"), e


def test_modem_roaming_makes_the_link_metered(w, clients):
    """A modem's registration on wifi0 (ModemManager's, tests/dbusmock/modemmanager.py) goes
    home -> roaming: the link's fact changes (LINK_CHANGE_MODEM) and the app's monitor hears
    metered, though nothing of the app's policy or route changed."""
    cl = clients(rel("org.test.Full"))
    e = answer(cl)
    assert (e["connectivity"], e["metered"]) == ("full", False), e
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    mm = "org.freedesktop.ModemManager1"
    mock = subprocess.Popen([PY, "-m", "dbusmock", "--system", "--template",
                             os.path.join(HERE, "..", "dbusmock", "modemmanager.py")],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: w.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                "s", [mm], dest="org.freedesktop.DBus"), 10, what="the mock")
        start = len(w.roamd_log())
        modem = w.call("/org/freedesktop/ModemManager1", "org.freedesktop.DBus.Mock",
                       "AddModem", "su", ["wifi0", 1], dest=mm)
        wait_for(lambda: "wifi0: modem registration none -> home" in w.roamd_log()[start:], 10,
                 what="wifi0's modem registration home")
        w.call(modem, "org.freedesktop.DBus.Mock", "SetRegistrationState", "ou", [modem, 5],
               dest=mm)
        e = cl.next(lambda e: e["event"] == "metered", 20, what="metered")
        assert (e["metered"], e["connectivity"]) == (True, "full"), e
        # told by the sync that took the change in, not by a later reconcile pass (a modem's
        # registration asks for none)
        log = w.roamd_log()[start:]
        assert "Reconciler: pass" not in log[log.index("wifi0: modem registration home -> "
                                                       "roaming"):], log
    finally:
        mock.terminate()
        mock.wait(10)


def test_falls_back_to_netlink_while_roamd_is_away(w, clients):
    set_policy(w, "org.test.Denied", access="deny")
    cl = clients(rel("org.test.Denied"))
    e = answer(cl)
    assert (e["type"], e["backend"], e["available"]) == ("RoamNetworkMonitor", "roamd", False)
    w.roamd_stop()
    # GLib's netlink monitor answers in its place: the device has a default route
    e = cl.next(lambda e: e["event"] == "changed", what="the fallback's answer")
    assert (e["backend"], e["available"]) == ("GNetworkMonitorNetlink", True), e
    assert any(x["event"] == "backend" for x in cl.seen), cl.seen
    # a GLib app started now gets netlink's monitor from GLib itself
    e = answer(clients(rel("org.test.Denied")))
    assert e["type"] == "GNetworkMonitorNetlink", e
    w.roamd_start()
    e = cl.next(lambda e: e["event"] == "backend" and e["backend"] == "roamd", 30,
                what="roamd answering again")
    assert (e["available"], e["connectivity"]) == (False, "local"), e
    e = answer(clients(rel("org.test.Denied")))
    assert (e["type"], e["connectivity"]) == ("RoamNetworkMonitor", "local"), e


def test_subscribe_is_answered_per_caller_and_bounded(w):
    # from no app's cgroup (the test's own process, outside the device's world cgroup):
    # roamd answers for the app its cgroup says, never for one the caller names
    app, available, connectivity, metered = w.call(MONITOR_PATH, MONITOR_IFACE, "Get")
    assert connectivity in ("full", "limited", "portal", "local"), connectivity
    with pytest.raises(Exception) as e:
        w.call(MONITOR_PATH, MONITOR_IFACE, "CanReach", "ay", [[1, 2, 3]])
    assert "InvalidArguments" in str(e.value), e.value
    with pytest.raises(Exception) as e:
        w.call(MONITOR_PATH, MONITOR_IFACE, "Listeners", "s", ["../x"])
    assert "InvalidArguments" in str(e.value), e.value


@pytest.fixture
def listed(w):
    """Wake-listed apps from apps.d (removed after the test), roamd restarted by the test."""
    made = []

    def setup(apps):
        w.roamd_stop()
        d = w.path("etc-roam", "apps.d")
        d.mkdir(exist_ok=True)
        (d / "50-gio-wake.conf").write_text("".join(
            "[App]\nID=%s\nWake=%d\nWakeSlice=%s\n" % a for a in apps))
        w.write_config(w.default_config + "\n[Wake]\nSettleSec=0.2\nQuietSec=0\n")
        for a in apps:
            (w.cgroup / rel(a[0])).mkdir(parents=True, exist_ok=True)
            made.append(a[0])
    yield setup
    w.roamd_stop()
    f = w.path("etc-roam", "apps.d", "50-gio-wake.conf")
    if f.exists():
        f.unlink()
    w.restore()


def test_network_changed_in_wake_order(w, clients, listed):
    """Five wake-listed GLib apps hear the link come online in their turns' order (priority),
    one slice apart; an app that is not listed hears it once the last listed app's turn
    began, not before."""
    prios = (10, 90, 30, 70, 50)
    apps = [("org.test.G%d" % p, p, "1s") for p in prios]
    listed(apps)
    w.carrier("wifi0", False)
    w.carrier("cell0", False)
    w.roamd_start()
    cls = {p: clients(rel("org.test.G%d" % p)) for p in prios}
    cls[0] = clients(rel("org.test.Unlisted"))
    for p, cl in cls.items():
        e = answer(cl)
        assert e["type"] == "RoamNetworkMonitor" and e["connectivity"] != "full", (p, e)
    t0 = time.monotonic()
    w.carrier("wifi0", True)
    # once the first turn began, a new process of the last app (still waiting) is answered
    # limited, and hears full at its app's turn like the others
    cls[90].next(lambda e: e["event"] == "changed" and e["connectivity"] == "full", 30,
                 what="G90 online")
    cls[90].lines.put(cls[90].seen.pop())  # read again below
    late = clients(rel("org.test.G10"))
    e = answer(late)
    assert (e["available"], e["connectivity"]) == (True, "limited"), e
    heard = {}
    for p, cl in cls.items():
        e = cl.next(lambda e: e["event"] == "changed" and e["connectivity"] == "full", 30,
                    what="G%d online" % p)
        assert e["available"] is True, e
        heard[p] = e["t"]
    order = sorted((p for p in heard if p), key=heard.get)
    assert order == [90, 70, 50, 30, 10], heard
    # one turn (a 1 s slice) apart: each heard it at its own turn, not all at once
    gaps = [heard[b] - heard[a] for a, b in zip(order, order[1:])]
    assert all(g > 0.5 for g in gaps), gaps
    # the unlisted app: after the other listed apps' turns, with the last one's beginning
    # (sent right after it; the two processes are scheduled as they are), not its end
    assert heard[0] - heard[30] > 0.5 and abs(heard[0] - heard[10]) < 0.5, heard
    e = late.next(lambda e: e["event"] == "changed" and e["connectivity"] == "full", 10,
                  what="the late G10 process online")
    assert abs(e["t"] - heard[10]) < 0.5, (e, heard)
    assert heard[90] - t0 < 20, heard
