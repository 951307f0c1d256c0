# SPDX-License-Identifier: LGPL-2.1-or-later
"""The personal firewall (issue 12, docs/firewall.md) in the test world: locations follow the
network, ports open per location and per app, swaps that never cut an established session,
coexistence with other tables, malformed files refused, unprivileged callers refused.
Outcomes are what a peer on the LAN gets: a connection answered, or nothing."""
import json
import os
import select
import subprocess
import time

import pytest

from roamworld import (MANAGER_IFACE, MANAGER_PATH, REPO, WHOAMI, WHOAMI_PORT, WORLD_SH,
                       DBusCallError, Monitor, wait_for)

WORLD = "tfw"
PORT = 8022          # opened at home by the test profile
APP_PORT = 7100      # opened at home for app org.test.A only
OTHER_PORT = 7101
LEAK_PORT = 8023     # UDP, opened at home: the leak test's flood
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
WHOAMI_PY = str(REPO / "tests" / "servers" / "whoami.py")
NOBODY = 65534
DROPPED = ("timeout", "ETIMEDOUT")  # a drop: no answer at all

HOME_PROFILE = """# test profile: a port for the LAN at home, one for app A
[Profile]
Location=home

[Rule]
Direction=in
Action=accept
Protocol=tcp
Port=%d

[Rule]
Protocol=tcp
Port=%d
App=org.test.A

[Rule]
Protocol=udp
Port=%d
""" % (PORT, APP_PORT, LEAK_PORT)

# a session from the home router to the device: greeting, then one echo per line sent
SESSION_PY = r"""
import socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
f = s.makefile("rw")
print("greeting " + f.readline().strip(), flush=True)
for line in sys.stdin:
    try:
        f.write(line)
        f.flush()
        got = f.readline().strip()
        print(("echo " + got) if got else "closed", flush=True)
    except OSError as e:
        print("error %s" % e, flush=True)
"""

# The leak test's peer, driven line by line: "batch N" sends N UDP datagrams and TCP SYNs
# (alternating) to the device, each from a new source port (a new flow, judged by the rules in
# force, never by conntrack), then an ICMP echo, and answers "done PORT..." once the echo's
# reply came: the device handles what arrives in order, so every flow of the batch has met its
# input hook by then (no clock involved). "end" sends one last UDP datagram to the open port
# and, once whoami answered it (whoami answers in order: every earlier answer came first),
# prints the ports that were answered (a UDP answer from whoami, a SYN-ACK) as JSON.
FLOOD_PY = r"""
import json, os, select, socket, struct, sys, time
dst, dport, sport_tcp, src = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
u = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
t = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_TCP)
i = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
for s in (u, t, i):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setblocking(False)
answered, echoed = set(), set()
port, payload, ident = 10000, b"leak\n", os.getpid() & 0xFFFF

def csum(data):
    if len(data) % 2:
        data += b"\0"
    n = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    n = (n >> 16) + (n & 0xFFFF)
    n += n >> 16
    return ~n & 0xFFFF

def syn(sp):
    hdr = struct.pack("!HHIIBBHHH", sp, sport_tcp, 1, 0, 5 << 4, 0x02, 65535, 0, 0)
    pseudo = socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 6, len(hdr))
    return hdr[:16] + struct.pack("!H", csum(pseudo + hdr)) + hdr[18:]

def udp(sp):
    u.sendto(struct.pack("!HHHH", sp, dport, 8 + len(payload), 0) + payload, (dst, 0))

def drain():
    for s, want in ((u, dport), (t, sport_tcp)):
        while True:
            try:
                data, addr = s.recvfrom(65535)
            except BlockingIOError:
                break
            ihl = (data[0] & 15) * 4
            sp, dp = struct.unpack("!HH", data[ihl:ihl + 4])
            # UDP: whoami's answer; TCP: a SYN-ACK (0x12), the port let in
            if addr[0] == dst and sp == want and (s is u or data[ihl + 13] & 0x12 == 0x12):
                answered.add(dp)
    while True:
        try:
            data, addr = i.recvfrom(65535)
        except BlockingIOError:
            break
        ihl = (data[0] & 15) * 4
        typ, _, _, rid, seq = struct.unpack("!BBHHH", data[ihl:ihl + 8])
        if addr[0] == dst and typ == 0 and rid == ident:
            echoed.add(seq)

def wait(done, what):
    end = time.monotonic() + 10
    while not done():
        if time.monotonic() > end:
            print("timeout " + what, flush=True)
            sys.exit(1)
        select.select([u, t, i], [], [], 0.5)
        drain()

print("ready", flush=True)
seq = 0
for line in sys.stdin:
    words = line.split()
    if words[0] == "batch":
        first = port
        for _ in range(int(words[1])):
            if port % 2:  # every other flow a TCP SYN
                t.sendto(syn(port), (dst, 0))
            else:
                udp(port)
            port += 1
        seq = (seq + 1) & 0xFFFF
        echo = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + b"barrier"
        i.sendto(echo[:2] + struct.pack("!H", csum(echo)) + echo[4:], (dst, 0))
        wait(lambda: seq in echoed, "echo %d" % seq)
        print("done " + " ".join(map(str, range(first, port))), flush=True)
    elif words[0] == "end":
        last = port + (port % 2)  # an even port: UDP
        udp(last)
        wait(lambda: last in answered, "whoami's answer to the last datagram")
        answered.discard(last)
        print(json.dumps({"answered": sorted(answered)}), flush=True)
        break
"""


