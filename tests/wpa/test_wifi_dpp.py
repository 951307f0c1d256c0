"""Wi-Fi Easy Connect (DPP) enrollee through a bare wpa_supplicant (issue 43 item 4): Enroll
answers a join id and this device's DPP: URI, the join waits in the step "enrolling", a
configurator's credential (dpp_supplicant.c's DPP-CONF* events) is joined through the ordinary
join, and every end stops the listening and removes the bootstrap key. The radio half runs
against the control-socket double (fakewpa.py); the real wpa_supplicant 2.10 (-Dwired) shows
the bootstrap commands' replies and that roamd refuses its wired driver in words (it answers
DPP_LISTEN with OK and listens on nothing)."""
import json
import os
import re
import subprocess

import dbus
import pytest

from realwpa import RealWpa  # noqa: F401 (the real supplicant, through test_wifi_join.Env)
from test_wifi_fake import Env as FakeEnv
from test_wifi_join import Env as RealEnv

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
URI_RE = re.compile(r"^DPP:C:81/1;M:([0-9a-f]{12});V:2;K:[A-Za-z0-9+/=]+;;$")


@pytest.fixture
def env():
    e = FakeEnv()
    try:
        yield e
    finally:
        e.close()


def enroll(env):
    join, uri = env.bus.wifi("wlan0", "Enroll")
    env.bus.wait(lambda: env.bus.wifi_signal("JoinStep", int(join)), what="JoinStep")
    return int(join), str(uri)


def cleaned_up(env):
    # DPP_STOP_LISTEN and DPP_BOOTSTRAP_REMOVE go out right after JoinDone, unanswered;
    # GetNetworks is queued behind them on the socket
    env.bus.wifi("wlan0", "GetNetworks")
    return env.fake.dpp_listen == 0 and env.fake.dpp_boot == {}


def test_enroll_then_join_what_the_phone_sent(env):
    join, uri = enroll(env)
    m = URI_RE.match(uri)
    assert m, uri
    assert m.group(1) == env.fake.address.replace(":", "")
    assert env.fake.dpp_listen == 2412
    assert f"DPP_BOOTSTRAP_GEN type=qrcode chan=81/1 mac={m.group(1)}" in env.fake.requests
    step = env.bus.wifi_signal("JoinStep", join)
    assert step[1] == "enrolling" and "scan this device's code" in step[2]
    assert tuple(env.bus.wifi_prop("wlan0", "Join")) == (join, "enrolling")
    env.fake.dpp_configure(b"Home", passphrase="right-pass-1", akm="psk+sae")
    _, result, words = env.wait("JoinDone", join)
    assert result == "connected", words
    assert words.startswith("Joined Home")
    # the received network was joined like any other: its own network, the key, saved
    new = [i for i in env.fake.networks if i != 0]
    assert len(new) == 1
    net = env.fake.networks[new[0]]
    assert net["psk"] == "right-pass-1" and net["key_mgmt"] == "WPA-PSK SAE"
    assert new[0] in env.fake.saved
    assert cleaned_up(env)
    for m_, a in env.bus.wifi_signals:
        assert all("right-pass-1" not in str(x) for x in a)


def test_a_psk_and_an_ssid_with_spaces(env):
    join, _ = enroll(env)
    env.fake.dpp_configure(b"Cafe Guest", psk=bytes(range(32)), akm="psk")
    _, result, words = env.wait("JoinDone", join)
    # Cafe Guest is open on the air: the PSK join of it does not connect, but the SSID and
    # the key reached wpa_supplicant exactly
    sets = [r for r in env.fake.requests if r.startswith("SET_NETWORK")]
    assert any(r.endswith(" ssid " + b"Cafe Guest".hex()) for r in sets), sets
    assert any(r.endswith(" psk " + bytes(range(32)).hex()) for r in sets), result


