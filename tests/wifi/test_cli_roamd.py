# SPDX-License-Identifier: LGPL-2.1-or-later
"""End to end (issue 43): the real `roam wifi` against the real roamd, with each Wi-Fi owner
on the other side: wpa_supplicant's control socket (tests/wpa/fakewpa.py, the station
double), NetworkManager (tests/dbusmock/networkmanager_wifi.py) and iwd (tests/dbusmock/
iwd.py). A person joins an open network, a WPA2 one with --passphrase-file, gives a wrong
passphrase (exit 4) then the right one, joins a hidden network and forgets one; each join
prints the link's verdict after it. The owner got exactly the network asked for, and no
passphrase reaches roamd's log, its signals or roam's output."""
import json
import os
import re
import subprocess

import dbus
import pytest

import wpaenv_path  # noqa: F401 - tests/wpa on sys.path
import wpaenv
from doubles import IWD, MOCK, NM, NM_PATH, start_double, stop_double
from fakewpa import FakeWpa
from minienv import MiniEnv
from roambus import plain

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
WIFI = "org.roam1.WiFi"
PSK = "correct horse battery"
WRONG = "wrong horse battery"
HIDDEN_PSK = "hidden in plain"
# `wlan0: <verdict> (<reason>).` once roamd probed the link anew after the join
VERDICT = re.compile(r"^wlan0: [a-z][a-z ]+ \(.+\)\.$")


