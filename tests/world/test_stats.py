# SPDX-License-Identifier: LGPL-2.1-or-later
"""Usage counted in the kernel, in the world: two apps at once (TCP both ways, UDP, IPv4 and
IPv6) are counted exactly, by the relation docs/stats.md states; the counts survive policy
changes, a restart and a kill -9 in the middle of the traffic."""
import json
import os
import re
import subprocess
import time
import zlib

import pytest

from roamworld import MANAGER_IFACE, MANAGER_PATH, PROPS_IFACE, ROAM, WHOAMI, wait_for

WORLD = "tstats"
ROAM_SLICE = "system.slice/roamd.service/roam.slice"
PROM = ("usage.prom",)

STATS_CONF = """[Stats]
FlushInterval=0.2s
PrometheusFile=/var/lib/roam/usage.prom
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
    for app in ("org.test.StatsA", "org.test.StatsB", "org.test.StatsC", "org.test.StatsR",
                "org.test.StatsO", "org.test.StatsQ", "org.test.StatsL", "org.test.StatsK",
                "org.test.StatsF", "org.test.StatsG"):
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
                       stdout=subprocess.PIPE, text=True)


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
        wait_exact(w, owner, r, tcp_addr, udp_addr)
        # all of it went out of wifi0, the best link
        links = {l for (o, l, _) in prom(w) if o == owner}
        assert links == {"wifi0"}, links


def wait_exact(w, owner, r, tcp_addr, udp_addr):
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


def test_a_failed_dump_or_accounting_counts_each_byte_once(stats):
    """A counter dump whose callback fails halfway leaves the rest of the dump on the socket:
    roamd must not read it as the next request's answer (it did, and never counted again).
    An accounting step that fails after some of a dump's counters were added must add none of
    them, or the next read adds them again from the old baseline (counted twice)."""
    w = stats
    faults = w.path("faults")
    faults.write_text("")
    w.roamd_restart("--test-faults=%s" % faults)
    w.wait_default_state()
    a4, a6 = WHOAMI["inet"][4], WHOAMI["inet"][6]
    cf = app_cgroup(w, "org.test.StatsF")
    faults.write_text("nft-dump:1")
    wait_for(lambda: "this nft-dump fails" in w.roamd_log(), 10, what="the dump fault")
    r = json.loads(run_traffic(w, cf, a4, a6, lines=50).communicate(timeout=60)[0])
    assert r["retrans"] == 0, r
    wait_exact(w, "app:org.test.StatsF", r, a4, a6)
    # accounting fails at its last step, in the middle of the app's traffic: what it added
    # before must not count twice
    cg = app_cgroup(w, "org.test.StatsG")
    p = run_traffic(w, cg, a6, a4, lines=20000)
    wait_for(lambda: owner_total(w, "app:org.test.StatsG")["out"][1] > 0, 10,
             what="the app counted while it sends")
    faults.write_text("stats-apply:1")
    wait_for(lambda: "this stats-apply fails" in w.roamd_log(), 10, what="the accounting fault")
    r = json.loads(p.communicate(timeout=60)[0])
    assert r["retrans"] == 0, r
    wait_exact(w, "app:org.test.StatsG", r, a6, a4)
    w.roamd_restart()
    w.wait_default_state()


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


# A TCP exchange driven from stdin: "send N" sends N lines of 500 bytes and reads their echo,
# then prints a JSON line of what the socket carried so far; "close" ends it.
STEPPED_PY = r"""
import json, socket, sys
s = socket.create_connection((sys.argv[1], 7000), timeout=10)
f = s.makefile("rb")
out = {"out": 0, "in": len(f.readline())}
line = b"z" * 499 + b"\n"
for cmd in sys.stdin:
    if cmd.startswith("send"):
        for i in range(int(cmd.split()[1])):
            s.sendall(line)
            out["out"] += len(line)
            out["in"] += len(f.readline())
    else:
        s.shutdown(socket.SHUT_WR)
        out["in"] += len(f.read())
        s.close()
    print(json.dumps(out), flush=True)
    if not cmd.startswith("send"):
        break
