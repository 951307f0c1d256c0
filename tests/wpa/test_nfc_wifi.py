"""An NFC tag's WiFi network handed to wpa_supplicant (issue 16): ImportNdef(apply) and
`roam nfc import --yes` add the tag's credential with ADD_NETWORK / SET_NETWORK /
ENABLE_NETWORK / SAVE_CONFIG over the control socket and answer once wpa_supplicant did.
Against the protocol double (fakewpa.py, checked byte for byte against the real daemon in
test_fake_vs_real.py): the exact commands, every failure (FAIL, UNKNOWN COMMAND, no answer, no
wpa_supplicant) as a clear error that leaves no network behind, and a malformed WSC record
refused before anything is sent. Against Debian's real wpa_supplicant (-Dwired on a veth in
the test's namespace): the tag ends as a configured, saved network."""
import os
import subprocess

import dbus
import pytest

from busutil import RoamBus
from fakewpa import FakeWpa
from minienv import MiniEnv
from realwpa import RealWpa
from wpactl import WpaCtl
import wpaenv

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
NDEF = os.path.join(TOP, "tests/unit/ndef")
BT, BT_PATH = "org.roam1.Bluetooth", "/org/roam1/bluetooth"


def tag(name):
    with open(os.path.join(NDEF, name)) as f:
        return bytes.fromhex("".join(f.read().split()))


PSK_TAG = tag("wpas-config-token-psk.hex")  # ssid "roam-test-net", "correct horse battery"


class Env:
    def __init__(self, real=False, timeout="3"):
        self.env = MiniEnv("nfcwifi")
        self.wpa = self.fake = None
        ctrl = os.path.join(self.env.dir, "ctrl")
        self.env.netns("ip link add wlan0 type veth peer name wlan0-peer")
        self.env.netns("ip link set wlan0-peer up")
        self.env.netns("ip link set wlan0 up")
        if real:
            self.wpa = RealWpa(self.env.name, "wlan0", ctrl, ssid=None,
                               update_config=True).start()
        else:
            self.fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
        wpaenv.start_roamd(self.env, ctrl, RequestTimeout=timeout)
        self.bus = RoamBus(self.env.address)
        self.bus.wait(lambda: self.bus.link_prop("wlan0", "WiFiState") != "",
                      what="roamd attached to wpa_supplicant on wlan0")

    def import_ndef(self, data, apply=True):
        kind, items = self.bus.call(BT_PATH, BT, "ImportNdef", dbus.ByteArray(data), apply)
        return str(kind), [(str(k), {str(a): str(b) for a, b in d.items()}) for k, d in items]

    def last_event(self):
        return str(self.bus.get(BT_PATH, BT, "LastEvent"))

    def roam(self, *args, input=None):
        return subprocess.run([ROAM, *args], env=self.env.env, capture_output=True, text=True,
                              input=input, timeout=30)

    def close(self):
        try:
            wpaenv.stop_roamd(self.env)
            # No key in roamd's log, whatever happened.
            assert "correct horse battery" not in self.env.log()
        finally:
            if self.fake:
                self.fake.close()
            if self.wpa:
                self.wpa.close()
            self.env.close()


@pytest.fixture
def fake():
    e = Env()
    try:
        yield e
    finally:
        e.close()


def sent(fake):
    """The commands roamd sent about networks, in order."""
    return [r for r in fake.fake.requests
            if r.split(" ")[0] in ("ADD_NETWORK", "SET_NETWORK", "ENABLE_NETWORK",
                                   "REMOVE_NETWORK", "SAVE_CONFIG")]


