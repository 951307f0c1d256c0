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
    # in words, and only what the tag holds: a WiFi-only tag has no device to pair (L3)
    assert "  WiFi network: power " in r.stdout and "; nothing done" in r.stdout, r.stdout
    assert "Bluetooth" not in r.stdout and "=" not in r.stdout, r.stdout
    assert "--yes' adds the WiFi network to wpa_supplicant." in r.stdout, r.stdout
    r = env.roam("nfc", "import", str(path))
    assert "--yes' pairs the Bluetooth device and adds the WiFi network" in r.stdout, r.stdout
    r = env.roam("nfc", "import", "-", input="d1 01 05 54 61")
    assert r.returncode != 0 and "runs past the end" in r.stderr


def offer(env):
    o = env.prop("NfcOffer")
    return int(o[0]), str(o[1])


def mock_log(env):
    with open(os.path.join(env.dir, "mock.log")) as f:
        return f.read()


def start_neard(env):
    neard = env.start_neard()
    want = ["application/vnd.bluetooth.ep.oob", "application/vnd.bluetooth.le.oob",
            "application/vnd.wfa.wsc"]
    env.wait(lambda: [str(t) for t in neard.Registered(dbus_interface="org.neard.Test")] == want,
             what="roamd's NDEF agent registered with neard")
    return neard


def touch(neard, msg, rtype="application/vnd.bluetooth.ep.oob"):
    return neard.Touch(dbus.ByteArray(msg), rtype, dbus_interface="org.neard.Test")


def test_tag_from_neard_waits_for_a_yes(env):
    """With neard on the bus roamd registers its NDEF agent; a touched tag's NDEF (GetNDEF) is
    answered at once and becomes the pending offer, in words: nothing is paired before a yes.
    Accepted, the device is paired, asking the pairing question like any pairing."""
    neard = start_neard(env)
    env.mock_call("SetPairing", env.dev, "confirm", "161803")
    msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None, bt_oob(HEADSET, "Headset"))
    assert touch(neard, msg) == "delivered"
    oid, text = env.wait(lambda: (o := offer(env))[0] and o, what="the offer")
    assert text == f"Pair with Headset (headset, {HEADSET})?"
    assert str(env.prop("LastEvent")) == f"An NFC tag asks: Pair with Headset (headset, {HEADSET})?"
    r = env.roam("bt")
    assert f"NFC tag {oid}: Pair with Headset (headset, {HEADSET})?" in r.stdout, r.stdout
    assert json.loads(env.roam("bt", "--json").stdout)["nfc_offer"] == {"id": oid,
                                                                       "question": text}
    # Asked, not done: no pairing question, nothing asked of BlueZ.
    assert env.question()["id"] == 0 and "Pair " not in mock_log(env)
    # A wrong number is refused and the offer stays.
    with pytest.raises(dbus.DBusException, match=f"No NFC tag {oid + 1} is waiting"):
        env.bt().AnswerNfc(dbus.UInt32(oid + 1), True)
    assert offer(env)[0] == oid
    r = env.roam("nfc", "accept")
    assert r.returncode == 0, r.stderr
    assert f"Bluetooth device: address {HEADSET}, name Headset, kind headset" in r.stdout
    assert "; pairing" in r.stdout
    assert offer(env) == (0, "")
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    assert q["value"] == "161803"
    env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.wait(lambda: env.device(HEADSET)["paired"], what="paired")
    assert "Pair " in mock_log(env)  # what the checks before the yes look for
    r = env.roam("nfc", "accept")
    assert r.returncode == 1 and "No NFC tag is waiting for an answer" in r.stderr
    # A broken tag is refused with neard's error name and said in LastEvent; no offer.
    assert touch(neard, b"\xd2\x17\xff", "application/vnd.wfa.wsc") == \
        "org.neard.NDEFAgent.Error.Failed"
    assert "not understood" in str(env.prop("LastEvent"))
    assert offer(env)[0] == 0
    # A WiFi tag with no wpa_supplicant to take it: asked, then refused on the yes, in words.
    wifi = bytes.fromhex(open(os.path.join(WPAS, "wpas-config-token-psk.hex")).read().strip())
    assert touch(neard, wifi, "application/vnd.wfa.wsc") == "delivered"
    oid, text = env.wait(lambda: (o := offer(env))[0] and o, what="the offer")
    assert text == 'Add WiFi network "roam-test-net" (wpa2-psk)?'
    with pytest.raises(dbus.DBusException, match="No WiFi interface is run by wpa_supplicant"):
        env.bt().AnswerNfc(dbus.UInt32(oid), True)
    assert str(env.prop("LastEvent")) == (
        "An NFC tag was not used: No WiFi interface is run by wpa_supplicant, so the tag's WiFi "
        "network cannot be added; nothing was changed.")
    # Only neard may call the NDEF agent.
    agent = env.bus.get_object("org.roam1", "/org/roam1/nfc/agent")
    with pytest.raises(dbus.DBusException, match="Only neard"):
        agent.GetNDEF({"NDEF": dbus.ByteArray(msg)}, dbus_interface="org.neard.NDEFAgent")


