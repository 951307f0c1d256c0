# SPDX-License-Identifier: LGPL-2.1-or-later
"""The world itself, without roamd: what each network hands out, what is reachable from
where, isolation from the host, and clean teardown."""
import hashlib
import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from roamworld import BASE, NETWORKS, WORLD_SH, World, dns_query, wait_for

WORLD = "wworld"
NEEDS_ROAMD = False


def _digest(path):
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


# The host's state, read when this module is imported (before any world of it exists).
HOST_RESOLV = _digest("/etc/resolv.conf")
HOST_LINKS = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
HOST_ADDRS = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True).stdout
HOST_ROUTES = subprocess.run(["ip", "route"], capture_output=True, text=True).stdout


def ip_j(world, *args):
    return json.loads(world.dev("ip", "-j", *args).stdout)


def global_addrs(world, ifname, family):
    out = []
    for l in ip_j(world, "-%d" % family, "addr", "show", "dev", ifname, "scope", "global"):
        out += [a["local"] for a in l.get("addr_info", []) if "local" in a]
    return out


def default_gw(world, ifname, family):
    return [r.get("gateway") for r in
            ip_j(world, "-%d" % family, "route", "show", "default", "dev", ifname)]


@pytest.mark.parametrize("ifname,net", [("wifi0", "home"), ("cell0", "living")])
def test_dhcp_dual_stack(world, ifname, net):
    n = NETWORKS[net]
    v4 = global_addrs(world, ifname, 4)
    v6 = global_addrs(world, ifname, 6)
    assert len(v4) == 1 and v4[0].startswith(n["v4_prefix"]), v4
    assert n["v4_range"][0] <= int(v4[0].rsplit(".", 1)[1]) <= n["v4_range"][1]
    assert v6, "no DHCPv6 address on %s" % ifname
    assert default_gw(world, ifname, 4) == [n["v4_gateway"]]
    gw6 = default_gw(world, ifname, 6)
    assert len(gw6) == 1 and gw6[0].startswith("fe80:"), gw6
    # the leases are where roamd will read them, inside the device's private /var/lib/dhcpcd
    lease_dir = world.path("var-lib-dhcpcd")
    assert (lease_dir / ("%s.lease" % ifname)).exists()
    assert (lease_dir / ("%s.lease6" % ifname)).exists()


def test_dead_network_gives_nothing(world):
    assert global_addrs(world, "eth0", 4) == []
    assert global_addrs(world, "eth0", 6) == []
    assert default_gw(world, "eth0", 4) == [] and default_gw(world, "eth0", 6) == []
    carrier = ip_j(world, "link", "show", "dev", "eth0")[0]
    assert "LOWER_UP" in carrier["flags"], "the dead network must still give carrier"


def test_private_resolv_conf(world):
    text = world.dev("cat", "/etc/resolv.conf").stdout
    assert "nameserver 192.0.2.1" in text and "nameserver 2001:db8:1::1" in text
    assert "home.test" in text
    assert _digest("/etc/resolv.conf") == HOST_RESOLV


def test_home_reaches_the_internet(world):
    for url in ("http://203.0.113.10/roam-probe", "http://[2001:db8:ff::10]/roam-probe",
                "http://probe.roam.test/roam-probe"):
        r = world.dev("curl", "-sS", "-m", "5", "--interface", "wifi0", url)
        assert r.stdout == "roam-online\n", url
    r = world.dev("curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "-m", "5",
                  "--interface", "wifi0", "http://203.0.113.10/other")
    assert r.stdout == "404"


def test_dns_names(world):
    r = world.dev("getent", "ahosts", "probe.roam.test")
    assert "203.0.113.10" in r.stdout and "2001:db8:ff::10" in r.stdout
    assert dns_query(world, "192.0.2.65", "tv.living.test", "A") == (0, ["192.0.2.70"])
    assert dns_query(world, "2001:db8:2::1", "tv.living.test", "AAAA") == (0, ["2001:db8:2::70"])
    assert dns_query(world, "2001:db8:1::1", "probe.roam.test", "AAAA") == (0, ["2001:db8:ff::10"])
    assert dns_query(world, "192.0.2.1", "nothing.home.test", "A") == (3, [])


