# SPDX-License-Identifier: LGPL-2.1-or-later
"""The iwd double (tests/dbusmock/iwd.py) refuses what iwd refuses and fails where it fails:
Connect without an agent (NoAgent), an agent's refusal (Aborted), a malformed passphrase
(InvalidFormat), a wrong one (Failed, and the next Connect asks again), an 802.1X network
without its provisioning file (NotConfigured), ConnectHiddenNetwork's checks, Scan while
busy, the agent manager's rules and the agent chosen by Connect's caller. roamd's backend is
tested against it in test_iwd_join.py; these keep the double honest."""
import os
import shutil
import tempfile

import dbus
import pytest

from doubles import IWD, MOCK, Agent, start_double, stop_double
from roambus import CallError, plain
from roambus import TestBus as Bus

BASE = "/net/connman/iwd"
STATION = IWD + ".Station"
NETWORK = IWD + ".Network"
KNOWN = IWD + ".KnownNetwork"
PASS = "correct horse battery"


class Env:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="roam-iwd-")
        os.chmod(self.dir, 0o755)
        self.state = os.path.join(self.dir, "iwd")
        os.mkdir(self.state, 0o700)
        self.bus = Bus(self.dir)
        self.proc, self.rb = start_double(self.bus.address, "iwd.py", IWD,
                                          {"StateDirectory": self.state})
        self.agents = []
        self.dev = str(self.mock("AddStation", "s", ["wlan0"]))

    def call(self, path, iface, method, sig="", args=(), timeout=10):
        return self.rb.call(path, iface, method, sig, args, dest=IWD, timeout=timeout)

    def mock(self, method, sig="", args=()):
        return self.call("/", MOCK, method, sig, args)

    def net(self, ssid, ntype="psk", secret=PASS, hidden=False, signal=-6000):
        return str(self.mock("AddNetwork", "ossisb", [self.dev, ssid, ntype, signal, secret,
                                                      hidden]))

    def prop(self, path, iface, name):
        return plain(self.rb.get(path, iface, name))

    def agent(self, *answers):
        a = Agent("iwd", self.bus.address, answers)
        self.agents.append(a)
        return a

    def known(self):
        objs = plain(self.call("/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"))
        return {p: i[KNOWN] for p, i in objs.items() if KNOWN in i}

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


def refused(fn, name):
    with pytest.raises(CallError) as e:
        fn()
    assert e.value.name == IWD + "." + name, e.value
    return e.value


def test_connect_asks_the_agent_and_becomes_known(env):
    net = env.net("home")
    agent = env.agent("secret:" + PASS)
    env.call(net, NETWORK, "Connect")
    req = agent.request()
    assert req["method"] == "RequestPassphrase" and req["args"] == [net]
    assert env.prop(env.dev, STATION, "State") == "connected"
    assert env.prop(env.dev, STATION, "ConnectedNetwork") == net
    assert env.prop(net, NETWORK, "Connected") is True
    known = env.known()
    assert [k["Name"] for k in known.values()] == ["home"]
    assert env.prop(net, NETWORK, "KnownNetwork") in known
    assert len(plain(env.mock("GetAgentCalls"))) == 1
    # connected already: Connect answers at once, nobody is asked (the double records a
    # request before sending it, so one would be on record by Connect's reply)
    env.call(net, NETWORK, "Connect")
    assert [c[1] for c in plain(env.mock("GetAgentCalls"))] == ["RequestPassphrase"]


def test_without_agent_no_agent(env):
    net = env.net("home")
    refused(lambda: env.call(net, NETWORK, "Connect"), "NoAgent")


def test_wrong_passphrase_fails_and_the_next_connect_asks_again(env):
    net = env.net("home")
    agent = env.agent("secret:wrong horse battery", "secret:" + PASS)
    e = refused(lambda: env.call(net, NETWORK, "Connect"), "Failed")
    assert e.message == "Operation failed"
    assert env.prop(env.dev, STATION, "State") == "disconnected"
    assert env.known() == {}  # nothing saved after a failure
    env.call(net, NETWORK, "Connect")
    assert [agent.request()["method"] for _ in range(2)] == ["RequestPassphrase"] * 2
    assert env.prop(env.dev, STATION, "State") == "connected"


@pytest.mark.parametrize("answer", ["short", "x" * 64, "tab\there ok"])
def test_malformed_passphrase_invalid_format(env, answer):
    net = env.net("home")
    env.agent("secret:" + answer)
    refused(lambda: env.call(net, NETWORK, "Connect"), "InvalidFormat")


def test_agent_refusal_is_aborted(env):
    net = env.net("home")
    env.agent("error:Canceled")
    refused(lambda: env.call(net, NETWORK, "Connect"), "Aborted")


