"""wpa_supplicant answers one 4096-byte reply a command (ctrl_iface.c
wpa_supplicant_ctrl_iface_process(): reply_size 4096): LIST_NETWORKS holds the whole lines that
fit (LIST_NETWORKS LAST_ID=N pages on), BSS RANGE the whole BSSes that fit, the list's last
one ending in "####" (BSS RANGE=N- pages on). With 300 saved networks and 120 BSSes in range
roamd lists every one of them, and a join finds the SSID's old network on a late page, removes
it, and enables again every network that was enabled, not just the first page's."""
import os

import dbus
import pytest

from fakewpa import REPLY_SIZE, FakeWpa
from minienv import MiniEnv
from test_wifi_join import WifiBus
import wpaenv

N_SAVED = 300
N_BSS = 120
PSK = "paged-pass-1"


def saved_ssid(i):
    return "saved-%03d-%s" % (i, "x" * 20)


class Env:
    def __init__(self):
        self.env = MiniEnv("wifipages")
        ctrl = os.path.join(self.env.dir, "ctrl")
        self.env.netns("ip link add wlan0 type veth peer name wlan0-peer")
        self.env.netns("ip link set wlan0 up")
        self.fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
        # 120 BSSes, many more than one reply holds; the last one is Home
        self.fake.bsses = [
            {"id": 10 + i, "bssid": "02:00:00:01:%02x:%02x" % (i // 256, i % 256),
             "freq": 2412 + 5 * (i % 13), "level": -40 - i % 50,
             "flags": "[WPA2-PSK-CCMP][ESS]", "ssid": b"air-%03d" % i, "psk": "air-pass-%03d" % i}
            for i in range(N_BSS - 1)]
        self.fake.bsses.append({"id": 10 + N_BSS, "bssid": "02:00:00:02:00:00", "freq": 5180,
                                "level": -45, "flags": "[WPA2-PSK-CCMP][ESS]",
                                "ssid": b"Home", "psk": PSK})
        # 300 saved networks, enabled; Home's old one far down the list
        self.fake.networks = {i: {"disabled": "0", "ssid": saved_ssid(i), "key_mgmt": "NONE"}
                              for i in range(N_SAVED)}
        self.fake.networks[290] = {"disabled": "0", "ssid": "Home", "psk": "old-pass-1"}
        conf = wpaenv.config(ctrl, os.path.join(self.env.dir, "client"))
        self.env.start_roamd(conf + "[Bearers]\nwlan0=wifi\n")
        self.bus = WifiBus(self.env.address)
        self.bus.wait(lambda: self.owner() == "wpa_supplicant", what="the owner")

    def owner(self):
        try:
            return str(self.bus.wifi_prop("wlan0", "WiFiBackend"))
        except dbus.DBusException:
            return None

    def networks(self):
        return {bytes(ssid): {str(k): v for k, v in d.items()}
                for ssid, _, d in self.bus.wifi("wlan0", "GetNetworks")}

    def close(self):
        try:
            wpaenv.stop_roamd(self.env)
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


def test_double_pages_as_wpa_supplicant_does(env):
    """The double's answers: no reply over 4095 bytes (the NUL), whole lines and whole BSSes
    only; a cut BSS page ends in ====, the list's end in ####; the pages together hold all."""
    f = env.fake
    first = f.handle("BSS RANGE=ALL MASK=0x21887", None)[0]
    assert len(first) <= REPLY_SIZE - 1 and first.endswith("====\n")
    ids, reply = [], first
    while True:
        blocks = [b for b in reply.split("\n") if b.startswith("id=")]
        ids += [int(b[3:]) for b in blocks]
        if reply.endswith("####\n"):
            break
        assert len(reply) > REPLY_SIZE - 200 and reply.endswith("====\n")
        reply = f.handle("BSS RANGE=%d- MASK=0x21887" % (ids[-1] + 1), None)[0]
        assert len(reply) <= REPLY_SIZE - 1
    assert ids == [b["id"] for b in f.bsses]
    assert f.handle("BSS RANGE=%d- MASK=0x21887" % (ids[-1] + 1), None)[0] == ""
    listed = f.handle("LIST_NETWORKS", None)[0]
    assert len(listed) <= REPLY_SIZE - 1 and listed.count("\n") - 1 < N_SAVED


def test_every_network_listed(env):
    env.fake.networks[297]["priority"] = "9"
    nets = env.networks()
    known = [s for s, d in nets.items() if d["known"]]
    assert len(known) == N_SAVED, len(known)
    in_range = [s for s, d in nets.items() if d["in-range"]]
    assert len(in_range) == N_BSS, len(in_range)
    assert nets[b"Home"]["known"] and nets[b"Home"]["in-range"]
    assert nets[saved_ssid(299).encode()]["known"]
    # each saved network's priority (GET_NETWORK N priority: not in LIST_NETWORKS)
    assert int(nets[saved_ssid(297).encode()]["priority"]) == 9
    assert int(nets[saved_ssid(296).encode()]["priority"]) == 0
    pages = [r for r in env.fake.requests if r.startswith("LIST_NETWORKS LAST_ID=")]
    assert len(pages) >= 3, pages
    assert any(r.startswith("BSS RANGE=") and r != "BSS RANGE=ALL MASK=0x21887"
               for r in env.fake.requests)


def test_join_replaces_the_old_network_on_a_late_page(env):
    req = dbus.Dictionary({"ssid": dbus.ByteArray(b"Home"),
                           "passphrase": dbus.ByteArray(PSK.encode())}, signature="sv")
    join = int(env.bus.wifi("wlan0", "Join", req))
    _, result, words = env.bus.wait(lambda: env.bus.wifi_signal("JoinDone", join),
                                    what="JoinDone")
    assert result == "connected", words
    homes = [i for i, n in env.fake.networks.items() if n.get("ssid") == "Home"]
    assert homes == [N_SAVED], homes  # the new one; 290 removed
    assert "REMOVE_NETWORK 290" in env.fake.requests
    # every network enabled before the join is enabled again
    off = [i for i, n in env.fake.networks.items() if n["disabled"] != "0"]
    assert off == [], off
