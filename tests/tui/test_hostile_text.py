"""The TUI draws names from the network cleaned (roam-tui.c, tui_decode()): ESC, BEL and C1
controls become '?', bidi controls and zero-width characters (U+202E, U+2066, U+200B, ...) are
dropped, so a name can neither send an escape sequence to the terminal nor turn text around."""
from scenarios import verdict_scenario

RLO = "\u202e"
WAITING = {
    "Link": "eth1", "State": "waiting",
    "Message": "welcome\x1b]0;pwned\x07 to " + RLO + "efac\u200b",
    "Identity": "eth1 gateway 198.51.100.1", "IdentitySource": "interface and gateway address",
    "PortalURL": "http://portal.cafe.example/login", "LocationName": "Caf\u009b2Je \u2066x\u2069",
    "WISPr": False, "Approved": False,
}


def test_portal_screen_cleans_names(roamd, tui):
    sc = verdict_scenario("portal")
    sc["portal_sessions"] = [WAITING]
    roamd(sc)
    t = tui()
    t.wait_for(screen="overview", text="press 4 to log in")
    t.key("4")
    t.wait_for(screen="portal", text="welcome")
    text = t.text()
    assert "welcome?]0;pwned? to efac" in text
    raw = b"".join(t.output)
    for bad in ("\x1b]0;pwned", "\u202e", "\u200b", "\u2066", "\u2069", "\u009b"):
        assert bad.encode() not in raw, bad
