#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks that roamd, running in an existing world, reports what the world should produce.

    demo_check.py NAME [--phase default|networks] [--timeout SECONDS]

Phase "default": the world as `up` made it (wifi0 at home, cell0 in the living room, eth0 in
the dead network). Phase "networks": the uplinks moved to the other networks (wifi0 in the
cafe, cell0 in the network that blocks HTTPS, eth0 behind the silent gateway); the caller
moves them. Waits (bounded; re-checked on roamd's signals, no polling) until every
expectation holds; exits 0 then, or prints each
expectation that still failed at the deadline and exits 1. Used by roam-demo --check.
"""
import argparse
import sys

from roamworld import (CAFE_API_URL, CAFE_PORTAL_URL, NETWORKS, World, addrs, gateways,
                       lease_matches)

# Where the uplinks are in the "networks" phase.
NETWORKS_PHASE = {"wifi0": "cafe", "cell0": "httpsblocked", "eth0": "silent"}


def verdict_text(l):
    return "IPv4 %s (%s), IPv6 %s (%s)" % (l["Connectivity4"], l["ConnectivityReason4"],
                                          l["Connectivity6"], l["ConnectivityReason6"])


def both(l, verdict, reasons=None):
    """Both address families have this verdict (and one of these reasons)."""
    return all(l["Connectivity%d" % f] == verdict and
               (reasons is None or l["ConnectivityReason%d" % f] in reasons) for f in (4, 6))


def networks_expectations(w):
    out = []
    try:
        links = w.links()
        manager = w.manager()
    except Exception as e:  # noqa: BLE001
        return [("roamd answers on the bus", False, str(e))]
    out.append(("roamd answers on the bus", True, ""))
    if not w.probes:
        return out + [("this roamd has connectivity probes", False, "no [Probe] support")]

    def check(desc, name, pred, detail=verdict_text):
        l = links.get(name)
        if l is None:
            out.append((desc, False, "link missing"))
        else:
            out.append((desc, bool(pred(l)), detail(l)))

    for name, net in NETWORKS_PHASE.items():
        check("%s has the lease of the %s network" % (name, net), name,
              lambda l, net=net: lease_matches(l, net),
              lambda l: "State=%s Addresses=%s" % (l["State"], l["Addresses"]))
    check("wifi0 (cafe) is portal in both families", "wifi0",
          lambda l: both(l, "portal", ("capport", "portal-dns", "portal-redirect")))
    check("wifi0 (cafe) says where to log in: %s" % CAFE_PORTAL_URL, "wifi0",
          lambda l: l["PortalURL"] == CAFE_PORTAL_URL, lambda l: "PortalURL=%r" % l["PortalURL"])
    check("wifi0 (cafe) knows the portal API the cafe's DHCP announced", "wifi0",
          lambda l: l["CaptivePortalURL"] == CAFE_API_URL and
          l["CaptivePortal"].get("Captive") is True,
          lambda l: "CaptivePortalURL=%r CaptivePortal=%r" % (l["CaptivePortalURL"],
                                                              l["CaptivePortal"]))
    check("cell0 (HTTPS blocked) is partial in both families", "cell0",
          lambda l: both(l, "partial", ("https-failed",)))
    check("eth0 (silent gateway) is offline in both families: nothing answers", "eth0",
          lambda l: l["State"] == "routable" and both(l, "offline", ("gateway-unreachable",)))
    cell = links.get("cell0")
    eth0 = links.get("eth0")
    # the best link is cell0 (partial), but apps go by the kernel's default route, eth0's,
    # which reaches nothing, and no link is online to take them instead (issue 41 §1)
    out.append(("roamd's overall state is offline, through eth0, and says cell0 is better",
                manager.get("State") == "offline" and cell is not None and eth0 is not None
                and manager.get("BestLink") == cell["_path"]
                and manager.get("DefaultLink") == eth0["_path"]
                and manager.get("StateReason") == "cell0 lets no HTTPS through, but the default "
                "route goes through eth0, which reaches nothing",
                "State=%s BestLink=%s DefaultLink=%s StateReason=%r"
                % (manager.get("State"), manager.get("BestLink"), manager.get("DefaultLink"),
                   manager.get("StateReason"))))
    return out


def expectations(w):
    """[(description, ok, detail)] for the current state."""
    out = []
    try:
        links = w.links()
        manager = w.manager()
    except Exception as e:  # noqa: BLE001
        return [("roamd answers on the bus", False, str(e))]
    out.append(("roamd answers on the bus", True, ""))
    for name in ("wifi0", "cell0", "eth0"):
        out.append(("roamd sees %s" % name, name in links, "links: %s" % sorted(links)))
    wifi, cell, eth = (links.get(n) for n in ("wifi0", "cell0", "eth0"))

    def check(desc, link, pred, detail):
        if link is None:
            out.append((desc, False, "link missing"))
        else:
            out.append((desc, bool(pred(link)), detail(link)))

    home = NETWORKS["home"]
    check("wifi0 (home) is routable", wifi, lambda l: l["State"] == "routable",
          lambda l: "State=%s" % l["State"])
    check("wifi0 (home) has a global IPv4 address from 192.0.2.0/26", wifi,
          lambda l: any(a.startswith("192.0.2.") for a in addrs(l, 4)),
          lambda l: "IPv4: %s" % addrs(l, 4))
    check("wifi0 (home) has a global IPv6 address from 2001:db8:1::/64", wifi,
          lambda l: any(a.startswith("2001:db8:1::") for a in addrs(l, 6)),
          lambda l: "IPv6: %s" % addrs(l, 6))
    check("wifi0 (home) has IPv4 and IPv6 gateways", wifi,
          lambda l: gateways(l, 4) == [home["v4_gateway"]] and gateways(l, 6),
          lambda l: "Gateways=%s" % l["Gateways"])
    check("wifi0 (home) has the home DNS servers (from dhcpcd)", wifi,
          lambda l: sorted(map(tuple, l["DNS"])) == sorted(home["dns"]),
          lambda l: "DNS=%s DNSSource=%s" % (l["DNS"], l["DNSSource"]))
    check("cell0 (living room) is routable (it has a gateway)", cell,
          lambda l: l["State"] == "routable", lambda l: "State=%s" % l["State"])
    check("eth0 (dead network) has no usable address", eth,
          lambda l: l["State"] in ("no-address", "link-local") and not addrs(l, 4)
          and not addrs(l, 6),
          lambda l: "State=%s Addresses=%s" % (l["State"], l["Addresses"]))
    if wifi is not None and "Connectivity" in wifi and w.probes:
        # this roamd probes, against the world's check server
        check("wifi0 (home) is online in both families", wifi, lambda l: both(l, "online"),
              verdict_text)
        check("cell0 (living room) is local in both families: the TV answers, the internet "
              "does not", cell, lambda l: both(l, "local"), verdict_text)
        check("eth0 (dead network) is offline in both families", eth,
              lambda l: both(l, "offline"), verdict_text)
        out.append(("roamd's overall state is online", manager.get("State") == "online",
                    "State=%s" % manager.get("State")))
    out.append(("the best link is wifi0",
                wifi is not None and manager.get("BestLink") == wifi["_path"],
                "BestLink=%s" % manager.get("BestLink")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--phase", choices=("default", "networks"), default="default")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    w = World(a.name)
    check = expectations if a.phase == "default" else networks_expectations
    # re-checked whenever roamd sends a signal (every expectation is roamd's state on the bus)
    try:
        w.wait(lambda: all(ok for _, ok, _ in check(w)), a.timeout, what="every expectation")
    except TimeoutError:
        res = check(w)
        for desc, ok, detail in res:
            print("  %s  %s%s" % ("ok  " if ok else "FAIL", desc,
                                  "" if ok else " (%s)" % detail))
        print("roam-demo: %d expectation(s) failed after %.0f s"
              % (sum(not ok for _, ok, _ in res), a.timeout))
        return 1
    for desc, _, _ in check(w):
        print("  ok    %s" % desc)
    return 0

if __name__ == "__main__":
    sys.exit(main())
