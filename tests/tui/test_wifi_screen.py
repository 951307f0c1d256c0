# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Wi-Fi screen (w on a Wi-Fi link's screen; org.roam1.WiFi through fake_wifi.py):
networks with signal bars and words, security in words, known networks out of range, the
hidden-network row; the passphrase dialog (masked, typed-ahead keys dropped), a wrong
passphrase said and asked again in place, forget and autoconnect, then the link's verdict and
the portal screen when captive; the Overview's SSID and signal. 80x24 in the default,
monochrome and high-contrast themes; hostile SSIDs."""
from scenarios import WLAN0_ONLINE, manager
from tuidriver import NOW

SEC = 1_000_000
NETWORKS = [
    {"ssid": "Home", "signal": -48, "security": "wpa2/wpa3", "passphrase": "correct horse",
     "known": True, "priority": 10, "band": "5 GHz", "connected": True},
    {"ssid": "Cafe Guest", "signal": -57, "security": "open", "band": "2.4 GHz",
     "portal": "http://portal.cafe.example/login"},
    {"ssid": "Neighbour", "signal": -66, "security": "wpa2", "passphrase": "not yours at all",
     "band": "2.4 GHz"},
    {"ssid": "eduroam", "signal": -62, "security": "enterprise", "identity": "alice",
     "password": "eap secret", "band": "5 GHz", "eap_retry": True},
    {"ssid": "Bunker", "signal": -75, "security": "wpa2", "passphrase": "hidden in plain",
     "hidden": True},
    {"ssid": "Office", "security": "wpa3", "in_range": False, "known": True,
     "autoconnect": True, "passphrase": "office pass"},
]


def wifi_scenario(networks=NETWORKS, **wifi):
    w = {"backend": "networkmanager", "why": "NetworkManager manages wlan0",
         "last_scan": NOW - 12 * SEC, "networks": networks}
    w.update(wifi)
    wlan = dict(WLAN0_ONLINE, WiFiState="COMPLETED", WiFiSSID="Home", WiFiSignal=-48,
                WiFiLinkSpeed=866, _wifi=w)
    return {"manager": manager("online", wlan), "links": [wlan]}


def said(t, *texts, screen="wifi"):
    """The frame shown now if it says every text (maybe wrapped), else the next one."""
    def ok(t):
        return t.frame.screen == screen and all(x in " ".join(t.text().split()) for x in texts)
    if t.frames and ok(t):
        return t
    return t.wait(ok, 10, f"the {screen} screen saying {texts!r}")


def shows(t, condition, what):
    """The frame shown now if it satisfies condition, else the next one that does."""
    if t.frames and condition(t):
        return t
    return t.wait(condition, 10, what)


def open_wifi(t):
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0")
    t.key("w")
    return said(t, "Wi-Fi on wlan0 through NetworkManager")


def open_wifi_any(t):
    """The Wi-Fi screen, whatever it says (an owner roam cannot join through)."""
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0")
    t.key("w")
    return shows(t, lambda t: t.frame.screen == "wifi" and "Wi-Fi on wlan0" in t.text(),
                 "the Wi-Fi screen")


def select(t, name):
    for _ in range(10):
        if name in t.cursor_line() and t.cursor_line().startswith(">"):
            return
        before = t.cursor_line()
        t.key("j")
        t.wait(lambda t: t.cursor_line() != before, what="the selection to move after j")
    raise AssertionError(f"{name} never selected:\n{t.text()}")


def calls(fake):
    return fake.send(op="wifi_calls")


def test_overview_shows_ssid_and_signal(roamd, tui, golden):
    roamd(wifi_scenario())
    t = tui()
    t.wait_for(screen="overview", text="Wi-Fi Home, signal excellent, -48 dBm, 866 Mbit/s")
    golden("wifi-overview", t)


def test_wifi_list(roamd, tui, golden):
    roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    lines = t.text_lines()
    rows = {line[4:20].strip(): line for line in lines}
    assert "▂▄▆█ excellent -48" in rows["Home"] and "WPA2/WPA3" in rows["Home"]
    assert "auto p10" in rows["Home"] and "●" in rows["Home"]
    assert "▂▄▆_ good -57" in rows["Cafe Guest"] and "open" in rows["Cafe Guest"]
    assert "enterprise (802.1X)" in rows["eduroam"]
    assert "out of range" in rows["Office"] and "WPA3" in rows["Office"]
    assert "+ Join a hidden network" in t.text()
    # order: joined, known in range, others by signal, known out of range
    names = [line[4:20].strip() for line in lines if line[4:20].strip() in rows and
             line[4:20].strip() in [n["ssid"] for n in NETWORKS]]
    # (within a bar count by name: a row moves only when its bars change)
    assert names == ["Home", "Cafe Guest", "Neighbour", "eduroam", "Bunker", "Office"]
    assert "Enter join" in lines[-1] and "r scan" in lines[-1]
    golden("wifi-list", t)
    golden("wifi-list-monochrome", t, theme="monochrome")


def test_wifi_themes(roamd, tui, golden):
    roamd(wifi_scenario())
    for theme in ("monochrome", "high-contrast"):
        t = tui(args=["--theme", theme])
        open_wifi(t)
        golden(f"wifi-theme-{theme}", t, theme=theme)
        t.close()


def test_join_wrong_passphrase_then_retry_in_place(roamd, tui, golden):
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "Neighbour")
    t.key("\r")
    said(t, "Join Neighbour (WPA2)", "Passphrase")
    golden("wifi-passphrase", t)
    t.key("a wrong guess")
    said(t, "Passphrase *************")
    assert "a wrong guess" not in t.text()
    t.key("\r")
    # asked again in place, the field emptied, the refusal in words
    said(t, "Neighbour refused this passphrase. Check it (it is case-sensitive) and try again.")
    t.settle()
    golden("wifi-wrong-key", t)
    t.key("not yours at all\r")
    # the join, then the link's verdict from the probe after it
    said(t, "Joined Neighbour. wlan0: online.")
    # the selection follows Neighbour, now joined and first
    shows(t, lambda t: "●" in t.cursor_line(), "Neighbour joined and selected")
    assert "Neighbour" in t.cursor_line() and t.text_lines()[4].startswith(">")
    golden("wifi-joined", t)
    assert [c[0] for c in calls(fake)] == ["Join", "JoinSecret"]
    assert fake.send(op="wifi_joins")[0]["passphrases"] == ["a wrong guess", "not yours at all"]


def test_typed_ahead_keys_never_land_in_the_passphrase(roamd, tui):
    """Keys typed for the list right before the dialog opened (a second j, a stray word) are
    dropped: the dialog starts empty."""
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "Neighbour")
    t.key("\rjunk")
    said(t, "Join Neighbour (WPA2)")
    # the field is empty: "junk" came with the Enter that opened the dialog
    t = shows(t, lambda t: "Join Neighbour (WPA2)" in t.text(), "the dialog")
    assert [line for line in t.text_lines() if "Passphrase" in line][-1].strip() == \
        "> Passphrase", t.text()
    t.key("not yours at all\r")
    said(t, "Joined Neighbour.")
    p = fake.send(op="wifi_joins")[0]["passphrases"][0]
    assert p == "not yours at all", p


def test_join_open_network_goes_to_the_portal(roamd, tui, golden):
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "Cafe Guest")
    t.key("\r")
    t.wait_for(screen="portal")
    assert calls(fake) == [["Join", 3, "Cafe Guest", {}]]


def test_join_hidden(roamd, tui, golden):
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    t.key("h")
    said(t, "Nothing in the air names a hidden network")
    t.key("Bunker\t")
    golden("wifi-hidden", t)
    t.key("\thidden in plain\r")
    said(t, "Joined Bunker.")
    assert calls(fake) == [["Join", 3, "Bunker", {"hidden": True, "security": "wpa2",
                                                  "passphrase": 15}]]


LAB = {"ssid": "Lab", "signal": -70, "security": "enterprise", "identity": "bob",
       "password": "lab secret", "hidden": True}
LEFT, RIGHT = b"\x1bOD", b"\x1bOC"  # keypad mode


def test_join_hidden_8021x(roamd, tui, golden, tmp_path):
    """The hidden dialog with 802.1X chosen asks what the visible network's 802.1X dialog
    asks (EAP method, user name, anonymous identity, password, CA file, server domain) and
    joins with the same keys, hidden."""
    ca = tmp_path / "lab-ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    fake = roamd(wifi_scenario(NETWORKS + [LAB]))
    t = tui()
    open_wifi(t)
    t.key("h")
    said(t, "Nothing in the air names a hidden network")
    t.key("Lab\t")
    t.key(LEFT)  # WPA2 -> enterprise
    said(t, "Join a hidden network", "Security \u25c0 enterprise (802.1X) \u25b6", "EAP method",
         "User name", "Anonymous ID", "Password", "CA file", "Server domain", "PEAP")
    golden("wifi-hidden-enterprise", t)
    t.key("\t")
    t.key(RIGHT)
    said(t, "EAP method \u25c0 TTLS \u25b6")
    t.key("\tbob\tanon@lab.example\tlab secret")
    said(t, "Password **********")
    assert "lab secret" not in t.text()
    t.key("\t%s\tradius.lab.example\r" % ca)
    said(t, "Joined Lab.")
    assert calls(fake) == [
        ["Join", 3, "Lab", {"hidden": True, "security": "enterprise", "password": 10,
                            "identity": "bob", "eap": "ttls",
                            "anonymous-identity": "anon@lab.example", "ca-file": str(ca),
                            "domain": "radius.lab.example"}]]


def test_hidden_8021x_through_iwd_said_in_words(roamd, tui, golden):
    """Through iwd the hidden dialog with 802.1X chosen asks nothing more: it says that iwd
    joins a hidden 802.1X network only by autoconnect, and Enter asks nothing of roamd."""
    fake = roamd(wifi_scenario(NETWORKS + [LAB], backend="iwd", why="iwd runs wlan0"))
    t = tui()
    open_wifi_any(t)
    said(t, "Wi-Fi on wlan0 through iwd")
    t.key("h")
    said(t, "Nothing in the air names a hidden network")
    t.key("Lab\t")
    t.key(LEFT)
    said(t, "iwd joins a hidden 802.1X network only by autoconnect, from a provisioning file "
         "in its state directory: roam cannot ask it to join one.")
    assert "User name" not in t.text() and "Password" not in t.text()
    golden("wifi-hidden-enterprise-iwd", t)
    t.key("\r")
    said(t, "iwd joins a hidden 802.1X network only by autoconnect.")
    assert "Join a hidden network" in t.text()  # the dialog stays, to choose another
    t.key(LEFT)  # enterprise -> open: a passphrase-less dialog again
    said(t, "Security \u25c0 open \u25b6")
    assert "provisioning file" not in t.text()
    t.key("\x1b")
    said(t, "Nothing joined.")
    assert calls(fake) == []


def test_join_peap(roamd, tui, golden, tmp_path):
    """An 802.1X network asks its EAP method (Left/Right), user name, anonymous identity,
    password (masked), CA file and server domain, and joins with the keys `roam wifi join
    --eap` sends; a refused password is said in words and asked again in place with the user
    name kept; the CA file goes to roamd as an absolute path."""
    ca = tmp_path / "corp-ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "eduroam")
    t.key("\r")
    said(t, "Join eduroam (enterprise (802.1X))", "EAP method", "User name", "Anonymous ID",
         "Password", "CA file", "Server domain", "PEAP")
    golden("wifi-enterprise", t)
    t.key(b"\x1bOC")  # Right (keypad mode): the next method
    said(t, "EAP method", "TTLS")
    t.key("\talice\tanonymous@example.org\tnot it")
    said(t, "Anonymous ID anonymous@example.org", "Password ******")
    assert "not it" not in t.text()
    golden("wifi-enterprise-filled", t)
    t.key("\t" + str(ca) + "\tradius.example.org\r")
    said(t, "eduroam refused this user name or password. Check it (it is case-sensitive) and "
         "try again.")
    t.settle()
    # asked again: only the user name (kept) and the password (emptied, focused)
    assert "CA file" not in t.text() and "EAP method" not in t.text()
    assert t.cursor_line().rstrip() == "> Password", t.cursor_line()
    golden("wifi-enterprise-wrong", t)
    t.key("eap secret\r")
    said(t, "Joined eduroam.")
    assert calls(fake) == [
        ["Join", 3, "eduroam", {"security": "enterprise", "password": 6, "identity": "alice",
                                "eap": "ttls", "anonymous-identity": "anonymous@example.org",
                                "ca-file": str(ca), "domain": "radius.example.org"}],
        ["JoinSecret", 3, "eduroam", {"password": 10, "identity": "alice"}]]
    assert fake.send(op="wifi_joins")[0]["passphrases"] == ["not it", "eap secret"]


def test_typed_ahead_keys_never_land_in_the_8021x_dialog(roamd, tui):
    """Keys typed right after the Enter that opened the 802.1X dialog are dropped: every
    field starts empty (the password's too)."""
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "eduroam")
    t.key("\r\tjunk\tmore")
    t = shows(t, lambda t: "Join eduroam" in t.text(), "the dialog")
    t.settle()
    fields = {line.strip("> ").split("  ")[0]: line for line in t.text_lines()
              if line.strip("> ").startswith(("User name", "Anonymous ID", "Password"))}
    assert all(line.rstrip().endswith(name) for name, line in fields.items()), fields
    assert len(fields) == 3, t.text()
    t.key("\x1b")
    said(t, "Nothing joined.")
    assert calls(fake) == []