"""
MM_TEMPLATE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dbusmock",
                           "modemmanager.py")
MM = "org.freedesktop.ModemManager1"


def split(w, owner, link):
    """{roaming: {direction: (bytes, packets)}} of owner on link."""
    text = w.path("var-lib-roam", *PROM).read_text() if w.path("var-lib-roam", *PROM).exists() \
        else ""
    res = {"yes": {"in": [0, 0], "out": [0, 0]}, "no": {"in": [0, 0], "out": [0, 0]}}
    for m in re.finditer(r'^roam_(bytes|packets)_total\{owner="([^"]*)",link="([^"]*)",'
                         r'direction="(in|out)",roaming="(yes|no)"\} (\d+)$', text, re.M):
        kind, o, l, d, roam, v = m.groups()
        if o == owner and l == link:
            res[roam][d][0 if kind == "bytes" else 1] += int(v)
    return res


def roaming_switch(w, app_id, seen_re, switch, switched_re):
    """A TCP exchange with the TV (reached through cell0) by app_id: 100 lines, then the modem
    (already seen by roamd: seen_re in its log) switches home -> roaming (switch(); roamd logs
    switched_re), then 150 more. Before the switch counts as home, the rest as roaming."""
    wait_for(lambda: re.search(seen_re, w.roamd_log()), 10, what="roamd sees the modem on cell0")
    ca = app_cgroup(w, app_id)
    p = w.dev_popen(["/usr/bin/python3", "-c", STEPPED_PY, WHOAMI["tv"][4]], cgroup=ca,
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        p.stdin.write("send 100\n")
        p.stdin.flush()
        home = json.loads(p.stdout.readline())
        switch()
        wait_for(lambda: re.search(switched_re, w.roamd_log()), 10, what="roamd sees roaming")
        p.stdin.write("send 150\nclose\n")
        p.stdin.flush()
        p.stdout.readline()
        total = json.loads(p.stdout.readline())
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
    owner = "app:" + app_id
    # every packet's bytes are payload + 52 (IPv4 TCP with timestamps); the SYN and SYN-ACK
    # 8 more, both before the switch
    want = {"no": {"out": home["out"], "in": home["in"]},
            "yes": {"out": total["out"] - home["out"], "in": total["in"] - home["in"]}}

    def exact():
        s = split(w, owner, "cell0")
        for roam, extra in (("no", 8), ("yes", 0)):
            for d in ("in", "out"):
                b, pk = s[roam][d]
                if pk == 0 or b != want[roam][d] + 52 * pk + extra:
                    return False
        return True
    try:
        wait_for(exact, 10, what="home and roaming split at the switch")
    except TimeoutError:
        raise AssertionError("counted %s, payloads %s" % (split(w, owner, "cell0"), want))


def start_mock(w, template, name):
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=w.address)
    mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                             template], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for(lambda: w.call("/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                            "s", [name], dest="org.freedesktop.DBus"), 10, what=name + " mock")
    return mock


def test_roaming_switch_mid_stream_modemmanager(stats):
    """ModemManager (a template written from its documented API) reports the modem whose
    bearer is cell0 as home, then roaming."""
    w = stats
    mock = start_mock(w, MM_TEMPLATE, MM)
    try:
        modem = w.call("/org/freedesktop/ModemManager1", "org.freedesktop.DBus.Mock",
                       "AddModem", "su", ["cell0", 1], dest=MM)
        roaming_switch(w, "org.test.StatsR", r"ModemManager: bearer \S+ on cell0",
                       lambda: w.call(modem, "org.freedesktop.DBus.Mock",
                                      "SetRegistrationState", "ou", [modem, 5], dest=MM),
                       r"ModemManager: %s registration 1 -> 5" % re.escape(modem))
    finally:
        mock.terminate()
        mock.wait(10)


def test_roaming_change_is_one_sync_of_the_modem_kind(stats):
    """A modem's registration is a link fact (issue 42): home -> roaming -> home on cell0 is
    one sync each, logged once as the link's modem registration (LINK_CHANGE_MODEM), and asks
    for no reconcile pass (nothing a part uses changed: the usage and the app monitor follow
    the kind themselves). A pass would run at that sync's end, before roamd reads the next
    bus message: between one change's line and the next there is none."""
    w = stats
    start = len(w.roamd_log())  # (the log holds earlier tests' roamd too)
    mock = start_mock(w, MM_TEMPLATE, MM)
    try:
        modem = w.call("/org/freedesktop/ModemManager1", "org.freedesktop.DBus.Mock",
                       "AddModem", "su", ["cell0", 1], dest=MM)
        wait_for(lambda: "cell0: modem registration none -> home" in w.roamd_log()[start:], 10,
                 what="cell0's modem registration a link fact")
        start = len(w.roamd_log())
        for state, line in ((5, "cell0: modem registration home -> roaming"),
                            (1, "cell0: modem registration roaming -> home")):
            w.call(modem, "org.freedesktop.DBus.Mock", "SetRegistrationState", "ou",
                   [modem, state], dest=MM)
            wait_for(lambda: line in w.roamd_log()[start:], 10, what=line)
        log = w.roamd_log()[start:]
        assert log.count("cell0: modem registration") == 2, log
        assert "Reconciler: pass" not in log[:log.index("roaming -> home")], log
    finally:
        mock.terminate()
        mock.wait(10)


