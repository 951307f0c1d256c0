# SPDX-License-Identifier: LGPL-2.1-or-later
"""`roam time` (docs/time.md, docs/client.md): the consensus in words, one fact a line, and
as JSON, against fake_roamd.py's org.roam1.Time."""
import json
import re

from test_plain import CLOCK, PORTAL, plain  # noqa: F401 (the fixture)
from fakebus import run_roam
from test_status import NOT_RUNNING

T = 1_765_000_000_250_000  # 2025-12-06 05:46:40.250 UTC
SETTLED = {
    "State": "settled", "Gate": "open", "Bound": [T, 512_000],
    "Reasons": ["2 of 3 sources agree within ± 512 ms; 1 falseticker",
                "link:cell0 is a falseticker: 119 min earlier than the time 2 of 3 sources "
                "agree on"],
    "Sources": [
        ["https-date", "link:wifi0", "https://probe.example/ via wifi0 (IPv4)", T, 750_000,
         "truechimer", ""],
        ["https-date", "link:cell0", "https://probe.example/ via cell0 (IPv4)",
         T - 7_200_000_000, 750_000, "falseticker",
         "119 min earlier than the time 2 of 3 sources agree on"],
        ["saved", "saved", "/var/lib/roam/time.state", T - 60_000_000, 0, "lower-bound",
         "the time is not earlier than this"],
        ["chrony", "ntp", "chronyd, reference 192.0.2.1, stratum 3, 2 NTP sources", T + 12_500,
         450_000, "truechimer", ""],
    ],
    "ClockState": "clock-daemon",
    "ClockReason": "a clock daemon keeps the clock (timedated: NTP yes, synchronized no)",
}


def test_time_text(roamd, roam):
    roamd({"time": SETTLED})
    r = roam("time")
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "Time: settled, 2025-12-06 05:46:40.250 UTC ± 512 ms"
    assert lines[1] == "Why: 2 of 3 sources agree within ± 512 ms; 1 falseticker"
    assert lines[2] == "Gate: open: the time is verified"
    assert lines[3] == ("Clock: left alone: a clock daemon keeps it (a clock daemon keeps the "
                        "clock (timedated: NTP yes, synchronized no))")
    assert lines[4] == "Sources:"
    assert "  link:cell0: falseticker, https-date, 2025-12-06 03:46:40.250 UTC ± 750 ms" in lines
    assert "    why: 119 min earlier than the time 2 of 3 sources agree on" in lines
    assert "    from https://probe.example/ via wifi0 (IPv4)" in lines
    assert "  saved: lower-bound, saved, 2025-12-06 05:45:40.250 UTC ± 0 ms" in lines
    # chronyd's tracking (docs/time.md): the NTP servers' witness
    assert "  ntp: truechimer, chrony, 2025-12-06 05:46:40.262 UTC ± 450 ms" in lines
    assert "    from chronyd, reference 192.0.2.1, stratum 3, 2 NTP sources" in lines


def test_time_unverified_and_empty(roamd, roam):
    roamd({"time": {"State": "settling", "Gate": "unverified",
                    "Reasons": ["1 source so far; 2 must agree"], "ClockState": "unsettled",
                    "ClockReason": "the time is settling: 1 source so far; 2 must agree"}})
    r = roam("time")
    assert r.rc == 0, r.err
    assert r.out == ("Time: settling\n"
                     "Why: 1 source so far; 2 must agree\n"
                     "Gate: open after the wait: time unverified\n"
                     # L21: the clock's reason is Why's: not said twice
                     "Clock: left alone: the time is not settled\n"
                     "Sources: none yet\n")


def test_time_clock_states_in_words(roamd, roam):
    """Every ClockState in words; a state this roam does not know is said as it is; a roamd
    without ClockState has no Clock line."""
    words = {
        "stepped": "stepped to the agreed time",
        "off": "left alone: roamd does not set it (SetClock=no)",
        "unsettled": "left alone: the time is not settled",
        "agrees": "agrees with the agreed time",
        "lower-bound": "left alone: the step would go before the last known good time",
        "clock-daemon": "left alone: a clock daemon keeps it",
        "no-timedated": "left alone: timedated does not answer",
        "timedated-refused": "left alone: timedated refused to set it",
        "future-state": "future-state",
    }
    fake = roamd({"time": {"State": "settled", "ClockState": "off", "ClockReason": ""}})
    for state, said in words.items():
        fake.send(op="time", props={"ClockState": state, "ClockReason": ""})
        r = roam("time")
        assert r.rc == 0, r.err
        assert "Clock: %s\n" % said in r.out, (state, r.out)
    fake.close()
    roamd({"time": {"State": "settled"}})
    r = roam("time")
    assert "Clock:" not in r.out, r.out
    assert json.loads(roam("time", "--json").out)["clock_state"] is None