def test_tag_becomes_a_network(fake):
    kind, cs = fake.import_ndef(PSK_TAG)
    assert kind == "tag"
    assert cs == [("wifi", {"power": "unknown", "ssid": "roam-test-net", "security": "wpa2-psk",
                            "key": "given",
                            "action": "added to wpa_supplicant on wlan0 as network 0, saved"})]
    assert sent(fake) == [
        "ADD_NETWORK", "SET_NETWORK 0 ssid 726f616d2d746573742d6e6574",
        "SET_NETWORK 0 key_mgmt WPA-PSK", "SET_NETWORK 0 proto RSN",
        'SET_NETWORK 0 psk "correct horse battery"', "ENABLE_NETWORK 0", "SAVE_CONFIG"]
    assert fake.fake.saved == {0: {"disabled": "0", "ssid": "roam-test-net",
                                   "key_mgmt": "WPA-PSK", "proto": "RSN",
                                   "psk": "correct horse battery"}}
    assert fake.last_event() == ('The WiFi network "roam-test-net" from an NFC tag was added to '
                                 "wpa_supplicant on wlan0")


def test_open_network_and_summary_only(fake):
    # Without apply nothing is sent.
    _, cs = fake.import_ndef(tag("wpas-config-token-open.hex"), apply=False)
    assert cs[0][1]["action"] == "none" and sent(fake) == []
    _, cs = fake.import_ndef(tag("wpas-config-token-open.hex"))
    assert cs[0][1]["action"] == "added to wpa_supplicant on wlan0 as network 0, saved"
    assert fake.fake.networks[0]["key_mgmt"] == "NONE"
    assert fake.fake.networks[0]["ssid"] == "cafe open"


def test_not_saved_without_update_config(fake):
    fake.fake.update_config = False
    _, cs = fake.import_ndef(PSK_TAG)
    assert cs[0][1]["action"] == ("added to wpa_supplicant on wlan0 as network 0, not saved "
                                  "(SAVE_CONFIG failed: update_config=0 or a read-only file)")
    assert fake.fake.networks[0]["psk"] == "correct horse battery"


@pytest.mark.parametrize("step,reply,words", [
    ("ADD_NETWORK", "FAIL\n", "refused ADD_NETWORK (FAIL)"),
    ("ADD_NETWORK", "UNKNOWN COMMAND\n", "refused ADD_NETWORK (UNKNOWN COMMAND)"),
    ("SET_NETWORK psk", "FAIL\n", "refused the network's psk (FAIL)"),
    ("ENABLE_NETWORK", "FAIL\n", "refused ENABLE_NETWORK (FAIL)"),
])
def test_refusal_is_an_error_and_changes_nothing(fake, step, reply, words):
    fake.fake.fail[step] = reply
    with pytest.raises(dbus.DBusException) as e:
        fake.import_ndef(PSK_TAG)
    assert e.value.get_dbus_name() == "org.roam1.Error.Failed"
    msg = e.value.get_dbus_message()
    assert msg == f"wpa_supplicant on wlan0 {words}; nothing was changed."
    assert fake.fake.networks == {}  # what was added is removed again
    assert fake.fake.saved is None
    if step != "ADD_NETWORK":
        assert sent(fake)[-1] == "REMOVE_NETWORK 0"
    assert fake.last_event() == f"The WiFi network of an NFC tag was not added: {msg}"


def test_no_answer_is_an_error(fake):
    fake.fake.hold.add("SET_NETWORK")
    with pytest.raises(dbus.DBusException) as e:
        fake.import_ndef(PSK_TAG)
    # RequestTimeout=3: the client gives up, and cannot say what the daemon kept.
    assert "wpa_supplicant on wlan0 did not answer in time" in e.value.get_dbus_message()
    assert "may keep what it added" in e.value.get_dbus_message()


def test_no_wpa_supplicant_sends_nothing(fake):
    fake.fake.stop()
    fake.bus.wait(lambda: fake.bus.link_prop("wlan0", "WiFiState") == "", what="socket gone")
    with pytest.raises(dbus.DBusException, match="No WiFi interface is run by wpa_supplicant"):
        fake.import_ndef(PSK_TAG)
    r = fake.roam("nfc", "import", "-", "--yes",
                  input=open(os.path.join(NDEF, "wpas-config-token-psk.hex")).read())
    assert r.returncode != 0
    assert "No WiFi interface is run by wpa_supplicant" in r.stderr


