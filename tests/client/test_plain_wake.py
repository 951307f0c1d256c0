# SPDX-License-Identifier: LGPL-2.1-or-later
"""`roam --plain` and the ordered wake-up (docs/wake.md): one line per turn (App.Wake) and one
per change of the queue's state, with the time gate's reason when it holds the queue."""
import time

from test_plain import CLOCK, plain  # noqa: F401 (the fixture)

NOW = int(time.time()) * 1_000_000

WLAN0 = {"Index": 3, "Name": "wlan0", "Bearer": "wifi", "Connectivity": "online",
         "ConnectivityReason": "ok"}
QUEUE = {
    "manager": {"State": "online", "BestLink": "/org/roam1/link/3", "WakeQueue": "settling",
                "WakePeriod": 1},
    "links": [WLAN0],
    "apps": [
        {"Id": "org.example.Mail", "Wake": 80, "WakeState": "waiting", "WakeReason": "restart"},
        {"Id": "org.example.Chat", "Wake": 20, "WakeState": "waiting", "WakeReason": "restart"},
    ],
}


def test_plain_wake_lines(roamd, plain):
    fake = roamd(QUEUE)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.expect(r"app org\.example\.Mail: .*waiting for its turn.*")
    # the queue's state at start is part of the status, not a change
    fake.send(op="manager", props={"WakeQueue": "time", "TimeGate": False,
                                   "TimeGateReason": "waiting for the time: no source yet"})
    p.expect(CLOCK + r"Wake queue: waiting for the time: only apps that do not need it get "
             r"turns \(period 1\); the time gate holds it: waiting for the time: no source yet\.")
    fake.send(op="manager", props={"WakeQueue": "running", "TimeGate": True,
                                   "TimeGateReason": "time settled"})
    p.expect(CLOCK + r"Wake queue: running: turns are given, the highest priority first "
             r"\(period 1\)\.")
    fake.send(op="wake", id="org.example.Mail", reason="turn", period=1,
              props={"WakeState": "awake", "WakeReason": "turn"})
    p.expect(CLOCK + r"Wake: org\.example\.Mail's turn \(its turn by priority\), period 1\.")
    fake.send(op="wake", id="org.example.Chat", reason="overdue", period=1,
              props={"WakeState": "awake", "WakeReason": "overdue"})
    p.expect(CLOCK + r"Wake: org\.example\.Chat's turn \(overdue: waited its longest delay\), "
             r"period 1\.")
    # a change that leaves the queue's state alone says nothing of it
    fake.send(op="manager", props={"TimeGateReason": "time settled: 3 sources agree"})
    fake.send(op="manager", props={"WakeQueue": "finished"})
    p.expect(CLOCK + r"Wake queue: finished: every listed app had its turn \(period 1\)\.")
    assert sum("Wake queue:" in line for line in p.lines) == 3, p.lines
    assert not any("time gate holds" in line and "Wake queue:" not in line
                   for line in p.lines), p.lines


def test_plain_wake_command_and_wake_now(roamd, plain):
    """`wake` says the queue and its apps in turn order; `app ID wake-now` calls WakeNow and
    says what came of it."""
    fake = roamd(dict(QUEUE, manager=dict(QUEUE["manager"], WakeQueue="running"), _now=NOW))
    fake.send(op="app", id="org.example.Mail", props={"WakeSince": NOW - 95_000_000})
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wake")
    p.expect(r"Wake queue: running: turns are given, the highest priority first \(period 1\)\.")
    p.expect(r"1\. org\.example\.Mail, priority 80: waiting \d+m; a new period began")
    p.expect(r"2\. org\.example\.Chat, priority 20: waiting; a new period began")
    p.send("app org.example.Chat wake-now")
    p.expect(CLOCK + r"Wake: org\.example\.Chat's turn \(online for a task: asked by a user\), "
             r"period 1\.")
    p.expect(CLOCK + r"Done: org\.example\.Chat online now \(its turn\)\.")
    assert fake.send(op="calls")[-1] == ["WakeNow", "org.example.Chat", None]
    fake.send(op="deny", uids=[0])
    p.send("app org.example.Mail wake-now")
    p.expect(CLOCK + r"Not allowed to change org\.example\.Mail: Only root or members of group "
             r"netdev may do this \(polkit is not running\)\.")
