# SPDX-License-Identifier: LGPL-2.1-or-later
"""roamd's connectivity verdicts in every network of the world, per address family: the home
network (online), the living room (local), the dead network (offline), the cafe (captive
portal, RFC 8908 API, login), the silent gateway (offline) and the network that blocks HTTPS
(partial); two networks on two links at once, moves between them, a carrier cut, a slow
uplink and a VPN probed through its own routing table. Each test also checks, with plain
tools on the device, that the network it uses behaves as it claims."""
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from roamworld import (CAFE_API_URL, CAFE_LOGIN_URL, CAFE_PORTAL_URL, LINK_IFACE, WAIT,
                       Monitor, dns_query, lease_matches, link_addrs, wait_for)

WORLD = "wconn"

# A carrier cut shows as offline at once (docs/connectivity.md): the tests wait for it
# functionally (woken by roamd's signals); how fast is bench/bench_verdict.py's business.
WITHIN = WAIT
# A move means a new lease (DHCPv4, RA, DHCPv6) and then a probe round. The silent gateway's
# round ends only when DNS (5 s) and the ping (2 s) have timed out.
AFTER_MOVE = 30

ONLINE = ("online", "ok")
LOCAL = ("local", "http-failed")
CAPPORT = ("portal", "capport")
SILENT = ("offline", "gateway-unreachable")
PARTIAL = ("partial", "https-failed")


@pytest.fixture(autouse=True)
def needs_probes(world):
    if not world.probes:
        pytest.skip("this roamd has no connectivity probes")


def verdicts(l):
    return (l["Connectivity4"], l["ConnectivityReason4"],
            l["Connectivity6"], l["ConnectivityReason6"])


def wait_verdict(w, name, v4, v6=None, network=None, timeout=AFTER_MOVE):
    """Wait until link `name` has verdict v4 for IPv4 and v6 (default: the same) for IPv6,
    and, when `network` is given, that network's lease."""
    want = tuple(v4) + tuple(v6 or v4)
    last = {}

    def ok(l):
        last["v"] = verdicts(l)
        return verdicts(l) == want and (network is None or lease_matches(l, network))
    try:
        return w.wait_link(name, ok, timeout=timeout)
    except TimeoutError as e:
        raise TimeoutError("%s: wanted %s%s, last %s" % (
            name, want, " in %s" % network if network else "", last.get("v"))) from e


def reprobe(w, name):
    w.call(w.link(name)["_path"], LINK_IFACE, "Reprobe")


def curl(w, ifname, *args, check=False):
    """curl on the device through one link; returns (exit code, stdout)."""
    r = w.dev("curl", "-sS", "-m", "5", "--interface", ifname, *args, check=check)
    return r.returncode, r.stdout


def rtts(w, target, count=3):
    r = w.dev("ping", "-n", "-c", count, "-i", "0.2", "-W", "3", target, check=False)
    return [float(x) for x in re.findall(r"time=([0-9.]+) ms", r.stdout)]


def test_home_living_room_and_dead_network(w):
    wifi = wait_verdict(w, "wifi0", ONLINE)
    assert wifi["Connectivity"] == "online" and wifi["ConnectivityReason"] == "ok"
    assert wifi["PortalURL"] == "" and wifi["CaptivePortal"] == {}
    assert wifi["CaptivePortalURL"] == ""
    # the living room: its DNS and gateway answer, the internet is refused (ICMP)
    wait_verdict(w, "cell0", LOCAL)
    eth = wait_verdict(w, "eth0", ("offline", "no-address"), ("offline", "link-local-only"))
    assert eth["Connectivity"] == "offline"
    m = w.manager()
    assert m["State"] == "online" and m["BestLink"] == wifi["_path"]


