"""fake_roamd scenarios for the screenshots: one per global verdict, and several links."""
from tuidriver import NOW

S = 1_000_000  # µs


def link(index, name, bearer, verdict, reason, ago=None, **props):
    """A link with a verdict (the same for both families unless props say otherwise)."""
    values = {
        "Index": index, "Name": name, "Bearer": bearer, "AdminUp": True,
        "Carrier": verdict != "offline" or reason not in ("no-carrier", "not-probed"),
        "OperState": "up", "State": "routable" if verdict != "offline" else "no-carrier",
        "Connectivity": verdict, "ConnectivityReason": reason,
        "Connectivity4": verdict, "ConnectivityReason4": reason,
        "Connectivity6": "offline", "ConnectivityReason6": "no-address",
        "HardwareAddress": f"02:00:00:00:00:{index:02x}", "Driver": "veth", "Kind": "veth",
    }
    if ago is not None:
        values["LastProbe"] = NOW - ago * S
        values["ProbeDuration"] = 120_000
    values.update(props)
    return values


WLAN0_ONLINE = link(3, "wlan0", "wifi", "online", "ok", 3,
                    Addresses=[[4, "192.0.2.10", 24, "global"], [6, "2001:db8::10", 64, "global"],
                               [6, "fe80::3", 64, "link"]],
                    Gateways=[[4, "192.0.2.1"], [6, "fe80::1"]],
                    DNS=[[4, "192.0.2.53"]], DNSSource="dhcpcd", Domains=["home.example"],
                    Connectivity6="online", ConnectivityReason6="ok")
ETH0_DOWN = link(2, "eth0", "ethernet", "offline", "no-carrier", Driver="e1000e", Kind="",
                 AdminUp=True)
ETH1_PORTAL = link(4, "eth1", "ethernet", "portal", "portal-redirect", 65,
                   Addresses=[[4, "198.51.100.23", 24, "global"]],
                   Gateways=[[4, "198.51.100.1"]], DNS=[[4, "198.51.100.1"]], DNSSource="dhcpcd",
                   PortalURL="http://portal.cafe.example/login?next=%2F",
                   CaptivePortalURL="https://portal.cafe.example/api/capport",
                   CaptivePortal={"Captive": True,
                                  "UserPortalURL": "http://portal.cafe.example/login?next=%2F",
                                  "VenueInfoURL": "http://cafe.example/",
                                  "SecondsRemaining": 0, "CanExtendSession": False})


def manager(state, best):
    return {"Version": "0.1.0", "State": state,
            "BestLink": f"/org/roam1/link/{best['Index']}" if best else "/"}


def verdict_scenario(verdict):
    """The overview with the best link in each verdict."""
    if verdict == "online":
        links = [ETH0_DOWN, WLAN0_ONLINE]
        return {"manager": manager("online", WLAN0_ONLINE), "links": links}
    if verdict == "portal":
        links = [ETH0_DOWN, ETH1_PORTAL]
        return {"manager": manager("portal", ETH1_PORTAL), "links": links}
    if verdict == "partial":
        wlan = link(3, "wlan0", "wifi", "partial", "https-failed", 12,
                    Addresses=[[4, "192.0.2.10", 24, "global"]])
        return {"manager": manager("partial", wlan), "links": [ETH0_DOWN, wlan]}
    if verdict == "local":
        wlan = link(3, "wlan0", "wifi", "local", "http-timeout", 42,
                    Addresses=[[4, "192.0.2.10", 24, "global"]])
        return {"manager": manager("local", wlan), "links": [ETH0_DOWN, wlan]}
    if verdict == "offline":
        wlan = link(3, "wlan0", "wifi", "offline", "link-local-only", 7200,
                    Addresses=[[4, "169.254.7.1", 16, "link"]], State="link-local")
        return {"manager": manager("offline", None), "links": [ETH0_DOWN, wlan]}
    raise ValueError(verdict)


SEVERAL = {
    "manager": manager("online", WLAN0_ONLINE),
    "links": [
        ETH0_DOWN, WLAN0_ONLINE, ETH1_PORTAL,
        link(5, "wwan0", "cellular", "partial", "https-failed", 30,
             Addresses=[[4, "203.0.113.77", 32, "global"]]),
        link(6, "enp0s31f6-long", "ethernet", "local", "dns-failed", 125,
             Addresses=[[4, "192.0.2.200", 24, "global"]]),
        link(7, "br-virt", "virtual", "offline", "not-probed", Kind="bridge",
             Addresses=[[4, "198.51.100.1", 24, "global"]], State="addressed"),
        link(9, "tun0", "vpn", "online", "ok", 86400 * 2, Kind="tun",
             Addresses=[[4, "203.0.113.5", 32, "global"]], Gateways=[[4, ""]]),
    ],
}

TUN0 = link(9, "tun0", "vpn", "online", "ok", 40, Kind="tun",
            Addresses=[[4, "203.0.113.5", 32, "global"]], Gateways=[[4, ""]])
MINUTE = 60 * S


def app(app_id, **props):
    return dict({"Id": app_id, "Source": "config", "Route4": "wlan0", "Route6": "wlan0"},
                **props)


# Apps in every state, listed out of order (roam sorts by ID, default and system last).
APPS = {
    "manager": manager("online", WLAN0_ONLINE),
    "links": [ETH0_DOWN, WLAN0_ONLINE, TUN0],
    "apps": [
        app("system", Source="builtin"),
        app("org.example.Mail", Bearers=["wifi", "ethernet"], VPN="required",
            Route4="tun0", Route6="tun0",
            Cgroups=["/user.slice/user-1000.slice/app.slice/app-gnome-org.example.Mail-1.scope"]),
        app("org.example.Chat", Access="deny", Source="runtime", Route4="", Route6="",
            State="blocked: access denied"),
        app("org.example.Browser", Access="deny", Handover="move", Route6="",
            State="online for a task", OnlineUntil=NOW + 10 * MINUTE),
        app("org.example.Printer", Access="lan", State="local networks only"),
        app("org.example.Backup", VPN="required", Route4="", Route6="",
            State="blocked: VPN down"),
        app("org.example.Maps", Bearers=["cellular"], Route4="", Route6="",
            State="blocked: no allowed link"),
        app("default", Access="lan", State="local networks only"),
    ],
    "_now": NOW,
}