class World:
    """roamd in a MiniEnv beside one owner of wlan0 with three networks in range: Home
    (WPA2, PSK), Cafe (open) and Bunker (WPA2, hidden); extra: more networks as (ssid,
    security, signal dBm, key) (security wpa3 or enterprise, the key "user:password")."""

    def __init__(self, owner, extra=()):
        self.owner = owner
        self.extra = list(extra)
        self.env = MiniEnv("wifie2e")
        self.fake = self.double = None
        self.signals = []
        self.wifi_keys = {}
        self.state = None
        try:
            self.env.netns("ip link add wlan0 type veth peer name wlan0-peer")
            self.env.netns("ip link set wlan0-peer up")
            self.env.netns("ip link set wlan0 up")
            ctrl = os.path.join(self.env.dir, "ctrl")
            getattr(self, "start_" + owner)(ctrl)
            conf = wpaenv.config(ctrl, os.path.join(self.env.dir, "client"), **self.wifi_keys)
            self.env.start_roamd(conf + "[Bearers]\nwlan0=wifi\n")
            self.rb = self.env.rb
            self.rb.conn.add_signal_receiver(self._on_signal, path_keyword="path",
                                             member_keyword="member")
            want = {"wpa": "wpa_supplicant", "nm": "networkmanager", "iwd": "iwd"}[owner]
            self.rb.wait(lambda: self.prop("WiFiBackend") == want, what="the owner " + want)
        except Exception:
            self.close()
            raise

    def start_wpa(self, ctrl):
        self.fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
        self.fake.bsses = [
            {"id": 1, "bssid": "02:00:00:00:01:00", "freq": 5180, "level": -48,
             "flags": "[WPA2-PSK-CCMP][ESS]", "ssid": b"Home", "psk": PSK},
            {"id": 2, "bssid": "02:00:00:00:02:00", "freq": 2437, "level": -57,
             "flags": "[ESS]", "ssid": b"Cafe", "psk": None},
            {"id": 3, "bssid": "02:00:00:00:03:00", "freq": 2412, "level": -70,
             "flags": "[WPA2-PSK-CCMP][ESS]", "ssid": b"Bunker", "psk": HIDDEN_PSK,
             "hidden": True},
        ]
        flags = {"wpa3": "[WPA2-SAE-CCMP][ESS]", "enterprise": "[WPA2-EAP-CCMP][ESS]"}
        for i, (ssid, sec, dbm, key) in enumerate(self.extra):
            self.fake.bsses.append({"id": 4 + i, "bssid": "02:00:00:00:%02x:00" % (4 + i),
                                    "freq": 5200, "level": dbm, "flags": flags[sec],
                                    "ssid": ssid.encode(), "psk": key})

    def start_nm(self, ctrl):
        os.mkdir(ctrl)  # no wpa_supplicant: NetworkManager owns wlan0
        self.double, self.dbus = start_double(self.env.address, "networkmanager_wifi.py", NM)
        dev = self.dev = str(self.mock("AddWiFiDevice", "s", ["wlan0"]))
        # NM's Strength from dBm: its own scale, -100 + 0.6 x percent
        for ssid, sec, strength, key, hidden in [("Home", "wpa2", 80, PSK, False),
                                                 ("Cafe", "open", 70, "", False),
                                                 ("Bunker", "wpa2", 40, HIDDEN_PSK, True)] + [
                (ssid, sec, round((dbm + 100) / 0.6), key, False)
                for ssid, sec, dbm, key in self.extra]:
            self.mock("AddAccessPoint", "oaysysb", [dev, dbus.ByteArray(ssid.encode()), sec,
                                                    strength, key, hidden])

    def start_iwd(self, ctrl):
        os.mkdir(ctrl)
        # iwd's state directory: its provisioning files, roamd's IwdStateDirectory=
        self.state = os.path.join(self.env.dir, "iwd")
        os.mkdir(self.state, 0o700)
        self.wifi_keys["IwdStateDirectory"] = self.state
        self.double, self.dbus = start_double(self.env.address, "iwd.py", IWD,
                                              {"StateDirectory": self.state})
        dev = self.dev = str(self.mock("AddStation", "s", ["wlan0"]))
        kinds = {"wpa3": "psk", "enterprise": "8021x"}  # iwd names only the key type
        for ssid, kind, signal, key, hidden in [("Home", "psk", -4800, PSK, False),
                                                ("Cafe", "open", -5700, "", False),
                                                ("Bunker", "psk", -7000, HIDDEN_PSK, True)] + [
                (ssid, kinds[sec], dbm * 100, key, False) for ssid, sec, dbm, key in self.extra]:
            self.mock("AddNetwork", "ossisb", [dev, ssid, kind, signal, key, hidden])

    def mock(self, method, sig="", args=()):
        if self.owner == "nm":
            return self.dbus.call(NM_PATH, MOCK, method, sig, args, dest=NM)
        return self.dbus.call("/", MOCK, method, sig, args, dest=IWD)

    def _on_signal(self, *args, path=None, member=None):
        if path and path.startswith("/org/roam1"):
            self.signals.append((str(member), [plain(a) for a in args]))

    def roamd_signals(self):
        """Every signal roamd sent so far, as (member, args). Nothing runs the main loop while
        roam runs, so they wait in the connection: a Ping round trip to roamd orders all it
        sent before, then they are dispatched to _on_signal."""
        self.rb.sync()
        return list(self.signals)

    def prop(self, name):
        try:
            return str(self.rb.get(self.rb.link_path("wlan0"), WIFI, name))
        except Exception:
            return ""

    def roam(self, *args, stdin=None):
        return subprocess.run([ROAM, "wifi", *args], env=dict(self.env.env, LC_ALL="C.UTF-8"),
                              input=stdin, capture_output=True, text=True, timeout=60)

    def owner_got(self, secret):
        """Whether the owner was given secret as a network's key: wpa_supplicant in SET_NETWORK
        psk, NetworkManager in the connection roamd added or from roamd's agent, iwd from
        roamd's agent."""
        if self.fake:
            return any('%s "%s"' % (k, secret) in " ".join(self.fake.requests)
                       for k in ("psk", "sae_password"))
        if any(x[1] == secret for x in plain(self.mock("GetSecretsSeen"))):
            return True
        # the NM double records a secret in a call by its length only
        return self.owner == "nm" and any(
            c[0] == "AddAndActivateConnection2" and "'psk': '<secret %d bytes>'" % len(secret)
            in c[2] for c in plain(self.mock("GetCalls")))

    def owner_knows(self, ssid):
        """Whether the owner keeps a saved network (a profile) of ssid."""
        if self.fake:
            return any(n.get("ssid") == ssid for n in self.fake.networks.values())
        if self.owner == "nm":
            conns = plain(self.dbus.call(NM_PATH + "/Settings", NM + ".Settings",
                                         "ListConnections", dest=NM))
            return any(bytes(plain(self.dbus.call(c, NM + ".Settings.Connection",
                                                  "GetSettings", dest=NM))
                             ["802-11-wireless"]["ssid"]) == ssid.encode() for c in conns)
        objs = plain(self.dbus.call("/", "org.freedesktop.DBus.ObjectManager",
                                    "GetManagedObjects", dest=IWD))
        return any(i.get(IWD + ".KnownNetwork", {}).get("Name") == ssid for i in objs.values())

    def close(self):
        try:
            rc = self.env.stop_roamd()
            assert rc in (None, 0), "roamd exited with %s:\n%s" % (rc, self.env.log()[-4000:])
        finally:
            if self.fake:
                self.fake.close()
            if self.double:
                stop_double(self.double, self.dbus)
            self.env.close()