def test_cafe_next_to_home_login_and_move(w):
    pid = w.roamd_pid()
    wifi_path = w.link("wifi0")["_path"]
    w.move("eth0", "cafe")
    eth = wait_verdict(w, "eth0", CAPPORT, network="cafe")
    assert eth["Connectivity"] == "portal" and eth["ConnectivityReason"] == "capport"
    assert eth["CaptivePortalURL"] == CAFE_API_URL
    assert eth["PortalURL"] == CAFE_PORTAL_URL
    cp = eth["CaptivePortal"]
    assert cp["Captive"] is True and cp["UserPortalURL"] == CAFE_PORTAL_URL, cp
    assert "Error" not in cp, cp
    # two links, two networks, each its own verdict; the best link stays at home
    wait_verdict(w, "wifi0", ONLINE, network="home", timeout=5)
    m = w.manager()
    assert m["State"] == "online" and m["BestLink"] == wifi_path

    # what the cafe does, seen with plain tools through eth0
    assert dns_query(w, "192.0.2.129", "probe.roam.test", "A") == (0, ["192.0.2.129"])
    assert dns_query(w, "2001:db8:3::1", "probe.roam.test", "AAAA") == (0, ["2001:db8:3::1"])
    assert dns_query(w, "192.0.2.129", "anything.example", "A") == (0, ["192.0.2.129"])
    rc, out = curl(w, "eth0", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}",
                   "--resolve", "probe.roam.test:80:192.0.2.129",
                   "http://probe.roam.test/roam-probe")
    assert (rc, out) == (0, "302 " + CAFE_LOGIN_URL)
    rc, out = curl(w, "eth0", "-i", "http://[2001:db8:3::1]/login")
    assert rc == 0 and out.startswith("HTTP/1.1 200") and "<form" in out
    assert re.search(r"(?mi)^content-type: text/html", out)
    ca = str(w.path("ca", "ca.pem"))
    rc, out = curl(w, "eth0", "-i", "--cacert", ca, "--resolve", "cafe.test:443:192.0.2.129",
                   CAFE_API_URL)
    assert rc == 0 and re.search(r"(?mi)^content-type: application/captive\+json", out), out
    assert json.loads(out.split("\n\n", 1)[1])["captive"] is True
    # nothing is forwarded before login
    rc, _ = curl(w, "eth0", "-m", "1", "http://203.0.113.10/roam-probe")
    assert rc != 0

    # log in: the cafe forwards, its DNS tells the truth, its API says "not captive"
    w.cafe_login()
    reprobe(w, "eth0")
    eth = wait_verdict(w, "eth0", ONLINE, timeout=10)
    assert eth["PortalURL"] == ""
    assert eth["CaptivePortal"].get("Captive") is False, eth["CaptivePortal"]
    assert dns_query(w, "192.0.2.129", "probe.roam.test", "A") == (0, ["203.0.113.10"])
    w.cafe_logout()
    reprobe(w, "eth0")
    wait_verdict(w, "eth0", CAPPORT, timeout=10)

    # from the cafe to the home network on the same link: a new verdict, same roamd
    w.move("eth0", "home")
    eth = wait_verdict(w, "eth0", ONLINE, network="home")
    assert eth["PortalURL"] == "" and eth["CaptivePortalURL"] == ""
    assert eth["CaptivePortal"] == {}
    assert w.roamd_pid() == pid, "roamd restarted"


def test_probe_duration_is_the_rounds_own(w):
    """ProbeDuration is how long the last round took, even on a link with a captive portal
    API (whose fetch, once done, once kept every later round from starting its clock: the
    history read "took 451.2 s", the time since the first round)."""
    w.move("eth0", "cafe")
    wait_verdict(w, "eth0", CAPPORT, network="cafe")
    ends = []
    for _ in range(3):
        before = w.link("eth0")["LastProbe"]
        reprobe(w, "eth0")
        eth = w.wait_link("eth0", lambda l: l["LastProbe"] > before and verdicts(l) == CAPPORT * 2,
                          timeout=10, what="a new probe round on eth0")
        ends.append((eth["LastProbe"], eth["ProbeDuration"]))
    for (end0, _), (end1, took) in zip(ends, ends[1:]):
        # a round that began after the last one ended took less than the time between ends:
        # roamd's own figures compared with each other, not the test's clock
        assert 0 < took < end1 - end0, ends


