# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd's view of the device's links, and how fast it follows the kernel."""
import time

import pytest

from roamworld import (NETWORKS, UPLINKS, WAIT, Monitor, addrs, gateways, lease_matches,
                       wait_for)

WORLD = "wlinks"

# "Reflected on D-Bus within a second" is counted from the moment the kernel change is
# done (world.sh returned).
# Functional waits (woken by roamd's signals): how fast is a question for bench/.
WITHIN = WAIT


def test_uplinks_and_bearers(w):
    links = w.links()
    assert set(links) == set(UPLINKS)
    expect = {"wifi0": "wifi", "cell0": "cellular", "eth0": "ethernet"}
    for name, bearer in expect.items():
        l = links[name]
        assert l["Bearer"] == bearer, name
        assert l["BearerSource"] == "config", name
        assert l["Kind"] == "veth", name
        assert l["AdminUp"] is True and l["Carrier"] is True and l["OperState"] == "up"
        assert l["_path"] == "/org/roam1/link/%d" % l["Index"]
        assert len(l["HardwareAddress"]) == 17 and l["MTU"] == 1500
    kernel = w.kernel_links()
    assert {n: l["Index"] for n, l in links.items()} == kernel


def test_home_lease(w):
    l = w.link("wifi0")
    home = NETWORKS["home"]
    assert l["State"] == "routable"
    assert lease_matches(l, "home"), l
    assert addrs(l, 4)[0].startswith("192.0.2.")
    assert addrs(l, 6) and all(a.startswith("2001:db8:1::") for a in addrs(l, 6))
    assert addrs(l, 6, "link"), "link-local address missing"
    assert gateways(l, 4) == ["192.0.2.1"]
    assert len(gateways(l, 6)) == 1 and gateways(l, 6)[0].startswith("fe80:")
    assert sorted(map(tuple, l["DNS"])) == sorted(home["dns"])
    assert l["DNSSource"] == "dhcpcd"
    assert "home.test" in l["Domains"]
    assert l["CaptivePortalURL"] == ""


def test_living_room_and_dead_network(w):
    c = w.link("cell0")
    assert lease_matches(c, "living"), c
    assert sorted(map(tuple, c["DNS"])) == [(4, "192.0.2.65"), (6, "2001:db8:2::1")]
    assert "living.test" in c["Domains"]
    e = w.link("eth0")
    assert addrs(e, 4) == [] and addrs(e, 6) == []
    assert e["Gateways"] == [] and e["DNS"] == []
    assert e["DNSSource"] == "none"
    # the kernel gives the link an IPv6 link-local address, nothing usable
    assert e["State"] == "link-local"


def test_manager(w):
    m = w.manager()
    if w.probes:
        # the best link's connectivity (docs/dbus-api.md)
        w.wait(lambda: w.manager()["State"] == "online", what="Manager.State online")
    else:
        assert m["State"] == "routable"
    assert m["BestLink"] == w.link("wifi0")["_path"]
    assert m["ConfigFile"] == "/etc/roam/roamd.conf"
    assert m["Version"]


def test_add_and_remove_link(w):
    with w.monitor() as mon:
        w.add_link("extra0")
        t0 = time.monotonic()
        l = w.wait_link("extra0", timeout=WITHIN)
        assert l["Index"] == w.kernel_links()["extra0"]
        t, msg = mon.wait_signal(lambda m: m.get("member") == "InterfacesAdded", WITHIN,
                                 since=t0 - 0.5)
        assert msg["payload"]["data"][0] == l["_path"]
        w.del_link("extra0")
        t1 = time.monotonic()
        w.wait_no_link("extra0", timeout=WITHIN)
        mon.wait_signal(lambda m: m.get("member") == "InterfacesRemoved"
                        and m["payload"]["data"][0] == l["_path"], WITHIN, since=t1 - 0.5)


