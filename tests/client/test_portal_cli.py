"""`roam portal` (docs/portal.md, docs/client.md): the sessions in words and as JSON, for
WISPr portals and for portals that offer only a web page (roamd sends no LoginURL then)."""
import json

import pytest

from test_plain import PORTAL
from test_plain_portal import BROWSER, NO_WISPR, WAITING


def scenario(sessions):
    return dict(PORTAL, portal_sessions=sessions)


@pytest.mark.parametrize("argv", [("portal", "--json"), ("--json", "portal"),
                                  ("portal", "--json", "wlan0")])
@pytest.mark.parametrize("session", [WAITING, NO_WISPR, BROWSER, {"Link": "wlan0",
                                                                  "State": "discovering"}],
                         ids=["wispr", "no-wispr", "browser", "bare"])
def test_portal_json(roamd, roam, argv, session):
    roamd(scenario([session]))
    r = roam(*argv)
    assert r.rc == 0, r.err
    assert r.err == ""
    doc = json.loads(r.out)
    assert len(doc) == 1
    s = doc[0]
    assert s["link"] == "wlan0"
    assert s["state"] == session["State"]
    assert s["wispr"] == session.get("WISPr", False)
    # what roamd did not send is null, never a missing key
    assert s["login_url"] == session.get("LoginURL")
    assert s["message"] == session.get("Message")
    assert s["portal_url"] == session.get("PortalURL")
    assert s["identity"] == session.get("Identity")


def test_portal_text_without_login_url(roamd, roam):
    roamd(scenario([NO_WISPR]))
    r = roam("portal")
    assert r.rc == 0, r.err
    assert r.out.startswith("wlan0: captive portal, waiting for your approval\n")
    assert "  Auto login:     none: log in with a web browser\n" in r.out


def test_portal_json_empty(roamd, roam):
    roamd(scenario([]))
    r = roam("portal", "--json")
    assert r.rc == 0, r.err
    assert json.loads(r.out) == []