def test_malformed_wsc_record_sends_nothing(fake):
    # A WSC record whose Credential attribute claims more bytes than the record holds.
    payload = bytes.fromhex("100e00ff1045000461626364")
    rtype = b"application/vnd.wfa.wsc"
    msg = bytes([0xd2, len(rtype), len(payload)]) + rtype + payload
    with pytest.raises(dbus.DBusException) as e:
        fake.import_ndef(msg)
    assert e.value.get_dbus_name() == "org.roam1.Error.InvalidArguments"
    assert sent(fake) == []
    # A key wpa_supplicant cannot take is refused before anything is sent too.
    cred = (b"\x10\x26\x00\x01\x01" + b"\x10\x45\x00\x02ab" + b"\x10\x03\x00\x02\x00\x20"
            + b"\x10\x0f\x00\x02\x00\x08" + b"\x10\x27\x00\x03abc"
            + b"\x10\x20\x00\x06" + bytes(6))
    payload = b"\x10\x0e" + len(cred).to_bytes(2, "big") + cred
    msg = bytes([0xd2, len(rtype), len(payload)]) + rtype + payload
    with pytest.raises(dbus.DBusException, match="is not a WPA key .*Nothing was changed"):
        fake.import_ndef(msg)
    assert sent(fake) == []


def test_roam_nfc_import_yes_says_what_happened(fake):
    r = fake.roam("nfc", "import", "-", "--yes",
                  input=open(os.path.join(NDEF, "wpas-config-token-psk.hex")).read())
    assert r.returncode == 0, r.stderr
    assert ("WiFi network: power unknown, ssid roam-test-net, security wpa2-psk, key given; "
            "added to wpa_supplicant on wlan0 as network 0, saved") in r.stdout
    fake.fake.fail["SET_NETWORK psk"] = "FAIL\n"
    r = fake.roam("nfc", "import", "-", "--yes",
                  input=open(os.path.join(NDEF, "wpas-config-token-psk.hex")).read())
    assert r.returncode != 0
    assert "wpa_supplicant on wlan0 refused the network's psk (FAIL); nothing was changed." \
        in r.stderr


def test_real_wpa_supplicant_gets_the_network():
    e = Env(real=True)
    try:
        r = e.roam("nfc", "import", "-", "--yes",
                   input=open(os.path.join(NDEF, "wpas-config-token-psk.hex")).read())
        assert r.returncode == 0, r.stderr
        assert "added to wpa_supplicant on wlan0 as network 0, saved" in r.stdout
        c = WpaCtl(e.wpa.socket)
        try:
            listed = c.request("LIST_NETWORKS").decode().splitlines()
            assert listed[1].split("\t")[:3] == ["0", "roam-test-net", "any"]
            assert "[DISABLED]" not in listed[1]
            assert c.request("GET_NETWORK 0 ssid") == b'"roam-test-net"'
            assert c.request("GET_NETWORK 0 key_mgmt") == b"WPA-PSK"
            assert c.request("GET_NETWORK 0 psk") == b"*"  # set, never shown on the socket
        finally:
            c.close()
        # The key itself: in the file wpa_supplicant wrote on SAVE_CONFIG.
        conf = e.wpa.config()
        assert 'ssid="roam-test-net"' in conf and 'psk="correct horse battery"' in conf
    finally:
        e.close()