def test_silent_gateway_and_https_blocked(w):
    w.move("cell0", "silent")
    w.move("eth0", "httpsblocked")
    # HTTP works, HTTPS is refused by the router
    eth = wait_verdict(w, "eth0", PARTIAL, network="httpsblocked")
    assert eth["Connectivity"] == "partial" and eth["PortalURL"] == ""
    # DHCP gave addresses, routes and DNS servers; then nothing answers
    cell = wait_verdict(w, "cell0", SILENT, network="silent")
    assert cell["Connectivity"] == "offline"
    # the home network on wifi0 is untouched by either
    wait_verdict(w, "wifi0", ONLINE, network="home", timeout=5)

    # the networks, seen with plain tools
    assert curl(w, "eth0", "http://probe.roam.test/roam-probe") == (0, "roam-online\n")
    rc, _ = curl(w, "eth0", "--cacert", str(w.path("ca", "ca.pem")),
                 "https://probe.roam.test/roam-probe")
    assert rc == 7, "HTTPS must be refused in the https-blocked network"
    out = w.dev("/usr/bin/python3", "-c", SILENCE, "cell0", "192.0.2.193", "2001:db8:4::1")
    assert sorted(out.stdout.split()) == sorted(
        "%s:%s:timeout" % (kind, addr) for kind in ("ping", "tcp", "dns")
        for addr in ("192.0.2.193", "2001:db8:4::1")), out.stdout


# Whether a ping, a TCP connection (port 53) and a DNS query to each address through a link
# get any answer within a second, all at once: prints KIND:ADDRESS:timeout (or what happened).
SILENCE = r"""
import socket, subprocess, sys, threading
ifname, addrs = sys.argv[1], sys.argv[2:]
QUERY = bytes.fromhex("123401000001000000000000047465737400" "00010001")
out = []

def probe(kind, addr):
    if kind == "ping":
        r = subprocess.run(["ping", "-n", "-c", "1", "-W", "1", "-I", ifname, addr],
                           capture_output=True)
        out.append("ping:%s:%s" % (addr, "answered" if r.returncode == 0 else "timeout"))
        return
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, ifname.encode())
    s.settimeout(1)
    try:
        if kind == "tcp":
            s.connect((addr, 53))
        else:
            s.sendto(QUERY, (addr, 53))
            s.recv(512)
        res = "answered"
    except socket.timeout:
        res = "timeout"
    except OSError as e:
        res = "errno%d" % e.errno
    out.append("%s:%s:%s" % (kind, addr, res))

ts = [threading.Thread(target=probe, args=(k, a)) for k in ("ping", "tcp", "dns") for a in addrs]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("\n".join(out))
"""


def test_carrier_cut_is_offline_and_recovers(w):
    wifi = wait_verdict(w, "wifi0", ONLINE)
    with w.monitor() as mon:
        cut = time.monotonic()  # orders the signals, times nothing
        w.carrier("wifi0", False)
        # from the carrier event (the reason says so), within a wait far shorter than the
        # next re-check, and announced: a signal after the cut says offline
        wait_verdict(w, "wifi0", ("offline", "no-carrier"), timeout=WITHIN)
        mon.wait_signal(lambda m: (Monitor.properties_changed(m, wifi["_path"]) or {})
                        .get("Connectivity") == "offline", WITHIN, since=cut)
    w.carrier("wifi0", True)
    wait_verdict(w, "wifi0", ONLINE, network="home")


