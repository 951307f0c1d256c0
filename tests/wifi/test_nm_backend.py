# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd's NetworkManager backend (service/features/wifi/roamd-wifi-client-nm.c, driven by
wifi-drive on a real sd-event loop) against the strict NM double: the probe, the list with
known networks out of range, joins of a visible WPA2 network (no key-mgmt sent, NM picks it),
a WPA3-only one, a hidden one and a PEAP one, the secret asked through roamd's own agent with
the wrong-key path retried in place, cancel, forget, autoconnect, priority and share; the
agent refuses a stranger's call; no secret in the backend's log; nothing ever reaches a
wpa_supplicant control socket while NM owns the interface."""
import os
import socket
import tempfile

import dbus
import pytest

from doubles import NM, NM_PATH, Drive
from roambus import CallError, plain
from test_nm_double import ACTIVATED, CONN_IFACE, PSK, Env

AGENT_PATH = "/org/freedesktop/NetworkManager/SecretAgent"
AGENT_IFACE = NM + ".SecretAgent"


@pytest.fixture
def env():
    e = Env()
    e.drives = []
    yield e
    for d in e.drives:
        d.close()
    e.close()


def drive(env, *args, stdin_first=None):
    d = Drive(env.bus.address, "nm", "wlan0", *args, stdin_first=stdin_first)
    env.drives.append(d)
    return d


def calls(env, name):
    return [c for c in plain(env.mock("GetCalls")) if c[0] == name]


def aaac(env):
    (c,) = calls(env, "AddAndActivateConnection2")
    return eval(c[2])  # the double's own repr of the arguments, secrets redacted


def test_probe(env):
    d = drive(env, "probe")
    assert d.until("probe")[-1] == "probe error=0 manages=1 why=NetworkManager manages wlan0"
    d2 = Drive(env.bus.address, "nm", "wlan7", "probe")
    env.drives.append(d2)
    assert d2.until("probe")[-1] == ("probe error=0 manages=0 why=NetworkManager does not "
                                     "know wlan7")


def test_list_and_known(env):
    env.ap("home", "wpa2", PSK, strength=83)
    env.ap("home", "wpa2", PSK, strength=50)
    env.ap("cafe", "open", strength=33)
    env.ap("new", "wpa3", "x")
    env.mock("AddKnown", "oayssbi", [env.dev, dbus.ByteArray(b"away"), "wpa-psk", PSK, False, 7])
    lines = drive(env, "list").until("ok")
    nets = {l.split()[1]: l for l in lines if l.startswith("network")}
    assert "security=wpa2 signal=-50 in_range=1 known=0" in nets["ssid=home"]
    assert "bssids=2" in nets["ssid=home"]
    assert "security=open signal=-80" in nets["ssid=cafe"]
    assert "security=wpa3" in nets["ssid=new"]
    assert ("in_range=0 known=1 connected=0 autoconnect=0 has_priority=1 priority=7"
            in nets["ssid=away"])
    known = [l for l in drive(env, "known").until("ok") if l.startswith("network")]
    assert len(known) == 1 and "ssid=away" in known[0]


def test_join_visible_with_passphrase(env):
    ap = env.ap("home", "wpa2", PSK)
    d = drive(env, "join", "home", "passphrase-stdin", stdin_first=PSK)
    lines = d.until("done")
    assert lines[-1] == 'done connected Joined "home"'
    assert "step associating" in lines
    conn, device, specific, opts = aaac(env)
    assert specific == ap and opts["persist"] == "disk"
    # only the secret: NM picks key-mgmt from the AP (research §0.3)
    assert conn["802-11-wireless-security"] == {"psk": "<secret %d bytes>" % len(PSK)}
    assert "802-11-wireless" not in conn
    assert PSK not in d.stderr()


def test_wpa3_only_network_joins_with_its_password(env):
    env.ap("wpa3 only", "wpa3", "shortpw")
    d = drive(env, "join", "wpa3 only", "passphrase-stdin", stdin_first="shortpw")
    assert d.until("done")[-1].startswith("done connected")
    conn, _dev, _ap, _o = aaac(env)
    assert "key-mgmt" not in conn["802-11-wireless-security"]


def test_secret_asked_then_wrong_key_retried_in_place(env):
    env.ap("home", "wpa2", PSK)
    d = drive(env, "join", "home", "forget")
    assert d.until("needs-secret")[-1] == "needs-secret passphrase first"
    d.write("wrong horse battery")
    assert d.until("needs-secret")[-1] == "needs-secret passphrase wrong-key"
    d.write(PSK)
    assert d.until("done")[-1].startswith("done connected")
    # through roamd's own agent, asked by NM with ALLOW_INTERACTION then REQUEST_NEW
    assert [(c[0], c[2]) for c in plain(env.mock("GetAgentCalls"))] == [
        (d.unique, 1), (d.unique, 3)]
    assert [s[1] for s in plain(env.mock("GetSecretsSeen"))] == ["wrong horse battery", PSK]
    _c, _d, _a, opts = aaac(env)
    assert opts["persist"] == "volatile"
    assert PSK not in d.stderr() and "wrong horse" not in d.stderr()


def test_wrong_key_until_nm_gives_up(env):
    env.ap("home", "wpa2", PSK)
    env.mock("SetAuthRetries", "i", [0])
    d = drive(env, "join", "home", "passphrase-stdin", stdin_first="wrong horse battery")
    lines = d.until("done")
    assert lines[-1] == 'done wrong-key "home" refused the passphrase', lines


def test_cancel_while_asked_deactivates(env):
    env.ap("home", "wpa2", PSK)
    d = drive(env, "join", "home", "forget")
    d.until("needs-secret")
    d.write("cancel")
    d.until("canceled")
    d.wait()
    env.rb.wait(lambda: not calls(env, "DeactivateConnection") == [] and
                env.connections() == [], what="deactivated, the volatile profile gone")


def test_a_strangers_call_to_the_agent_is_refused(env):
    env.ap("home", "wpa2", PSK)
    d = drive(env, "join", "home")
    d.until("needs-secret")
    conn = {"802-11-wireless-security": {"key-mgmt": dbus.String("wpa-psk")}}
    # another process (root, even) on the bus asks roamd's agent for the secret
    for path in [p for p in env.connections()]:
        with pytest.raises(CallError) as e:
            env.rb.call(AGENT_PATH, AGENT_IFACE, "GetSecrets", "a{sa{sv}}osasu",
                        [conn, path, "802-11-wireless-security", [], 3], dest=d.unique)
        assert e.value.name == AGENT_IFACE + ".PermissionDenied"
    d.write(PSK)
    assert d.until("done")[-1].startswith("done connected")
    assert "not NetworkManager" in d.stderr()


def test_hidden_network(env):
    env.ap("attic", "wpa2", PSK, hidden=True)
    d = drive(env, "join", "attic", "hidden", "wpa2", "passphrase-stdin", stdin_first=PSK)
    assert d.until("done")[-1].startswith("done connected")
    conn, _dev, specific, _o = aaac(env)
    assert specific == "/"
    assert conn["802-11-wireless"] == {"ssid": "attic", "hidden": True}
    assert conn["802-11-wireless-security"]["key-mgmt"] == "wpa-psk"
    d2 = drive(env, "join", "nobody", "hidden", "wpa2", "passphrase-stdin", stdin_first=PSK)
    assert d2.until("done")[-1] == 'done not-found No network "nobody" answered'


def test_not_in_range(env):
    d = drive(env, "join", "elsewhere", "passphrase-stdin", stdin_first=PSK)
    assert d.until("done")[-1].startswith("done not-found")
    assert calls(env, "AddAndActivateConnection2") == []


def test_peap(env):
    env.ap("corp", "enterprise", "alice:s3cret")
    d = drive(env, "join", "corp", "eap", "peap", "alice", "corp.example")
    assert d.until("needs-secret")[-1] == "needs-secret identity+password first"
    d.write("alice wrong")
    assert d.until("needs-secret")[-1] == "needs-secret identity+password wrong-key"
    d.write("alice s3cret")
    assert d.until("done")[-1].startswith("done connected")
    conn, *_ = aaac(env)
    assert conn["802-11-wireless-security"] == {"key-mgmt": "wpa-eap"}
    x = conn["802-1x"]
    assert x["eap"] == ["peap"] and x["identity"] == "alice" and x["phase2-auth"] == "mschapv2"
    assert x["domain-suffix-match"] == "corp.example"
    assert x["ca-cert"] == "file:///etc/ssl/certs/ca-certificates.crt\0"


def test_forget_autoconnect_priority_share(env):
    known = env.mock("AddKnown", "oayssbi", [env.dev, dbus.ByteArray(b"home"), "wpa-psk", PSK,
                                             True, 0])
    assert drive(env, "autoconnect", "home", "off").until("ok")
    assert drive(env, "priority", "home", "12").until("ok")
    settings = plain(env.call(known, CONN_IFACE, "GetSettings"))
    assert settings["connection"]["autoconnect"] is False
    assert settings["connection"]["autoconnect-priority"] == 12
    assert bytes(settings["802-11-wireless"]["ssid"]) == b"home"  # the rest kept
    # the secret was not sent back and NM kept it
    assert drive(env, "share", "home").until("share")[-1] == (
        "share ssid=home security=wpa2 hidden=0 passphrase=" + PSK)
    assert drive(env, "forget", "home").until("ok")
    assert env.connections() == []
    assert drive(env, "forget", "home").until("error")[-1] == (
        'error 2 NetworkManager has no saved network "home"')


def test_scan(env):
    d = drive(env, "scan")
    assert d.until("ok")
    assert env.prop(env.dev, NM + ".Device.Wireless", "LastScan") > 0


def test_nothing_reaches_a_wpa_supplicant_socket_while_nm_owns_it(env):
    """Debian's NM supplicant has a control socket too (research §0.1): the NM backend
    never writes to it."""
    ctrl = tempfile.mkdtemp(prefix="roam-ctrl-")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(os.path.join(ctrl, "wlan0"))
    try:
        env.ap("home", "wpa2", PSK)
        d = drive(env, "join", "home", "passphrase-stdin", stdin_first=PSK)
        assert d.until("done")[-1].startswith("done connected")
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):
            sock.recv(4096)
    finally:
        sock.close()
        os.unlink(os.path.join(ctrl, "wlan0"))
        os.rmdir(ctrl)
