# SPDX-License-Identifier: LGPL-2.1-or-later
"""The NetworkManager double (tests/dbusmock/networkmanager_wifi.py) refuses what
NetworkManager refuses and fails where it fails: AddAndActivateConnection2's options and
connection checks, the agent manager's rules (identifiers, one per identifier and user, only
the activation's user asked), the secret agent protocol with REQUEST_NEW after a wrong key,
NO_SECRETS without an agent, SSID_NOT_FOUND for a hidden network nobody answers, Update2's
flags. roamd's backend is tested against it in test_nm_join.py; these keep the double
honest."""
import os
import shutil
import tempfile

import dbus
import pytest

from doubles import MOCK, NM, NM_PATH, Agent, start_double, stop_double
from roambus import CallError, plain
from roambus import TestBus as Bus

DEV_IFACE = NM + ".Device"
WIFI_IFACE = NM + ".Device.Wireless"
AC_IFACE = NM + ".Connection.Active"
CONN_IFACE = NM + ".Settings.Connection"
NEED_AUTH, ACTIVATED, FAILED = 60, 100, 120
PSK = "correct horse battery"


class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="roam-nm-")
        os.chmod(self.dir, 0o755)  # agents of other users reach the bus socket
        self.bus = Bus(self.dir)
        self.proc, self.rb = start_double(self.bus.address, "networkmanager_wifi.py", NM)
        self.agents = []
        self.states = []  # (new, old, reason) of the device's StateChanged
        self.rb.listeners.append(self._on_signal)
        self.dev = self.mock("AddWiFiDevice", "s", ["wlan0"])

    def _on_signal(self, _t, msg):
        if msg.get_member() == "StateChanged" and msg.get_interface() == DEV_IFACE:
            self.states.append(tuple(int(x) for x in msg.get_args_list()))

    def call(self, path, iface, method, sig="", args=()):
        return self.rb.call(path, iface, method, sig, args, dest=NM)

    def mock(self, method, sig="", args=()):
        return self.call(NM_PATH, MOCK, method, sig, args)

    def ap(self, ssid, security, secret="", hidden=False, strength=70):
        return self.mock("AddAccessPoint", "oaysysb", [self.dev, dbus.ByteArray(ssid.encode()),
                                                       security, strength, secret, hidden])

    def join(self, conn, ap="/", persist="volatile", **opts):
        return self.call(NM_PATH, NM, "AddAndActivateConnection2", "a{sa{sv}}ooa{sv}",
                         [conn, self.dev, ap, dict({"persist": persist}, **opts)])

    def prop(self, path, iface, name):
        return plain(self.rb.get(path, iface, name))

    def dev_state(self):
        return self.prop(self.dev, DEV_IFACE, "State")

    def wait_state(self, state):
        self.rb.wait(lambda: self.dev_state() == state, what="device state %d" % state)

    def agent(self, *answers, uid=None):
        a = Agent("nm", self.bus.address, answers, uid=uid)
        self.agents.append(a)
        return a

    def connections(self):
        return plain(self.call(NM_PATH + "/Settings", NM + ".Settings", "ListConnections"))

    def close(self):
        for a in self.agents:
            a.close()
        stop_double(self.proc, self.rb)
        self.bus.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


def refused(fn, name, text=None):
    with pytest.raises(CallError) as e:
        fn()
    assert e.value.name == name, e.value
    if text is not None:
        assert e.value.message == text
    return e.value


def wsec(**kw):
    return {"802-11-wireless-security": {k.replace("_", "-"): v for k, v in kw.items()}}


def test_visible_psk_join_completes_key_mgmt_and_activates(env):
    ap = env.ap("home", "wpa2", PSK)
    conn, active, _ = env.join(wsec(psk=PSK), ap, persist="disk")
    env.wait_state(ACTIVATED)
    assert env.prop(active, AC_IFACE, "State") == 2
    settings = plain(env.call(conn, CONN_IFACE, "GetSettings"))
    assert settings["802-11-wireless-security"] == {"key-mgmt": "wpa-psk"}  # no secret
    assert bytes(settings["802-11-wireless"]["ssid"]) == b"home"
    assert env.prop(conn, CONN_IFACE, "Unsaved") is False
    secrets = plain(env.call(conn, CONN_IFACE, "GetSecrets", "s",
                             ["802-11-wireless-security"]))
    assert secrets == {"802-11-wireless-security": {"psk": PSK}}