def test_join_peap_ca_file_that_is_not_there(roamd, tui):
    """A CA file that is not there is said in words before anything is asked of roamd; the
    dialog stays with what was typed, on the CA file; left empty, the system's bundle (no
    ca-file key), PEAP the default."""
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "eduroam")
    t.key("\r")
    said(t, "Join eduroam (enterprise (802.1X))", "EAP method")
    t.key("\talice\t\teap secret\t/nonexistent/ca.pem\r\r")
    said(t, "Cannot use the CA file /nonexistent/ca.pem: No such file or directory.")
    assert calls(fake) == []
    assert t.cursor_line().startswith("> CA file"), t.cursor_line()
    for _ in "/nonexistent/ca.pem":
        t.key("\x7f")
    shows(t, lambda t: t.cursor_line().rstrip() == "> CA file", "the CA file emptied")
    t.key("\r\r")
    said(t, "Joined eduroam.")
    assert calls(fake) == [["Join", 3, "eduroam", {"security": "enterprise", "password": 10,
                                                   "identity": "alice", "eap": "peap"}]]


def test_forget_and_autoconnect(roamd, tui, golden):
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "Office")
    t.key("a")
    said(t, "Changed how Office is joined.")
    shows(t, lambda t: "manual" in [l for l in t.text_lines() if "Office" in l][0],
          "Office manual")
    t.key("f")
    said(t, "Forget Office? Its passphrase is forgotten too.")
    golden("wifi-confirm-forget", t)
    t.key("y")
    said(t, "Forgot Office.")
    shows(t, lambda t: not any("Office" in line for line in t.text_lines()[:-2]),
          "Office gone from the list")
    assert calls(fake) == [["SetAutoconnect", 3, "Office", {"on": False}],
                           ["Forget", 3, "Office", {}]]


