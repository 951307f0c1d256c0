"""`roam --plain` and captive portals (docs/portal.md): the state in words, and approve,
decline, log in and the login browser by typing."""
from test_plain import CLOCK, PORTAL, Plain, plain  # noqa: F401 (plain is a fixture)

WAITING = {
    "Link": "wlan0", "State": "waiting",
    "Message": "this network offers automatic login (WISPr): approve to log in",
    "Identity": "wlan0 gateway 192.0.2.1", "IdentitySource": "interface and gateway address",
    "PortalURL": "http://portal.example/login", "LoginURL": "https://portal.example/wispr",
    "WISPr": True, "Approved": False, "CanLogoff": False, "HasSavedLogin": False,
    "AlwaysLogIn": False, "ExpiryWarning": False, "Expired": False,
}
LOGGED_IN = dict(WAITING, State="logged-in", Message="logged in: Welcome", Approved=True,
                 CanLogoff=True, ExpiryWarning=True, CanExtendSession=True)
NO_WISPR = dict(WAITING, WISPr=False,
                Message="log in with a web browser: approve to open the portal's page")
NO_WISPR.pop("LoginURL")
BROWSER = dict(NO_WISPR, State="browser", Approved=True, BrowserLogin=True,
               Message="this portal offers no automatic login: log in with a web browser at "
               "http://portal.example/login")


def scenario(sessions):
    return dict(PORTAL, portal_sessions=sessions)


def test_plain_portal_login(roamd, plain):
    fake = roamd(scenario([WAITING]))
    p = plain()
    p.expect(CLOCK + r"captive portal on wlan0: waiting for your approval \(this network offers "
             r"automatic login \(WISPr\): approve to log in\)\. Say: portal login wlan0 USER, "
             r"or portal decline wlan0\.")
    p.send("portal")
    p.expect(r"wlan0: captive portal, waiting for your approval")
    p.expect(r"  Auto login: WISPr, at https://portal\.example/wispr")
    p.expect(r"  Next: log in: roam portal login .*")
    p.send("portal login wlan0 traveller")
    p.expect(r"Password for traveller on wlan0 \(type it and press Enter; it is not shown\):")
    p.send("s3cret word")
    p.expect(r"Logging in on wlan0\.\.\.")
    p.expect(CLOCK + r"Done: log in on wlan0\.")
    assert fake.send(op="portal_calls") == [
        ["Login", "wlan0", "traveller", "s3cret word", True, False]]
    assert not any("s3cret" in x for x in p.lines)
    fake.send(op="portal", sessions=[LOGGED_IN])
    p.expect(CLOCK + r"captive portal on wlan0: logged in \(logged in: Welcome\)\. Say: portal "
             r"logoff wlan0 to log off\.")
    p.expect(CLOCK + r"captive portal on wlan0: the session ends soon \(.*\)\. The network "
             r"lets you extend it: say portal extend wlan0\.")
    p.send("portal decline wlan0")
    p.expect(CLOCK + r"Done: decline on wlan0\.")
    p.send("portal approve eth9")
    p.expect(r"eth9 is not behind a captive portal\.")
    fake.send(op="portal", sessions=[])
    p.expect(CLOCK + r"wlan0 is no longer behind a captive portal\.")
    assert fake.send(op="portal_calls")[1:] == [["Decline", "wlan0"]]


