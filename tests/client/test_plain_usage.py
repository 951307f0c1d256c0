"""Usage and data budgets in plain mode (roam --plain): "usage", "usage APP" and "usage --all"
in sentences, and a line when a budget changes state, against fake_roamd.py."""
import copy

from test_plain import CLOCK, PORTAL, plain  # noqa: F401 (the fixture)
from usage_scenario import DEC1, JAN1, MAIL, USAGE, VIDEO

SCENARIO = dict(USAGE, manager=PORTAL["manager"], links=PORTAL["links"])
MAIL_WARNING = [MAIL, "cellular", 500_000_000, 412_000_000, DEC1, JAN1, 80, "warning"]


def test_plain_usage(roamd, plain):  # noqa: F811
    fake = roamd(SCENARIO)
    p = plain()
    p.expect(r"State: .*")
    p.send("help")
    p.expect(r"  usage \[APP\]    your traffic counted per owner, not roaming and roaming,")
    p.send("usage")
    # our own rows (uid 0), summed per owner over links, home and roaming apart
    p.expect(r"org\.example\.Mail \(user 0\): not roaming 2\.5 MB received, 400\.0 kB sent; "
             r"roaming 1\.0 MB received, 0 B sent\.")
    p.expect(r"user 0, in no app: not roaming 12\.0 kB received, 3\.0 kB sent; roaming nothing\.")
    p.expect(r"Total: not roaming 2\.5 MB received, 403\.0 kB sent; roaming 1\.0 MB received, "
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
    p.expect(r"org\.example\.Mail \(user 0\): not roaming .*")
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
    p.expect(r"usage takes --all and one app id at most: usage \[--all\] \[APP\]")


def test_plain_usage_without_usage_interface(roamd, plain):  # noqa: F811
    roamd(PORTAL)
    p = plain()
    p.expect(r"State: .*")
    p.send("usage")
    p.expect(r"Cannot read the usage: .*")


def test_plain_usage_all(roamd, plain):  # noqa: F811
    """"usage --all" lists every owner roamd counted, of every user (30 apps of user 1000,
    the system, other), none left out, with the total; "usage" keeps to our own."""
    sc = copy.deepcopy(SCENARIO)
    many = ["org.example.App%02d" % i for i in range(30)]
    sc["usage"]["rows"] += [["user:1000/app:" + a, "wlan0", False, 100 + i, i, 2, 1]
                            for i, a in enumerate(many)]
    sc["usage"]["rows"] += [["system", "eth0", False, 7_000, 8_000, 9, 9],
                            ["other", "eth0", False, 60, 0, 1, 0]]
    fake = roamd(sc)
    p = plain()
    p.expect(r"State: .*")
    p.send("help")
    p.expect(r"  usage --all \[APP\]   the same for everyone: every user's apps and processes,")
    p.expect(r" +system services and the rest \(needs authorization\)")
    before = len(p.lines)
    p.send("usage")
    p.expect(r"Budget: org\.example\.Video on roaming: .*")
    assert not any("App0" in x or "system services" in x for x in p.lines[before:]), p.lines

    before = len(p.lines)
    p.send("usage --all")
    p.expect(r"Everyone's usage: 35 owners\.")
    p.expect(r"Budget: org\.example\.Video on roaming: .*")
    said = p.lines[before:]
    for i, a in enumerate(many):
        want = "%s (user 1000): not roaming %d B received, %d B sent; roaming nothing." % (
            a, 100 + i, i)
        assert want in said, (want, said)
    for want in ("user 1000, in no app: not roaming 5 B received, 5 B sent; roaming nothing.",
                 "user 0, in no app: not roaming 12.0 kB received, 3.0 kB sent; roaming nothing.",
                 "system services: not roaming 7.0 kB received, 8.0 kB sent; roaming nothing.",
                 "other (no app's socket): not roaming 60 B received, 0 B sent; roaming nothing."):
        assert want in said, (want, said)
    assert any(x.startswith("org.example.Mail (user 0): not roaming 2.5 MB") for x in said), said
    # home: 2,522,500 bytes received, 411,440 sent
    assert "Total: not roaming 2.5 MB received, 411.4 kB sent; roaming 1.0 MB received, 0 B sent." \
        in said, said
    assert len([x for x in said if ": not roaming " in x]) == 36, said  # 35 owners and the total

    # one app, of whichever user
    p.send("usage --all org.example.App07")
    p.expect(r"Everyone's usage of org\.example\.App07: 1 owner\.")
    p.expect(r"org\.example\.App07 \(user 1000\): not roaming 107 B received, 7 B sent; "
             r"roaming nothing\.")
    p.expect(r"No data budget for org\.example\.App07\.")

    p.send("usage --all x y")
    p.expect(r"usage takes --all and one app id at most: usage \[--all\] \[APP\]")
    p.send("usage --everything")
    p.expect(r"usage takes --all and one app id at most: usage \[--all\] \[APP\]")

    # not authorized: refused in words; our own usage is still ours to read
    fake.send(op="deny", uids=[0])
    p.send("usage --all")
    p.expect(r"Cannot read the usage: Reading everyone's usage needs authorization\.")
    p.send("usage")
    p.expect(r"Total: .*")
