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


def test_time_screen_ages_sources_and_shows_the_zone(roamd, tui, golden):
    """issue 41 §5 (M1, M2, L21): sources evaluated 30 s ago (SourcesAt) are aged to now, so
    the agreeing ones sit on the agreed span instead of 30 s left of it; the IPv4 and IPv6
    samples of one link are named apart; the selected one says when it was taken; the zone
    and the zones to choose from."""
    aged = dict(SETTLED, Sources=[
        ["https-date", "link:wlan0", "https://probe.example/ via wlan0 (IPv4)",
         T - 30_000_000, 600_000, "truechimer", ""],
        ["https-date", "link:wlan0", "https://probe.example/ via wlan0 (IPv6)",
         T - 30_000_000, 600_000, "truechimer", ""],
    ], SourcesAt=NOW - 30_000_000, SourcesTaken=[NOW - 42_000_000, NOW - 31_000_000],
        Reasons=["2 of 2 sources agree within ± 400 ms"],
        Zone="Europe/Berlin", ZoneState="choose", ZoneReason="several-candidates",
        ZoneCandidates=["Europe/Berlin", "Europe/Zurich"])
    roamd(scenario(aged))
    t = tui()
    open_time(t, "Time: settled", "link:wlan0 IPv6")
    lines = t.text_lines()
    agreed = next(l for l in lines if l.lstrip().startswith("agreed"))
    for fam in ("IPv4", "IPv6"):
        row = next(l for l in lines if "link:wlan0 " + fam in l)
        # the bar's middle is the agreed span's: aged to the same now
        bar, span = row, agreed  # the bars start at the same column
        assert abs((bar.index("█") + bar.rindex("█")) - (span.index("█") + span.rindex("█"))) \
            <= 2, (row, agreed)
    assert "-1.0 s .. +1.0 s" in t.text()  # no axis stretched 30 s wide
    assert "https-date from https://probe.example/ via wlan0 (IPv4), taken 42 s ago" in t.text()
    assert "Zone:  Europe/Berlin (yours to choose: several zones fit)" in t.text()
    assert "Pick:  Europe/Berlin, Europe/Zurich (roam time zone ZONE)" in t.text()
    golden("time-aged-zone", t)


def test_time_line_ticks_while_shown(roamd, tui):
    """issue 41 §5: the agreed time moves on by itself while the screen is shown (a timer in
    the TUI; roamd is not asked again: the fake counts no call)."""
    import time as _time
    now = int(_time.time() * 1_000_000)
    fake = roamd(scenario(dict(SETTLED, Bound=[now, 400_000], Sources=[], SourcesAt=now)))
    t = tui(extra_env={"ROAM_TEST_NOW": ""})  # the real clock
    open_time(t, "Time: settled", "No source has said the time yet.")

    def headline(t):
        return next(l for l in t.text_lines() if "Time: settled" in l)
    first = headline(t)
    t.wait(lambda t: headline(t) != first, 10, "the Time line to tick")
    assert fake.send(op="calls") == []
