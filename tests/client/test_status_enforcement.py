# SPDX-License-Identifier: LGPL-2.1-or-later
"""Degraded enforcement and mark conflicts in words: `roam status` (text and --json) and plain
mode, against fake_roamd.py (Manager.Degraded, DegradedSince, MarkConflicts,
FirewallMaskSuggestion)."""
import json

from fakebus import run_roam
from test_plain import CLOCK, Plain
from test_status import ETH0, OFFLINE, ROUTABLE

SINCE = 1_700_000_000_000_000  # 22:13:20 UTC
DEGRADED = "nftables transaction: Input/output error; retrying"
CONFLICTS = ["table ip clash chain out writes meta mark bits 0x01000000",
             "ip rule priority 101 fwmark 0x2000000/0x2000000 matches bits 0x02000000"]
TROUBLED = dict(ROUTABLE, manager=dict(ROUTABLE["manager"], Degraded=DEGRADED,
                                       DegradedSince=SINCE, MarkConflicts=CONFLICTS,
                                       FirewallMaskSuggestion="0x00fe0000"))


def roam(bus, *args):
    return run_roam(dict(bus.env, TZ="UTC"), *args)


def test_status_says_degraded_and_conflicts(roamd, bus):
    roamd(TROUBLED)
    r = roam(bus, "status")
    assert r.rc == 0, r.err
    head = r.out.split("\n\n")[0]
    assert head == (
        "State: Online via wifi0 (wifi)\n"
        "Warning: Enforcement degraded since 22:13:20: nftables transaction: Input/output\n"
        "         error; retrying. The last good state stays in force.\n"
        "Warning: Mark conflict: table ip clash chain out writes meta mark bits\n"
        "         0x01000000.\n"
        "Warning: Mark conflict: ip rule priority 101 fwmark 0x2000000/0x2000000 matches\n"
        "         bits 0x02000000.\n"
        "Warning: Nobody else uses FirewallMask=0x00fe0000: set it in roamd.conf."), head
    assert all(len(line) <= 80 for line in r.out.split("\n"))
    doc = json.loads(roam(bus, "status", "--json").out)
    assert doc["degraded"] == DEGRADED
    assert doc["degraded_since_usec"] == SINCE
    assert doc["mark_conflicts"] == CONFLICTS
    assert doc["firewall_mask_suggestion"] == "0x00fe0000"


def test_status_without_trouble_says_nothing_more(roamd, bus):
    roamd(OFFLINE)
    r = roam(bus, "status")
    assert r.out.startswith("State: Offline: no usable link\n\neth0 "), r.out
    assert "Warning" not in r.out
    doc = json.loads(roam(bus, "status", "--json").out)
    assert doc["degraded"] == "" and doc["degraded_since_usec"] is None
    assert doc["mark_conflicts"] == [] and doc["firewall_mask_suggestion"] == ""


def test_conflict_without_a_free_mask(roamd, bus):
    roamd({"manager": {"State": "offline", "MarkConflicts": CONFLICTS[:1]}, "links": [ETH0]})
    r = roam(bus, "status")
    assert r.out.split("\n")[1:4] == [
        "Warning: Mark conflict: table ip clash chain out writes meta mark bits",
        "         0x01000000.",
        "Warning: No free mask as wide as roamd's is left."], r.out


def test_plain_says_degraded_when_it_comes_and_goes(roamd, bus):
    fake = roamd(OFFLINE)
    p = Plain(bus.env)
    try:
        p.expect(r"State: Offline: no usable link")
        fake.send(op="manager", props={"Degraded": DEGRADED, "DegradedSince": SINCE})
        p.expect(CLOCK + r"enforcement:")
        p.expect(r"Warning: Enforcement degraded since 22:13:20: nftables transaction: "
                 r"Input/output error; retrying\. The last good state stays in force\.")
        fake.send(op="manager", props={"MarkConflicts": CONFLICTS[:1],
                                       "FirewallMaskSuggestion": "0x00fe0000"})
        p.expect(CLOCK + r"enforcement:")
        p.expect(r"Warning: Enforcement degraded since 22:13:20: .*")
        p.expect(r"Warning: Mark conflict: table ip clash chain out writes meta mark bits "
                 r"0x01000000\.")
        p.expect(r"Warning: Nobody else uses FirewallMask=0x00fe0000: set it in roamd\.conf\.")
        fake.send(op="manager", props={"Degraded": "", "DegradedSince": 0, "MarkConflicts": [],
                                       "FirewallMaskSuggestion": ""})
        p.expect(CLOCK + r"enforcement: whole again, no mark conflicts\.")
        p.send("status")
        p.expect(r"State: Offline: no usable link")
        p.expect(r"eth0 .*")
        assert not any(line.startswith("Warning") for line in p.lines[-2:]), p.lines
    finally:
        p.close()


def test_plain_status_on_start_has_the_warnings(roamd, bus):
    roamd(TROUBLED)
    p = Plain(bus.env)
    try:
        p.expect(r"State: .*")
        p.expect(r"Warning: Enforcement degraded since 22:13:20: .*")
        p.expect(r"Warning: Mark conflict: ip rule priority 101 .*")
    finally:
        p.close()