@pytest.fixture(params=["wpa", "nm", "iwd"])
def world(request):
    w = World(request.param)
    yield w
    w.close()


def joined(p, ssid):
    """The join's lines: Joining..., the JoinDone words, the verdict."""
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "Joining %s on wlan0..." % ssid, lines
    # every owner's words alike: the name, then the verdict
    assert lines[1].startswith("Joined %s" % ssid) and lines[1].endswith("."), lines[1]
    assert "((" not in lines[1] and "))" not in lines[1], lines[1]
    assert VERDICT.match(lines[2]), lines
    assert len(lines) == 3, lines
    return lines


def test_join_open_wpa2_wrong_then_right_hidden_forget(world, tmp_path):
    # open: nothing asked
    joined(world.roam("join", "Cafe"), "Cafe")
    # WPA2, the passphrase from a file
    f = tmp_path / "pass"
    f.write_text(WRONG + "\n")
    p = world.roam("join", "Home", "--passphrase-file", str(f))
    assert p.returncode == 4, p.stdout + p.stderr
    assert "Home refused the passphrase." in p.stderr
    f.write_text(PSK + "\n")
    joined(world.roam("join", "Home", "--passphrase-file", str(f)), "Home")
    assert world.owner_got(WRONG) and world.owner_got(PSK)
    # the verdict roam printed is the link's own
    doc = json.loads(world.roam("join", "Home", "--passphrase-file", "-", "--json",
                                stdin=PSK + "\n").stdout)
    assert doc["result"] == "connected" and doc["verdict"] == world.env.link_prop(
        "wlan0", "Connectivity"), doc
    # hidden: not found unless asked as hidden
    p = world.roam("join", "Bunker", "--hidden", "--security", "wpa2", "--passphrase-file", "-",
                   stdin=HIDDEN_PSK + "\n")
    joined(p, "Bunker")
    if world.fake:
        bunker = [n for n in world.fake.networks.values() if n.get("ssid") == "Bunker"]
        assert bunker and bunker[0].get("scan_ssid") == "1", world.fake.networks
    # forget
    assert "Home" in [n["ssid"] for n in known(world)] and world.owner_knows("Home")
    p = world.roam("forget", "Home")
    assert p.returncode == 0 and p.stdout == "Forgot Home on wlan0.\n", p.stdout + p.stderr
    assert "Home" not in [n["ssid"] for n in known(world)]
    assert not world.owner_knows("Home") and world.owner_knows("Bunker")
    # no secret anywhere but where it belongs
    log = world.env.log()
    for secret in (PSK, WRONG, HIDDEN_PSK):
        assert secret not in log
    clean_signals(world, (PSK, WRONG, HIDDEN_PSK),
                  ["connected", "wrong-key", "connected", "connected", "connected"])


def clean_signals(world, secrets, dones):
    """roamd's signals arrived (JoinDone with exactly the results dones, in order, and a
    JoinStep for each join that connected: an empty list fails) and none of them carries any
    of secrets."""
    signals_say(world.roamd_signals(), secrets, dones)


def signals_say(sigs, secrets, dones):
    """clean_signals() on signals collected before (a world closed since)."""
    got = [a[1] for m, a in sigs if m == "JoinDone"]
    assert got == list(dones), got
    stepped = {a[0] for m, a in sigs if m == "JoinStep"}
    assert {a[0] for m, a in sigs if m == "JoinDone" and a[1] == "connected"} <= stepped, sigs
    for secret in secrets:
        assert all(secret not in repr(a) for _m, a in sigs), secret


def known(world):
    p = world.roam("--json")
    assert p.returncode == 0, p.stderr
    return [n for n in json.loads(p.stdout)["networks"] if n.get("known")]


@pytest.fixture
def nm_world():
    w = World("nm")
    yield w
    w.close()


def test_peap_through_networkmanager(nm_world, tmp_path):
    """PEAP: the identity and the domain from the command line, the password from a file; a
    wrong password is refused in words (exit 4), the right one joins. (iwd: below, through
    its provisioning file.)"""
    w = nm_world
    w.mock("AddAccessPoint", "oaysysb", [w.dev, dbus.ByteArray(b"corp"), "enterprise", 60,
                                         "alice:s3cret", False])
    args = ["join", "corp", "--eap", "peap", "--identity", "alice", "--domain", "corp.example",
            "--passphrase-file", "-"]
    p = w.roam(*args, stdin="not it\n")
    assert p.returncode == 4, p.stdout + p.stderr
    assert "corp refused the user name or password" in p.stderr, p.stderr
    joined(w.roam(*args, stdin="s3cret\n"), "corp")
    assert "s3cret" not in w.env.log() and "not it" not in w.env.log()
    clean_signals(w, ("s3cret", "not it"), ["auth-failed", "connected"])


