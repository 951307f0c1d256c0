"""The fake refuses what the real wpa_supplicant refuses (issue 39: a double as strict as the
real thing): bad input on the control socket, sent live to Debian's wpa_supplicant 2.10 (the
wired driver on a veth pair in the test's own namespace) and to the fake in its no-P2P mode,
must get the same bytes back; an over-long request gets no answer from either. With P2P, the
fake's own checks of P2P_CONNECT and SET as ctrl_iface.c words them."""
import os
import subprocess

import pytest

from fakewpa import CTRL_IFACE_MAX_LEN, FakeWpa, Peer
from realwpa import RealWpa
from wpactl import WpaCtl

PEER = "02:00:00:00:00:01"
# Each is refused (or, for a few, accepted) by the real daemon; the fake must answer the same.
COMMANDS = [
    "SET device_name " + "x" * 32,  # WPS_DEV_NAME_MAX_LEN: the longest name taken
    "SET device_name " + "x" * 33,  # one byte more: refused
    "SET device_name",  # no value
    "SET no_such_parameter 1",
    "P2P_NO_SUCH_COMMAND",  # an unknown P2P_ word is an unknown command
    f"P2P_CONNECT {PEER} 1234567 keypad",  # wps_pin_str_valid(): 4 or 8 digits
    f"P2P_CONNECT {PEER} 12a45670 keypad",
    f"P2P_CONNECT {PEER} 1234 keypad",  # a valid PIN: fails only for want of P2P
    "P2P_CONNECT 02:00:00:00:00 pbc",  # not a MAC address
    "LEVEL 2",  # not attached
    "ADD_NETWORK",
    "SET_NETWORK 0 key_mgmt WPA-PSK SAE",
    "SET_NETWORK 0 key_mgmt BOGUS",
    "SET_NETWORK 0 key_mgmt WPA-PSK BOGUS",
    "SET_NETWORK 0 proto RSN WPA",
    "SET_NETWORK 0 proto WPA3",
    "SET_NETWORK 0 auth_alg SHARED",
    "SET_NETWORK 0 auth_alg CLOSED",
    'SET_NETWORK 0 wep_key0 "0123456789abcdef"',  # 16 bytes: MAX_WEP_KEY_LEN
    'SET_NETWORK 0 wep_key0 "0123456789abcdefg"',  # 17: refused
    "SET_NETWORK 0 wep_key0 123",  # odd hex
    'SET_NETWORK 0 ssid ""',  # an empty SSID is taken
    'SET_NETWORK 0 ssid "' + "s" * 33 + '"',
    "SET_NETWORK 0 no_such_field 1",
    "GET_NETWORK 0 priority",  # an INT field unset: its default, "0"
    "SET_NETWORK 0 priority 5",
    "GET_NETWORK 0 priority",
    'SET_NETWORK 0 phase2 "auth=GTC"',
    "GET_NETWORK 0 phase2",
    'SET_NETWORK 0 anonymous_identity "anon@corp.example"',
    "LIST_NETWORKS LAST_ID=0",  # nothing after network 0: the header only
    "BSS RANGE=ALL MASK=0x21887",  # no BSS (the wired driver scans nothing): empty
    "BSS RANGE=5- MASK=0x21887",
    "ENABLE_NETWORK all",
    "REMOVE_NETWORK all",
    "LIST_NETWORKS",
]


@pytest.fixture
def real(tmp_path):
    """The real daemon on a veth pair in a network namespace of the test's own (no bus)."""
    ns = "roam-wpastrict-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    w = None
    try:
        for cmd in ("link add wtest0 type veth peer name wtest1", "link set wtest1 up",
                    "link set wtest0 up"):
            subprocess.run(["ip", "-n", ns, *cmd.split()], check=True)
        w = RealWpa(ns, "wtest0", str(tmp_path / "ctrl"), ssid=None).start()
        yield w
    finally:
        if w:
            w.close()
        subprocess.run(["ip", "netns", "del", ns], check=False)


def answers(path, commands):
    c = WpaCtl(path)
    try:
        return [(cmd, c.request(cmd).decode()) for cmd in commands]
    finally:
        c.close()