def test_sae_only_ap_gets_sae_and_refuses_wpa_psk(env):
    ap = env.ap("wpa3 only", "wpa3", "short")
    e = refused(lambda: env.join(wsec(key_mgmt="wpa-psk", psk="long enough"), ap),
                CONN_IFACE + ".InvalidProperty")
    assert e.message == ("802-11-wireless-security.key-mgmt: Access point does not support "
                         "PSK but setting requires it")
    # sae's password is not held to 8..63 characters
    conn, _active, _ = env.join(wsec(psk="short"), ap)
    env.wait_state(ACTIVATED)
    assert plain(env.call(conn, CONN_IFACE, "GetSettings"))[
        "802-11-wireless-security"]["key-mgmt"] == "sae"


@pytest.mark.parametrize("options,text", [
    ({"persist": "forever"}, 'Option "persist" must be one of "volatile", "memory" or "disk"'),
    ({"bind-activation": "yes"},
     'Option "bind-activation" must be one of "dbus-client" or "none"'),
    ({"ask": "no"}, "Unknown extra option passed"),
    ({"persist": dbus.Boolean(True, variant_level=1)}, "Unknown extra option passed"),
])
def test_add_and_activate2_options_refused(env, options, text):
    ap = env.ap("home", "wpa2", PSK)
    refused(lambda: env.call(NM_PATH, NM, "AddAndActivateConnection2", "a{sa{sv}}ooa{sv}",
                             [wsec(psk=PSK), env.dev, ap, options]),
            NM + ".InvalidArguments", text)
    assert env.connections() == []


def test_connection_checks(env):
    open_ap = env.ap("cafe", "open")
    psk_ap = env.ap("home", "wpa2", PSK)
    refused(lambda: env.join(wsec(psk=PSK), open_ap), CONN_IFACE + ".InvalidSetting",
            "802-11-wireless-security: Access point is unencrypted but setting specifies "
            "security")
    refused(lambda: env.join(wsec(psk="short"), psk_ap), CONN_IFACE + ".InvalidProperty",
            "802-11-wireless-security.psk: property is invalid")
    refused(lambda: env.join(wsec(psk="x" * 64), psk_ap), CONN_IFACE + ".InvalidProperty")
    refused(lambda: env.join({"802-11-wireless": {"bogus": dbus.Boolean(True)}}, psk_ap),
            CONN_IFACE + ".InvalidProperty", "802-11-wireless.bogus: unknown property")
    refused(lambda: env.join({"wifi": {}}, psk_ap), CONN_IFACE + ".InvalidSetting")
    refused(lambda: env.join({"802-11-wireless": {"hidden": dbus.String("yes")}}, psk_ap),
            CONN_IFACE + ".InvalidProperty")
    refused(lambda: env.join({}, "/"), NM + ".Device.InvalidConnection",
            "A 'wireless' setting is required if no AP path was given.")
    refused(lambda: env.join({"802-11-wireless": {"hidden": True}}, "/"),
            NM + ".Device.InvalidConnection",
            "A 'wireless' setting with a valid SSID is required if no AP path was given.")
    refused(lambda: env.join({}, NM_PATH + "/AccessPoint/99"),
            NM + ".Device.SpecificObjectNotFound",
            "The access point %s/AccessPoint/99 was not in the scan list." % NM_PATH)
    refused(lambda: env.call(NM_PATH, NM, "AddAndActivateConnection2", "a{sa{sv}}ooa{sv}",
                             [{}, NM_PATH + "/Devices/77", psk_ap, {}]), NM + ".UnknownDevice")
    assert env.connections() == []


def test_secret_asked_of_the_agent_then_new_one_after_a_wrong_key(env):
    ap = env.ap("home", "wpa2", PSK)
    agent = env.agent("secret:wrong horse battery", "secret:" + PSK)
    conn, active, _ = env.join({}, ap)
    first = agent.request()
    assert first["method"] == "GetSecrets"
    assert first["args"][2] == "802-11-wireless-security" and first["args"][4] == 0x1
    assert "psk" not in first["args"][0].get("802-11-wireless-security", {})
    again = agent.request()
    assert again["args"][4] == 0x3  # ALLOW_INTERACTION | REQUEST_NEW
    env.wait_state(ACTIVATED)
    assert (NEED_AUTH, 50, 8) in env.states  # NEED_AUTH from CONFIG: SUPPLICANT_DISCONNECT
    assert env.prop(active, AC_IFACE, "State") == 2
    # volatile: gone once it deactivates
    env.call(NM_PATH, NM, "DeactivateConnection", "o", [active])
    env.rb.wait(lambda: conn not in env.connections(), what="volatile profile removed")


