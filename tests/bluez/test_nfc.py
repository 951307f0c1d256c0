"""NFC handover through roamd (org.roam1.Bluetooth.ImportNdef) and `roam nfc import`: what a
tag holds, and a Bluetooth record leading to pairing that device (known to BlueZ, or found
by a scan started for it). The WiFi vectors are the ones recorded from wpa_supplicant in
tests/unit/ndef."""
import json
import os
import struct
import sys

import dbus
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from btenv import HEADSET, TOP, BtEnv  # noqa: E402

SPEAKER = "00:1B:66:AA:09:09"
WPAS = os.path.join(TOP, "tests/unit/ndef")


def record(flags, tnf, rtype, rid, payload):
    rtype = rtype.encode()
    rid = rid.encode() if rid else b""
    f = flags | tnf | (0x10 if len(payload) < 256 else 0) | (0x08 if rid else 0)
    head = bytes([f, len(rtype)])
    head += bytes([len(payload)]) if len(payload) < 256 else struct.pack(">I", len(payload))
    if rid:
        head += bytes([len(rid)])
    return head + rtype + rid + payload


def bt_oob(address, name, cod=0x240404):
    addr = bytes(reversed(bytes.fromhex(address.replace(":", ""))))
    eir = bytes([len(name) + 1, 0x09]) + name.encode()
    eir += bytes([4, 0x0d]) + cod.to_bytes(3, "little")
    eir += bytes([17, 0x0e]) + bytes(range(16)) + bytes([17, 0x0f]) + bytes(range(16, 32))
    return struct.pack("<H", 8 + len(eir)) + addr + eir


def ac(flags, cps, ref):
    return record(flags, 1, "ac", None, bytes([cps, len(ref)]) + ref.encode() + b"\0")


def handover_select(address, name, cps=1):
    wsc = bytes.fromhex(open(os.path.join(WPAS, "wpas-config-token-psk.hex")).read().strip())
    wsc_payload = wsc[3 + 0x17:]
    inner = ac(0x80, cps, "0") + ac(0x40, 2, "1")
    return (record(0x80, 1, "Hs", None, b"\x13" + inner)
            + record(0, 2, "application/vnd.bluetooth.ep.oob", "0", bt_oob(address, name))
            + record(0x40, 2, "application/vnd.wfa.wsc", "1", wsc_payload))


def carriers(reply):
    kind, items = reply
    return str(kind), [(str(k), {str(a): str(b) for a, b in d.items()}) for k, d in items]


def test_summary_without_apply(env):
    kind, cs = carriers(env.bt().ImportNdef(dbus.ByteArray(handover_select(HEADSET, "Roam Headset")),
                                            False))
    assert kind == "handover-select"
    assert cs[0] == ("bluetooth", {"address": HEADSET, "name": "Roam Headset", "kind": "headset",
                                   "power": "active", "oob": "hash C-192 and randomizer R-192",
                                   "action": "none"})
    assert cs[1] == ("wifi", {"power": "activating", "ssid": "roam-test-net",
                              "security": "wpa2-psk", "key": "given", "action": "none"})
    assert not env.device(HEADSET)["paired"]


def test_touch_pairs_a_known_device(env):
    env.mock_call("SetPairing", env.dev, "confirm", "271828")
    kind, cs = carriers(env.bt().ImportNdef(dbus.ByteArray(handover_select(HEADSET, "x")), True))
    assert cs[0][1]["action"] == "pairing"
    # No wpa_supplicant here: the WiFi alternative says so, the Bluetooth one is used.
    assert cs[1][1]["action"] == "not added: no WiFi interface is run by wpa_supplicant"
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    assert q["value"] == "271828" and q["address"] == HEADSET
    env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.wait(lambda: env.device(HEADSET)["paired"], what="paired")


def test_touch_finds_then_pairs_an_unknown_device(env):
    msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None,
                 bt_oob(SPEAKER, "Roam Speaker", 0x240414))
    kind, cs = carriers(env.bt().ImportNdef(dbus.ByteArray(msg), True))
    assert kind == "tag"
    assert cs[0][1]["action"] == "looking for the device, then pairing"
    assert cs[0][1]["kind"] == "speaker"
    env.wait(lambda: env.prop("Adapters")[0][6], what="scan started for the tag's device")
    env.mock_call("AddDevice", "hci0", SPEAKER, "Roam Speaker")
    env.wait(lambda: (d := env.device(SPEAKER)) and d["paired"], what="found and paired")


def test_touch_device_never_found(env):
    msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None, bt_oob(SPEAKER, "Gone"))
    env.bt().ImportNdef(dbus.ByteArray(msg), True)
    # NfcDiscoveryTimeout=2s in the test configuration.
    env.wait(lambda: "not found nearby" in str(env.prop("LastEvent")), what="gave up")


def test_bad_messages_are_refused_with_a_reason(env):
    with pytest.raises(dbus.DBusException, match="runs past the end"):
        env.bt().ImportNdef(dbus.ByteArray(b"\xd1\x01\x05Ta"), True)
    with pytest.raises(dbus.DBusException, match="no Bluetooth or WiFi carrier"):
        env.bt().ImportNdef(dbus.ByteArray(record(0xc0, 1, "T", None, b"\x02enhello")), True)
    with pytest.raises(dbus.DBusException, match="InvalidArguments"):
        env.bt().ImportNdef(dbus.ByteArray(b""), False)
    assert not env.device(HEADSET)["paired"]


