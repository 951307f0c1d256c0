# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage counted in the kernel, in the world: two apps at once (TCP both ways, UDP, IPv4 and
IPv6) are counted exactly, by the relation docs/stats.md states; the counts survive policy
changes, a restart and a kill -9 in the middle of the traffic."""
import json
import re

import pytest

from roamworld import MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, WHOAMI, wait_for

WORLD = "tstats"
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
PROM = ("stats", "usage.prom")

STATS_CONF = """[Stats]
FlushInterval=0.2s
PrometheusFile=/var/lib/roam/stats/usage.prom
"""

# TCP: the greeting, LINES lines of SIZE bytes echoed back, then UDP: DGRAMS datagrams of
# SIZE bytes, each answered. Prints what the sockets carried, and TCP's retransmissions.
TRAFFIC_PY = r"""
import json, socket, struct, sys
a = json.loads(sys.argv[1])
out = {"tcp_out": 0, "tcp_in": 0, "udp_out": [], "udp_in": []}
fam = socket.AF_INET6 if ":" in a["tcp"] else socket.AF_INET
s = socket.socket(fam, socket.SOCK_STREAM)
s.settimeout(10)
s.connect((a["tcp"], 7000))
f = s.makefile("rb")
out["tcp_in"] += len(f.readline())
line = b"x" * (a["size"] - 1) + b"\n"
for i in range(a["lines"]):
    s.sendall(line)
    out["tcp_out"] += len(line)
    out["tcp_in"] += len(f.readline())
info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104)
out["retrans"] = struct.unpack_from("I", info, 100)[0]
s.shutdown(socket.SHUT_WR)
out["tcp_in"] += len(f.read())
f.close()
s.close()
fam = socket.AF_INET6 if ":" in a["udp"] else socket.AF_INET
u = socket.socket(fam, socket.SOCK_DGRAM)
u.settimeout(10)
u.connect((a["udp"], 7000))
for i in range(a["dgrams"]):
    u.send(b"y" * a["size"])
    out["udp_out"].append(a["size"])
    out["udp_in"].append(len(u.recv(65536)))