def test_no_agent_is_no_secrets(env):
    ap = env.ap("home", "wpa2", PSK)
    env.join({}, ap)
    env.rb.wait(lambda: (FAILED, NEED_AUTH, 7) in env.states, what="FAILED/NO_SECRETS")
    assert env.connections() == []  # volatile


def test_agent_of_another_user_is_not_asked(env):
    ap = env.ap("home", "wpa2", PSK)
    stranger = env.agent("secret:" + PSK, uid=65534)
    env.join({}, ap)
    env.rb.wait(lambda: (FAILED, NEED_AUTH, 7) in env.states, what="FAILED/NO_SECRETS")
    # the double records each GetSecrets before sending it, and FAILED comes after the last
    assert plain(env.mock("GetAgentCalls")) == []


def test_user_canceled_ends_the_request(env):
    ap = env.ap("home", "wpa2", PSK)
    first = env.agent("error:UserCanceled")
    second = env.agent("secret:" + PSK)
    env.join({}, ap)
    assert first.request()["method"] == "GetSecrets"
    env.rb.wait(lambda: (FAILED, NEED_AUTH, 7) in env.states, what="FAILED/NO_SECRETS")
    # recorded before each GetSecrets is sent, and FAILED comes after the last: one request,
    # the first agent's (it answered it above), the second never asked
    assert [c[1] for c in plain(env.mock("GetAgentCalls"))] == ["802-11-wireless-security"]


def test_no_secrets_moves_on_to_the_next_agent(env):
    ap = env.ap("home", "wpa2", PSK)
    first = env.agent("error:NoSecrets")
    second = env.agent("secret:" + PSK)
    env.join({}, ap)
    assert first.request()["method"] == "GetSecrets"
    assert second.request()["method"] == "GetSecrets"
    env.wait_state(ACTIVATED)


def test_wrong_keys_use_up_auth_retries(env):
    ap = env.ap("home", "wpa2", PSK)
    env.mock("SetAuthRetries", "i", [1])
    agent = env.agent("secret:wrong horse 1", "secret:wrong horse 2", "secret:" + PSK)
    env.join({}, ap)
    env.rb.wait(lambda: (FAILED, NEED_AUTH, 7) in env.states or
                (FAILED, 50, 7) in env.states, what="FAILED/NO_SECRETS")
    assert [r["args"][4] for r in (agent.request(), agent.request())] == [1, 3]


def test_hidden_network_found_or_not(env):
    env.ap("attic", "wpa2", PSK, hidden=True)
    hidden = {"802-11-wireless": {"ssid": dbus.ByteArray(b"attic"), "hidden": True},
              "802-11-wireless-security": {"key-mgmt": "wpa-psk", "psk": PSK}}
    conn, _a, _ = env.join(hidden, "/")
    env.wait_state(ACTIVATED)
    assert plain(env.call(conn, CONN_IFACE, "GetSettings"))["802-11-wireless"]["hidden"]
    missing = {"802-11-wireless": {"ssid": dbus.ByteArray(b"nobody"), "hidden": True},
               "802-11-wireless-security": {"key-mgmt": "wpa-psk", "psk": PSK}}
    env.join(missing, "/")
    env.rb.wait(lambda: any(s[0] == FAILED and s[2] == 53 for s in env.states),
                what="FAILED/SSID_NOT_FOUND")
    # hidden without key-mgmt: nothing to complete it from
    refused(lambda: env.join({"802-11-wireless": {"ssid": dbus.ByteArray(b"attic2")},
                              "802-11-wireless-security": {"psk": PSK}}, "/"),
            CONN_IFACE + ".MissingProperty")


