# SPDX-License-Identifier: LGPL-2.1-or-later
"""`roam --plain` and Wi-Fi (org.roam1.WiFi through fake_wifi.py): `wifi` lists the networks
one a line in words, `wifi join NAME` says the join's steps, asks the passphrase on the next
line, says a refused one and asks again, then the end and the link's verdict as lines;
forget, autoconnect and scan; a hostile SSID is said safely. An 802.1X network asks its EAP
method, user name, anonymous identity, CA file, server domain and password one a line and
joins with them; a refused password is asked again with the user name kept."""
from test_plain import plain  # noqa: F401 (the fixture)

NETWORKS = [
    {"ssid": "Home", "signal": -48, "security": "wpa2/wpa3", "passphrase": "correct horse",
     "known": True, "band": "5 GHz", "connected": True},
    {"ssid": "Neighbour", "signal": -66, "security": "wpa2", "passphrase": "not yours at all",
     "band": "2.4 GHz"},
    {"ssid": "Office", "security": "wpa3", "in_range": False, "known": True,
     "autoconnect": True, "passphrase": "office pass"},
    {"ssid_hex": "1b5b33316d41e280ae42ff07", "signal": -60, "security": "open"},
    {"ssid": "corp", "signal": -62, "security": "enterprise", "identity": "alice",
     "password": "eap secret", "eap_retry": True},
]
WLAN0 = {"Index": 3, "Name": "wlan0", "Bearer": "wifi", "Carrier": True, "State": "routable",
         "Connectivity": "online", "ConnectivityReason": "ok", "WiFiState": "COMPLETED",
         "WiFiSSID": "Home", "WiFiSignal": -48,
         "_wifi": {"backend": "iwd", "why": "iwd's station runs wlan0", "networks": NETWORKS,
                   "scan": [{"ssid": "Newcomer", "signal": -55, "security": "owe"}]}}
SCENARIO = {"manager": {"State": "online", "BestLink": "/org/roam1/link/3"}, "links": [WLAN0]}


def test_plain_wifi_list_join_retry(roamd, plain):
    fake = roamd(SCENARIO)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wifi")
    p.expect(r"Wi-Fi on wlan0 through iwd, not scanned yet:")
    p.expect(r"Home: excellent -48 dBm, WPA2/WPA3, 5 GHz, known, joined by itself, joined now")
    # the hostile name: controls and the override as '?', the broken byte as \xff
    p.expect(r"\?\[31mA\?B\\xff\?: good -60 dBm, open")
    p.expect(r"Neighbour: fair -66 dBm, WPA2, 2\.4 GHz")
    p.expect(r"Office: out of range, WPA3, known, joined by itself")
    p.send("wifi join Neighbour")
    p.expect(r"Joining Neighbour on wlan0\.\.\.")
    p.expect(r"Passphrase for Neighbour \(the next line, not shown; an empty line cancels\):")
    p.send("a wrong guess")
    p.expect(r"Neighbour refused this passphrase\. Check it \(it is case-sensitive\) and try "
             r"again\.")
    p.expect(r"Passphrase for Neighbour .*")
    p.send("not yours at all")
    p.expect(r"Joined Neighbour\.")
    assert fake.send(op="wifi_joins")[0]["passphrases"] == ["a wrong guess", "not yours at all"]
    assert not any("not yours" in line or "wrong guess" in line for line in p.lines)


def test_plain_wifi_join_8021x(roamd, plain, tmp_path):
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    fake = roamd(SCENARIO)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wifi join corp")
    p.expect(r"corp is an 802\.1X \(enterprise\) network\. EAP method, peap or ttls \(empty: "
             r"peap\):")
    p.send("leap")
    p.expect(r"The EAP method is peap or ttls\.")
    p.send("ttls")
    p.expect(r"User name \(an empty line cancels\):")
    p.send("alice")
    p.expect(r"Anonymous identity, the outer name \(empty: none\):")
    p.send("anonymous@example.org")
    p.expect(r"CA file, the server's CA certificate in PEM \(empty: the system's bundle\):")
    p.send(str(tmp_path / "nope.pem"))
    p.expect(r"Cannot use the CA file .*nope\.pem: No such file or directory\.")
    p.expect(r"CA file, .*")
    p.send(str(ca))
    p.expect(r"Server domain, the name its certificate must carry \(empty: not checked\):")
    p.send("radius.example.org")
    p.expect(r"Password for corp \(the next line, not shown; an empty line cancels\):")
    p.send("not it")
    p.expect(r"Joining corp on wlan0\.\.\.")
    p.expect(r"corp refused this user name or password\. Check it \(it is case-sensitive\) and "
             r"try again\.")
    p.expect(r"Password for corp .*")
    p.send("eap secret")
    p.expect(r"Joined corp\.")
    assert fake.send(op="wifi_calls") == [
        ["Join", 3, "corp", {"security": "enterprise", "password": 6, "identity": "alice",
                             "eap": "ttls", "anonymous-identity": "anonymous@example.org",
                             "ca-file": str(ca), "domain": "radius.example.org"}],
        ["JoinSecret", 3, "corp", {"password": 10, "identity": "alice"}]]
    assert not any("eap secret" in line or "not it" in line for line in p.lines)


