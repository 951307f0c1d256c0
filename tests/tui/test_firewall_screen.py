# SPDX-License-Identifier: LGPL-2.1-or-later
"""The firewall screen (key 8) and the first-join question ("Is this a home, work or public
network?") over any screen, against fake_roamd's side of FIREWALL-API.md."""
import pytest

from firewall_scenario import CAFE_ID, FIREWALL

ESC = b"\x1b"
QUESTION = "Is this a home, work or public network?"


def test_first_join_prompt(roamd, tui, golden):
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text=[QUESTION, "eth1: a network roam has not seen"])
    t.settle()
    # The dialog's keys replace the screen's.
    assert "h home" in t.text_lines()[-1] and "u not now" in t.text_lines()[-1]
    # The cursor starts on "not now": an Enter meant for the screen below changes nothing.
    assert "> u not now: untrusted for this session" in t.cursor_line()
    golden("firewall-prompt", t)
    # Other keys do not slip through to the screen below.
    t.key("2")
    t.wait_for(screen="overview", text="Answer with h, w or p; u or Esc: not now.")
    t.key("h")
    t.wait_for(screen="overview", text="eth1: this network is now home; its rules are in force.")
    assert QUESTION not in t.text()
    assert fake.send(op="location_calls") == [["eth1", "home"]]
    assert "location home, set by you" in t.text()


def test_first_join_prompt_small_and_monochrome(roamd, tui, golden):
    roamd(FIREWALL)
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="Is this a home, work or")
    t.settle()
    golden("firewall-prompt-small", t)
    t2 = tui(args=("--theme", "monochrome"))
    t2.wait_for(screen="overview", text=QUESTION)
    t2.settle()
    golden("firewall-prompt-monochrome", t2, theme="monochrome")


def test_first_join_not_now(roamd, tui):
    """u (or Esc) keeps the network untrusted for this session: nothing is sent, the question
    does not come back for it, and the overview says it is not chosen."""
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key("u")
    t.wait_for(screen="overview", text="eth1 stays untrusted for this session")
    assert QUESTION not in t.text()
    assert "location untrusted until you choose" in t.text()
    # The link changes (a new verdict): still no question for the same network.
    fake.send(op="set", link=4, props={"Connectivity": "local",
                                       "ConnectivityReason": "http-timeout"})
    t.wait_for(screen="overview", text="HTTP check timed out")
    assert QUESTION not in t.text()
    # Another unknown network on the link: asked again; Esc works like u.
    fake.send(op="set", link=4, props={"NetworkId": "ether:gw=02:00:00:00:03:01"})
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key(ESC)
    t.wait_for(screen="overview", text="eth1 stays untrusted for this session")
    assert fake.send(op="location_calls") == []


def test_first_join_refused(roamd, tui, golden):
    """polkit says no: said in words, the network stays untrusted, the question is not
    asked again at once."""
    fake = roamd(dict(FIREWALL, _deny_uids=[0]))
    t = tui()
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key("w")
    t.wait_for(screen="overview", text="Not allowed to make this network work on eth1")
    golden("firewall-prompt-refused", t)
    assert "(polkit is not running); it stays untrusted for now" in " ".join(t.text().split())
    assert QUESTION not in t.text()
    assert fake.send(op="location_calls") == [["eth1", "work"]]


