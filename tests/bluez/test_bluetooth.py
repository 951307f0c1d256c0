"""roamd and BlueZ: adapters and devices on roamd's bus, the pairing agent's questions answered
through org.roam1.Bluetooth, Bluetooth networking as a bearer. BlueZ is python3-dbusmock's
bluez5 template extended in bluez_agent.py (Pair asks the registered agent, Network1 exists)."""
import json
import os
import subprocess
import sys

import dbus
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from btenv import HEADSET, PHONE, ROAM, BtEnv  # noqa: E402


def pair(env, method, value=""):
    env.mock_call("SetPairing", env.dev, method, value)
    return env.call_async("Pair", HEADSET)


def test_adapters_and_devices(env):
    adapters = env.prop("Adapters")
    assert [(str(a[0]), str(a[2])) for a in adapters] == [("hci0", "roam-laptop")]
    d = env.device(HEADSET)
    assert d["name"] == "Roam Headset" and d["adapter"] == "hci0"
    assert not d["paired"] and d["battery"] == -1
    # Battery1 appears; the device vanishes with InterfacesRemoved.
    env.mock_call("AddBattery", env.dev, dbus.Byte(73))
    env.wait(lambda: env.device(HEADSET)["battery"] == 73, what="battery")
    # BlueZ invalidates RSSI when the device is no longer seen.
    assert env.device(HEADSET)["rssi"] == -79
    env.mock_call("EmitSignal", "org.freedesktop.DBus.Properties", "PropertiesChanged",
                  "sa{sv}as", dbus.Struct(("org.bluez.Device1", dbus.Dictionary({}, "sv"),
                                           dbus.Array(["RSSI"], "s"))),
                  path=env.dev, iface="org.freedesktop.DBus.Mock")
    env.wait(lambda: env.device(HEADSET)["rssi"] == 127, what="RSSI unknown")
    env.mock_call("RemoveDevice", env.dev, path="/org/bluez/hci0", iface="org.bluez.Adapter1")
    env.wait(lambda: env.device(HEADSET) is None, what="device gone")


def test_rssi_burst_is_announced_once(env):
    """A scan's RSSI churn: 300 PropertiesChanged from BlueZ in one burst are announced in a
    handful of Devices changes (each carries the whole array), and the last value is the one
    shown."""
    seen = []

    def on_changed(iface, changed, invalidated, path=None):
        if path == "/org/roam1/bluetooth" and ("Devices" in changed or "Devices" in invalidated):
            seen.append(1)
    env.bus.add_signal_receiver(on_changed, signal_name="PropertiesChanged",
                                dbus_interface="org.freedesktop.DBus.Properties",
                                path_keyword="path")
    values = [-40 - (i % 50) for i in range(299)] + [-33]
    env.mock_call("RssiBurst", env.dev, dbus.Array(values, "n"))
    # a read shows the model at once; the announcement follows within roamd's interval
    env.wait(lambda: seen and env.device(HEADSET)["rssi"] == -33, what="the burst announced")
    # BlueZ's burst has ended: a later change is announced on its own
    burst = len(seen)
    env.mock_call("AddBattery", env.dev, dbus.Byte(50))
    env.wait(lambda: len(seen) > burst and env.device(HEADSET)["battery"] == 50,
             what="a later change announced")
    assert 1 <= len(seen) <= 10, len(seen)
    assert env.device(HEADSET)["rssi"] == -33


def test_power_and_scan(env):
    env.bt().SetAdapter("hci0", "Powered", False)
    env.wait(lambda: not env.prop("Adapters")[0][3], what="powered off")
    env.bt().SetAdapter("", "Powered", True)
    env.wait(lambda: env.prop("Adapters")[0][3], what="powered on")
    env.bt().StartDiscovery("hci0", dbus.UInt32(1))
    env.wait(lambda: env.prop("Adapters")[0][6], what="discovering")
    # The scan ends by itself after its timeout (roamd calls StopDiscovery).
    env.wait(lambda: not env.prop("Adapters")[0][6], what="scan stopped by its timeout")
    with pytest.raises(dbus.DBusException, match="Powered, Discoverable or Pairable"):
        env.bt().SetAdapter("hci0", "Alias", True)