def test_radio_off(roamd, tui, golden):
    roamd(wifi_scenario(radio="soft-blocked"))
    t = tui()
    open_wifi(t)
    said(t, "Wi-Fi is off (rfkill: soft-blocked).")
    golden("wifi-radio-off", t)


def test_hostile_ssid(roamd, tui, golden):
    hostile = {"ssid_hex": "1b5b33316d41e280ae42ff07", "signal": -60, "security": "open"}
    roamd(wifi_scenario(NETWORKS + [hostile]))
    t = tui()
    open_wifi(t)
    said(t, "?[31mA?B\\xff?")
    assert "\x1b" not in t.text() and "\u202e" not in t.text()
    golden("wifi-hostile", t)


def test_join_in_progress_and_canceled(roamd, tui, golden):
    """A join that takes its time shows its step under the list; Esc leaves the screen, the
    join goes on (roamd's)."""
    nets = [dict(NETWORKS[0], connected=False, known=False),
            {"ssid": "Slow", "signal": -52, "security": "wpa2", "passphrase": "slow but sure",
             "stall": True}]
    fake = roamd(wifi_scenario(nets))
    t = tui()
    open_wifi(t)
    select(t, "Slow")
    t.key("\r")
    said(t, "Join Slow (WPA2)")
    t.key("slow but sure\r")
    said(t, "Joining Slow: checking the passphrase")
    golden("wifi-joining", t)
    assert [c[0] for c in calls(fake)] == ["Join"]


