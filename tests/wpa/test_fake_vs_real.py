"""The P2P fake against the real wpa_supplicant: every command the real daemon answers without
P2P hardware, as recorded in tests/wpa/transcripts/ (record_transcripts.py), gets the same bytes
from the fake in its no-P2P mode; with P2P the fake's STATUS only adds the line ctrl_iface.c
adds (p2p_device_address, between wpa_state and address)."""
import json
import os

from fakewpa import FakeWpa
from wpactl import WpaCtl

HERE = os.path.dirname(os.path.abspath(__file__))
TRANSCRIPT = os.path.join(HERE, "transcripts", "wpa_supplicant-2.10-wired.json")


def load():
    with open(TRANSCRIPT) as f:
        return json.load(f)


def kv(text):
    return dict(line.split("=", 1) for line in text.splitlines())


def fake_for(t, tmp_path, p2p):
    status = next(r for c, r in t["interface"] if c == "STATUS")
    f = kv(status)
    return FakeWpa(str(tmp_path), ifname="wtest0", p2p=p2p, address=f["address"],
                   uuid=f["uuid"]).start()


def test_transcript_is_wpa_supplicant_2_10():
    assert load()["wpa_supplicant"] == "wpa_supplicant v2.10"


def test_fake_answers_like_the_real_daemon(tmp_path):
    t = load()
    fake = fake_for(t, tmp_path, p2p=False)
    c = WpaCtl(fake.path)
    try:
        for cmd, reply in t["interface"]:
            assert c.request(cmd).decode() == reply, cmd
    finally:
        c.close()
        fake.close()


def test_fake_events_have_the_real_framing(tmp_path):
    t = load()
    fake = fake_for(t, tmp_path, p2p=True)
    c = WpaCtl(fake.path)
    try:
        assert c.request("ATTACH") == b"OK\n"
        fake.event(t["events"][0][3:])
        assert c.recv().decode() == t["events"][0]
        fake.event("P2P-FIND-STOPPED ")
        assert c.recv() == b"<3>P2P-FIND-STOPPED "
    finally:
        c.close()
        fake.close()


def test_fake_status_with_p2p_adds_only_the_device_address(tmp_path):
    t = load()
    real = next(r for c, r in t["interface"] if c == "STATUS")
    fake = fake_for(t, tmp_path, p2p=True)
    c = WpaCtl(fake.path)
    try:
        lines = c.request("STATUS").decode().splitlines(keepends=True)
    finally:
        c.close()
        fake.close()
    assert lines[1].startswith("p2p_device_address=")
    assert "".join(lines[:1] + lines[2:]) == real


def test_fake_networks_answer_like_the_real_daemon(tmp_path):
    """ADD_NETWORK/SET_NETWORK/... as roamd adds an NFC tag's network, read back, bad input,
    and SIGNAL_POLL on a driver without signal: the same bytes as the real daemon."""
    t = load()
    assert t["networks_saved"]  # the real SAVE_CONFIG wrote the passphrase to its file
    fake = fake_for(t, tmp_path, p2p=False)
    c = WpaCtl(fake.path)
    try:
        for cmd, reply in t["networks"]:
            assert c.request(cmd).decode() == reply, cmd
    finally:
        c.close()
        fake.close()
    assert fake.saved[0]["psk"] == "correct horse battery"


def test_fake_station_status_and_events_like_the_real_daemon(tmp_path):
    """Associated, the fake's STATUS has the real daemon's keys in the real order (values are
    the fake's network, not the wired one), and CTRL-EVENT-CONNECTED / -DISCONNECTED have the
    real daemon's framing and fields."""
    t = load()
    fake = fake_for(t, tmp_path, p2p=False)
    c = WpaCtl(fake.path)
    try:
        assert c.request("ATTACH") == b"OK\n"
        fake.associate("wired", "01:80:c2:00:00:03", 0, -50, 0)
        assert c.recv().decode() == t["events"][0]
        status = c.request("STATUS").decode()
        assert list(kv(status)) == list(kv(t["status_connected"]))
        assert kv(status)["address"] == kv(t["status_connected"])["address"]
        fake.disassociate()
        assert c.recv().decode() == t["events"][1]
        # A command's own events come before its reply, as the real daemon sends them.
        fake.associate("wired", "01:80:c2:00:00:03", 0, -50, 0)
        c.recv()
        c.sock.send(b"DISCONNECT")
        seq = [c.recv().decode() for _ in t["disconnect_exchange"]]
        assert seq == t["disconnect_exchange"]
    finally:
        c.close()
        fake.close()


def test_fake_global_interface_answers_like_the_real_daemon(tmp_path):
    """The fake as wpa_supplicant -g: the real daemon's global transcript, byte for byte."""
    t = load()
    f = kv(next(r for c, r in t["interface"] if c == "STATUS"))
    fake = FakeWpa(str(tmp_path), ifname="wtest0", p2p=False, address=f["address"],
                   uuid=f["uuid"], global_path=str(tmp_path / "global")).start()
    c = WpaCtl(fake.path)
    try:
        for cmd, reply in t["global"]:
            assert c.request(cmd).decode() == reply, cmd
    finally:
        c.close()
        fake.close()
