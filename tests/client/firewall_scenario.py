"""A fake_roamd scenario of the personal firewall (FIREWALL-API.md), shared by the CLI, plain
mode and screenshot tests: wlan0 at home (a networks.d file matched), eth1 on a café network
nobody chose yet (untrusted by default), eth0 without a network."""

HOME_ID = "wifi:HomeNet:02:00:00:00:01:01"
CAFE_ID = "ether:gw=02:00:00:00:02:01"

WLAN0 = {
    "Index": 3, "Name": "wlan0", "Bearer": "wifi", "AdminUp": True, "Carrier": True,
    "OperState": "up", "State": "routable", "Connectivity": "online",
    "ConnectivityReason": "ok", "Connectivity4": "online", "ConnectivityReason4": "ok",
    "Addresses": [[4, "192.0.2.10", 24, "global"]], "Gateways": [[4, "192.0.2.1"]],
    "NetworkId": HOME_ID,
    "NetworkIdentity": {"interface": "wlan0", "bearer": "wifi", "ssid": "HomeNet",
                        "bssid": "02:00:00:00:01:01", "gateway-mac": "02:00:00:00:01:fe",
                        "dhcp-server": "192.0.2.1", "domain": "home.example"},
    "Location": "home", "LocationSource": "config",
    "LocationReason": 'ssid "HomeNet" and gateway 02:00:00:00:01:fe matched '
                      "/etc/roam/networks.d/home.conf:3",
}
ETH1 = {
    "Index": 4, "Name": "eth1", "Bearer": "ethernet", "AdminUp": True, "Carrier": True,
    "OperState": "up", "State": "routable", "Connectivity": "online",
    "ConnectivityReason": "ok", "Connectivity4": "online", "ConnectivityReason4": "ok",
    "Addresses": [[4, "198.51.100.23", 24, "global"]], "Gateways": [[4, "198.51.100.1"]],
    "NetworkId": CAFE_ID,
    "NetworkIdentity": {"interface": "eth1", "bearer": "ethernet",
                        "gateway-mac": "02:00:00:00:02:01", "dhcp-server": "198.51.100.1"},
    "Location": "untrusted", "LocationSource": "default",
    "LocationReason": "unknown network: untrusted until you choose",
}
ETH0 = {"Index": 2, "Name": "eth0", "Bearer": "ethernet", "AdminUp": True,
        "State": "no-carrier", "Connectivity": "offline", "ConnectivityReason": "no-carrier"}

BUILTIN_HOME = [
    ["wlan0", "home", "in", "accept", "established,related", "", "built-in",
     "built-in:established", 1520, 1_834_000],
    ["wlan0", "home", "in", "accept", "icmp and icmpv6 essentials", "", "built-in",
     "built-in:icmp", 12, 1008],
    ["wlan0", "home", "in", "accept", "tcp 22000 app org.syncthing", "org.syncthing",
     "/etc/roam/firewall.d/home.conf:4", "home.conf:4", 87, 52_344],
    ["wlan0", "home", "in", "accept", "tcp 22", "", "/etc/roam/firewall.d/home.conf:6",
     "home.conf:6", 4, 240],
    ["wlan0", "home", "in", "drop", "any", "", "built-in", "built-in:default", 31, 2_480],
]
ETH1_UNTRUSTED = [
    ["eth1", "untrusted", "in", "accept", "established,related", "", "built-in",
     "built-in:established", 301, 402_113],
    ["eth1", "untrusted", "in", "accept", "tcp 22", "", "built-in",
     "built-in:ssh", 0, 0],
    ["eth1", "untrusted", "in", "drop", "any", "", "built-in", "built-in:default", 9, 540],
]
# What SetLocation swaps in: the rows of a location, link and location filled in.
PROFILES = {
    "home": [r[2:] for r in BUILTIN_HOME],
    "public": [["in", "accept", "established,related", "", "built-in", "built-in:established",
                0, 0],
               ["in", "reject", "tcp 22000", "", "/etc/roam/firewall.d/public.conf:2",
                "public.conf:2", 0, 0],
               ["in", "drop", "any", "", "built-in", "built-in:default", 0, 0]],
    "work": [["in", "accept", "established,related", "", "built-in", "built-in:established", 0, 0],
             ["in", "drop", "any", "", "built-in", "built-in:default", 0, 0]],
    "untrusted": [r[2:] for r in ETH1_UNTRUSTED],
}

FIREWALL = {
    "manager": {"Version": "0.1.0", "State": "online", "BestLink": "/org/roam1/link/3"},
    "links": [ETH0, WLAN0, ETH1],
    "firewall_rules": BUILTIN_HOME + ETH1_UNTRUSTED,
    "firewall_profiles": PROFILES,
}