# What firewalld's zones let in (docs/firewall.md, "What each location lets in"), proved by
# packets: the device's raw sockets see a datagram only once the input hook let it through
# (raw delivery comes after netfilter's LOCAL_IN), so binding the ports is not needed (dhcpcd
# holds 546). The receiver joins the mDNS groups on wifi0 (no member, no delivery) and prints
# each probe it sees, then "marker" and "marker6" for an ICMP and an ICMPv6 echo carrying the
# round's token: echo requests are let in everywhere, and the sender sends them after the
# probes of the round, each on the path of its family's probes.
SERVICE_RECV_PY = r"""
import select, socket, struct, sys
ifname = sys.argv[1]
idx = socket.if_nametoindex(ifname)
u4 = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)
u6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_UDP)
i4 = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
i6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
for s in (u4, u6, i4, i6):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
u4.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
              struct.pack("4sii", socket.inet_aton("224.0.0.251"), 0, idx))
u6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_JOIN_GROUP,
              socket.inet_pton(socket.AF_INET6, "ff02::fb") + struct.pack("@I", idx))
print("ready", flush=True)

def probe(s):
    data = s.recv(65535)
    udp = data if s is u6 else data[(data[0] & 15) * 4:]  # no IP header on IPv6 raw sockets
    if udp[8:].startswith(b"roam-svc-"):
        print("%s %d %s" % ("6" if s is u6 else "4", struct.unpack("!H", udp[2:4])[0],
                            udp[8:].decode()), flush=True)

while True:
    for s in select.select([u4, u6, i4, i6], [], [])[0]:
        if s in (u4, u6):
            probe(s)
            continue
        data = s.recv(65535)
        icmp = data if s is i6 else data[(data[0] & 15) * 4:]
        if icmp[0] not in (8, 128) or not icmp[8:].startswith(b"roam-svc-"):
            continue
        # A family's probes came before its marker (one path, one queue): what is still
        # queued on the probe sockets is printed first, so the marker ends the round.
        for q in (u4, u6):
            while select.select([q], [], [], 0)[0]:
                probe(q)
        print("marker%s %s" % ("6" if s is i6 else "", icmp[8:].decode()), flush=True)
"""

# The LAN's side (the home router, on br0): the probes given as FAMILY:ADDR:PORT, each from
# source port 40000 with the payload TOKEN-FAMILY-PORT, then the marker to the device's IPv4
# address.
SERVICE_SEND_PY = r"""
import socket, struct, sys
token, ifname, marker_dst, marker6_dst = sys.argv[1:5]
idx = socket.if_nametoindex(ifname)

def csum(data):
    if len(data) % 2:
        data += b"\0"
    n = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    n = (n >> 16) + (n & 0xFFFF)
    n += n >> 16
    return ~n & 0xFFFF

for probe in sys.argv[5:]:
    fam, rest = probe.split(":", 1)
    addr, port = rest.rsplit(":", 1)
    af = socket.AF_INET6 if fam == "6" else socket.AF_INET
    s = socket.socket(af, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
    s.bind(("::" if af == socket.AF_INET6 else "0.0.0.0", 40000))
    payload = ("%s-%s-%s" % (token, fam, port)).encode()
    if af == socket.AF_INET6:
        s.sendto(payload, (addr, int(port), 0, idx))
    else:
        s.sendto(payload, (addr, int(port)))
    s.close()
i = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
body = struct.pack("!BBHHH", 8, 0, 0, 7, 1) + token.encode()
i.sendto(body[:2] + struct.pack("!H", csum(body)) + body[4:], (marker_dst, 0))
# the IPv6 marker behind the probe to the link-local address (it may wait for neighbour
# discovery, in one queue with that probe); the kernel sums ICMPv6
i6 = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
i6.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
i6.sendto(struct.pack("!BBHHH", 128, 0, 0, 7, 1) + token.encode(), (marker6_dst, 0, 0, idx))
"""

SERVICE_PROBES = {"mdns4": ("4", "224.0.0.251", 5353), "mdns6": ("6", "ff02::fb", 5353),
                  "samba137": ("4", None, 137), "samba138": ("4", None, 138),
                  "dhcpv6": ("6", "link-local", 546), "other": ("4", None, 5354)}


class LineReader:
    """A process's stdout line by line, read unbuffered: select() sees what a buffer would
    hide."""

    def __init__(self, proc):
        self.proc, self.fd, self.buf = proc, proc.stdout.fileno(), b""

    def line(self, deadline, what):
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            assert r, "no %s within 10 s" % what
            chunk = os.read(self.fd, 65536)
            assert chunk, "the receiver exited before %s" % what
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()


def service_round(w, recv, token):
    """Sends every SERVICE_PROBES probe from the home LAN to wifi0; the names that came in."""
    v4 = w.dev_addr("wifi0", 4)
    ll = [a["local"] for l in json.loads(w.dev("ip", "-j", "-6", "addr", "show", "dev", "wifi0",
                                               "scope", "link").stdout)
          for a in l.get("addr_info", []) if "local" in a]
    probes = []
    for fam, addr, port in SERVICE_PROBES.values():
        addr = {None: v4, "link-local": ll[0]}.get(addr, addr)
        probes.append("%s:%s:%d" % (fam, addr, port))
    w.exec("home", "/usr/bin/python3", "-c", SERVICE_SEND_PY, token, "br0", v4, ll[0],
           *probes)
    seen, markers = set(), set()
    deadline = time.monotonic() + 10
    while markers != {"marker", "marker6"}:
        line = recv.line(deadline, "the markers %s" % token).split()
        if line[:2] in (["marker", token], ["marker6", token]):
            markers.add(line[0])
            continue
        if len(line) == 3 and line[2].startswith(token + "-"):
            seen.add((line[0], int(line[1])))
    return {name for name, (fam, _, port) in SERVICE_PROBES.items() if (fam, port) in seen}