def test_150ms_delay_on_wifi_is_still_online(w):
    wait_verdict(w, "wifi0", ONLINE)
    base = rtts(w, "192.0.2.1")
    assert base, base
    w.delay("wifi0", 150)
    assert w.uplink("wifi0") == ("home", True, 150)
    # the delay line moved wifi0's peer: a new lease, through the delay line
    wait_for(lambda: len(rtts(w, "192.0.2.1", count=2)) == 2, 20, interval=0.2,
             what="the home router answers through the delay line")
    slow = rtts(w, "192.0.2.1")
    # the line adds 150 ms each way: no answer can come sooner (how much later a loaded
    # machine answers is not this test's business)
    assert slow and min(slow) >= 300, slow
    before = w.link("wifi0")["LastProbe"]
    reprobe(w, "wifi0")
    wifi = w.wait_link("wifi0", lambda l: l["LastProbe"] > before and verdicts(l) == ONLINE * 2,
                       timeout=30, what="wifi0 online through the delay line")
    # the round itself went through the delay line (DNS, TCP, TLS, HTTP: several round trips)
    assert wifi["ProbeDuration"] >= 600000, wifi["ProbeDuration"]
    w.delay("wifi0", 0)
    assert w.uplink("wifi0") == ("home", True, 0)
    wait_for(lambda: (lambda r: r and min(r) < 300)(rtts(w, "192.0.2.1", count=2)), 20,
             interval=0.2, what="no delay any more")


def test_vpn_is_probed_through_its_own_table(w):
    """A VPN has no default route in the main table (its default is in roamd's VPN slot
    table): roamd probes it with the slot's mark and gives it a real verdict, not
    "offline, no default route"."""
    wait_verdict(w, "wifi0", ONLINE)
    dnslog = w.path("vpn-dnsmasq.log")
    before = dnslog.read_text() if dnslog.exists() else ""
    w.vpn_up()
    try:
        assert w.dev("ip", "route", "show", "default", "dev", "vpn0").stdout.strip() == ""
        vpn = wait_verdict(w, "vpn0", ONLINE)
        assert vpn["Bearer"] == "vpn" and vpn["Gateways"] == []
        assert vpn["Connectivity"] == "online" and vpn["LastProbe"] > 0
        # The probes went through the VPN: its own DNS (reachable only through the tunnel)
        # was asked for the check host, from the VPN client's address.
        asked = dnslog.read_text()[len(before):]
        assert re.search(r"query\[A\] probe\.roam\.test from 203\.0\.113\.66", asked), asked
        # wifi0 keeps its own verdict: the VPN's probes did not replace its route.
        assert verdicts(w.link("wifi0")) == ONLINE * 2
    finally:
        w.vpn_down()


# The home network swapped, under the same addressing, for a captive one: the router gets
# another MAC address, sends the LAN's HTTP to a portal (every path: 302) and forwards nothing.
SWAPPED_MAC = "02:00:5e:10:02:27"
SWAPPED_NFT = """
table inet swapped {
        chain lan_http {
                type nat hook prerouting priority dstnat; policy accept;
                iifname "br0" meta nfproto ipv4 tcp dport 80 dnat ip to 192.0.2.1:8027
                iifname "br0" meta nfproto ipv6 tcp dport 80 dnat ip6 to [2001:db8:1::1]:8027
        }
        chain lan_out {
                type filter hook forward priority filter; policy accept;
                iifname "br0" oifname != "br0" drop
        }
}
"""


