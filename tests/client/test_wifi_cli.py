"""roam wifi against fake_roamd.py's org.roam1.WiFi (fake_wifi.py): the list, scan, joins
(open, WPA2, hidden, PEAP, a wrong passphrase then the right one on a terminal), forget,
autoconnect, join-uri, share as a QR code, the exit codes, and hostile SSIDs."""
import json
import os
import pty
import select
import subprocess
import time

import pytest

from fakebus import ROAM

NOW = 1_700_000_000_000_000
NETWORKS = [
    {"ssid": "Home", "signal": -48, "security": "wpa2", "passphrase": "correct horse",
     "known": True, "priority": 10, "band": "5 GHz", "bssids": 2},
    {"ssid": "Cafe Guest", "signal": -57, "security": "open", "band": "2.4 GHz",
     "portal": "http://portal.example/login"},
    {"ssid": "Neighbour", "signal": -66, "security": "wpa2", "passphrase": "not yours at all"},
    {"ssid": "Attic", "signal": -75, "security": "wpa3", "passphrase": "sae secret 1"},
    {"ssid": "eduroam", "signal": -62, "security": "enterprise", "identity": "alice@example.org",
     "password": "eap secret"},
    {"ssid": "Bunker", "signal": -70, "security": "wpa2", "passphrase": "hidden in plain",
     "hidden": True, "name": ""},
    {"ssid": "Office", "security": "wpa3", "in_range": False, "known": True,
     "autoconnect": True, "passphrase": "office pass", "shareable": False},
]
HOSTILE = [
    # ESC [ 31m, a right-to-left override, an invalid byte, then a bell
    {"ssid_hex": "1b5b33316d" + "41" + "e280ae" + "42" + "ff" + "07", "signal": -60,
     "security": "open"},
]


def scenario(networks=NETWORKS, **wifi):
    w = {"backend": "networkmanager", "why": "NetworkManager manages wlan0",
         "last_scan": NOW - 12_000_000, "networks": networks}
    w.update(wifi)
    return {"_now": NOW,
            "links": [{"Index": 3, "Name": "wlan0", "Bearer": "wifi", "State": "routable",
                       "Carrier": True, "_wifi": w},
                      {"Index": 2, "Name": "eth0", "Bearer": "ethernet"}]}


def run(env, *args, stdin=""):
    p = subprocess.run([ROAM, *args], env=dict(env, ROAM_TEST_NOW=str(NOW), LC_ALL="C.UTF-8"),
                       input=stdin, capture_output=True, text=True, timeout=30)
    return p


def calls(fake):
    return fake.send(op="wifi_calls")