def test_save_config_keeps_a_private_file_private():
    """wpa_supplicant's SAVE_CONFIG writes NAME.tmp under its own umask and renames it over the
    file (hostap config_file.c, wpa_config_write()): under umask 022 a 0600 file with
    passphrases comes back 0644. roamd's save puts the mode back (issue 43, defect b)."""
    old = os.umask(0o022)  # as systemd's default UMask= for wpa_supplicant.service
    try:
        e = Env(real=True)
    finally:
        os.umask(old)
    try:
        conf = e.wpa.conf
        os.chmod(conf, 0o600)
        # wpa_supplicant on its own: the premise, so this test cannot pass by accident
        c = WpaCtl(e.wpa.socket)
        try:
            assert c.request("SAVE_CONFIG") == b"OK\n"
        finally:
            c.close()
        assert os.stat(conf).st_mode & 0o777 == 0o644
        os.chmod(conf, 0o600)
        kind, cs = e.import_ndef(PSK_TAG)
        assert cs[0][1]["action"] == "added to wpa_supplicant on wlan0 as network 0, saved"
        assert 'psk="correct horse battery"' in e.wpa.config()
        assert os.stat(conf).st_mode & 0o777 == 0o600
        assert f"wpa_supplicant rewrote {conf} as 0644, roamd set it back to 0600" in e.env.log()
    finally:
        e.close()


def test_save_config_judges_the_file_of_its_own_wpa_supplicant(tmp_path):
    """Another wpa_supplicant runs an interface of the same name in another network namespace
    (a container's), started first, so it comes first in /proc: roamd judges and mends the
    file of the one holding the control socket it talks to, never the other's."""
    ns = f"roamtest-decoy-{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    decoy = None
    e = None
    try:
        subprocess.run(["ip", "-n", ns, "link", "add", "wlan0", "type", "veth", "peer", "name",
                        "wlan0-peer"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", "wlan0", "up"], check=True)
        decoy = RealWpa(ns, "wlan0", str(tmp_path / "decoy-ctrl"), ssid=None, update_config=True)
        os.chmod(decoy.conf, 0o600)
        decoy.start()
        old = os.umask(0o022)
        try:
            e = Env(real=True)
        finally:
            os.umask(old)
        conf = e.wpa.conf
        os.chmod(conf, 0o600)
        kind, cs = e.import_ndef(PSK_TAG)
        assert cs[0][1]["action"] == "added to wpa_supplicant on wlan0 as network 0, saved"
        assert os.stat(conf).st_mode & 0o777 == 0o600
        assert f"wpa_supplicant rewrote {conf} as 0644, roamd set it back to 0600" in e.env.log()
        assert decoy.conf not in e.env.log()
    finally:
        if e:
            e.close()
        if decoy:
            decoy.close()
        subprocess.run(["ip", "netns", "del", ns])


def wait_name(bus, name, timeout=10.0):
    """Until name has an owner on the bus: woken by NameOwnerChanged, not by polling."""
    from gi.repository import GLib
    owned = []
    watch = bus.bus.watch_name_owner(name, lambda owner: owned.append(owner) if owner else None)
    ctx = GLib.MainContext.default()
    fired = []
    src = GLib.timeout_add(int(timeout * 1000), lambda: fired.append(1) or False)
    try:
        while not owned and not fired:
            ctx.iteration(True)
    finally:
        watch.cancel()
        if not fired:
            GLib.source_remove(src)
    assert owned, f"{name} did not appear within {timeout} s"


def test_networkmanager_owner_gets_nothing_written_into_its_supplicant():
    """NetworkManager manages wlan0 (tests/dbusmock/networkmanager_wifi.py, the strict NM
    double), and its wpa_supplicant has a control socket, as Debian's does (-O
    DIR=/run/wpa_supplicant): an NFC tag with apply must not add a network over that socket
    (NM keeps one network and SELECT_NETWORK would disable it: the two would fight). The tag's
    network goes to NetworkManager's AddAndActivateConnection2 instead, through roamd's NM
    backend, and nothing reaches the socket but the station facts' reads (issue 43, defect
    a)."""
    env = MiniEnv("nfcnm")
    ctrl = os.path.join(env.dir, "ctrl")
    env.netns("ip link add wlan0 type veth peer name wlan0-peer")
    env.netns("ip link set wlan0 up")
    fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
    menv = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=env.address)
    template = os.path.join(TOP, "tests", "dbusmock", "networkmanager_wifi.py")
    mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                             template], env=menv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        bus = RoamBus(env.address)
        wait_name(bus, "org.freedesktop.NetworkManager")
        nm = bus.bus.get_object("org.freedesktop.NetworkManager",
                                "/org/freedesktop/NetworkManager")
        dev = nm.AddWiFiDevice("wlan0", dbus_interface="org.freedesktop.DBus.Mock")
        ap = nm.AddAccessPoint(dev, dbus.ByteArray(b"roam-test-net"), "wpa2", 80,
                               "correct horse battery", False,
                               dbus_interface="org.freedesktop.DBus.Mock")
        conf = wpaenv.config(ctrl, os.path.join(env.dir, "client"))
        env.start_roamd(conf + "[Bearers]\nwlan0=wifi\n")
        bus.wait(lambda: bus.link_prop("wlan0", "WiFiState") != "",
                 what="roamd attached to the supplicant's socket")
        path = bus.link_path("wlan0")

        def owner():
            try:
                return bus.get(path, "org.roam1.WiFi", "WiFiBackend")
            except dbus.DBusException:
                return None
        bus.wait(lambda: owner() == "networkmanager", what="NetworkManager found")
        _kind, items = bus.call(BT_PATH, BT, "ImportNdef", dbus.ByteArray(PSK_TAG), True)
        actions = [str(v) for _k, d in items for v in d.values()]
        assert any("joining through NetworkManager on wlan0" in a for a in actions), actions

        def joined():
            calls = nm.GetCalls(dbus_interface="org.freedesktop.DBus.Mock")
            return [str(c[2]) for c in calls if str(c[0]) == "AddAndActivateConnection2"]
        (call,) = bus.wait(joined, what="the tag's network handed to NetworkManager")
        assert "'psk': '<secret 21 bytes>'" in call and str(ap) in call
        assert [r for r in fake.requests if r.split(" ")[0] in (
            "ADD_NETWORK", "SET_NETWORK", "ENABLE_NETWORK", "SELECT_NETWORK",
            "SAVE_CONFIG")] == []
        wpaenv.stop_roamd(env)
        assert "correct horse battery" not in env.log()
    finally:
        mock.terminate()
        mock.wait(10)
        fake.close()
        env.close()