def test_confirm_passkey(env):
    res = pair(env, "confirm", "123456")
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    assert (q["address"], q["name"], q["value"]) == (HEADSET, "Roam Headset", "123456")
    env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.wait(lambda: res, what="Pair to return")
    assert "ok" in res, res
    env.wait(lambda: env.device(HEADSET)["paired"], what="paired")
    assert env.question()["kind"] == "none"


def test_reject(env):
    res = pair(env, "confirm", "000042")
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    env.bt().Answer(dbus.UInt32(q["id"]), False, "")
    env.wait(lambda: res, what="Pair to fail")
    assert "AuthenticationRejected" in str(res["error"]) or "Rejected" in str(res["error"])
    assert not env.device(HEADSET)["paired"]
    assert "failed: refused" in str(env.prop("LastEvent"))


def test_pin_entry(env):
    res = pair(env, "pin", "0000")
    q = env.wait(lambda: (q := env.question())["kind"] == "enter-pin" and q, what="question")
    # A bad PIN is refused by roamd itself and the question stays open.
    with pytest.raises(dbus.DBusException, match="1 to 16"):
        env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.bt().Answer(dbus.UInt32(q["id"]), True, "0000")
    env.wait(lambda: res, what="Pair")
    assert "ok" in res, res
    assert env.device(HEADSET)["paired"]


def test_passkey_entry_wrong(env):
    res = pair(env, "passkey", "654321")
    q = env.wait(lambda: (q := env.question())["kind"] == "enter-passkey" and q, what="question")
    with pytest.raises(dbus.DBusException, match="0 to 999999"):
        env.bt().Answer(dbus.UInt32(q["id"]), True, "abc")
    env.bt().Answer(dbus.UInt32(q["id"]), True, "111111")
    env.wait(lambda: res, what="Pair")
    assert "AuthenticationFailed" in str(res["error"])


def test_passkey_display(env):
    res = pair(env, "display-passkey", "4711")
    q = env.wait(lambda: (q := env.question())["kind"] == "show-passkey" and q, what="display")
    assert q["value"] == "004711"
    env.mock_call("FinishPairing", env.dev, True)  # typed on the device's keyboard
    env.wait(lambda: res, what="Pair")
    assert "ok" in res
    # The display ends with the pairing.
    env.wait(lambda: env.question()["kind"] == "none", what="display cleared")


def test_remote_cancel(env):
    res = pair(env, "remote-cancel", "222222")
    env.wait(lambda: env.question()["kind"] == "confirm", what="question")
    env.mock_call("RemoteCancel", env.dev)
    env.wait(lambda: res and env.question()["kind"] == "none", what="cancel")
    assert "AuthenticationCanceled" in str(res["error"])
    assert "failed: cancelled by the device" in str(env.prop("LastEvent"))


def test_timeout():
    # QuestionTimeout=2s: roamd refuses for the user.
    env = BtEnv("qtimeout", question_timeout="2s")
    try:
        env.add_headset()
        res = pair(env, "confirm", "333333")
        env.wait(lambda: env.question()["kind"] == "confirm", what="question")
        env.wait(lambda: res, what="Pair to fail after the question timed out")
        assert "AuthenticationCanceled" in str(res["error"])
        assert env.question()["kind"] == "none"
        assert "failed: nobody answered in time" in str(env.prop("LastEvent"))
        rc = env.stop_roamd()
        assert rc in (None, 0), f"roamd exited with {rc}:\n{env.log()[-4000:]}"
    finally:
        env.close()


def test_device_lost_mid_pair(env):
    res = pair(env, "confirm", "444444")
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    env.mock_call("LoseDevice", env.dev)
    env.wait(lambda: res and env.device(HEADSET) is None and env.question()["kind"] == "none",
             what="device gone, question closed")
    assert "ConnectionAttemptFailed" in str(res["error"]) or "Page Timeout" in str(res["error"])
    # The old question cannot be answered any more.
    with pytest.raises(dbus.DBusException, match="not open"):
        env.bt().Answer(dbus.UInt32(q["id"]), True, "")


