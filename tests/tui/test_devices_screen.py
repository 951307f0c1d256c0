"""The devices screen (WiFi Direct, key 6) against the real roamd and the P2P fake of
tests/wpa: every state in a golden (no device yet, searching, the list, connecting by button,
a request to accept, a PIN shown, a PIN typed, connected with what the group's link reaches and
which apps use it, disconnected, a failed attempt in words, a device lost midway, WiFi Direct
unavailable), at 80x24 and 40x12."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "wpa"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

from test_p2p import PHONE, PRINTER, TV, close_env, make_env, peer_path  # noqa: E402
from test_p2p_link import GROUP, connect_tv, group_world  # noqa: E402
from tuidriver import Tui  # noqa: E402


@pytest.fixture
def p2p():
    p = make_env("tui-dev")
    try:
        yield p
    finally:
        close_env(p)


@pytest.fixture
def screen(p2p, tmp_path):
    started = []

    def start(cols=80, rows=24):
        t = Tui(p2p.env.env, tmp_path, cols=cols, rows=rows)
        started.append(t)
        return t

    yield start
    for t in started:
        t.close()


def test_devices_list_connect_and_request(p2p, screen, golden):
    p2p.found(TV)
    p2p.found(PRINTER)
    t = screen()
    t.wait_for(screen="overview", text="6 Devices")
    t.key("6")
    t.wait_for(screen="devices", text="Office printer")
    golden("devices-list", t)
    # A device asks to connect: the dialog says what to do.
    p2p.fake.prov_disc_pbc_req(PHONE)
    t.wait_for(screen="devices", text="Ana's phone (phone) asks to connect")
    golden("devices-request", t)
    t.key("a")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PHONE.addr} pbc auth"
    # roamd's answer is said; a key before it would be refused (one call at a time).
    t.wait_for(screen="devices", text=["connecting", "Accepted Ana's phone."])
    # Connect to the printer by a PIN roam shows.
    t.key("j")
    t.key("p")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} pin"
    t.wait_for(screen="devices", text=["Type this PIN on Office printer", "on the device."])
    golden("devices-pin-shown", t)


def test_devices_enter_pin_small(p2p, screen, golden):
    p2p.found(TV)
    t = screen(40, 12)
    t.wait_for(screen="overview")
    t.key("6")
    t.wait_for(screen="devices", text="Living Room TV")
    t.key("e")
    t.wait_for(screen="devices", text="Type the PIN Living Room TV")
    t.key("1234567")
    t.wait_for(screen="devices", text="1234567_")
    golden("devices-small-pin", t)
    t.key("0\r")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} 12345670 keypad"
    t.wait_for(screen="devices", text="connecting")


def test_devices_without_p2p(screen, tmp_path, golden):
    """No P2P device: no tab, and key 6 says why."""
    from minienv import MiniEnv
    env = MiniEnv("tui-nop2p")
    try:
        env.start_roamd(f"[Apps]\nEnforce=no\n[WiFi]\nControlDirectory={env.dir}/ctrl\n"
                        f"ClientDirectory={env.dir}/client\n")
        t = Tui(env.env, tmp_path)
        try:
            t.wait_for(screen="overview")
            assert "Devices" not in t.text_lines()[0]
            t.key("6")
            t.wait_for(screen="devices", text=["WiFi Direct is not available",
                                               "wpa_supplicant running on it"])
            golden("devices-unavailable", t)
        finally:
            t.close()
    finally:
        env.close()


def test_devices_search_connect_disconnect(p2p, screen, golden):
    """The way to the TV: nothing found yet, a search, the TV appears, Enter connects by its
    button (the screen says to press it), connected, d disconnects and says so."""
    t = screen()
    t.wait_for(screen="overview", text="6 Devices")
    t.key("6")
    t.wait_for(screen="devices", text="No WiFi Direct devices found yet. f searches.")
    golden("devices-empty", t)
    t.key("f")
    assert p2p.fake.wait_request("P2P_FIND") == "P2P_FIND 30"
    t.wait_for(screen="devices", text=["Searching for WiFi Direct devices (s stops)",
                                       "Started a 30-second search."])
    p2p.fake.add_peer(TV)
    t.wait_for(screen="devices", text="Living Room TV")
    golden("devices-searching", t)
    t.key("s")
    assert p2p.fake.wait_request("P2P_STOP_FIND") == "P2P_STOP_FIND"
    # The search's end (P2P-FIND-STOPPED) comes before roamd's answer: a key before the
    # answer would be refused, so the answer is waited for.
    t.wait_for(screen="devices", text=["1 WiFi Direct device. f searches again.",
                                       "Stopped searching."])
    t.key("\r")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} pbc"
    t.wait_for(screen="devices", text=["press the WiFi Direct (WPS) button",
                                       "Started connecting to Living Room TV."])
    golden("devices-connect", t)
    p2p.fake.group_started(TV.addr, "client")
    # No link p2p-wlan0-0 in this world: no verdict to tell (test_devices_connected_reach
    # has the real one).
    t.wait_for(screen="devices", text=["Connected to Living Room TV through p2p-wlan0-0",
                                       "roamd is checking what it",
                                       "No app is routed over it now"])
    golden("devices-connected-checking", t)
    # d asks first, as Bluetooth's remove does (L9 of the new-user report): n keeps it
    t.key("d")
    t.wait_for(screen="devices", text="Disconnect from Living Room TV? Its connection ends.")
    t.key("n")
    t.wait_for(screen="devices", text="Not done: Living Room TV stays connected.")
    t.key("d")
    t.wait_for(screen="devices", text="Disconnect from Living Room TV?")
    t.key("y")
    assert p2p.fake.wait_request("P2P_GROUP_REMOVE") == "P2P_GROUP_REMOVE p2p-wlan0-0"
    t.wait_for(screen="devices", text=["Not connected: disconnected from this computer.",
                                       "Started disconnecting from Living Room TV."])
    golden("devices-disconnected", t)


def test_devices_failures_in_words(p2p, screen, golden):
    """A refused attempt, a group the TV ends, and a device that goes out of reach midway
    (gone from the list: the status line says what happened)."""
    p2p.found(TV)
    t = screen()
    t.wait_for(screen="overview", text="6 Devices")
    t.key("6")
    t.wait_for(screen="devices", text="Living Room TV")
    t.key("\r")
    t.wait_for(screen="devices", text="Started connecting to Living Room TV.")
    p2p.fake.go_neg_failure(11)
    t.wait_for(screen="devices", text=[
        "Not connected: the device said no, or no one accepted on it in time.",
        "Could not connect to Living Room TV: the device said no"])
    golden("devices-failed", t)
    p2p.connected(TV)
    t.wait_for(screen="devices", text="Connected to Living Room TV")
    p2p.fake.group_removed("p2p-wlan0-0", "GO_ENDING_SESSION")
    t.wait_for(screen="devices", text=["Not connected: the device ended it.",
                                       "The connection to Living Room TV ended: the device "
                                       "ended it."])
    t.key("\r")
    t.wait_for(screen="devices", text="Started connecting to Living Room TV.")
    p2p.fake.lose_peer(TV.addr)
    t.wait_for(screen="devices", text=["Could not connect to Living Room TV: the device went "
                                       "out of reach.", "No WiFi Direct devices found yet."])
    golden("devices-peer-lost", t)


def test_devices_request_small(p2p, screen, golden):
    """The request dialog at 40x12: who asks, how to accept, and reject."""
    p2p.found(TV)
    t = screen(40, 12)
    t.wait_for(screen="overview")
    t.key("6")
    t.wait_for(screen="devices", text="Living Room TV")
    p2p.fake.prov_disc_show_pin(PHONE)
    t.wait_for(screen="devices", text="asks to connect")
    golden("devices-small-request", t)
    t.key("r")
    assert p2p.fake.wait_request("P2P_REJECT") == f"P2P_REJECT {PHONE.addr}"
    t.wait(lambda t: t.frame.screen == "devices" and "asks to connect" not in t.text()
           and "Rejected Ana's phone." in t.text(), what="the dialog closed")
    assert "Ana's phone (phone): available" in t.text()


@pytest.fixture
def group_net():
    yield from group_world("tui-p2plink")


def test_devices_connected_reach(group_net, tmp_path, golden):
    """Connected to the TV over a real group link: the screen says the link reaches the TV and
    not the Internet (roamd's local verdict) and names what is routed over it: the casting
    app, and (the group being the only link with a default route here) every other app and
    the system's services."""
    bus = connect_tv(group_net)
    bus.wait(lambda: bus.link_prop(GROUP, "Connectivity") == "local", what="local verdict")
    path = bus.manager("SetAppPolicy", "org.example.Cast", {"bearers": "wifi-direct"})
    bus.wait(lambda: bus.get(path, "org.roam1.App", "Route4") == GROUP, what="app routed")
    t = Tui(group_net.env, tmp_path)
    try:
        # The firewall asks where the new link's network is first (docs/firewall.md).
        t.wait_for(screen="overview", text="Is this a home, work or public network?")
        t.settle()
        t.key("u")
        t.wait_for(screen="overview", text="6 Devices")
        t.key("6")
        t.wait_for(screen="devices", text=["Connected to Living Room TV through p2p-wlan0-0:",
                                           "it reaches Living Room TV,", "not the Internet.",
                                           "Apps routed over it: org.example.Cast, every other "
                                           "app, system services."])
        golden("devices-connected", t)
    finally:
        t.close()


@pytest.mark.parametrize("theme", ["high-contrast", "monochrome"])
def test_devices_themes(p2p, tmp_path, golden, theme):
    """States in words, whatever the colours: a request, a device connecting, one connected."""
    p2p.found(TV)
    p2p.found(PRINTER)
    p2p.connected(TV)
    p2p.peer_call(PRINTER, "Connect", "push-button", "")
    p2p.wait_state(PRINTER, "connecting")
    p2p.fake.prov_disc_pbc_req(PHONE)
    p2p.wait_state(PHONE, "request")
    t = Tui(p2p.env.env, tmp_path, args=("--theme", theme))
    try:
        t.wait_for(screen="overview", text="6 Devices")
        t.key("6")
        t.wait_for(screen="devices", text=["asks to connect", "connecting", "connected"])
        golden(f"devices-theme-{theme}", t, theme=theme)
    finally:
        t.close()


def test_devices_filter(p2p, screen, golden):
    """/ narrows the devices to those whose name, address, type or state contains the text (L8
    of the new-user report: / did nothing here); the keys act on a shown device."""
    p2p.found(TV)
    p2p.found(PRINTER)
    t = screen()
    t.wait_for(screen="overview", text="6 Devices")
    t.key("6")
    t.wait_for(screen="devices", text="Office printer")
    t.key("/")
    t.key("printer")
    t.wait_for(screen="devices", text="Filter: printer_ (1 of 2 devices)")
    t.key("\r")
    t.wait_for(screen="devices", text="Filter: printer (1 of 2 devices)")
    assert "Office printer" in t.text() and TV.name not in t.text(), t.text()
    golden("devices-filter", t)
    # p connects the printer, the one shown, though the TV came first
    t.key("p")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} pin"
