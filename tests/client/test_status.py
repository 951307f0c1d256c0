"""`roam status` (text and --json), the command line, and the "roamd is not running" cases,
against fake_roamd.py on a private system bus."""
import json
import os
import re

from fakebus import run_roam
from firewall_scenario import CAFE_ID, FIREWALL, HOME_ID

NOT_RUNNING = "roam: roamd is not running (no owner of org.roam1 on the system bus)"

ETH0 = {
    "Index": 2, "Name": "eth0", "Bearer": "ethernet", "Driver": "e1000e",
    "HardwareAddress": "02:00:00:00:00:02", "MTU": 1500, "AdminUp": True, "Carrier": False,
    "OperState": "down", "State": "no-carrier", "DNSSource": "none",
}
WIFI0 = {
    "Index": 3, "Name": "wifi0", "Bearer": "wifi", "BearerSource": "config", "Kind": "veth",
    "Driver": "veth", "HardwareAddress": "02:00:00:00:00:03", "MTU": 1480, "AdminUp": True,
    "Carrier": True, "OperState": "up", "State": "routable",
    "Addresses": [[4, "192.0.2.10", 24, "global"], [6, "2001:db8::10", 64, "global"],
                  [6, "fe80::3", 64, "link"]],
    "Gateways": [[4, "192.0.2.1"], [6, "fe80::1"]],
    "DNS": [[4, "192.0.2.53"], [6, "2001:db8::53"]],
    "DNSSource": "dhcpcd",
    "Domains": ["home.example", "example.org"],
    "NTPServers": ["192.0.2.123", "ntp.home.example"],
    "CaptivePortalURL": "https://portal.example/api/v1?session=abc",
    "Connectivity": "portal", "ConnectivityReason": "portal-redirect",
    "Connectivity4": "portal", "ConnectivityReason4": "portal-redirect",
    "PortalURL": "http://portal.example/login", "LastProbe": 1_700_000_000_000_000,
    "ProbeDuration": 250_000,
    "WiFiState": "COMPLETED", "WiFiSSID": "Cafe", "WiFiSignal": -58, "WiFiLinkSpeed": 144,
}
BRIDGE = {
    "Index": 7, "Name": "br-virt", "Bearer": "virtual", "Kind": "bridge", "MTU": 1500,
    "AdminUp": True, "Carrier": True, "OperState": "up", "State": "addressed",
    "Addresses": [[4, "198.51.100.1", 24, "global"]], "DNSSource": "none",
}
TUN0 = {
    "Index": 9, "Name": "tun0", "Bearer": "vpn", "Kind": "tun", "MTU": 1400, "AdminUp": True,
    "Carrier": True, "OperState": "unknown", "State": "routable",
    "Addresses": [[4, "203.0.113.5", 32, "global"]], "Gateways": [[4, ""]],
    "DNS": [[4, "203.0.113.53"]], "DNSSource": "config",
}
# Listed out of index order on purpose: the client sorts.
ROUTABLE = {
    "manager": {"Version": "0.1.0-test", "State": "online", "BestLink": "/org/roam1/link/3",
                "ConfigFile": "/etc/roam/roamd.conf"},
    "links": [TUN0, WIFI0, BRIDGE, ETH0],
}
OFFLINE = {
    "manager": {"Version": "0.1.0-test", "State": "offline", "BestLink": "/"},
    "links": [ETH0],
}

LINK_KEYS = ["name", "index", "bearer", "bearer_source", "kind", "driver", "hardware_address",
             "mtu", "admin_up", "carrier", "oper_state", "state", "addresses", "gateways", "dns",
             "dns_source", "domains", "captive_portal_url", "connectivity", "connectivity_reason",
             "connectivity4", "connectivity_reason4", "connectivity6", "connectivity_reason6",
             "portal_url", "nat64_prefix", "working_mtu4", "working_mtu6", "last_probe_usec", "probe_duration_usec", "wifi_state", "wifi_ssid",
             "wifi_signal_dbm", "wifi_link_speed_mbit", "network_id", "location",
             "location_source", "location_reason", "location_wanted", "location_text",
             "ntp_servers"]