def test_agent_manager_rules(env):
    reg = NM_PATH + "/AgentManager"
    am = NM + ".AgentManager"
    for ident, text in (("ab", "Identifier length not between 3 and 255 characters "
                                "(inclusive)"),
                        (".abc", "Identifier must not start or end with '.'"),
                        ("ab c", "Identifier contains invalid character ' '")):
        refused(lambda: env.call(reg, am, "RegisterWithCapabilities", "su", [ident, 0]),
                am + ".InvalidIdentifier", text)
    refused(lambda: env.call(reg, am, "Unregister"), am + ".NotRegistered")
    env.call(reg, am, "Register", "s", ["org.roam1.test"])
    refused(lambda: env.call(reg, am, "RegisterWithCapabilities", "su", ["org.roam1.test", 0]),
            am + ".PermissionDenied", "An agent with this ID is already registered for this "
            "user.")
    env.call(reg, am, "Unregister")


def test_update2_and_delete(env):
    known = env.mock("AddKnown", "oayssbi", [env.dev, dbus.ByteArray(b"home"), "wpa-psk", PSK,
                                             True, 0])
    settings = plain(env.call(known, CONN_IFACE, "GetSettings"))
    for flags, text in ((0x80, "Unknown flags"), (0x3, "Conflicting flags"),
                        (0x10, "Conflicting flags")):
        refused(lambda: env.call(known, CONN_IFACE, "Update2", "a{sa{sv}}ua{sv}",
                                 [{}, flags, {}]), NM + ".Settings.InvalidArguments", text)
    refused(lambda: env.call(known, CONN_IFACE, "Update2", "a{sa{sv}}ua{sv}",
                             [{}, 0, {"plugin-name": "x"}]), NM + ".Settings.InvalidArguments",
            "Unsupported argument 'plugin-name'")
    refused(lambda: env.call(known, CONN_IFACE, "Update2", "a{sa{sv}}ua{sv}",
                             [{"connection": {"autoconnect": False}}, 0x1, {}]),
            CONN_IFACE + ".MissingProperty", "connection.id: property is missing")
    c = settings["connection"]
    new = {"connection": {"id": c["id"], "uuid": c["uuid"], "type": c["type"],
                          "autoconnect": dbus.Boolean(False),
                          "autoconnect-priority": dbus.Int32(5)},
           "802-11-wireless": {"ssid": dbus.ByteArray(b"home")},
           "802-11-wireless-security": {"key-mgmt": "wpa-psk"}}
    # autoconnect-priority's range is -999..999 (nm-setting-connection.c)
    over = dict(new, connection=dict(new["connection"],
                                     **{"autoconnect-priority": dbus.Int32(1000)}))
    refused(lambda: env.call(known, CONN_IFACE, "Update2", "a{sa{sv}}ua{sv}",
                             [over, 0x1, {}]), CONN_IFACE + ".InvalidProperty",
            "connection.autoconnect-priority: value of type 'i' is invalid or out of range "
            "for property 'autoconnect-priority'")
    env.call(known, CONN_IFACE, "Update2", "a{sa{sv}}ua{sv}", [new, 0x1 | 0x20, {}])
    after = plain(env.call(known, CONN_IFACE, "GetSettings"))
    assert after["connection"]["autoconnect"] is False
    assert after["connection"]["autoconnect-priority"] == 5
    # the secret was not sent, and is kept
    assert plain(env.call(known, CONN_IFACE, "GetSecrets", "s",
                          ["802-11-wireless-security"]))["802-11-wireless-security"] == {
                              "psk": PSK}
    env.call(known, CONN_IFACE, "Delete")
    assert env.connections() == []


def test_request_scan(env):
    wifi = NM + ".Device.Wireless"
    assert env.prop(env.dev, wifi, "LastScan") == -1
    refused(lambda: env.call(env.dev, wifi, "RequestScan", "a{sv}",
                             [{"ssids": dbus.Array(["x"], signature="s")}]),
            NM + ".Device.InvalidArgument", "Invalid 'ssid' scan option")
    refused(lambda: env.call(env.dev, wifi, "RequestScan", "a{sv}",
                             [{"ssids": dbus.Array([dbus.ByteArray(b"x" * 33)],
                                                   signature="ay")}]),
            NM + ".Device.InvalidArgument")
    env.call(env.dev, wifi, "RequestScan", "a{sv}", [{}])
    assert env.prop(env.dev, wifi, "LastScan") > 0
