# SPDX-License-Identifier: LGPL-2.1-or-later
"""The double of org.roam1.WiFi (fake_wifi.py) refuses what roamd refuses (docs/dbus-api.md):
a client test passing against it must not pass only because the double took anything."""
import dbus
import pytest

NETS = [{"ssid": "Home", "signal": -48, "security": "wpa2", "passphrase": "correct horse",
         "known": True},
        {"ssid": "Slow", "signal": -50, "security": "wpa2", "passphrase": "slow but sure",
         "stall": True},
        {"ssid": "Attic", "signal": -70, "security": "wpa3", "passphrase": "x"}]
SCENARIO = {"links": [{"Index": 3, "Name": "wlan0", "Bearer": "wifi",
                       "_wifi": {"networks": NETS}},
                      {"Index": 2, "Name": "eth0"}]}


def wifi(bus):
    conn = dbus.bus.BusConnection(bus.env["DBUS_SYSTEM_BUS_ADDRESS"])
    return conn, dbus.Interface(conn.get_object("org.roam1", "/org/roam1/link/3"),
                                "org.roam1.WiFi")


def refused(call, name, text=""):
    with pytest.raises(dbus.DBusException) as e:
        call()
    assert e.value.get_dbus_name() == name, e.value
    assert text in e.value.get_dbus_message(), e.value.get_dbus_message()


def ay(b):
    return dbus.ByteArray(b)


def test_join_arguments(bus, roamd):
    fake = roamd(SCENARIO)
    _, w = wifi(bus)
    inv = "org.roam1.Error.InvalidArguments"
    refused(lambda: w.Join({"ssid": ay(b"Home"), "colour": "red"}), inv, "unknown key 'colour'")
    refused(lambda: w.Join({"ssid": "Home"}), inv, "'ssid' must be of type ay")
    refused(lambda: w.Join({"hidden": True}), inv, "no 'ssid'")
    refused(lambda: w.Join({"ssid": ay(b"")}), inv, "1 to 32 bytes")
    refused(lambda: w.Join({"ssid": ay(b"x" * 33)}), inv, "1 to 32 bytes")
    refused(lambda: w.Join({"ssid": ay(b"H"), "hidden": True}), inv, "needs its 'security'")
    refused(lambda: w.Join({"ssid": ay(b"H"), "hidden": True, "security": "owe"}), inv)
    refused(lambda: w.Join({"ssid": ay(b"Home"), "passphrase": ay(b"short")}), inv, "8 to 63")
    refused(lambda: w.Join({"ssid": ay(b"Home"), "passphrase": ay(b"x" * 64)}), inv, "8 to 63")
    refused(lambda: w.Join({"ssid": ay(b"e"), "eap": "tls", "identity": "u"}), inv, "peap, ttls")
    refused(lambda: w.Join({"ssid": ay(b"e"), "eap": "peap"}), inv, "needs an 'identity'")
    refused(lambda: w.Join({"ssid": ay(b"e"), "eap": "peap", "identity": "u",
                            "ca-file": "ca.pem"}), inv, "absolute path")
    refused(lambda: w.Join({"ssid": ay(b"Home"), "password": ay(b"p")}), inv, "give 'eap'")
    # 64 hex digits are a raw key; SAE passwords have no length rule
    w.Join({"ssid": ay(b"Nowhere"), "passphrase": ay(b"ab" * 32)})
    assert fake.send(op="wifi_calls")[-1][0] == "Join"


def test_joins_belong_to_their_caller(bus, roamd):
    roamd(SCENARIO)
    _, w = wifi(bus)
    _, other = wifi(bus)
    jid = w.Join({"ssid": ay(b"Slow"), "passphrase": ay(b"slow but sure")})
    refused(lambda: w.Join({"ssid": ay(b"Home")}), "org.roam1.Error.Busy", "first")
    refused(lambda: other.JoinSecret(jid, {"passphrase": ay(b"correct horse")}),
            "org.roam1.Error.AccessDenied", "another client's")
    refused(lambda: w.JoinSecret(jid + 7, {"passphrase": ay(b"correct horse")}),
            "org.roam1.Error.InvalidArguments", f"no join {jid + 7}")
    refused(lambda: w.JoinSecret(jid, {"passphrase": ay(b"correct horse")}),
            "org.roam1.Error.Failed", "asked for no secret")
    refused(lambda: w.JoinCancel(jid + 7), "org.roam1.Error.InvalidArguments")
    w.JoinCancel(jid)


def test_authorization(bus, roamd):
    fake = roamd(dict(SCENARIO, _deny_uids=[0]))
    _, w = wifi(bus)
    denied = "org.roam1.Error.AccessDenied"
    refused(lambda: w.Join({"ssid": ay(b"Home")}), denied)
    refused(lambda: w.Scan(), denied)
    refused(lambda: w.Forget(ay(b"Home")), denied)
    refused(lambda: w.SetAutoconnect(ay(b"Home"), False), denied)
    refused(lambda: w.Share(ay(b"Home")), denied)
    # authorization first, as roamd (roamd-wifi-bus.c asks polkit before reading the rest):
    # a refused caller learns nothing of which networks are known
    refused(lambda: w.Forget(ay(b"Stranger")), denied)
    refused(lambda: w.Enroll(), denied)
    assert len(w.GetNetworks()) == 3  # reading needs nothing
    assert fake.send(op="wifi_calls") == []


def test_uris(bus, roamd):
    roamd(SCENARIO)
    _, w = wifi(bus)
    inv = "org.roam1.Error.InvalidArguments"
    refused(lambda: w.JoinUri("http://x/", False), inv, "not a WIFI: or DPP: URI")
    refused(lambda: w.JoinUri("WIFI:T:WPA;P:x;;", False), inv, "no network name")
    refused(lambda: w.JoinUri("WIFI:T:WEP;S:Old;;", False), "org.roam1.Error.NotSupported")
    refused(lambda: w.JoinUri("DPP:M:aa;;", False), inv, "no public key")
    refused(lambda: w.JoinUri("DPP:K:MDkw;;", True), "org.roam1.Error.NotSupported")
    s = w.JoinUri(r"WIFI:S:a\;b\:c;T:SAE;P:\"deadbeef\";H:true;;", False)
    assert bytes(s["ssid"]) == b"a;b:c" and s["security"] == "wpa3" and s["hidden"]
    assert s["has-passphrase"] and "passphrase" not in s
    assert w.Share(ay(b"Home")) == "WIFI:T:WPA;S:Home;P:correct horse;;"
