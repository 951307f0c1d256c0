# SPDX-License-Identifier: LGPL-2.1-or-later
"""The overview says in words when app enforcement is degraded (Manager.Degraded: what failed,
since when, that the last good state stays in force) and when another program's ruleset uses
roamd's mark bits (Manager.MarkConflicts, with the mask to use instead)."""
from scenarios import ETH0_DOWN, MINUTE, WLAN0_ONLINE, manager
from tuidriver import NOW

DEGRADED = "nftables transaction: Input/output error; retrying"
CONFLICTS = ["table ip clash chain out writes meta mark bits 0x01000000",
             "ip rule priority 101 fwmark 0x2000000/0x2000000 matches bits 0x02000000"]


def scenario(**props):
    return {"manager": dict(manager("online", WLAN0_ONLINE), **props),
            "links": [ETH0_DOWN, WLAN0_ONLINE]}


TROUBLED = scenario(Degraded=DEGRADED, DegradedSince=NOW - 5 * MINUTE,
                    MarkConflicts=CONFLICTS, FirewallMaskSuggestion="0x00fe0000")


def flat(t):
    return " ".join(t.text().split())


def test_overview_degraded_and_conflicts(roamd, tui, golden):
    roamd(TROUBLED)
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    text = flat(t)
    # 22:08:20 UTC is NOW minus five minutes (the TUI runs with TZ=UTC)
    assert ("Enforcement degraded since 22:08:20: nftables transaction: Input/output error; "
            "retrying. The last good state stays in force.") in text, text
    assert "Mark conflict: table ip clash chain out writes meta mark bits 0x01000000." in text
    assert ("Mark conflict: ip rule priority 101 fwmark 0x2000000/0x2000000 matches bits "
            "0x02000000.") in text, text
    assert "Nobody else uses FirewallMask=0x00fe0000: set it in roamd.conf." in text, text
    golden("overview-degraded", t)


def test_overview_degraded_small(roamd, tui, golden):
    roamd(TROUBLED)
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="Enforcement")
    golden("small-overview-degraded", t)


def test_overview_degraded_comes_and_goes(roamd, tui):
    fake = roamd(scenario())
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    assert "Enforcement" not in t.text() and "Mark conflict" not in t.text()
    fake.send(op="manager", props={"Degraded": "routes and ip rules: File exists; retrying",
                                   "DegradedSince": NOW - MINUTE})
    t.wait_for(screen="overview", text="Enforcement degraded since 22:12:20: routes and ip")
    fake.send(op="manager", props={"MarkConflicts": CONFLICTS[:1]})
    t.wait_for(screen="overview", text="No free mask as wide as roamd's is left.")
    fake.send(op="manager", props={"Degraded": "", "DegradedSince": 0, "MarkConflicts": []})
    t.wait(lambda t: "Enforcement" not in t.text() and "Mark conflict" not in t.text()
           and "wlan0" in t.text(), what="the warnings gone")
