"""The first-join question in plain mode (roam --plain): a numbered question a screen reader
reads, answered by typing; refusals in words; location changes announced."""
import re

from firewall_scenario import CAFE_ID, FIREWALL
from test_plain import CLOCK, plain  # noqa: F401 (the fixture)

QUESTION = (CLOCK + r"Question 1: eth1 joined a network roam has not seen \(" + re.escape(CAFE_ID)
            + r"; Gateway MAC 02:00:00:00:02:01, DHCP server 198\.51\.100\.1\)\. Is this a home, "
            r"work or public network\? It is untrusted \(the strictest rules; SSH still let in: "
            r"SSH=always\) until you answer: type home 1, work 1 or public 1 \(untrusted 1: not "
            r"now, untrusted for this session\)\.")


def test_plain_question_answered(roamd, plain):  # noqa: F811
    fake = roamd(FIREWALL)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.expect(QUESTION)
    p.send("network")
    p.expect(r"eth0 \(ethernet\): no network")
    p.expect(r'wlan0 \(wifi\): home, from networks\.d; ssid "HomeNet" and gateway '
             r"02:00:00:00:01:fe matched /etc/roam/networks\.d/home\.conf:3; network "
             r"wifi:HomeNet:02:00:00:00:01:01 \(SSID HomeNet, .*\)")
    p.expect(r"eth1 \(ethernet\): untrusted until you choose; unknown network: untrusted until "
             r"you choose; network .*")
    p.send("public 1")
    p.expect(CLOCK + r"eth1: location now public, set by you\.")
    p.expect(CLOCK + r"eth1: this network is now public; its rules are in force\.")
    assert fake.send(op="location_calls") == [["eth1", "public"]]
    p.send("home")
    p.expect(r"No question is open\.")
    # Another new network on eth1: question 2; the word alone answers it.
    fake.send(op="set", link=4, props={"NetworkId": "ether:gw=02:00:00:00:03:01",
                                       "LocationSource": "default", "Location": "untrusted"})
    p.expect(CLOCK + r"Question 2: eth1 joined a network roam has not seen .*")
    p.send("untrusted")
    p.expect(r"eth1 stays untrusted for this session; say trust LOCATION eth1 to choose "
             r"later\.")
    assert fake.send(op="location_calls") == [["eth1", "public"]]
    # trust sets any link's location at any time.
    p.send("trust work wlan0")
    p.expect(CLOCK + r"wlan0: this network is now work; its rules are in force\.")
    p.send("trust work")
    p.expect(r"Say: trust LOCATION LINK .*")
    p.send("help")
    p.expect(r"  home N, work N, public N, untrusted N .*")


def test_plain_question_refused(roamd, plain):  # noqa: F811
    fake = roamd(dict(FIREWALL, _deny_uids=[0]))
    p = plain()
    p.expect(QUESTION)
    p.send("home 1")
    p.expect(CLOCK + r"Not allowed to make this network home on eth1: Only root or members of "
             r"group netdev may do this \(polkit is not running\); it stays untrusted for now\.")
    p.send("work 7")
    p.expect(r"No question is open\.")
    assert fake.send(op="location_calls") == [["eth1", "home"]]


def test_plain_two_answers_both_heard(roamd, plain):  # noqa: F811
    """A second change sent before the first is answered cancels nothing: both are said."""
    fake = roamd(FIREWALL)
    p = plain()
    p.expect(QUESTION)
    p.send("public 1")
    p.send("trust work wlan0")
    p.expect(CLOCK + r"eth1: this network is now public; its rules are in force\.")
    p.expect(CLOCK + r"wlan0: this network is now work; its rules are in force\.")
    assert fake.send(op="location_calls") == [["eth1", "public"], ["wlan0", "work"]]


def test_plain_firewall_rules(roamd, plain):  # noqa: F811
    roamd(FIREWALL)
    p = plain()
    p.expect(QUESTION)
    p.send("firewall eth1")
    p.expect(r"eth1 \(untrusted\): in accept established,related; 301 packets, 402\.1 kB; "
             r"built-in:established")
    p.expect(r"eth1 \(untrusted\): in accept tcp 22; 0 packets, 0 B; built-in:ssh")
    p.expect(r"eth1 \(untrusted\): in drop any; 9 packets, 540 B; built-in:default")
    p.send("firewall")
    p.expect(r"wlan0 \(home\): in accept tcp 22000 app org\.syncthing; 87 packets, 52\.3 kB; "
             r"/etc/roam/firewall\.d/home\.conf:4")
    p.send("firewall eth9")
    p.expect(r"No firewall rules in force on eth9\.")


def test_plain_location_not_in_force(roamd, plain):  # noqa: F811
    """A location roamd wants but the kernel has not taken is announced as such, then the
    location once it is in force."""
    fake = roamd(FIREWALL)
    p = plain()
    p.expect(QUESTION)
    fake.send(op="set", link=3, props={"LocationWanted": "public"})
    p.expect(CLOCK + r"wlan0: location now home, from networks\.d; public wanted, not in force "
             r"yet \(see Degraded\)\.")
    fake.send(op="set", link=3, props={"Location": "public", "LocationSource": "user"})
    p.expect(CLOCK + r"wlan0: location now public, set by you\.")


def test_plain_no_location_reads_as_a_sentence(roamd, plain):  # noqa: F811
    """A link whose location goes (its rules withdrawn) is said in a sentence, not
    "location now no location in force" (L5 of the new-user report)."""
    fake = roamd(FIREWALL)
    p = plain()
    p.expect(QUESTION)
    fake.send(op="set", link=3, props={"Location": "", "LocationSource": ""})
    p.expect(CLOCK + r"wlan0: no location in force now\.")


def test_plain_withdrawn_question_is_said(roamd, plain):  # noqa: F811
    """A question whose link left that network is withdrawn out loud (L5 of the new-user
    report: it stayed up, and 'home 1' later answered 'No open question 1')."""
    fake = roamd(FIREWALL)
    p = plain()
    p.expect(QUESTION)
    fake.send(op="set", link=4, props={"NetworkId": "", "Location": "", "LocationSource": ""})
    p.expect(CLOCK + r"Question 1 withdrawn: eth1 left that network\.")


def test_plain_question_placed_elsewhere_is_withdrawn(roamd, plain):  # noqa: F811
    """A question answered elsewhere (the TUI, `roam network trust`) is withdrawn out loud
    too, with the network's new location; its number answers nothing any more."""
    fake = roamd(FIREWALL)
    p = plain()
    p.expect(QUESTION)
    fake.send(op="set", link=4, props={"Location": "work", "LocationSource": "user"})
    p.expect(CLOCK + r"Question 1 withdrawn: eth1's network is now work\.")
    p.send("home 1")
    p.expect(r"No question is open\.")
    assert fake.send(op="location_calls") == []


def test_plain_question_says_ssh_as_roamd_publishes_it(roamd, plain):  # noqa: F811
    """With SSH=trusted the untrusted location lets nothing in, and the question does not
    claim SSH; with SSH=always it says TCP 22 still comes in (the walkthrough's L24)."""
    scenario = dict(FIREWALL, manager=dict(FIREWALL["manager"], SSH="trusted",
                                           SSHLetIn=["home", "work"]))
    roamd(scenario)
    p = plain()
    p.expect(CLOCK + r"Question 1: eth1 joined a network roam has not seen .*\? It is untrusted "
             r"\(the strictest rules\) until you answer: .*")