def test_fake_refuses_what_the_real_daemon_refuses(real, tmp_path):
    got_real = answers(real.socket, COMMANDS)
    fake = FakeWpa(str(tmp_path), ifname="wtest0", p2p=False).start()
    try:
        got_fake = answers(fake.path, COMMANDS)
    finally:
        fake.close()
    assert got_fake == got_real
    # the real daemon's limits are what the fake has: sanity of the list itself
    assert dict(got_real)["SET device_name " + "x" * 33] == "FAIL\n"
    assert dict(got_real)["P2P_NO_SUCH_COMMAND"] == "UNKNOWN COMMAND\n"


def test_over_long_request_gets_no_answer(real, tmp_path):
    """ctrl_iface_unix.c: a request longer than CTRL_IFACE_MAX_LEN is dropped ("input
    truncated"), with no reply; the next one is answered. Both daemons answer a socket's
    requests in order, so the first datagram back being the PING's PONG shows that the long
    one got none (no wait for a silence)."""
    fake = FakeWpa(str(tmp_path), ifname="wtest0", p2p=False).start()
    try:
        for path in (real.socket, fake.path):
            c = WpaCtl(path)
            try:
                c.sock.send(b"SET device_name " + b"x" * CTRL_IFACE_MAX_LEN)
                c.sock.send(b"PING")
                assert c.recv() == b"PONG\n", path
                # and the daemon still answers what comes next, in order
                assert c.request("SET device_name roam") == b"OK\n", path
            finally:
                c.close()
    finally:
        fake.close()


def test_p2p_fake_checks_connect_and_set(tmp_path):
    """With P2P the fake still refuses a bad PIN, an unknown peer, a go_intent out of 0-15 and a
    device name over 32 bytes, as p2p_ctrl_connect() and config.c do (without P2P the real
    daemon answers FAIL before it looks at the PIN: p2p_init_wpa_s is NULL)."""
    fake = FakeWpa(str(tmp_path), ifname="p2p-dev-wlan0").start()
    try:
        fake.add_peer(Peer(PEER, "TV"))
        got = dict(answers(fake.path, [
            f"P2P_CONNECT {PEER} 1234567 keypad", f"P2P_CONNECT {PEER} pbc go_intent=16",
            "P2P_CONNECT 02:00:00:00:00:09 pbc", f"P2P_CONNECT {PEER} pbc",
            "SET device_name " + "x" * 33, "SET device_name roam", "P2P_NO_SUCH_COMMAND"]))
    finally:
        fake.close()
    assert got == {
        f"P2P_CONNECT {PEER} 1234567 keypad": "FAIL-INVALID-PIN\n",
        f"P2P_CONNECT {PEER} pbc go_intent=16": "FAIL\n",
        "P2P_CONNECT 02:00:00:00:00:09 pbc": "FAIL\n",
        f"P2P_CONNECT {PEER} pbc": "OK\n",
        "SET device_name " + "x" * 33: "FAIL\n",
        "SET device_name roam": "OK\n",
        "P2P_NO_SUCH_COMMAND": "UNKNOWN COMMAND\n",
    }


def test_network_list_is_cut_and_encoded_like_the_real_daemon(real, tmp_path):
    """LIST_NETWORKS holds whole lines that fit the 4096-byte reply (LAST_ID=N pages on), SSIDs
    shown as printf_encode() writes them; GET_NETWORK ssid is quoted text or, with a byte
    that is not printable ASCII, hex: the same bytes from the double as from the daemon."""
    odd = [b'say "hi"', b"back\\slash", b"tab\there", b"\x01\xffbin", b"esc\x1bnl\n"]
    commands = []
    for i in range(150):
        ssid = odd[i] if i < len(odd) else ("net-%03d-" % i).encode() + b"x" * 24
        commands += ["ADD_NETWORK", "SET_NETWORK %d ssid %s" % (i, ssid.hex())]
    commands += ["LIST_NETWORKS", "LIST_NETWORKS LAST_ID=100", "LIST_NETWORKS LAST_ID=x"]
    commands += ["GET_NETWORK %d ssid" % i for i in range(len(odd) + 1)]
    got_real = answers(real.socket, commands)
    fake = FakeWpa(str(tmp_path), ifname="wtest0", p2p=False).start()
    try:
        got_fake = answers(fake.path, commands)
    finally:
        fake.close()
    assert got_fake == got_real
    listing = dict(got_real)["LIST_NETWORKS"]
    assert len(listing) < 4096 and listing.count("\n") < 151  # cut: not every network
