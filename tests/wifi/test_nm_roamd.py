# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd joins Wi-Fi through NetworkManager (issue 43): roamd itself in a namespace of its own
(MiniEnv) with its org.roam1.WiFi, the strict NM double owning wlan0 on the same private bus,
and a datagram socket where wpa_supplicant's control socket for wlan0 would be (Debian's NM
supplicant has one). The owner is decided as NetworkManager; Join asks for the passphrase
through JoinNeedsSecret (NM asked roamd's own agent), a wrong one comes back as
JoinNeedsSecret(wrong-key) and is retried in place; a stranger's call to roamd's agent is
refused; the secret reaches no log and no signal; nothing is sent to the control socket."""
import os
import socket

import dbus
import pytest

import wpaenv_path  # noqa: F401 - tests/wpa on sys.path
import wpaenv
from doubles import NM, NM_PATH, MOCK, start_double, stop_double
from minienv import MiniEnv
from roambus import CallError, RoamBus, plain

WIFI = "org.roam1.WiFi"
PSK = "correct horse battery"
AGENT_PATH = "/org/freedesktop/NetworkManager/SecretAgent"
AGENT_IFACE = NM + ".SecretAgent"
# wpa_supplicant control commands that change nothing (roamd's station facts use them)
READ_ONLY = {"ATTACH", "DETACH", "PING", "STATUS", "SIGNAL_POLL", "INTERFACES", "LEVEL"}


class Env:
    OWNER = "networkmanager"

    def start_owner(self):
        self.nm, self.nmbus = start_double(self.env.address, "networkmanager_wifi.py", NM)
        self.dev = str(self.mock("AddWiFiDevice", "s", ["wlan0"]))

    def __init__(self):
        self.env = MiniEnv("wifinm")
        self.nm = None
        try:
            self.env.netns("ip link add wlan0 type veth peer name wlan0-peer")
            self.env.netns("ip link set wlan0-peer up")
            self.env.netns("ip link set wlan0 up")
            self.start_owner()
            # where NM's wpa_supplicant would keep its control socket: anything roamd sends
            # there is kept
            self.ctrl = os.path.join(self.env.dir, "ctrl")
            os.mkdir(self.ctrl)
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self.sock.bind(os.path.join(self.ctrl, "wlan0"))
            self.sock.setblocking(False)
            conf = wpaenv.config(self.ctrl, os.path.join(self.env.dir, "client"))
            self.env.start_roamd(conf + "[Bearers]\nwlan0=wifi\n")
            self.rb = self.env.rb
            self.signals = []
            self.rb.conn.add_signal_receiver(self._on_wifi, dbus_interface=WIFI,
                                             member_keyword="member")
            self.rb.wait(lambda: self.prop("WiFiBackend") == self.OWNER,
                         what="%s decided as wlan0's owner" % self.OWNER)
        except Exception:
            self.close()
            raise

    def _on_wifi(self, *args, member=None):
        self.signals.append((str(member), [plain(a) for a in args]))

    def roamd_signals(self):
        """roamd's org.roam1.WiFi signals so far: a Ping round trip to roamd orders every one
        it sent before, then the ones still queued are dispatched to _on_wifi."""
        self.rb.sync()
        return list(self.signals)

    def mock(self, method, sig="", args=()):
        return self.nmbus.call(NM_PATH, MOCK, method, sig, args, dest=NM)

    def prop(self, name):
        try:
            return str(self.rb.get(self.rb.link_path("wlan0"), WIFI, name))
        except (CallError, dbus.DBusException):
            return ""

    def wifi(self, method, sig="", args=()):
        return self.rb.call(self.rb.link_path("wlan0"), WIFI, method, sig, args)

    def join(self, **request):
        req = dbus.Dictionary({}, signature="sv")
        for k, v in request.items():
            req[k] = dbus.ByteArray(v) if isinstance(v, bytes) else v
        return int(self.wifi("Join", "a{sv}", [req]))

    def signal(self, member, join_id, n=1):
        got = [a for m, a in self.signals if m == member and int(a[0]) == join_id]
        return got[n - 1] if len(got) >= n else None

    def wait_signal(self, member, join_id, n=1):
        return self.rb.wait(lambda: self.signal(member, join_id, n),
                            what="%s #%d of join %d" % (member, n, join_id))

    def ctrl_messages(self):
        out = []
        while True:
            try:
                out.append(self.sock.recv(4096))
            except BlockingIOError:
                return out

    def close(self):
        try:
            rc = self.env.stop_roamd()
            assert rc in (None, 0), "roamd exited with %s" % rc
        finally:
            if self.nm:
                stop_double(self.nm, self.nmbus)
            if getattr(self, "sock", None):
                self.sock.close()
            self.env.close()


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


def test_join_asks_the_secret_and_retries_a_wrong_key_in_place(env):
    env.mock("AddAccessPoint", "oaysysb", [env.dev, dbus.ByteArray(b"home"), "wpa2", 80, PSK,
                                           False])
    join = env.join(ssid=b"home")
    assert env.wait_signal("JoinNeedsSecret", join)[1:] == ["passphrase", "first"]
    env.wifi("JoinSecret", "ua{sv}", [dbus.UInt32(join),
                                      {"passphrase": dbus.ByteArray(b"wrong horse battery")}])
    assert env.wait_signal("JoinNeedsSecret", join, 2)[1:] == ["passphrase", "wrong-key"]
    env.wifi("JoinSecret", "ua{sv}", [dbus.UInt32(join), {"passphrase": dbus.ByteArray(
        PSK.encode())}])
    done = env.wait_signal("JoinDone", join)
    assert done[1] == "connected", done
    steps = [a[1] for m, a in env.signals if m == "JoinStep" and a[0] == join]
    assert "authenticating" in steps
    # NM asked roamd's agent, first ALLOW_INTERACTION then REQUEST_NEW
    assert [c[2] for c in plain(env.mock("GetAgentCalls"))] == [1, 3]
    assert [s[1] for s in plain(env.mock("GetSecretsSeen"))] == ["wrong horse battery", PSK]
    # no secret in roamd's log or in any signal
    log = env.env.log()
    assert PSK not in log and "wrong horse" not in log
    sigs = env.roamd_signals()
    assert [a[1] for m, a in sigs if m == "JoinDone"] == ["connected"], sigs
    assert all(PSK not in repr(a) and "wrong horse" not in repr(a) for _m, a in sigs)
    # NM owns wlan0: nothing that changes wpa_supplicant was sent to its control socket (the
    # link's station facts still subscribe to its events: ATTACH, a read)
    sent = [m.split()[0].decode() for m in env.ctrl_messages() if m.split()]
    assert [c for c in sent if c not in READ_ONLY] == [], sent


def test_a_strangers_call_to_roamds_agent_is_refused(env):
    env.mock("AddAccessPoint", "oaysysb", [env.dev, dbus.ByteArray(b"home"), "wpa2", 80, PSK,
                                           False])
    join = env.join(ssid=b"home")
    env.wait_signal("JoinNeedsSecret", join)
    conn_path = plain(env.nmbus.call(NM_PATH + "/Settings", NM + ".Settings", "ListConnections",
                                     dest=NM))[0]
    req = {"802-11-wireless-security": {"key-mgmt": dbus.String("wpa-psk")}}
    args = ["a{sa{sv}}osasu", [req, conn_path, "802-11-wireless-security", [], 3]]
    # a root process that is not NetworkManager
    with pytest.raises(CallError) as e:
        env.rb.call(AGENT_PATH, AGENT_IFACE, "GetSecrets", *args, dest="org.roam1")
    assert e.value.name == AGENT_IFACE + ".PermissionDenied"
    # and an unprivileged one
    ok, name, _out = call_as(env, 65534, "org.roam1", AGENT_PATH, AGENT_IFACE + ".GetSecrets",
                             "dict:string:string:", "objpath:" + conn_path,
                             "string:802-11-wireless-security", "array:string:", "uint32:3")
    assert not ok
    env.wifi("JoinCancel", "u", [dbus.UInt32(join)])
    assert env.wait_signal("JoinDone", join)[1] == "canceled"
    env.rb.wait(lambda: plain(env.nmbus.call(NM_PATH + "/Settings", NM + ".Settings",
                                             "ListConnections", dest=NM)) == [],
                what="the canceled join's profile gone")


def call_as(env, uid, dest, path, method, *typed):
    import re
    import subprocess
    r = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                        "--", "dbus-send", "--bus=" + env.env.address, "--print-reply",
                        "--reply-timeout=5000", "--dest=" + dest, path, method, *typed],
                       capture_output=True, text=True, timeout=30)
    out = r.stdout + r.stderr
    m = re.search(r"^Error ([A-Za-z0-9_.]+)", out, re.M)
    return r.returncode == 0, (m.group(1) if m else None), out