def test_joined_hidden_network_is_one_row(world):
    """A hidden network, once joined, is one row: in range, known, joined; the empty-named
    row of its beacon is not listed beside it (for wpa_supplicant: the AP's beacon entry
    without a name and its probe response's entry with it have the same BSSID)."""
    p = world.roam("join", "Bunker", "--hidden", "--security", "wpa2", "--passphrase-file", "-",
                   stdin=HIDDEN_PSK + "\n")
    joined(p, "Bunker")
    p = world.roam("--json")
    assert p.returncode == 0, p.stderr
    nets = json.loads(p.stdout)["networks"]
    rows = [n for n in nets if n["ssid"] == "Bunker"]
    assert len(rows) == 1, nets
    assert rows[0]["known"] and rows[0]["connected"] and rows[0]["in_range"], rows
    assert [n for n in nets if n["ssid_hex"] == ""] == [], nets
    # the plain list says it once too
    p = world.roam()
    assert p.returncode == 0, p.stderr
    assert len([ln for ln in p.stdout.splitlines() if "Bunker" in ln]) == 1, p.stdout


def owner_priority(world, ssid):
    """The owner's own priority of its saved network of ssid: wpa_supplicant's priority field,
    NetworkManager's connection.autoconnect-priority."""
    if world.fake:
        nets = [n for n in world.fake.networks.values() if n.get("ssid") == ssid]
        return [int(n.get("priority", 0)) for n in nets]
    conns = plain(world.dbus.call(NM_PATH + "/Settings", NM + ".Settings", "ListConnections",
                                  dest=NM))
    out = []
    for c in conns:
        s = plain(world.dbus.call(c, NM + ".Settings.Connection", "GetSettings", dest=NM))
        if bytes(s["802-11-wireless"]["ssid"]) == ssid.encode():
            out.append(int(s["connection"].get("autoconnect-priority", 0)))
    return out


def test_priority(world, tmp_path):
    """roam wifi priority SSID N through SetPriority: NetworkManager's autoconnect-priority,
    wpa_supplicant's priority of the SSID's saved network (then saved); iwd has none and
    roamd says so in words. The list shows the owner's value; --json says what was done."""
    f = tmp_path / "pass"
    f.write_text(PSK + "\n")
    joined(world.roam("join", "Home", "--passphrase-file", str(f)), "Home")
    p = world.roam("priority", "Home", "7")
    if world.owner == "iwd":
        assert p.returncode == 1, p.stdout + p.stderr
        assert p.stderr.strip().endswith(
            "iwd has no priority for known networks: it ranks them itself"), p.stderr
        assert p.stdout == ""
        return
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == "Home's priority on wlan0 is 7 (higher is joined first).\n"
    assert owner_priority(world, "Home") == [7]
    home = [n for n in known(world) if n["ssid"] == "Home"]
    assert home and home[0]["priority"] == 7, home
    assert [ln for ln in world.roam().stdout.splitlines() if "Home" in ln][0].endswith(
        "auto, priority 7")
    if world.fake:
        saved = [n for n in world.fake.saved.values() if n.get("ssid") == "Home"]
        assert saved and saved[0]["priority"] == "7", world.fake.saved
    p = world.roam("priority", "Home", "2", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"link": "wlan0", "ssid": "Home", "action": "priority",
                                    "priority": 2}
    assert owner_priority(world, "Home") == [2]
    # out of the owner's range: said before roamd is asked (2)
    too_big, words = (("1000", "NetworkManager takes a priority from -999 to 999.")
                      if world.owner == "nm" else
                      ("-1", "wpa_supplicant takes a priority from 0 to 1000000."))
    p = world.roam("priority", "Home", too_big)
    assert p.returncode == 2 and words in p.stderr, p.stdout + p.stderr
    assert owner_priority(world, "Home") == [2]
    if world.owner == "nm":  # a negative number is a number, not an option
        p = world.roam("priority", "Home", "-5")
        assert p.returncode == 0, p.stdout + p.stderr
        assert owner_priority(world, "Home") == [-5]
    # a network the owner does not know: 5, nothing asked of the owner
    p = world.roam("priority", "Cafe", "3")
    assert p.returncode == 5 and "wlan0 knows no network named Cafe" in p.stderr, p.stderr
    # not a number: 2, before roamd is asked
    for bad in (["Home", "high"], ["Home"], ["Home", "1", "2"], ["Home", "5x"]):
        p = world.roam("priority", *bad)
        assert p.returncode == 2, (bad, p.stdout + p.stderr)


