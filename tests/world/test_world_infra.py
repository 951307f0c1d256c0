# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the per-app tests build on, without roamd: the mobile carrier, route metrics, the
whoami servers, the VPN and its DNS, the SSH-like listener, packet captures and processes
started in cgroups of the device."""
import ipaddress
import json
import os

import pytest

from roamworld import (CG_BUS, CG_DHCPCD, CG_ROAMD, CG_SSHD, CG_VPN, METRICS, NETWORKS, ROAMD,
                       SSHD_BANNER, VPN, VPN_ONLY_ADDRS, VPN_ONLY_NAME, WHOAMI, dns_query,
                       wait_for)

WORLD = "winfra"
NEEDS_ROAMD = False

DEFAULT_LEASES = {"wifi0": "home", "cell0": "living"}


def ip_j(world, *args):
    return json.loads(world.dev("ip", "-j", *args).stdout or "[]")


def in_network(addr, family, net):
    n = NETWORKS[net]
    if family == 4:
        return addr.startswith(n["v4_prefix"]) and \
            n["v4_range"][0] <= int(addr.rsplit(".", 1)[1]) <= n["v4_range"][1]
    lo, hi = (ipaddress.IPv6Address(a) for a in n["v6_range"])
    return lo <= ipaddress.IPv6Address(addr) <= hi


def has_lease(world, ifname, net):
    """ifname has addresses of both families from net and default routes of both."""
    for fam in (4, 6):
        a = world.dev_addr(ifname, fam)
        if a is None or not in_network(a, fam, net):
            return False
        if not ip_j(world, "-%d" % fam, "route", "show", "default", "dev", ifname):
            return False
    return True


def wait_lease(world, ifname, net, timeout=30):
    wait_for(lambda: has_lease(world, ifname, net), timeout, interval=0.1,
             what="%s leases from %s" % (ifname, net))


@pytest.fixture(autouse=True)
def default_shape(world):
    yield
    world.reset()
    for ifname, net in DEFAULT_LEASES.items():
        wait_lease(world, ifname, net)


def default_metrics(world, family):
    return {r["dev"]: r.get("metric") for r in
            ip_j(world, "-%d" % family, "route", "show", "default")}


def route_dev(world, dst, *extra):
    return ip_j(world, "route", "get", dst, *extra)[0]["dev"]


def test_metrics_prefer_wifi_over_cell(world):
    for fam in (4, 6):
        assert default_metrics(world, fam) == {"wifi0": METRICS["wifi0"],
                                               "cell0": METRICS["cell0"]}
        assert route_dev(world, WHOAMI["inet"][fam]) == "wifi0"
        r = world.whoami(fam)
        assert r.ok and r.addr == world.dev_addr("wifi0", fam), r
    assert METRICS["eth0"] < METRICS["wifi0"] < METRICS["cell0"]


def test_mobile_carrier_and_ethernet_wins(world):
    """cell0 in the mobile network and eth0 in an internet-capable one: each reaches the
    internet with its own address (no NAT), and ethernet's default route wins."""
    world.move("cell0", "mobile")
    world.move("eth0", "httpsblocked")
    assert world.uplink("cell0") == ("mobile", True, 0)
    wait_lease(world, "cell0", "mobile")
    wait_lease(world, "eth0", "httpsblocked")
    for fam in (4, 6):
        mine = world.dev_addr("cell0", fam)
        for proto in ("tcp", "udp"):
            r = world.whoami(fam, proto, bind_dev="cell0")
            assert r.ok and r.addr == mine, (fam, proto, r)
        assert default_metrics(world, fam) == METRICS
        assert route_dev(world, WHOAMI["inet"][fam]) == "eth0"
        r = world.whoami(fam)
        assert r.ok and r.addr == world.dev_addr("eth0", fam), r
    # the carrier's DNS
    assert dns_query(world, "198.51.100.65", "probe.roam.test", "A") == (0, ["203.0.113.10"])
    assert dns_query(world, "2001:db8:6::1", "probe.roam.test", "AAAA") == \
        (0, ["2001:db8:ff::10"])
    assert dns_query(world, "198.51.100.65", "nothing.mobile.test", "A")[0] == 3
    lease = world.dev("dhcpcd", "-U", "cell0").stdout
    assert "domain_name=mobile.test" in lease, lease
    # ethernet gone: WiFi is preferred again
    world.carrier("eth0", False)
    wait_for(lambda: route_dev(world, WHOAMI["inet"][4]) == "wifi0", 5, what="route via wifi0")
    wait_for(lambda: route_dev(world, WHOAMI["inet"][6]) == "wifi0", 5, what="v6 via wifi0")
    changed = world.reset()
    assert "cell0: moved from mobile to living" in changed, changed
    assert "eth0: moved from httpsblocked to dead" in changed, changed


