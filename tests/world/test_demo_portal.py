# SPDX-License-Identifier: LGPL-2.1-or-later
"""The demo's cafe is a real captive portal (issue 41 §4, H3): `world.sh cafe-portal NAME
wispr S`, as ./roam-demo starts it. Its page's form logs in (a browser's POST with the room
or table), a WISPr login with the credentials the demo's banner states works through `roam
portal login`, a login lasts S seconds and then the cafe is captive again, and logging in
again during the session extends it (the RFC 8908 API's seconds-remaining, which the TUI's e
sends the person back to the page for)."""
import json
import re

import pytest

from roamworld import REPO, wait_for

WORLD = "tdemoportal"
SESSION = 12
USER, PASSWORD = "guest", "espresso"  # what ./roam-demo's banner says
CAFE = "192.0.2.129"


@pytest.fixture(autouse=True)
def needs_probes(world):
    if not world.probes:
        pytest.skip("this roamd has no connectivity probes")


@pytest.fixture
def portal(w):
    w.sh("cafe-portal", w.name, "wispr", str(SESSION))
    yield w
    w.sh("cafe-portal", w.name, "plain")
    w.cafe_logout()


def verdict(w, want, timeout=40):
    wait_for(lambda: w.link("wifi0")["Connectivity"] == want, timeout,
             what="wifi0 %s" % want)


def seconds_remaining(w):
    """The RFC 8908 API as the device reaches it (the cafe's name is the router's)."""
    r = w.dev("curl", "-sf", "-m", "5", "--cacert", str(w.path("ca", "ca.pem")),
              "--resolve", "cafe.test:443:%s" % CAFE, "https://cafe.test/capport")
    return json.loads(r.stdout).get("seconds-remaining")


def form_login(w, table="12"):
    """What a browser sends when the person fills in the page's form."""
    page = w.dev("curl", "-sf", "-m", "5", "-L", "--resolve", "cafe.test:80:%s" % CAFE,
                 "http://cafe.test/portal").stdout
    assert "Room or table" in page and 'action="/login"' in page, page
    return w.dev("curl", "-sf", "-m", "5", "--resolve", "cafe.test:80:%s" % CAFE,
                 "--data-urlencode", "table=%s" % table, "http://cafe.test/login").stdout


def test_form_login_session_expiry_extension_and_wispr(portal):
    w = portal
    w.move("wifi0", "cafe")
    verdict(w, "portal")
    # the form logs in: the cafe opens for the session
    assert "you are online for" in form_login(w)
    verdict(w, "online")
    left = seconds_remaining(w)
    assert 0 < left <= SESSION, left
    # extending: a login within the session starts it again (once it has counted down)
    wait_for(lambda: seconds_remaining(w) <= SESSION - 3, 10, what="the session to count down")
    form_login(w, "7")
    assert seconds_remaining(w) >= SESSION - 1
    # the session ends: the cafe is captive again, and roamd says so
    verdict(w, "portal", timeout=SESSION + 40)
    # WISPr with the banner's credentials (the password on standard input)
    def wispr_offered():
        out = w.dev(str(w.roam), "portal", "--json", check=False).stdout or "[]"
        doc = json.loads(out)
        sessions = doc if isinstance(doc, list) else doc.get("sessions", [])
        return any(s.get("wispr") for s in sessions)
    wait_for(wispr_offered, 30, what="the WISPr login offered")
    r = w.dev(str(w.roam), "portal", "login", "--user", USER, "--password-file", "-", "wifi0",
              check=False, input=PASSWORD + "\n")
    assert r.returncode == 0, (r.stdout, r.stderr)
    verdict(w, "online")
    log = open(w.path("cafe-wispr-requests.log")).read()
    posts = [json.loads(x) for x in log.splitlines() if '"POST"' in x]
    assert [p["path"] for p in posts] == ["/login", "/login", "/wispr/login"], posts
    f = posts[-1]["fields"]
    assert (f["UserName"], f["Password"]) == (USER, PASSWORD), f


def test_demo_banner_states_the_credentials():
    demo = open(REPO / "roam-demo").read()
    banner = " ".join(re.findall(r"printf '([^']*)'", demo))
    assert "logs in as user guest, password espresso" in " ".join(banner.replace("\\n", " ").split()), \
        banner
    assert 'cafe-portal "$NAME" wispr' in demo
