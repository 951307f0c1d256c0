# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd joins Wi-Fi through iwd (issue 43): roamd itself (MiniEnv) with its org.roam1.WiFi,
the strict iwd double running wlan0 on the same private bus, and a datagram socket where a
wpa_supplicant control socket would be. The owner is decided as iwd; Join's passphrase is asked
with JoinNeedsSecret (iwd asked roamd's own agent), a wrong one comes back as
JoinNeedsSecret(wrong-key) and is retried in place; a stranger's call to roamd's agent is
refused; no secret in roamd's log or signals; nothing that changes a wpa_supplicant is sent."""
import dbus
import pytest

from doubles import IWD, MOCK, start_double
from roambus import CallError, plain
from test_nm_roamd import READ_ONLY, Env as NmEnv, call_as

PASS = "correct horse battery"
AGENT_PATH = "/org/roam1/wifi/iwd_agent"
AGENT_IFACE = IWD + ".Agent"


class Env(NmEnv):
    OWNER = "iwd"

    def start_owner(self):
        self.nm, self.nmbus = start_double(self.env.address, "iwd.py", IWD)
        self.dev = str(self.mock("AddStation", "s", ["wlan0"]))

    def mock(self, method, sig="", args=()):
        return self.nmbus.call("/", MOCK, method, sig, args, dest=IWD)


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


def test_join_asks_the_secret_and_retries_a_wrong_key_in_place(env):
    env.mock("AddNetwork", "ossisb", [env.dev, "home", "psk", -5500, PASS, False])
    join = env.join(ssid=b"home")
    assert env.wait_signal("JoinNeedsSecret", join)[1:] == ["passphrase", "first"]
    env.wifi("JoinSecret", "ua{sv}", [dbus.UInt32(join),
                                      {"passphrase": dbus.ByteArray(b"wrong horse battery")}])
    assert env.wait_signal("JoinNeedsSecret", join, 2)[1:] == ["passphrase", "wrong-key"]
    env.wifi("JoinSecret", "ua{sv}", [dbus.UInt32(join), {"passphrase": dbus.ByteArray(
        PASS.encode())}])
    assert env.wait_signal("JoinDone", join)[1] == "connected"
    assert [s[1] for s in plain(env.mock("GetSecretsSeen"))] == ["wrong horse battery", PASS]
    log = env.env.log()
    assert PASS not in log and "wrong horse" not in log
    sigs = env.roamd_signals()
    assert [a[1] for m, a in sigs if m == "JoinDone"] == ["connected"], sigs
    assert all(PASS not in repr(a) and "wrong horse" not in repr(a) for _m, a in sigs)
    sent = [m.split()[0].decode() for m in env.ctrl_messages() if m.split()]
    assert [c for c in sent if c not in READ_ONLY] == [], sent


def test_a_strangers_call_to_roamds_agent_is_refused(env):
    net = str(env.mock("AddNetwork", "ossisb", [env.dev, "home", "psk", -5500, PASS, False]))
    join = env.join(ssid=b"home")
    env.wait_signal("JoinNeedsSecret", join)
    with pytest.raises(CallError) as e:
        env.rb.call(AGENT_PATH, AGENT_IFACE, "RequestPassphrase", "o", [net], dest="org.roam1")
    assert e.value.name == AGENT_IFACE + ".Error.Canceled"
    ok, _name, _out = call_as(env, 65534, "org.roam1", AGENT_PATH,
                              AGENT_IFACE + ".RequestPassphrase", "objpath:" + net)
    assert not ok
    env.wifi("JoinCancel", "u", [dbus.UInt32(join)])
    assert env.wait_signal("JoinDone", join)[1] == "canceled"
    assert "not iwd: refused" in env.env.log()
