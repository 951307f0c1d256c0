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
    t.wait_for(screen="portal", text="Done: roamd is on it")
    assert fake.send(op="portal_calls") == [["Login", "eth1", "traveller", "s3cret", True, False]]

    fake.send(op="portal", sessions=[LOGGED_IN])
    t.wait_for(screen="portal", text="logged in")
    assert "59 min" in t.text() and "10000000 bytes" in t.text()
    golden("portal-logged-in", t)


def test_portal_screen_keys(roamd, tui):
    fake = roamd(scenario([WAITING]))
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="eth1")
    t.key("4")
    t.wait_for(screen="portal", text="waiting for your")
    t.key("A")
    t.wait_for(screen="portal", text="Done")
    t.key("d")
    t.wait_for(screen="portal", text="Done")
    # the login form cancelled: nothing sent
    t.key("l")
    t.wait_for(screen="portal", text="Log in on eth1")
    t.key("x")
    t.key("\x1b")
    t.wait_for(screen="portal", text="nothing was sent")
    assert fake.send(op="portal_calls") == [["Approve", "eth1", True], ["Decline", "eth1"]]