def test_locations_let_in_what_firewalld_zones_do(home):
    """issue 39: home lets in mDNS (to its groups), Samba browsing (udp 137, 138) and DHCPv6
    (udp 546 to link-local) like firewalld's home zone; work and public DHCPv6 only; untrusted
    none of them. Other ports stay closed everywhere. CheckInbound and GetFirewallRules say the
    same."""
    w = home
    # said once at start, where an administrator looks first
    assert ("Firewall: inbound traffic on each link follows its network's location. home lets "
            "in mDNS (udp 5353), Samba browsing (udp 137, 138), DHCPv6 (udp 546); work and "
            "public DHCPv6 (udp 546); an unknown network is untrusted: no service of its own") \
        in w.roamd_log()
    recv = w.dev_popen(["/usr/bin/python3", "-c", SERVICE_RECV_PY, "wifi0"],
                       stdout=subprocess.PIPE, bufsize=0)
    lines = LineReader(recv)
    try:
        assert lines.line(time.monotonic() + 10, "ready") == "ready"
        want = {"home": {"mdns4", "mdns6", "samba137", "samba138", "dhcpv6"},
                "work": {"dhcpv6"}, "public": {"dhcpv6"}, "untrusted": set()}
        for n, loc in enumerate(("home", "public", "work", "untrusted", "home")):
            if loc != "home" or n:
                manager(w, "SetLocation", "ss", ("wifi0", loc))
            assert service_round(w, lines, "roam-svc-%d" % n) == want[loc], loc
            r = manager(w, "CheckInbound", "sqss", ("udp", 5353, "", "wifi0"))
            assert r[0] == (loc == "home") and r[2] == loc, (loc, r)
            mdns = [x for x in rules(w) if x[0] == "wifi0" and x[7] == "built-in:mdns"]
            assert bool(mdns) == (loc == "home"), (loc, mdns)
        assert r[3] == "built-in:mdns" and "is let in" in r[4], r
        assert mdns[0][3] == "accept" and mdns[0][4].startswith("mdns: udp 5353"), mdns
        assert mdns[0][8] >= 2, mdns  # this round's two, counted by the kernel
    finally:
        stop(recv)


# ---- helpers ----

def manager(w, method, signature="", args=()):
    return w.call(MANAGER_PATH, MANAGER_IFACE, method, signature, args)


def write_file(w, rel, text):
    d = w.path("etc-roam", os.path.dirname(rel))
    d.mkdir(parents=True, exist_ok=True)
    return w.write_config(text, name=rel)


def remove_file(w, rel):
    try:
        w.path("etc-roam", rel).unlink()
    except FileNotFoundError:
        pass


def reload(w):
    manager(w, "Reload")


def home_network(w):
    """networks.d entry for the home network as wifi0 sees it (its gateway's MAC is made
    afresh with each world)."""
    l = w.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("gateway-mac")
                    and l["NetworkIdentity"].get("dhcp-server") == "192.0.2.1",
                    what="wifi0's home identity")
    ident = l["NetworkIdentity"]
    return ("[Network]\nLocation=home\nGatewayMAC=%s\nDHCPServer=%s\n"
            % (ident["gateway-mac"], ident["dhcp-server"]))


def listen(w, port, cgroup=None, udp=False):
    p = w.dev_popen(["/usr/bin/python3", WHOAMI_PY, "--listen", "::", "--port", port]
                    + ([] if udp else ["--no-udp"]), cgroup=cgroup, stdout=subprocess.PIPE,
                    text=True)
    assert p.stdout.readline().strip() == "ready"
    return p


def stop(p):
    p.terminate()
    p.wait(10)


def reach(w, ns, ifname, port, timeout=10.0, family=4):
    """Connect from namespace ns to the device's address of family on ifname: the
    ConnectResult (a dropped SYN is waited for timeout: the checks of a drop pass a short
    window)."""
    return w.ns_connect(ns, w.dev_addr(ifname, family), port, "tcp", timeout=timeout)


def rules(w):
    return manager(w, "GetFirewallRules")


def link_chain(w, ifname):
    idx = w.kernel_links()[ifname]
    return w.dev("nft", "list", "chain", "inet", "roam", "fwi_%d" % idx).stdout


@pytest.fixture
def home(w):
    """wifi0's network known as home, the test profile in force; removed afterwards."""
    write_file(w, "networks.d/home.conf", home_network(w))
    write_file(w, "firewall.d/home.conf", HOME_PROFILE)
    reload(w)
    w.wait_link("wifi0", lambda l: l["Location"] == "home" and l["LocationSource"] == "config",
                what="wifi0 at home")
    yield w
    for f in ("networks.d/home.conf", "firewall.d/home.conf", "firewall.d/bad.conf"):
        remove_file(w, f)
    w.dev("rm", "-f", "/var/lib/roam/locations.state")
    if w.roamd_running():
        reload(w)


# ---- tests ----

def test_identity_and_default_location(w):
    """Each link names its network from what it sees; an unknown network is untrusted until
    the user decides, and the same network keeps its id across a reconnect."""
    # (Location is the location in force: it comes with the pass that installs its rules)
    l = w.wait_link("wifi0", lambda l: l["NetworkId"].startswith("wifi:gw=") and
                    l["Location"] == l["LocationWanted"] != "")
    ident = l["NetworkIdentity"]
    assert ident["interface"] == "wifi0" and ident["bearer"] == "wifi", ident
    assert ident["dhcp-server"] == "192.0.2.1" and ident["domain"] == "home.test", ident
    assert l["NetworkId"] == "wifi:gw=" + ident["gateway-mac"]
    assert (l["Location"], l["LocationSource"]) == ("untrusted", "default")
    assert "unknown network" in l["LocationReason"]
    assert {"home", "work", "public", "untrusted"} <= set(w.manager()["Locations"])
    before = l["NetworkId"]
    w.carrier("wifi0", False)
    w.wait_link("wifi0", lambda l: l["NetworkId"] == "" and l["Location"] == "")
    w.carrier("wifi0", True)
    w.wait_link("wifi0", lambda l: l["NetworkId"] == before, timeout=20,
                what="the same id after a reconnect")


def test_nothing_to_identify_and_no_passing_ids(w):
    """A link with no address of its own and no gateway (eth0 in the dead network: carrier,
    an IPv6 link-local address) names no network, so nobody is asked where it is; and a
    carrier that comes back names only the network it is on, never what dhcpcd's
    re-applied lease shows on the way (the interface alone, the DHCP server alone)."""
    eth = w.wait_link("eth0")
    assert eth["State"] in ("link-local", "no-address"), eth["State"]
    assert (eth["NetworkId"], eth["Location"], eth["LocationSource"]) == ("", "", ""), eth
    l = w.wait_link("wifi0", lambda l: l["NetworkId"].startswith("wifi:gw="))
    final = l["NetworkId"]
    with w.monitor() as mon:
        t0 = time.monotonic()
        w.carrier("wifi0", False)
        w.wait_link("wifi0", lambda l: l["NetworkId"] == "")
        w.carrier("wifi0", True)
        w.wait_link("wifi0", lambda l: l["NetworkId"] == final and l["State"] == "routable" and
                    len(l["Gateways"]) == 2, timeout=20, what="wifi0 back home, both gateways")
        ids = [ch["NetworkId"] for _, m in mon.signals(t0 - 0.5)
               for ch in [Monitor.properties_changed(m, l["_path"]) or {}] if "NetworkId" in ch]
    assert ids and set(ids) == {"", final}, ids