def test_carrier_cut(w):
    wifi = w.link("wifi0")
    cell = w.link("cell0")
    with w.monitor() as mon:
        w.carrier("wifi0", False)
        t0 = time.monotonic()
        w.wait_link("wifi0", lambda l: not l["Carrier"] and l["State"] == "no-carrier",
                    timeout=WITHIN, what="wifi0 no carrier")
        mon.wait_signal(lambda m: (Monitor.properties_changed(m, wifi["_path"]) or {})
                        .get("Carrier") is False, WITHIN, since=t0 - 0.5)
        # the best link moves to the living room
        w.wait(lambda: w.manager()["BestLink"] == cell["_path"], WITHIN,
                 what="BestLink -> cell0")
        w.carrier("wifi0", True)
        w.wait_link("wifi0", lambda l: l["Carrier"], timeout=WITHIN, what="wifi0 carrier back")
        w.wait_link("wifi0", lambda l: lease_matches(l, "home"), timeout=20,
                    what="wifi0 re-leased")
        w.wait(lambda: w.manager()["BestLink"] == wifi["_path"], what="BestLink -> wifi0")


def test_other_links_stay_steady(w):
    """A change on one link must not disturb another link's properties."""
    paths = {n: l["_path"] for n, l in w.links().items()}
    with w.monitor() as mon:
        t0 = time.monotonic()
        w.carrier("eth0", False)
        w.wait_link("eth0", lambda l: l["State"] == "no-carrier", timeout=WITHIN)
        w.carrier("eth0", True)
        w.wait_link("eth0", lambda l: l["Carrier"] and l["State"] == "link-local",
                    timeout=WITHIN)
        w.add_link("extra1")
        w.wait_link("extra1", timeout=WITHIN)
        w.del_link("extra1")
        w.wait_no_link("extra1", timeout=WITHIN)
        # a link whose last verdict was not online re-probes on its own schedule (cell0's
        # IPv6 has a gateway but no way out): the probe's timestamps may move, nothing else
        timing = {"LastProbe", "ProbeDuration"}
        disturbed = [(m["path"], changed)
                     for _, m in mon.signals(t0)
                     if m.get("path") in (paths["wifi0"], paths["cell0"])
                     for changed in [{k: v for k, v in
                                      (Monitor.properties_changed(m) or {}).items()
                                      if k not in timing}]
                     if changed]
    assert disturbed == [], "wifi0/cell0 changed although only eth0/extra1 did: %r" % disturbed
    assert lease_matches(w.link("wifi0"), "home") and lease_matches(w.link("cell0"), "living")


def test_move_to_living_room(w):
    pid = w.roamd_pid()
    path = w.link("wifi0")["_path"]
    with w.monitor() as mon:
        w.move("wifi0", "living")
        t0 = time.monotonic()
        # the carrier is gone only for a few ms while the peer changes namespace: look for
        # the signal rather than polling
        mon.wait_signal(lambda m: (Monitor.properties_changed(m, path) or {})
                        .get("Carrier") is False, WITHIN, since=t0 - 1)
    l = w.wait_link("wifi0", lambda l: lease_matches(l, "living"), timeout=25,
                    what="wifi0 with the living room's lease")
    assert not any(a.startswith("2001:db8:1:") for a in addrs(l, 6))
    assert gateways(l, 4) == ["192.0.2.65"]
    assert "home.test" not in l["Domains"]
    assert w.roamd_pid() == pid, "roamd restarted"
    w.move("wifi0", "home")
    w.wait_link("wifi0", lambda l: lease_matches(l, "home"), timeout=25,
                what="wifi0 back home")


def test_rename_keeps_object(w):
    w.add_link("ren0")
    before = w.wait_link("ren0", timeout=WITHIN)
    w.dev("ip", "link", "set", "dev", "ren0", "down")
    w.dev("ip", "link", "set", "dev", "ren0", "name", "ren1")
    w.dev("ip", "link", "set", "dev", "ren1", "up")
    after = w.wait_link("ren1", timeout=WITHIN, what="ren0 renamed to ren1")
    assert after["_path"] == before["_path"]
    assert after["Index"] == before["Index"]
    assert "ren0" not in w.links()
    w.del_link("ren1")
    w.wait_no_link("ren1", timeout=WITHIN)


