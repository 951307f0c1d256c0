"""roamd against Debian's real wpa_supplicant (2.10): the wired driver on a veth pair inside the
test's own namespace. ATTACH, STATUS and events reach the link's WiFi properties; a restart of
wpa_supplicant while roamd runs is followed through inotify; the global control interface."""
import os
import signal

import pytest

from busutil import RoamBus
from minienv import MiniEnv
from realwpa import RealWpa
from wpactl import WpaCtl
import wpaenv


@pytest.fixture
def env():
    e = MiniEnv("wpa")
    try:
        e.netns("ip link add wtest0 type veth peer name wtest1")
        e.netns("ip link set wtest1 up")
        e.netns("ip link set wtest0 up")
        e.ctrl = os.path.join(e.dir, "ctrl")
        e.client = os.path.join(e.dir, "client")
        e.wpa = None
        yield e
        wpaenv.stop_roamd(e)
        # roamd removes its own sockets.
        assert os.listdir(e.client) == []
    finally:
        if e.wpa:
            e.wpa.close()
        e.close()


def start(env, global_path=None, **wifi):
    env.wpa = RealWpa(env.name, "wtest0", env.ctrl, global_path=global_path).start()
    env.start_roamd(wpaenv.config(env.ctrl, env.client, **wifi))
    return RoamBus(env.address)


def wifi(bus):
    return tuple(bus.link_prop("wtest0", k) for k in
                 ("WiFiState", "WiFiSSID", "WiFiBSSID", "WiFiKeyMgmt"))


def test_status_and_events(env):
    bus = start(env)
    # The wired driver "associates" as soon as it runs (or a moment later): either state.
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") in ("DISCONNECTED", "COMPLETED"),
             what="STATUS after ATTACH")
    ctl = WpaCtl(env.wpa.socket)
    try:
        assert ctl.request("PING") == b"PONG\n"
        # CTRL-EVENT-DISCONNECTED / -CONNECTED make roamd ask STATUS again.
        assert ctl.request("DISCONNECT") == b"OK\n"
        bus.wait(lambda: wifi(bus) == ("DISCONNECTED", "", "", ""), what="the disconnect")
        assert ctl.request("RECONNECT") == b"OK\n"
        bus.wait(lambda: wifi(bus) == ("COMPLETED", "wired", "01:80:c2:00:00:03", "NONE"),
                 what="the connected station facts")
        assert bus.link_prop("wtest0", "WiFiFrequency") == 0
    finally:
        ctl.close()
    assert "Attached to wpa_supplicant at " + env.wpa.socket in env.log()
    # Not a P2P device: the wired driver has no P2P.
    assert bus.get("/org/roam1", "org.roam1.Manager", "P2PState") == "unavailable"


def test_restart_while_roamd_runs(env):
    bus = start(env)
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") != "")
    env.wpa.stop()
    # The socket's removal (inotify) takes the interface's facts away.
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") == "", what="facts gone")
    env.wpa.start()
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") != "",
             what="re-attached after the restart")
    ctl = WpaCtl(env.wpa.socket)
    try:
        ctl.request("DISCONNECT")
        bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") == "DISCONNECTED",
                 what="events after the restart")
    finally:
        ctl.close()
    assert env.log().count("Attached to wpa_supplicant") == 2


def test_global_control_interface(env):
    glob = os.path.join(env.dir, "global", "wpa-global")
    os.makedirs(os.path.dirname(glob))
    bus = start(env, global_path=glob, GlobalControl=glob)
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") != "",
             what="IFNAME=wtest0 STATUS through the global socket")
    ctl = WpaCtl(glob)
    try:
        assert ctl.request("IFNAME=wtest0 DISCONNECT") == b"OK\n"
        bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") == "DISCONNECTED",
                 what="an IFNAME= event")
        assert ctl.request("IFNAME=wtest0 RECONNECT") == b"OK\n"
        bus.wait(lambda: bus.link_prop("wtest0", "WiFiSSID") == "wired",
                 what="another IFNAME= event")
    finally:
        ctl.close()
    env.wpa.stop()
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") == "", what="global socket gone")


def test_hung_daemon_is_noticed_by_ping(env):
    """A wpa_supplicant that stops answering while its socket stays (SIGSTOP: hung) is noticed
    by roamd's PING ([WiFi] PingInterval=): the interface's facts go; once it runs again roamd
    attaches anew and the facts come back."""
    bus = start(env, PingInterval="1s", RequestTimeout="1s")
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") != "", what="STATUS after ATTACH")
    env.wpa.proc.send_signal(signal.SIGSTOP)
    try:
        bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") == "", what="facts gone")
        assert 'did not answer "PING" within 1000 ms' in env.log()
    finally:
        env.wpa.proc.send_signal(signal.SIGCONT)
    bus.wait(lambda: bus.link_prop("wtest0", "WiFiState") != "", what="facts back")
    assert env.log().count("Attached to wpa_supplicant") == 2
