"""Usage and data budgets in plain mode (roam --plain): "usage" and "usage APP" in sentences,
and a line when a budget changes state, against fake_roamd.py."""
from test_plain import CLOCK, PORTAL, plain  # noqa: F401 (the fixture)
from usage_scenario import DEC1, JAN1, MAIL, USAGE, VIDEO

SCENARIO = dict(USAGE, manager=PORTAL["manager"], links=PORTAL["links"])
MAIL_WARNING = [MAIL, "cellular", 500_000_000, 412_000_000, DEC1, JAN1, 80, "warning"]


def test_plain_usage(roamd, plain):  # noqa: F811
    fake = roamd(SCENARIO)
    p = plain()
    p.expect(r"State: .*")
    p.send("help")
    p.expect(r"  usage \[APP\]    traffic counted per owner, at home and roaming, and the data")
    p.send("usage")
    # our own rows (uid 0), summed per owner over links, home and roaming apart
    p.expect(r"org\.example\.Mail \(user 0\): at home 2\.5 MB received, 400\.0 kB sent; "
             r"roaming 1\.0 MB received, 0 B sent\.")
    p.expect(r"user 0, in no app: at home 12\.0 kB received, 3\.0 kB sent; roaming nothing\.")
    p.expect(r"Total: at home 2\.5 MB received, 403\.0 kB sent; roaming 1\.0 MB received, "
             r"0 B sent\.")
    p.expect(r"Budget: org\.example\.Mail on cellular: 412\.0 MB of 500\.0 MB, warning: nearly "
             r"used up, until 1 Jan\.")
    p.expect(r"Budget: org\.example\.Video on roaming: nothing allowed, within budget, "
             r"until 1 Jan\.")
    assert not any("user 1000" in line for line in p.lines), p.lines

    # Video's budget is used up: one line, Mail's (unchanged state) says nothing
    fake.send(op="budget", budgets=[MAIL_WARNING,
                                    [VIDEO, "roaming", 0, 1500, DEC1, JAN1, 80, "over"]])
    p.expect(CLOCK + r"org\.example\.Video: over budget on roaming: blocked until 1 Jan\.")
    p.send("usage " + VIDEO)
    p.expect(r"No traffic counted for org\.example\.Video\.")
    line = p.expect(r"Budget: .*")
    assert line == ("Budget: org.example.Video on roaming: nothing allowed, over budget: "
                    "blocked, until 1 Jan."), p.lines
    before = len(p.lines)
    p.send("usage " + MAIL)
    p.expect(r"org\.example\.Mail \(user 0\): at home .*")
    line = p.expect(r"Budget: .*")
    assert line.startswith("Budget: org.example.Mail on cellular"), line
    # only Mail's rows (one owner: no total) and only its budget
    assert [x.split(":")[0] for x in p.lines[before:]] == ["org.example.Mail (user 0)",
                                                            "Budget"], p.lines[before:]
    assert sum("Video: over budget" in x for x in p.lines) == 1, p.lines

    # a new period: Mail back within budget, ending at a time that is not midnight
    fake.send(op="budget", budgets=[
        [MAIL, "cellular", 500_000_000, 0, JAN1, JAN1 + 31 * 86400 + 3600, 80, "ok"],
        [VIDEO, "roaming", 0, 1500, DEC1, JAN1, 80, "over"]])
    p.expect(CLOCK + r"org\.example\.Mail: within budget on cellular: 0 B of 500\.0 MB until "
             r"1 Feb 01:00 UTC\.")
    p.send("usage a b")
    p.expect(r"usage takes one app id at most: usage \[APP\]")


def test_plain_usage_without_usage_interface(roamd, plain):  # noqa: F811
    roamd(PORTAL)
    p = plain()
    p.expect(r"State: .*")
    p.send("usage")
    p.expect(r"Cannot read the usage: .*")