def test_without_an_agent_of_its_own_the_first_agent_is_asked(env):
    """agent.c get_agent(): the agent registered by Connect's caller, else the first."""
    net = env.net("home")
    first = env.agent("secret:" + PASS)
    own = Agent("iwd", env.bus.address, ["secret:" + PASS])
    env.agents.append(own)
    # the test's connection has no agent: the first one is asked
    env.call(net, NETWORK, "Connect")
    assert first.request()["method"] == "RequestPassphrase"
    # Connect replied after the one request it made, recorded before it was sent
    assert [c[1] for c in plain(env.mock("GetAgentCalls"))] == ["RequestPassphrase"]


def test_open_network_needs_no_agent(env):
    net = env.net("cafe", "open", "")
    env.call(net, NETWORK, "Connect")
    assert env.prop(net, NETWORK, "Connected") is True


def test_enterprise_needs_a_provisioning_file(env):
    net = env.net("corp", "8021x", "alice:s3cret")
    refused(lambda: env.call(net, NETWORK, "Connect"), "NotConfigured")
    with open(os.path.join(env.state, "corp.8021x"), "w") as f:
        f.write("[Security]\nEAP-Method=PEAP\nEAP-Identity=anonymous\n"
                "EAP-PEAP-Phase2-Method=MSCHAPV2\nEAP-PEAP-Phase2-Identity=alice\n")
    agent = env.agent("secret:wrong", "secret:s3cret")
    refused(lambda: env.call(net, NETWORK, "Connect"), "Failed")
    req = agent.request()
    assert req["method"] == "RequestUserPassword" and req["args"] == [net, "alice"]
    env.call(net, NETWORK, "Connect")
    assert env.prop(net, NETWORK, "Connected") is True


GOOD = {"EAP-Method": "PEAP", "EAP-Identity": "anonymous", "EAP-PEAP-Phase2-Method": "MSCHAPV2",
        "EAP-PEAP-Phase2-Identity": "alice"}


def provision(env, name, keys):
    with open(os.path.join(env.state, name), "w") as f:
        f.write("[Security]\n" + "".join("%s=%s\n" % kv for kv in keys.items()))


@pytest.mark.parametrize("change,error", [
    ({"EAP-Method": None}, "NotConfigured"),
    ({"EAP-Method": "TLS"}, "NotSupported"),
    ({"EAP-Method": "peap"}, None),  # strcasecmp
    ({"EAP-PEAP-Phase2-Method": None}, "NotConfigured"),
    ({"EAP-PEAP-Phase2-Method": "Tunneled-PAP"}, "NotSupported"),  # TTLS only
    ({"EAP-Identity": None}, "NotConfigured"),
    ({"EAP-PEAP-CACert": "/nonexistent/ca.pem"}, "NotConfigured"),
    ({"EAP-PEAP-CACert": "/etc/hostname"}, "NotConfigured"),  # no PEM certificate
    ({"EAP-Method": "TTLS", "EAP-PEAP-Phase2-Method": None, "EAP-PEAP-Phase2-Identity": None,
      "EAP-TTLS-Phase2-Method": "Tunneled-PAP", "EAP-TTLS-Phase2-Identity": "alice"}, None),
    ({"EAP-Method": "TTLS", "EAP-PEAP-Phase2-Method": None, "EAP-PEAP-Phase2-Identity": None,
      "EAP-TTLS-Phase2-Method": "tunneled-pap", "EAP-TTLS-Phase2-Identity": "alice"},
     "NotSupported"),  # strcmp for the tunneled methods
    # eap-peap.c: the phase 2 is an EAP method, looked up in any case
    ({"EAP-PEAP-Phase2-Method": "GTC"}, None),
    ({"EAP-PEAP-Phase2-Method": "md5"}, None),
    ({"EAP-PEAP-Phase2-Method": "Tunneled-MSCHAPv2"}, "NotSupported"),
    ({"EAP-PEAP-Phase2-Method": "PAP"}, "NotSupported"),
    # eap-ttls.c: the Tunneled-* names exactly, else an EAP method
    ({"EAP-Method": "TTLS", "EAP-PEAP-Phase2-Method": None, "EAP-PEAP-Phase2-Identity": None,
      "EAP-TTLS-Phase2-Method": "Tunneled-MSCHAPv2", "EAP-TTLS-Phase2-Identity": "alice"},
     None),
    ({"EAP-Method": "TTLS", "EAP-PEAP-Phase2-Method": None, "EAP-PEAP-Phase2-Identity": None,
      "EAP-TTLS-Phase2-Method": "MSCHAPV2", "EAP-TTLS-Phase2-Identity": "alice"}, None),
    ({"EAP-Method": "TTLS", "EAP-PEAP-Phase2-Method": None, "EAP-PEAP-Phase2-Identity": None,
      "EAP-TTLS-Phase2-Method": "Tunneled-MSCHAPV2", "EAP-TTLS-Phase2-Identity": "alice"},
     "NotSupported"),
    ({"EAP-Method": "TTLS", "EAP-PEAP-Phase2-Method": None, "EAP-PEAP-Phase2-Identity": None,
      "EAP-TTLS-Phase2-Method": "PAP", "EAP-TTLS-Phase2-Identity": "alice"}, "NotSupported"),
])
def test_provisioning_file_checked_as_iwd_checks_it(env, change, error):
    net = env.net("corp", "8021x", "alice:s3cret")
    keys = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    provision(env, "corp.8021x", keys)
    env.rb.wait(lambda: env.prop(net, NETWORK, "KnownNetwork"), what="corp known")
    agent = env.agent("secret:s3cret")
    if error:
        refused(lambda: env.call(net, NETWORK, "Connect"), error)
        # refused before anyone is asked (the double records a request before sending it)
        assert plain(env.mock("GetAgentCalls")) == []
    else:
        env.call(net, NETWORK, "Connect")
        assert agent.request()["method"] == "RequestUserPassword"
        assert env.prop(net, NETWORK, "Connected") is True