def test_vpn_tunnel_is_untrusted_without_a_question(w):
    """A VPN tunnel shows nothing that names the network behind it (no gateway MAC, no DHCP
    server): its id is only the interface's name. It is not an unknown network to ask about
    ("default", which the clients ask "home, work or public?") but untrusted by its own rule
    ("tunnel"); the user's choice still wins (M8 of the new-user report)."""
    w.vpn_up()
    try:
        l = w.wait_link("vpn0", lambda l: l["NetworkId"] != "" and l["Location"] != "",
                        timeout=20, what="vpn0 with a location")
        assert l["NetworkId"] == "vpn:if=vpn0", l["NetworkId"]
        assert (l["Location"], l["LocationSource"]) == ("untrusted", "tunnel"), l
        assert "VPN tunnel" in l["LocationReason"], l["LocationReason"]
        manager(w, "SetLocation", "ss", ("vpn0", "work"))
        w.wait_link("vpn0", lambda l: (l["Location"], l["LocationSource"]) == ("work", "user"),
                    what="vpn0 at work, as chosen")
    finally:
        w.vpn_down()
        w.dev("rm", "-f", "/var/lib/roam/locations.state")
        if w.roamd_running():
            reload(w)


def test_home_port_then_public_keeps_session(home):
    """A port open at home answers from the LAN; the location change closes it in the same
    transaction (closed when SetLocation returns) while an established session on that very
    port goes on, ssh stays reachable and outbound works."""
    w = home
    srv = listen(w, PORT)
    sess = None
    try:
        for fam in (4, 6):
            r = reach(w, "home", "wifi0", PORT, family=fam)
            assert r.ok, (fam, r)
        ok, = [x for x in rules(w) if x[0] == "wifi0" and x[7] == "home.conf:5"]
        assert ok[3] == "accept" and ok[4] == "tcp %d" % PORT and ok[8] >= 1, ok
        r = w.call(MANAGER_PATH, MANAGER_IFACE, "CheckInbound", "sqss",
                   ("tcp", PORT, "", "wifi0"))
        assert r[0] == True and r[2] == "home" and r[3] == "home.conf:5", r

        sess = subprocess.Popen([str(WORLD_SH), "exec", w.name, "home", "/usr/bin/python3", "-c",
                                 SESSION_PY, w.dev_addr("wifi0", 4), str(PORT)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env=dict(os.environ, WORLD_QUIET="1"))
        assert sess.stdout.readline().startswith("greeting ")
        sess.stdin.write("before\n")
        sess.stdin.flush()
        assert sess.stdout.readline().strip() == "echo before"

        manager(w, "SetLocation", "ss", ("wifi0", "public"))
        # in force when the call returns: new connections get nothing
        for fam in (4, 6):
            r = reach(w, "home", "wifi0", PORT, timeout=1.0, family=fam)
            assert not r.ok and r.error in DROPPED, (fam, r)
        l = w.link("wifi0")
        assert (l["Location"], l["LocationSource"]) == ("public", "user"), l
        # the established session is not cut
        sess.stdin.write("after\n")
        sess.stdin.flush()
        assert sess.stdout.readline().strip() == "echo after"
        # ssh stays open on every location ([Firewall] SSH=always, the default)
        w.sshd_start()
        try:
            assert w.ssh_check(4).ok
        finally:
            w.sshd_stop()
        # outbound still works
        r = w.dev_connect(WHOAMI["inet"][4], WHOAMI_PORT, "tcp", bind_dev="wifi0", timeout=3)
        assert r.ok and r.addr == w.dev_addr("wifi0", 4), r
        r = w.call(MANAGER_PATH, MANAGER_IFACE, "CheckInbound", "sqss",
                   ("tcp", PORT, "", "wifi0"))
        assert r[0] == False and r[2] == "public" and r[3] == "built-in:default", r
        assert "drop" in r[4], r

        # remembered across a restart, and the table stays while roamd is away (fail closed)
        w.roamd_kill9()
        r = reach(w, "home", "wifi0", PORT, timeout=1.0)
        assert not r.ok, r
        w.roamd_start()
        w.wait_link("wifi0", lambda l: l["Location"] == "public" and l["LocationSource"] == "user")
        r = reach(w, "home", "wifi0", PORT, timeout=1.0)
        assert not r.ok, r
        sess.stdin.write("after-restart\n")
        sess.stdin.flush()
        assert sess.stdout.readline().strip() == "echo after-restart"

        manager(w, "SetLocation", "ss", ("wifi0", "home"))
        assert reach(w, "home", "wifi0", PORT).ok
    finally:
        if sess:
            sess.stdin.close()
            sess.kill()
            sess.wait(10)
        stop(srv)


def test_move_to_cafe_closes_port(home):
    """The same link moved to the cafe: an unknown network, untrusted; the home port is
    closed to the cafe's LAN, and it opens again back home."""
    w = home
    srv = listen(w, PORT)
    try:
        assert reach(w, "home", "wifi0", PORT).ok
        w.move("wifi0", "cafe")
        w.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("dhcp-server") == "192.0.2.129"
                    and l["Location"] == "untrusted", timeout=30, what="wifi0 in the cafe")
        r = reach(w, "cafe", "wifi0", PORT, timeout=1.0)
        assert not r.ok and r.error in DROPPED, r
        # outbound still works: the cafe's router answers
        assert w.dev("ping", "-n", "-c", "1", "-W", "3", "-I", "wifi0", "192.0.2.129",
                     check=False).returncode == 0
        w.move("wifi0", "home")
        w.wait_link("wifi0", lambda l: l["Location"] == "home", timeout=30)
        assert reach(w, "home", "wifi0", PORT).ok
    finally:
        stop(srv)