def test_living_room_is_local_only(world):
    for url in ("http://192.0.2.70/", "http://[2001:db8:2::70]/"):
        r = world.dev("curl", "-sS", "-m", "5", "--interface", "cell0", url)
        assert r.stdout == "roam-tv\n", url
    # the internet is unreachable from the living room: refused at once (ICMP unreachable),
    # not after a timeout
    for url in ("http://203.0.113.10/roam-probe", "http://[2001:db8:ff::10]/roam-probe"):
        r = world.dev("curl", "-sS", "-m", "8", "--interface", "cell0", url, check=False)
        assert r.returncode == 7, (url, r.returncode, r.stderr)


def test_device_mount_namespace(world):
    # sysfs shows the device's links, not the host's
    names = set(world.dev("ls", "/sys/class/net").stdout.split())
    assert names == {"lo", "wifi0", "cell0", "eth0"}
    # cgroup2 is mounted below the new /sys and shows the world's cgroups
    mi = world.dev("cat", "/proc/self/mountinfo").stdout
    cg = [l.split()[4] for l in mi.splitlines() if " - cgroup2 " in l]
    assert cg == ["/sys/fs/cgroup"], cg
    assert world.dev("test", "-d", "/sys/fs/cgroup/roam-world-%s" % world.name,
                     check=False).returncode == 0
    # private /etc/roam, /var/lib/roam, /run
    assert "wifi0=wifi" in world.dev("cat", "/etc/roam/roamd.conf").stdout
    world.dev("touch", "/var/lib/roam/probe-file", "/etc/roam/probe-file", "/run/probe-file")
    assert world.path("var-lib-roam", "probe-file").exists()
    assert world.path("etc-roam", "probe-file").exists()
    assert not os.path.exists("/var/lib/roam") and not os.path.exists("/etc/roam")
    assert not os.path.exists("/run/probe-file")
    # the bus lives at the same path inside and outside
    assert world.dev("test", "-S", "/run/roam-world/%s/bus" % world.name,
                     check=False).returncode == 0


def test_move_and_carrier_without_roamd(world):
    world.move("eth0", "living")
    wait_for(lambda: global_addrs(world, "eth0", 4) and global_addrs(world, "eth0", 6), 20,
             what="eth0 leases in the living room")
    assert global_addrs(world, "eth0", 4)[0].startswith("192.0.2.")
    world.carrier("eth0", False)
    wait_for(lambda: "NO-CARRIER" in ip_j(world, "link", "show", "dev", "eth0")[0]["flags"],
             2, what="eth0 no carrier")
    world.carrier("eth0", True)
    world.move("eth0", "dead")
    wait_for(lambda: not global_addrs(world, "eth0", 4), 20, what="eth0 lease dropped")


def rtts(world, ifname, target, count=2):
    r = world.dev("ping", "-n", "-c", count, "-i", "0.2", "-W", "2", "-I", ifname, target,
                  check=False)
    return [float(x) for x in re.findall(r"time=([0-9.]+) ms", r.stdout)]


def test_delay_move_and_carrier(world):
    """A delay line stays with its uplink through moves and carrier cuts, and goes again."""
    assert world.uplink("eth0") == ("dead", True, 0)
    world.delay("eth0", 60)
    assert world.uplink("eth0") == ("dead", True, 60)
    world.move("eth0", "cafe")
    assert world.uplink("eth0") == ("cafe", True, 60)
    wait_for(lambda: global_addrs(world, "eth0", 4) and global_addrs(world, "eth0", 6), 20,
             what="eth0 leases in the cafe through the delay line")
    slow = rtts(world, "eth0", "192.0.2.129")
    assert slow and min(slow) >= 120, slow
    # the cafe's DHCP announces its RFC 8908 API in both families
    lease = world.dev("dhcpcd", "-U", "eth0").stdout
    assert "captive_portal_uri=https://cafe.test/capport" in lease, lease
    wait_for(lambda: "dhcp6_captive_portal_uri=https://cafe.test/capport" in
             world.dev("dhcpcd", "-6", "-U", "eth0").stdout, 10, what="DHCPv6 option 103")
    world.carrier("eth0", False)
    assert world.uplink("eth0") == ("cafe", False, 60)
    wait_for(lambda: "NO-CARRIER" in ip_j(world, "link", "show", "dev", "eth0")[0]["flags"],
             2, what="eth0 no carrier behind the delay line")
    world.carrier("eth0", True)
    world.delay("eth0", 0)
    assert world.uplink("eth0") == ("cafe", True, 0)
    wait_for(lambda: (lambda r: r and min(r) < 120)(rtts(world, "eth0", "192.0.2.129")), 20,
             what="the cafe without delay")
    assert world.exec("delay", "ip", "-o", "link").stdout.count("\n") == 1  # lo only
    world.move("eth0", "dead")
    wait_for(lambda: not global_addrs(world, "eth0", 4), 20, what="eth0 lease dropped")
    assert world.reset() == []