OFONO = "org.ofono"
CONTEXTS = ('ret = dbus.Array([dbus.Struct((dbus.ObjectPath("/ril_0/context1"), '
            'dbus.Dictionary({"Active": dbus.Boolean(True), "Settings": dbus.Dictionary('
            '{"Interface": dbus.String("cell0")}, signature="sv")}, signature="sv")))], '
            'signature="(oa{sv})")')


def test_roaming_switch_mid_stream_ofono(stats):
    """oFono (python3-dbusmock's template): the modem with a context on cell0 goes from
    registered to roaming."""
    w = stats
    mock = start_mock(w, "ofono", OFONO)
    try:
        w.call("/ril_0", "org.freedesktop.DBus.Mock", "AddMethod", "sssss",
               ["org.ofono.ConnectionManager", "GetContexts", "", "a(oa{sv})", CONTEXTS],
               dest=OFONO)
        # a second modem appears: roamd reads every modem again, contexts included
        w.call("/", "org.freedesktop.DBus.Mock", "AddModem", "sa{sv}", ["ril_1", {}],
               dest=OFONO)
        roaming_switch(w, "org.test.StatsO", r"oFono: /ril_0 has a context on cell0",
                       lambda: w.call("/ril_0", "org.ofono.NetworkRegistration", "SetProperty",
                                      "sv", ["Status", "roaming"], dest=OFONO),
                       r"oFono: /ril_0 registration registered -> roaming")
    finally:
        mock.terminate()
        mock.wait(10)


UDP_PY = r"""
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(10)
u.connect((sys.argv[1], 7000))
got = 0
for i in range(int(sys.argv[2])):
    u.send(b"u" * int(sys.argv[3]))
    got += len(u.recv(65536))
print(got)
"""


def test_two_users_counted_apart(stats):
    """Processes of two users in no app: each user's slice is counted on its own, exactly
    (UDP over IPv4: payload + 28 per datagram)."""
    w = stats
    got = {}
    try:
        for uid, n, size in ((1000, 10, 300), (1001, 7, 900)):
            rel = "user.slice/user-%d.slice/session-%d.scope" % (uid, uid)
            (w.cgroup / rel).mkdir(parents=True, exist_ok=True)
            got[uid] = (n, size, int(w.dev_run(["/usr/bin/python3", "-c", UDP_PY,
                                                WHOAMI["inet"][4], n, size],
                                               cgroup=rel, user=uid).stdout))
        for uid, (n, size, answers) in got.items():
            want = {"out": n * (size + 28), "in": answers + n * 28}

            def exact():
                t = owner_total(w, "user:%d" % uid)
                return {d: t[d][0] for d in t} == want and t["out"][1] == n
            try:
                wait_for(exact, 10, what="user %d counted apart" % uid)
            except TimeoutError:
                raise AssertionError("user %d: %s, want %s"
                                     % (uid, owner_total(w, "user:%d" % uid), want))
        # over D-Bus through `roam stats`: root reads anyone's, a user their own only
        def rows(user=None, args=()):
            r = w.dev_run([ROAM, "stats", "--json", *args], user=user, check=False)
            return r.returncode, (json.loads(r.stdout)["usage"] if r.returncode == 0 else r.stderr)
        for uid, (n, size, answers) in got.items():
            rc, out = rows(args=("--user", str(uid)))
            assert rc == 0, out
            assert {(x["owner"], x["bytes_out"]) for x in out} == \
                {("user:%d" % uid, n * (size + 28))}, out
        rc, out = rows(user=1000)
        assert rc == 0 and {x["owner"] for x in out} == {"user:1000"}, out
        rc, out = rows(user=1000, args=("--user", "1001"))
        assert rc == 1 and "AccessDenied" in out, out
        rc, out = rows(user=1000, args=("--user", "all"))
        assert rc == 1 and "AccessDenied" in out, out
        rc, out = rows(args=("--since", "2x"))
        assert rc == 2, out
    finally:
        for uid in (1000, 1001):
            d = w.cgroup / "user.slice" / ("user-%d.slice" % uid)
            for sub in (d / ("session-%d.scope" % uid), d):
                if sub.exists():
                    sub.rmdir()


