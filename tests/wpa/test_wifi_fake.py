"""org.roam1.WiFi against the control-socket double (fakewpa.py) where a radio is needed: the
scan and its results (BSS RANGE=ALL), the networks in words, and what a real AP says to a
wrong key (SSID-TEMP-DISABLED reason=WRONG_KEY; CONN_FAILED for SAE), which the wired driver
cannot produce. A wrong passphrase is asked again in place and the join succeeds with the
right one; WPA3 says it cannot tell a wrong password from an AP out of reach; a network that
does not answer is not-found; no key reaches the log or a signal."""
import os

import dbus
import pytest

from fakewpa import FakeWpa
from minienv import MiniEnv
from test_wifi_join import WifiBus
import wpaenv


def bss(i, ssid, bssid, freq, level, flags, psk=None):
    return {"id": i, "bssid": bssid, "freq": freq, "level": level, "flags": flags,
            "ssid": ssid, "psk": psk}


class Env:
    def __init__(self):
        self.env = MiniEnv("wififake")
        ctrl = os.path.join(self.env.dir, "ctrl")
        self.env.netns("ip link add wlan0 type veth peer name wlan0-peer")
        self.env.netns("ip link set wlan0 up")
        self.fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
        self.fake.bsses = [
            bss(3, b"Home", "02:00:00:00:01:00", 2412, -70, "[WPA2-PSK-CCMP][ESS]",
                psk="right-pass-1"),
            bss(4, b"Home", "02:00:00:00:02:00", 5180, -48, "[WPA2-PSK+SAE-CCMP][ESS]",
                psk="right-pass-1"),
            bss(5, b"Cafe Guest", "02:00:00:00:03:00", 2437, -57, "[ESS]"),
            bss(6, b"Office", "02:00:00:00:04:00", 5200, -66, "[WPA2-SAE-CCMP][SAE-H2E][ESS]",
                psk="sae-secret"),
        ]
        self.fake.networks = {0: {"disabled": "0", "ssid": "Attic", "key_mgmt": "NONE"}}
        conf = wpaenv.config(ctrl, os.path.join(self.env.dir, "client"))
        self.env.start_roamd(conf + "[Bearers]\nwlan0=wifi\n")
        self.bus = WifiBus(self.env.address)
        self.path = None
        self.bus.wait(lambda: self.owner() == "wpa_supplicant", what="the owner")

    def owner(self):
        try:
            return str(self.bus.wifi_prop("wlan0", "WiFiBackend"))
        except dbus.DBusException:
            return None

    def join(self, **request):
        req = dbus.Dictionary({}, signature="sv")
        for k, v in request.items():
            req[k] = dbus.ByteArray(v) if isinstance(v, bytes) else v
        return int(self.bus.wifi("wlan0", "Join", req))

    def wait(self, member, join):
        return self.bus.wait(lambda: self.bus.wifi_signal(member, join), what=member)

    def close(self):
        try:
            wpaenv.stop_roamd(self.env)
            log = self.env.log()
            for secret in ("right-pass-1", "wrong-pass-1", "sae-secret", "bad-sae"):
                assert secret not in log
        finally:
            self.fake.close()
            self.env.close()


@pytest.fixture
def env():
    e = Env()
    try:
        yield e
    finally:
        e.close()


def test_scan_and_networks_in_words(env):
    env.bus.wifi("wlan0", "Scan")
    assert "SCAN" in env.fake.requests
    assert env.bus.wifi_prop("wlan0", "LastScan") > 0
    assert not env.bus.wifi_prop("wlan0", "Scanning")
    nets = {str(name): {str(k): v for k, v in d.items()}
            for _, name, d in env.bus.wifi("wlan0", "GetNetworks")}
    assert "BSS RANGE=ALL MASK=0x21887" in env.fake.requests
    home = nets["Home"]
    # one row per SSID, the strongest BSS's values
    assert (int(home["signal"]), str(home["signal-words"]), str(home["band"]),
            int(home["bssids"]), str(home["security"])) == (-48, "excellent", "5 GHz", 2,
                                                           "wpa2/wpa3")
    assert str(nets["Cafe Guest"]["security"]) == "open"
    assert str(nets["Cafe Guest"]["signal-words"]) == "good"
    assert str(nets["Office"]["security"]) == "wpa3"
    assert not home["known"] and home["in-range"]
    # a saved network out of range is listed too
    attic = nets["Attic"]
    assert attic["known"] and not attic["in-range"] and "signal" not in attic


