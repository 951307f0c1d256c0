# SPDX-License-Identifier: LGPL-2.1-or-later
"""Wi-Fi Easy Connect (e on the Wi-Fi screen; Enroll through fake_wifi.py): this device's DPP
code as a QR code where the terminal has room for it whole, its text always, the wait and
the join of what the phone sent in words; the text alone (and why) at 80x24; NetworkManager's
missing DPP and a failed exchange said in words; Esc goes back to the networks and cancels a
code still waiting."""
from test_wifi_screen import calls, open_wifi_any, said, wifi_scenario

URI = ("DPP:C:81/1;M:02726d000030;V:2;K:MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACFZq9YNQAmI26YSe+ix"
       "Nxngctk/4qn8uSe3P2t+8iOaE=;;")


def open_enroll(t):
    open_wifi_any(t)
    t.key("e")
    return said(t, "Wi-Fi Easy Connect on wlan0", screen="wifi-enroll")


def test_enroll_shows_the_code_then_joins(roamd, tui, golden):
    fake = roamd(wifi_scenario(backend="wpa_supplicant", why="wpa_supplicant runs wlan0"))
    t = tui(cols=80, rows=40)
    open_enroll(t)
    said(t, "Scan this code with a phone that is on the network", screen="wifi-enroll")
    text = t.text()
    assert "".join(text.split()).find("".join(URI.split())) >= 0 or URI[:60] in text
    # the code itself: half-block rows, as roam wifi share draws them
    assert sum(1 for line in t.text_lines() if "\u2580" in line or "\u2584" in line) > 10
    golden("wifi-enroll-code", t)
    fake.send(op="wifi_enroll", link=3, ssid="Neighbour")
    said(t, "Joined Neighbour.", screen="wifi-enroll")
    golden("wifi-enroll-joined", t)
    assert [c[0] for c in calls(fake)] == ["Enroll"]


def test_enroll_small_terminal_says_why_and_esc_cancels(roamd, tui, golden):
    fake = roamd(wifi_scenario(backend="iwd", why="iwd has a station on wlan0"))
    t = tui()
    open_enroll(t)
    said(t, "The QR code needs", "Make it larger, or type the text below into the phone",
         screen="wifi-enroll")
    assert URI[:40] in t.text()
    golden("wifi-enroll-small", t)
    t.key("\x1b")
    said(t, "Wi-Fi on wlan0 through iwd")
    t.wait(lambda t: [c[0] for c in calls(fake)] == ["Enroll", "JoinCancel"], 10,
           "the enrollment canceled")


def test_networkmanager_has_none(roamd, tui, golden):
    """The key is left out of the hint bar where the owner has no DPP, and says why."""
    fake = roamd(wifi_scenario())
    t = tui()
    open_wifi_any(t)
    assert "easy connect" not in t.text_lines()[-1]
    t.key("e")
    said(t, "NetworkManager has no Wi-Fi Easy Connect.")
    golden("wifi-enroll-nm", t, theme="monochrome")
    assert calls(fake) == []


def test_refused_by_roamd_in_words(roamd, tui, golden):
    fake = roamd(wifi_scenario(backend="iwd", why="iwd has a station on wlan0"))
    t = tui()
    open_wifi_any(t)
    assert "e easy connect" in t.text_lines()[-1]
    fake.send(op="deny", uids=[0])
    t.key("e")
    said(t, "Cannot enroll:", screen="wifi-enroll")
    golden("wifi-enroll-refused", t, theme="high-contrast")


def test_enroll_failed_then_again(roamd, tui):
    fake = roamd(wifi_scenario(backend="wpa_supplicant", why="wpa_supplicant runs wlan0"))
    t = tui()
    open_enroll(t)
    said(t, "Scan this code", screen="wifi-enroll")
    fake.send(op="wifi_enroll", link=3, fail="Wi-Fi Easy Connect failed: No Auth Confirm "
                                             "received")
    said(t, "Wi-Fi Easy Connect failed: No Auth Confirm received", "r again",
         screen="wifi-enroll")
    t.key("r")
    said(t, "Scan this code", screen="wifi-enroll")
