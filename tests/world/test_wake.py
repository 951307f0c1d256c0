# SPDX-License-Identifier: LGPL-2.1-or-later
"""The ordered wake-up against the real kernel (docs/wake.md): wake-listed apps get their
turns in priority order, never more than the cap at once; a turn is cut at its slice; a
waiting app's connects are refused at once by the gate (nft set wake_gate); Done only from a
process of the app; max delay; a link flap wakes no one twice; bad input."""
import os
import re
import subprocess
import time

import pytest

from roamworld import (MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, ROAM, WHOAMI, WHOAMI_PORT,
                       WORLD_SH, DBusCallError, wait_for)

WORLD = "twake"
APP_IFACE = "org.roam1.App"
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
HERE = os.path.dirname(os.path.abspath(__file__))
WAKE_CALL = os.path.join(HERE, "wake_call.py")
PY = "/usr/bin/python3"


def rel(app_id):
    return "%s/app-%s.scope" % (ROAM_SLICE, app_id)


def app_path(w, app_id):
    return w.call(MANAGER_PATH, MANAGER_IFACE, "GetApp", "s", [app_id])


def app_props(w, app_id):
    return w.call(app_path(w, app_id), PROPS_IFACE, "GetAll", "s", [APP_IFACE])


def wake_state(w, app_id):
    return app_props(w, app_id)["WakeState"]


def start_with(w, apps, conf=""):
    """roamd afresh with apps [(id, priority, slice)] wake-listed and their cgroups made;
    returns a Monitor started before roamd."""
    w.roamd_stop()
    d = w.path("etc-roam", "apps.d")
    d.mkdir(exist_ok=True)
    (d / "50-wake.conf").write_text("".join(
        "[App]\nID=%s\nWake=%d\nWakeSlice=%s\n" % a for a in apps))
    w.write_config(w.default_config + "\n[Wake]\nSettleSec=0.2\nQuietSec=0\n" + conf)
    for a in apps:
        (w.cgroup / rel(a[0])).mkdir(parents=True, exist_ok=True)
    mon = w.monitor()
    w.roamd_start()
    return mon


def wakes(mon, since=0.0):
    """[(t, app path, reason)] of the Wake signals seen."""
    return [(t, m["path"], m["payload"]["data"][1]) for t, m in mon.signals(since)
            if m["member"] == "Wake" and m["interface"] == APP_IFACE]


def remove_cgroup(w, r):
    p = w.cgroup / r
    if p.exists():
        (p / "cgroup.kill").write_text("1")
        wait_for(lambda: _rmdir(p), 5, what="rmdir %s" % p)


def _rmdir(p):
    try:
        p.rmdir()
    except FileNotFoundError:
        pass
    return True


@pytest.fixture
def wk(w):
    yield w
    w.roamd_stop()
    d = w.path("etc-roam", "apps.d")
    for f in d.iterdir() if d.exists() else ():
        f.unlink()
    state = w.path("var-lib-roam", "apps.state")
    if state.exists():
        state.unlink()
    base = w.cgroup / ROAM_SLICE
    if base.exists():
        for p in sorted(base.iterdir()):
            if p.is_dir():
                remove_cgroup(w, "%s/%s" % (ROAM_SLICE, p.name))
    w.restore()


def max_awake(w):
    """The most apps awake at once, from roamd's log of each app's state changes (the order
    in which roamd made them, not when a test heard of them)."""
    awake, most = set(), 0
    log = w.roamd_log().rsplit("=== roamd-start ", 1)[-1]  # this roamd's only
    for line in log.splitlines():
        # "wake: APP: OLD -> NEW (why, period N)"; the queue's and the time gate's lines differ
        m = re.search(r" wake: ([\w.-]+): (\w+) -> (\w+) \(", line)
        if not m:
            continue
        app, old, new = m.groups()
        if new == "awake":
            awake.add(app)
        elif old == "awake":
            awake.discard(app)
        most = max(most, len(awake))
    return most


def gated(w, app_id):
    """Whether the app's cgroup is in set wake_gate (nft names it by path, or by id)."""
    listing = w.dev("nft", "list", "set", "inet", "roam", "wake_gate", check=False).stdout
    keys = ('"roam-world-%s/%s"' % (w.name, rel(app_id)),
            str((w.cgroup / rel(app_id)).stat().st_ino))
    return any(k in listing for k in keys)