def other_network_same_addressing(w, tmp_path):
    """The home router becomes a captive portal with another MAC address, the same addresses,
    routes and DNS and no carrier loss: wifi0 must be judged again (portal)."""
    wait_verdict(w, "wifi0", ONLINE)
    home_id = w.wait_link("wifi0", lambda l: l["NetworkId"].startswith("wifi:gw="),
                          what="wifi0's home identity")["NetworkId"]
    old_mac = json.loads(w.exec("home", "ip", "-j", "link", "show", "br0").stdout)[0]["address"]
    pidfile = tmp_path / "portal.pid"
    portal = subprocess.Popen(
        ["nsenter", "--net=/run/netns/roam-%s-home" % w.name, "--", "/usr/bin/python3",
         str(Path(__file__).parent / "httpd.py"), "--port", "8027", "--pidfile", str(pidfile),
         "--redirect", "http://login.home.test/"])
    try:
        wait_for(pidfile.exists, what="the portal's HTTP server")
        w.exec("home", "nft", "-f", "-", input=SWAPPED_NFT)
        w.exec("home", "ip", "link", "set", "br0", "address", SWAPPED_MAC)
        # the device learns the new gateway from its next packet
        w.dev("ip", "neigh", "flush", "dev", "wifi0")
        w.dev("ping", "-n", "-c", "1", "-W", "2", "-I", "wifi0", "192.0.2.1", check=False)
        l = w.wait_link("wifi0", lambda l: l["NetworkId"] not in ("", home_id),
                        what="wifi0's new identity")
        assert l["NetworkId"] == "wifi:gw=" + SWAPPED_MAC
        l = w.wait_link("wifi0", lambda l: l["Connectivity4"] == "portal", timeout=WAIT,
                        what="wifi0 behind the portal")
        assert l["ConnectivityReason4"].startswith("portal")
    finally:
        portal.kill()
        portal.wait()
        w.exec("home", "nft", "delete", "table", "inet", "swapped", check=False)
        w.exec("home", "ip", "link", "set", "br0", "address", old_mac, check=False)
        w.dev("ip", "neigh", "flush", "dev", "wifi0", check=False)
        w.dev("ping", "-n", "-c", "1", "-W", "2", "-I", "wifi0", "192.0.2.1", check=False)
    # home again: probed again too
    wait_verdict(w, "wifi0", ONLINE, timeout=WAIT)


def test_other_network_same_addressing_reprobes(w, tmp_path):
    """Another network with the same addresses, routes and DNS and no carrier loss (home ->
    a captive café on the same /24): only the network's identity (its gateway's MAC) tells.
    roamd probes again at once instead of reading online until the slow re-check (300 s)."""
    other_network_same_addressing(w, tmp_path)


def test_other_network_reprobes_without_firewall(w, tmp_path):
    """The network's identity is a fact of the link (issue 42), not the firewall's: with
    [Firewall] Enable=no the same swap is still seen (Link.NetworkId) and probed again."""
    w.write_config(w.default_config + "[Firewall]\nEnable=no\n")
    w.roamd_restart()
    try:
        w.wait_default_state()
        other_network_same_addressing(w, tmp_path)
    finally:
        w.write_config(w.default_config)
        w.roamd_restart()
        w.wait_default_state()


# ---- networks that fool a single check (issue 31; docs/connectivity.md, "Networks that
# lie") ----
# The home router turned into a middlebox: the LAN's HTTP (and, with tls, HTTPS) to anywhere
# is sent (nft DNAT) to an httpd.py of its own on ports 8031 / 8431.
MIDDLEBOX_NFT = """
table inet middlebox {
        chain lan {
                type nat hook prerouting priority dstnat; policy accept;
                iifname "br0" meta nfproto ipv4 tcp dport 80 dnat ip to 192.0.2.1:8031
                iifname "br0" meta nfproto ipv6 tcp dport 80 dnat ip6 to [2001:db8:1::1]:8031
%s        }
}
"""
MIDDLEBOX_TLS = """\
                iifname "br0" meta nfproto ipv4 tcp dport 443 dnat ip to 192.0.2.1:8431
                iifname "br0" meta nfproto ipv6 tcp dport 443 dnat ip6 to [2001:db8:1::1]:8431
"""
HOME_LOGIN = "http://login.home.test/"


