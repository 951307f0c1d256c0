"""Names from the air are outside text: a WiFi Direct peer named with a byte that is not UTF-8
(`TV\\xc3\\x28`) once made GetManagedObjects fail for every client, root included (sd-bus
refuses invalid UTF-8), so `roam status`, the TUI and plain mode all failed while it was near.
roamd cleans names where they enter (shared/roam-text.c); roam cleans again for the
terminal."""
import json
import os
import subprocess

import pytest

from fakewpa import Peer
from test_p2p import TV, close_env, make_env, peer_path

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))

BROKEN = Peer("02:00:00:00:09:00", b"TV\xc3\x28".decode(errors="surrogateescape"),
              "7-0050F204-1", 0x80)
# DEL, C1 CSI (U+009B) + "31m", RLO and a zero-width space: all pass wpa_supplicant's filter
# (it turns only C0 controls into '_').
SPOOF = Peer("02:00:00:00:0a:00", "Printer\x7f\u009b31m\u202eVT\u200b", "3-0050F204-1", 0x80)


@pytest.fixture
def p2p():
    p = make_env("p2p-hostile")
    try:
        yield p
    finally:
        close_env(p)


def roam(p2p, *args):
    return subprocess.run([ROAM, *args], env=p2p.env.env, capture_output=True, timeout=30)


def test_non_utf8_peer_name_keeps_the_bus_answering(p2p):
    p2p.found(TV)
    p2p.found(BROKEN)
    p2p.found(SPOOF)
    # GetManagedObjects (every client's first call) answers, with the names cleaned.
    peers = p2p.bus.peers()
    assert peers[peer_path(BROKEN)]["Name"] == "TV\ufffd("
    assert peers[peer_path(SPOOF)]["Name"] == "Printer31mVT"
    assert peers[peer_path(TV)]["Name"] == "Living Room TV"
    # P2P_PEER's reply carries the name too (device_name=): cleaned the same way.
    assert p2p.prop(BROKEN, "Name") == "TV\ufffd("

    r = roam(p2p, "status")
    assert r.returncode == 0, r.stderr
    r = roam(p2p, "status", "--json")
    assert r.returncode == 0, r.stderr
    json.loads(r.stdout)

    r = roam(p2p, "p2p", "peers")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "TV\ufffd(" in out and "Printer31mVT" in out
    for bad in ("\x1b", "\x7f", "\u009b", "\u202e", "\u200b"):
        assert bad not in out
    doc = json.loads(roam(p2p, "p2p", "peers", "--json").stdout)
    assert sorted(p["name"] for p in doc["peers"]) == \
        ["Living Room TV", "Printer31mVT", "TV\ufffd("]