def test_newer_tag_replaces_the_offer_and_reject_does_nothing(env):
    neard = start_neard(env)
    first = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None, bt_oob(HEADSET, "Old"))
    assert touch(neard, first) == "delivered"
    old, _ = env.wait(lambda: (o := offer(env))[0] and o, what="the first offer")
    assert touch(neard, handover_select(HEADSET, "Roam Headset")) == "delivered"
    oid, text = env.wait(lambda: (o := offer(env))[0] != old and o, what="the second offer")
    assert text == (f"Pair with Roam Headset (headset, {HEADSET}) and add WiFi network "
                    '"roam-test-net" (wpa2-psk)?')
    assert "correct horse" not in text and "correct horse" not in env.log()
    with pytest.raises(dbus.DBusException, match=f"No NFC tag {old} is waiting"):
        env.bt().AnswerNfc(dbus.UInt32(old), True)
    # An unprivileged caller sees the offer but cannot answer it.
    import subprocess
    from btenv import ROAM
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    r = subprocess.run(nobody + [ROAM, "nfc", "accept"], env=env.env, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and "not allowed to change Bluetooth" in r.stderr, r.stderr
    assert offer(env)[0] == oid and "Pair " not in mock_log(env)
    r = env.roam("nfc", "reject", str(oid))
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"NFC tag {oid} declined: nothing was done.\n"
    assert offer(env) == (0, "")
    assert str(env.prop("LastEvent")) == "The NFC tag was declined: nothing was done"
    assert env.question()["id"] == 0 and not env.device(HEADSET)["paired"]
    assert "Pair " not in mock_log(env)


def test_unanswered_tag_is_dropped():
    env = BtEnv("nfcoffer", "NfcOfferTimeout=1s\n")
    try:
        env.mock_call("AddAdapter", "hci0", "roam-laptop")
        env.dev = env.mock_call("AddDevice", "hci0", HEADSET, "Roam Headset")
        env.wait(lambda: env.device(HEADSET) and env.prop("AgentRegistered"),
                 what="the device and the agent")
        neard = start_neard(env)
        msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None, bt_oob(HEADSET, "H"))
        assert touch(neard, msg) == "delivered"
        # Not waited for: on a slow machine the offer may be gone before a first look.
        env.wait(lambda: str(env.prop("LastEvent")) ==
                 "Nobody answered the NFC tag's question in time: nothing was done",
                 what="the offer dropped")
        assert offer(env) == (0, "")
        assert f"An NFC tag asks: Pair with H (headset, {HEADSET})?" in env.log()
        with pytest.raises(dbus.DBusException, match="No NFC tag 1 is waiting"):
            env.bt().AnswerNfc(dbus.UInt32(1), True)
        assert env.question()["id"] == 0 and "Pair " not in mock_log(env)
        rc = env.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{env.log()[-4000:]}"
    finally:
        env.close()


