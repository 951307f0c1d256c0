# SPDX-License-Identifier: LGPL-2.1-or-later
"""The wake queue screen (w on the overview, docs/wake.md): the queue's state and period in
words, the time gate when it holds the queue, one row per wake-listed app in turn order with
its priority, state, why and how long; + and - reorder through SetAppPolicy wake=N, n is
WakeNow; answers and refusals in words. 80x24, 40x12, ASCII."""
from scenarios import APPS, app
from tuidriver import NOW

SEC = 1_000_000
DENIED = ("Not allowed to change org.example.Maps: Only root or members of group netdev may "
          "do this (polkit is not running).")


def queue_scenario(**manager):
    apps = [a for a in APPS["apps"] if a["Id"] in ("system", "default", "org.example.Printer")]
    apps += [
        app("org.example.Mail", Wake=90, WakeState="done", WakeReason="done",
            WakeSince=NOW - 180 * SEC),
        app("org.example.Chat", Wake=70, WakeState="awake", WakeReason="turn",
            WakeSince=NOW - 12 * SEC),
        app("org.example.Maps", Wake=40, WakeState="waiting", WakeReason="restart",
            WakeSince=NOW - 95 * SEC),
        app("org.example.Backup", Wake=40, WakeState="waiting", WakeReason="restart",
            WakeSince=NOW - 95 * SEC),
    ]
    m = dict(APPS["manager"], WakeQueue="running", WakePeriod=2, TimeGate=True,
             TimeGateReason="time settled: 2 of 3 sources agree", **manager)
    return dict(APPS, manager=m, apps=apps)


def shows(t, condition, what):
    """The frame shown now if it satisfies condition, else the next one that does."""
    if t.frames and condition(t):
        return t
    return t.wait(condition, 10, what)


def said(t, *texts):
    """The next frame of the wake screen that says every text (maybe wrapped over rows)."""
    return t.wait(lambda t: t.frame.screen == "wake" and
                  all(x in " ".join(t.text().split()) for x in texts), 10,
                  f"the wake screen saying {texts!r}")


def order(t):
    """The app IDs of the rows, top to bottom (the wide table)."""
    ids = []
    for line in t.text_lines():
        words = line[2:].split()
        if len(words) >= 2 and words[0].isdigit() and words[1].startswith("org."):
            ids.append(words[1])
    return ids


def open_wake(t):
    t.wait_for(screen="overview", text="wlan0")
    t.key("w")
    said(t, "Wake queue: running")


def select(t, app_id):
    for _ in range(8):
        if app_id in t.cursor_line() and t.cursor_line().startswith(">"):
            return
        before = t.cursor_line()
        t.key("j")
        # the frame that shows the move, not any frame: one drawn before the key was read
        # would send a second j while the first is still on its way
        t.wait(lambda t: t.cursor_line() != before, what="the selection to move after j")
    raise AssertionError(f"{app_id} never selected:\n{t.text()}")


def test_wake_queue_screen(roamd, tui, golden):
    roamd(queue_scenario())
    t = tui()
    open_wake(t)
    text = t.text()
    assert "Wake queue: running: turns are given, the highest priority first" in text
    assert "Period 2, 4 apps listed" in text
    # turn order: priority, ties by ID; the app without a priority is not listed
    assert order(t) == ["org.example.Mail", "org.example.Chat", "org.example.Backup",
                        "org.example.Maps"]
    assert "org.example.Printer" not in text
    rows = {w: line for line in t.text_lines() for w in line.split() if w.startswith("org.")}
    assert "done" in rows["org.example.Mail"] and "the app said it is done" in \
        rows["org.example.Mail"] and "3m ago" in rows["org.example.Mail"]
    assert "awake" in rows["org.example.Chat"] and "its turn by priority" in \
        rows["org.example.Chat"] and rows["org.example.Chat"].rstrip().endswith("12s")
    assert "waiting" in rows["org.example.Maps"] and rows["org.example.Maps"].rstrip() \
        .endswith("1m")
    assert "+ raise" in t.text_lines()[-1] and "n now" in t.text_lines()[-1]
    golden("wake-queue", t)


def test_wake_queue_time_gate(roamd, tui, golden):
    fake = roamd(queue_scenario())
    t = tui()
    open_wake(t)
    fake.send(op="manager", props={"WakeQueue": "time", "TimeGate": False,
                                   "TimeGateReason": "waiting for the time: no source yet"})
    said(t, "Wake queue: waiting for the time: only apps that do not need it get turns",
         "Time gate closed: waiting for the time: no source yet")
    golden("wake-time-gate", t)