class Middlebox:
    """httpd.py ARGS in the home router's namespace, the LAN's port 80 (and 443 with tls)
    sent to it; its request log in .log."""

    def __init__(self, w, tmp_path, args, tls=False):
        self.w = w
        self.log = tmp_path / "middlebox.log"
        pidfile = tmp_path / "middlebox.pid"
        extra = []
        if tls:
            # the cafe's certificate, from the world's CA: valid, but not for probe.roam.test
            extra = ["--tls-port", "8431", "--cert", str(w.path("ca", "cafe.pem")),
                     "--key", str(w.path("ca", "cafe.key"))]
        self.proc = subprocess.Popen(
            ["nsenter", "--net=/run/netns/roam-%s-home" % w.name, "--", "/usr/bin/python3",
             str(Path(__file__).parent / "httpd.py"), "--port", "8031", "--pidfile",
             str(pidfile), *extra, *args], stderr=open(self.log, "w"))
        wait_for(pidfile.exists, what="the middlebox's HTTP server")
        w.exec("home", "nft", "-f", "-", input=MIDDLEBOX_NFT % (MIDDLEBOX_TLS if tls else ""))

    def requests(self, path="/roam-probe"):
        return [l for l in self.log.read_text().splitlines() if '"GET %s' % path in l]

    def close(self):
        self.w.exec("home", "nft", "delete", "table", "inet", "middlebox", check=False)
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def middlebox(w, tmp_path):
    boxes = []

    def start(args, tls=False):
        boxes.append(Middlebox(w, tmp_path, args, tls))
        return boxes[-1]
    try:
        yield start
    finally:
        for b in boxes:
            b.close()


def test_caching_proxy_is_not_online(w, middlebox):
    """A transparent proxy answers the check page from its cache (ignoring no-cache) while the
    internet is gone: HTTP "works", nothing else does. partial, reason http-cached; and a cache
    that obeys no-cache answers 504 (its upstream is gone): local, not a portal."""
    wait_verdict(w, "wifi0", ONLINE)
    box = middlebox(["--route", "/roam-probe=roam-online\\n", "--header", "Age: 3600",
                     "--log-header", "Cache-Control", "--log-header", "Pragma"])
    w.internet(False)
    reprobe(w, "wifi0")
    wait_verdict(w, "wifi0", ("partial", "http-cached"), timeout=WAIT)
    reprobe(w, "wifi0")
    wait_for(lambda: len(box.requests()) >= 4, what="a second round through the cache")
    wait_verdict(w, "wifi0", ("partial", "http-cached"), timeout=WAIT)
    # the probes asked caches not to answer, each with a query no cache has seen
    reqs = box.requests()
    assert all("Cache-Control=no-cache Pragma=no-cache" in r for r in reqs), reqs
    nonces = [re.search(r"\?roam-nonce=([0-9a-f]{16}) ", r).group(1) for r in reqs]
    assert len(set(nonces)) == len(nonces), reqs

    box.close()
    middlebox(["--fail-status", "504"])
    reprobe(w, "wifi0")
    wait_verdict(w, "wifi0", ("local", "http-failed"), timeout=WAIT)


def test_tls_intercepting_portal(w, middlebox):
    """A portal that redirects HTTP and answers HTTPS itself, with a certificate that is not
    the check host's: portal, and the certificate is the reason (not "partial", not a failed
    probe)."""
    wait_verdict(w, "wifi0", ONLINE)
    middlebox(["--redirect", HOME_LOGIN], tls=True)
    reprobe(w, "wifi0")
    wifi = wait_verdict(w, "wifi0", ("portal", "portal-certificate"), timeout=WAIT)
    assert wifi["PortalURL"] == HOME_LOGIN
    # what the network does, seen with curl: the certificate does not validate
    rc, _ = curl(w, "wifi0", "--cacert", str(w.path("ca", "ca.pem")),
                 "https://probe.roam.test/roam-probe")
    assert rc == 60


GARDEN_URL = "http://*.probe.roam.test/roam-probe"