print(json.dumps(out))
"""

HDR = {4: {"tcp": 52, "udp": 28}, 6: {"tcp": 72, "udp": 48}}
SYN_EXTRA = 8  # SYN and SYN-ACK carry MSS, SACK-permitted and window scale: 8 bytes more


def fam(addr):
    return 6 if ":" in addr else 4


def prom(w):
    """{(owner, link, direction): (bytes, packets)} from the Prometheus export."""
    try:
        text = w.path("var-lib-roam", *PROM).read_text()
    except FileNotFoundError:
        return {}
    res = {}
    for m in re.finditer(r'^roam_(bytes|packets)_total\{owner="([^"]*)",link="([^"]*)",'
                         r'direction="(in|out)",roaming="(yes|no)"\} (\d+)$', text, re.M):
        kind, owner, link, d, _, v = m.groups()
        b, p = res.get((owner, link, d), (0, 0))
        res[(owner, link, d)] = (b + int(v), p) if kind == "bytes" else (b, p + int(v))
    return res


def owner_total(w, owner):
    tot = {"in": [0, 0], "out": [0, 0]}
    for (o, _, d), (b, p) in prom(w).items():
        if o == owner:
            tot[d][0] += b
            tot[d][1] += p
    return tot


def expected(r, tcp_addr, udp_addr, tot):
    """The exact relation: every IP packet as netfilter saw it counts its total length.
    TCP: payload + one header per packet (GSO/GRO aggregates count once) + the SYN's extra
    options; UDP: payload + header, one packet per datagram."""
    ht, hu = HDR[fam(tcp_addr)]["tcp"], HDR[fam(udp_addr)]["udp"]
    res = {}
    for d in ("out", "in"):
        n_udp = len(r["udp_" + d])
        tcp_packets = tot[d][1] - n_udp
        res[d] = r["tcp_" + d] + ht * tcp_packets + SYN_EXTRA + sum(r["udp_" + d]) + hu * n_udp
    return res


@pytest.fixture
def stats(w):
    w.write_config(w.default_config + STATS_CONF)
    w.roamd_restart()
    w.wait_default_state()
    yield w
    for app in ("org.test.StatsA", "org.test.StatsB", "org.test.StatsC"):
        d = w.cgroup / ROAM_SLICE / ("app-%s.scope" % app)
        if d.exists():
            (d / "cgroup.kill").write_text("1")
            wait_for(lambda: not (d / "cgroup.procs").read_text().strip(), 5, what="empty")
            d.rmdir()


def app_cgroup(w, app_id):
    rel = "%s/app-%s.scope" % (ROAM_SLICE, app_id)
    (w.cgroup / rel).mkdir(parents=True, exist_ok=True)
    full = "/roam-world-%s/%s" % (w.name, rel)

    def governed():
        path = w.call(MANAGER_PATH, MANAGER_IFACE, "GetApp", "s", [app_id])
        return full in w.call(path, PROPS_IFACE, "GetAll", "s", ["org.roam1.App"])["Cgroups"]
    wait_for(governed, 10, what="roamd governs %s" % rel)
    return rel


def run_traffic(w, cgroup, tcp_addr, udp_addr, lines=200, size=1000, dgrams=20):
    args = json.dumps({"tcp": tcp_addr, "udp": udp_addr, "lines": lines, "size": size,
                       "dgrams": dgrams})
    return w.dev_popen(["/usr/bin/python3", "-c", TRAFFIC_PY, args], cgroup=cgroup,
                       stdout=__import__("subprocess").PIPE, text=True)


def test_two_apps_at_once_counted_exactly(stats):
    w = stats
    ca, cb = app_cgroup(w, "org.test.StatsA"), app_cgroup(w, "org.test.StatsB")
    a4, a6 = WHOAMI["inet"][4], WHOAMI["inet"][6]
    pa = run_traffic(w, ca, a4, a6)
    pb = run_traffic(w, cb, a6, a4)
    ra, rb = json.loads(pa.communicate(timeout=60)[0]), json.loads(pb.communicate(timeout=60)[0])
    assert ra["retrans"] == 0 and rb["retrans"] == 0, (ra["retrans"], rb["retrans"])
    for owner, r, tcp_addr, udp_addr in (("app:org.test.StatsA", ra, a4, a6),
                                         ("app:org.test.StatsB", rb, a6, a4)):
        # the whole exchange is over: wait for the export to show it, then it is exact
        def done():
            t = owner_total(w, owner)
            return t["in"][1] > 0 and t["out"][1] > 0 and \
                expected(r, tcp_addr, udp_addr, t) == {"out": t["out"][0], "in": t["in"][0]}
        try:
            wait_for(done, 10, what="%s counted exactly" % owner)
        except TimeoutError:
            t = owner_total(w, owner)
            raise AssertionError("%s: counted %s, the relation gives %s (%s)"
                                 % (owner, t, expected(r, tcp_addr, udp_addr, t), r))
        # all of it went out of wifi0, the best link
        links = {l for (o, l, _) in prom(w) if o == owner}
        assert links == {"wifi0"}, links


def test_counts_survive_policy_changes_restart_and_kill9(stats):
    w = stats
    ca = app_cgroup(w, "org.test.StatsC")  # an app no other test counted
    a4, a6 = WHOAMI["inet"][4], WHOAMI["inet"][6]
    p = run_traffic(w, ca, a4, a6, lines=3000, size=200, dgrams=50)
    for i in range(50):
        w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
               ["org.test.StatsC", {"handover": ("sticky", "move")[i % 2]}])
    w.roamd_restart()
    w.roamd_kill9()
    w.roamd_start()
    r = json.loads(p.communicate(timeout=120)[0])
    assert r["retrans"] == 0, r["retrans"]
    owner = "app:org.test.StatsC"

    def done():
        t = owner_total(w, owner)
        return expected(r, a4, a6, t) == {"out": t["out"][0], "in": t["in"][0]} and \
            t["in"][1] > 0
    try:
        wait_for(done, 10, what="counts carried over exactly")
    except TimeoutError:
        t = owner_total(w, owner)
        raise AssertionError("counted %s, the relation gives %s (%s)"
                             % (t, expected(r, a4, a6, t), r))