def test_authorize_service(env):
    env.mock_call("SetPairing", env.dev, "just-works", "")
    env.bt().Pair(HEADSET)
    result = {}

    def done(r):
        result["r"] = str(r)
        env.changed = True
    env.bus.get_object("org.bluez", "/").IncomingService(
        env.dev, "0000110b-0000-1000-8000-00805f9b34fb", dbus_interface="org.bluez.Mock",
        reply_handler=done, error_handler=done, timeout=30)
    q = env.wait(lambda: (q := env.question())["kind"] == "authorize-service" and q,
                 what="question")
    assert q["value"] == "0000110b-0000-1000-8000-00805f9b34fb"
    env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.wait(lambda: result, what="service authorized")
    assert result["r"] == "accepted"


def _incoming_service(env):
    """A paired device asks for a service: what the default agent answered."""
    result = {}

    def done(r):
        result["r"] = str(r)
        env.changed = True
    env.bus.get_object("org.bluez", "/").IncomingService(
        env.dev, "0000110b-0000-1000-8000-00805f9b34fb", dbus_interface="org.bluez.Mock",
        reply_handler=done, error_handler=done, timeout=30)
    return result


def test_bluez_double_keeps_bluetoothd_agent_rules(env):
    """issue 39: the BlueZ double refuses what src/agent.c refuses: one agent per bus name
    (AlreadyExists for a second), capabilities parse_io_capability() knows, Unregister and
    RequestDefaultAgent only for the caller's own agent (DoesNotExist); and it drops an agent
    whose owner leaves the bus, so requests go to the next default agent (roamd's)."""
    env.wait(lambda: env.prop("AgentRegistered"), what="roamd's agent")
    env.mock_call("SetPairing", env.dev, "just-works", "")
    env.bt().Pair(HEADSET)
    other = dbus.bus.BusConnection(env.address)
    mgr = dbus.Interface(other.get_object("org.bluez", "/org/bluez"), "org.bluez.AgentManager1")

    def refused(name, call, *args):
        with pytest.raises(dbus.DBusException) as e:
            call(*args)
        assert e.value.get_dbus_name() == "org.bluez.Error." + name, (call, args, e.value)
    roamd_agent = dbus.ObjectPath("/org/roam1/bluetooth/agent")
    refused("DoesNotExist", mgr.RequestDefaultAgent, roamd_agent)  # not the caller's
    refused("DoesNotExist", mgr.UnregisterAgent, roamd_agent)
    refused("InvalidArguments", mgr.RegisterAgent, "/test/agent", "Telepathy")
    mgr.RegisterAgent("/test/agent", "")  # "" is KeyboardDisplay
    refused("AlreadyExists", mgr.RegisterAgent, "/test/agent2", "KeyboardDisplay")
    refused("DoesNotExist", mgr.RequestDefaultAgent, "/test/agent2")
    mgr.RequestDefaultAgent("/test/agent")
    # the test's agent is the default now: it has no object, so the request fails there
    # and roamd is not asked
    result = _incoming_service(env)
    env.wait(lambda: result, what="the test agent's answer")
    assert result["r"].startswith("org.freedesktop.DBus.Error.Unknown"), result
    assert env.question()["kind"] == "none"
    # its owner leaves the bus: bluetoothd forgets the agent, roamd's is the default again
    name = other.get_unique_name()
    other.close()
    env.wait(lambda: not env.has_name(name), what="the test connection gone")
    result = _incoming_service(env)
    q = env.wait(lambda: (q := env.question())["kind"] == "authorize-service" and q,
                 what="roamd asked")
    env.bt().Answer(dbus.UInt32(q["id"]), True, "")
    env.wait(lambda: result, what="service authorized")
    assert result["r"] == "accepted"