def test_location_follows_the_network_not_the_link(w):
    """Home chosen by the user for wifi0's network; moved to the cafe, wifi0 is on another
    network (its own gateway MAC and DHCP server), so home's location does not come along:
    the cafe is unknown (untrusted, asked) until chosen, and each network keeps its own
    choice when wifi0 goes back and forth."""
    try:
        l = w.wait_link("wifi0", lambda l: l["NetworkId"].startswith("wifi:gw="),
                        what="wifi0 at home")
        home_id, home_ident = l["NetworkId"], l["NetworkIdentity"]
        manager(w, "SetLocation", "ss", ("wifi0", "home"))
        w.wait_link("wifi0", lambda l: (l["Location"], l["LocationSource"]) == ("home", "user"))
        w.move("wifi0", "cafe")
        l = w.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("dhcp-server") ==
                        "192.0.2.129" and l["NetworkId"].startswith("wifi:gw=") and
                        l["Location"] == l["LocationWanted"] != "", timeout=30,
                        what="wifi0's identity in the cafe, its location in force")
        ident = l["NetworkIdentity"]
        assert ident["gateway-mac"] != home_ident["gateway-mac"], (ident, home_ident)
        assert l["NetworkId"] != home_id, l
        assert (l["Location"], l["LocationSource"]) == ("untrusted", "default"), l
        assert "unknown network" in l["LocationReason"], l
        cafe_id = l["NetworkId"]
        manager(w, "SetLocation", "ss", ("wifi0", "public"))
        w.wait_link("wifi0", lambda l: (l["Location"], l["LocationSource"]) == ("public", "user"))
        w.move("wifi0", "home")
        w.wait_link("wifi0", lambda l: l["NetworkId"] == home_id and
                    (l["Location"], l["LocationSource"]) == ("home", "user"), timeout=30,
                    what="wifi0 back home, home again")
        w.move("wifi0", "cafe")
        w.wait_link("wifi0", lambda l: l["NetworkId"] == cafe_id and
                    (l["Location"], l["LocationSource"]) == ("public", "user"), timeout=30,
                    what="wifi0 in the cafe again, public again")
    finally:
        w.dev("rm", "-f", "/var/lib/roam/locations.state")
        if w.roamd_running():
            reload(w)


def test_wifi_networks_differ_by_ssid(w):
    """With wpa_supplicant for wifi0 (world.sh wifi on, as in roam-demo) each network is its
    own access point: at home roamd reads the home SSID and names the network wifi:SSID:BSSID;
    moved to the cafe, the SSID, the BSSID and with them the id change, so home's location
    stays behind (the cafe is unknown and asked about) and comes back with wifi0 (issue 32,
    item 5)."""
    try:
        w.wifi(True)
        l = w.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("ssid") == "roam home"
                        and l["NetworkId"].startswith("wifi:roam home:"),
                        what="wifi0 at home by its SSID")
        home_id, home_ident = l["NetworkId"], l["NetworkIdentity"]
        assert home_ident["bssid"] == "02:72:6d:00:01:02", home_ident
        assert home_id == "wifi:roam home:02:72:6d:00:01:02", home_id
        manager(w, "SetLocation", "ss", ("wifi0", "home"))
        w.wait_link("wifi0", lambda l: (l["Location"], l["LocationSource"]) == ("home", "user"))
        w.move("wifi0", "cafe")
        l = w.wait_link("wifi0", lambda l: l["NetworkIdentity"].get("ssid") == "Cafe Libre"
                        and l["NetworkId"] != "" and l["Location"] == l["LocationWanted"] != "",
                        timeout=30,
                        what="wifi0's SSID in the cafe, its location in force")
        assert l["NetworkId"] == "wifi:Cafe Libre:02:72:6d:00:04:02", l
        assert (l["Location"], l["LocationSource"]) == ("untrusted", "default"), l
        assert "unknown network" in l["LocationReason"], l
        w.move("wifi0", "home")
        w.wait_link("wifi0", lambda l: l["NetworkId"] == home_id and
                    (l["Location"], l["LocationSource"]) == ("home", "user"), timeout=30,
                    what="wifi0 back home, home again")
        # Without wpa_supplicant the SSID goes; the gateway names the network again.
        w.wifi(False)
        w.wait_link("wifi0", lambda l: "ssid" not in l["NetworkIdentity"] and
                    l["NetworkId"].startswith("wifi:gw="), what="wifi0 without wpa_supplicant")
    finally:
        w.wifi(False)
        w.dev("rm", "-f", "/var/lib/roam/locations.state")
        if w.roamd_running():
            reload(w)


def test_per_app_inbound(home):
    """A port opened for app A is open to A's sockets only: app B on a port without a rule is
    unreachable, and B on A's port after A exited stays unreachable."""
    w = home
    cg_a = "%s/app-org.test.A.scope" % ROAM_SLICE
    cg_b = "%s/app-org.test.B.scope" % ROAM_SLICE
    for cg in (cg_a, cg_b):
        (w.cgroup / cg).mkdir(parents=True, exist_ok=True)
    cgid = (w.cgroup / cg_a).stat().st_ino

    def a_rule():
        # nft prints the cgroup's path when it can resolve its id, else the id
        chain = link_chain(w, "wifi0")
        return "socket cgroupv2" in chain and ("app-org.test.A.scope" in chain
                                               or str(cgid) in chain)
    wait_for(a_rule, 10, what="A's rule in wifi0's chain")
    a = listen(w, APP_PORT, cgroup=cg_a)
    b = listen(w, OTHER_PORT, cgroup=cg_b)
    try:
        r = reach(w, "home", "wifi0", APP_PORT)
        assert r.ok, r
        r = reach(w, "home", "wifi0", OTHER_PORT)
        assert not r.ok and r.error == "ECONNREFUSED", r  # home rejects: refused at once
        r = w.call(MANAGER_PATH, MANAGER_IFACE, "CheckInbound", "sqss",
                   ("tcp", APP_PORT, "org.test.B", "wifi0"))
        assert r[0] == False, r
        r = w.call(MANAGER_PATH, MANAGER_IFACE, "CheckInbound", "sqss",
                   ("tcp", APP_PORT, "org.test.A", "wifi0"))
        assert r[0] == True and "app org.test.A" in r[4], r
    finally:
        stop(a)
    b2 = listen(w, APP_PORT, cgroup=cg_b)
    try:
        r = reach(w, "home", "wifi0", APP_PORT, timeout=1.5)
        assert not r.ok, r
        # nor a process in no app at all
    finally:
        stop(b2)
        stop(b)
    other = listen(w, APP_PORT)
    try:
        assert not reach(w, "home", "wifi0", APP_PORT, timeout=1.5).ok
    finally:
        stop(other)
        for cg in (cg_a, cg_b):
            try:
                (w.cgroup / cg).rmdir()
            except OSError:
                pass