def test_plain_portal_browser(roamd, bus, tmp_path):
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\necho \"FAKE BROWSER at $1\"\nread line\n"
                      "echo \"browser read $line\"\n")
    script.chmod(0o755)
    fake = roamd(scenario([NO_WISPR]))
    p = Plain(dict(bus.env, ROAM_PORTAL_BROWSER=str(script)))
    try:
        p.expect(CLOCK + r"captive portal on wlan0: waiting for your approval \(.*\)\. Say: "
                 r"portal browse wlan0 \(a text browser that reaches wlan0 only\), or portal "
                 r"decline wlan0\.")
        p.send("portal browse wlan0")
        p.expect(r"Approve first: portal approve LINK, then portal browse LINK\.")
        p.send("portal approve wlan0")
        p.expect(CLOCK + r"Done: approve on wlan0\.")
        fake.send(op="portal", sessions=[BROWSER])
        p.expect(CLOCK + r"captive portal on wlan0: log in with a web browser \(.*\)\. Say: "
                 r"portal browse wlan0\.")
        p.send("portal browse wlan0")
        p.expect(r"Opening http://portal\.example/login in .*fake-browser, as app portal-login: "
                 r"it reaches wlan0 only\. Quit it to come back\.")
        p.expect(r"FAKE BROWSER at http://portal\.example/login")
        assert [r["id"] for r in fake.send(op="runs")] == ["portal-login"]
        # the next line is the browser's, not a command of roam's
        p.send("portal decline wlan0")
        p.expect(r"browser read portal decline wlan0")
        p.expect(CLOCK + r"Browser closed; asking roamd to check wlan0 again\.")
        p.expect(CLOCK + r"roamd is probing wlan0 again\.")
        assert fake.send(op="reprobes") == [3]
        assert fake.send(op="portal_calls") == [["Approve", "wlan0", False]]
        p.send("status")
        p.expect(r"wlan0 \(wifi\): .*")
    finally:
        p.close()


def test_plain_portal_extend(roamd, bus, tmp_path):
    """RFC 8908 can-extend-session: portal extend asks roamd (Extend), and once roamd lets
    the login browser reach the link, opens the network's user-portal-url in it."""
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\necho \"FAKE BROWSER at $1\"\n")
    script.chmod(0o755)
    open_ = dict(WAITING, State="open", Message="online: more time on offer",
                 CanExtendSession=True, UserPortalURL="https://portal.example/session")
    fake = roamd(scenario([dict(open_, CanExtendSession=False, Message="online")]))
    p = Plain(dict(bus.env, ROAM_PORTAL_BROWSER=str(script)))
    try:
        p.expect(CLOCK + r"captive portal on wlan0: open: it lets this device through \(online\)\.")
        p.send("portal extend wlan0")
        p.expect(r"The network does not offer to extend the session on wlan0\.")
        fake.send(op="portal", sessions=[open_])
        p.expect(CLOCK + r"captive portal on wlan0: open: it lets this device through \(online: "
                 r"more time on offer\)\.")
        p.send("portal")
        p.expect(r"  Extend: the network offers to extend the session: roam portal extend")
        p.send("portal extend wlan0")
        p.expect(CLOCK + r"Done: extend on wlan0\.")
        assert fake.send(op="portal_calls") == [["Extend", "wlan0"]]
        fake.send(op="portal", sessions=[dict(open_, BrowserLogin=True)])
        p.expect(r"Opening https://portal\.example/session in .*fake-browser, as app "
                 r"portal-login: it reaches wlan0 only\. Quit it to come back\.")
        p.expect(r"FAKE BROWSER at https://portal\.example/session")
        p.expect(CLOCK + r"Browser closed; asking roamd to check wlan0 again\.")
    finally:
        p.close()


def test_plain_portal_open_says_nothing_to_do(roamd, plain):
    """Past the portal: `portal` lists it open, with no way to log in nor a next step."""
    roamd(scenario([dict(NO_WISPR, State="open", Message="online", Approved=False)]))
    p = plain()
    p.expect(CLOCK + r"captive portal on wlan0: open: it lets this device through \(online\)\.$")
    p.send("portal")
    p.expect(r"wlan0: captive portal, open: it lets this device through")
    p.expect(r"  Network: .*")
    p.send("portal")  # the first listing is whole once the second begins
    p.expect(r"wlan0: captive portal, open: .*")
    text = "\n".join(p.lines)
    assert "Auto login" not in text and "log in with a web browser" not in text, text
    assert "Next:" not in text and "Say:" not in text, text