def test_only_bluez_may_call_the_agent(env):
    agent = env.bus.get_object("org.roam1", "/org/roam1/bluetooth/agent")
    with pytest.raises(dbus.DBusException, match="Only BlueZ"):
        agent.RequestConfirmation(env.dev, dbus.UInt32(1), dbus_interface="org.bluez.Agent1")


def test_trust_connect_remove(env):
    env.bt().SetTrusted(HEADSET, True)
    env.wait(lambda: env.device(HEADSET)["trusted"], what="trusted")
    env.bt().Connect(HEADSET)
    env.wait(lambda: env.device(HEADSET)["connected"], what="connected")
    env.bt().Disconnect(HEADSET)
    env.wait(lambda: not env.device(HEADSET)["connected"], what="disconnected")
    with pytest.raises(dbus.DBusException, match="NotConnected|Not Connected"):
        env.bt().Disconnect(HEADSET)
    with pytest.raises(dbus.DBusException, match="not a Bluetooth address"):
        env.bt().Pair("nonsense")
    env.bt().Remove(HEADSET)
    env.wait(lambda: env.device(HEADSET) is None, what="removed")


def test_bluez_restart(env):
    env.mock.terminate()
    env.mock.wait(5)
    env.wait(lambda: not env.prop("Available") and env.device(HEADSET) is None,
             what="BlueZ gone")
    env.start_mock()
    env.mock_call("AddAdapter", "hci0", "roam-laptop")
    env.wait(lambda: env.prop("Available") and env.prop("AgentRegistered"),
             what="agent registered again")


def test_bluetooth_network_is_a_bearer(env):
    """Network1.Connect("nap") makes the bnep link; roamd classifies and probes it like any
    other link. The bnep link is a veth named bnep0 (this kernel has no Bluetooth): it is
    classified by the bnep* name rule that real bnep devices also match (their sysfs
    DEVTYPE=bluetooth rule comes first and is covered by the tests/unit/sysfs/bnep0 fixture)."""
    phone = env.mock_call("AddNetworkDevice", "hci0", PHONE, "Roam Phone")
    env.wait(lambda: (d := env.device(PHONE)) and d["network"] == "available", what="NAP")
    assert env.device(PHONE)["kind"] == "phone"
    with pytest.raises(dbus.DBusException, match="offers no network"):
        env.bt().ConnectNetwork(HEADSET)
    assert env.bt().ConnectNetwork(PHONE, timeout=30) == "bnep0"
    env.wait(lambda: env.device(PHONE)["network"] == "connected", what="network connected")
    assert env.device(PHONE)["interface"] == "bnep0"
    nap = f"ip netns exec {env.name}-nap"
    env.sh(f"{nap} ip link set bnep0p up")
    env.sh(f"{nap} ip addr add 192.0.2.1/24 dev bnep0p")
    env.netns("ip link set bnep0 up")
    env.netns("ip addr add 192.0.2.20/24 dev bnep0")
    env.netns("ip route add default via 192.0.2.1 dev bnep0")

    manager = env.bus.get_object("org.roam1", "/org/roam1")
    path = env.wait(lambda: _link(manager, "bnep0"), what="bnep0 on roamd's bus")
    link = env.bus.get_object("org.roam1", path)

    def lp(name):
        return link.Get("org.roam1.Link", name, dbus_interface="org.freedesktop.DBus.Properties")
    assert lp("Bearer") == "bluetooth" and lp("BearerSource") == "sysfs"
    env.wait(lambda: lp("State") == "routable", what="routable")
    env.wait(lambda: manager.Get("org.roam1.Manager", "BestLink",
                                 dbus_interface="org.freedesktop.DBus.Properties") == path,
             what="bnep0 is the best link")
    # The NAP answers on its gateway but serves no DNS: a verdict like any other link's.
    env.wait(lambda: lp("Connectivity4") == "local", what="verdict local")

    env.bt().DisconnectNetwork(PHONE)
    env.wait(lambda: _link(manager, "bnep0") is None, what="bnep0 gone")
    assert env.device(PHONE)["network"] == "available"