def test_plain_mode_accepts_a_tag(env):
    """roam --plain: the tag is announced as a numbered question; "nfc yes" applies it."""
    neard = start_neard(env)
    with env.plain() as (proc, out):
        try:
            env.wait(lambda: "State:" in "".join(out), what="plain mode's first state")
            proc.stdin.write(b"nfc yes\n")
            proc.stdin.flush()
            env.wait(lambda: "No NFC tag is waiting for an answer." in "".join(out), what="no tag")
            env.mock_call("SetPairing", env.dev, "confirm", "314159")
            msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None,
                         bt_oob(HEADSET, "Roam Headset"))
            assert touch(neard, msg) == "delivered"
            oid, _ = env.wait(lambda: (o := offer(env))[0] and o, what="the offer")
            env.wait(lambda: f"NFC tag {oid} asks: Pair with Roam Headset (headset, {HEADSET})? "
                     "Say: nfc yes, or nfc no." in "".join(out), what="the tag announced")
            proc.stdin.write(b"nfc yes\n")
            proc.stdin.flush()
            env.wait(lambda: "Bluetooth asks: Roam Headset shows passkey 314159" in "".join(out),
                     what="the pairing question announced")
            proc.stdin.write(b"bt yes\n")
            proc.stdin.flush()
            env.wait(lambda: env.device(HEADSET)["paired"], what="paired")
        finally:
            proc.stdin.write(b"quit\n")
            proc.stdin.flush()
            assert proc.wait(10) == 0


def test_plain_mode_says_a_tag_that_waits_at_its_start(env):
    """A tag touched before roam --plain started is said at its start, once, and answered."""
    neard = start_neard(env)
    msg = record(0xc0, 2, "application/vnd.bluetooth.ep.oob", None,
                 bt_oob(HEADSET, "Roam Headset"))
    assert touch(neard, msg) == "delivered"
    oid, _ = env.wait(lambda: (o := offer(env))[0] and o, what="the offer")
    with env.plain() as (proc, out):
        try:
            env.wait(lambda: f"NFC tag {oid} asks: Pair with Roam Headset (headset, {HEADSET})? "
                     "Say: nfc yes, or nfc no." in "".join(out), what="the waiting tag said")
            proc.stdin.write(b"nfc no\n")
            proc.stdin.flush()
            env.wait(lambda: "Bluetooth: The NFC tag was declined: nothing was done"
                     in "".join(out), what="the decline said")
            # Said once; the event that opened it is old news, not repeated.
            assert "".join(out).count(f"NFC tag {oid} asks") == 1
            assert "Bluetooth: An NFC tag asks" not in "".join(out)
        finally:
            proc.stdin.write(b"quit\n")
            proc.stdin.flush()
            assert proc.wait(10) == 0


def test_tag_from_neard_adds_wifi_then_pairs(tmp_path):
    """A handover from neard with Bluetooth and WiFi carriers: nothing reaches wpa_supplicant
    (the protocol double of tests/wpa) or BlueZ before the yes; accepted, the WiFi network goes
    to wpa_supplicant first, then the Bluetooth device is paired."""
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
        neard = start_neard(env)
        env.mock_call("SetPairing", env.dev, "confirm", "141421")
        msg = handover_select(HEADSET, "Headset")
        # Declined: nothing sent to wpa_supplicant or BlueZ.
        assert touch(neard, msg) == "delivered"
        oid, _ = env.wait(lambda: (o := offer(env))[0] and o, what="the offer")
        env.bt().AnswerNfc(dbus.UInt32(oid), False)
        assert not [r for r in fake.requests if "NETWORK" in r or "SAVE" in r], fake.requests
        assert fake.saved is None and "Pair " not in mock_log(env)
        # Touched again and accepted.
        assert touch(neard, msg) == "delivered"
        oid, text = env.wait(lambda: (o := offer(env))[0] and o, what="the offer again")
        assert text == (f"Pair with Headset (headset, {HEADSET}) and add WiFi network "
                        '"roam-test-net" (wpa2-psk)?')
        assert not [r for r in fake.requests if "NETWORK" in r], fake.requests
        r = env.roam("nfc", "accept", "--json")
        assert r.returncode == 0, r.stderr
        doc = json.loads(r.stdout)
        assert doc["carriers"][0]["action"] == "pairing"
        assert doc["carriers"][1]["action"] == \
            "added to wpa_supplicant on wlan0 as network 0, saved"
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