def test_wrong_key_is_asked_again_in_place(env):
    join = env.join(ssid=b"Home", passphrase=b"wrong-pass-1")
    args = env.wait("JoinNeedsSecret", join)
    assert args[1:] == ["passphrase", "wrong-key"]
    env.bus.wifi("wlan0", "JoinSecret", dbus.UInt32(join),
                 {"passphrase": dbus.ByteArray(b"right-pass-1")})
    _, result, words = env.wait("JoinDone", join)
    assert result == "connected", words
    assert words.startswith("Joined Home")
    # the same network got the new key and was selected again; the security came from the
    # scan (both BSSes of Home take PSK and SAE: key_mgmt "WPA-PSK SAE", PMF optional)
    sel = [r for r in env.fake.requests if r.startswith("SELECT_NETWORK")]
    assert sel == ["SELECT_NETWORK 1", "SELECT_NETWORK 1"]
    assert env.fake.networks[1]["key_mgmt"] == "WPA-PSK SAE"
    assert env.fake.networks[1]["ieee80211w"] == "1"
    assert env.fake.networks[1]["psk"] == "right-pass-1"
    # Attic, enabled before the join, is enabled again; the file saved after success
    assert env.fake.networks[0]["disabled"] == "0"
    assert 1 in env.fake.saved
    for m, a in env.bus.wifi_signals:
        assert all("pass-1" not in str(x) for x in a)


def test_wpa3_cannot_tell_a_wrong_password(env):
    join = env.join(ssid=b"Office", passphrase=b"bad-sae")
    _, result, words = env.wait("JoinDone", join)
    assert result == "wrong-key-or-out-of-range"
    assert words == ("Office did not accept the password, or it is out of reach: WPA3 cannot "
                     "tell these apart")
    assert env.fake.networks.keys() == {0}  # the join's network removed again
    assert env.fake.saved is None


def test_giving_up_after_a_wrong_key_says_wrong_key(env):
    join = env.join(ssid=b"Home", security="wpa2", passphrase=b"wrong-pass-1")
    env.wait("JoinNeedsSecret", join)
    env.bus.wifi("wlan0", "JoinCancel", dbus.UInt32(join))
    _, result, words = env.wait("JoinDone", join)
    assert (result, words) == ("wrong-key", "The network refused the passphrase")
    # the join's network goes and Attic comes back right after JoinDone (requests roamd sends
    # without waiting); GetNetworks is queued behind them on the socket
    nets = {str(name): {str(k): v for k, v in d.items()}
            for _, name, d in env.bus.wifi("wlan0", "GetNetworks")}
    assert nets["Attic"]["autoconnect"] and not nets["Home"]["known"]
    assert env.fake.networks.keys() == {0}
    assert env.fake.networks[0]["disabled"] == "0"


def test_not_found(env):
    join = env.join(ssid=b"Nowhere", passphrase=b"whatever-1")
    _, result, words = env.wait("JoinDone", join)
    assert result == "not-found"
    assert "No network named Nowhere answered" in words
    join = env.join(ssid=b"Nowhere", hidden=True, security="wpa2", passphrase=b"whatever-1")
    _, result, _ = env.wait("JoinDone", join)
    assert result == "not-found"  # CTRL-EVENT-NETWORK-NOT-FOUND after the hidden probe
    assert "SET_NETWORK 1 scan_ssid 1" in env.fake.requests or \
        "SET_NETWORK 2 scan_ssid 1" in env.fake.requests