BAD_FILTER_PY = r"""
import json, os, dbus
bus = dbus.bus.BusConnection(os.environ["DBUS_SYSTEM_BUS_ADDRESS"])
cases = [{"colour": dbus.String("red")}, {"app": dbus.UInt32(1)},
         {"user": dbus.String("1000")}, {"since": dbus.Int32(5)}, {"all": dbus.String("yes")},
         {"link": dbus.String("a/b")}, {"app": dbus.String("../etc")},
         {"since": dbus.UInt64(0), "app": dbus.String("../etc"), "colour": dbus.String("x")}]
out = []
for c in cases:
    try:
        bus.call_blocking("org.roam1", "/org/roam1", "org.roam1.Usage", "GetUsage", "a{sv}",
                          (dbus.Dictionary(c, signature="sv"),))
        out.append(["ok", ""])
    except dbus.exceptions.DBusException as e:
        out.append([e.get_dbus_name(), e.get_dbus_message()])
print(json.dumps(out))
"""


def test_bad_filters_are_refused_with_their_reason(stats):
    """An unprivileged caller's filter with an unknown key, a wrong type or a bad value gets
    InvalidArguments naming what is wrong (the first fault), never rows."""
    w = stats
    r = w.dev_run(["/usr/bin/python3", "-c", BAD_FILTER_PY], user=1000)
    got = json.loads(r.stdout)
    invalid = "org.roam1.Error.InvalidArguments"
    assert got == [
        [invalid, 'Unknown filter "colour" (app, user, link, since, all).'],
        [invalid, "Filter app takes a string."],
        [invalid, "Filter user takes a uid (u)."],
        [invalid, "Filter since takes seconds since the epoch (t)."],
        [invalid, "Filter all takes a boolean."],
        [invalid, 'Invalid link name "a/b".'],
        [invalid, 'Invalid app ID "../etc".'],
        [invalid, 'Invalid app ID "../etc".'],
    ], got


def test_damaged_history_is_reported_and_the_rest_kept(stats):
    """A damaged block of the history file (one series) is skipped and reported at start; the
    file is kept as usage.history.damaged and every other series survives."""
    w = stats
    ca = app_cgroup(w, "org.test.StatsA")
    w.dev_run(["/usr/bin/python3", "-c", UDP_PY, WHOAMI["inet"][4], 3, 100], cgroup=ca)
    wait_for(lambda: owner_total(w, "app:org.test.StatsA")["out"][1] >= 3, 10,
             what="the app counted")
    w.roamd_stop()  # saves
    hist = w.path("var-lib-roam", "usage.history")
    data = bytearray(hist.read_bytes())
    before = {k for k in prom(w)}
    # the first block holds the first series in owner order: app:org.test.StatsA's
    first = data.index(b"RSB1")
    assert b"app:org.test.StatsA" in data[first:first + 64], bytes(data[first:first + 64])
    data[first + 13 + 2] ^= 0x55
    hist.write_bytes(bytes(data))
    # the export of the roamd that stopped still lists the app: only a new one tells
    w.path("var-lib-roam", *PROM).unlink()
    w.roamd_start()
    assert re.search(r"usage\.history: 1 damaged block\(s\) skipped", w.roamd_log())
    assert w.path("var-lib-roam", "usage.history.damaged").read_bytes() == bytes(data)

    def rest_kept():
        after = set(prom(w))
        return {k for k in before if k[0] != "app:org.test.StatsA"} <= after
    wait_for(rest_kept, 10, what="the other series kept")
    assert not any(k[0] == "app:org.test.StatsA" and k[1] == "wifi0" and
                   prom(w)[k][0] >= 3 * 128 for k in prom(w)), prom(w)


# UDP datagrams of 1000 bytes at the IP layer (972 + 28) to the echo server, answers not read
# (they still arrive and count): prints how many were sent, and the first send refused.
FLOOD_PY = r"""
import errno, json, socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.connect((sys.argv[1], 7000))
sent, refused = 0, None
for i in range(int(sys.argv[2])):
    try:
        u.send(b"q" * 972)
        sent += 1
    except OSError as e:
        refused = errno.errorcode[e.errno]
        break
print(json.dumps({"sent": sent, "refused": refused}))
"""
BUDGET_APP = "org.test.StatsQ"
BUDGET_SPAN = 12  # seconds: a period the test sees end without waiting long


