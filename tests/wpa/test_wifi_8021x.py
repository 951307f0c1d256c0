"""A real 802.1X PEAP exchange through roamd's Join (issue 43): Debian's hostapd with its own
EAP server (driver=wired, ieee8021x=1) on one end of a veth pair, Debian's wpa_supplicant
(-Dwired, ap_scan=0) on the other, both in the test's own namespace; a CA and a server
certificate made for the test. The right password ends in JoinDone connected (after the EAP
success the port is authorized), the wrong one in auth-failed with its words, and the network
roamd added for the failed join is gone again. Neither password reaches roamd's log."""
import dbus
import pytest

from peapworld import DOMAIN, IDENTITY, PASSWORD, SSID, PeapEnv


@pytest.fixture
def env():
    e = PeapEnv()
    try:
        yield e
    finally:
        e.close()


def join(env, password):
    return env.join(ssid=SSID.encode(), security="enterprise", eap="peap", identity=IDENTITY,
                    password=password, **{"ca-file": env.ca, "domain": DOMAIN})


def test_peap_right_password(env):
    j = join(env, PASSWORD.encode())
    _, result, words = env.done(j)
    assert result == "connected", words
    steps = [a[1] for m, a in env.bus.wifi_signals if m == "JoinStep" and int(a[0]) == j]
    assert steps[:2] == ["associating", "authenticating"], steps
    assert env.ctl("STATUS").count("EAP state=SUCCESS") == 1
    assert PASSWORD not in env.env.log()


def test_peap_wrong_password(env):
    j = join(env, b"wrong-password")
    _, result, words = env.done(j)
    assert result == "auth-failed", words
    assert words == "wired-8021x refused the user name or password (EAP failure)"
    # the network added for the join is removed again: nothing of it stays
    assert env.ctl("LIST_NETWORKS").splitlines()[1:] == []
    assert "wrong-password" not in env.env.log()
    with pytest.raises(dbus.DBusException):
        env.bus.wifi("wlan0", "JoinCancel", dbus.UInt32(j))  # over: no such join
