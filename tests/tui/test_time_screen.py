# SPDX-License-Identifier: LGPL-2.1-or-later
"""The time screen (t on the overview, docs/time.md): the state, the agreed time and the
gate in words, the sources as bars on one axis with the agreed span, verdicts in words, the
selected source's origin and reason; 80x24, 40x12, ASCII, and a change read on the signal."""
from scenarios import verdict_scenario
from tuidriver import NOW

T = NOW // 1_000_000 * 1_000_000 + 250_000
SETTLED = {
    "State": "settled", "Gate": "open", "Bound": [T, 400_000],
    "Reasons": ["2 of 3 sources agree within ± 400 ms; 1 falseticker",
                "link:wwan0 is a falseticker: 119 min earlier than the time 2 of 3 sources "
                "agree on"],
    "Sources": [
        ["https-date", "link:wlan0", "https://probe.example/ via wlan0 (IPv4)", T + 100_000,
         600_000, "truechimer", ""],
        ["https-date", "link:eth1", "https://probe.example/ via eth1 (IPv6)", T - 300_000,
         700_000, "truechimer", ""],
        ["https-date", "link:wwan0", "https://probe.example/ via wwan0 (IPv4)",
         T - 7_200_000_000, 600_000, "falseticker",
         "119 min earlier than the time 2 of 3 sources agree on"],
        ["saved", "saved", "/var/lib/roam/time.state", T - 2_000_000, 0, "lower-bound",
         "the time is not earlier than this"],
    ],
    "ClockState": "clock-daemon",
    "ClockReason": "a clock daemon keeps the clock (timedated: NTP yes)",
}


def scenario(time=SETTLED):
    return dict(verdict_scenario("online"), time=time)


def open_time(t, *texts):
    t.wait_for(screen="overview", text="online")
    t.key("t")
    t.wait_for(screen="time", text=list(texts or ("Time: settled", "link:wwan0")))


def test_time_screen(roamd, tui, golden):
    fake = roamd(scenario())
    t = tui()
    open_time(t)
    text = t.text()
    assert "Why:   2 of 3 sources agree within ± 400 ms; 1 falseticker" in text
    assert "Gate:  open: the time is verified" in text
    assert "Clock: left alone: a clock daemon keeps it (a clock daemon keeps the clock" in text
    assert "falseticker" in text and "truechimer" in text and "lower-bound" in text
    # the first source selected: its origin in full
    assert "https-date from https://probe.example/ via wlan0 (IPv4)" in text
    golden("time-settled", t)

    # the liar selected: why it is not believed; it points left, off the axis
    t.key("jj")
    t.wait_for(screen="time", text="why: 119 min earlier than the time 2 of 3 sources agree on")
    line = [l for l in t.text().splitlines() if "link:wwan0" in l][0]
    assert "<" in line and "falseticker" in line, line
    golden("time-falseticker", t)

    # the time changes: read again on the signal
    fake.send(op="time", props={"State": "disputed", "Gate": "unverified", "Bound": [0, 0],
                                "Reasons": ["no majority: at most 1 of 2 sources agree"]})
    t.wait_for(screen="time", text=["Time: disputed", "open after the wait: time unverified"])
    # the clock: what roamd did with it, read on the signal too
    fake.send(op="time", props={"ClockState": "no-timedated",
                                "ClockReason": "timedated did not answer"})
    t.wait_for(screen="time",
               text="Clock: left alone: timedated does not answer (timedated did not answer)")
    t.key("\x1b")
    t.wait_for(screen="overview")


def test_time_screen_small_terminal(roamd, tui, golden):
    roamd(scenario())
    t = tui(cols=40, rows=12)
    open_time(t, "Time: settled", "Sources")
    golden("time-small", t)
    # a source selected: the list scrolls to it, with its origin
    t.key("jj")
    t.wait_for(screen="time", text=["link:wwan0: falseticker", "why: 119 min earlier"])
    golden("time-small-falseticker", t)
    # the clock comes after the sources here (it would push them out of view), an item of its
    # own: selected, it scrolls into view in full
    t.key("jj")
    t.wait_for(screen="time", text=["Clock: left alone: a clock daemon", "NTP yes))"])
    golden("time-small-clock", t)


def test_time_screen_ascii_and_empty(roamd, tui, golden):
    roamd(scenario())
    t = tui(lang="C")
    open_time(t)
    assert all(ord(c) < 128 for c in t.text()), [c for c in t.text() if ord(c) >= 128]
    golden("time-ascii", t)


def test_time_screen_nothing_yet(roamd, tui):
    roamd(scenario({"State": "unknown", "Reasons": ["no source has said the time yet"]}))
    t = tui()
    open_time(t, "Time: unknown", "No source has said the time yet.")
    assert "Gate:  closed: apps wait for the time to settle" in t.text()
    assert "Clock:" not in t.text()  # a roamd without ClockState