def wake_call(w, app_id, what, *args, cgroup=None):
    r = w.dev_run([PY, WAKE_CALL, app_id, what] + [str(a) for a in args],
                  cgroup=cgroup if cgroup is not None else rel(app_id))
    return r.stdout.strip().splitlines()


def test_priority_order_cap_slice_and_gate(wk):
    w = wk
    apps = [("org.test.W%d" % p, p, "1s") for p in (10, 90, 30, 70, 50)]
    mon = start_with(w, apps)
    # The lowest waits for four turns: its connects are refused at once meanwhile.
    wait_for(lambda: wake_state(w, "org.test.W10") == "waiting", 10, what="W10 waiting")
    wait_for(lambda: gated(w, "org.test.W10"), 10, what="W10's cgroup in set wake_gate")
    r = w.whoami(4, cgroup=rel("org.test.W10"))
    assert r.rejected, r  # the reset, not the client's 5 s timeout
    r = w.whoami(6, proto="udp", cgroup=rel("org.test.W10"))
    assert r.rejected, r  # refused (EPERM or ICMPv6 administratively prohibited), not a timeout
    # An app that is not wake-listed is not gated.
    assert w.whoami(4, cgroup=rel("org.test.Other")).ok
    # Every turn, in priority order, one at a time, each cut at its 1 s slice.
    wait_for(lambda: len(wakes(mon)) >= 5, 15, what="five turns")
    seen = wakes(mon)
    order = [p.rsplit("/", 1)[1] for _, p, _ in seen]
    assert order == [app_path(w, "org.test.W%d" % p).rsplit("/", 1)[1]
                     for p in (90, 70, 50, 30, 10)], seen
    assert all(reason == "turn" for _, _, reason in seen), seen
    assert max_awake(w) == 1  # never two at once
    wait_for(lambda: app_props(w, "org.test.W90")["WakeReason"] == "slice", 5,
             what="W90's turn cut at its slice")
    # Its turn came: out of the set, W10 connects.
    wait_for(lambda: wake_state(w, "org.test.W10") != "waiting", 5, what="W10's turn")
    wait_for(lambda: not gated(w, "org.test.W10"), 5, what="W10 out of set wake_gate")
    assert w.whoami(4, cgroup=rel("org.test.W10")).ok
    assert w.call(MANAGER_PATH, PROPS_IFACE, "Get", "ss", [MANAGER_IFACE, "WakePeriod"]) == 1


def test_done_register_and_bad_input(wk):
    w = wk
    mon = start_with(w, [("org.test.A", 80, "30s"), ("org.test.B", 40, "30s")])
    wait_for(lambda: wake_state(w, "org.test.A") == "awake", 10, what="A's turn")
    # Done for another app is refused, from B's cgroup or from one of no app.
    out = wake_call(w, "org.test.A", "done", cgroup=rel("org.test.B"))
    assert out[0].startswith("error org.roam1.Error.AccessDenied"), out
    out = wake_call(w, "org.test.A", "done", cgroup="roam-test/elsewhere")
    assert out[0].startswith("error org.roam1.Error.AccessDenied"), out
    assert wake_state(w, "org.test.A") == "awake"
    # B has no turn to end; the rank never comes from the app; registering twice is refused.
    assert wake_call(w, "org.test.B", "done")[0].startswith("error"), "B has no turn"
    out = wake_call(w, "org.test.B", "register-bad-priority")
    assert out[0].startswith("error org.roam1.Error.InvalidArguments") and \
        "policy" in out[0], out
    # Bad options are refused as a whole, each with its reason (the first of several).
    bad = "error org.roam1.Error.InvalidArguments "
    assert wake_call(w, "org.test.B", "register-bad-options") == [
        bad + 'Unknown option "Colour" (Class, EstimatedBytes, MaxDelayUSec, NeedsTime).',
        bad + "Option Class has the wrong type.",
        bad + "Option NeedsTime has the wrong type.",
        bad + "Option EstimatedBytes has the wrong type.",
        bad + "MaxDelayUSec must be more than 0 and at most a day.",
        bad + "MaxDelayUSec must be more than 0 and at most a day.",
        bad + "An app's rank comes from its policy (wake=), never from the app.",
    ]
    out = wake_call(w, "org.test.B", "register-twice")
    assert out[0] == "ok" and out[1].startswith("error") and "already" in out[1], out
    # A's own Done ends its turn: B's starts.
    t0 = time.monotonic()
    wall0 = int(time.time() * 1_000_000)
    assert wake_call(w, "org.test.A", "done") == ["ok"]
    _, m = mon.wait_signal(lambda m: m["member"] == "Wake" and
                           m["path"] == app_path(w, "org.test.B"), since=t0)
    a = app_props(w, "org.test.A")
    assert a["WakeReason"] == "done"
    # WakeSince: when the state changed, on the wall clock (µs), for "done 3s ago" in views.
    wall1 = int(time.time() * 1_000_000)
    for props in (a, app_props(w, "org.test.B")):
        assert wall0 - 50_000 <= props["WakeSince"] <= wall1 + 50_000, (wall0, props, wall1)
    # Priority out of range: refused with the range, nothing changes.
    for value in ("101", "-1", "high"):
        with pytest.raises(DBusCallError) as e:
            w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
                   ["org.test.B", {"wake": value}])
        assert e.value.name == "org.roam1.Error.InvalidArguments" and "wake" in e.value.message
    assert app_props(w, "org.test.B")["Wake"] == 40
    # A client that registers and goes away during its turn: the turn ends ("left").
    # (B's registration of register-twice above went with that client: B registers anew.)
    assert wake_state(w, "org.test.B") == "awake"
    assert wake_call(w, "org.test.B", "register") == ["ok"]
    wait_for(lambda: app_props(w, "org.test.B")["WakeReason"] == "left", 10,
             what="B's turn ends when its registered client goes")