def test_peap_phase2_and_anonymous_identity(world, tmp_path):
    """--phase2 and --anonymous-identity reach the owner: NetworkManager's 802-1x
    phase2-auth and anonymous-identity, wpa_supplicant's phase2 "auth=GTC" and
    anonymous_identity, iwd's provisioning file (EAP-PEAP-Phase2-Method=GTC, the anonymous
    identity as EAP-Identity outside the tunnel, the real one as the phase-2 identity)."""
    if world.fake:
        # This world's wlan0 is a veth (no phy80211): roamd asks key_mgmt IEEE8021X, as on a
        # wired port, which wpa_supplicant (and the double) matches only to a BSS without RSN.
        world.fake.bsses.append({"id": 9, "bssid": "02:00:00:00:09:00", "freq": 2462,
                                 "level": -60, "flags": "[ESS]", "ssid": b"corp", "psk": None})
    elif world.owner == "iwd":
        world.mock("AddNetwork", "ossisb", [world.dev, "corp", "8021x", -6000, "alice:s3cret",
                                            False])
    else:
        world.mock("AddAccessPoint", "oaysysb", [world.dev, dbus.ByteArray(b"corp"),
                                                 "enterprise", 60, "alice:s3cret", False])
    args = ["join", "corp", "--eap", "peap", "--identity", "alice", "--phase2", "GTC",
            "--anonymous-identity", "anon@corp.example", "--passphrase-file", "-"]
    joined(world.roam(*args, stdin="s3cret\n"), "corp")
    if world.fake:
        corp = [n for n in world.fake.networks.values() if n.get("ssid") == "corp"]
        assert corp and corp[0]["phase2"] == '"auth=GTC"', corp
        assert corp[0]["anonymous_identity"] == '"anon@corp.example"', corp
        assert corp[0]["eap"] == "PEAP" and corp[0]["identity"] == '"alice"', corp
        assert corp[0]["key_mgmt"] == "IEEE8021X", corp
    elif world.owner == "iwd":
        assert os.listdir(world.state) == ["corp.8021x"]
        assert open(os.path.join(world.state, "corp.8021x")).read() == (
            "[Security]\nEAP-Method=PEAP\nEAP-Identity=anon@corp.example\n"
            "EAP-PEAP-Phase2-Method=GTC\nEAP-PEAP-Phase2-Identity=alice\n"
            "[Settings]\nAutoConnect=true\n")
        assert [x[1] for x in plain(world.mock("GetSecretsSeen"))] == ["alice:s3cret"]
    else:
        conns = plain(world.dbus.call(NM_PATH + "/Settings", NM + ".Settings",
                                      "ListConnections", dest=NM))
        dot1x = [plain(world.dbus.call(c, NM + ".Settings.Connection", "GetSettings",
                                       dest=NM)).get("802-1x") for c in conns]
        dot1x = [d for d in dot1x if d]
        assert len(dot1x) == 1, dot1x
        assert dot1x[0]["phase2-auth"] == "gtc", dot1x
        assert dot1x[0]["anonymous-identity"] == "anon@corp.example", dot1x
    # without --eap, or a method no owner takes: 2, nothing asked
    for bad in (["--phase2", "pap"], ["--anonymous-identity", "x"],
                ["--eap", "ttls", "--identity", "a", "--phase2", "chap"]):
        p = world.roam("join", "corp", *bad)
        assert p.returncode == 2, (bad, p.stdout + p.stderr)
    assert "s3cret" not in world.env.log()


HOSTILE = "Evil\x1b[31m\u202eefaC\x07"  # ESC [31m, a right-to-left override, a bell
UNSAFE = ("\x1b", "\u202e", "\x07", "\ufffd")


CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


@pytest.fixture
def iwd_peap(tmp_path):
    w = World("iwd", extra=[("corp", "enterprise", -52, "alice:s3cret"),
                            ("lab", "enterprise", -60, "bob:b0b")])
    yield w
    w.close()


def profiles_read(w, name):
    return [(mode, text) for n, mode, text in plain(w.mock("GetProfilesRead")) if n == name]