def budgets(w):
    return {(b[0], b[1]): b for b in w.call(MANAGER_PATH, "org.roam1.Usage", "GetBudgets")}


def new_periods(w):
    return len(re.findall(r"Budget of %s on metered: a new period starts"
                          % re.escape(BUDGET_APP), w.roamd_log()))


def test_budget_stops_the_app_at_its_limit_and_a_new_period_resets_it(w):
    """A 1 MB budget on metered links (wifi0 marked metered in the configuration) per 12 s
    period: the app's traffic stops at 1 MB (what passed is at most 1 MB and at least 1 MB less
    one packet: the packet that takes the quota to the limit is dropped), the budget
    reads over budget on D-Bus and in `roam stats`, and the next period lets it send again."""
    w.write_config(w.default_config + STATS_CONF +
                   "Budget=%s metered 1M %ds\nBudgetWarning=50%%\n"
                   "Budget=org.test.StatsK any 20k month\n[Metered]\nwifi0=yes\n"
                   % (BUDGET_APP, BUDGET_SPAN))
    w.roamd_restart()
    w.wait_default_state()
    ca = app_cgroup(w, BUDGET_APP)
    try:
        # start right after a period began, so the transfer and the checks fit in it
        (app, links, limit, used, start, end, warn, state) = budgets(w)[(BUDGET_APP, "metered")]
        assert (limit, warn, state) == (1000000, 50, "ok"), budgets(w)
        assert end - start == BUDGET_SPAN
        # The flood must fall inside one period: roamd's own count of new periods, read around
        # it, says whether a boundary fell inside (then the quota was reset mid-flood, and the
        # flood is repeated from the start of the next period), not the test's clock.
        for attempt in range(3):
            n = new_periods(w)
            wait_for(lambda: new_periods(w) > n, BUDGET_SPAN + 5, what="a new budget period")
            n = new_periods(w)
            r = json.loads(w.dev_run(["/usr/bin/python3", "-c", FLOOD_PY, WHOAMI["inet"][4],
                                      3000], cgroup=ca).stdout)
            if new_periods(w) == n:
                break
        else:
            pytest.fail("a budget period boundary fell inside each of three floods")
        # the sender was stopped by the kernel (EPERM from the dropped packet), not by itself
        assert r["refused"] == "EPERM" and 450 <= r["sent"] < 1000, r
        b = budgets(w)[(BUDGET_APP, "metered")]
        assert b[3] == 1000000 and b[7] == "over", b

        # what passed, as counted (after the budget's chain): at most 1 MB, at least 1 MB less
        # one packet
        def passed():
            t = owner_total(w, "app:" + BUDGET_APP)
            return t["in"][0] + t["out"][0]
        wait_for(lambda: passed() > 1000000 - 1000, 10, what="the passed bytes counted")
        assert 1000000 - 1000 < passed() <= 1000000, passed()
        out = w.dev_run([ROAM, "stats", "--app", BUDGET_APP]).stdout
        assert re.search(r"^%s\s+metered\s+1\.0 MB of 1\.0 MB\s.*over budget"
                         % re.escape(BUDGET_APP), out, re.M), out
        assert re.search(r"Budget of %s on metered: over budget" % re.escape(BUDGET_APP),
                         w.roamd_log())
        # still stopped
        r = json.loads(w.dev_run(["/usr/bin/python3", "-c", FLOOD_PY, WHOAMI["inet"][4], 3],
                                 cgroup=ca).stdout)
        assert r == {"sent": 0, "refused": "EPERM"}, r

        # the next period: the app sends and gets its answers again
        n = new_periods(w)
        wait_for(lambda: new_periods(w) > n, BUDGET_SPAN + 5, what="the next budget period")
        # (UDP_PY fails on a refused send or a missing answer)
        got = int(w.dev_run(["/usr/bin/python3", "-c", UDP_PY, WHOAMI["inet"][4], 5, 100],
                            cgroup=ca).stdout)
        assert got > 0, got
        b = budgets(w)[(BUDGET_APP, "metered")]
        assert b[7] == "ok" and 0 < b[3] < 2000, b

        # a budget used up stays used up across a restart (the kernel kept its quota)
        ck = app_cgroup(w, "org.test.StatsK")
        r = json.loads(w.dev_run(["/usr/bin/python3", "-c", FLOOD_PY, WHOAMI["inet"][4], 100],
                                 cgroup=ck).stdout)
        # 1000 bytes a datagram, and the answers: at most 20 pass (a kernel may let the one
        # that lands exactly on the limit through)
        assert r["refused"] == "EPERM" and 5 <= r["sent"] <= 20, r
        w.roamd_restart()
        w.wait_default_state()
        b = budgets(w)[("org.test.StatsK", "any")]
        assert b[3] == 20000 and b[7] == "over", b
        r = json.loads(w.dev_run(["/usr/bin/python3", "-c", FLOOD_PY, WHOAMI["inet"][4], 3],
                                 cgroup=ck).stdout)
        assert r == {"sent": 0, "refused": "EPERM"}, r
    finally:
        for rel in (ca, "%s/app-org.test.StatsK.scope" % ROAM_SLICE):
            d = w.cgroup / rel
            if d.exists():
                (d / "cgroup.kill").write_text("1")
                wait_for(lambda: not (d / "cgroup.procs").read_text().strip(), 5, what="empty")
                d.rmdir()