def test_not_found_said(roamd, tui, golden):
    roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "Bunker")
    t.key("\r")
    said(t, "Join Bunker (WPA2)")
    t.key("hidden in plain\r")
    said(t, "No network named Bunker answered (if it is hidden, join it as hidden).")
    golden("wifi-not-found", t)


def test_no_owner_and_empty(roamd, tui, golden):
    roamd(wifi_scenario(backend="connman", why="ConnMan manages wlan0; roam cannot join "
                                                "through ConnMan yet: use connmanctl"))
    t = tui()
    open_wifi_any(t)
    said(t, "ConnMan manages wlan0; roam cannot join through ConnMan yet: use connmanctl")
    golden("wifi-no-owner", t)


def test_empty_list(roamd, tui, golden):
    roamd(wifi_scenario([]))
    t = tui()
    open_wifi(t)
    said(t, "No networks seen (r looks again).", "+ Join a hidden network")
    golden("wifi-empty", t)


def test_small_terminal(roamd, tui, golden):
    roamd(wifi_scenario())
    t = tui(cols=40, rows=12)
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0")
    t.key("w")
    said(t, "Home", "excellent -48", "WPA2/WPA3")
    golden("wifi-small", t)


def test_priority(roamd, tui, golden):
    """+ and - raise and lower a known network's priority through SetPriority; the row says
    the owner's new value ("auto p11"). Not offered for a network that is not known."""
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi(t)
    select(t, "Home")
    # the key is in the help (the bar at 80 columns has no room for it)
    t.key("?")
    shows(t, lambda t: "Keys on this screen" in t.text(), "the help")
    t.key("\x1b[6~")  # Page Down: the keys go on below 24 rows
    shows(t, lambda t: "Raise or lower the selected known network's priority" in
          " ".join(t.text().split()), "the help naming +/-")
    t.key("\x1b")
    said(t, "Wi-Fi on wlan0 through NetworkManager")
    t.key("+")
    said(t, "Home's priority is 11 (higher is joined first).")
    shows(t, lambda t: "auto p11" in [l for l in t.text_lines() if "Home" in l][0],
          "Home at priority 11")
    golden("wifi-priority", t)
    t.key("-")
    said(t, "Home's priority is 10 (higher is joined first).")
    # the list read again after the change, before the selection moves
    shows(t, lambda t: "auto p10" in [l for l in t.text_lines() if "Home" in l][0],
          "Home at priority 10")
    select(t, "Neighbour")
    t.key("+")
    said(t, "Neighbour is not a known network.")
    assert calls(fake) == [["SetPriority", 3, "Home", {"priority": 11}],
                           ["SetPriority", 3, "Home", {"priority": 10}]]