def test_dpp_fail_ends_it_in_words(env):
    join, _ = enroll(env)
    env.fake.event("DPP-FAIL No Auth Confirm received")
    _, result, words = env.wait("JoinDone", join)
    assert (result, words) == ("refused", "Wi-Fi Easy Connect failed: No Auth Confirm received")
    assert cleaned_up(env)
    assert env.fake.networks.keys() == {0}


def test_auth_init_failed_and_hostile_words(env):
    join, _ = enroll(env)
    env.fake.event("DPP-AUTH-INIT-FAILED ")
    _, result, words = env.wait("JoinDone", join)
    assert result == "refused" and "did not complete" in words
    join, _ = enroll(env)
    env.fake.event("DPP-FAIL \u202eevil\u202c text")  # bidi controls from the air
    _, result, words = env.wait("JoinDone", join)
    assert "\u202e" not in words and "evil" in words


def test_a_connector_network_is_refused(env):
    join, _ = enroll(env)
    env.fake.dpp_configure(b"Home", akm="dpp")
    _, result, words = env.wait("JoinDone", join)
    assert result == "refused"
    assert "AKM dpp" in words and "passphrase only" in words
    assert cleaned_up(env)


def test_a_name_that_is_not_text_is_refused(env):
    join, _ = enroll(env)
    env.fake.dpp_configure(b"\xff\xfeHome", passphrase="right-pass-1")
    _, result, words = env.wait("JoinDone", join)
    assert (result, words) == ("refused",
                               "The configurator sent a network name that is not text (UTF-8)")
    assert env.fake.networks.keys() == {0}


def test_cancel_stops_listening_and_a_second_enroll_is_busy(env):
    join, _ = enroll(env)
    with pytest.raises(dbus.DBusException) as e:
        env.bus.wifi("wlan0", "Enroll")
    assert e.value.get_dbus_name() == "org.roam1.Error.Busy"
    env.bus.wifi("wlan0", "JoinCancel", dbus.UInt32(join))
    _, result, _ = env.wait("JoinDone", join)
    assert result == "canceled"
    assert cleaned_up(env)
    assert "DPP_STOP_LISTEN" in env.fake.requests
    assert "DPP_BOOTSTRAP_REMOVE 1" in env.fake.requests


def test_the_wired_driver_is_refused_in_words(env):
    env.fake.driver_wired = True
    with pytest.raises(dbus.DBusException) as e:
        env.bus.wifi("wlan0", "Enroll")
    assert "wired driver, which has no radio for Wi-Fi Easy Connect (DPP)" in str(e.value)
    assert env.fake.dpp_boot == {} and env.fake.dpp_listen == 0
    assert tuple(env.bus.wifi_prop("wlan0", "Join")) == (0, "")


def test_real_supplicant_bootstrap_and_wired_refusal():
    e = RealEnv()
    try:
        # the commands roamd sends, answered by the real 2.10 (no radio needed: crypto only)
        assert e.ctl("GET_CAPABILITY dpp") == "DPP=2"
        assert e.ctl("DRIVER_FLAGS").splitlines()[1:] == ["WIRED"]
        boot = e.ctl("DPP_BOOTSTRAP_GEN type=qrcode chan=81/1 mac=020000000001")
        assert boot.isdigit()
        uri = e.ctl(f"DPP_BOOTSTRAP_GET_URI {boot}")
        assert URI_RE.match(uri) and "M:020000000001;" in uri
        # a DPP: URI as a phone shows it (the real supplicant's own), read as a peer's
        assert e.ctl(f"DPP_QR_CODE {uri}").isdigit()
        assert e.ctl(f"DPP_BOOTSTRAP_REMOVE {boot}") == "OK\n"
        assert e.ctl(f"DPP_BOOTSTRAP_GET_URI {boot}") == "FAIL\n"
        # DPP_LISTEN says OK on the wired driver and listens on nothing (measured): roamd
        # asks DRIVER_FLAGS first and refuses in words, leaving no key behind
        assert e.ctl("DPP_LISTEN 2412") == "OK\n"
        assert e.ctl("DPP_STOP_LISTEN") == "OK\n"
        with pytest.raises(dbus.DBusException) as err:
            e.bus.wifi("wlan0", "Enroll")
        assert str(err.value).endswith(
            "wpa_supplicant runs wlan0 with its wired driver, which has no radio for Wi-Fi "
            "Easy Connect (DPP)")
        assert err.value.get_dbus_name() == "org.roam1.Error.Failed"
        assert tuple(e.bus.wifi_prop("wlan0", "Join")) == (0, "")
    finally:
        e.close()


ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))


