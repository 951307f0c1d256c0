# SPDX-License-Identifier: LGPL-2.1-or-later
"""The portal screen (key 4): a session in words, approval, the masked login form."""
from scenarios import verdict_scenario
from tuidriver import NOW

S = 1_000_000

WAITING = {
    "Link": "eth1", "State": "waiting",
    "Message": "this network offers automatic login (WISPr): approve to log in",
    "Identity": "eth1 gateway-mac 02:00:00:00:01:01",
    "IdentitySource": "interface and gateway MAC address",
    "PortalURL": "http://portal.cafe.example/login?next=%2F",
    "LoginURL": "https://portal.cafe.example/wispr/login", "LocationName": "Cafe Roam",
    "WISPr": True, "Approved": False, "CanLogoff": False, "HasSavedLogin": False,
    "AlwaysLogIn": False, "ExpiryWarning": False, "Expired": False,
}
LOGGED_IN = dict(WAITING, State="logged-in", Message="logged in: Welcome", Approved=True,
                 CanLogoff=True, HasSavedLogin=True, ExpiresAt=NOW + 3599 * S,
                 BytesRemaining=10_000_000, CanExtendSession=True)


def scenario(sessions):
    sc = verdict_scenario("portal")
    sc["portal_sessions"] = sessions
    return sc


def test_portal_screen_login(roamd, tui, golden):
    fake = roamd(scenario([WAITING]))
    t = tui()
    t.wait_for(screen="overview", text="press 4 to log in")
    t.key("4")
    t.wait_for(screen="portal", text="waiting for your approval")
    golden("portal-waiting", t)

    t.key("l")
    t.wait_for(screen="portal", text="Log in on eth1")
    t.key("traveller\t")
    t.key("s3cret")
    t.wait_for(screen="portal", text="******")
    assert "s3cret" not in t.text()
    golden("portal-login-form", t)
    t.key("\r")
    t.wait_for(screen="portal", text="Sent: roamd logs in on eth1")
    assert fake.send(op="portal_calls") == [["Login", "eth1", "traveller", "s3cret", True, False]]

    fake.send(op="portal", sessions=[LOGGED_IN])
    t.wait_for(screen="portal", text="logged in")
    assert "59 min" in t.text() and "10000000 bytes" in t.text()
    golden("portal-logged-in", t)
    # The TUI names its keys, never a CLI command (issue 32 item 13).
    flat = " ".join(t.text().split())
    assert "roam portal" not in flat, flat
    assert "extend the session: press e" in flat, flat


def test_portal_screen_keys(roamd, tui):
    fake = roamd(scenario([WAITING]))
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text="waiting for your")
    t.key("A")
    t.wait_for(screen="portal", text="Approved for good")
    t.key("d")
    t.wait_for(screen="portal", text="Declined: roam")
    # the login form cancelled: nothing sent
    t.key("l")
    t.wait_for(screen="portal", text="Log in on eth1")
    t.key("x")
    t.key("\x1b")
    t.wait_for(screen="portal", text="nothing was sent")
    assert fake.send(op="portal_calls") == [["Approve", "eth1", True], ["Decline", "eth1"]]


NO_WISPR = dict(WAITING, Message="log in with a web browser: approve to open the portal's page",
                WISPr=False, LoginURL="", LocationName="")
NO_WISPR.pop("LoginURL")
NO_WISPR.pop("LocationName")
BROWSER = dict(NO_WISPR, State="browser", Approved=True, BrowserLogin=True,
               Message="this portal offers no automatic login: log in with a web browser at "
               "http://portal.cafe.example/login?next=%2F")
OPEN = dict(NO_WISPR, State="open", Message="online", Approved=False, BrowserLogin=False)


