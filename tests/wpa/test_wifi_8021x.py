"""A real 802.1X PEAP exchange through roamd's Join (issue 43): Debian's hostapd with its own
EAP server (driver=wired, ieee8021x=1) on one end of a veth pair, Debian's wpa_supplicant
(-Dwired, ap_scan=0) on the other, both in the test's own namespace; a CA and a server
certificate made for the test. The right password ends in JoinDone connected (after the EAP
success the port is authorized), the wrong one in auth-failed with its words, and the network
roamd added for the failed join is gone again. Neither password reaches roamd's log."""
import os
import shutil
import signal
import subprocess
import tempfile

import dbus
import pytest

from realwpa import wait_path
from test_wifi_join import Env

HOSTAPD = shutil.which("hostapd") or "/usr/sbin/hostapd"

HOSTAPD_CONF = """interface=wlan0-peer
driver=wired
ctrl_interface={dir}/hostapd
logger_stdout=-1
logger_stdout_level=1
ieee8021x=1
eap_reauth_period=0
use_pae_group_addr=1
eap_server=1
eap_user_file={dir}/users
ca_cert={dir}/ca.pem
server_cert={dir}/server.pem
private_key={dir}/server.key
"""
# phase 1 for anyone, phase 2 for alice only (hostapd's eap_user_file format)
USERS = """* PEAP
"alice" MSCHAPV2 "correct-horse-42" [2]
"""


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=roam test CA", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=radius.roam.test", cwd=d)
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=DNS:radius.roam.test\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext", cwd=d)


@pytest.fixture
def env():
    e = Env(office=False)
    d = tempfile.mkdtemp(prefix="hostapd-")
    hostapd = None
    try:
        make_certs(d)
        with open(os.path.join(d, "users"), "w") as f:
            f.write(USERS)
        conf = os.path.join(d, "hostapd.conf")
        with open(conf, "w") as f:
            f.write(HOSTAPD_CONF.format(dir=d))
        e.hostapd_log = open(os.path.join(d, "log"), "w")
        hostapd = subprocess.Popen(["ip", "netns", "exec", e.env.name, HOSTAPD, conf],
                                   stdout=e.hostapd_log, stderr=subprocess.STDOUT)
        wait_path(os.path.join(d, "hostapd", "wlan0-peer"))
        e.dir = d
        yield e
    finally:
        if hostapd and hostapd.poll() is None:
            hostapd.send_signal(signal.SIGTERM)
            hostapd.wait(10)
        e.close()
        shutil.rmtree(d, ignore_errors=True)


def join(env, password):
    return env.join(ssid=b"wired-8021x", security="enterprise", eap="peap", identity="alice",
                    password=password, **{"ca-file": os.path.join(env.dir, "ca.pem"),
                                          "domain": "radius.roam.test"})


def test_peap_right_password(env):
    j = join(env, b"correct-horse-42")
    _, result, words = env.done(j)
    assert result == "connected", words
    steps = [a[1] for m, a in env.bus.wifi_signals if m == "JoinStep" and int(a[0]) == j]
    assert steps[:2] == ["associating", "authenticating"], steps
    assert env.ctl("STATUS").count("EAP state=SUCCESS") == 1
    assert "correct-horse-42" not in env.env.log()


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