def blocks(text):
    """The link blocks of the text output, keyed by link name (the first word)."""
    parts = text.rstrip("\n").split("\n\n")
    return parts[0], {p.split()[0]: p for p in parts[1:]}


def field(block, label):
    """The value lines of one "  Label:" field, continuation lines included."""
    lines = block.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(f"  {label}:"):
            values = [line[18:]]
            for cont in lines[i + 1:]:
                if not cont.startswith(" " * 18):
                    break
                values.append(cont[18:])
            return values
    return None


def test_status_text(roamd, roam):
    roamd(ROUTABLE)
    r = roam("status")
    assert r.rc == 0, r.err
    assert r.err == ""
    for line in r.out.split("\n"):
        assert len(line) <= 80, line

    head, links = blocks(r.out)
    assert head == "State: Online via wifi0 (wifi)"
    assert list(links) == ["eth0", "wifi0", "br-virt", "tun0"]  # by index

    eth0 = links["eth0"]
    assert eth0.split("\n")[0] == "eth0 (index 2)"
    assert field(eth0, "Bearer") == ["ethernet"]
    assert field(eth0, "State")[0].startswith("no-carrier (")
    assert field(eth0, "Carrier") == ["no"]
    assert field(eth0, "Addresses") == ["none"]
    assert field(eth0, "Gateways") == ["none"]
    assert field(eth0, "DNS servers") == ["none"]
    assert field(eth0, "Search domains") is None
    assert field(eth0, "NTP servers") is None
    assert field(eth0, "Captive portal") is None
    assert field(eth0, "Location") is None  # roamd sent no network and no location

    wifi = links["wifi0"]
    assert wifi.split("\n")[0] == "wifi0 (index 3, best link)"
    assert field(wifi, "Bearer") == ["wifi (config)"]
    assert field(wifi, "State") == ["routable (usable address and default route)"]
    assert field(wifi, "Connectivity") == ["portal (redirected to a login page)"]
    assert field(wifi, "Log in at") == ["http://portal.example/login"]
    assert re.fullmatch(r"\d+d ago, took 250 ms", field(wifi, "Last probe")[0])
    assert field(eth0, "Connectivity") == ["offline (not probed yet)"]
    assert field(eth0, "Last probe") is None
    assert field(wifi, "Carrier") == ["yes"]
    # The signal in words beside the number (wpa_supplicant's SIGNAL_POLL through roamd).
    assert field(wifi, "WiFi") == ["Cafe, signal good, -58 dBm, 144 Mbit/s"]
    assert field(eth0, "WiFi") is None
    assert field(wifi, "Interface") == ["up (operational state: up)"]
    assert field(wifi, "Device") == ["veth, driver veth, address 02:00:00:00:00:03, MTU 1480"]
    assert field(wifi, "Addresses") == ["192.0.2.10/24 (global)", "2001:db8::10/64 (global)",
                                        "fe80::3/64 (link-local)"]
    assert field(wifi, "Gateways") == ["192.0.2.1", "fe80::1"]
    assert field(wifi, "DNS servers") == ["192.0.2.53, 2001:db8::53 (from dhcpcd)"]
    assert field(wifi, "Search domains") == ["home.example, example.org"]
    assert field(wifi, "NTP servers") == ["192.0.2.123, ntp.home.example (from DHCP)"]
    assert field(wifi, "Captive portal") == [
        "API at https://portal.example/api/v1?session=abc"]

    virt = links["br-virt"]
    assert "virtual" in virt.split("\n")[0]
    assert field(virt, "Bearer") == ["virtual"]
    assert field(virt, "Device") == ["bridge, MTU 1500"]

    tun = links["tun0"]
    assert field(tun, "Bearer") == ["vpn"]
    assert field(tun, "Gateways") == ["IPv4 default route without a gateway"]
    assert field(tun, "DNS servers") == ["203.0.113.53 (from the roamd configuration)"]