def test_walled_garden(w, middlebox):
    """A walled garden lets the check host through (HTTP by name, HTTPS by address) and
    redirects every other name: one fixed check says online; with GardenURL= (a random name
    per probe under the check's domain) roamd says portal, reason walled-garden."""
    wait_verdict(w, "wifi0", ONLINE)
    box = middlebox(["--route", "/roam-probe=roam-online\\n", "--allow-host", "probe.roam.test",
                     "--redirect", HOME_LOGIN, "--log-header", "Host"])
    reprobe(w, "wifi0")
    wait_for(lambda: len(box.requests()) >= 2, what="a round through the garden")
    # the classic check is fooled
    wait_verdict(w, "wifi0", ONLINE, timeout=WAIT)
    w.write_config(w.default_config.replace("[Probe]\n", "[Probe]\nGardenURL=%s\n" % GARDEN_URL))
    w.roamd_restart()
    wifi = wait_verdict(w, "wifi0", ("portal", "walled-garden"), timeout=WAIT)
    assert wifi["PortalURL"] == HOME_LOGIN
    hosts = re.findall(r" Host=(\S+)", "\n".join(box.requests()))
    garden = [h for h in hosts if h != "probe.roam.test"]
    assert garden and all(re.fullmatch(r"r[0-9a-f]{12}\.probe\.roam\.test", h) for h in garden)
    # no garden: the random name reaches the check server too, online
    box.close()
    reprobe(w, "wifi0")
    wait_verdict(w, "wifi0", ONLINE, timeout=WAIT)


@pytest.mark.parametrize("uplink,network", [("eth0", "home"), ("wifi0", "mobile")])
def test_one_dhcp_exchange_is_one_probe_round(w, uplink, network):
    """A new lease is a burst of changes (lease file, address, route, per family) and may
    follow a carrier cut that leaves the last network's addresses in place for a moment:
    the check server sees one probe round per family for it, an HTTP and an HTTPS request
    each, not one per step of the burst. eth0: a first lease on a link that had none;
    wifi0: another network's lease replacing the home one."""
    if uplink == "wifi0":
        wait_verdict(w, uplink, ONLINE, network="home")
    else:
        wait_verdict(w, uplink, ("offline", "no-address"), ("offline", "link-local-only"))
    since = w.check_log_size()
    w.move(uplink, network)
    l = wait_verdict(w, uplink, ONLINE, network=network)
    mine = link_addrs(l)
    assert any(":" in a for a in mine) and any("." in a for a in mine), l["Addresses"]

    def from_link():
        return [r for r in w.check_requests(since) if r[0] in mine]
    # the server logs a request after answering it: wait for both families' pairs
    wait_for(lambda: sum(1 for c, _ in from_link() if ":" in c) >= 2 and
             sum(1 for c, _ in from_link() if "." in c) >= 2,
             what="both families' probe requests at the check server")
    reqs = from_link()
    v4 = [r for r in reqs if "." in r[0]]
    v6 = [r for r in reqs if ":" in r[0]]
    assert len(v4) == 2 and len(v6) == 2, reqs


# Full-size packets towards the home LAN vanish, without an ICMP error: a path MTU black hole.
# The largest packet through the hole, and how close roamd's search gets (PMTU_STEP).
HOLE_MTU = 1400
MTU_STEP = 8
MTU_HOLE_NFT = """
table inet mtuhole {
        chain bigpackets {
                type filter hook forward priority filter - 1; policy accept;
                oifname "br0" meta length > %d %%sdrop
        }
}
""" % HOLE_MTU
LARGE_URL = "http://probe.roam.test:8032/roam-large"


@pytest.fixture
def large_server(w, tmp_path):
    """A 16 KiB answer at LARGE_URL (a second httpd.py in the internet namespace)."""
    pidfile = tmp_path / "large.pid"
    large = subprocess.Popen(
        ["nsenter", "--net=/run/netns/roam-%s-inet" % w.name, "--", "/usr/bin/python3",
         str(Path(__file__).parent / "httpd.py"), "--port", "8032", "--pidfile", str(pidfile),
         "--route", "/roam-large=" + "x" * 16384], stderr=subprocess.DEVNULL)
    try:
        wait_for(pidfile.exists, what="the large answer's HTTP server")
        yield
    finally:
        w.exec("home", "nft", "delete", "table", "inet", "mtuhole", check=False)
        large.kill()
        large.wait()


