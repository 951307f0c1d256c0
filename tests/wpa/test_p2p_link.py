"""The group's interface is an ordinary link: bearer wifi-direct, its own verdict (local: the
TV answers, nothing beyond it does) and per-app policy by bearer (the casting app routed over
it)."""
import os

import pytest

from busutil import PEER, RoamBus
from fakewpa import FakeWpa
from probenet import GW_V4, ProbeNet
from test_p2p import TV, peer_path

GROUP = "p2p-wlan0-0"


def group_world(name):
    """A world whose device side plays the group interface; yields the ProbeNet."""
    n = ProbeNet(name)
    n.fake = None
    try:
        # The device side of the veth pair plays the group interface wpa_supplicant creates.
        n.netns("ip link set d0 down")
        n.netns(f"ip link set d0 name {GROUP}")
        n.netns(f"ip link set {GROUP} up")
        n.netns(f"ip route replace default via {GW_V4} dev {GROUP}")
        n.netns("ip link add wlan0 type veth peer name wlan0-peer")
        yield n
        rc = n.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{n.log()[-4000:]}"
    finally:
        if n.fake:
            n.fake.close()
        n.close()


@pytest.fixture
def net():
    yield from group_world("p2plink")


def connect_tv(net):
    """roamd with the P2P fake, connected to the TV over the group link; returns the bus."""
    ctrl = os.path.join(net.dir, "ctrl")
    net.fake = FakeWpa(ctrl).start()
    conf = net.probe_config().replace("[LinkDNS]\nd0=", f"[LinkDNS]\n{GROUP}=")
    net.start_roamd(conf + f"[Bearers]\np2p-*=wifi-direct\n[Apps]\nStateFile={net.dir}/apps.state\n"
                    f"PolicyDirectory={net.dir}/apps.d\n"
                    f"[WiFi]\nControlDirectory={ctrl}\nClientDirectory={net.dir}/client\n")
    bus = RoamBus(net.address)
    net.fake.wait_attached()
    net.fake.add_peer(TV)
    bus.wait(lambda: peer_path(TV) in bus.peers(), what="TV found")
    bus.call(peer_path(TV), PEER, "Connect", "push-button", "")
    net.fake.group_started(TV.addr, "client", ifname=GROUP)
    bus.wait(lambda: bus.get(peer_path(TV), PEER, "State") == "connected")
    return bus


def test_group_link_verdict_and_app_policy(net):
    bus = connect_tv(net)
    assert bus.get(peer_path(TV), PEER, "GroupInterface") == GROUP
    assert bus.link_prop(GROUP, "Bearer") == "wifi-direct"
    # The TV answers, the Internet does not: local, on this link alone.
    bus.wait(lambda: bus.link_prop(GROUP, "Connectivity4") == "local", what="local verdict")
    # Only the casting app may use it.
    path = bus.manager("SetAppPolicy", "org.example.Cast", {"bearers": "wifi-direct"})
    bus.wait(lambda: bus.get(path, "org.roam1.App", "Route4") == GROUP, what="app routed")
    assert bus.get(path, "org.roam1.App", "Bearers") == ["wifi-direct"]
    # An app kept off wifi-direct has no link to take.
    mail = bus.manager("SetAppPolicy", "org.example.Mail", {"bearers": "ethernet,wifi"})
    bus.wait(lambda: bus.get(mail, "org.roam1.App", "State") == "blocked: no allowed link",
             what="mail blocked")
    assert bus.get(mail, "org.roam1.App", "Route4") == ""
    # Only the casting app: every other app's policy (default) keeps off wifi-direct too.
    default = bus.manager("SetAppPolicy", "default", {"bearers": "ethernet,wifi"})
    bus.wait(lambda: bus.get(default, "org.roam1.App", "Route4") == "", what="default off it")
    assert bus.get(path, "org.roam1.App", "Route4") == GROUP