def test_two_links_two_locations(home):
    """wifi0 at home, cell0 public at the same time: each link's rules apply to its own
    traffic only."""
    w = home
    w.wait_link("cell0", lambda l: l["NetworkId"] != "")
    manager(w, "SetLocation", "ss", ("cell0", "public"))
    srv = listen(w, PORT)
    try:
        assert reach(w, "home", "wifi0", PORT).ok
        r = reach(w, "living", "cell0", PORT, timeout=1.0)
        assert not r.ok and r.error in DROPPED, r
        assert w.link("cell0")["Location"] == "public"
        assert w.link("wifi0")["Location"] == "home"
    finally:
        stop(srv)


def test_foreign_tables_untouched(home):
    """A foreign nftables table and iptables-nft rules stay as they were through location
    changes, reloads and a restart."""
    w = home
    w.dev("nft", "-f", "-", input="table inet foreign {\n chain c {\n"
          "  type filter hook input priority 10;\n  tcp dport 9999 counter accept\n }\n}\n")
    w.dev("iptables-nft", "-A", "INPUT", "-p", "tcp", "--dport", "9998", "-j", "ACCEPT")
    try:
        before = (w.dev("nft", "list", "table", "inet", "foreign").stdout,
                  w.dev("iptables-nft", "-S", "INPUT").stdout)
        manager(w, "SetLocation", "ss", ("wifi0", "work"))
        reload(w)
        w.roamd_restart()
        w.wait_link("wifi0", lambda l: l["Location"] == "work")
        after = (w.dev("nft", "list", "table", "inet", "foreign").stdout,
                 w.dev("iptables-nft", "-S", "INPUT").stdout)
        assert after == before
        assert "tcp dport 9999" in after[0] and "--dport 9998" in after[1], after
        assert w.dev("nft", "list", "tables").stdout.count("inet roam") == 1
    finally:
        w.dev("nft", "delete", "table", "inet", "foreign", check=False)
        w.dev("iptables-nft", "-D", "INPUT", "-p", "tcp", "--dport", "9998", "-j", "ACCEPT",
              check=False)


@pytest.mark.parametrize("bad,where", [
    ("[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=70000\n", "bad.conf:5: Port=70000"),
    ("[Profile]\nLocation=home\n[Rule]\nAddress=192.0.2.1/33\n", "bad.conf:4: Address="),
    ("[Profile]\nLocation=home\n[Rule]\nProtocol=tcp\nPort=%d\nAction=drop\n" % PORT,
     "contradicts"),
])
def test_malformed_profile_keeps_rules(home, bad, where):
    """A broken profile is refused with file:line and the rules in force stay."""
    w = home
    srv = listen(w, PORT)
    try:
        before = [x[:8] for x in rules(w)]
        write_file(w, "firewall.d/bad.conf", bad)
        with pytest.raises(DBusCallError) as e:  # the reload's caller hears it too
            reload(w)
        assert e.value.name == "org.roam1.Error.ConfigInvalid" and where in e.value.message
        err = w.wait(lambda: w.manager()["FirewallError"] or None, what="FirewallError")
        assert where in err and err.endswith("the rules in force stay"), err
        assert [x[:8] for x in rules(w)] == before
        assert reach(w, "home", "wifi0", PORT).ok
        remove_file(w, "firewall.d/bad.conf")
        reload(w)
        w.wait(lambda: w.manager()["FirewallError"] == "", what="FirewallError cleared")
    finally:
        stop(srv)


def test_unprivileged_set_location_refused(home):
    w = home
    ok, err, out = w.call_as(NOBODY, MANAGER_PATH, MANAGER_IFACE, "SetLocation",
                             "string:wifi0", "string:public")
    assert not ok and err in ("org.roam1.Error.AccessDenied",
                              "org.freedesktop.DBus.Error.AccessDenied"), out
    assert w.link("wifi0")["Location"] == "home"
    # reads are open to everyone
    ok, err, out = w.call_as(NOBODY, MANAGER_PATH, MANAGER_IFACE, "GetFirewallRules")
    assert ok, out
    with pytest.raises(DBusCallError) as e:
        manager(w, "SetLocation", "ss", ("wifi0", "Not A Location"))
    assert e.value.name == "org.roam1.Error.InvalidArguments"
    with pytest.raises(DBusCallError) as e:
        manager(w, "SetLocation", "ss", ("nope0", "home"))
    assert e.value.name == "org.roam1.Error.NoSuchLink"