def wsc_psk_tag(ssid, key):
    """A WSC configuration token (NDEF short record, Credential attribute) for a WPA2-PSK
    network: WSC 2.0 attributes Network Index, SSID, Auth Type WPA2-PSK, Encr AES, Key, MAC."""
    def attr(t, v):
        return t.to_bytes(2, "big") + len(v).to_bytes(2, "big") + v
    cred = (attr(0x1026, b"\x01") + attr(0x1045, ssid) + attr(0x1003, b"\x00\x20")
            + attr(0x100f, b"\x00\x08") + attr(0x1027, key) + attr(0x1020, bytes(6)))
    payload = attr(0x100e, cred)
    rtype = b"application/vnd.wfa.wsc"
    return bytes([0xd2, len(rtype), len(payload)]) + rtype + payload


def test_same_ssid_is_replaced_not_added_beside(fake):
    """A tag for a network wpa_supplicant already has (a new key, or the same tag twice)
    updates it: the new network goes in, then the old one of that SSID goes; others stay."""
    fake.fake.networks.update({0: {"disabled": "0", "ssid": "roam-test-net", "psk": "old"},
                               1: {"disabled": "0", "ssid": "other"}})
    _, cs = fake.import_ndef(PSK_TAG)
    assert cs[0][1]["action"] == ("added to wpa_supplicant on wlan0 as network 2 in place of "
                                  "network 0, saved")
    assert sent(fake) == [
        "ADD_NETWORK", "SET_NETWORK 2 ssid 726f616d2d746573742d6e6574",
        "SET_NETWORK 2 key_mgmt WPA-PSK", "SET_NETWORK 2 proto RSN",
        'SET_NETWORK 2 psk "correct horse battery"', "ENABLE_NETWORK 2", "REMOVE_NETWORK 0",
        "SAVE_CONFIG"]
    assert sorted(fake.fake.saved) == [1, 2]
    assert fake.fake.saved[2]["psk"] == "correct horse battery"
    # The same tag again: still one network of that SSID.
    _, cs = fake.import_ndef(PSK_TAG)
    assert cs[0][1]["action"] == ("added to wpa_supplicant on wlan0 as network 3 in place of "
                                  "network 2, saved")
    assert sorted(fake.fake.saved) == [1, 3]


