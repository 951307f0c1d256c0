#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Checks that roamd, running in an existing world, reports what the world should produce.

    demo_check.py NAME [--timeout SECONDS]

Waits (bounded) until every expectation holds; exits 0 then, or prints each expectation that
still failed at the deadline and exits 1. Used by roam-demo --check.
"""
import argparse
import sys
import time

from roamworld import NETWORKS, World, addrs, gateways


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
        check("wifi0 (home) is online", wifi, lambda l: l["Connectivity"] == "online",
              lambda l: "Connectivity=%s (%s)" % (l["Connectivity"], l["ConnectivityReason"]))
        check("cell0 (living room) is local: the TV answers, the internet does not", cell,
              lambda l: l["Connectivity"] == "local",
              lambda l: "Connectivity=%s (%s)" % (l["Connectivity"], l["ConnectivityReason"]))
        check("eth0 (dead network) is offline", eth, lambda l: l["Connectivity"] == "offline",
              lambda l: "Connectivity=%s (%s)" % (l["Connectivity"], l["ConnectivityReason"]))
        out.append(("roamd's overall state is online", manager.get("State") == "online",
                    "State=%s" % manager.get("State")))
    out.append(("the best link is wifi0",
                wifi is not None and manager.get("BestLink") == wifi["_path"],
                "BestLink=%s" % manager.get("BestLink")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    w = World(a.name)
    deadline = time.monotonic() + a.timeout
    while True:
        res = expectations(w)
        if all(ok for _, ok, _ in res):
            for desc, _, _ in res:
                print("  ok    %s" % desc)
            return 0
        if time.monotonic() >= deadline:
            for desc, ok, detail in res:
                print("  %s  %s%s" % ("ok  " if ok else "FAIL", desc,
                                      "" if ok else " (%s)" % detail))
            print("roam-demo: %d expectation(s) failed after %.0f s"
                  % (sum(not ok for _, ok, _ in res), a.timeout))
            return 1
        time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
