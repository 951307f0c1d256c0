# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd decides a Wi-Fi link's owner again when NetworkManager or iwd comes onto the bus or
leaves it (NameOwnerChanged, followed with shared/roam-bus-name.c): roamd started first with
no owner for wlan0 (WiFiBackend none); the NetworkManager double started after it with wlan0
makes it networkmanager, its end none again; then the iwd double, iwd. Each change is seen as
roamd's PropertiesChanged (RoamBus.wait wakes on roamd's signals), and a join goes through the
owner that came."""
import os

import dbus
import pytest

import wpaenv_path  # noqa: F401 - tests/wpa on sys.path
import wpaenv
from doubles import IWD, NM, start_double, stop_double
from minienv import MiniEnv

WIFI = "org.roam1.WiFi"


@pytest.fixture
def env():
    e = MiniEnv("wifiown")
    try:
        e.netns("ip link add wlan0 type veth peer name wlan0-peer")
        e.netns("ip link set wlan0 up")
        ctrl = os.path.join(e.dir, "ctrl")
        os.mkdir(ctrl)  # no wpa_supplicant
        e.start_roamd(wpaenv.config(ctrl, os.path.join(e.dir, "client")) +
                      "[Bearers]\nwlan0=wifi\n")
        yield e
        wpaenv.stop_roamd(e)
    finally:
        e.close()


def backend(env):
    try:
        return str(env.rb.get(env.rb.link_path("wlan0"), WIFI, "WiFiBackend"))
    except Exception:
        return ""


def test_owner_follows_the_bus(env):
    rb = env.rb
    rb.wait(lambda: backend(env) == "none", what="no owner for wlan0")
    for template, name, params, owner in [
            ("networkmanager_wifi.py", NM, {"WiFiDevices": ["wlan0"]}, "networkmanager"),
            ("iwd.py", IWD, {"Stations": ["wlan0"]}, "iwd")]:
        proc, bus = start_double(env.address, template, name, parameters=params)
        try:
            rb.wait(lambda: backend(env) == owner, what=owner + " decided after it came")
            why = str(rb.get(rb.link_path("wlan0"), WIFI, "WiFiBackendWhy"))
            assert why, why
            # a join goes through it: the network is not in range, the owner says so
            req = dbus.Dictionary({"ssid": dbus.ByteArray(b"nowhere"), "security": "open"},
                                  signature="sv")
            assert int(rb.call(rb.link_path("wlan0"), WIFI, "Join", "a{sv}", [req])) > 0
        finally:
            stop_double(proc, bus)
        rb.wait(lambda: backend(env) == "none", what="no owner after %s left" % owner)
    assert "Wi-Fi: org.freedesktop.NetworkManager joined the bus" in env.log()
    assert "Wi-Fi: net.connman.iwd joined the bus" in env.log()