def test_peap_through_iwd(iwd_peap, tmp_path):
    """PEAP through iwd: roamd writes iwd's provisioning file in IwdStateDirectory= (0600,
    without the password), iwd reads it and asks roamd's agent for the password
    (RequestUserPassword); a wrong one is refused in words (exit 4) and the file is removed;
    the right one joins and the file stays, as iwd reads it again."""
    w = iwd_peap
    ca = tmp_path / "ca.pem"
    ca.write_text(CA_PEM)
    args = ["join", "corp", "--eap", "peap", "--identity", "alice", "--ca-cert", str(ca),
            "--domain", "corp.example", "--passphrase-file", "-"]
    p = w.roam(*args, stdin="not it\n")
    assert p.returncode == 4, p.stdout + p.stderr
    assert "corp refused the user name or password" in p.stderr, p.stderr
    assert os.listdir(w.state) == []  # the join did not connect: the file is gone
    # iwd drops the KnownNetwork once its directory watch saw the file go
    w.rb.wait(lambda: not w.owner_knows("corp"), what="iwd forgetting corp")
    [(mode, text)] = profiles_read(w, "corp.8021x")
    assert mode == 0o600, oct(mode)
    assert text == ("[Security]\nEAP-Method=PEAP\nEAP-Identity=alice\n"
                    "EAP-PEAP-CACert=%s\nEAP-PEAP-ServerDomainMask=corp.example\n"
                    "EAP-PEAP-Phase2-Method=MSCHAPV2\nEAP-PEAP-Phase2-Identity=alice\n"
                    "[Settings]\nAutoConnect=true\n" % ca), text
    joined(w.roam(*args, stdin="s3cret\n"), "corp")
    assert os.listdir(w.state) == ["corp.8021x"]
    assert os.stat(os.path.join(w.state, "corp.8021x")).st_mode & 0o777 == 0o600
    assert [x[1] for x in plain(w.mock("GetSecretsSeen"))] == ["alice:not it", "alice:s3cret"]
    assert [c[1] for c in plain(w.mock("GetAgentCalls"))] == ["RequestUserPassword"] * 2
    clean_signals(w, ("s3cret", "not it"), ["auth-failed", "connected"])
    for secret in ("s3cret", "not it"):
        assert secret not in w.env.log()
        assert all(secret not in t for _m, t in profiles_read(w, "corp.8021x"))


def test_peap_through_iwd_never_over_the_admins_file(iwd_peap):
    """A provisioning file the admin wrote stays as it is: roamd joins through it (iwd asks
    the password for the user it names) and writes nothing."""
    w = iwd_peap
    path = os.path.join(w.state, "lab.8021x")
    admin = ("[Security]\nEAP-Method=PEAP\nEAP-Identity=anonymous@lab\n"
             "EAP-PEAP-Phase2-Method=MSCHAPV2\nEAP-PEAP-Phase2-Identity=bob\n")
    with open(path, "w") as f:
        f.write(admin)
    os.chmod(path, 0o600)
    w.rb.wait(lambda: any(n["ssid"] == "lab" and n.get("known") for n in known(w)),
              what="iwd reading the admin's lab.8021x")
    joined(w.roam("join", "lab", "--eap", "peap", "--identity", "bob", "--passphrase-file",
                  "-", stdin="b0b\n"), "lab")
    assert open(path).read() == admin
    assert sorted(os.listdir(w.state)) == ["lab.8021x"]
    assert [c[1] for c in plain(w.mock("GetAgentCalls"))] == ["RequestUserPassword"]


@pytest.mark.parametrize("eap,phase2,method", [
    ("ttls", "pap", "Tunneled-PAP"),
    ("ttls", None, "Tunneled-MSCHAPv2"),
    ("ttls", "mschapv2", "Tunneled-MSCHAPv2"),
    ("peap", "md5", "MD5"),
    ("peap", None, "MSCHAPV2"),
])
def test_phase2_as_iwd_names_it(iwd_peap, eap, phase2, method):
    """--phase2 means inside TTLS what NetworkManager's phase2-auth and wpa_supplicant's
    "auth=" mean there: TTLS's own authentication without EAP, which iwd names Tunneled-*;
    inside PEAP an EAP method, by its name. iwd (the double checks as eap-ttls.c and
    eap-peap.c do) takes the file and joins."""
    w = iwd_peap
    args = ["join", "lab", "--eap", eap, "--identity", "bob", "--passphrase-file", "-"]
    joined(w.roam(*args + (["--phase2", phase2] if phase2 else []), stdin="b0b\n"), "lab")
    M = eap.upper()
    assert open(os.path.join(w.state, "lab.8021x")).read() == (
        "[Security]\nEAP-Method=%s\nEAP-Identity=bob\nEAP-%s-Phase2-Method=%s\n"
        "EAP-%s-Phase2-Identity=bob\n[Settings]\nAutoConnect=true\n" % (M, M, method, M))
    assert [x[1] for x in plain(w.mock("GetSecretsSeen"))] == ["bob:b0b"]


