"""`roam stats` in text: roaming in the carrier's sense (a visited network) is a yes/no
column, never "home", which is the firewall's location (M12 of the new-user report)."""
from usage_scenario import USAGE


def test_roaming_column_says_yes_or_no(roamd, roam):
    roamd(USAGE)
    r = roam("stats", "--user", "all")
    assert r.rc == 0, r.err
    lines = r.out.split("\n\n")[0].splitlines()  # the traffic table, before the budgets
    assert lines[0].split()[:3] == ["OWNER", "LINK", "ROAMING"], lines[0]
    words = {line.split()[2] for line in lines[1:] if len(line.split()) >= 5
             and not line.startswith("total")}
    assert words == {"yes", "no"}, r.out
    assert " home " not in r.out