def test_roam_nfc_import(env, tmp_path):
    path = tmp_path / "tag.ndef"
    path.write_bytes(handover_select(HEADSET, "Roam Headset"))
    r = env.roam("nfc", "import", str(path), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["kind"] == "handover-select"
    assert out["carriers"][0]["type"] == "bluetooth"
    assert out["carriers"][0]["address"] == HEADSET
    assert out["carriers"][1]["ssid"] == "roam-test-net"
    # Hex text (what wpa_cli prints) from stdin works too; without --yes nothing is applied.
    hexfile = open(os.path.join(WPAS, "wpas-config-token-open.hex")).read()
    r = env.roam("nfc", "import", "-", input=hexfile)
    assert r.returncode == 0, r.stderr
    assert "cafe open" in r.stdout and "open" in r.stdout
    r = env.roam("nfc", "import", "-", input="d1 01 05 54 61")
    assert r.returncode != 0 and "runs past the end" in r.stderr


def test_tag_from_neard_pairs(env):
    """With neard on the bus roamd registers its NDEF agent; a touched tag's NDEF (GetNDEF)
    pairs the Bluetooth device, asking the pairing question like any pairing."""
    neard = env.start_neard()
    want = ["application/vnd.bluetooth.ep.oob", "application/vnd.bluetooth.le.oob",
            "application/vnd.wfa.wsc"]
    env.wait(lambda: [str(t) for t in neard.Registered(dbus_interface="org.neard.Test")] == want,
             what="roamd's NDEF agent registered with neard")
    env.mock_call("SetPairing", env.dev, "confirm", "161803")
    msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None, bt_oob(HEADSET, "Headset"))
    assert neard.Touch(dbus.ByteArray(msg), "application/vnd.bluetooth.ep.oob",
                       dbus_interface="org.neard.Test") == "delivered"
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    assert q["value"] == "161803"
    env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.wait(lambda: env.device(HEADSET)["paired"], what="paired")
    # A broken tag is refused with neard's error name and said in LastEvent.
    assert neard.Touch(dbus.ByteArray(b"\xd2\x17\xff"), "application/vnd.wfa.wsc",
                       dbus_interface="org.neard.Test") == "org.neard.NDEFAgent.Error.Failed"
    assert "not understood" in str(env.prop("LastEvent"))
    # A WiFi tag with no wpa_supplicant to take it: refused, said in words.
    wifi = bytes.fromhex(open(os.path.join(WPAS, "wpas-config-token-psk.hex")).read().strip())
    assert neard.Touch(dbus.ByteArray(wifi), "application/vnd.wfa.wsc",
                       dbus_interface="org.neard.Test") == "org.neard.NDEFAgent.Error.Failed"
    assert str(env.prop("LastEvent")) == (
        "An NFC tag was not used: No WiFi interface is run by wpa_supplicant, so the tag's WiFi "
        "network cannot be added; nothing was changed.")
    # Only neard may call the NDEF agent.
    agent = env.bus.get_object("org.roam1", "/org/roam1/nfc/agent")
    with pytest.raises(dbus.DBusException, match="Only neard"):
        agent.GetNDEF({"NDEF": dbus.ByteArray(msg)}, dbus_interface="org.neard.NDEFAgent")


def test_tag_from_neard_adds_wifi_then_pairs(tmp_path):
    """A handover from neard with Bluetooth and WiFi carriers: the WiFi network goes to
    wpa_supplicant (the protocol double of tests/wpa) first, neard's GetNDEF is answered once it
    did, then the Bluetooth device is paired."""
    sys.path.insert(0, os.path.join(TOP, "tests/wpa"))
    from fakewpa import FakeWpa
    ctrl = str(tmp_path / "ctrl")
    env = BtEnv("nfcwifi", f"[WiFi]\nControlDirectory={ctrl}\nClientDirectory={tmp_path}/c\n")
    fake = None
    try:
        env.mock_call("AddAdapter", "hci0", "roam-laptop")
        env.dev = env.mock_call("AddDevice", "hci0", HEADSET, "Roam Headset")
        env.wait(lambda: env.device(HEADSET) and env.prop("AgentRegistered"),
                 what="the device and the agent")
        # wlan0 first (roamd takes only sockets of its namespace's links), then its socket.
        env.netns("ip link add wlan0 type veth peer name wlan0-peer")
        manager = env.bus.get_object("org.roam1", "/org/roam1")

        def known():
            try:
                return manager.GetLinkByName("wlan0", dbus_interface="org.roam1.Manager")
            except dbus.DBusException:
                return None
        env.wait(known, what="roamd knows wlan0")
        fake = FakeWpa(ctrl, ifname="wlan0", p2p=False).start()
        fake.wait_request("STATUS")  # attached: wlan0 is run by wpa_supplicant
        neard = env.start_neard()
        env.wait(lambda: len(neard.Registered(dbus_interface="org.neard.Test")) == 3,
                 what="roamd's NDEF agent registered with neard")
        env.mock_call("SetPairing", env.dev, "confirm", "141421")
        msg = handover_select(HEADSET, "Headset")
        assert neard.Touch(dbus.ByteArray(msg), "application/vnd.bluetooth.ep.oob",
                           dbus_interface="org.neard.Test") == "delivered"
        assert fake.saved == {0: {"disabled": "0", "ssid": "roam-test-net",
                                  "key_mgmt": "WPA-PSK", "proto": "RSN",
                                  "psk": "correct horse battery"}}
        q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
        assert q["value"] == "141421"
        env.bt().Answer(dbus.UInt32(q["id"]), True, "")
        env.wait(lambda: env.device(HEADSET)["paired"], what="paired")
        assert 'The WiFi network "roam-test-net" from an NFC tag was added to wpa_supplicant ' \
            "on wlan0" in env.log()
        rc = env.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{env.log()[-4000:]}"
    finally:
        if fake:
            fake.close()
        env.close()