def test_leak_500_switches(home):
    """A peer sends UDP datagrams and TCP SYNs at ports open at home and closed in public while
    the location switches home <-> public 500 times, with a kill -9 and a start in the middle:
    between two switches it sends a batch and waits for the device's answer to an ICMP echo
    sent after it, so every flow is judged by the location in force when it met the input hook,
    known without reading any clock."""
    w = home
    srv = listen(w, LEAK_PORT, udp=True)
    tcp = listen(w, PORT)
    home_addr = w.exec("home", "ip", "-4", "-o", "addr", "show", "br0").stdout.split()[3]
    flood = subprocess.Popen([str(WORLD_SH), "exec", w.name, "home", "/usr/bin/python3", "-c",
                              FLOOD_PY, w.dev_addr("wifi0", 4), str(LEAK_PORT), str(PORT),
                              home_addr.split("/")[0]],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, WORLD_QUIET="1"))
    batches = []  # (location in force, source ports sent)

    def batch(loc):
        flood.stdin.write("batch 20\n")
        flood.stdin.flush()
        words = flood.stdout.readline().split()
        assert words and words[0] == "done", ("the peer's barrier", words)
        batches.append((loc, [int(p) for p in words[1:]]))

    def switch(loc):
        manager(w, "SetLocation", "ss", ("wifi0", loc))  # answered: in force
        batch(loc)

    try:
        assert flood.stdout.readline().strip() == "ready"
        batch("home")
        for i in range(250):
            switch(("public", "home")[i % 2])
        switch("public")
        w.roamd_kill9()  # nobody home: the public rules stay in force
        batch("public")
        w.roamd_start()  # one transaction replaces the table: public all along
        w.wait_link("wifi0", lambda l: l["Location"] == "public")
        batch("public")
        for i in range(249):
            switch(("home", "public")[i % 2])
        flood.stdin.write("end\n")
        flood.stdin.flush()
        result = json.loads(flood.stdout.readline())
    finally:
        if flood.poll() is None:
            flood.kill()
            flood.wait(10)
        stop(srv)
        stop(tcp)
    assert len(batches) == 503
    answered = set(result["answered"])
    leaked, lost, judged = [], [], {"home": 0, "public": 0}
    for loc, ports in batches:
        judged[loc] += len(ports)
        leaked += [p for p in ports if loc == "public" and p in answered]
        lost += [p for p in ports if loc == "home" and p not in answered]
    assert judged["home"] > 1000 and judged["public"] > 1000, judged
    assert any(p % 2 for p in answered) and any(p % 2 == 0 for p in answered)  # SYNs and UDP
    assert leaked == [], ("answered in a public period", leaked[:5])
    assert lost == [], ("not answered in a home period", lost[:5], len(lost))


# ---- outbound rules ----

OUT_PROFILE = """# test profile: in public, no TCP and no UDP out to port %d
[Profile]
Location=public

[Rule]
Direction=out
Action=reject
Protocol=tcp
Port=%d

[Rule]
Direction=out
Action=drop
Protocol=udp
Port=%d
""" % (WHOAMI_PORT, WHOAMI_PORT, WHOAMI_PORT)

APP_OUT_PROFILE = """# test profile: at home, app org.test.C may not reach TCP %d
[Profile]
Location=home

[Rule]
Direction=out
Action=reject
Protocol=tcp
Port=%d
App=org.test.C
""" % (WHOAMI_PORT, WHOAMI_PORT)


def out_rule(w, link, rule_id):
    """The row of GetFirewallRules for link's rule rule_id, None when not in force."""
    rows = [x for x in rules(w) if x[0] == link and x[7] == rule_id]
    return rows[0] if rows else None


def out_to_whoami(w, link, proto="tcp", cgroup=None, timeout=10.0):
    """To whoami out of link: the one in the internet through wifi0, the TV's on cell0's own
    LAN (cell0's network has no way out). A dropped datagram is waited for timeout."""
    host = WHOAMI["tv" if link == "cell0" else "inet"][4]
    return w.dev_connect(host, WHOAMI_PORT, proto, bind_dev=link, cgroup=cgroup, timeout=timeout)


def test_outbound_rules_per_location_and_link(home):
    """A public profile's outbound reject (TCP) and drop (UDP) stop that traffic on the link
    that is in public only: wifi0 at home still reaches the server, cell0 in public does not
    (other traffic on cell0 still flows); wifi0 moved to public loses it too, and back home
    gets it again."""
    w = home
    write_file(w, "firewall.d/out.conf", OUT_PROFILE)
    try:
        reload(w)
        w.wait_link("cell0", lambda l: l["NetworkId"] != "")
        # before: the TV answers out of cell0 (untrusted: no outbound rule)
        assert out_to_whoami(w, "cell0").ok and out_to_whoami(w, "cell0", "udp").ok
        manager(w, "SetLocation", "ss", ("cell0", "public"))
        wait_for(lambda: out_rule(w, "cell0", "out.conf:5"), 10, what="cell0's outbound rule")
        assert out_rule(w, "wifi0", "out.conf:5") is None
        # wifi0 at home: both ways out work
        r = out_to_whoami(w, "wifi0")
        assert r.ok and r.addr == w.dev_addr("wifi0", 4), r
        assert out_to_whoami(w, "wifi0", "udp").ok
        # cell0 in public: TCP refused at once (reject), UDP gets nothing (drop)
        r = out_to_whoami(w, "cell0")
        assert not r.ok and r.error == "ECONNREFUSED", r
        r = out_to_whoami(w, "cell0", "udp", timeout=1.5)  # the window a drop is watched
        assert not r.ok and r.error in DROPPED + ("EPERM",), r
        tcp_rule, udp_rule = out_rule(w, "cell0", "out.conf:5"), out_rule(w, "cell0",
                                                                          "out.conf:11")
        assert tuple(tcp_rule[2:5]) == ("out", "reject", "tcp %d" % WHOAMI_PORT), tcp_rule
        assert tcp_rule[8] >= 1 and udp_rule[3] == "drop" and udp_rule[8] >= 1, \
            (tcp_rule, udp_rule)
        # the rest of cell0's outbound traffic flows: its router answers
        gw = [g[1] for g in w.link("cell0")["Gateways"] if g[0] == 4][0]
        assert w.dev("ping", "-n", "-c", "1", "-W", "3", "-I", "cell0", gw,
                     check=False).returncode == 0
        # the same link moved to public: blocked there too; home again: open
        manager(w, "SetLocation", "ss", ("wifi0", "public"))
        r = out_to_whoami(w, "wifi0")
        assert not r.ok and r.error == "ECONNREFUSED", r
        manager(w, "SetLocation", "ss", ("wifi0", "home"))
        assert out_to_whoami(w, "wifi0").ok
        r = out_to_whoami(w, "cell0")
        assert not r.ok and r.error == "ECONNREFUSED", r
    finally:
        remove_file(w, "firewall.d/out.conf")