def test_counters_of_a_removed_link_are_dropped_and_its_history_kept(stats):
    """A link that goes (a VPN, a tethered phone: each comes back with a new ifindex) leaves
    no element in the kernel's set and no baseline entry, while its history stays."""
    w = stats
    ca = app_cgroup(w, "org.test.StatsL")
    w.dev_run(["ip", "link", "add", "tmpusage0", "type", "veth", "peer", "name", "tmpusage1"])
    try:
        w.dev_run(["ip", "addr", "add", "198.51.100.1/24", "dev", "tmpusage0"])
        w.dev_run(["ip", "link", "set", "tmpusage0", "up"])
        w.dev_run(["ip", "link", "set", "tmpusage1", "up"])
        ifindex = int(w.dev_run(["cat", "/sys/class/net/tmpusage0/ifindex"]).stdout)
        # UDP to a neighbour that never answers: counted in the output hook all the same
        w.dev_run(["/usr/bin/python3", "-c",
                   "import socket; u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
                   "[u.sendto(b'l' * 72, ('198.51.100.2', 9)) for i in range(4)]"], cgroup=ca)

        def elements():
            out = w.dev_run(["nft", "list", "set", "inet", "usage_by_roamd", "stats"]).stdout
            return re.findall(r'\. "?(?:tmpusage0|%d)"? \.' % ifindex, out)
        wait_for(lambda: owner_total(w, "app:org.test.StatsL")["out"][1] >= 1, 10,
                 what="the app counted on the new link")
        assert elements(), w.dev_run(["nft", "list", "set", "inet", "usage_by_roamd",
                                      "stats"]).stdout
    finally:
        w.dev_run(["ip", "link", "del", "tmpusage0"], check=False)
    wait_for(lambda: not elements(), 10, what="the removed link's elements dropped")
    t = owner_total(w, "app:org.test.StatsL")
    assert t["out"][0] >= 100, t  # the history keeps what it sent


REBOOT_APP = "org.test.StatsV"
REBOOT_KEY = REBOOT_APP + " any 20000 month"  # the budget's key in the saved state
HISTORY = ("var-lib-roam", "usage.history")


def _varint(data, pos):
    v = shift = 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def _put_varint(v):
    out = bytearray()
    while True:
        b, v = v & 0x7f, v >> 7
        out.append(b | 0x80 if v else b)
        if not v:
            return bytes(out)


def saved_budgets(w):
    """{key: (period start, used, block offset)} from the budget blocks (type 3) of the
    history file, as docs/stats.md describes them."""
    try:
        data = w.path(*HISTORY).read_bytes()
    except FileNotFoundError:
        return {}
    res, pos = {}, 8
    while pos + 13 <= len(data) and data[pos:pos + 4] == b"RSB1":
        t, n = data[pos + 4], int.from_bytes(data[pos + 5:pos + 9], "little")
        if t == 3:
            klen, p = _varint(data, pos + 13)
            key = data[p:p + klen].decode()
            start, p = _varint(data, p + klen)
            used, _ = _varint(data, p)
            res[key] = (start, used, pos)
        pos += 13 + n
    return res