def test_status_json(roamd, roam):
    roamd(ROUTABLE)
    r = roam("status", "--json")
    assert r.rc == 0, r.err
    doc = json.loads(r.out)
    assert list(doc) == ["state", "best_link", "default_link", "state_reason", "version",
                         "degraded", "degraded_since_usec", "mark_conflicts",
                         "firewall_mask_suggestion", "links"]
    assert doc["state"] == "online"
    assert doc["best_link"] == "wifi0" and doc["default_link"] == "wifi0"
    assert doc["state_reason"] == ""
    assert doc["version"] == "0.1.0-test"
    assert [link["name"] for link in doc["links"]] == ["eth0", "wifi0", "br-virt", "tun0"]
    for link in doc["links"]:
        assert list(link) == LINK_KEYS

    wifi = doc["links"][1]
    assert wifi == {
        "name": "wifi0", "index": 3, "bearer": "wifi", "bearer_source": "config",
        "kind": "veth", "driver": "veth", "hardware_address": "02:00:00:00:00:03", "mtu": 1480,
        "admin_up": True, "carrier": True, "oper_state": "up", "state": "routable",
        "addresses": [
            {"family": 4, "address": "192.0.2.10", "prefix": 24, "scope": "global"},
            {"family": 6, "address": "2001:db8::10", "prefix": 64, "scope": "global"},
            {"family": 6, "address": "fe80::3", "prefix": 64, "scope": "link"},
        ],
        "gateways": [{"family": 4, "address": "192.0.2.1"}, {"family": 6, "address": "fe80::1"}],
        "dns": [{"family": 4, "address": "192.0.2.53"}, {"family": 6, "address": "2001:db8::53"}],
        "dns_source": "dhcpcd",
        "domains": ["home.example", "example.org"],
        "captive_portal_url": "https://portal.example/api/v1?session=abc",
        "connectivity": "portal", "connectivity_reason": "portal-redirect",
        "connectivity4": "portal", "connectivity_reason4": "portal-redirect",
        "connectivity6": "offline", "connectivity_reason6": "not-probed",
        "portal_url": "http://portal.example/login", "nat64_prefix": "",
        "working_mtu4": 0, "working_mtu6": 0,
        "last_probe_usec": 1_700_000_000_000_000,
        "probe_duration_usec": 250_000, "wifi_state": "COMPLETED", "wifi_ssid": "Cafe",
        "wifi_signal_dbm": -58, "wifi_link_speed_mbit": 144, "network_id": "",
        "location": "", "location_source": "", "location_reason": "", "location_wanted": "",
        "location_text": "no network",
        "ntp_servers": ["192.0.2.123", "ntp.home.example"],
    }
    eth0 = doc["links"][0]
    assert eth0["carrier"] is False and eth0["admin_up"] is True
    assert eth0["addresses"] == [] and eth0["gateways"] == [] and eth0["dns"] == []
    assert eth0["domains"] == [] and eth0["kind"] == "" and eth0["captive_portal_url"] == ""
    assert eth0["last_probe_usec"] is None and eth0["portal_url"] == ""
    assert eth0["wifi_state"] == "" and eth0["wifi_signal_dbm"] is None
    assert doc["links"][3]["gateways"] == [{"family": 4, "address": ""}]
    # Pretty-printed, URLs not escaped.
    assert "\n  " in r.out and "\\/" not in r.out


def test_status_offline(roamd, roam):
    roamd(OFFLINE)
    r = roam("status")
    assert r.rc == 0, r.err
    assert r.out.split("\n")[0] == "State: Offline: no usable link"
    doc = json.loads(roam("status", "--json").out)
    assert doc["state"] == "offline"
    assert doc["best_link"] is None
    assert [link["name"] for link in doc["links"]] == ["eth0"]


def test_status_no_links(roamd, roam):
    roamd({"manager": {"State": "offline"}})
    r = roam("status")
    assert r.rc == 0, r.err
    assert r.out == "State: Offline: no usable link\n\nNo links (loopback is never shown).\n"
    doc = json.loads(roam("status", "--json").out)
    assert doc == {"state": "offline", "best_link": None, "default_link": None,
                   "state_reason": "", "version": "0.1.0", "degraded": "",
                   "degraded_since_usec": None, "mark_conflicts": [],
                   "firewall_mask_suggestion": "", "links": []}