def test_whoami_tcp_udp_and_stream(world):
    for fam in (4, 6):
        wifi, cell = world.dev_addr("wifi0", fam), world.dev_addr("cell0", fam)
        for proto in ("tcp", "udp"):
            r = world.whoami(fam, proto)
            assert r.ok and r.addr == wifi and r.port > 1024, (fam, proto, r)
            # the TV in the living room: the LAN is reachable over cell0
            r = world.whoami(fam, proto, server="tv")
            assert r.ok and r.addr == cell, (fam, proto, r)
        r = world.whoami(fam, send=["hello", "second line"])
        assert r.echo == ["hello", "second line"], r
        # nothing listens on another port: refused (the reset), not left to the client's 5 s
        # timeout (which shows as error "timeout")
        r = world.dev_connect(WHOAMI["inet"][fam], 7001)
        assert r.error == "ECONNREFUSED", r
    # a long stream: ticks every 100 ms until the client goes
    with world.whoami_stream(6) as st:
        assert st.wait_connected()[0] == world.dev_addr("wifi0", 6)
        st.wait_ticks(8)
        # each tick as it comes, in order, while the stream still runs
        assert st.end is None, st.end
        ns = [n for _, n in st.ticks]
        assert ns == list(range(1, len(ns) + 1)), ns
    assert st.end is not None


def test_vpn(world):
    routes_before = {f: ip_j(world, "-%d" % f, "route", "show", "default") for f in (4, 6)}
    world.vpn_up()
    assert world.vpn_status() == "up"
    link = ip_j(world, "addr", "show", "dev", "vpn0")[0]
    assert sorted(a["local"] for a in link["addr_info"]) == \
        sorted(VPN["client"].values()), link
    # in the VPN service's cgroup, in the device's namespaces
    pid = int(world.sh("vpn", world.name, "status").stdout.split()[1])
    assert world.cgroup_procs(CG_VPN) == [pid]
    assert os.readlink("/proc/%d/ns/mnt" % pid) == \
        os.readlink("/proc/%d/ns/mnt" % world.cgroup_procs(CG_DHCPCD)[0])
    # the default routes are the same: only the inner prefixes lead into the tunnel
    assert {f: ip_j(world, "-%d" % f, "route", "show", "default") for f in (4, 6)} == \
        routes_before
    for fam in (4, 6):
        r = world.dev("ping", "-n", "-c", 1, "-W", 2, VPN["server"][fam], check=False)
        assert r.returncode == 0, r.stdout
        assert route_dev(world, VPN["server"][fam]) == "vpn0"
    # whoami through the tunnel sees the inner address; the uplink carries only the
    # transport (UDP to the endpoint, through the main table: wifi0)
    assert route_dev(world, WHOAMI["inet"][4], "oif", "vpn0") == "vpn0"
    with world.capture(["wifi0", "cell0", "eth0", "vpn0"]) as cap:
        for proto in ("tcp", "udp"):
            r = world.whoami(4, proto, bind_dev="vpn0")
            assert r.ok and r.addr == VPN["client"][4], (proto, r)
        # IPv6 has no on-link fallback for a bound socket: a route into the tunnel
        world.dev("ip", "-6", "route", "add", WHOAMI["inet"][6] + "/128", "dev", "vpn0")
        try:
            assert route_dev(world, WHOAMI["inet"][6]) == "vpn0"
            r = world.whoami(6)
            assert r.ok and r.addr == VPN["client"][6], r
        finally:
            world.dev("ip", "-6", "route", "del", WHOAMI["inet"][6] + "/128", "dev", "vpn0")
    flows = [p for p in cap.packets if p.dport == 7000 or p.sport == 7000]
    assert {p.iface for p in flows} == {"vpn0"}, flows
    assert {(p.proto, p.src) for p in flows if p.direction == "out"} == \
        {("tcp", VPN["client"][4]), ("udp", VPN["client"][4]), ("tcp", VPN["client"][6])}
    transport = [p for p in cap.packets if p.iface != "vpn0" and p.dst == VPN["endpoint"][4]]
    assert transport and {(p.iface, p.proto, p.dport) for p in transport} == \
        {("wifi0", "udp", VPN["port"])}, transport
    # the VPN's DNS: the only one that knows vpn-only.test, reachable only through vpn0
    for fam, qtype in ((4, "A"), (6, "AAAA")):
        for server in VPN["dns"].values():
            assert dns_query(world, server, VPN_ONLY_NAME, qtype) == \
                (0, [VPN_ONLY_ADDRS[fam]]), (server, qtype)
    assert dns_query(world, "192.0.2.1", VPN_ONLY_NAME, "A")[0] == 3
    assert VPN_ONLY_NAME in world.path("vpn-dnsmasq.log").read_text()
    # malformed frames are dropped; the tunnel still works
    world.dev("/usr/bin/python3", "-c",
              "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
              "[s.sendto(b, ('%s', %d)) for b in (b'junk', b'RW\\x01\\x01\\x00\\x10' + bytes(16))]"
              % (VPN["endpoint"][4], VPN["port"]))
    wait_for(lambda: "dropped" in world.path("vpn-server.log").read_text(), 5,
             what="the server dropped the malformed frames")
    assert world.whoami(4, "udp", bind_dev="vpn0").ok
    # down: vpn0 goes with the client
    world.vpn_down()
    assert world.vpn_status() == "down"
    assert "vpn0" not in world.kernel_links()
    assert world.cgroup_procs(CG_VPN) == []
    # the transport over IPv6
    world.vpn_up(6)
    r = world.whoami(4, "udp", bind_dev="vpn0")
    assert r.ok and r.addr == VPN["client"][4], r
    assert "client 203.0.113.66 at %s" % world.dev_addr("wifi0", 6) in \
        world.path("vpn-server.log").read_text()
    assert world.reset()[0] == "vpn: down"
    assert "vpn0" not in world.kernel_links()