@pytest.mark.parametrize("eap,phase2,words", [
    ("peap", "pap", "PEAP carries only EAP methods inside (MSCHAPV2, GTC, MD5), and PAP is "
     "none: iwd refuses it; PAP is for TTLS"),
    ("ttls", "gtc", "TTLS's phase 2 is PAP or MSCHAPV2 without EAP, and GTC is an EAP method: "
     "roamd asks it of iwd only inside PEAP"),
    ("ttls", "md5", "and MD5 is an EAP method"),
])
def test_phase2_iwd_cannot_do_is_refused_in_words(iwd_peap, eap, phase2, words):
    """What iwd would refuse (PAP inside PEAP: iwd looks it up as an EAP method) or read as
    something else (GTC or MD5 as TTLS's phase 2 without EAP: there is none) is refused in
    words, exit 6 as the other refusals; no file is written and iwd is not asked."""
    w = iwd_peap
    p = w.roam("join", "corp", "--eap", eap, "--identity", "alice", "--phase2", phase2,
               "--passphrase-file", "-", stdin="s3cret\n")
    assert p.returncode == 6, p.stdout + p.stderr
    assert words in p.stderr, p.stderr
    assert os.listdir(w.state) == []
    calls = [c[0] for c in plain(w.mock("GetCalls"))]
    assert "RegisterAgent" in calls and "Connect" not in calls, calls
    assert plain(w.mock("GetSecretsSeen")) == []


def test_hidden_8021x_through_iwd_refused_in_words(iwd_peap):
    """iwd joins a hidden 802.1X network only by autoconnect from its file: roamd says so
    (NotSupported, exit 1 as the other refusals roamd answers at once) and asks iwd nothing."""
    w = iwd_peap
    p = w.roam("join", "Secret Lab", "--hidden", "--security", "enterprise", "--eap", "peap",
               "--identity", "alice", "--passphrase-file", "-", stdin="s3cret\n")
    assert p.returncode == 1, p.stdout + p.stderr
    assert ("iwd joins a hidden 802.1X network only by autoconnect, from a provisioning file "
            "in its state directory") in p.stderr, p.stderr
    assert os.listdir(w.state) == []
    calls = [c[0] for c in plain(w.mock("GetCalls"))]
    assert "ConnectHiddenNetwork" not in calls and "Connect" not in calls, calls


SAE = "sae secret pw"
# A wrong WPA3 password as each owner can tell it (docs/wifi.md): wpa_supplicant says only
# CONN_FAILED for SAE; NetworkManager and iwd ask again (JoinNeedsSecret wrong-key), and a
# client with no other passphrase ends the join as the key refused.
SAE_WRONG = {
    "wpa": ("wrong-key-or-out-of-range",
            "Vault did not accept the password, or it is out of reach: WPA3 cannot tell these "
            "apart"),
    "nm": ("wrong-key", "Vault refused the passphrase."),
    "iwd": ("wrong-key", "Vault refused the passphrase."),
}


@pytest.fixture(params=["wpa", "nm", "iwd"])
def sae_world(request):
    w = World(request.param, extra=[("Vault", "wpa3", -55, SAE)])
    yield w
    w.close()