def test_max_delay_and_wake_now(wk):
    """The starvation bound ([Wake] MaxDelaySec=) wakes a waiting app over the cap; an app may
    lengthen its own (Register MaxDelayUSec), never shorten it; the user's "online for a
    task" (WakeNow) jumps the queue."""
    w = wk
    w.carrier("wifi0", False)
    mon = start_with(w, [("org.test.Top", 90, "1h"), ("org.test.Low", 10, "1h"),
                         ("org.test.Mid", 50, "1h")], conf="MaxDelaySec=3\n")
    wait_for(lambda: w.manager()["State"] != "online", 20, what="offline")
    # Mid asks for an hour before the period begins: it waits past the 3 s
    p = w.dev_popen([PY, WAKE_CALL, "org.test.Mid", "register-hold", "30", "3600000000"],
                    cgroup=rel("org.test.Mid"), stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ok"
        w.carrier("wifi0", True)
        wait_for(lambda: wake_state(w, "org.test.Top") == "awake", 20, what="Top's turn")
        # Low waited 3 s since the period began: woken over the cap
        t, m = mon.wait_signal(lambda m: m["member"] == "Wake" and
                               m["path"] == app_path(w, "org.test.Low"))
        assert m["payload"]["data"][1] == "overdue", m
        assert wake_state(w, "org.test.Top") == "awake"  # Top's turn goes on
        assert wake_state(w, "org.test.Mid") == "waiting"
        # The user's "online for a task" jumps the queue.
        w.call(MANAGER_PATH, MANAGER_IFACE, "WakeNow", "s", ["org.test.Mid"])
        _, m = mon.wait_signal(lambda m: m["member"] == "Wake" and
                               m["path"] == app_path(w, "org.test.Mid"))
        assert m["payload"]["data"][1] == "user"
    finally:
        p.kill()
        p.wait()


def test_an_apps_own_max_delay_passes_no_one(wk):
    """Issue 40: Register(MaxDelayUSec=1) made an app overdue at once, woken over the cap
    while higher ranks waited. What an app says of itself may only make it wait longer."""
    w = wk
    start_with(w, [("org.test.Top", 90, "1h"), ("org.test.Mid", 50, "1h"),
                   ("org.test.Low", 10, "1h")])
    wait_for(lambda: wake_state(w, "org.test.Top") == "awake", 10, what="Top's turn")
    # the queue runs as Register is handled: an overdue turn would have begun by its reply
    assert wake_call(w, "org.test.Low", "register", 1) == ["ok"]
    assert wake_state(w, "org.test.Low") == "waiting"
    assert wake_state(w, "org.test.Mid") == "waiting"
    assert "overdue" not in w.roamd_log().rsplit("=== roamd-start ", 1)[-1]


def test_an_app_that_needs_no_time_goes_in_its_rank(wk):
    """Issue 40: Register(NeedsTime=false) passed the closed time gate while higher ranks
    waited for it. It goes through the gate only once no app that needs the time ranks
    before it."""
    w = wk
    start_with(w, [("org.test.Hi", 90, "30s"), ("org.test.Lo", 10, "30s")],
               conf="\n[Time]\nGateTimeout=600s\n")
    w.wait(lambda: w.manager()["WakeQueue"] == "time", 20, what="the queue waits for the time")
    p = w.dev_popen([PY, WAKE_CALL, "org.test.Lo", "register-no-time", "30"],
                    cgroup=rel("org.test.Lo"), stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ok"
        assert wake_state(w, "org.test.Lo") == "waiting"
        assert wake_state(w, "org.test.Hi") == "waiting"
        # the higher rank leaves the list: Lo is first, and goes through the closed gate
        w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
               ["org.test.Hi", {"wake": "no"}])
        wait_for(lambda: wake_state(w, "org.test.Lo") != "waiting", 10, what="Lo's turn")
        assert not w.manager()["TimeGate"]
    finally:
        p.kill()
        p.wait()


def test_an_apps_own_estimate_holds_its_place(wk):
    """Issue 40: Register(EstimatedBytes=1) ended an app's turn under the cap at once (its
    place freed for the next while it went on fetching). Only policy's WakeBytes= pipelines
    a turn; an app's own estimate may only raise it."""
    w = wk
    w.carrier("wifi0", False)
    p = None
    try:
        start_with(w, [("org.test.E90", 90, "30s"), ("org.test.E50", 50, "30s")])
        wait_for(lambda: w.manager()["State"] != "online", 20, what="offline")
        p = w.dev_popen([PY, WAKE_CALL, "org.test.E90", "stream-on-wake", WHOAMI["inet"][4],
                         WHOAMI_PORT, 10, 1], cgroup=rel("org.test.E90"),
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "ok", p.stderr.read()
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
        w.carrier("wifi0", True)
        out, err = p.communicate(timeout=30)
        assert out.split() == ["streamed", "ok"], (out, err)
        wait_for(lambda: wake_state(w, "org.test.E50") != "waiting", 10, what="E50's turn")
        log = w.roamd_log().rsplit("=== roamd-start ", 1)[-1]
        assert "the next turn begins" not in log
        assert log.index(" wake: org.test.E90: awake -> done (done") < \
            log.index(" wake: org.test.E50: waiting -> opening (turn")
        assert max_awake(w) == 1
    finally:
        if p and p.poll() is None:
            p.kill()
            p.wait()


NOBODY = 65534  # a second user the bus knows (the host's passwd has no 1001)


def user_scope(uid, app_id, n=1):
    return "user.slice/user-%d.slice/user@%d.service/app.slice/app-gnome-%s@%d.scope" % (
        uid, uid, app_id, n)


def test_a_user_acts_for_its_own_instance_only(wk):
    """Issue 40: a scope a user names like a wake-listed app in its own subtree made its
    processes pass as the app: they ended another user's running turn (Done) or registered
    first (and ended the turn by leaving). A user's processes act for that user's instance
    of the app only."""
    w = wk
    app = "org.test.Shared"
    start_with(w, [(app, 80, "1h")])
    remove_cgroup(w, rel(app))  # no system instance: only users run it here
    mine, other = user_scope(1000, app), user_scope(NOBODY, app)
    try:
        # user 65534 alone runs the app: its instance is the whole app, it registers
        (w.cgroup / other).mkdir(parents=True)
        w.wait(lambda: app_props(w, app)["Cgroups"] == ["/roam-world-%s/%s" % (w.name, other)],
               10, what="roamd governs nobody's scope, and only that")
        wait_for(lambda: wake_state(w, app) == "awake", 10, what="the app's turn")
        hold = w.dev_popen([PY, WAKE_CALL, app, "register-hold", "60"], cgroup=other,
                           user=NOBODY, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        line = hold.stdout.readline()
        assert line.split() == ["ok"], line
        # user 1000's instance starts: nobody's registration no longer speaks for the app,
        # so its client leaving ends no turn
        (w.cgroup / mine).mkdir(parents=True)
        wait_for(lambda: "no longer speaks for the app" in w.roamd_log(), 10,
                 what="the registration dropped")
        hold.kill()
        hold.wait()
        # nobody cannot end 1000's turn, nor register for it
        assert w.dev_run([PY, WAKE_CALL, app, "done"], cgroup=other, user=NOBODY
                         ).stdout.split()[:2] == ["error", "org.roam1.Error.AccessDenied"]
        assert w.dev_run([PY, WAKE_CALL, app, "register"], cgroup=other, user=NOBODY
                         ).stdout.split()[:2] == ["error", "org.roam1.Error.AccessDenied"]
        assert wake_state(w, app) == "awake"
        # nobody's scope gone, 1000's instance is the app: its Done ends the turn it still has
        remove_cgroup(w, other)
        wait_for(lambda: len(app_props(w, app)["Cgroups"]) == 1, 10, what="nobody's scope gone")
        assert w.dev_run([PY, WAKE_CALL, app, "done"], cgroup=mine, user=1000
                         ).stdout.split() == ["ok"]
        assert app_props(w, app)["WakeReason"] == "done"
    finally:
        for r in (mine, other):
            remove_cgroup(w, r)
        top = w.cgroup / "user.slice"
        for d in sorted((p for p in top.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            _rmdir(d)
        _rmdir(top)


def test_flap_wakes_no_one_twice(wk):
    w = wk
    mon = start_with(w, [("org.test.F%d" % p, p, "2s") for p in (90, 60, 30)],
                     conf="RestartSec=60\n")
    wait_for(lambda: wake_state(w, "org.test.F90") != "waiting", 10, what="F90's turn")
    w.carrier("wifi0", False)
    w.wait(lambda: w.manager()["State"] != "online", what="offline after the carrier drop")
    w.carrier("wifi0", True)
    w.wait(lambda: w.manager()["State"] == "online", timeout=20, what="online again")
    wait_for(lambda: all(wake_state(w, "org.test.F%d" % p) == "done" for p in (90, 60, 30)),
             20, what="every turn given")
    paths = [p for _, p, _ in wakes(mon)]
    assert len(paths) == 3 and len(set(paths)) == 3, wakes(mon)
    assert w.call(MANAGER_PATH, PROPS_IFACE, "Get", "ss", [MANAGER_IFACE, "WakePeriod"]) == 1


SIZE = 128 * 1024  # per app: a third of a second at the tbf's rate


def test_fetches_over_a_slow_uplink_in_order(wk, tmp_path):
    """Ten apps, each `roam when-online --app ID -- curl` of a fixed size from the internet
    over a tbf-limited uplink: they fetch in priority order, one at a time, each turn ended
    by its own Done (when-online, from the app's cgroup), every fetch succeeds."""
    w = wk
    blob = tmp_path / "blob"
    blob.write_bytes(os.urandom(SIZE))
    srv = subprocess.Popen([str(WORLD_SH), "exec", w.name, "inet", PY, "-m", "http.server",
                            "--bind", WHOAMI["inet"][4], "--directory", str(tmp_path), "8099"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # the home router's port toward wifi0: 4 Mbit/s down to the device
    w.exec("home", "tc", "qdisc", "replace", "dev", "up-wifi0", "root", "tbf", "rate",
           "4mbit", "burst", "16kb", "latency", "200ms")
    prios = (20, 80, 50, 95, 65, 10, 35, 90, 5, 70)
    procs = []
    try:
        wait_for(lambda: w.exec("inet", "ss", "-ltn").stdout.count(":8099") > 0, 10,
                 what="the blob server")
        start_with(w, [("org.test.G%d" % p, p, "30s") for p in prios])
        for p in prios:
            app = "org.test.G%d" % p
            procs.append((p, w.dev_popen(
                [str(ROAM), "when-online", "--app", app, "--timeout", "60", "--", "curl",
                 "-sS", "-o", "/dev/null", "-w", "%{size_download}\n",
                 "http://%s:8099/blob" % WHOAMI["inet"][4]],
                cgroup=rel(app), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)))
        for p, proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, (p, out, err)
            assert out.strip() == str(SIZE), (p, out, err)
        turns = [line.split(" wake: ", 1)[1].split(":", 1)[0]
                 for line in w.roamd_log().rsplit("=== roamd-start ", 1)[-1].splitlines()
                 if " wake: " in line and "opening -> awake" in line]
        assert turns == ["org.test.G%d" % p for p in sorted(prios, reverse=True)], turns
        assert max_awake(w) == 1
        for p in prios:
            assert app_props(w, "org.test.G%d" % p)["WakeReason"] == "done"
    finally:
        for _, proc in procs:
            if proc.poll() is None:
                proc.kill()
        w.exec("home", "tc", "qdisc", "del", "dev", "up-wifi0", "root", check=False)
        srv.terminate()
        srv.wait()


def test_turns_wait_for_the_time_gate(wk):
    """The time consensus's gate is the wake queue's: while it is closed (the time not settled,
    [Time] GateTimeout= not over), an app that needs the time waits and the queue reads
    `time`; the turn comes once the gate opens, and TimeGateReason says why it opened."""
    w = wk
    start_with(w, [("org.test.T90", 90, "30s")], conf="\n[Time]\nGateTimeout=3s\n")
    wait_for(lambda: wake_state(w, "org.test.T90") != "waiting", 15, what="T90's turn")
    log = w.roamd_log().rsplit("=== roamd-start ", 1)[-1]
    closed = log.index("wake: time gate open -> closed (waiting for the time: ")
    queue = log.index("wake: queue settling -> time")
    opened = log.index("wake: time gate closed -> open (time ")
    turn = log.index("wake: org.test.T90: opening -> awake")
    assert closed < queue < opened < turn, log[closed:turn + 200]
    m = w.manager()
    assert m["TimeGate"] and re.match(r"time (settled|unverified): ", str(m["TimeGateReason"])), m


def test_slow_link_wakes_one_at_a_time(wk):
    """[Wake] AtOnce=3, but the probe RTT of the apps' link (wifi0, the default route's) is at
    or above SlowRTTSec= (300 ms: a delay line of 200 ms each way on wifi0): never more than one app awake, and WakeCap says
    1 and why. Without the delay line, the same apps get three turns at once."""
    w = wk
    apps = [("org.test.S%d" % p, p, "2s") for p in (90, 70, 50, 30, 10)]
    ids = [a[0] for a in apps]
    w.delay("wifi0", 200)
    try:
        start_with(w, apps, conf="AtOnce=3\n")
        wait_for(lambda: all(wake_state(w, a) == "done" for a in ids), 40,
                 what="every slow turn given")
        assert max_awake(w) == 1
        m = w.manager()
        assert m["WakeCap"] == 1, m
        assert re.match(r"wifi0's probe RTT \d+ ms >= 300 ms", m["WakeCapReason"]), m
        assert re.search(r" wake: cap 3 -> 1 \(slow link: wifi0's probe RTT \d+ ms >= 300 ms\)",
                         w.roamd_log().rsplit("=== roamd-start ", 1)[-1])
    finally:
        w.delay("wifi0", 0)
    start_with(w, apps, conf="AtOnce=3\n")
    wait_for(lambda: all(wake_state(w, a) == "done" for a in ids), 30,
             what="every fast turn given")
    assert max_awake(w) == 3
    m = w.manager()
    assert m["WakeCap"] == 3 and m["WakeCapReason"] == "", m


def connect_on_wake(w, app_id):
    p = w.dev_popen([PY, WAKE_CALL, app_id, "connect-on-wake", WHOAMI["inet"][4], WHOAMI_PORT],
                    cgroup=rel(app_id), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready", p.stderr.read()
    return p


def test_told_only_once_the_gate_is_open(wk):
    """The Wake signal comes only once the pass that takes the app's cgroup out of set
    wake_gate committed: ten apps in a row, each connecting once (no retry) the instant it
    hears Wake, all connect. Each turn goes waiting -> opening -> awake."""
    w = wk
    ids = ["org.test.C%d" % p for p in (90, 80, 70, 60, 50, 40, 30, 20, 15, 10)]
    w.carrier("wifi0", False)
    procs = []
    try:
        start_with(w, [(a, int(a[10:]), "30s") for a in ids])
        wait_for(lambda: w.manager()["State"] != "online", 20, what="offline")
        procs = [(a, connect_on_wake(w, a)) for a in ids]  # each listens before any turn
        w.carrier("wifi0", True)
        for a, p in procs:
            out, err = p.communicate(timeout=30)
            assert out.split() == ["connected", "ok"], (a, out, err)
        log = w.roamd_log().rsplit("=== roamd-start ", 1)[-1]
        for a in ids:
            assert log.index(" wake: %s: waiting -> opening (turn" % a) < \
                log.index(" wake: %s: opening -> awake (turn" % a), a
        assert max_awake(w) == 1
    finally:
        for _, p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def test_not_told_while_the_gate_cannot_open(wk):
    """The kernel refuses the commit that would open the gate: the app stays `opening` with
    reason `gate`, untold (no Wake) and still gated; once a retry commits it is told, and
    its one connect succeeds."""
    w = wk
    faults = w.path("faults")
    faults.write_text("")
    w.carrier("wifi0", False)
    p = None
    try:
        w.roamd_stop()
        d = w.path("etc-roam", "apps.d")
        d.mkdir(exist_ok=True)
        (d / "50-wake.conf").write_text("[App]\nID=org.test.K\nWake=50\nWakeSlice=30s\n")
        # the settle time is the window in which the fault is armed: the global state goes
        # online only with a pass that committed (the default route's), so the commits may
        # fail only once the queue settles
        w.write_config(w.default_config + "\n[Wake]\nSettleSec=5\nQuietSec=0\n")
        (w.cgroup / rel("org.test.K")).mkdir(parents=True, exist_ok=True)
        mon = w.monitor()
        w.roamd_start("--test-faults=%s" % faults)
        wait_for(lambda: w.manager()["State"] != "online", 20, what="offline")
        wait_for(lambda: gated(w, "org.test.K"), 10, what="K's cgroup in set wake_gate")
        p = connect_on_wake(w, "org.test.K")
        w.carrier("wifi0", True)
        w.wait(lambda: w.manager()["WakeQueue"] == "settling", 20, what="online, settling")
        faults.write_text("nft-commit:100000")
        # its turn comes while every commit fails: it must not hear Wake (it would connect,
        # once, into its closed gate and print "refused")
        wait_for(lambda: app_props(w, "org.test.K")["WakeReason"] == "gate" or
                 p.poll() is not None, 20, what="K's turn while its gate cannot open")
        assert p.poll() is None, p.communicate()
        assert not wakes(mon)
        k = app_props(w, "org.test.K")
        assert k["WakeState"] == "opening", k
        assert gated(w, "org.test.K")  # the kernel still refuses its connections
        faults.write_text("")
        out, err = p.communicate(timeout=30)
        assert out.split() == ["connected", "ok"], (out, err)
        assert [r for _, _, r in wakes(mon)] == ["turn"]
    finally:
        faults.write_text("")
        if p and p.poll() is None:
            p.kill()
            p.wait()


def test_the_queue_follows_the_default_route_not_the_best_link(wk):
    """wifi0, the best link, is online; the kernel's default route is eth0's, in the living
    room (its LAN only), and with DefaultFollows=kernel apps' traffic takes it: Manager.State
    is local. The queue must be offline: a turn now would send the app out of eth0 into the
    living room's unreachable routes. Once eth0 is home (online), the turn comes, after the
    global state went online, and the app's connection gets out through eth0."""
    w = wk
    w.move("eth0", "living")
    mon = start_with(w, [("org.test.D50", 50, "30s")],
                     conf="\n[Apps]\nDefaultFollows=kernel\n")
    wait_for(lambda: kernel_default(w) == "eth0", 30, what="the kernel's default via eth0")
    links = w.wait(lambda: (lambda l: l if l["eth0"]["Connectivity4"] == "local" and
                            l["wifi0"]["Connectivity4"] == "online" else None)(w.links()),
                   40, what="eth0 local, wifi0 online")
    m = w.wait(lambda: (lambda m: m if m["State"] == "local" and
                        m["DefaultLink"] == links["eth0"]["_path"] else None)(w.manager()),
               20, what="State local via eth0")
    assert m["BestLink"] == links["wifi0"]["_path"], m
    # the best link's online verdict started nothing: the queue is offline, no one was woken
    assert m["WakeQueue"] == "offline", m
    assert wake_state(w, "org.test.D50") == "waiting"
    assert not wakes(mon)
    assert gated(w, "org.test.D50")
    # eth0 home: the default route's link is online, the queue runs after the state
    w.move("eth0", "home")
    wait_for(lambda: wake_state(w, "org.test.D50") == "awake", 40, what="D50's turn")
    r = w.whoami(4, cgroup=rel("org.test.D50"))
    assert r.ok and r.addr == w.dev_addr("eth0", 4), r
    log = w.roamd_log().rsplit("=== roamd-start ", 1)[-1]
    online = re.search(r"State \(the default route's\): \w+ -> online", log)
    assert online and online.start() < log.index("wake: queue offline -> settling"), log


def kernel_default(w, fam=4):
    out = w.dev("ip", "-%d" % fam, "route", "get", WHOAMI["inet"][fam]).stdout
    return out.split(" dev ")[1].split()[0]
