# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd's iwd backend (service/features/wifi/roamd-wifi-client-iwd.c, driven by wifi-drive
on a real sd-event loop) against the strict iwd double: the probe, the list with known
networks also out of range, a visible join whose passphrase iwd asks of roamd's own agent, a
wrong passphrase retried in place (iwd's Failed, then Connect again and iwd asks again), a
hidden join, not found, cancel, forget and autoconnect; what iwd does not offer is refused
with the reason; the agent refuses a stranger's call; no secret in the backend's log."""
import dbus
import pytest

from doubles import Drive, IWD
from roambus import CallError, plain
from test_iwd_double import NETWORK, PASS, STATION, Env

AGENT_PATH = "/org/roam1/wifi/iwd_agent"
AGENT_IFACE = IWD + ".Agent"


@pytest.fixture
def env():
    e = Env()
    e.drives = []
    yield e
    for d in e.drives:
        d.close()
    e.close()


def drive(env, *args, stdin_first=None):
    d = Drive(env.bus.address, "iwd", "wlan0", *args, stdin_first=stdin_first,
              env={"WIFI_DRIVE_IWD_STATE": env.state})
    env.drives.append(d)
    return d


def test_probe(env):
    assert drive(env, "probe").until("probe")[-1].startswith("probe error=0 manages=1")


def test_list_and_known(env):
    env.net("home", signal=-5500)
    env.net("cafe", "open", "", signal=-7000)
    env.mock("AddKnownNetwork", "ssbbs", ["away", "psk", False, False, PASS])
    lines = drive(env, "list").until("ok")
    nets = {l.split()[1]: l for l in lines if l.startswith("network")}
    assert "security=psk signal=-55 in_range=1 known=0" in nets["ssid=home"]
    assert "security=open signal=-70" in nets["ssid=cafe"]
    assert "in_range=0 known=1 connected=0 autoconnect=0 has_priority=0" in nets["ssid=away"]
    known = [l for l in drive(env, "known").until("ok") if l.startswith("network")]
    assert len(known) == 1 and "ssid=away" in known[0]


def test_join_with_passphrase_through_the_agent(env):
    net = env.net("home")
    d = drive(env, "join", "home", "passphrase-stdin", stdin_first=PASS)
    lines = d.until("done")
    assert lines[-1] == 'done connected Joined "home"'
    assert "step authenticating" in lines
    assert [c[:2] for c in plain(env.mock("GetAgentCalls"))] == [(d.unique, "RequestPassphrase")]
    assert env.prop(net, NETWORK, "Connected") is True
    assert PASS not in d.stderr()


def test_secret_asked_and_wrong_key_retried_in_place(env):
    env.net("home")
    d = drive(env, "join", "home")
    assert d.until("needs-secret")[-1] == "needs-secret passphrase first"
    d.write("wrong horse battery")
    assert d.until("needs-secret")[-1] == "needs-secret passphrase wrong-key"
    d.write(PASS)
    assert d.until("done")[-1].startswith("done connected")
    assert [s[1] for s in plain(env.mock("GetSecretsSeen"))] == ["wrong horse battery", PASS]
    assert len([c for c in plain(env.mock("GetCalls")) if c[0] == "Connect"]) == 2
    assert PASS not in d.stderr() and "wrong horse" not in d.stderr()


def test_key_format_asked_again(env):
    env.net("home")
    d = drive(env, "join", "home", "passphrase-stdin", stdin_first="short")
    assert d.until("needs-secret")[-1] == "needs-secret passphrase key-format"
    d.write(PASS)
    assert d.until("done")[-1].startswith("done connected")


def test_hidden_and_not_found(env):
    env.net("attic", hidden=True)
    d = drive(env, "join", "attic", "hidden", "psk", "passphrase-stdin", stdin_first=PASS)
    assert d.until("done")[-1].startswith("done connected")
    assert [c[0] for c in plain(env.mock("GetCalls")) if "Hidden" in c[0]] == [
        "ConnectHiddenNetwork"]
    d = drive(env, "join", "nobody", "hidden", "psk", "passphrase-stdin", stdin_first=PASS)
    assert d.until("done")[-1] == 'done not-found No network "nobody" answered'
    d = drive(env, "join", "elsewhere", "passphrase-stdin", stdin_first=PASS)
    assert d.until("done")[-1].startswith("done not-found")


def test_cancel_while_asked(env):
    env.net("home")
    d = drive(env, "join", "home")
    d.until("needs-secret")
    d.write("cancel")
    d.until("canceled")
    d.wait()
    assert env.prop(env.dev, STATION, "State") == "disconnected"
    assert env.known() == {}


def test_a_strangers_call_to_the_agent_is_refused(env):
    net = env.net("home")
    d = drive(env, "join", "home")
    d.until("needs-secret")
    with pytest.raises(CallError) as e:
        env.rb.call(AGENT_PATH, AGENT_IFACE, "RequestPassphrase", "o", [net], dest=d.unique)
    assert e.value.name == AGENT_IFACE + ".Error.Canceled"
    d.write(PASS)
    assert d.until("done")[-1].startswith("done connected")
    assert "not iwd: refused" in d.stderr()


def test_forget_autoconnect_and_what_iwd_does_not_offer(env):
    known = env.mock("AddKnownNetwork", "ssbbs", ["home", "psk", False, True, PASS])
    assert drive(env, "autoconnect", "home", "off").until("ok")
    assert env.prop(known, IWD + ".KnownNetwork", "AutoConnect") is False
    assert drive(env, "priority", "home", "3").until("error")[-1] == (
        "error 95 Operation not supported")
    assert drive(env, "forget", "home").until("ok")
    assert env.known() == {}
    assert drive(env, "forget", "home").until("error")[-1] == (
        'error 2 iwd has no known network "home"')
    assert drive(env, "join", "corp", "hidden", "enterprise", "eap", "peap", "alice",
                 "corp.example").until("error")[-1].startswith("error 95")


def test_scan(env):
    assert drive(env, "scan").until("ok")
    assert [c[0] for c in plain(env.mock("GetCalls"))].count("Scan") == 1


def test_peap_profile_written_private_and_the_password_asked(env):
    """iwd joins 802.1X only from a provisioning file: roamd writes it 0600 (O_EXCL, then
    renamed), without the password, waits until iwd has read it (its KnownNetwork), and the
    password goes through roamd's agent (RequestUserPassword); a wrong one is asked again."""
    import os
    import stat
    net = env.net("corp", "8021x", "alice:s3cret")
    d = drive(env, "join", "corp", "eap", "peap", "alice", "corp.example")
    assert d.until("needs-secret")[-1] == "needs-secret identity+password first"
    path = os.path.join(env.state, "corp.8021x")
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o600
    text = open(path).read()
    assert "EAP-Method=PEAP" in text and "EAP-PEAP-Phase2-Identity=alice" in text
    assert "EAP-PEAP-ServerDomainMask=corp.example" in text
    assert "Password" not in text
    assert [f for f in os.listdir(env.state) if f.startswith(".roam-")] == []
    d.write("alice wrong")
    assert d.until("needs-secret")[-1] == "needs-secret identity+password wrong-key"
    d.write("alice s3cret")
    assert d.until("done")[-1].startswith("done connected")
    assert env.prop(net, NETWORK, "Connected") is True
    assert [c[1] for c in plain(env.mock("GetAgentCalls"))] == ["RequestUserPassword"] * 2
    assert "s3cret" not in open(path).read() and "s3cret" not in d.stderr()


def test_peap_canceled_leaves_no_profile(env):
    import os
    env.net("corp", "8021x", "alice:s3cret")
    d = drive(env, "join", "corp", "eap", "peap", "alice", "corp.example")
    d.until("needs-secret")
    d.write("cancel")
    d.until("canceled")
    d.wait()
    assert os.listdir(env.state) == []


def test_share_reads_the_passphrase_from_iwds_profile(env):
    """iwd keeps a known network's passphrase only in its profile (/var/lib/iwd/NAME.psk,
    0600): share reads [Security] Passphrase= as root; a profile with only the derived key
    cannot be shared, and says so."""
    import os
    env.mock("AddKnownNetwork", "ssbbs", ["home", "psk", False, True, PASS])
    env.mock("AddKnownNetwork", "ssbbs", ["caf\u00e9", "psk", True, True, PASS])
    env.mock("AddKnownNetwork", "ssbbs", ["keyonly", "psk", False, True, ""])
    for name, text in (("home.psk", "[Security]\nPreSharedKey=%s\nPassphrase=%s\n"
                        % ("ab" * 32, PASS)),
                       ("=636166c3a9.psk", "[Settings]\nHidden=true\n[Security]\n"
                        "Passphrase=%s\n" % PASS),
                       ("keyonly.psk", "[Security]\nPreSharedKey=%s\n" % ("cd" * 32))):
        fd = os.open(os.path.join(env.state, name), os.O_WRONLY | os.O_CREAT, 0o600)
        os.write(fd, text.encode())
        os.close(fd)
    assert drive(env, "share", "home").until("share")[-1] == (
        "share ssid=home security=psk hidden=0 passphrase=" + PASS)
    assert drive(env, "share", "caf\u00e9").until("share")[-1] == (
        "share ssid=caf\u00e9 security=psk hidden=1 passphrase=" + PASS)
    assert drive(env, "share", "keyonly").until("error")[-1] == (
        'error 2 iwd keeps no passphrase for "keyonly" (only the key made from it, or no '
        'profile file)')
    assert drive(env, "share", "nowhere").until("error")[-1] == (
        'error 2 iwd has no known network "nowhere"')