def test_portal_login_browser_suspends_and_resumes(roamd, tui, tmp_path):
    """b on a portal without WISPr: approve, then the browser (a fake one, named by
    $ROAM_PORTAL_BROWSER) gets the terminal; roam draws nothing and reads no key until it
    quits, then redraws whole, asks for a probe round, and says when the link is online."""
    got = tmp_path / "browser-read"
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\nprintf 'FAKE BROWSER at %s\\n' \"$1\"\n"
                      "read line\nprintf '%s' \"$line\" > " + str(got) + "\n")
    script.chmod(0o755)
    fake = roamd(scenario([NO_WISPR]))
    t = tui(extra_env={"ROAM_PORTAL_BROWSER": str(script)})
    t.wait_for(screen="overview", text="press 4 to log in")
    t.key("4")
    t.wait_for(screen="portal", text=["waiting for your approval", "b browser"])
    t.key("b")
    t.wait_for(screen="portal", text="Approved: the login browser starts for eth1")
    assert fake.send(op="portal_calls") == [["Approve", "eth1", False]]
    # roamd says "browser": the browser starts in the portal-login app
    fake.send(op="portal", sessions=[BROWSER])
    t.wait_output(b"FAKE BROWSER at http://portal.cafe.example/login?next=%2F")
    frames = t.frames
    assert [r["id"] for r in fake.send(op="runs")] == ["portal-login"]
    # keys are the browser's: "a" would approve again in roam
    t.key("a q\r")
    # back: the whole screen drawn again (nothing of the browser left), a probe round asked
    t.wait_for(screen="portal", text=["log in with a web browser", "eth1 again"])
    assert t.frames > frames
    assert got.read_text() == "a q"
    assert "FAKE BROWSER" not in t.text()
    assert fake.send(op="portal_calls") == [["Approve", "eth1", False]]
    assert fake.send(op="reprobes") == [4]  # eth1
    # the probe round finds the link online
    fake.send(op="portal", sessions=[OPEN])
    t.wait_for(screen="portal", text="eth1 is online: the portal let you in")
    assert "open: it lets this device through" in t.text()
    # the session past the portal is something to show: the tab does not say "none" beside
    # it (M11 of the new-user report), and its time left says "left" once
    assert ":none" not in t.text_lines()[0], t.text_lines()[0]
    assert "left left" not in " ".join(t.text().split())
    assert "Time left" not in t.text()


def test_keys_typed_after_the_browser_key_are_not_roams(roamd, tui, tmp_path):
    """b and q in one read: b starts the browser (roam suspends), the q after it is not
    roam's (it used to quit the hidden TUI); neither are the keys typed into the browser."""
    got = tmp_path / "browser-read"
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\nprintf 'FAKE BROWSER at %s\\n' \"$1\"\n"
                      "read line\nprintf '%s' \"$line\" > " + str(got) + "\n")
    script.chmod(0o755)
    fake = roamd(scenario([BROWSER]))
    t = tui(extra_env={"ROAM_PORTAL_BROWSER": str(script)})
    t.wait_for(screen="overview", text="press 4 to log in")
    t.key("4")
    t.wait_for(screen="portal", text="b browser")
    t.key("bq")
    t.wait_output(b"FAKE BROWSER at http://portal.cafe.example/login?next=%2F")
    t.key("q a\r")
    t.wait_for(screen="portal", text="eth1 again")
    assert t.proc.poll() is None, "roam quit"
    assert got.read_text().endswith("q a"), got.read_text()
    assert fake.send(op="portal_calls") == []
    t.key("1")  # roam reads its own keys again
    t.wait_for(screen="overview", text="eth1")


def test_portal_extend_opens_the_user_portal(roamd, tui, tmp_path):
    """e (RFC 8908 can-extend-session): Extend, then the login browser at the user portal."""
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\nprintf 'FAKE BROWSER at %s\\n' \"$1\"\nread line\n")
    script.chmod(0o755)
    extendable = dict(LOGGED_IN, UserPortalURL="https://portal.cafe.example/session")
    fake = roamd(scenario([extendable]))
    t = tui(extra_env={"ROAM_PORTAL_BROWSER": str(script)})
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text=["the network offers to extend the session", "e extend"])
    t.key("e")
    t.wait_for(screen="portal", text="Extending on eth1")
    assert fake.send(op="portal_calls") == [["Extend", "eth1"]]
    fake.send(op="portal", sessions=[dict(extendable, BrowserLogin=True)])
    t.wait_output(b"FAKE BROWSER at https://portal.cafe.example/session")
    t.key("\r")
    t.wait_for(screen="portal", text=["logged in", "eth1 again"])


def test_portal_approve_starts_the_login_browser(roamd, tui, tmp_path):
    """a on a portal without WISPr is asking for the browser: it starts once roamd says so."""
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\nprintf 'FAKE BROWSER at %s\\n' \"$1\"\nread line\n")
    script.chmod(0o755)
    fake = roamd(scenario([NO_WISPR]))
    t = tui(extra_env={"ROAM_PORTAL_BROWSER": str(script)})
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text="waiting for your approval")
    t.key("a")
    t.wait_for(screen="portal", text="Approved: the login browser starts")
    fake.send(op="portal", sessions=[BROWSER])
    t.wait_output(b"FAKE BROWSER at http://portal.cafe.example/login?next=%2F")
    t.key("\r")
    t.wait_for(screen="portal", text="eth1 again")
    assert fake.send(op="portal_calls") == [["Approve", "eth1", False]]


