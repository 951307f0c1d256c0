# SPDX-License-Identifier: LGPL-2.1-or-later
"""Wi-Fi Easy Connect (DPP) enrollee through iwd (issue 43 item 4): roamd with the strict iwd
double (tests/dbusmock/iwd.py, DeviceProvisioning as src/dpp.c has it). Enroll answers iwd's
StartEnrollee URI and a join id; iwd joins what the configurator sent by itself, and roamd
reads the end from DeviceProvisioning.Started and the station's State; a failed exchange, a
cancel (Stop), a second enrollment (iwd's InProgress) and a station that iwd joined before
(disconnected first, as iwd does) are said in words."""
import re

import dbus
import pytest

from roambus import CallError, plain
from test_iwd_roamd import Env

PASS = "correct horse battery"
URI_RE = re.compile(r"^DPP:C:81/6;M:02726d000030;V:2;K:[A-Za-z0-9+/=]+;;$")


@pytest.fixture
def env():
    e = Env()
    yield e
    e.close()


def enroll(env):
    join, uri = plain(env.wifi("Enroll"))
    env.wait_signal("JoinStep", int(join))
    return int(join), str(uri)


def calls(env, name):
    return [c for c in plain(env.mock("GetCalls")) if c[0] == name]


def test_enroll_then_iwd_joins_what_was_sent(env):
    env.mock("AddNetwork", "ossisb", [env.dev, "home", "psk", -5500, PASS, False])
    join, uri = enroll(env)
    assert URI_RE.match(uri), uri
    assert env.signal("JoinStep", join)[1] == "enrolling"
    assert len(calls(env, "StartEnrollee")) == 1
    env.mock("DppConfigure", "oss", [env.dev, "home", PASS])
    _, result, words = env.wait_signal("JoinDone", join)
    assert result == "connected", words
    assert words.startswith("Joined the network the configurator sent")
    assert calls(env, "Stop") == []  # iwd stopped by itself
    assert PASS not in env.env.log()


def test_a_failed_exchange_and_a_network_out_of_range(env):
    join, _ = enroll(env)
    env.mock("DppFail", "o", [env.dev])
    _, result, words = env.wait_signal("JoinDone", join)
    assert result == "refused"
    assert words.startswith("Wi-Fi Easy Connect ended without a network")
    # a network iwd does not see: iwd saves it and stays disconnected
    join, _ = enroll(env)
    env.mock("DppConfigure", "oss", [env.dev, "elsewhere", PASS])
    _, result, words = env.wait_signal("JoinDone", join)
    assert result == "refused" and "ended without a network" in words


def test_a_wrong_key_from_the_configurator(env):
    env.mock("AddNetwork", "ossisb", [env.dev, "home", "psk", -5500, PASS, False])
    join, _ = enroll(env)
    env.mock("DppConfigure", "oss", [env.dev, "home", "not the key at all"])
    _, result, words = env.wait_signal("JoinDone", join)
    assert (result, words) == ("refused",
                               "iwd could not join the network the configurator sent")


def test_cancel_stops_iwd_and_busy_is_said(env):
    join, _ = enroll(env)
    with pytest.raises(CallError) as e:
        env.wifi("Enroll")
    assert "Busy" in str(e.value) or "Already" in str(e.value)
    env.wifi("JoinCancel", "u", [dbus.UInt32(join)])
    _, result, _ = env.wait_signal("JoinDone", join)
    assert result == "canceled"
    env.rb.wait(lambda: len(calls(env, "Stop")) == 1, what="Stop")
    # iwd's own InProgress, when something else runs DPP on the station
    env.nmbus.call(env.dev, "net.connman.iwd.DeviceProvisioning", "StartEnrollee", "", [],
                   dest="net.connman.iwd")
    with pytest.raises(CallError) as e:
        env.wifi("Enroll")
    assert "iwd runs Wi-Fi Easy Connect on wlan0 already" in str(e.value)


def test_a_connected_station_is_disconnected_first(env):
    env.mock("AddNetwork", "ossisb", [env.dev, "home", "psk", -5500, PASS, False])
    env.mock("AddKnownNetwork", "ssbbs", ["home", "psk", False, True, PASS])
    join = env.join(ssid=b"home")
    assert env.wait_signal("JoinDone", join)[1] == "connected"
    join, uri = enroll(env)
    assert URI_RE.match(uri)
    env.mock("DppConfigure", "oss", [env.dev, "home", PASS])
    assert env.wait_signal("JoinDone", join)[1] == "connected"


def test_the_double_refuses_what_iwd_refuses():
    """src/dpp.c's refusals, kept honest: Stop with nothing running (NotFound),
    ConfigureEnrollee while not connected (NotConnected), on an open network (NotSupported),
    with a URI without M:/C: (InvalidArguments), StartEnrollee twice (InProgress)."""
    from test_iwd_double import Env as DoubleEnv
    e = DoubleEnv()
    try:
        dpp = "net.connman.iwd.DeviceProvisioning"

        def refused(method, sig="", args=()):
            with pytest.raises(CallError) as err:
                e.call(e.dev, dpp, method, sig, args)
            return str(err.value)

        assert "net.connman.iwd.NotFound" in refused("Stop")
        uri = "DPP:C:81/1;M:020000000001;V:2;K:MDkwEwYHKoZIzj0CAQ==;;"
        assert "NotConnected" in refused("ConfigureEnrollee", "s", [uri])
        assert e.prop(e.dev, dpp, "Started") is False
        own = str(e.call(e.dev, dpp, "StartEnrollee"))
        assert URI_RE.match(own)
        assert e.prop(e.dev, dpp, "Role") == "enrollee" and e.prop(e.dev, dpp, "URI") == own
        assert "net.connman.iwd.InProgress" in refused("StartEnrollee")
        e.call(e.dev, dpp, "Stop")
        assert e.prop(e.dev, dpp, "Started") is False
        open_net = e.net("cafe", "open", "")
        e.call(open_net, "net.connman.iwd.Network", "Connect")
        assert "NotSupported" in refused("ConfigureEnrollee", "s", [uri])
    finally:
        e.close()


def test_configuring_another_device_is_not_offered_through_iwd(env):
    """iwd's ConfigureEnrollee reports no result on the bus: roamd refuses in words rather
    than end a join it cannot judge."""
    peer = "DPP:C:81/1;M:0242ac110002;V:2;K:MDkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDIgACFZq9YNQ=;;"
    with pytest.raises(CallError) as e:
        env.wifi("JoinUri", "sb", [peer, True])
    assert "NotSupported" in str(e.value)
    assert "ConfigureEnrollee does not say whether the device received the network" in str(
        e.value)
    assert calls(env, "ConfigureEnrollee") == []