def test_same_ssid_is_found_beyond_the_first_page(fake):
    """wpa_supplicant's LIST_NETWORKS answers what fits in 4096 bytes (the double as the
    real daemon, tests/wpa/test_fake_strict.py): with 150 networks the tag's SSID is on a
    later page (LIST_NETWORKS LAST_ID=N), and it is still replaced, not added beside."""
    for i in range(150):
        fake.fake.networks[i] = {"disabled": "0", "ssid": "net-%03d-%s" % (i, "x" * 24)}
    fake.fake.networks[145]["ssid"] = "roam-test-net"
    _, cs = fake.import_ndef(PSK_TAG)
    assert cs[0][1]["action"] == ("added to wpa_supplicant on wlan0 as network 150 in place of "
                                  "network 145, saved")
    assert "REMOVE_NETWORK 145" in sent(fake)
    assert any(r.startswith("LIST_NETWORKS LAST_ID=") for r in fake.fake.requests)


def test_failure_keeps_the_network_it_would_replace(fake):
    fake.fake.networks.update({0: {"disabled": "0", "ssid": "roam-test-net", "psk": "old"}})
    fake.fake.fail["SET_NETWORK psk"] = "FAIL\n"
    with pytest.raises(dbus.DBusException, match="refused the network's psk"):
        fake.import_ndef(PSK_TAG)
    assert fake.fake.networks == {0: {"disabled": "0", "ssid": "roam-test-net", "psk": "old"}}
    assert "REMOVE_NETWORK 0" not in sent(fake)


def test_real_wpa_supplicant_replaces_by_ssid():
    """Against the real daemon, with an SSID LIST_NETWORKS escapes (a quote, a backslash, a
    byte outside ASCII): touched twice, the network is there once, with the tag's key."""
    e = Env(real=True)
    ssid = b'caf"e\\ \xc3\xa9'
    msg = wsc_psk_tag(ssid, b"correct horse battery")
    try:
        for expect in ("as network 0, saved", "as network 1 in place of network 0, saved"):
            r = e.roam("nfc", "import", "-", "--yes", input=msg.hex())
            assert r.returncode == 0, r.stderr
            assert expect in r.stdout, r.stdout
        c = WpaCtl(e.wpa.socket)
        try:
            listed = c.request("LIST_NETWORKS").decode().splitlines()[1:]
            assert [line.split("\t")[0] for line in listed] == ["1"], listed
            assert c.request("GET_NETWORK 1 ssid") == ssid.hex().encode()
        finally:
            c.close()
    finally:
        e.close()


def test_daemon_going_away_mid_request(fake):
    fake.fake.hold.add("SET_NETWORK")
    call = fake.bus.obj(BT_PATH).get_dbus_method("ImportNdef", BT)
    result = {}
    call(dbus.ByteArray(PSK_TAG), True, reply_handler=lambda *a: result.setdefault("ok", a),
         error_handler=lambda e: result.setdefault("error", e))
    fake.fake.wait_request("SET_NETWORK")
    fake.fake.stop()  # the socket goes: roamd drops the interface and its requests
    fake.bus.wait(lambda: result, what="the answer")
    assert result["error"].get_dbus_message() == (
        "wpa_supplicant on wlan0 went away; wpa_supplicant may keep what it added before (it "
        "did not answer).")