def test_firewall_screen(roamd, tui, golden):
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key("u")
    t.wait_for(screen="overview", text="stays untrusted")
    assert "8 Firewall" in t.text_lines()[0]
    t.key("8")
    t.wait_for(screen="firewall",
               text=["Rules in force on wlan0 (home)", "tcp 22000 app org.syncthing"])
    golden("firewall-screen", t)
    t.key("j")
    t.wait_for(screen="firewall", text=["Rules in force on eth1 (untrusted)", "built-in:ssh"])
    # l asks where the selected link's network is; p answers public: the rules swap.
    t.key("l")
    t.wait_for(screen="firewall", text="Where is eth1's network?")
    golden("firewall-choose", t)
    t.key("p")
    t.wait_for(screen="firewall", text=["eth1: this network is now public",
                                        "firewall.d/public.conf:2", "public, set by you"])
    assert fake.send(op="location_calls") == [["eth1", "public"]]
    # Esc cancels the choice: nothing is sent.
    t.key("l")
    t.wait_for(screen="firewall", text="Where is eth1's network?")
    t.key(ESC)
    t.wait(lambda t: "Where is" not in t.text(), what="the dialog closed")
    assert fake.send(op="location_calls") == [["eth1", "public"]]
    # A broken profile file: said on top; the rules in force stay.
    error = "/etc/roam/firewall.d/home.conf:9: unknown action 'alow'; the rules in force stay"
    fake.send(op="manager", props={"FirewallError": error})
    t.wait_for(screen="firewall", text="Firewall files refused: /etc/roam/firewall.d/home.conf:9")
    # The counters move without a signal: r reads them again.
    rules = [list(r) for r in FIREWALL["firewall_rules"]]
    rules[2][8] = 90
    fake.send(op="rules", rules=rules)
    t.key("k")
    t.key("r")
    # One frame may bring both the message and the new counter: one wait for the two.
    t.wait(lambda t: "Reading the rules and their counters again." in t.text() and
           any(" 90 " in line and "tcp 22000" in line for line in t.text_lines()),
           what="the new counter")
    # ... and by themselves while the screen is shown (L7 of the new-user report): every 5 s,
    # which for roam's frozen clock is the driver's SIGUSR1
    rules[2][8] = 91
    fake.send(op="rules", rules=rules)
    t.settle()

    def counted(t):
        return any(" 91 " in line and "tcp 22000" in line for line in t.text_lines())
    if not counted(t):  # the frame settle() waited for may have it
        t.wait(counted, what="the counter read again by itself")


def test_firewall_screen_small_and_monochrome(roamd, tui, golden):
    roamd(dict(FIREWALL, links=[FIREWALL["links"][0], FIREWALL["links"][1]]))
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="wlan0")
    t.key("8")
    # one wait, not two, for the frame with the rules read (the keys below walk them): that
    # frame may already have the cursor on the overview's selection (the best link), and then
    # no other frame comes
    t.wait(lambda t: t.frame.screen == "firewall" and t.frame.fields.get("loading") == "0" and
           "Where each link's" in t.text() and t.cursor_line().startswith("> wlan0"),
           what="the firewall screen with its rules read and wlan0 focused")
    golden("firewall-small", t)
    # Below the links, the cursor walks wlan0's rules: every rule is reachable on 40x12.
    for _ in range(3):
        t.key("j")
    t.wait_cursor("> accept in: tcp 22000 app", screen="firewall")
    golden("firewall-small-rules", t)
    t2 = tui(args=("--theme", "monochrome"))
    t2.wait_for(screen="overview", text="wlan0")
    t2.key("8")
    t2.wait_for(screen="firewall", text="tcp 22000 app org.syncthing")
    golden("firewall-theme-monochrome", t2, theme="monochrome")
    t3 = tui(args=("--theme", "high-contrast"))
    t3.wait_for(screen="overview", text="wlan0")
    t3.key("8")
    t3.wait_for(screen="firewall", text="tcp 22000 app org.syncthing")
    golden("firewall-theme-high-contrast", t3, theme="high-contrast")


def test_firewall_screen_location_not_in_force(roamd, tui, golden):
    """The kernel refused the new location's rules: the screen names the location in force
    (its rules listed) and the wanted one as not in force yet, on 80x24 and 40x12."""
    links = [FIREWALL["links"][0], dict(FIREWALL["links"][1], LocationWanted="public")]  # eth0, wlan0
    roamd(dict(FIREWALL, links=links))
    pending = "home, from networks.d; public wanted, not in force yet (see Degraded)"
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("8")
    t.wait_for(screen="firewall", text=["Rules in force on wlan0 (home)",
                                        "tcp 22000 app org.syncthing"])
    assert pending in " ".join(t.text().split()), t.text()
    golden("firewall-not-in-force", t)
    t2 = tui(cols=40, rows=12)
    t2.wait_for(screen="overview", text="wlan0")
    t2.key("8")
    t2.wait_cursor("> wlan0", screen="firewall")
    assert "public wanted, not in force yet" in " ".join(t2.text().split()), t2.text()
    golden("firewall-not-in-force-small", t2)


def test_link_screen_says_the_location(roamd, tui):
    roamd(FIREWALL)
    t = tui(rows=40)
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key("u")
    t.key("2")  # the selected link: wlan0, the best link
    t.wait_for(screen="link", text="wlan0 (wifi)")
    text = " ".join(t.text().split())
    assert ('Location: home, from networks.d (ssid "HomeNet" and gateway 02:00:00:00:01:fe '
            "matched /etc/roam/networks.d/home.conf:3)") in text
    assert ("Network: wifi:HomeNet:02:00:00:00:01:01 (SSID HomeNet, BSSID 02:00:00:00:01:01, "
            "Gateway MAC 02:00:00:00:01:fe, DHCP server 192.0.2.1, Domain home.example)") in text


