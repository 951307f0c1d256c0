"""`roam wait-online` and `roam when-online` against fake_roamd.py: nm-online's exit codes
(0 online, 1 not in time, 2 error), woken by signals (a change ends the wait at once, not
after a poll), the time gate, an app's turn, Done after the command."""
import subprocess
import time

from fakebus import ROAM

WIFI0 = {"Index": 3, "Name": "wifi0", "Bearer": "wifi", "Connectivity": "online",
         "ConnectivityReason": "ok", "State": "routable"}
MAIL = {"Id": "org.example.Mail", "Wake": 80, "WakeState": "waiting", "WakeReason": "turn"}
PLAIN = {"Id": "org.example.Plain"}


def scenario(state="online", **manager):
    return {"manager": dict({"State": state, "BestLink": "/org/roam1/link/3"}, **manager),
            "links": [WIFI0], "apps": [MAIL, PLAIN]}


def start(bus, *args):
    return subprocess.Popen([ROAM, *args], env=bus.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_online_now(roamd, roam):
    roamd(scenario())
    r = roam("wait-online")
    assert (r.rc, r.out, r.err) == (0, "", "")
    # an app that is not wake-listed: online is its turn
    assert roam("wait-online", "--app", "org.example.Plain").rc == 0


def test_not_in_time_and_errors(bus, roamd, roam):
    roamd(scenario("portal"))
    # 300 ms, not 300 s (nor no limit): it gives up within the 10 s wait
    r = subprocess.run([ROAM, "wait-online", "--timeout", "300ms"], env=bus.env,
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "not online in time: the state is portal" in r.stderr.lower(), r.stderr
    r = roam("wait-online", "--app", "org.example.Nope", "--timeout", "2")
    assert r.rc == 2 and "org.example.Nope" in r.err, r.err
    for args in (("--timeout", "soon"), ("--timeout", "-1"), ("--online-for", "1m"),
                 ("extra",)):
        assert roam("wait-online", *args).rc == 2, args
    assert roam("status", "--timeout", "3").rc == 2
    assert roam("when-online", "--", "true").rc == 2  # needs --app
    assert roam("when-online", "--app", "org.example.Mail").rc == 2  # needs CMD


def test_not_running(bus, roam):
    r = roam("wait-online", "--timeout", "200ms")
    assert r.rc == 1 and "roamd is not running" in r.err, r.err


def test_woken_by_signals(bus, roamd):
    fake = roamd(scenario("offline", TimeGate=False, TimeGateReason="time not settled"))
    p = start(bus, "wait-online", "--app", "org.example.Mail", "--require-time", "--timeout",
              "20")
    time.sleep(0.3)  # it waits (nothing to wait for to prove it is still waiting)
    assert p.poll() is None
    fake.send(op="manager", props={"State": "online"})
    fake.send(op="manager", props={"TimeGate": True, "TimeGateReason": "time settled"})
    assert p.poll() is None  # Mail still waits for its turn
    fake.send(op="app", id="org.example.Mail", props={"WakeState": "awake"})
    out, err = p.communicate(timeout=10)  # woken by the signal, long before its own 20 s
    assert p.returncode == 0, err


def test_woken_when_roamd_appears(bus, roamd):
    """roamd not running yet: its name appearing (NameOwnerChanged of org.roam1, the only
    signal it follows then) wakes the wait, long before its own timeout."""
    p = start(bus, "wait-online", "--timeout", "30")
    time.sleep(0.3)  # it waits (nothing to wait for to prove it is still waiting)
    assert p.poll() is None
    roamd(scenario("online"))
    out, err = p.communicate(timeout=10)
    assert p.returncode == 0, err


def test_time_gate_not_in_time(roamd, roam):
    roamd(scenario(TimeGate=False, TimeGateReason="time not settled"))
    r = roam("wait-online", "--require-time", "--timeout", "300ms")
    assert r.rc == 1 and "time not verified (time not settled)" in r.err, r.err
    assert roam("wait-online", "--timeout", "300ms").rc == 0  # without it: online


def test_require_time_waits_for_verified_time(bus, roamd, roam):
    """issue 41 §5 (M4): the gate opened after GateTimeout= lets apps out, yet `roam time`
    says "time unverified": --require-time waits for the time to settle (Time.Gate open)."""
    sc = scenario(TimeGate=True, TimeGateReason="time unverified: the wait of 5000 ms ended")
    sc["time"] = {"State": "settling", "Gate": "unverified"}
    fake = roamd(sc)
    r = roam("wait-online", "--require-time", "--timeout", "300ms")
    assert r.rc == 1, r.err
    assert "time not verified (time unverified: the wait of 5000 ms ended)" in r.err, r.err
    assert roam("wait-online", "--timeout", "300ms").rc == 0  # without it: online
    p = start(bus, "wait-online", "--require-time", "--timeout", "20")
    time.sleep(0.3)  # it waits (nothing to wait for to prove it is still waiting)
    assert p.poll() is None
    fake.send(op="time", props={"State": "settled", "Gate": "open"})
    out, err = p.communicate(timeout=10)  # woken by the Time object's signal
    assert p.returncode == 0, err


def test_when_online_runs_then_done(bus, roamd, tmp_path):
    fake = roamd(scenario())
    mark = tmp_path / "ran"
    p = start(bus, "when-online", "--app", "org.example.Mail", "--timeout", "20", "--",
              "sh", "-c", "echo ran > %s; exit 7" % mark)
    time.sleep(0.3)
    assert p.poll() is None and not mark.exists()  # not before its turn
    fake.send(op="app", id="org.example.Mail", props={"WakeState": "awake"})
    out, err = p.communicate(timeout=10)
    assert p.returncode == 7, err  # CMD's own status
    assert mark.read_text() == "ran\n"
    calls = [c for c in fake.send(op="calls") if c[0] in ("Register", "Done")]
    assert calls == [["Register", "org.example.Mail", []], ["Done", "org.example.Mail", None]], err
    # CMD that cannot be started: 127, no Done needed beyond what roamd refuses
    r = subprocess.run([ROAM, "when-online", "--app", "org.example.Plain", "--",
                        "/nonexistent/cmd"], env=bus.env, capture_output=True, text=True,
                       timeout=20)
    assert r.returncode == 127, r.stderr


def test_plain_says_each_turn_and_apps_show_it(bus, roamd, roam):
    """One line per turn in plain mode; `roam apps` says where an app is in words."""
    import test_plain
    fake = roamd(scenario())
    r = roam("app", "org.example.Mail")
    assert "wake: waiting for its turn" in r.out, r.out
    p = test_plain.Plain(bus.env)
    try:
        p.expect(r"app org\.example\.Mail: online; wake: waiting for its turn; .*")
        fake.send(op="app", id="org.example.Mail", props={"WakeState": "awake"})
        p.expect(test_plain.CLOCK + r"app org\.example\.Mail: online; wake: waiting for its "
                 r"turn -> online; wake: its turn")
        fake.send(op="app", id="org.example.Mail", props={"WakeState": "done"})
        p.expect(test_plain.CLOCK + r"app org\.example\.Mail: online; wake: its turn -> "
                 r"online; wake: its turn is over")
    finally:
        p.close()
    # an app that is not wake-listed says nothing of it
    assert "wake" not in roam("app", "org.example.Plain").out