def test_default_command_is_status(roamd, roam):
    roamd(ROUTABLE)
    assert roam().out == roam("status").out
    assert roam("--json", "status").out == roam("status", "--json").out
    assert json.loads(roam("--json").out)["best_link"] == "wifi0"


def test_long_lists_wrap_at_80_columns(roamd, roam):
    dns = [[6, f"2001:db8:ffff:ffff:ffff:ffff:ffff:{i:x}"] for i in range(6)]
    domains = [f"sub{i}.a-rather-long-search-domain.example" for i in range(6)]
    link = dict(WIFI0, DNS=dns, Domains=domains, DNSSource="networkmanager")
    roamd({"manager": {"State": "online", "BestLink": "/org/roam1/link/3"}, "links": [link]})
    r = roam("status")
    assert r.rc == 0, r.err
    for line in r.out.split("\n"):
        assert len(line) <= 80, line
    _, links = blocks(r.out)
    servers = " ".join(field(links["wifi0"], "DNS servers"))
    assert servers == ", ".join(a for _, a in dns) + " (from NetworkManager)"
    assert " ".join(field(links["wifi0"], "Search domains")) == ", ".join(domains)


def test_unknown_properties_are_ignored(roamd, roam):
    link = dict(WIFI0, _extra={"FutureProperty": "x"})
    roamd({"manager": {"State": "online", "BestLink": "/org/roam1/link/3",
                       "_extra": {"FutureManagerProperty": "y"}}, "links": [link]})
    r = roam("status", "--json")
    assert r.rc == 0, r.err
    assert json.loads(r.out)["links"][0]["name"] == "wifi0"


def test_wrong_property_type_fails(roamd, roam):
    roamd({"manager": {"State": "online"}, "links": [dict(WIFI0, _types={"MTU": "s"})]})
    r = roam("status")
    assert r.rc == 1
    assert r.out == ""
    assert "MTU" in r.err


def test_not_running_no_owner(bus, roam):
    for args in ((), ("status",), ("status", "--json")):
        r = roam(*args)
        assert r.rc == 3
        assert r.out == ""
        assert r.err.strip() == NOT_RUNNING


def test_not_running_after_roamd_exits(roamd, roam):
    fake = roamd(OFFLINE)
    assert roam("status").rc == 0
    fake.close()
    r = roam("status")
    assert r.rc == 3
    assert r.err.strip() == NOT_RUNNING


def test_not_running_no_bus(tmp_path):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-such-socket")
    r = run_roam(env, "status")
    assert r.rc == 3
    assert r.out == ""
    assert r.err.startswith("roam: roamd is not running (cannot connect to the system bus")


def test_help_and_version(tmp_path):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-such-socket")
    r = run_roam(env, "--help")
    assert r.rc == 0 and r.err == ""
    assert "status" in r.out and "--json" in r.out and "--version" in r.out
    for code in ("0", "1", "2", "3"):
        assert re.search(rf"^  {code}  \S", r.out, re.M), f"exit status {code} undocumented"
    assert "DBUS_SYSTEM_BUS_ADDRESS" in r.out
    for line in r.out.split("\n"):
        assert len(line) <= 80
    assert run_roam(env, "-h").out == r.out

    r = run_roam(env, "--version")
    assert r.rc == 0
    assert re.fullmatch(r"roam \d+\.\d+\.\d+\S*\n", r.out)


def test_usage_errors(tmp_path):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=f"unix:path={tmp_path}/no-such-socket")
    cases = {
        ("--bogus",): "unknown option '--bogus'",
        ("-x",): "unknown option '-x'",
        ("status", "--frob"): "unknown option '--frob'",
        ("frobnicate",): "unknown command 'frobnicate'",
        ("status", "extra"): "'status' takes no arguments",
    }
    for args, message in cases.items():
        r = run_roam(env, *args)
        assert r.rc == 2, args
        assert r.out == ""
        assert r.err.startswith(f"roam: {message}"), r.err
        assert re.search(r"Try 'roam (status )?--help'\.\n$", r.err), r.err