def test_priority_range(roamd, tui):
    fake = roamd(wifi_scenario(backend="wpa_supplicant", why="wpa_supplicant runs wlan0"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0")
    t.key("w")
    said(t, "Wi-Fi on wlan0 through wpa_supplicant")
    select(t, "Office")
    t.key("-")
    said(t, "wpa_supplicant takes a priority from 0 to 1000000.")
    t.key("+")
    said(t, "Office's priority is 1 (higher is joined first).")
    assert calls(fake) == [["SetPriority", 3, "Office", {"priority": 1}]]


def test_priority_not_through_iwd(roamd, tui):
    """iwd ranks known networks itself: the key is not offered, and pressed it says why
    without asking roamd."""
    fake = roamd(wifi_scenario(backend="iwd", why="iwd runs wlan0"))
    t = tui()
    t.wait_for(screen="overview", text="wlan0")
    t.key("\r")
    t.wait_for(screen="link", text="wlan0")
    t.key("w")
    said(t, "Wi-Fi on wlan0 through iwd")
    select(t, "Home")
    t.key("?")
    shows(t, lambda t: "autoconnect" in t.text(), "the help")
    assert "priority" not in t.text(), t.text()
    t.key("\x1b")
    said(t, "Wi-Fi on wlan0 through iwd")
    t.key("+")
    said(t, "iwd has no priority for known networks: it ranks them itself.")
    assert calls(fake) == []