def test_time_json(roamd, roam):
    roamd({"time": SETTLED})
    r = roam("time", "--json")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert doc["state"] == "settled" and doc["gate"] == "open"
    assert doc["clock_state"] == "clock-daemon"
    assert doc["clock_reason"] == SETTLED["ClockReason"]
    assert doc["bound"] == {"realtime_usec": T, "error_usec": 512_000}
    assert doc["reasons"] == SETTLED["Reasons"]
    assert [s["verdict"] for s in doc["sources"]] == ["truechimer", "falseticker", "lower-bound",
                                                     "truechimer"]
    assert doc["sources"][3]["kind"] == "chrony" and doc["sources"][3]["witness"] == "ntp"
    assert doc["sources"][1] == {
        "name": "link:cell0", "taken_usec": None,
        "kind": "https-date", "witness": "link:cell0",
        "origin": "https://probe.example/ via cell0 (IPv4)",
        "realtime_usec": T - 7_200_000_000, "error_usec": 750_000, "verdict": "falseticker",
        "reason": "119 min earlier than the time 2 of 3 sources agree on"}


def test_time_json_unsettled_has_null_bound(roamd, roam):
    roamd({"time": {"State": "disputed", "Reasons": ["no majority: at most 1 of 2 sources agree"]}})
    doc = json.loads(roam("time", "--json").out)
    assert doc["bound"] is None and doc["state"] == "disputed" and doc["gate"] == "closed"


def test_time_hostile_text_is_cleaned(roamd, roam):
    t = dict(SETTLED, Sources=[["https-date", "link:evil\x1b[2J", "x\u202eevil", T, 1000,
                                "truechimer", ""]])
    roamd({"time": t})
    r = roam("time")
    assert r.rc == 0, r.err
    assert "\x1b" not in r.out and "\u202e" not in r.out
    assert "link:evil?[2J" in r.out


def test_time_not_running(roam):
    r = roam("time")
    assert r.rc == 3 and r.err.strip() == NOT_RUNNING


def test_plain_time(roamd, plain):  # noqa: F811
    fake = roamd(dict(PORTAL, time={"State": "settling", "Gate": "closed",
                                    "Reasons": ["1 source so far; 2 must agree"]}))
    p = plain()
    p.expect(r"State: .*")
    p.send("help")
    p.expect(r"  time           the time as roamd's sources agree on it: state, bound, gate,")
    p.send("time")
    p.expect(r"Time: settling")
    p.expect(r"Why: 1 source so far; 2 must agree")
    p.expect(r"Gate: closed: apps wait for the time to settle")
    p.expect(r"Sources: none yet")
    # the wait ended: one line for the gate, none for the unchanged state
    fake.send(op="time", props={"Gate": "unverified"})
    p.expect(CLOCK + r"Time gate: open after the wait: time unverified\.")
    fake.send(op="time", props=SETTLED)
    p.expect(CLOCK + r"Time: settled, 2025-12-06 05:46:40\.250 UTC ± 512 ms: 2 of 3 sources "
             r"agree within ± 512 ms; 1 falseticker\.")
    p.expect(CLOCK + r"Time gate: open: the time is verified\.")
    p.expect(CLOCK + r"Clock: left alone: a clock daemon keeps it \(a clock daemon keeps the "
             r"clock \(timedated: NTP yes, synchronized no\)\)\.")
    fake.send(op="time", props={"ClockState": "stepped",
                                "ClockReason": "the clock was -60 min off the agreed time"})
    p.expect(CLOCK + r"Clock: stepped to the agreed time \(the clock was -60 min off the agreed "
             r"time\)\.")
    assert sum(line.endswith("time unverified.") for line in p.lines) == 1, p.lines
    # the zone: said when it changes (issue 41 §5)
    fake.send(op="time", props={"Zone": "Europe/Berlin", "ZoneState": "choose",
                                "ZoneReason": "single-witness",
                                "ZoneCandidates": ["Europe/Berlin"]})
    p.expect(CLOCK + r"Time zone: Europe/Berlin \(yours to choose: only one network says so\)\.")
    p.send("time zone Mars/Olympus")
    p.expect(r"Cannot set the time zone to Mars/Olympus: Not a time zone of this system's "
             r"tzdata\.")
    p.send("time zone America/Detroit")
    p.expect(r"Done: the time zone is now America/Detroit \(your choice\)\.")
    p.expect(CLOCK + r"Time zone: America/Detroit \(settled: you chose it\)\.")
    assert fake.send(op="time_calls") == [["SetZone", "Mars/Olympus"],
                                          ["SetZone", "America/Detroit"]]


SEC = 1_000_000