def with_large_url(w):
    w.write_config(w.default_config.replace("[Probe]\n", "[Probe]\nLargeURL=%s\n" % LARGE_URL))
    w.roamd_restart()


def test_path_mtu_black_hole(w, large_server):
    """Small packets pass, full-size ones vanish: the check page is small, so the classic
    check says online while every download stalls. With LargeURL= (a 16 KiB answer) roamd
    says partial, reason mtu; without the hole, online again."""
    wait_verdict(w, "wifi0", ONLINE)
    w.exec("home", "nft", "-f", "-", input=MTU_HOLE_NFT % "")
    # the hole, seen with curl: the check page comes, the large answer does not
    assert curl(w, "wifi0", "http://probe.roam.test/roam-probe") == (0, "roam-online\n")
    rc, _ = curl(w, "wifi0", "-m", "2", "-o", "/dev/null", LARGE_URL)
    assert rc == 28
    # the classic check is fooled
    before = w.link("wifi0")["LastProbe"]
    reprobe(w, "wifi0")
    w.wait_link("wifi0", lambda l: l["LastProbe"] > before and verdicts(l) == ONLINE * 2,
                what="a round on wifi0 through the hole")
    with_large_url(w)
    wait_verdict(w, "wifi0", ("partial", "mtu"), timeout=WAIT + 5)
    assert "full-size packets vanish" in w.roamd_log()
    # the working MTU, searched with a clamped TCP MSS: packets of HOLE_MTU bytes pass, one
    # search step more vanish (and no family's search may report what vanishes)
    l = w.wait_link("wifi0", lambda l: l["WorkingMTU4"] and l["WorkingMTU6"],
                    what="the working MTU of both families")
    assert HOLE_MTU - MTU_STEP <= l["WorkingMTU4"] <= HOLE_MTU, l["WorkingMTU4"]
    assert HOLE_MTU - MTU_STEP <= l["WorkingMTU6"] <= HOLE_MTU, l["WorkingMTU6"]
    assert verdicts(l) == ("partial", "mtu") * 2
    # the rounds meanwhile (HTTPS's certificate vanishes in the hole too) kept the reason
    assert "(mtu) -> partial (https-failed)" not in w.roamd_log()
    status = w.status().stdout
    assert re.search(r"Path MTU: +IPv4 %d bytes, IPv6 %d bytes\n" % (
        l["WorkingMTU4"], l["WorkingMTU6"]), status), status
    # no hole: the large answer comes, online, and no working MTU is reported any more
    w.exec("home", "nft", "delete", "table", "inet", "mtuhole")
    reprobe(w, "wifi0")
    l = wait_verdict(w, "wifi0", ONLINE, timeout=WAIT)
    assert (l["WorkingMTU4"], l["WorkingMTU6"]) == (0, 0)


def test_path_mtu_lossy_is_not_a_hole(w, large_server):
    """A lossy link is no black hole: with a tenth of the full-size packets dropped, TCP
    sends them again and every round stays online, never mtu."""
    with_large_url(w)
    wait_verdict(w, "wifi0", ONLINE)
    w.exec("home", "nft", "-f", "-", input=MTU_HOLE_NFT % "numgen random mod 10 == 0 counter ")
    seen, log_at = [], len(w.roamd_log())
    for _ in range(3):
        before = w.link("wifi0")["LastProbe"]
        reprobe(w, "wifi0")
        l = w.wait_link("wifi0", lambda l: l["LastProbe"] > before and
                        "checking" not in verdicts(l), what="a round on wifi0 with loss")
        seen.append(verdicts(l))
    assert seen == [ONLINE * 2] * 3, seen
    assert "full-size packets vanish" not in w.roamd_log()[log_at:]
    # and the loss was real: full-size packets were dropped
    rules = w.exec("home", "nft", "list", "table", "inet", "mtuhole").stdout
    assert int(re.search(r"counter packets (\d+)", rules).group(1)) > 0, rules