def _link(manager, name):
    try:
        return manager.GetLinkByName(name, dbus_interface="org.roam1.Manager")
    except dbus.DBusException:
        return None


def test_roam_bt_cli(env):
    """`roam bt pair` asks the agent's question on stdin; `roam bt` shows the outcome."""
    env.mock_call("SetPairing", env.dev, "confirm", "123456")
    env.mock_call("AddBattery", env.dev, dbus.Byte(55))
    env.wait(lambda: env.device(HEADSET)["battery"] == 55, what="battery")
    r = env.roam("bt", "pair", HEADSET, input="yes\n")
    assert r.returncode == 0, r.stderr
    assert "Roam Headset shows passkey 123456: is it the same? (yes/no)" in r.stdout
    assert f"Paired with {HEADSET}" in r.stdout
    r = env.roam("bt")
    assert r.returncode == 0, r.stderr
    assert "Adapter hci0 (roam-laptop)" in r.stdout
    assert f"{HEADSET}  Roam Headset         device" in r.stdout
    assert "paired, not trusted, not connected, battery 55%, signal -79 dBm" in r.stdout
    r = env.roam("bt", "--json")
    doc = json.loads(r.stdout)
    assert doc["devices"][0]["paired"] is True and doc["devices"][0]["battery"] == 55
    assert doc["question"] is None and doc["agent"] is True
    # A refusal on stdin: the pairing fails, roam says why and exits 1.
    phone = env.mock_call("AddDevice", "hci0", PHONE, "Roam Phone")
    env.mock_call("SetPairing", phone, "pin", "1234")
    r = env.roam("bt", "pair", PHONE, input="no\n")
    assert r.returncode == 1
    assert "asks for its PIN" in r.stdout and "refused" not in r.stdout
    assert "AuthenticationRejected" in r.stderr
    r = env.roam("bt", "pair", "zz")
    assert r.returncode == 1 and "not a Bluetooth address" in r.stderr
    r = env.roam("bt", "frobnicate", HEADSET)
    assert r.returncode == 2 and "unknown action" in r.stderr


def test_plain_mode_announces_questions(env):
    """roam --plain: the question is announced as a line; "bt yes" answers it."""
    with env.plain() as (proc, out):
        try:
            env.wait(lambda: "State:" in "".join(out), what="plain mode's first state")
            res = pair(env, "confirm", "424242")
            env.wait(lambda: "Bluetooth asks: Roam Headset shows passkey 424242" in "".join(out),
                     what="the question announced")
            proc.stdin.write(b"bt yes\n")
            proc.stdin.flush()
            env.wait(lambda: res, what="Pair")
            assert "ok" in res, res
            env.wait(lambda: "Bluetooth: Pairing with Roam Headset: done" in "".join(out),
                     what="the outcome announced")
            proc.stdin.write(b"bt yes\n")
            proc.stdin.flush()
            env.wait(lambda: "Bluetooth asks nothing now." in "".join(out), what="no question")
        finally:
            proc.stdin.write(b"quit\n")
            proc.stdin.flush()
            assert proc.wait(10) == 0


