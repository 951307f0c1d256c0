"""WiFi signal strength (issue 11): roamd asks SIGNAL_POLL while the station is associated (at
once, on CTRL-EVENT-SIGNAL-CHANGE and every [WiFi] SignalInterval=) and exports the answer as
the link's WiFiSignal (dBm) and WiFiLinkSpeed (Mbit/s); it forgets them when the association
ends. Against the protocol double (fakewpa.py; SIGNAL_POLL's FAIL on a driver without signal
is checked against the real daemon's transcript in test_fake_vs_real.py)."""
import os

import pytest

from busutil import RoamBus
from fakewpa import FakeWpa
from minienv import MiniEnv
import wpaenv

AP = "02:00:00:00:0a:01"


@pytest.fixture
def env():
    e = MiniEnv("wpasignal")
    fake = None
    try:
        e.netns("ip link add wlan0 type veth peer name wlan0-peer")
        ctrl = os.path.join(e.dir, "ctrl")
        fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
        wpaenv.start_roamd(e, ctrl, SignalInterval=1)
        fake.wait_attached()
        bus = RoamBus(e.address)
        bus.wait(lambda: bus.link_prop("wlan0", "WiFiState") == "DISCONNECTED",
                 what="STATUS after ATTACH")
        yield e, fake, bus
        wpaenv.stop_roamd(e)
    finally:
        if fake:
            fake.close()
        e.close()


def signal(bus):
    return bus.link_prop("wlan0", "WiFiSignal"), bus.link_prop("wlan0", "WiFiLinkSpeed")


def test_signal_while_associated(env):
    e, fake, bus = env
    assert signal(bus) == (0, 0)
    # Not associated: roamd does not ask.
    assert not [r for r in fake.requests if r == "SIGNAL_POLL"]
    fake.associate("Home", AP, 5180, -58, 866)
    bus.wait(lambda: signal(bus) == (-58, 866), what="SIGNAL_POLL after the association")
    # The station facts of network identity, from the same client's STATUS.
    assert [bus.link_prop("wlan0", k) for k in ("WiFiSSID", "WiFiBSSID", "WiFiKeyMgmt",
                                                 "WiFiFrequency")] == \
        ["Home", AP, "WPA2-PSK", 5180]
    # A signal-change event makes roamd ask again.
    fake.signal_change(-71, 144)
    bus.wait(lambda: signal(bus) == (-71, 144), what="SIGNAL_POLL on SIGNAL-CHANGE")
    # No event: the interval (SignalInterval=1 here) catches the change.
    fake.signal_change(-80, 54, announce=False)
    bus.wait(lambda: signal(bus) == (-80, 54), what="the periodic SIGNAL_POLL")
    fake.disassociate()
    bus.wait(lambda: signal(bus) == (0, 0) and
             bus.link_prop("wlan0", "WiFiState") == "DISCONNECTED",
             what="the signal forgotten with the association")


def test_driver_without_signal(env):
    e, fake, bus = env
    fake.associate("Home", AP, 2412, -50, 72)
    bus.wait(lambda: signal(bus) == (-50, 72), what="associated with a signal")
    # SIGNAL_POLL now answers FAIL (as on the wired driver): the signal is unknown again.
    fake.signal = None
    fake.event("CTRL-EVENT-SIGNAL-CHANGE above=0 signal=-60 noise=-92 txrate=0")
    bus.wait(lambda: signal(bus) == (0, 0), what="FAIL read as no signal")
    assert bus.link_prop("wlan0", "WiFiState") == "COMPLETED"