def test_wpa3_sae_join_through_each_owner(sae_world):
    """WPA3-Personal (SAE only): a wrong password ends in the owner's words (exit 4), the
    right one joins; the owner used SAE (wpa_supplicant: key_mgmt SAE with ieee80211w 2, the
    double skipping a BSS that requires PMF otherwise; NetworkManager: sae picked from the
    AP's flags; iwd: its psk network, the password through roamd's agent)."""
    w = sae_world
    assert [n["security"] for n in json.loads(w.roam("--json").stdout)["networks"]
            if n["ssid"] == "Vault"] == ["psk" if w.owner == "iwd" else "wpa3"]
    result, words = SAE_WRONG[w.owner]
    p = w.roam("join", "Vault", "--passphrase-file", "-", "--json", stdin="not the pw\n")
    assert p.returncode == 4, p.stdout + p.stderr
    assert json.loads(p.stdout)["result"] == result, p.stdout
    p = w.roam("join", "Vault", "--passphrase-file", "-", stdin="not the pw\n")
    assert p.returncode == 4 and words in p.stderr, p.stdout + p.stderr
    joined(w.roam("join", "Vault", "--passphrase-file", "-", stdin=SAE + "\n"), "Vault")
    assert w.owner_got(SAE)
    if w.fake:
        sets = [r.split(" ", 2)[2] for r in w.fake.requests if r.startswith("SET_NETWORK")]
        assert "key_mgmt SAE" in sets and "ieee80211w 2" in sets, sets
        assert not any(s.startswith("psk ") for s in sets), sets
    elif w.owner == "nm":
        conns = plain(w.dbus.call(NM_PATH + "/Settings", NM + ".Settings", "ListConnections",
                                  dest=NM))
        kms = [plain(w.dbus.call(c, NM + ".Settings.Connection", "GetSettings", dest=NM))
               .get("802-11-wireless-security", {}).get("key-mgmt") for c in conns]
        assert "sae" in kms, kms
    else:
        assert [x[1] for x in plain(w.mock("GetSecretsSeen"))][-1] == SAE
    log = w.env.log()
    assert SAE not in log and "not the pw" not in log
    clean_signals(w, (SAE, "not the pw"), [result, result, "connected"])


@pytest.fixture
def iwd_world():
    w = World("iwd")
    yield w
    w.close()


def roam_bytes(world, *args, stdin=None):
    """roam with argv as bytes (an SSID that is not UTF-8), its output as bytes."""
    return subprocess.run([ROAM.encode(), b"wifi", *args],
                          env=dict(world.env.env, LC_ALL="C.UTF-8"), input=stdin,
                          capture_output=True, timeout=60)


def test_iwd_hostile_ssid_said_safely(iwd_world):
    """A network iwd names with control and bidi characters: joined, not found, refused, in
    roamd's words (JoinStep, JoinDone, errors) and roam's output shown safely, as the
    NetworkManager and wpa_supplicant paths do; an SSID that is not UTF-8 (iwd names networks
    by text, so it cannot be asked for) is refused in words before iwd is asked."""
    w = iwd_world
    w.mock("AddNetwork", "ossisb", [w.dev, HOSTILE, "open", -5000, "", False])
    w.mock("AddNetwork", "ossisb", [w.dev, HOSTILE + "2", "psk", -5000, PSK, False])
    outs = []
    p = w.roam("join", HOSTILE)
    outs.append(p)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Joined Evil" in p.stdout, p.stdout
    p = w.roam("join", HOSTILE + "2", "--passphrase-file", "-", stdin=WRONG + "\n")
    outs.append(p)
    assert p.returncode == 4, p.stdout + p.stderr
    p = w.roam("join", HOSTILE + "x", "--passphrase-file", "-", stdin=PSK + "\n")
    outs.append(p)
    assert p.returncode == 5, p.stdout + p.stderr
    assert "Evil" in p.stderr, p.stderr
    p = w.roam("join", HOSTILE + "x", "--hidden", "--security", "open")
    outs.append(p)
    assert p.returncode == 5, p.stdout + p.stderr
    outs.append(w.roam())
    outs.append(w.roam("forget", HOSTILE + "2"))
    for p in outs:
        for bad in UNSAFE:
            assert bad not in p.stdout and bad not in p.stderr, (bad, p.stdout, p.stderr)
    # roamd's own words (JoinDone's, as --json gives them): the SSID escaped as the other
    # owners' words have it, no control or bidi character
    for args, result in ((["join", HOSTILE], "connected"),
                         (["join", HOSTILE + "x"], "not-found")):
        doc = json.loads(w.roam(*args, "--json").stdout)
        assert doc["result"] == result, doc
        assert not any(b in doc["words"] for b in UNSAFE), doc
        assert "Evil\\x1b[31m" in doc["words"], doc
    # not UTF-8: refused in words, before iwd is asked; the hidden way too
    for extra in ([], [b"--hidden", b"--security", b"open"]):
        p = roam_bytes(w, b"join", b"Bad\xff\xfe", *extra)
        assert p.returncode == 1, p
        assert p.stderr == (b"roam: cannot join: iwd names networks by text, and this name "
                            b"is not UTF-8\n"), p.stderr
        assert b"\xff" not in p.stdout + p.stderr
    assert not [c for c in plain(w.mock("GetCalls")) if "Bad" in repr(c)]