def test_unprivileged_reader_cannot_see_the_passkey(env):
    """The passkey of a pairing is for the users allowed to pair: the Question property,
    which every local user reads and whose changes every listener hears, holds no passkey;
    GetQuestionValue refuses other users; `roam bt` as one of them says so in words."""
    res = pair(env, "confirm", "314159")
    q = env.wait(lambda: (q := env.question())["kind"] == "confirm" and q, what="question")
    assert q["shown"] == "" and q["value"] == "314159"
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    busctl = nobody + ["busctl", "--address=" + env.env["DBUS_SYSTEM_BUS_ADDRESS"]]
    r = subprocess.run(busctl + ["get-property", "org.roam1", "/org/roam1/bluetooth",
                                 "org.roam1.Bluetooth", "Question"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "314159" not in r.stdout and '"confirm"' in r.stdout, r
    r = subprocess.run(busctl + ["call", "org.roam1", "/org/roam1/bluetooth",
                                 "org.roam1.Bluetooth", "GetQuestionValue", "u", str(q["id"])],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "314159" not in r.stdout, r
    r = subprocess.run(nobody + [ROAM, "bt"], env=env.env, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0 and "314159" not in r.stdout, r
    assert "passkey is shown only to users allowed to pair" in r.stdout, r.stdout
    r = subprocess.run([ROAM, "bt"], env=env.env, capture_output=True, text=True, timeout=30)
    assert "Roam Headset shows passkey 314159: is it the same?" in r.stdout, r.stdout
    env.bt().Answer(dbus.UInt32(q["id"]), False, "")
    env.wait(lambda: res, what="Pair to fail")


def test_cli_reads_the_pin_from_stdin(env):
    """`roam bt answer ID yes` reads the PIN on standard input (argv is readable by every
    local user); a PIN in argv still works, with a warning that it is deprecated."""
    res = pair(env, "pin", "0000")
    q = env.wait(lambda: (q := env.question())["kind"] == "enter-pin" and q, what="question")
    r = subprocess.run([ROAM, "bt", "answer", str(q["id"]), "yes"], env=env.env, input="0000\n",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r
    assert "visible to every local user" not in r.stderr
    env.wait(lambda: res, what="Pair")
    assert "ok" in res, res
    assert env.device(HEADSET)["paired"]


def test_unprivileged_callers_read_but_do_not_change(env):
    nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    r = subprocess.run(nobody + [ROAM, "bt", "pair", HEADSET], env=env.env, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1
    assert "not allowed to change Bluetooth" in r.stderr
    r = subprocess.run(nobody + [ROAM, "nfc", "import", "-"], env=env.env, input="d1 01 00 54",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and "not allowed" in r.stderr
    r = subprocess.run(nobody + [ROAM, "bt", "--json"], env=env.env, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["devices"][0]["address"] == HEADSET
    assert not env.device(HEADSET)["paired"]


def test_hostile_device_names(env):
    """A device's name is whatever it calls itself over the air: ESC (an OSC title), C1 CSI,
    a right-to-left override and a zero-width space never reach roamd's bus, its log, the
    question or `roam bt`."""
    hostile = "\x1b]0;owned\x07Evil\u009b2J\u202eenohp\u200b"
    phone = env.mock_call("AddDevice", "hci0", PHONE, hostile)
    env.wait(lambda: env.device(PHONE) is not None, what="the phone")
    assert env.device(PHONE)["name"] == "]0;ownedEvil2Jenohp"
    env.mock_call("SetPairing", phone, "confirm", "123456")
    r = env.roam("bt", "pair", PHONE, input="no\n")
    assert "]0;ownedEvil2Jenohp shows passkey 123456" in r.stdout
    r = env.roam("bt")
    assert r.returncode == 0, r.stderr
    assert f"{PHONE}  ]0;ownedEvil2Jenohp" in r.stdout
    for bad in ("\x1b", "\x07", "\u009b", "\u202e", "\u200b"):
        assert bad not in r.stdout and bad not in r.stderr and bad not in env.log()


def test_completion_offers_devices_not_the_adapter(env):
    """`roam bt pair <TAB>` offers the devices, not the adapter's own address (L6)."""
    import shlex
    bash = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "completions", "roam.bash")
    script = (f"source {shlex.quote(bash)}\n"
              "COMP_WORDS=(roam bt pair '')\nCOMP_CWORD=3\n_roam\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    path = os.path.dirname(os.path.abspath(ROAM)) + ":/usr/sbin:/usr/bin:/bin"
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script],
                       env=dict(env.env, PATH=path), capture_output=True, text=True, timeout=30)
    offered = [w for w in p.stdout.split("\n") if w]
    adapter = json.loads(env.roam("bt", "--json").stdout)["adapters"][0]["address"]
    assert HEADSET in offered, (offered, p.stderr)
    assert adapter not in offered, (adapter, offered)