def test_plain_wifi_manage_and_scan(roamd, plain):
    fake = roamd(SCENARIO)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wifi autoconnect Office off")
    p.expect(r"Changed how Office is joined\.")
    p.send("wifi forget Office")
    p.expect(r"Forgot Office\.")
    p.send("wifi scan")
    p.expect(r"Scan on wlan0 done\.")
    p.expect(r"Wi-Fi on wlan0 through iwd, scanned .*:")
    p.expect(r"Newcomer: good -55 dBm, open, encrypted \(OWE\)")
    assert [c[0] for c in fake.send(op="wifi_calls")] == ["SetAutoconnect", "Forget", "Scan"]
    p.send("wifi join Nowhere")
    p.expect(r"No network named Nowhere here \(wifi lists them\)\.")
    p.send("wifi eth9")
    p.expect(r"eth9 is no Wi-Fi link\.")


def test_plain_wifi_priority(roamd, plain):
    """wifi priority NAME N through SetPriority (NetworkManager has one); the list says it;
    iwd refuses in words (roamd's), and a word that is no number is asked again."""
    nm = dict(WLAN0, _wifi=dict(WLAN0["_wifi"], backend="networkmanager",
                                why="NetworkManager manages wlan0"))
    fake = roamd({"manager": SCENARIO["manager"], "links": [nm]})
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wifi priority Office high")
    p.expect(r"Say: wifi priority NAME N \(a whole number, higher is joined first\)\.")
    p.send("wifi")  # the owner known once the list was read: its range said before asking
    p.expect(r"Office: out of range, WPA3, known, joined by itself$")
    p.send("wifi priority Office 1000")
    p.expect(r"NetworkManager takes a priority from -999 to 999\.")
    p.send("wifi priority Office 5")
    p.expect(r"Office's priority is 5 \(higher is joined first\)\.")
    p.send("wifi scan")  # the list read again, and said
    p.expect(r"Scan on wlan0 done\.")
    p.expect(r"Office: out of range, WPA3, known, joined by itself, priority 5")
    assert [c for c in fake.send(op="wifi_calls") if c[0] == "SetPriority"] == [
        ["SetPriority", 3, "Office", {"priority": 5}]]


def test_plain_wifi_priority_iwd_refuses(roamd, plain):
    roamd(SCENARIO)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wifi priority Office 5")
    p.expect(r"roamd refused: iwd orders known networks itself: no priority")


def test_plain_wifi_enroll(roamd, plain):
    """wifi enroll: the code as text (a screen reader reads it; no drawing), the wait, then
    the join of what the phone sent, in words; a failed exchange said too."""
    fake = roamd(SCENARIO)
    p = plain()
    p.expect(r"State: Online via wlan0 \(wifi\)")
    p.send("wifi enroll")
    p.expect(r"Wi-Fi Easy Connect code of wlan0 \(type or show it to a phone that is on the "
             r"network; waiting up to 2 minutes\): DPP:C:81/1;M:02726d000030;V:2;K:\S+;;")
    p.expect(r"Waiting: waiting for a phone or another configurator to scan this device's "
             r"code\.\.\.")
    fake.send(op="wifi_enroll", link=3, ssid="Neighbour")
    p.expect(r"Joining the network the phone sent: associating\.\.\.")
    p.expect(r"Joined Neighbour\.")
    p.send("wifi enroll")
    p.expect(r"Waiting: .*")
    fake.send(op="wifi_enroll", link=3, fail="Wi-Fi Easy Connect failed: No Auth Confirm received")
    p.expect(r"Wi-Fi Easy Connect failed: No Auth Confirm received")
    assert [c[0] for c in fake.send(op="wifi_calls")] == ["Enroll", "Enroll"]