def test_no_firewall_no_tab(roamd, tui):
    """An older roamd (no locations): no firewall tab, no question."""
    from scenarios import verdict_scenario
    roamd(verdict_scenario("online"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    assert "Firewall" not in t.text_lines()[0]
    assert QUESTION not in t.text()
    assert CAFE_ID not in t.text()


def test_first_join_prompt_click(roamd, tui):
    """The question is modal for the mouse too: a click on a choice answers it."""
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    x, y = t.find("w work: a network you mostly trust")
    t.click(x, y)
    t.wait_for(screen="overview", text="eth1: this network is now work")
    assert fake.send(op="location_calls") == [["eth1", "work"]]


def test_first_join_waits_for_a_screen_without_typing(roamd, tui):
    """On the portal screen (a login form may be open) the question waits: a key meant for the
    form never answers it. Back on the overview, it comes."""
    from firewall_scenario import ETH1
    scenario = dict(FIREWALL, links=[FIREWALL["links"][0], FIREWALL["links"][1]],
                    portal_sessions=[])
    fake = roamd(scenario)
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("4")
    t.wait_for(screen="portal", text="No captive portal")
    fake.send(op="add", link=ETH1)
    t.wait_for(screen="portal", text="3 links")  # the new link is in the model
    t.key("h")
    t.key(ESC)
    t.wait_for(screen="overview", text=QUESTION)
    assert fake.send(op="location_calls") == []


def test_first_join_waits_while_a_filter_is_typed(roamd, tui):
    """Letters typed into the overview's filter stay text: the question waits for Enter."""
    from firewall_scenario import ETH1
    fake = roamd(dict(FIREWALL, links=[FIREWALL["links"][0], FIREWALL["links"][1]]))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("/")
    t.wait_for(screen="overview", text="Filter: _")
    fake.send(op="add", link=ETH1)
    t.wait_for(screen="overview", text="3 links")
    t.key("wh")
    t.wait_for(screen="overview", text="Filter: wh_")
    assert QUESTION not in t.text()
    t.key("\r")
    t.wait_for(screen="overview", text=QUESTION)
    # Enter on the question right away: typed ahead, it answers nothing.
    t.key("\r")
    t.wait_for(screen="overview", text=[QUESTION, "A question just came: keys wait a moment"])
    # After the grace period, Enter on the choice it starts on: "not now", nothing sent.
    t.settle()
    t.key("\r")
    t.wait_for(screen="overview", text="eth1 stays untrusted for this session")
    assert fake.send(op="location_calls") == []


def test_first_join_two_networks_one_after_the_other(roamd, tui):
    """Two unknown networks at once: one question at a time, each answered by its own key."""
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text="eth1: a network roam has not seen")
    t.settle()
    fake.send(op="set", link=3, props={"NetworkId": "wifi:Other:02:00:00:00:09:09",
                                       "Location": "untrusted", "LocationSource": "default",
                                       "LocationReason": "unknown network: untrusted until you choose"})
    t.key("u")
    t.wait_for(screen="overview", text="eth1 stays untrusted for this session")
    if "wlan0: a network roam has not seen" not in t.text():
        t.wait_for(screen="overview", text="wlan0: a network roam has not seen")
    t.settle()
    t.key("u")
    t.wait_for(screen="overview", text="wlan0 stays untrusted for this session")
    assert QUESTION not in t.text()


def test_first_join_ignores_keys_typed_ahead(roamd, tui, golden):
    """The question comes by itself: keys typed right after start ("3/chrome": the apps
    screen, a filter) answer nothing, not even the "h" of "chrome". Once the grace period is
    over, its letters answer it."""
    from scenarios import APPS
    fake = roamd(dict(FIREWALL, apps=APPS["apps"]))
    t = tui()
    t.wait_for(screen="overview", text=QUESTION)
    t.key("3/chrome")
    t.wait(lambda t: t.frame.screen == "overview" and QUESTION in t.text() and
           "A question just came: keys wait a moment" in t.text() and
           t.frame.fields.get("settling") == "1", what="the keys typed ahead ignored")
    # While it settles, no key is offered: none would act.
    assert "h home" not in t.text_lines()[-1]
    golden("firewall-prompt-settling", t)
    assert fake.send(op="location_calls") == []
    assert "location home, set by you" not in t.text()
    t.settle()
    assert "h home" in t.text_lines()[-1]
    t.key("p")
    t.wait_for(screen="overview", text="eth1: this network is now public")
    assert fake.send(op="location_calls") == [["eth1", "public"]]


def test_vpn_tunnel_is_not_asked(roamd, tui):
    """A VPN tunnel that names no network of its own is untrusted by roamd's own rule
    (LocationSource "tunnel"): no "home, work or public?" question about it (M8 of the
    new-user report); the Firewall screen says why in words."""
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text="eth1: a network roam has not seen")
    t.settle()
    fake.send(op="set", link=3, props={
        "NetworkId": "vpn:if=wlan0", "Location": "untrusted", "LocationSource": "tunnel",
        "LocationReason": "a VPN tunnel names no network of its own: untrusted, until "
                          "networks.d names it or you choose"})
    t.key("u")
    t.wait_for(screen="overview", text="eth1 stays untrusted for this session")
    assert QUESTION not in t.text()
    assert "wlan0: a network roam has not seen" not in t.text()
    t.key("8")
    t.wait_for(screen="firewall", text="a VPN tunnel that names no network of its own")