def rewrite_budget(w, key, start=None, damage=False):
    """The saved budget block of key with another period start (its CRC made right), or
    damaged (one byte of its key flipped, the CRC left as it was)."""
    data = w.path(*HISTORY).read_bytes()
    _, used, pos = saved_budgets(w)[key]
    n = int.from_bytes(data[pos + 5:pos + 9], "little")
    payload = bytearray(data[pos + 13:pos + 13 + n])
    if damage:
        payload[3] ^= 0x20
        crc = data[pos + 9:pos + 13]
    else:
        k = key.encode()
        payload = bytearray(_put_varint(len(k)) + k + _put_varint(start) + _put_varint(used))
        crc = zlib.crc32(b"\x03" + payload).to_bytes(4, "little")
    block = b"RSB1\x03" + len(payload).to_bytes(4, "little") + crc + payload
    w.path(*HISTORY).write_bytes(data[:pos] + block + data[pos + 13 + n:])


def flood(w, cgroup, n):
    return json.loads(w.dev_run(["/usr/bin/python3", "-c", FLOOD_PY, WHOAMI["inet"][4], n],
                                cgroup=cgroup).stdout)


def test_budget_use_survives_a_reboot(w):
    """The budget table does not survive a reboot; the history file keeps each budget's use of
    its period. A used-up budget whose table is gone (deleted after a kill -9: a reboot, as far
    as budgets go) is still used up when roamd starts again, and the app's traffic still
    stopped; a saved use of an earlier period is not carried into this one; a damaged budget
    block is reported and the budget starts from what the kernel says."""
    w.write_config(w.default_config + STATS_CONF + "Budget=%s any 20k month\n" % REBOOT_APP)
    w.roamd_restart()
    w.wait_default_state()
    cv = app_cgroup(w, REBOOT_APP)
    try:
        r = flood(w, cv, 100)
        assert r["refused"] == "EPERM" and 5 <= r["sent"] <= 20, r
        # saved at the next flush
        wait_for(lambda: saved_budgets(w).get(REBOOT_KEY, (0, 0))[1] == 20000, 10,
                 what="the budget's use saved")
        start = saved_budgets(w)[REBOOT_KEY][0]
        assert budgets(w)[(REBOOT_APP, "any")][4] == start

        w.roamd_kill9()
        w.dev_run(["nft", "delete", "table", "inet", "budget_by_roamd"])
        n_over = len(re.findall(r"Budget of %s on any: over budget" % re.escape(REBOOT_APP),
                                w.roamd_log()))
        w.roamd_start()
        w.wait_default_state()
        app_cgroup(w, REBOOT_APP)
        b = budgets(w)[(REBOOT_APP, "any")]
        assert b[3] == 20000 and b[7] == "over", b
        log = w.roamd_log()
        assert re.search(r"Budget of %s on any: the budget table was gone \(a reboot\): 20000 of "
                         r"20000 bytes used this period, as saved" % re.escape(REBOOT_APP), log)
        assert len(re.findall(r"Budget of %s on any: over budget" % re.escape(REBOOT_APP),
                              log)) == n_over + 1, log
        # the kernel's new quota starts used up: the app is still stopped
        quota = w.dev_run(["nft", "list", "table", "inet", "budget_by_roamd"]).stdout
        assert re.search(r"over 20000 bytes used 20000 bytes", quota), quota
        assert flood(w, cv, 3) == {"sent": 0, "refused": "EPERM"}

        # the saved use of an earlier period: this period starts at zero
        w.roamd_stop()
        assert saved_budgets(w)[REBOOT_KEY][:2] == (start, 20000)
        rewrite_budget(w, REBOOT_KEY, start=start - 86400)
        w.dev_run(["nft", "delete", "table", "inet", "budget_by_roamd"])
        w.roamd_start()
        w.wait_default_state()
        app_cgroup(w, REBOOT_APP)
        assert re.search(r"Budget of %s on any: the saved use \(20000 bytes\) is of an earlier "
                         r"period; this one starts at zero" % re.escape(REBOOT_APP),
                         w.roamd_log())
        b = budgets(w)[(REBOOT_APP, "any")]
        assert b[3] == 0 and b[7] == "ok", b
        r = flood(w, cv, 3)
        assert r == {"sent": 3, "refused": None}, r
        wait_for(lambda: budgets(w)[(REBOOT_APP, "any")][3] >= 3000, 10,
                 what="the sends counted in the new quota")
        used = budgets(w)[(REBOOT_APP, "any")][3]

        # a damaged budget block, the table there (a plain restart): reported, the kernel's
        # use stands, roamd runs
        w.roamd_stop()
        assert saved_budgets(w)[REBOOT_KEY][1] == used
        rewrite_budget(w, REBOOT_KEY, damage=True)
        w.roamd_start()
        w.wait_default_state()
        assert re.search(r"usage\.history: 1 damaged block\(s\) skipped", w.roamd_log())
        assert w.roamd_running()
        b = budgets(w)[(REBOOT_APP, "any")]
        assert b[3] == used and b[7] == "ok", (b, used)

        # damaged again, and the table gone: the budget starts from zero, as the kernel says
        w.roamd_stop()
        rewrite_budget(w, REBOOT_KEY, damage=True)
        w.dev_run(["nft", "delete", "table", "inet", "budget_by_roamd"])
        n_bad = len(re.findall(r"usage\.history: 1 damaged block\(s\) skipped", w.roamd_log()))
        w.roamd_start()
        w.wait_default_state()
        assert len(re.findall(r"usage\.history: 1 damaged block\(s\) skipped",
                              w.roamd_log())) == n_bad + 1
        b = budgets(w)[(REBOOT_APP, "any")]
        assert b[3] == 0 and b[7] == "ok", b
    finally:
        d = w.cgroup / cv
        if d.exists():
            (d / "cgroup.kill").write_text("1")
            wait_for(lambda: not (d / "cgroup.procs").read_text().strip(), 5, what="empty")
            d.rmdir()