def test_roamd_config_knows_the_vpn(world):
    conf = world.dev("cat", "/etc/roam/roamd.conf").stdout
    assert "vpn0=vpn" in conf
    assert "[LinkDNS]\nvpn0=%s %s\n" % (VPN["dns"][4], VPN["dns"][6]) in conf
    if not os.access(ROAMD, os.X_OK):
        pytest.skip("no roamd to check the file with")
    r = world.dev(ROAMD, "--check-config", "--config", "/etc/roam/roamd.conf", check=False)
    assert r.returncode == 0, r.stderr


def test_sshd_from_the_home_router(world):
    world.sshd_start()
    procs = world.cgroup_procs(CG_SSHD)
    assert len(procs) == 1
    for fam in (4, 6):
        r = world.ssh_check(fam)
        assert r.ok and r.reply == SSHD_BANNER, (fam, r)
    world.sshd_stop()
    assert world.cgroup_procs(CG_SSHD) == []
    r = world.ssh_check(4)
    assert not r.ok and r.error == "ECONNREFUSED", r


def test_capture_sees_the_flow_on_its_link_only(world):
    with world.capture(["wifi0", "eth0"]) as cap:
        tcp = world.whoami(6)
        udp = world.whoami(4, "udp")
    assert tcp.ok and udp.ok
    wifi4, wifi6 = world.dev_addr("wifi0", 4), world.dev_addr("wifi0", 6)
    got = set(cap.packets)
    assert ("wifi0", "out", wifi4, WHOAMI["inet"][4], "udp", udp.port, 7000) in got
    assert ("wifi0", "in", WHOAMI["inet"][4], wifi4, "udp", 7000, udp.port) in got
    assert ("wifi0", "out", wifi6, WHOAMI["inet"][6], "tcp", tcp.port, 7000) in got
    assert ("wifi0", "in", WHOAMI["inet"][6], wifi6, "tcp", 7000, tcp.port) in got
    # eth0 (the dead network) carries at most dhcpcd's own solicitations, none of the flows
    assert not [p for p in cap.packets if p.iface == "eth0" and 7000 in (p.sport, p.dport)]
    assert {p.iface for p in cap.packets} <= {"wifi0", "eth0"}


def test_processes_in_cgroups(world):
    p = world.dev_popen(["sleep", "60"], cgroup="roam-test/x")
    try:
        wait_for(lambda: world.cgroup_procs("roam-test/x") == [p.pid], 5, what="in the cgroup")
        with open("/proc/%d/cgroup" % p.pid) as f:
            assert "0::/roam-world-%s/roam-test/x\n" % world.name in f.read()
    finally:
        p.kill()
        p.wait()
    # inside the device: its namespaces, its view of the cgroup
    r = world.dev_run(["sh", "-c", "cat /proc/self/cgroup; hostname; ls /sys/class/net"],
                      cgroup="roam-test/y")
    assert "0::/roam-world-%s/roam-test/y" % world.name in r.stdout.splitlines()
    assert "roam-%s" % world.name.replace("_", "-") in r.stdout.split()
    assert "wifi0" in r.stdout.split()
    assert world.dev("test", "-d", "/sys/fs/cgroup/roam-world-%s/roam-test/y" % world.name,
                     check=False).returncode == 0
    # a client in a cgroup
    assert world.whoami(4, cgroup="roam-test/z").ok
    with pytest.raises(ValueError):
        world.dev_popen(["true"], cgroup="../escape")
    # the device's services
    assert world.cgroup_procs(CG_DHCPCD), "dhcpcd not in %s" % CG_DHCPCD
    assert world.cgroup_procs(CG_BUS), "dbus-daemon not in %s" % CG_BUS
    for d in ("roam-test/x", "roam-test/y", "roam-test/z", "roam-test"):
        wait_for(lambda: _rmdir(world.cgroup / d), 5, what="rmdir %s" % d)


def _rmdir(path):
    path.rmdir()  # EBUSY while the last process is still on its way out
    return True


def test_roamd_in_its_service_cgroup(world):
    if not os.access(ROAMD, os.X_OK):
        pytest.skip("no roamd binary")
    pid = world.roamd_start()
    try:
        assert world.cgroup_procs(CG_ROAMD) == [pid]
    finally:
        world.roamd_stop()
