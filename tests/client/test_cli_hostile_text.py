"""Names, messages and events reach the terminal from the network through roamd. Every command
prints them through one cleaner (tui/model/roam-output.c, shared/roam-text.c): ESC (and with it every
CSI and OSC sequence), BEL, C1 controls (CSI U+009B) and broken UTF-8 become '?', bidi
controls and zero-width characters (U+202A-U+202E, U+2066-U+2069, U+200B-U+200F) are dropped.
fake_roamd sends them raw, as an older or compromised roamd could."""
import json
import subprocess

from fakebus import ROAM
from test_plain import CLOCK, Plain  # noqa: F401

ESC_TITLE = "\x1b]0;pwned\x07"  # OSC: sets the terminal's title
RLO = "\u202e"
HOSTILE = ("\x1b", "\x07", "\u009b", "\u202e", "\u2066", "\u2069", "\u200b", "\u200f")

WLAN0 = {
    "Index": 3, "Name": "wl\x1b[31m0", "Bearer": "wifi", "Carrier": True, "AdminUp": True,
    "OperState": "up", "State": "routable", "Addresses": [[4, "192.0.2.10", 24, "global"]],
    "Connectivity": "portal", "ConnectivityReason": "portal-redirect",
    "PortalURL": "http://portal.example/login",
    "Domains": ["corp" + RLO + "moc.example", "a\u200bb.example"],
}
SESSION = {
    "Link": "wl\x1b[31m0", "State": "waiting",
    "Message": "welcome" + ESC_TITLE + " to " + RLO + "efac",
    "LocationName": "Caf\u009b2Je \u2066x\u2069",
    "Identity": "wlan0 gateway 192.0.2.1", "IdentitySource": "interface and gateway address",
    "PortalURL": "http://portal.example/login", "WISPr": False, "Approved": False,
}
PHONE = "5C:F3:70:11:22:33"
SCENARIO = {
    "manager": {"State": "portal", "BestLink": "/org/roam1/link/3"},
    "links": [WLAN0],
    "portal_sessions": [SESSION],
    "peers": [{"Address": "02:00:00:00:01:00", "Name": "TV" + ESC_TITLE + RLO + "VT",
               "DeviceType": "TV", "Reason": "peer-lost\u009b2J"},
              {"Address": "02:00:00:00:02:00", "Name": "Printer\u200b\u009b31m\u200f"}],
    "bluetooth": {
        "Adapters": [["hci0", "00:11:22:33:44:55", "lap" + ESC_TITLE + "top", True, False,
                      True, False]],
        "Devices": [[PHONE, "hci0", "Ph\x1b[2Jone" + RLO, "phone", -60, False, False, False,
                     -1, "", ""]],
        "Question": [7, "confirm", PHONE, "Ph\x1b[2Jone" + RLO, "123456"],
        "LastEvent": "Pairing with \x1b[31mEvil\u2066 failed",
    },
}


def run(bus, *args, stdin=None):
    p = subprocess.run([ROAM, *args], env=bus.env, capture_output=True, timeout=30,
                       input=stdin)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def clean(text):
    return not any(c in text for c in HOSTILE)


def test_every_command_cleans_what_came_from_the_network(roamd, bus):
    roamd(SCENARIO)
    outputs = {}
    for args in (["status"], [], ["status", "--json"], ["portal"], ["p2p", "peers"],
                 ["p2p", "peers", "--json"], ["bt"], ["bt", "--json"], ["network"]):
        rc, out, err = run(bus, *args)
        outputs[" ".join(args)] = out
        assert clean(out) and clean(err), f"roam {args}: {out!r} {err!r}"
    assert "wl?[31m0" in outputs["status"]
    assert "wl?[31m0 (wifi)" in outputs["network"]
    assert "welcome?]0;pwned? to efac" in outputs["portal"]
    assert "Caf?2Je x" in outputs["portal"]
    assert "TV?]0;pwned?VT" in outputs["p2p peers"]
    assert "Printer?31m" in outputs["p2p peers"]
    assert "lap?]0;pwned?top" in outputs["bt"]
    assert "Ph?[2Jone" in outputs["bt"]
    assert "Pairing with ?[31mEvil failed" in outputs["bt"]
    # JSON stays JSON: json-c escapes C0 controls (\u001b); C1 and bidi characters are
    # cleaned like everything else printed.
    for key in ("status --json", "p2p peers --json", "bt --json"):
        json.loads(outputs[key])
    assert "wl\\u001b[31m0" in outputs["status --json"]


def test_usage_errors_echo_input_cleanly(roamd, bus):
    roamd(SCENARIO)
    rc, out, err = run(bus, "frob\x1b]0;x\x07" + RLO)
    assert rc == 2 and clean(out) and clean(err)
    assert "frob\\x1b]0;x\\x07\\u202e" in err
    rc, out, err = run(bus, "p2p", "connect", "no\x1b[2Jbody" + RLO)
    assert rc != 0 and clean(out) and clean(err)


def test_plain_mode_cleans_peers_and_questions(roamd, bus):
    roamd(SCENARIO)
    p = Plain(bus.env)
    try:
        p.expect(CLOCK + r"captive portal on wl\?\[31m0: waiting for your approval "
                 r"\(welcome\?\]0;pwned\? to efac\)\. .*")
        # the passkey itself is only for authorized readers (GetQuestionValue)
        p.expect(CLOCK + r"Bluetooth asks: Ph\?\[2Jone is pairing; its passkey is shown .*")
        p.send("peers")
        p.expect(r"TV\?\]0;pwned\?VT \(TV\): .*")
        p.expect(r"Printer\?31m \(device\): .*")
        p.send("status")
        p.expect(r"wl\?\[31m0 \(wifi\): .*")
    finally:
        p.close()
    assert clean("\n".join(p.lines))
