"""The devices screen (WiFi Direct, key 6) against the real roamd and the P2P fake of
tests/wpa: the list, a request to accept, a PIN shown, a PIN typed, at 80x24 and 40x12."""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "wpa"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

from test_p2p import PHONE, PRINTER, TV, close_env, make_env  # noqa: E402
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
    t.wait_for(screen="devices", text="connecting")
    # Connect to the printer by a PIN roam shows.
    t.key("j")
    t.key("p")
    assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} pin"
    t.wait_for(screen="devices", text="Type this PIN on Office printer")
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


def test_devices_without_p2p(screen, tmp_path):
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
            t.wait_for(screen="devices", text="WiFi Direct is not available")
        finally:
            t.close()
    finally:
        env.close()