def test_add_del_link(world):
    world.add_link("extra0")
    assert "extra0" in set(world.dev("ls", "/sys/class/net").stdout.split())
    world.del_link("extra0")
    assert "extra0" not in set(world.dev("ls", "/sys/class/net").stdout.split())


def _leftovers(name):
    netns = [n for n in os.listdir("/run/netns") if n.startswith("roam-%s-" % name)] \
        if os.path.isdir("/run/netns") else []
    return netns, (BASE / name).exists()


def test_two_worlds_and_clean_teardown(world):
    other = World(world.name[:15] + "2")
    try:
        other.up()
        a = set(global_addrs(world, "wifi0", 4))
        b = set(global_addrs(other, "wifi0", 4))
        assert a and b
        # separate device namespaces with their own bus and leases
        assert other.path("bus").exists() and world.path("bus").exists()
        assert other.dev("ls", "/var/lib/dhcpcd").stdout != ""
    finally:
        other.down()
    assert _leftovers(other.name) == ([], False)
    other.down()  # idempotent
    # the first world still works
    r = world.dev("curl", "-sS", "-m", "5", "--interface", "wifi0",
                  "http://203.0.113.10/roam-probe")
    assert r.stdout == "roam-online\n"


def test_half_built_world_is_removed(world):
    name = world.name[:15] + "h"
    if _leftovers(name) != ([], False):  # an earlier run of this test failed half way
        subprocess.run([str(WORLD_SH), "down", name], capture_output=True, timeout=120)
    subprocess.run(["ip", "netns", "add", "roam-%s-home" % name], check=True)
    subprocess.run(["ip", "netns", "add", "roam-%s-dev" % name], check=True)
    (BASE / name).mkdir(parents=True, exist_ok=True)
    # a process left running in one of its namespaces
    p = subprocess.Popen(["nsenter", "--net=/run/netns/roam-%s-dev" % name, "sleep", "600"])
    try:
        # as long as World.down allows: `down` takes over 20 s on a loaded machine
        r = subprocess.run([str(WORLD_SH), "down", name], capture_output=True, text=True,
                           timeout=120)
        assert r.returncode == 0, r.stderr
        assert p.wait(10) == -9
    finally:
        if p.poll() is None:
            p.kill()
    assert _leftovers(name) == ([], False)


def test_interrupted_up_cleans_up(world):
    name = world.name[:15] + "i"
    # interrupt `up` part way: its trap tears down what it built
    p = subprocess.Popen([str(WORLD_SH), "up", name], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    wait_for(lambda: os.path.exists("/run/netns/roam-%s-home" % name) or p.poll() is not None,
             30, interval=0.01, what="up started")
    p.terminate()
    p.wait(120)  # its trap runs `down`: as long as World.down allows
    err = p.stderr.read()
    assert _leftovers(name) == ([], False), (p.returncode, err)


def test_host_untouched(world):
    assert _digest("/etc/resolv.conf") == HOST_RESOLV
    assert subprocess.run(["ip", "-o", "addr"], capture_output=True,
                          text=True).stdout == HOST_ADDRS
    assert subprocess.run(["ip", "route"], capture_output=True, text=True).stdout == HOST_ROUTES
    assert subprocess.run(["ip", "-o", "link"], capture_output=True,
                          text=True).stdout == HOST_LINKS