def test_time_ages_samples_names_families_apart_and_shows_the_zone(bus, roamd):
    """issue 41 §5 (M1, M2, L21): each source's interval is aged from when roamd evaluated it
    (SourcesAt) to now, as the agreed time is, with "taken N s ago" (SourcesTaken); the IPv4
    and IPv6 samples of one link are told apart; the zone, its state and why, and the zones
    to choose from."""
    t = dict(SETTLED, Sources=[
        ["https-date", "link:wifi0", "https://probe.example/ via wifi0 (IPv4)", T - 20 * SEC,
         750_000, "truechimer", ""],
        ["https-date", "link:wifi0", "https://probe.example/ via wifi0 (IPv6)", T - 20 * SEC,
         750_000, "truechimer", ""],
    ], SourcesAt=T - 20 * SEC, SourcesTaken=[T - 35 * SEC, T - 21 * SEC],
        Zone="Europe/Berlin", ZoneState="choose", ZoneReason="several-candidates",
        ZoneCandidates=["America/Detroit", "America/New_York"])
    # the client's now (ROAM_TEST_NOW) is T: the sources were evaluated 20 s ago
    roamd({"time": t, "_now": T})
    env = dict(bus.env, ROAM_TEST_NOW=str(T))
    r = run_roam(env, "time")
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert lines[0] == "Time: settled, 2025-12-06 05:46:40.250 UTC ± 512 ms"
    assert "  link:wifi0 IPv4: truechimer, https-date, 2025-12-06 05:46:40.250 UTC ± 750 ms, " \
        "taken 35 s ago" in lines, r.out
    assert "  link:wifi0 IPv6: truechimer, https-date, 2025-12-06 05:46:40.250 UTC ± 750 ms, " \
        "taken 21 s ago" in lines, r.out
    assert "Zone: Europe/Berlin (yours to choose: several zones fit)" in lines
    assert "Zones to choose from (roam time zone ZONE): America/Detroit America/New_York" \
        in lines
    doc = json.loads(run_roam(env, "time", "--json").out)
    assert doc["zone"] == {"zone": "Europe/Berlin", "state": "choose",
                           "reason": "several-candidates",
                           "candidates": ["America/Detroit", "America/New_York"]}
    assert [s["name"] for s in doc["sources"]] == ["link:wifi0 IPv4", "link:wifi0 IPv6"]
    assert [s["taken_usec"] for s in doc["sources"]] == [T - 35 * SEC, T - 21 * SEC]
    assert doc["sources_at_usec"] == T - 20 * SEC
    r = run_roam(env, "time", "zone")
    assert r.out == ("Zone: Europe/Berlin (yours to choose: several zones fit)\n"
                     "Choose one with: roam time zone ZONE\n"
                     "  America/Detroit\n  America/New_York\n"), r.out


def test_time_zone_and_manual_time_are_set(roamd, roam):
    fake = roamd({"time": dict(SETTLED, Zone="Europe/Berlin", ZoneState="choose",
                               ZoneReason="single-witness", ZoneCandidates=["America/Detroit"])})
    r = roam("time", "zone", "America/Detroit")
    assert (r.rc, r.out) == (0, "The time zone is now America/Detroit (your choice).\n"), r.err
    assert "Zone: America/Detroit (settled: you chose it)" in roam("time").out
    r = roam("time", "zone", "Mars/Olympus")
    assert r.rc == 1 and "Not a time zone of this system's tzdata." in r.err, r.err
    r = roam("time", "set", "2026-12-07 14:05", "30s")
    assert r.rc == 0, r.err
    assert r.out == "roamd takes 2026-12-07 14:05:00.000 UTC ± 30.0 s as a source (manual).\n"
    assert roam("time", "set", "@1796651100").rc == 0
    r = roam("time", "set", "1999-01-01 00:00")
    assert r.rc == 1 and "between 2000 and 2100" in r.err, r.err
    calls = fake.send(op="time_calls")
    assert calls == [["SetZone", "America/Detroit"], ["SetZone", "Mars/Olympus"],
                     ["SetManual", 1796652300 * SEC, 30 * SEC],
                     ["SetManual", 1796651100 * SEC, 60 * SEC],
                     ["SetManual", 915148800 * SEC, 60 * SEC]]
    # refused before roamd is asked: rc 2
    for args in (("time", "set"), ("time", "set", "tomorrow"), ("time", "set", "@1", "forever"),
                 ("time", "zone", "a", "b"), ("time", "frob"), ("time", "set", "--json", "@1")):
        r = roam(*args)
        assert r.rc == 2 and "Try 'roam time --help'" in r.err, (args, r.err)
    assert len(fake.send(op="time_calls")) == 5


def test_plain_time_lines_only_when_changed(roamd, plain):  # noqa: F811
    """Time, Gate and Clock lines say changes: a roamd that comes back with the same time
    says none of them again (the walkthrough's L5 saw them repeated); a real change still
    is said, once."""
    scenario = dict(PORTAL, time=dict(SETTLED, Gate="unverified"))
    fake = roamd(scenario)
    p = plain()
    p.expect(r"State: .*")
    p.send("time")
    p.expect(r"Gate: open after the wait: time unverified")
    fake.send(op="time", props={"Gate": "open"})
    p.expect(CLOCK + r"Time gate: open: the time is verified\.")
    fake.close()
    p.expect(CLOCK + r"roamd went away; waiting for it to return\.")
    fake = roamd(dict(PORTAL, time=SETTLED))
    p.expect(CLOCK + r"roamd is back\.")
    p.expect(r"State: .*")
    p.send("time")
    p.expect(r"Gate: open: the time is verified")
    fake.send(op="time", props={"ClockState": "stepped",
                                "ClockReason": "the clock was -60 min off the agreed time"})
    p.expect(CLOCK + r"Clock: stepped to the agreed time .*")
    said = [l for l in p.lines if re.match(CLOCK + r"(Time|Time gate|Clock): ", l)]
    assert len(said) == 2, said