def roam(env, *args):
    return subprocess.Popen([ROAM, "wifi", *args], env=dict(env.env.env, LC_ALL="C.UTF-8"),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_listening(env):
    env.bus.wait(lambda: env.fake.dpp_listen == 2412, what="DPP_LISTEN")


def test_cli_enroll_shows_the_code_then_joins(env):
    p = roam(env, "enroll", "wlan0")
    try:
        wait_listening(env)
        env.fake.dpp_configure(b"Home", passphrase="right-pass-1", akm="psk")
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert p.returncode == 0, err
    lines = out.splitlines()
    uri = next(line for line in lines if line.startswith("DPP:"))
    assert URI_RE.match(uri)
    # the QR code in half blocks above the text, then the words
    assert any("\u2580" in line or "\u2584" in line or "\u2588" in line for line in lines)
    assert "Scan this code with a phone" in out
    assert "Joined Home" in out
    assert "right-pass-1" not in out + err


def test_cli_enroll_json_and_a_refusal_exit_code(env):
    p = roam(env, "enroll", "--json")
    try:
        wait_listening(env)
        env.fake.event("DPP-FAIL No Auth Confirm received")
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    first, second = [json.loads(d) for d in out.replace("}\n{", "}\x00{").split("\x00")]
    assert first["link"] == "wlan0" and URI_RE.match(first["uri"]) and first["join"] > 0
    assert second["result"] == "refused" and second["join"] == first["join"]
    assert second["words"] == "Wi-Fi Easy Connect failed: No Auth Confirm received"
    assert p.returncode == 6
    assert cleaned_up(env)


def test_cli_enroll_wired_driver_says_why(env):
    env.fake.driver_wired = True
    p = roam(env, "enroll")
    out, err = p.communicate(timeout=30)
    assert p.returncode != 0
    assert "cannot enroll by DPP: wpa_supplicant runs wlan0 with its wired driver" in err


# ---- roamd as the configurator (JoinUri of a DPP: text, applied) ----------------------------
PEER = "DPP:C:81/1;M:0242ac110002;V:2;K:" + "MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACFZq9YNQAmI26YSe+ixNxngctk/4qn8uSe3P2t+8iOaE=" + ";;"


def configure(env):
    summary = env.bus.wifi("wlan0", "JoinUri", PEER, True)
    assert str(summary["kind"]) == "dpp" and str(summary["mac"]) == "02:42:ac:11:00:02"
    return int(summary["join"])


def test_configure_sends_the_network_we_are_on(env):
    env.fake.associate("Home", "02:00:00:00:02:00", 5180, -48, 866)
    join = configure(env)
    # wpa_supplicant never gives the key back: the person gives it
    assert env.wait("JoinNeedsSecret", join)[1:] == ["passphrase", "first"]
    env.bus.wifi("wlan0", "JoinSecret", dbus.UInt32(join),
                 {"passphrase": dbus.ByteArray(b"right-pass-1")})
    step = env.wait("JoinStep", join)
    assert step[1:] == ["sharing", "sending the network to the device"]
    assert f"DPP_QR_CODE {PEER}" in env.fake.requests
    auth = env.fake.dpp_auth
    assert (auth["conf"], auth["ssid"], auth["pass"]) == ("sta-psk", b"Home", b"right-pass-1")
    env.fake.dpp_configured_peer(wait_conn_status=True)
    _, result, words = env.wait("JoinDone", join)
    assert (result, words) == ("shared",
                               "Sent Home to the device of the code (Wi-Fi Easy Connect)")
    assert cleaned_up(env) and env.fake.dpp_peers.keys() == {auth["peer"]}
    assert f"DPP_BOOTSTRAP_REMOVE {auth['peer']}" in env.fake.requests
    for _m, a in env.bus.wifi_signals:
        assert all("right-pass-1" not in str(x) for x in a)


def test_configure_refusals_in_words(env):
    # not on a network
    join = configure(env)
    _, result, words = env.wait("JoinDone", join)
    assert (result, words) == ("refused", "wlan0 is not on a network: a configurator sends the "
                                          "network it is on")
    # the device does not answer; a bad passphrase form is refused in place
    env.fake.associate("Home", "02:00:00:00:02:00", 5180, -48, 866)
    join = configure(env)
    env.wait("JoinNeedsSecret", join)
    with pytest.raises(dbus.DBusException):
        env.bus.wifi("wlan0", "JoinSecret", dbus.UInt32(join),
                     {"passphrase": dbus.ByteArray(b"short")})
    env.bus.wifi("wlan0", "JoinSecret", dbus.UInt32(join),
                 {"passphrase": dbus.ByteArray(b"right-pass-1")})
    env.wait("JoinStep", join)
    env.fake.event("DPP-AUTH-INIT-FAILED ")
    _, result, words = env.wait("JoinDone", join)
    assert result == "refused" and "did not answer" in words
    # a code that is not a DPP: text never reaches wpa_supplicant
    with pytest.raises(dbus.DBusException) as e:
        env.bus.wifi("wlan0", "JoinUri", "DPP:C:81/1;;", True)
    assert e.value.get_dbus_name() == "org.roam1.Error.InvalidArguments"


def test_configure_on_the_real_wired_supplicant_says_why():
    e = RealEnv()
    try:
        summary = e.bus.wifi("wlan0", "JoinUri", PEER, True)
        join = int(summary["join"])
        _, result, words = e.done(join)
        assert (result, words) == (
            "refused", "wpa_supplicant runs wlan0 with its wired driver, which has no radio for "
                       "Wi-Fi Easy Connect (DPP)")
        # and the real one takes the code and refuses DPP_AUTH_INIT there (measured)
        peer = e.ctl(f"DPP_QR_CODE {PEER}")
        assert peer.isdigit()
        assert e.ctl(f"DPP_AUTH_INIT peer={peer} conf=sta-psk ssid=486f6d65 "
                     "pass=72696768742d706173732d31") == "FAIL\n"
    finally:
        e.close()


def test_cli_join_uri_dpp_asks_the_passphrase_and_sends(env):
    """roam wifi join-uri DPP:... --yes on a terminal: the passphrase of the network the link
    is on asked without echo, then the end in words (exit 0)."""
    import pty
    import select
    env.fake.associate("Home", "02:00:00:00:02:00", 5180, -48, 866)
    master, slave = pty.openpty()
    p = subprocess.Popen([ROAM, "wifi", "join-uri", PEER, "--yes"], stdin=slave,
                         stdout=subprocess.PIPE, stderr=slave, text=True,
                         env=dict(env.env.env, LC_ALL="C.UTF-8"))
    os.close(slave)
    seen = b""
    try:
        while b"Passphrase for the network wlan0 is on: " not in seen:
            ready, _, _ = select.select([master], [], [], 10)
            assert ready, seen
            seen += os.read(master, 1024)
        os.write(master, b"right-pass-1\n")
        env.bus.wait(lambda: env.fake.dpp_auth is not None, what="DPP_AUTH_INIT")
        env.fake.dpp_configured_peer()
        out, _ = p.communicate(timeout=30)
    finally:
        p.kill()
        os.close(master)
    assert p.returncode == 0
    assert "Sent Home to the device of the code (Wi-Fi Easy Connect)" in out
    assert env.fake.dpp_auth["pass"] == b"right-pass-1"
    assert b"right-pass-1" not in seen  # no echo