def test_status_location(roamd, roam):
    """Each link's location in words: chosen (and by whom), or untrusted until someone
    chooses; the same in --json with the bus words beside them."""
    fake = roamd(FIREWALL)
    _, links = blocks(roam("status").out)
    assert field(links["wlan0"], "Location") == ["home, from networks.d"]
    assert field(links["eth1"], "Location") == ["untrusted until you choose"]
    assert field(links["eth0"], "Location") is None
    doc = {link["name"]: link for link in json.loads(roam("status", "--json").out)["links"]}
    assert {k: doc["wlan0"][k] for k in LINK_KEYS[-7:-1]} == {
        "network_id": HOME_ID, "location": "home", "location_source": "config",
        "location_reason": FIREWALL["links"][1]["LocationReason"], "location_wanted": "",
        "location_text": "home, from networks.d"}
    assert (doc["eth1"]["network_id"], doc["eth1"]["location_source"],
            doc["eth1"]["location_text"]) == (CAFE_ID, "default", "untrusted until you choose")
    assert doc["eth0"]["location_text"] == "no network"
    # chosen by a person
    fake.send(op="set", link=4, props={"Location": "public", "LocationSource": "user"})
    _, links = blocks(roam("status").out)
    assert field(links["eth1"], "Location") == ["public, set by you"]
    assert json.loads(roam("status", "--json").out)["links"][2]["location_text"] == \
        "public, set by you"


def test_status_nat64_prefix(roamd, roam):
    """An IPv6-only link: IPv4 offline (no address), IPv6 online, and the NAT64 prefix the
    network's DNS64 revealed (RFC 7050) in the text and in --json; a link without one has no
    such line."""
    v6only = dict(WIFI0, Addresses=[[6, "2001:db8:7::10", 64, "global"]],
                  Gateways=[[6, "fe80::1"]], DNS=[[6, "2001:db8:7::1"]], CaptivePortalURL="",
                  Connectivity="online", ConnectivityReason="ok", Connectivity4="offline",
                  ConnectivityReason4="no-address", Connectivity6="online",
                  ConnectivityReason6="ok", PortalURL="", Nat64Prefix="2001:db8:64::/96")
    roamd({"manager": dict(ROUTABLE["manager"]), "links": [ETH0, v6only]})
    _, links = blocks(roam("status").out)
    assert field(links["wifi0"], "NAT64 prefix") == [
        "2001:db8:64::/96 (announced by the network's DNS64)"]
    assert field(links["eth0"], "NAT64 prefix") is None
    doc = {link["name"]: link for link in json.loads(roam("status", "--json").out)["links"]}
    assert doc["wifi0"]["nat64_prefix"] == "2001:db8:64::/96"
    assert (doc["wifi0"]["connectivity4"], doc["wifi0"]["connectivity_reason4"]) == \
        ("offline", "no-address")
    assert doc["wifi0"]["connectivity6"] == "online"
    assert doc["eth0"]["nat64_prefix"] == ""


def test_status_working_mtu(roamd, roam):
    """Behind a path MTU black hole (reason mtu): the working MTU roamd found per family, or
    "not known" for a family still being searched; a link without a hole has no such line."""
    hole = dict(WIFI0, Connectivity="partial", ConnectivityReason="mtu", Connectivity4="partial",
                ConnectivityReason4="mtu", Connectivity6="partial", ConnectivityReason6="mtu",
                PortalURL="", WorkingMTU4=1400)
    roamd({"manager": dict(ROUTABLE["manager"]), "links": [ETH0, hole]})
    _, links = blocks(roam("status").out)
    assert field(links["wifi0"], "Path MTU") == ["IPv4 1400 bytes, IPv6 not known"]
    assert field(links["eth0"], "Path MTU") is None
    doc = {link["name"]: link for link in json.loads(roam("status", "--json").out)["links"]}
    assert (doc["wifi0"]["working_mtu4"], doc["wifi0"]["working_mtu6"]) == (1400, 0)
    assert doc["eth0"]["working_mtu4"] == 0
