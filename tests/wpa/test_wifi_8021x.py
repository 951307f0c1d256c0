"""A real 802.1X PEAP exchange through roamd's Join (issue 43): Debian's hostapd with its own
EAP server (driver=wired, ieee8021x=1) on one end of a veth pair, Debian's wpa_supplicant
(-Dwired, ap_scan=0) on the other, both in the test's own namespace; a CA and a server
certificate made for the test. The right password ends in JoinDone connected (after the EAP
success the port is authorized), the wrong one in auth-failed with its words, and the network
roamd added for the failed join is gone again. Neither password reaches roamd's log."""
import subprocess

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


def test_peap_untrusted_server_is_said_as_such(env, tmp_path):
    # A server certificate wpa_supplicant does not trust (another CA; the right CA but another
    # domain) ends in an EAP failure too: said as the server not trusted, with wpa_supplicant's
    # reason and the certificate's subject (CTRL-EVENT-EAP-TLS-CERT-ERROR), not as a refused
    # password.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    "o.key", "-out", "o.pem", "-days", "2", "-subj", "/CN=other CA"],
                   cwd=tmp_path, check=True, capture_output=True)
    for ca, domain, why in ((str(tmp_path / "o.pem"), DOMAIN,
                             "self-signed certificate in certificate chain, /CN=roam test CA"),
                            (env.ca, "wrong.example",
                             "Domain suffix mismatch, /CN=radius.roam.test")):
        j = env.join(ssid=SSID.encode(), security="enterprise", eap="peap", identity=IDENTITY,
                     password=PASSWORD.encode(), **{"ca-file": ca, "domain": domain})
        _, result, words = env.done(j)
        assert result == "auth-failed", words
        assert words == (f"{SSID}'s authentication server was not trusted ({why}): check the "
                         "CA certificate and the server's domain"), words
        assert env.ctl("LIST_NETWORKS").splitlines()[1:] == []
    assert PASSWORD not in env.env.log()