def test_portal_browser_that_fails_says_why(roamd, tui, tmp_path, golden):
    """A browser that exits at once with an error (the portal's name does not resolve where
    it runs): roam comes back and says so on the screen, with the exit status and the last
    lines it wrote to stderr (control characters made visible), instead of redrawing as if it
    had been closed; no probe round hides it."""
    script = tmp_path / "fake-browser"
    script.write_text("#!/bin/sh\nprintf 'FAKE BROWSER at %s\\n' \"$1\"\n"
                      "printf 'loading %s\\n\\n' \"$1\" >&2\n"
                      "printf 'fake-browser: cannot resolve portal.cafe.example\\033[2J\\n' >&2\n"
                      "exit 1\n")
    script.chmod(0o755)
    fake = roamd(scenario([BROWSER]))
    t = tui(extra_env={"ROAM_PORTAL_BROWSER": str(script)})
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text="b browser")
    t.key("b")
    t.wait_for(screen="portal", text="The login browser")
    text = " ".join(t.text().split())  # the message wraps
    assert "failed (exit status 1)" in text, text
    assert "cannot resolve portal.cafe.example?[2J" in text, text
    assert "loading http://portal.cafe.example/login?next=%2F /" in text, text
    assert fake.send(op="reprobes") == []
    golden("portal-browser-failed", t)


def test_portal_past_the_portal_offers_nothing_to_do(roamd, tui):
    """Open (the portal let the link through) or logged in: no approve, browser, decline or
    login offered, the keys say why and send nothing; "log in with a web browser" is gone.
    A portal without automatic login opens no login form."""
    fake = roamd(scenario([NO_WISPR]))
    t = tui()
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text=["waiting for your approval", "b browser", "d decline"])
    assert "l log in" not in t.text()
    t.key("l")
    t.wait_for(screen="portal", text="eth1 offers no automatic login: press b")
    assert "Log in on eth1" not in t.text()
    fake.send(op="portal", sessions=[OPEN])
    t.wait_for(screen="portal", text="open: it lets this device through")
    text = t.text()
    for offered in ("a approve", "b browser", "d decline", "l log in",
                    "log in with a web browser"):
        assert offered not in text, (offered, text)
    for k in "aAbdl":
        t.key(k)
        t.wait_for(screen="portal", text="Nothing to do on eth1: open")
    fake.send(op="portal", sessions=[LOGGED_IN])
    t.wait_for(screen="portal", text="logged in")
    assert "a approve" not in t.text() and "d decline" not in t.text()
    t.key("a")
    t.wait_for(screen="portal", text="Nothing to do on eth1: logged in")
    assert fake.send(op="portal_calls") == []


def test_portal_forget_asks_first(roamd, tui, golden):
    """f (forget the saved login) asks y/N: n and Esc leave the login saved (no call reaches
    fake_roamd); y forgets it."""
    fake = roamd(scenario([LOGGED_IN]))
    t = tui()
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text="logged in")
    question = ("Forget the saved login of the network on eth1? Its password is deleted. (y/N)")
    t.key("f")
    t.wait_for(screen="portal", text=question)
    golden("portal-confirm-forget", t)
    assert t.text_lines()[-1] == " ? help  q quit  y yes  n no"
    t.key("n")
    t.wait_for(screen="portal", text="Not done: the login of the network on eth1 stays saved.")
    t.key("f")
    t.wait_for(screen="portal", text=question)
    t.key("\x1b")
    t.wait_for(screen="portal", text="Not done: the login of the network on eth1 stays saved.")
    assert fake.send(op="portal_calls") == []
    t.key("f")
    t.wait_for(screen="portal", text=question)
    t.key("y")
    t.wait(lambda t: fake.send(op="portal_calls") == [["Forget", "eth1"]], what="Forget")


def test_portal_urls_break_at_slashes(roamd, tui):
    """At 40 columns a URL too long for a row breaks after a '/', never inside a name (L19 of
    the new-user report: "https://cafe.test/venu" / "e")."""
    url = "https://portal.cafe.example/venue/login/welcome-page"
    roamd(scenario([dict(WAITING, LoginURL=url, PortalURL=url)]))
    t = tui(cols=40, rows=24)
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text="waiting for your")
    rows = [r.strip() for r in t.text().splitlines()]
    pieces = [r for r in rows if "portal.cafe.example" in r or r.startswith(("venue/", "login/",
                                                                             "welcome-page"))]
    assert pieces, t.text()
    for r in rows:
        for name in ("welcome-page", "venue", "login", "portal.cafe.example"):
            # a row holds a name whole or not at all
            for k in range(2, len(name)):
                assert not r.endswith(name[:k]) or r.endswith(name), (r, t.text())