def test_list_in_words(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "Wi-Fi on wlan0 · through NetworkManager · scanned 12s ago"
    rows = {line[2:26].strip(): line for line in lines[2:]}
    # bars AND words AND dBm; security in words
    assert "▂▄▆█ excellent -48" in rows["Home"] and "WPA2" in rows["Home"]
    assert "auto, priority 10" in rows["Home"]
    assert "open" in rows["Cafe Guest"] and "▂▄▆_ good -57" in rows["Cafe Guest"]
    assert "enterprise (802.1X)" in rows["eduroam"]
    assert "WPA3" in rows["Attic"] and "▂___ weak -75" in rows["Attic"]
    # known out of range is listed, last, and says so
    assert lines[-1].startswith("  Office") and "out of range" in lines[-1]
    # known in range come first
    assert lines[2].startswith("  Home")


def test_list_json(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi", "wlan0", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["link"] == "wlan0" and doc["backend"] == "networkmanager"
    by = {n["ssid"]: n for n in doc["networks"]}
    assert by["Home"]["signal"] == -48 and by["Home"]["signal_words"] == "excellent"
    assert by["Home"]["ssid_hex"] == "486f6d65" and by["Home"]["known"]
    assert by["Office"]["in_range"] is False and by["Office"]["signal_words"] == "out of range"


def test_hostile_ssid_shown_safely(bus, roamd):
    roamd(scenario(NETWORKS + HOSTILE))
    p = run(bus.env, "wifi")
    assert p.returncode == 0, p.stderr
    assert "\x1b" not in p.stdout and "\u202e" not in p.stdout and "\x07" not in p.stdout
    # the escape and the override each a visible '?', the broken byte as \xff
    assert "?[31mA?B\\xff?" in p.stdout
    doc = json.loads(run(bus.env, "wifi", "--json").stdout)
    hostile = [n for n in doc["networks"] if n["ssid_hex"].startswith("1b")][0]
    assert hostile["ssid"] == "?[31mA?B\\xff?"


def test_radio_off_and_no_owner(bus, roamd):
    roamd(scenario(radio="soft-blocked"))
    p = run(bus.env, "wifi")
    assert p.returncode == 0 and "Wi-Fi is off (rfkill: soft-blocked)." in p.stdout


def test_no_owner_says_why(bus, roamd):
    roamd(scenario(backend="connman", why="ConnMan manages wlan0; roam cannot join through "
                                          "ConnMan yet: use connmanctl"))
    p = run(bus.env, "wifi")
    assert p.returncode == 0
    assert "ConnMan manages wlan0; roam cannot join through ConnMan yet" in p.stdout
    # every method says it too (NotSupported), and nothing is joined
    p = run(bus.env, "wifi", "join", "Home", "--passphrase-file", "-", stdin="correct horse\n")
    assert p.returncode == 1
    assert "cannot join: ConnMan manages wlan0; roam cannot join through ConnMan" in p.stderr


def test_scan_waits_for_the_result(bus, roamd):
    fake = roamd(scenario(scan=[{"ssid": "Newcomer", "signal": -52, "security": "owe"}]))
    p = run(bus.env, "wifi", "scan")
    assert p.returncode == 0, p.stderr
    assert "scanned just now" in p.stdout.splitlines()[0] or "scanned 0s ago" in p.stdout
    assert "Newcomer" in p.stdout and "open, encrypted (OWE)" in p.stdout
    assert calls(fake) == [["Scan", 3, "", {}]]


def test_join_open_network_goes_to_the_portal(bus, roamd):
    fake = roamd(scenario())
    p = run(bus.env, "wifi", "join", "Cafe Guest")
    assert p.returncode == 0, p.stderr
    # the join ends, then the link's verdict after it: the portal
    assert p.stdout.splitlines()[1:] == [
        "Joined Cafe Guest.",
        "Behind a captive portal: log in at http://portal.example/login (roam portal wlan0, "
        "or roam portal browse wlan0)."]
    assert calls(fake) == [["Join", 3, "Cafe Guest", {}]]


def test_join_wpa2_from_passphrase_file(bus, roamd, tmp_path):
    fake = roamd(scenario())
    f = tmp_path / "pass"
    f.write_text("correct horse\n")
    p = run(bus.env, "wifi", "join", "Home", "--passphrase-file", str(f))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[:2] == ["Joining Home on wlan0...", "Joined Home."]
    assert lines[2].startswith("wlan0: online (") and len(lines) == 3
    assert calls(fake) == [["Join", 3, "Home", {"passphrase": 13}]]
    assert fake.send(op="wifi_joins")[0]["passphrases"] == ["correct horse"]
    # the passphrase never reaches the output
    assert "correct horse" not in p.stdout + p.stderr


def test_join_json(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi", "join", "Home", "--passphrase-file", "-", "--json",
            stdin="correct horse\n")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"link": "wlan0", "ssid": "Home", "join": 1,
                                    "result": "connected", "words": "Joined Home.",
                                    "verdict": "online", "reason": "ok", "portal_url": ""}


def test_wrong_passphrase_without_terminal_exits_4(bus, roamd):
    fake = roamd(scenario())
    p = run(bus.env, "wifi", "join", "Neighbour", "--passphrase-file", "-",
            stdin="a wrong guess\n")
    assert p.returncode == 4, p.stderr
    assert "Neighbour refused the passphrase." in p.stderr
    # asked again in place; with nobody to ask, the join is canceled
    assert [c[0] for c in calls(fake)] == ["Join", "JoinCancel"]


def test_wpa3_wrong_password_says_it_cannot_tell(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi", "join", "Attic", "--passphrase-file", "-", stdin="not the one\n")
    assert p.returncode == 4
    assert "Attic did not accept the password, or it is out of reach: WPA3 cannot tell " \
           "these apart." in p.stderr


def test_not_found_exits_5(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi", "join", "Nowhere")
    assert p.returncode == 5
    assert "No network named Nowhere answered (if it is hidden, join it as hidden)." in p.stderr
    # a hidden network is not found unless joined as hidden
    p = run(bus.env, "wifi", "join", "Bunker", "--passphrase-file", "-",
            stdin="hidden in plain\n")
    assert p.returncode == 5


def test_join_hidden(bus, roamd):
    fake = roamd(scenario())
    p = run(bus.env, "wifi", "join", "Bunker", "--hidden")
    assert p.returncode == 2 and "a hidden network needs --security" in p.stderr
    p = run(bus.env, "wifi", "join", "Bunker", "--hidden", "--security", "wpa2",
            "--passphrase-file", "-", stdin="hidden in plain\n")
    assert p.returncode == 0, p.stderr
    assert "Joined Bunker." in p.stdout
    assert calls(fake) == [["Join", 3, "Bunker", {"hidden": True, "security": "wpa2",
                                                  "passphrase": 15}]]


def test_join_peap(bus, roamd, tmp_path):
    fake = roamd(scenario())
    ca = tmp_path / "ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    p = run(bus.env, "wifi", "join", "eduroam", "--eap", "peap")
    assert p.returncode == 2 and "needs --identity" in p.stderr
    p = run(bus.env, "wifi", "join", "eduroam", "--eap", "peap", "--identity",
            "alice@example.org", "--ca-cert", str(ca), "--domain", "radius.example.org",
            "--passphrase-file", "-", stdin="wrong eap\n")
    assert p.returncode == 4
    assert "eduroam refused the user name or password (EAP failure)." in p.stderr
    p = run(bus.env, "wifi", "join", "eduroam", "--eap", "peap", "--identity",
            "alice@example.org", "--ca-cert", str(ca), "--domain", "radius.example.org",
            "--passphrase-file", "-", stdin="eap secret\n")
    assert p.returncode == 0, p.stderr
    assert calls(fake)[-1] == ["Join", 3, "eduroam", {
        "security": "enterprise", "password": 10, "eap": "peap",
        "identity": "alice@example.org", "ca-file": str(ca), "domain": "radius.example.org"}]


def test_secured_join_without_passphrase_or_terminal(bus, roamd):
    fake = roamd(scenario())
    p = run(bus.env, "wifi", "join", "Home")
    assert p.returncode == 1
    assert "Home needs a passphrase: give it with --passphrase-file" in p.stderr
    assert [c[0] for c in calls(fake)] == ["Join", "JoinCancel"]


def test_bad_passphrase_refused_by_roamd(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi", "join", "Home", "--passphrase-file", "-", stdin="short\n")
    assert p.returncode == 1
    assert "a passphrase has 8 to 63 characters" in p.stderr


class Terminal:
    """roam on a pseudo-terminal: what it prints, and keys typed at it."""

    def __init__(self, env, *args, typed_ahead=""):
        go_r, go_w = os.pipe()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.close(go_w)
            os.read(go_r, 1)  # roam starts once the keys typed ahead are waiting
            os.execve(ROAM, [ROAM, *args], dict(env, ROAM_TEST_NOW=str(NOW), LC_ALL="C.UTF-8"))
        os.close(go_r)
        self.out = b""
        if typed_ahead:
            self.type(typed_ahead)
        os.write(go_w, b"x")
        os.close(go_w)

    def expect(self, text, timeout=10):
        """Waits for text after what the last expect() matched."""
        deadline = time.monotonic() + timeout
        start = getattr(self, "seen", 0)
        while text.encode() not in self.out[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"no {text!r} in {self.out!r}"
            r, _, _ = select.select([self.fd], [], [], left)
            if r:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    assert text.encode() in self.out[start:], f"no {text!r} in {self.out!r}"
                    break
                self.out += chunk
        self.seen = self.out.index(text.encode(), start) + len(text)

    def type(self, text):
        os.write(self.fd, text.encode())

    def wait(self):
        try:
            while os.read(self.fd, 4096):
                pass
        except OSError:
            pass
        _, status = os.waitpid(self.pid, 0)
        return os.waitstatus_to_exitcode(status)


def test_wrong_passphrase_then_retry_in_place_on_a_terminal(bus, roamd):
    fake = roamd(scenario())
    # typed before roam asks: dropped, never part of the passphrase
    t = Terminal(bus.env, "wifi", "join", "Neighbour", typed_ahead="typed ahead")
    t.expect("Passphrase for Neighbour: ")
    t.type("a wrong guess\n")
    t.expect("Neighbour refused this passphrase. Check it (it is case-sensitive) and try again.")
    t.expect("Passphrase for Neighbour: ")
    t.type("not yours at all\n")
    t.expect("Joined Neighbour.")
    assert t.wait() == 0
    # no echo: the typed passphrases never appear on the terminal
    assert b"a wrong guess" not in t.out and b"not yours at all" not in t.out
    assert fake.send(op="wifi_joins")[0]["passphrases"] == ["a wrong guess", "not yours at all"]
    assert [c[0] for c in calls(fake)] == ["Join", "JoinSecret", "JoinSecret"]


def test_forget_and_autoconnect(bus, roamd):
    fake = roamd(scenario())
    p = run(bus.env, "wifi", "forget", "Neighbour")
    assert p.returncode == 5 and "wlan0 knows no network named Neighbour" in p.stderr
    p = run(bus.env, "wifi", "autoconnect", "Office", "off")
    assert p.returncode == 0 and "wlan0 joins Office only when asked." in p.stdout
    p = run(bus.env, "wifi", "forget", "Office")
    assert p.returncode == 0 and "Forgot Office on wlan0." in p.stdout
    assert calls(fake) == [["SetAutoconnect", 3, "Office", {"on": False}],
                           ["Forget", 3, "Office", {}]]
    # forgotten out of range: gone from the list
    assert "Office" not in run(bus.env, "wifi").stdout
    p = run(bus.env, "wifi", "autoconnect", "Home", "maybe")
    assert p.returncode == 2


def test_refused_exits_6(bus, roamd):
    fake = roamd(dict(scenario(), _deny_uids=[0]))
    p = run(bus.env, "wifi", "join", "Cafe Guest")
    assert p.returncode == 6 and "not allowed to join" in p.stderr
    p = run(bus.env, "wifi", "forget", "Home")
    assert p.returncode == 6
    assert calls(fake) == []
    # reading needs no authorization
    assert run(bus.env, "wifi").returncode == 0


def test_join_uri(bus, roamd):
    fake = roamd(scenario())
    uri = "WIFI:T:WPA;S:Home;P:correct horse;;"
    p = run(bus.env, "wifi", "join-uri", uri)
    assert p.returncode == 2 and "give it on standard input" in p.stderr
    p = run(bus.env, "wifi", "join-uri", "-", stdin=uri + "\n")
    assert p.returncode == 0
    assert p.stdout.splitlines() == ["Home: WPA2, passphrase given, on wlan0.",
                                     "Nothing done: add --yes to join."]
    assert calls(fake) == []
    p = run(bus.env, "wifi", "join-uri", "--yes", "-", stdin=uri + "\n")
    assert p.returncode == 0, p.stderr
    assert "Joined Home." in p.stdout
    assert calls(fake) == [["JoinUri", 3, "Home", {"passphrase": 13}]]
    # escapes as ZXing writes them; a wrong key exits 4
    p = run(bus.env, "wifi", "join-uri", "--yes", "-",
            stdin="WIFI:S:Neighbour;T:WPA;P:wrong\\;guess;;\n")
    assert p.returncode == 4
    assert fake.send(op="wifi_joins")[-1]["passphrases"] == ["wrong;guess"]
    p = run(bus.env, "wifi", "join-uri", "WIFI:S:Cafe Guest;;", "--yes")
    assert p.returncode == 0 and "Joined Cafe Guest" in p.stdout
    p = run(bus.env, "wifi", "join-uri", "WIFI:T:WPA;S:Home")
    assert p.returncode == 1 and "does not end with ';;'" in p.stderr
    p = run(bus.env, "wifi", "join-uri", "DPP:K:MDkw;;")
    assert p.returncode == 0 and "Nothing done" in p.stdout
    p = run(bus.env, "wifi", "join-uri", "--yes", "DPP:K:MDkw;;")
    assert p.returncode == 1 and ("NetworkManager cannot configure a device by DPP (Wi-Fi Easy "
                                  "Connect)") in p.stderr


def qr_modules(lines):
    """The module matrix of half-block lines (True: light)."""
    rows = []
    for line in lines:
        top, bottom = [], []
        for c in line:
            top.append(c in "█▀")
            bottom.append(c in "█▄")
        rows += [top, bottom]
    return rows


def test_share_draws_a_qr_code(bus, roamd):
    fake = roamd(scenario())
    p = run(bus.env, "wifi", "share", "Home")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[-1] == "WIFI:T:WPA;S:Home;P:correct horse;;"
    m = qr_modules(lines[:-1])
    size = len(lines[0])
    assert all(len(line) == size for line in lines[:-1])
    assert (size - 8 - 21) % 4 == 0  # version 1-40: 21 + 4k modules, quiet zone 4 a side
    # a finder pattern in three corners: dark 7x7 ring, light ring, dark 3x3 core
    q, w = 4, size - 8
    for ox, oy in ((q, q), (q + w - 7, q), (q, q + w - 7)):
        for y in range(7):
            for x in range(7):
                ring = x in (0, 6) or y in (0, 6)
                core = 2 <= x <= 4 and 2 <= y <= 4
                assert m[oy + y][ox + x] == (not (ring or core)), (ox, oy, x, y)
    # the quiet zone is light
    assert all(m[y][x] for y in range(4) for x in range(size))
    assert calls(fake) == [["Share", 3, "Home", {}]]
    j = json.loads(run(bus.env, "wifi", "share", "Home", "--json").stdout)
    assert j == {"link": "wlan0", "ssid": "Home", "uri": "WIFI:T:WPA;S:Home;P:correct horse;;"}


def test_share_refusals(bus, roamd):
    roamd(scenario())
    p = run(bus.env, "wifi", "share", "Office")
    assert p.returncode == 1 and "does not give out the key of Office" in p.stderr
    p = run(bus.env, "wifi", "share", "Cafe Guest")
    assert p.returncode == 5


def test_several_links_need_a_name(bus, roamd):
    s = scenario()
    s["links"].append({"Index": 4, "Name": "wlan1", "Bearer": "wifi",
                       "_wifi": {"networks": [{"ssid": "Other", "signal": -40}]}})
    roamd(s)
    p = run(bus.env, "wifi", "scan")
    assert p.returncode == 1 and "Several Wi-Fi links (wlan0, wlan1): name one" in p.stderr
    p = run(bus.env, "wifi", "wlan1")
    assert p.returncode == 0 and "Other" in p.stdout and "Home" not in p.stdout
    p = run(bus.env, "wifi", "eth0")
    assert p.returncode == 1 and "'eth0' is no Wi-Fi link" in p.stderr


@pytest.mark.parametrize("args,message", [
    (["join"], "needs one SSID"),
    (["join", "a" * 33], "has 1 to 32 bytes"),
    (["join", "X", "--eap", "tls", "--identity", "u"], "--eap takes peap or ttls"),
    (["scan", "--hidden"], "go with 'roam wifi join'"),
    (["join", "X", "--bogus"], "unknown option '--bogus'"),
    (["share", "Home", "--yes"], "--yes goes with 'roam wifi join-uri'"),
])
def test_usage_errors(bus, roamd, args, message):
    p = run(bus.env, "wifi", *args)
    assert p.returncode == 2 and message in p.stderr, p.stderr


def test_completions(bus, roamd, tmp_path):
    """bash offers the actions, the Wi-Fi links (not eth0), on|off and the EAP methods; fish
    the actions too."""
    from test_completion import FISH, bash_complete, shell_env
    roamd(scenario())
    assert bash_complete(bus.env, "roam wi")[0] == ["wifi"]
    assert bash_complete(bus.env, "roam wifi ")[0] == [
        "autoconnect", "enroll", "forget", "join", "join-uri", "list", "priority", "scan",
        "share", "wlan0"]
    assert bash_complete(bus.env, "roam wifi scan ")[0] == ["wlan0"]
    assert bash_complete(bus.env, "roam wifi enroll ")[0] == ["wlan0"]
    assert bash_complete(bus.env, "roam wifi autoconnect Home ")[0] == ["off", "on"]
    assert bash_complete(bus.env, "roam wifi join X --eap ")[0] == ["peap", "ttls"]
    assert "--passphrase-file" in bash_complete(bus.env, "roam wifi join X --pa")[0]
    env = dict(shell_env(bus.env), HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    p = subprocess.run(["fish", "--no-config", "-c", f"source {FISH}; "
                        "complete -C 'roam wifi '"], env=env, capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    offered = {line.split("\t")[0] for line in p.stdout.split("\n") if line}
    assert {"join", "share", "join-uri", "forget", "autoconnect", "priority", "scan"} <= offered


def test_every_action_has_json(bus, roamd):
    roamd(scenario())
    j = json.loads(run(bus.env, "wifi", "autoconnect", "Office", "off", "--json").stdout)
    assert j == {"link": "wlan0", "ssid": "Office", "action": "autoconnect",
                 "autoconnect": False}
    j = json.loads(run(bus.env, "wifi", "priority", "Office", "3", "--json").stdout)
    assert j == {"link": "wlan0", "ssid": "Office", "action": "priority", "priority": 3}
    j = json.loads(run(bus.env, "wifi", "forget", "Office", "--json").stdout)
    assert j == {"link": "wlan0", "ssid": "Office", "action": "forget"}
    p = run(bus.env, "wifi", "join-uri", "-", "--json",
            stdin="WIFI:T:WPA;S:Home;P:correct horse;H:true;;\n")
    assert json.loads(p.stdout) == {"link": "wlan0", "kind": "wifi", "ssid": "Home",
                                    "security": "wpa2", "hidden": True, "has_passphrase": True,
                                    "joined": False}
    assert "correct horse" not in p.stdout
    j = json.loads(run(bus.env, "wifi", "scan", "--json").stdout)
    # Office was forgotten out of range: gone
    assert j["link"] == "wlan0" and len(j["networks"]) == len(NETWORKS) - 1