def test_wake_raise_lower(roamd, tui):
    fake = roamd(queue_scenario())
    t = tui()
    open_wake(t)
    select(t, "org.example.Maps")
    t.key("+")
    # one place up: past Backup's 40
    said(t, "Done: org.example.Maps wake priority 41.")
    assert fake.send(op="calls") == [["SetAppPolicy", "org.example.Maps", {"wake": "41"}]]
    shows(t, lambda t: order(t) == ["org.example.Mail", "org.example.Chat", "org.example.Maps",
                                  "org.example.Backup"], "Maps above Backup")
    # the selection follows the app
    assert "org.example.Maps" in t.cursor_line()
    t.key("+")
    said(t, "Done: org.example.Maps wake priority 71.")
    shows(t, lambda t: order(t)[:2] == ["org.example.Mail", "org.example.Maps"],
          "Maps above Chat")
    t.key("-")
    said(t, "Done: org.example.Maps wake priority 69.")
    assert fake.send(op="calls")[-1] == ["SetAppPolicy", "org.example.Maps", {"wake": "69"}]
    shows(t, lambda t: order(t)[1:3] == ["org.example.Chat", "org.example.Maps"],
          "Maps below Chat again")
    # the first cannot go higher: said, nothing sent
    t.key("g")
    t.key("+")
    said(t, "org.example.Mail is first in the queue already.")
    assert len(fake.send(op="calls")) == 3


def test_wake_now_and_denied(roamd, tui):
    fake = roamd(dict(queue_scenario(), _deny_uids=[0]))
    t = tui()
    open_wake(t)
    select(t, "org.example.Maps")
    t.key("n")
    said(t, DENIED)
    t.key("+")
    said(t, DENIED)
    assert [c[0] for c in fake.send(op="calls")] == ["WakeNow", "SetAppPolicy"]
    assert order(t)[-1] == "org.example.Maps"
    fake.send(op="deny", uids=[])
    t.key("n")
    said(t, "Done: org.example.Maps online now (its turn).")
    shows(t, lambda t: "awake    online for a task" in
          [l for l in t.text_lines() if "org.example.Maps" in l][0], "Maps awake")
    assert fake.send(op="calls")[-1] == ["WakeNow", "org.example.Maps", None]
    # a turn roamd gives by itself is said on the status line (App.Wake)
    fake.send(op="wake", id="org.example.Backup", reason="turn", period=2,
              props={"WakeState": "awake", "WakeReason": "turn", "WakeSince": NOW})
    said(t, "Wake: org.example.Backup's turn (its turn by priority).")


def test_wake_queue_small_and_ascii(roamd, tui, golden):
    roamd(queue_scenario())
    t = tui(cols=40, rows=12)
    open_wake(t)
    assert "awake 12s: its turn by priority" in " ".join(t.text().split())
    golden("wake-small", t)

    t = tui(lang="C")
    open_wake(t)
    assert all(ord(c) < 128 for c in t.text())
    golden("wake-ascii", t)

    # no colour: the states are words, the same on a monochrome terminal
    t = tui(args=("--theme", "monochrome"))
    open_wake(t)
    assert "waiting" in t.text() and "awake" in t.text() and "done" in t.text()
    golden("wake-monochrome", t, theme="monochrome")


def test_wake_queue_empty(roamd, tui):
    roamd(APPS)
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("w")
    said(t, "No app is wake-listed. Give one a priority: roam app ID set wake=80.")
    assert "raise" not in t.text_lines()[-1]


def test_wake_follows_set_from_the_cli_and_its_own_plus(roamd, bus, tui, golden):
    """issue 41 §3 (H2): a priority set by another client (`roam app ID set wake=80`) shows on
    the open screen without a key, and `+` shows the new value and order at once."""
    import subprocess
    from fakebus import ROAM
    roamd(queue_scenario())
    t = tui()
    open_wake(t)
    r = subprocess.run([ROAM, "app", "org.example.Printer", "set", "wake=80"], env=bus.env,
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 0, r.stderr
    shows(t, lambda t: order(t) == ["org.example.Mail", "org.example.Printer",
                                  "org.example.Chat", "org.example.Backup",
                                  "org.example.Maps"], "Printer listed at 80")
    assert "Period 2, 5 apps listed" in t.text()
    golden("wake-after-set", t)
    select(t, "org.example.Maps")
    t.key("+")
    said(t, "Done: org.example.Maps wake priority 41.")
    shows(t, lambda t: order(t)[3:] == ["org.example.Maps", "org.example.Backup"] and
          any(line[2:].split()[:2] == ["41", "org.example.Maps"] for line in t.text_lines()),
          "Maps at 41 above Backup")
    golden("wake-after-plus", t)