def test_new_question_clears_the_stale_status(roamd, tui):
    """A question that comes by itself drops what the status line said before it (L23 of the
    new-user report: "eth1: this network is now home" stayed beside wlan0's question)."""
    fake = roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text="eth1: a network roam has not seen")
    t.settle()
    t.key("h")
    t.wait_for(screen="overview", text="eth1: this network is now home")
    fake.send(op="set", link=3, props={
        "NetworkId": "wifi:Other:02:00:00:00:09:09", "Location": "untrusted",
        "LocationSource": "default",
        "LocationReason": "unknown network: untrusted until you choose"})
    t.wait_for(screen="overview", text="wlan0: a network roam has not seen")
    if "this network is now home" in t.text():
        t.wait(lambda t: "this network is now home" not in t.text(), what="the stale message gone")


def test_firewall_screen_filter(roamd, tui, golden):
    """/ narrows the selected link's rules to those whose words contain the text (L8 of the
    new-user report: / did nothing here); the links stay, Esc brings the rules back."""
    roamd(FIREWALL)
    t = tui()
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key("u")
    t.wait_for(screen="overview", text="stays untrusted")
    t.key("8")
    t.wait_for(screen="firewall", text=["Rules in force on wlan0 (home)", "built-in:default"])
    all_rules = t.text()
    t.key("/")
    t.key("syncthing")
    t.wait_for(screen="firewall", text="Filter: syncthing_ (")
    t.key("\r")
    t.wait_for(screen="firewall", text="Filter: syncthing (")
    text = t.text()
    assert "tcp 22000 app org.syncthing" in text and "built-in:default" not in text, text
    assert "eth1" in text and "wlan0" in text  # the links are not filtered
    golden("firewall-filter", t)
    t.key("/")
    t.key("nothing-like-this")
    t.wait_for(screen="firewall", text="No rule matches the filter.")
    t.key(ESC)
    t.wait_for(screen="firewall", text="built-in:default")
    assert "Filter:" not in t.text() and "built-in:default" in all_rules


@pytest.mark.parametrize("cols", [60, 66, 72, 80])
def test_network_id_is_never_split_at_its_ssids_space(roamd, tui, cols):
    """A network id is one name: "wifi:Cafe Libre:02:72:..." is not broken at the space in its
    SSID (L19 of the new-user report: "... network wifi:Cafe" / "Libre:02:72:...")."""
    nid = "wifi:Cafe Libre:02:72:00:00:01:01"
    links = [dict(l, NetworkId=nid, Location="public", LocationSource="user",
                  LocationReason="you chose public for network " + nid)
             if l.get("Name") == "wlan0" else l for l in FIREWALL["links"]]
    roamd(dict(FIREWALL, links=links))
    t = tui(cols=cols, rows=40)
    t.wait_for(screen="overview", text=QUESTION)
    t.settle()
    t.key("u")
    t.key("2")
    t.wait_for(screen="link", text="wlan0 (wifi)")
    text = t.text()
    assert "Cafe Libre" in " ".join(text.split()), text
    for row in text.splitlines():
        assert not row.rstrip().endswith("wifi:Cafe"), (cols, text)