def test_provisioning_file_name_is_iwds_encoding(env):
    """storage.c: an SSID of other characters is '=' and its hex; iwd does not read a file
    named by the SSID itself then."""
    net = env.net("café", "8021x", "alice:s3cret")
    provision(env, "café.8021x", GOOD)
    refused(lambda: env.call(net, NETWORK, "Connect"), "NotConfigured")
    provision(env, "=" + "café".encode().hex() + ".8021x", GOOD)
    env.rb.wait(lambda: env.prop(net, NETWORK, "KnownNetwork"), what="café known")
    env.agent("secret:s3cret")
    env.call(net, NETWORK, "Connect")
    assert env.prop(net, NETWORK, "Connected") is True


def test_connect_hidden_network_checks(env):
    env.net("attic", hidden=True)
    env.net("home")
    agent = env.agent("secret:" + PASS)
    refused(lambda: env.call(env.dev, STATION, "ConnectHiddenNetwork", "s", ["x" * 33]),
            "InvalidArguments")
    refused(lambda: env.call(env.dev, STATION, "ConnectHiddenNetwork", "s", ["home"]),
            "NotHidden")
    refused(lambda: env.call(env.dev, STATION, "ConnectHiddenNetwork", "s", ["nobody"]),
            "NotFound")
    assert len(plain(env.call(env.dev, STATION, "GetHiddenAccessPoints"))) == 1
    env.call(env.dev, STATION, "ConnectHiddenNetwork", "s", ["attic"])
    assert agent.request()["method"] == "RequestPassphrase"
    assert env.prop(env.dev, STATION, "State") == "connected"
    hidden = [k for k in env.known().values() if k["Name"] == "attic"]
    assert hidden and hidden[0]["Hidden"] is True
    refused(lambda: env.call(env.dev, STATION, "ConnectHiddenNetwork", "s", ["attic"]),
            "AlreadyProvisioned")


def test_scan_and_ordered_networks(env):
    env.net("weak", signal=-8000)
    env.net("strong", signal=-4500)
    env.call(env.dev, STATION, "Scan")
    refused(lambda: env.call(env.dev, STATION, "Scan"), "InProgress")
    env.rb.wait(lambda: env.prop(env.dev, STATION, "Scanning") is False, what="scan end")
    nets = plain(env.call(env.dev, STATION, "GetOrderedNetworks"))
    assert [(env.prop(p, NETWORK, "Name"), s) for p, s in nets] == [("strong", -4500),
                                                                     ("weak", -8000)]


def test_known_network_forget_and_autoconnect(env):
    net = env.net("home")
    env.agent("secret:" + PASS)
    env.call(net, NETWORK, "Connect")
    (known,) = env.known()
    props = "org.freedesktop.DBus.Properties"
    with pytest.raises(CallError) as e:
        env.call(known, props, "Set", "ssv", [KNOWN, "AutoConnect", dbus.String("no")])
    assert e.value.name == IWD + ".InvalidArguments"
    with pytest.raises(CallError) as e:
        env.call(known, props, "Set", "ssv", [KNOWN, "Name", dbus.String("x")])
    assert e.value.name == "org.freedesktop.DBus.Error.PropertyReadOnly"
    env.call(known, props, "Set", "ssv", [KNOWN, "AutoConnect", dbus.Boolean(False)])
    assert env.prop(known, KNOWN, "AutoConnect") is False
    env.call(known, KNOWN, "Forget")
    assert env.known() == {}
    assert env.prop(env.dev, STATION, "State") == "disconnected"
    refused(lambda: env.call(env.dev, STATION, "Disconnect"), "NotConnected")


def test_agent_manager_rules(env):
    am = IWD + ".AgentManager"
    refused(lambda: env.call(BASE, am, "UnregisterAgent", "o", ["/a"]), "NotFound")
    env.call(BASE, am, "RegisterAgent", "o", ["/a"])
    refused(lambda: env.call(BASE, am, "RegisterAgent", "o", ["/b"]), "AlreadyExists")
    env.call(BASE, am, "UnregisterAgent", "o", ["/a"])
