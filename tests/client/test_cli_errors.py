"""Bad command lines and unknown names (docs/client.md): a mistake on the command line exits
2 with one line on stderr and nothing asked of roamd; a name roamd does not have (a link, an
app) is an error (exit 1), never an empty success."""
import json

import pytest

from firewall_scenario import FIREWALL
from test_apps import CHAT, MAIL
from test_plain_portal import WAITING
from usage_scenario import USAGE

SCENARIO = dict(FIREWALL, apps=[MAIL, CHAT], portal_sessions=[WAITING],
                usage=USAGE["usage"])

# Each a command line that is wrong whatever roamd's state.
BAD = [
    ("nosuch",),
    ("--frob",),
    ("status", "extra"),
    ("apps", "--user", "0"),
    ("run",),
    ("run", "--app", "org.example.Mail"),
    ("network", "frob"),
    ("network", "trust"),
    ("network", "trust", "home", "--json"),
    ("network", "trust", "home", "wlan0", "extra"),
    ("firewall", "frob"),
    ("firewall", "check"),
    ("firewall", "check", "tcp"),
    ("firewall", "check", "sctp", "22"),
    ("firewall", "check", "tcp", "0"),
    ("firewall", "check", "tcp", "70000"),
    ("firewall", "check", "tcp", "22x"),
    ("firewall", "--app", "org.example.Mail"),
    ("portal", "wlan0", "frob"),
    ("portal", "login"),
    ("portal", "login", "--user", "bob"),
    ("portal", "login", "--password-file", "-"),
    ("portal", "login", "--user"),
    ("portal", "approve", "--frob"),
    ("portal", "approve", "--user", "bob"),
    ("portal", "approve", "wlan0", "eth1"),
    ("portal", "decline", "--always"),
    ("portal", "logoff", "--browser", "w3m"),
    ("portal", "forget", "--json"),
    ("--json", "portal", "approve"),
    ("p2p",),
    ("p2p", "frob"),
    ("p2p", "find", "0"),
    ("p2p", "find", "abc"),
    ("p2p", "find", "10", "extra"),
    ("p2p", "peers", "extra"),
    ("p2p", "connect"),
    ("p2p", "connect", "tv", "frob"),
    ("p2p", "connect", "tv", "pin", "1234", "5678"),
    ("p2p", "connect", "tv", "push-button", "extra"),
    ("p2p", "accept", "tv", "1234", "5678"),
    # a PIN in argv: every local user reads it (issue 40 item 9)
    ("p2p", "connect", "tv", "pin", "12345670"),
    ("p2p", "accept", "tv", "12345670"),
    ("p2p", "connect", "tv", "push-button", "--pin-file", "-"),
    ("p2p", "peers", "--pin-file", "-"),
    ("status", "--pin-file", "-"),
    ("bt", "answer", "1", "yes", "0000"),
    ("p2p", "reject"),
    ("p2p", "disconnect", "tv", "extra"),
    ("bt", "frob"),
    ("bt", "power"),
    ("bt", "power", "maybe"),
    ("bt", "power", "on", "hci0", "extra"),
    ("bt", "scan", "0"),
    ("bt", "scan", "abc"),
    ("bt", "answer", "1"),
    ("bt", "answer", "x", "yes"),
    ("bt", "answer", "1", "maybe"),
    ("bt", "pair"),
    ("bt", "pair", "AA:BB:CC:DD:EE:FF", "extra"),
    ("--json", "bt", "power", "on"),
    ("nfc",),
    ("nfc", "frob"),
    ("nfc", "import"),
    ("nfc", "import", "a", "b"),
    ("nfc", "accept", "1", "2"),
    ("nfc", "accept", "x"),
    ("stats", "extra"),
    ("stats", "--user", "bob"),
    ("stats", "--user", "-1"),
    ("stats", "--since", "yesterday"),
    ("stats", "--since", "@99999999999"),
    ("stats", "--online-for", "1h"),
    ("app",),
    ("app", "org.example.Mail", "frob"),
    ("app", "org.example.Mail", "set"),
    ("app", "org.example.Mail", "set", "access"),
    ("app", "org.example.Mail", "online-for", "forever"),
]