def test_state_files_are_private_and_old_ones_made_private(stats):
    """usage.history, apps.state and locations.state are written 0600 (the bus's read-usage
    decides who sees usage, not the file mode); files an older roamd left 0644 are made
    private at start, with a line in the log. The Prometheus export (every user's usage too)
    is no more readable by every user: 0600 while there is no prometheus group (this one)."""
    w = stats
    lib = w.path("var-lib-roam")
    files = ("usage.history", "apps.state", "locations.state")
    try:
        w.call(MANAGER_PATH, MANAGER_IFACE, "SetAppPolicy", "sa{ss}",
               ("org.test.StatsP", {"access": "deny"}))
        w.call(MANAGER_PATH, MANAGER_IFACE, "SetLocation", "ss", ("wifi0", "public"))
        wait_for(lambda: all((lib / f).exists() for f in files) and (lib / PROM[0]).exists(),
                 10, what="the state files written")
        for f in files:
            assert (lib / f).stat().st_mode & 0o777 == 0o600, (f, oct((lib / f).stat().st_mode))
        st = (lib / PROM[0]).stat()
        assert (st.st_mode & 0o777, st.st_uid, st.st_gid) == (0o600, 0, 0), st
        w.roamd_stop()
        for f in files:
            os.chmod(lib / f, 0o644)
        w.roamd_start()
        for f in files:
            assert (lib / f).stat().st_mode & 0o777 == 0o600, (f, oct((lib / f).stat().st_mode))
            assert re.search(r"/var/lib/roam/%s was readable by other users \(mode 0644\); "
                             r"it is now private to root \(mode 0600\)" % re.escape(f),
                             w.roamd_log()), f
        # what was saved is still in force after the restart
        p = w.call(w.call(MANAGER_PATH, MANAGER_IFACE, "GetApp", "s", ["org.test.StatsP"]),
                   PROPS_IFACE, "Get", "ss", ("org.roam1.App", "Access"))
        assert p == "deny", p
    finally:
        w.roamd_stop()
        for f in ("apps.state", "locations.state"):
            if (lib / f).exists():
                (lib / f).unlink()
        w.roamd_start()


def test_prometheus_export_readable_by_the_prometheus_group_only(stats):
    """The device gets a prometheus group (the one Debian's prometheus-node-exporter runs
    as): the export, rewritten at every flush, becomes 0640 root:prometheus, never readable
    by every user; the group gone, 0600 root:root again."""
    w = stats
    path = w.path("var-lib-roam", *PROM)
    gid = 4242

    def mode_owner():
        try:
            st = path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mode & 0o777, st.st_uid, st.st_gid)

    wait_for(lambda: mode_owner() == (0o600, 0, 0), 10, what="the export, root's only")
    # the device's /etc is its own (an overlay): the host's groups stay as they are
    w.dev("sh", "-c", "echo prometheus:x:%d: >>/etc/group" % gid)
    try:
        wait_for(lambda: mode_owner() == (0o640, 0, gid), 10,
                 what="the export, 0640 root:prometheus")
    finally:
        w.dev("sed", "-i", "/^prometheus:x:%d:$/d" % gid, "/etc/group")
    wait_for(lambda: mode_owner() == (0o600, 0, 0), 10, what="the export, root's only again")