def test_outbound_rule_per_app(home):
    """An outbound rule with App= applies to that app's sockets only: app C cannot reach the
    server from home, app D and a process in no app can; out of a link elsewhere C can."""
    w = home
    cg_c = "%s/app-org.test.C.scope" % ROAM_SLICE
    cg_d = "%s/app-org.test.D.scope" % ROAM_SLICE
    for cg in (cg_c, cg_d):
        (w.cgroup / cg).mkdir(parents=True, exist_ok=True)
    cgid = (w.cgroup / cg_c).stat().st_ino
    write_file(w, "firewall.d/app-out.conf", APP_OUT_PROFILE)
    try:
        reload(w)
        idx = w.kernel_links()["wifi0"]

        def c_rule():
            chain = w.dev("nft", "list", "chain", "inet", "roam", "fwo_%d" % idx).stdout
            return "socket cgroupv2" in chain and ("app-org.test.C.scope" in chain
                                                   or str(cgid) in chain)
        wait_for(c_rule, 10, what="C's outbound rule in wifi0's chain")
        r = out_to_whoami(w, "wifi0", cgroup=cg_c)
        assert not r.ok and r.error == "ECONNREFUSED", r
        r = out_to_whoami(w, "wifi0", cgroup=cg_d)
        assert r.ok, r
        assert out_to_whoami(w, "wifi0").ok
        row = out_rule(w, "wifi0", "app-out.conf:5")
        assert row[5] == "org.test.C" and row[8] >= 1, row
        # cell0 is not at home: the rule is not there
        w.wait_link("cell0", lambda l: l["Location"] not in ("", "home"))
        r = out_to_whoami(w, "cell0", cgroup=cg_c)
        assert r.ok, r
    finally:
        remove_file(w, "firewall.d/app-out.conf")
        for cg in (cg_c, cg_d):
            try:
                (w.cgroup / cg).rmdir()
            except OSError:
                pass


def degraded(w):
    return w.call(MANAGER_PATH, "org.freedesktop.DBus.Properties", "Get", "ss",
                  [MANAGER_IFACE, "Degraded"])


def test_set_location_answers_with_the_kernels_word(home):
    """SetLocation answers after the nftables commit and with its error: while the kernel
    refuses commits the caller gets Failed naming the cause, Degraded says it, the old
    location's rules stay in force and Location and GetFirewallRules name the old location
    (LocationWanted the new one); once the kernel accepts, the retry applies the new one.
    With [Apps] Enforce=no no rule is in force, and SetLocation says so (nothing changes)."""
    w = home
    faults = w.path("faults")
    faults.write_text("")
    w.roamd_restart("--test-faults=%s" % faults)
    w.wait_default_state()
    srv = listen(w, PORT)
    try:
        w.wait_link("wifi0", lambda l: l["Location"] == "home", what="wifi0 at home")
        assert reach(w, "home", "wifi0", PORT).ok
        faults.write_text("nft-commit:100000")
        with pytest.raises(DBusCallError) as e:
            manager(w, "SetLocation", "ss", ("wifi0", "public"))
        assert "The kernel refused the change (Input/output error)" in str(e.value), e.value
        assert degraded(w).startswith("nftables transaction: Input/output error"), degraded(w)
        assert reach(w, "home", "wifi0", PORT).ok  # home's rules: still in force
        # and said so: Location, GetFirewallRules' location column are home's, public is
        # wanted but not in force
        l = w.link("wifi0")
        assert (l["Location"], l["LocationWanted"]) == ("home", "public"), l
        held = {row[1] for row in rules(w) if row[0] == "wifi0"}
        assert held == {"home"}, held
        faults.write_text("")
        wait_for(lambda: degraded(w) == "", 10, what="the retry applies the change")
        r = reach(w, "home", "wifi0", PORT, timeout=1.0)
        assert not r.ok and r.error in DROPPED, r
        l = w.link("wifi0")
        assert (l["Location"], l["LocationWanted"]) == ("public", "public"), l
        held = {row[1] for row in rules(w) if row[0] == "wifi0"}
        assert held == {"public"}, held
        manager(w, "SetLocation", "ss", ("wifi0", "home"))
        assert reach(w, "home", "wifi0", PORT).ok

        w.write_config(w.default_config + "[Apps]\nEnforce=no\n")
        w.roamd_restart()
        w.wait_default_state()
        with pytest.raises(DBusCallError) as e:
            manager(w, "SetLocation", "ss", ("wifi0", "public"))
        assert "The firewall is not enforced here ([Apps] Enforce=no" in str(e.value), \
            e.value
        l = w.wait_link("wifi0", lambda l: l["Location"] != "")
        assert l["Location"] == "home", l  # nothing changed
    finally:
        stop(srv)
        w.write_config(w.default_config)
        w.roamd_restart()
        w.wait_default_state()


def test_ssh_published_per_location(w):
    """Manager.SSH and SSHLetIn say what [Firewall] SSH= means for each location, as the rules
    in force do (CheckInbound tcp 22), and follow a reload (the walkthrough's L24: the clients
    say "the strictest rules (SSH still let in: SSH=always)" from them)."""
    def props():
        p = w.call(MANAGER_PATH, "org.freedesktop.DBus.Properties", "GetAll", "s",
                   [MANAGER_IFACE])
        return p["SSH"], list(p["SSHLetIn"]), list(p["Locations"])

    def check_22(link):
        r = manager(w, "CheckInbound", "sqss", ("tcp", 22, "", link))
        return r[0], r[2]

    ssh, let_in, locations = props()
    assert ssh == "always" and let_in == locations and "untrusted" in let_in, (ssh, let_in)
    accepted, location = check_22("wifi0")
    assert accepted and location in let_in
    w.write_config(w.default_config + "\n[Firewall]\nSSH=trusted\n")
    with w.monitor() as mon:
        t0 = time.monotonic()
        manager(w, "Reload")
        mon.wait_signal(lambda m: "SSHLetIn" in (Monitor.properties_changed(m, MANAGER_PATH)
                                                 or {}), 10, since=t0 - 0.5)
    ssh, let_in, _ = props()
    assert (ssh, let_in) == ("trusted", ["home", "work"]), (ssh, let_in)
    for link in ("wifi0", "cell0"):
        accepted, location = check_22(link)
        assert accepted == (location in let_in), (link, location, accepted)