def test_flood_of_links(w):
    n = 500
    # 500 veth pairs (1,000 links), every other pair set up (which adds IPv6 link
    # notifications to the stream), then all deleted
    add = "".join("link add fl%d type veth peer name fp%d\n" % (i, i) for i in range(n))
    add += "".join("link set fl%d up\nlink set fp%d up\n" % (i, i) for i in range(0, n, 2))
    delete = "".join("link del fl%d\n" % i for i in range(n))
    w.dev("ip", "-batch", "-", input=add, timeout=300)
    kernel = w.kernel_links()
    assert len(kernel) == 2 * n + len(UPLINKS)

    def same():
        ls = w.links()
        return {k: v["Index"] for k, v in ls.items()} == kernel

    wait_for(same, 30, interval=0.5, what="D-Bus link list == kernel's after adding")
    w.dev("ip", "-batch", "-", input=delete, timeout=300)
    kernel = w.kernel_links()
    assert set(kernel) == set(UPLINKS)
    wait_for(same, 30, interval=0.5, what="D-Bus link list == kernel's after removing")
    # adds and deletes interleaved in one burst, no pause
    burst = "".join("link add fl%d type veth peer name fp%d\nlink set fl%d up\n"
                    "link del fl%d\n" % (i, i, i, i) for i in range(n // 2))
    burst += "".join("link add fl%d type veth peer name fp%d\n" % (i, i) for i in range(5))
    w.dev("ip", "-batch", "-", input=burst, timeout=300)
    kernel = w.kernel_links()
    assert len(kernel) == len(UPLINKS) + 10
    wait_for(same, 30, interval=0.5, what="D-Bus link list == kernel's after a burst")
    assert w.roamd_running()
    # and it still follows changes promptly
    w.carrier("eth0", False)
    w.wait_link("eth0", lambda l: l["State"] == "no-carrier", timeout=WITHIN)
    w.carrier("eth0", True)
    # The flood overflows dhcpcd's route socket too, and dhcpcd 9.4.1 then drops its IPv6
    # default routes: give the next test a fresh dhcpcd.
    w.dhcpcd_restart()


def connectivity(w, name, verdict, reason=None, timeout=20, what=None):
    def ok(l):
        return l["Connectivity"] == verdict and (reason is None
                                                 or l["ConnectivityReason"] == reason)
    return w.wait_link(name, ok, timeout=timeout,
                       what=what or "%s %s/%s" % (name, verdict, reason))


def test_connectivity(w):
    if not w.probes:
        pytest.skip("this roamd has no connectivity probes")
    l = connectivity(w, "wifi0", "online", "ok")
    assert (l["Connectivity4"], l["Connectivity6"]) == ("online", "online")
    assert l["PortalURL"] == ""
    # the living room: DNS answers, the check server is unreachable (ICMP), the gateway
    # answers, in both families
    w.wait_link("cell0", lambda l: (l["Connectivity4"], l["ConnectivityReason4"],
                                    l["Connectivity6"], l["ConnectivityReason6"])
                == ("local", "http-failed", "local", "http-failed"), timeout=20,
                what="cell0 local/http-failed in both families")
    l = connectivity(w, "eth0", "offline")
    assert l["ConnectivityReason6"] == "link-local-only"
    assert l["ConnectivityReason4"] == "no-address"


def test_connectivity_follows_the_world(w):
    if not w.probes:
        pytest.skip("this roamd has no connectivity probes")
    connectivity(w, "wifi0", "online")
    w.carrier("wifi0", False)
    # a carrier cut shows as offline at once (docs/connectivity.md)
    connectivity(w, "wifi0", "offline", "no-carrier", timeout=WITHIN)
    w.wait(lambda: w.manager()["State"] == "local", WITHIN, what="Manager.State local")
    w.carrier("wifi0", True)
    connectivity(w, "wifi0", "online", timeout=20)
    # the internet goes away behind the home router: the next round says local
    w.internet(False)
    try:
        w.call(w.link("wifi0")["_path"], "org.roam1.Link", "Reprobe")
        connectivity(w, "wifi0", "local", timeout=20)
    finally:
        w.internet(True)
    w.call(w.link("wifi0")["_path"], "org.roam1.Link", "Reprobe")
    connectivity(w, "wifi0", "online", timeout=20)


def test_one_properties_changed_per_link_per_sync(w):
    """Issue 41 §2: a carrier loss is one sync for roamd; what it changes on the link (Carrier,
    OperState, State, the verdicts of both families and the overall one) goes out in ONE
    PropertiesChanged, as docs/ARCHITECTURE.md promises, not one per part (it was up to 5)."""
    path = w.links()["cell0"]["_path"]
    with w.monitor() as mon:
        w.carrier("cell0", False)
        w.wait_link("cell0", lambda l: not l["Carrier"] and l["State"] == "no-carrier" and
                    l["Connectivity"] == "offline", timeout=10)
        changes = [c for c in (Monitor.properties_changed(m, path) for _, m in mon.signals())
                   if c]
    print("PropertiesChanged of cell0:", [sorted(c) for c in changes])
    with_carrier = [c for c in changes if "Carrier" in c]
    assert len(with_carrier) == 1, changes
    first = with_carrier[0]
    assert {"Carrier", "OperState", "State", "Connectivity4", "Connectivity6",
            "Connectivity"} <= set(first), changes
    assert first["State"] == "no-carrier" and first["Connectivity"] == "offline", first
    # nothing of it came again in a signal of its own
    assert not [c for c in changes if c is not first and
                {"State", "Connectivity4", "Connectivity6"} & set(c)], changes


def link_signals(mon):
    """The PropertiesChanged signals of Link objects the monitor saw."""
    return [(m["path"], Monitor.properties_changed(m)) for _, m in mon.signals()
            if m.get("member") == "PropertiesChanged" and
            m.get("path", "").startswith("/org/roam1/link/")]


def test_renewal_that_changes_nothing_costs_nothing(w):
    """Issue 42: a DHCP renewal whose lease says what the last one said is read once (one
    parse of the new file, by the links' facts stage) and changes nothing: no reconcile pass
    (counted in roamd's debug log) and no PropertiesChanged of any Link (on the bus)."""
    w.wait_default_state()
    log_at = len(w.roamd_log())
    with w.monitor() as mon:
        w.dev("dhcpcd", "-N", "wifi0")  # renew (DHCPv4, and DHCPv6: its file too)
        wait_for(lambda: "wifi0.lease: lease file read and parsed" in w.roamd_log()[log_at:],
                 WAIT, what="roamd reading wifi0's renewed lease")
        # two round trips: roamd ran the sync and whatever pass it scheduled before answering
        w.manager()
        w.manager()
        signals = link_signals(mon)
    log = w.roamd_log()[log_at:]
    # the DHCPv4 file dhcpcd wrote anew parsed once, by the one lease cache (not once per
    # feature; dhcpcd may write the DHCPv6 one twice: each version is parsed once)
    assert log.count("/wifi0.lease: lease file read and parsed") == 1, log
    assert "Reconciler: pass " not in log, log
    assert signals == [], signals


def test_carrier_loss_one_properties_changed_per_link(w):
    """Issue 42: a carrier loss is one sync; what it changes on the Link, and what the
    reconcile pass it asked for puts in force (the firewall's Location, which went out in a
    signal of its own after the pass), goes out in ONE PropertiesChanged. (dhcpcd's reaction,
    dropping the lease's addresses a moment later, is a sync of its own.)"""
    w.wait_default_state()
    w.wait_link("cell0", lambda l: l["Location"] != "" and
                "checking" not in (l["Connectivity4"], l["Connectivity6"]), timeout=WAIT,
                what="cell0 settled, a location in force")
    path = w.links()["cell0"]["_path"]
    log_at = len(w.roamd_log())
    try:
        with w.monitor() as mon:
            w.carrier("cell0", False)
            w.wait_link("cell0", lambda l: not l["Carrier"] and l["State"] == "no-carrier" and
                        l["Connectivity"] == "offline" and l["Location"] == "", timeout=WAIT)
            wait_for(lambda: "Reconciler: pass " in w.roamd_log()[log_at:], WAIT,
                     what="the carrier loss's reconcile pass")
            w.manager()
            w.manager()
            signals = [c for p, c in link_signals(mon) if p == path]
    finally:
        w.carrier("cell0", True)
    print("cell0's signals:", signals)
    first = [i for i, c in enumerate(signals) if "Carrier" in c]
    assert len(first) == 1, signals
    loss = signals[first[0]]
    assert {"Carrier", "State", "Connectivity", "Connectivity4", "Connectivity6", "NetworkId",
            "Location", "LocationWanted"} <= set(loss), loss
    assert loss["Location"] == "" and loss["State"] == "no-carrier", loss
    # nothing of it came again in a signal of its own
    assert not [c for c in signals[first[0] + 1:] if {
        "State", "Connectivity", "Connectivity4", "Connectivity6", "NetworkId", "Location",
        "LocationWanted"} & set(c)], signals