def one_line_error(r):
    assert r.out == ""
    assert r.err.startswith("roam: "), r.err
    assert r.err.endswith("\n") and r.err.count("\n") == 1, r.err


@pytest.mark.parametrize("args", BAD, ids=" ".join)
def test_bad_command_line(roamd, roam, args):
    fake = roamd(SCENARIO)
    r = roam(*args)
    assert r.rc == 2, (r.rc, r.err)
    one_line_error(r)
    # nothing was asked of roamd, let alone changed
    assert fake.send(op="calls") == []
    assert fake.send(op="portal_calls") == []
    assert fake.send(op="runs") == []


@pytest.mark.parametrize("args", BAD, ids=" ".join)
def test_bad_command_line_without_roamd(bus, roam, args):
    """The command line is checked before roamd is looked for: 2, not 3 (not running)."""
    r = roam(*args)
    assert r.rc == 2, (r.rc, r.err)
    one_line_error(r)


UNKNOWN = {
    ("portal", "nosuch"): "roam: no link 'nosuch' (roam status lists them)",
    ("portal", "--json", "nosuch"): "roam: no link 'nosuch' (roam status lists them)",
    ("--json", "portal", "nosuch"): "roam: no link 'nosuch' (roam status lists them)",
    ("stats", "--link", "nosuch"): "roam: no link 'nosuch': roamd has none and counted no "
                                   "traffic on one (roam status lists the links)",
    ("stats", "--json", "--link", "nosuch"): "roam: no link 'nosuch': roamd has none and "
                                             "counted no traffic on one (roam status lists the "
                                             "links)",
    ("firewall", "check", "tcp", "22000", "--app", "nosuch.App"):
        "roam: no app 'nosuch.App' (roam apps lists them; no rule in force names it either)",
    ("firewall", "check", "tcp", "22000", "--app", "nosuch.App", "--json"):
        "roam: no app 'nosuch.App' (roam apps lists them; no rule in force names it either)",
    ("run", "--app", "nosuch.App", "--", "echo", "ran"):
        "roam: no app 'nosuch.App' (roam apps lists them; roam app ID set KEY=VALUE... makes "
        "one)",
    ("app", "nosuch.App"): "roam: no app 'nosuch.App' (roam apps lists them)",
    ("stats", "--app", "nosuch.App"): "roam: no app 'nosuch.App': roamd has none and counted "
                                      "no traffic for one (roam apps lists them)",
}


@pytest.mark.parametrize("args", UNKNOWN, ids=" ".join)
def test_unknown_name(roamd, roam, args):
    fake = roamd(SCENARIO)
    r = roam(*args)
    assert (r.rc, r.err) == (1, UNKNOWN[args] + "\n")
    assert r.out == ""
    assert fake.send(op="runs") == []
    assert "nosuch" not in roam("apps").out


def test_known_names_still_answer(roamd, roam):
    roamd(SCENARIO)
    # a link with no portal: said so, not an error
    r = roam("portal", "eth1")
    assert (r.rc, r.out, r.err) == (0, "eth1 is not behind a captive portal.\n", "")
    r = roam("portal", "--json", "eth1")
    assert (r.rc, json.loads(r.out), r.err) == (0, [], "")
    r = roam("portal", "wlan0")
    assert r.rc == 0 and r.out.startswith("wlan0: captive portal, waiting for your approval\n")
    # a link roamd has now but counted nothing on, and one it counted traffic on in the past
    r = roam("stats", "--link", "eth1")
    assert r.rc == 0, r.err
    assert r.out.splitlines()[1].startswith("total")
    r = roam("stats", "--link", "wwan0")
    assert r.rc == 0, r.err
    assert "wwan0" in r.out.splitlines()[1]
    # an app roamd knows, and one only a rule in force names (never started)
    r = roam("firewall", "check", "tcp", "22000", "--app", "org.example.Mail")
    assert r.rc == 0, r.err
    r = roam("firewall", "check", "tcp", "22000", "--app", "org.syncthing")
    assert r.rc == 0, r.err
    assert r.out.startswith("tcp 22000 to app org.syncthing on wlan0 (home): let in\n")
