#!/usr/bin/python3
"""Connectivity verdicts, side by side with NetworkManager, and roamd's probe memory.

1. Latency: time from the kernel's carrier-up event to the final verdict, for roamd and for
   NetworkManager (Debian's network-manager, run in the same device namespace with the private
   bus, its own config/state/run directories in a private mount namespace, and its
   connectivity check pointed at the same check server). Networks: open; a café that answers
   HTTP with a 302 and silently drops TCP 443; a portal that answers every request with a 200
   login page and drops 443; HTTP fine, 443 silently dropped; open with 150 ms and 300 ms
   one-way delay (tests/servers/delayline.py); and the 302 café again, the device's address
   from DHCP (dnsmasq, rapid commit) whose lease announces the RFC 8908 API (option 114),
   which says captive: roamd with dhcpcd (tests/world's options), NetworkManager with its own
   DHCP client. Elsewhere addresses are static on both sides (the same ones; no DHCP). The
   kernel flushes the neighbour cache when the carrier goes, so every first packet waits for ARP (1 RTT); the bound is then ARP 1 + DNS 1 + TCP 1 + HTTP 1 = 4
   RTT for a portal and 5 RTT (plus TLS 1.3: 1) for online: the issue's 6 RTT from carrier-up
   (DHCP 2, DNS 1, TCP 1, TLS 1, HTTP 1) with DHCP replaced by ARP; the DHCP café adds
   1 (rapid commit, or dhcpcd's INIT-REBOOT request of its lease). Round trips are counted
   against the nominal RTT (2 x the one-way delay); the ping column shows what the delay
   line gives under the machine's load. NetworkManager checks plain HTTP only.
   Issue 31's networks that fool other managers, NetworkManager's verdict recorded right or
   wrong ('!'): class 1, IPv6 only (no IPv4 address or route on either side, the check host
   known by its IPv6 address only; timed in IPv6 on both sides), without and with a DNS64
   (RFC 7050's ipv4only.arpa answered: roamd's Nat64Prefix, and when it had it); class 6, a
   path MTU black hole (the open network where packets over 1400 bytes towards the device
   vanish, no ICMP; roamd with LargeURL=, a 16 KiB answer: partial, reason mtu, then its
   working MTU, and when it had it); class 2, a walled garden (tests/world/httpd.py on the
   gateway as test_connectivity.py's middlebox: the device's HTTP goes to it, it answers the
   check host and redirects every other name; HTTPS passes by address; roamd with
   GardenURL=: portal, walled-garden); class 3, a TLS-intercepting portal (the middlebox
   redirects HTTP and answers HTTPS with the cafe's certificate: portal, portal-certificate);
   class 5, a cache answering the check page with Age, 443 dropped (partial, http-cached);
   class 7, tests/servers/wispr_cafe.py in front of the check server, roamd with a login
   saved with --always (online after its login, timed to online; the portal's yes is shown
   too) and with that login's password no longer accepted (timed to the session's
   `rejected`, with the portal's reply; the verdict stays portal). NetworkManager has no
   WISPr login: it says portal and stays there ('*'). Class 4 (a portal session that
   expires) is bench_expiry.py's.
   Both daemons are timed from their own logs' stamps (roamd with ROAM_LOG_TIME=1), i.e. when
   each decided: NetworkManager's D-Bus connectivity keeps a stale FULL, and timing roamd at
   a bus client alone would charge it dbus-daemon's hop (~1 ms here) that NetworkManager is
   not charged. roamd's PropertiesChanged as a client receives it is shown too.
   Medians of BENCH_REPS (5) repetitions; with BENCH_ROUNDS=N (1), N rounds of them, roamd
   and NetworkManager taking turns in the same world; ratio roamd/NM. Also the CPU time each
   daemon used per carrier cycle (down and up), which the machine's load does not change,
   and the time from the carrier-cut event to the daemon saying so (negative: before `ip
   monitor` printed the event) (roamd: its IPv4 connectivity offline; NetworkManager: the
   device unavailable).
2. Memory: RssAnon of roamd at rest after BENCH_MEM_ROUNDS (1,000) probe rounds on each of 10
   links (HTTP + HTTPS each round), sampled five times on the way: flat or not.

3. What costs what (`memory-parts`, not run by default): RssAnon after 20 rounds on 10 links
   with no probe, HTTP only, HTTP + HTTPS with a one-certificate CA file, with the system's
   CA directory (the default) and with the system's CA bundle as CAFile=, each split into libraries (relocated data of the shared libraries,
   paid before main()), heap and other anonymous maps.

4. The floor (`memory-floor`): RssAnon of bench/mem-floor, a process
   linked against roamd's libraries (all loaded) that does only curl's part of the probe
   rounds, 50 HTTP + HTTPS fetches, split the same way: what no code of roamd's own can go
   below.

5. `ab OLD NEW [ROUNDS]`: two roamd binaries, carrier-up to online on the open network (or
   to the verdict of the network BENCH_AB_NETWORK names, a setup of the table above), the
   two alternating in one world (ROUNDS, default 4, of BENCH_REPS cycles each): medians and
   NEW/OLD.

6. `recheck [OLD]` (issue 45 §2): a re-check of an online link on the open network behind
   the 300 ms one-way delay line, in round trips: roamd's ProbeDuration of a Link.Reprobe
   round, NetworkManager's IPv4 check after its CheckConnectivity (start request to check
   completed, its log's stamps), and with OLD a roamd binary from before a change, in one
   world, taking turns (BENCH_ROUNDS); the check server with TCP Fast Open and without.

7. `phases [ROAMD...]`: where the time from carrier-up to the verdict goes, packet by packet:
   a capture on d0 (tests/integration/capture.py, the kernel's stamps) while each roamd
   binary given (default: the build's) and NetworkManager take turns (BENCH_ROUNDS rounds of
   BENCH_REPS cycles) on the network BENCH_AB_NETWORK names (default opentickets): medians
   from carrier-up of the first packet, the DNS query and answer, the HTTP request and
   answer, the ClientHello, the server's flight, the client's Finished, the last HTTPS bytes
   and the verdict (BENCH_VERBOSE=1: every cycle).

`bench_verdict.py [latency|memory|memory-parts|memory-floor|recheck|phases]` (all but
memory-parts and phases by default). Needs root, NetworkManager for parts 1, 6 and 7
(bench/run installs it)."""
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../tests/integration"))
from minienv import unit_environment, wait_for  # noqa: E402
from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet  # noqa: E402

PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]
TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPS = int(os.environ.get("BENCH_REPS", "5"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1"))
MEM_ROUNDS = int(os.environ.get("BENCH_MEM_ROUNDS", "1000"))
NM = shutil.which("NetworkManager") or "/usr/sbin/NetworkManager"
NM_FULL, NM_PORTAL, NM_NONE = 4, 2, 1

# name, setup, one-way delay, roamd's final verdict, NetworkManager's final connectivity
NETWORKS = [
    ("open", "open", 0, "online", NM_FULL),
    # issue 45: servers that send TLS 1.3 tickets, then answer in pieces without TCP_NODELAY
    ("open, tickets + Nagle", "opentickets", 0, "online", NM_FULL),
    ("cafe 302, 443 dropped", "cafe302", 0, "portal", NM_PORTAL),
    ("200 login page, 443 dropped", "login200", 0, "portal", NM_PORTAL),
    ("HTTP ok, 443 dropped", "nohttps", 0, "partial", NM_FULL),
    ("open, 150 ms one-way", "open", 150, "online", NM_FULL),
    ("open, 300 ms one-way", "open", 300, "online", NM_FULL),
    ("DHCP + RFC 8908 cafe", "capport", 0, "portal", NM_PORTAL),
    # issue 31's networks that fool other managers: NetworkManager's verdict is recorded
    # whether it is right or not (the "NM" column says which)
    ("1 IPv6 only, no NAT64", "v6only", 0, "online", NM_FULL),
    ("1 IPv6 only, NAT64/DNS64", "v6nat64", 0, "online", NM_FULL),
    ("2 walled garden", "garden", 0, "portal", NM_FULL),
    ("3 TLS-intercepting portal", "tlsportal", 0, "portal", NM_PORTAL),
    ("5 caching proxy, 443 dropped", "cache", 0, "partial", NM_FULL),
    ("6 MTU black hole (1400)", "mtuhole", 0, "partial", NM_FULL),
    ("7 WISPr, saved login", "wispr", 0, "online", NM_PORTAL),
    ("7 WISPr, password now wrong", "wisprwrong", 0, "portal", NM_PORTAL),
]
# The family a network's verdict is timed in (else IPv4), and the reason roamd must give.
FAMILY = {"v6only": 6, "v6nat64": 6}
REASON = {"mtuhole": "mtu", "garden": "walled-garden", "tlsportal": "portal-certificate",
          "cache": "http-cached"}
# Rows whose NetworkManager verdict is neither right nor wrong: it has no WISPr login, so it
# says portal (true for it: nobody logs in) for ever while roamd logs in.
NM_NOTE = {"wispr": "*"}
# Middleboxes of classes 2, 3 and 5: tests/world/httpd.py (as tests/world/test_connectivity.py
# runs it) on the gateway, the device's HTTP (and for class 3 HTTPS) to anywhere sent there.
BOX_PORT, BOX_TLS_PORT = 8031, 8431
GARDEN_URL = "http://*.probe.roam.test/roam-probe"
BOX_LOGIN = f"http://{GW_V4}/login"
# Class 7: tests/servers/wispr_cafe.py (test_portal.py's WISPr portal) on the gateway.
WISPR = os.path.join(TOP, "tests/servers/wispr_cafe.py")
WISPR_USER, WISPR_PASSWORD = "traveller", "p&ss w=rd"
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
# The path MTU black hole: packets over HOLE_MTU bytes towards the device vanish, no ICMP.
HOLE_MTU = 1400
LARGE_PORT = 8032
LARGE_URL = f"http://probe.roam.test:{LARGE_PORT}/roam-large"
NAT64_PREFIX = "64:ff9b::/96"
CAPPORT_API = f"https://{GW_V4}:8443/capport"
DHCP_RANGE = "192.0.2.100,192.0.2.150,255.255.255.0,5m"


def drop_https(net):
    net.innet("nft add table inet nohttps")
    net.innet("nft add chain inet nohttps in { type filter hook input priority 0 \\; }")
    net.innet("nft add rule inet nohttps in tcp dport 443 drop")


def setup_v6only(net, nat64):
    """No IPv4 on the link: the device's and the gateway's IPv4 addresses and route go, the
    DNS (on the gateway's IPv6 address) knows the check host by its IPv6 address only, and,
    with nat64, answers ipv4only.arpa as a DNS64 does (RFC 7050: 64:ff9b::/96; no
    translation behind it, as no check goes to IPv4)."""
    net.internet()
    records = [("probe.roam.test", PROBE_V6)]
    if nat64:
        records.append(("ipv4only.arpa", "64:ff9b::c000:aa,64:ff9b::c000:ab"))
    net.dns(*records)
    net.server(f"[{PROBE_V6}]:80")
    net.server(f"[{PROBE_V6}]:443", tls="probe")
    net.netns("ip -4 route flush dev d0")
    net.netns("ip -4 addr flush dev d0")
    net.innet("ip -4 addr flush dev n0")


def world_httpd(net, name, port, *args):
    """tests/world/httpd.py on the gateway, started and listening (its pid file written)."""
    pidfile = f"{net.dir}/{name}.pid"
    net.procs.append(subprocess.Popen(
        ["ip", "netns", "exec", net.net, "/usr/bin/python3",
         os.path.join(TOP, "tests/world/httpd.py"), "--port", str(port), "--pidfile", pidfile,
         *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    poll(lambda: os.path.exists(pidfile), 10, f"the {name} server")


def setup_middlebox(net, tls, *args, dns=PROBE, dns_extra=()):
    """A middlebox on the gateway (httpd.py ARGS on BOX_PORT; with tls, also over HTTPS on
    BOX_TLS_PORT with the cafe's certificate, valid but not for probe.roam.test): the device's
    HTTP to anywhere (and with tls its HTTPS) goes to it. The DNS tells the truth."""
    net.internet()
    net.dns(*dns, extra=dns_extra)
    extra = ["--tls-port", str(BOX_TLS_PORT), "--cert", f"{net.certs}/cafe.pem",
             "--key", f"{net.certs}/cafe.key"] if tls else []
    world_httpd(net, "middlebox", BOX_PORT, *extra, *args)
    rules = [f"tcp dport 80 dnat ip to {GW_V4}:{BOX_PORT}"]
    if tls:
        rules.append(f"tcp dport 443 dnat ip to {GW_V4}:{BOX_TLS_PORT}")
    rules = [f'iifname "n0" meta nfproto ipv4 {r}' for r in rules] + \
        [f'iifname "n0" meta nfproto ipv6 {r.replace("dnat ip to", "dnat ip6 to")}'
         .replace(f"{GW_V4}:", f"[{GW_V6}]:") for r in rules]
    net.innet("nft -f " + net.write("middlebox.nft", "table inet middlebox {\n"
                                    "  chain lan {\n"
                                    "    type nat hook prerouting priority dstnat;\n"
                                    + "".join(f"    {r}\n" for r in rules) + "  }\n}\n"))


def setup_garden(net):
    """Class 2, a walled garden: the check host is let through (HTTP by name, in the
    middlebox; HTTPS by address, to the check server), every other name is redirected to
    the login page. The DNS answers every name under probe.roam.test (roamd's GardenURL asks
    a random one)."""
    setup_middlebox(net, False, "--route", "/roam-probe=roam-online\\n",
                    "--allow-host", "probe.roam.test", "--redirect", BOX_LOGIN, dns=(),
                    dns_extra=[f"--address=/probe.roam.test/{PROBE_V4}",
                               f"--address=/probe.roam.test/{PROBE_V6}"])
    net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")


def wispr_gate(net, closed):
    """Class 7's gate: closed, the device's HTTP to the check server goes to the WISPr
    portal and its HTTPS there is dropped; the portal's login (--on-login) deletes the table."""
    net.innet("nft delete table inet gate", check=False)
    if closed:
        net.innet("nft -f " + net.write("gate.nft", f"""table inet gate {{
  chain pre {{
    type nat hook prerouting priority dstnat;
    iifname "n0" ip daddr {PROBE_V4} tcp dport 80 dnat ip to {GW_V4}:8080
    iifname "n0" ip6 daddr {PROBE_V6} tcp dport 80 dnat ip6 to [{GW_V6}]:8080
  }}
  chain in {{
    type filter hook input priority 0;
    iifname "n0" ip daddr {PROBE_V4} tcp dport 443 drop
    iifname "n0" ip6 daddr {PROBE_V6} tcp dport 443 drop
  }}
}}
"""))


def setup_wispr(net):
    """Class 7: tests/servers/wispr_cafe.py on the gateway (ports 8080/8443; the gateway's own
    80/443, cafe.test in the DNS, are redirected there), in front of the check server, its
    gate closed. A right login opens the gate (nft delete table inet gate)."""
    net.internet()
    net.dns(*PROBE, ("cafe.test", GW_V4), ("cafe.test", GW_V6))
    net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
    net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
    ready = f"{net.dir}/wispr.ready"
    net.procs.append(subprocess.Popen(
        ["ip", "netns", "exec", net.net, "/usr/bin/python3", WISPR, "--port", "8080",
         "--tls-port", "8443", "--cert", f"{net.certs}/cafe.pem", "--key",
         f"{net.certs}/cafe.key", "--log", f"{net.dir}/wispr.log", "--ready", ready,
         "--user", WISPR_USER, "--password", WISPR_PASSWORD,
         "--on-login", "nft delete table inet gate"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    poll(lambda: os.path.exists(ready), 10, "the WISPr portal")
    net.innet("nft -f " + net.write("wisprcafe.nft", f"""table inet wisprcafe {{
  chain pre {{
    type nat hook prerouting priority dstnat - 1;
    iifname "n0" ip daddr {GW_V4} tcp dport 80 redirect to :8080
    iifname "n0" ip daddr {GW_V4} tcp dport 443 redirect to :8443
    iifname "n0" ip6 daddr {GW_V6} tcp dport 80 redirect to :8080
    iifname "n0" ip6 daddr {GW_V6} tcp dport 443 redirect to :8443
  }}
}}
"""))
    wispr_gate(net, True)


def wispr_posts(net):
    try:
        with open(f"{net.dir}/wispr.log") as f:
            return [json.loads(x) for x in f if '"POST"' in x]
    except OSError:
        return []


# What happens to a network between the carrier cut and the carrier coming back (the next
# cycle meets the same network): class 7's session ends, its gate closes again.
BETWEEN = {"wispr": lambda net: wispr_gate(net, True),
           "wisprwrong": lambda net: wispr_gate(net, True)}


def setup_mtuhole(net):
    """The open network, plus a large answer (16 KiB at LARGE_URL) and a path MTU black hole
    on the way to the device: packets over HOLE_MTU bytes vanish without an ICMP error."""
    setup(net, "open")
    world_httpd(net, "large", LARGE_PORT, "--route", "/roam-large=" + "x" * 16384)
    # On the device's way in: there the packets are as on the wire (n0 has no checksum
    # offload, so they were cut to segments when n0 sent them); the server's own output
    # hook would see its TCP's GSO super-packets whole.
    net.netns("nft -f " + net.write("mtuhole.nft", f"""table inet mtuhole {{
        chain bigpackets {{
                type filter hook prerouting priority raw; policy accept;
                iifname "d0" meta length > {HOLE_MTU} drop
        }}
}}
"""))


def setup(net, kind):
    if kind in ("v6only", "v6nat64"):
        setup_v6only(net, kind == "v6nat64")
        return
    if kind == "mtuhole":
        setup_mtuhole(net)
        return
    if kind == "garden":
        setup_garden(net)
        return
    if kind == "tlsportal":
        # Class 3: HTTP redirected to the login page, HTTPS answered by the portal itself
        setup_middlebox(net, True, "--redirect", BOX_LOGIN)
        return
    if kind == "cache":
        # Class 5: a cache answers the check page (ignoring no-cache, with Age), nothing else
        # gets through (443 dropped silently)
        setup_middlebox(net, False, "--route", "/roam-probe=roam-online\\n",
                        "--header", "Age: 3600")
        drop_https(net)
        return
    if kind in ("wispr", "wisprwrong"):
        setup_wispr(net)
        return
    if kind == "opentickets":
        net.internet()
        net.dns(*PROBE)
        net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80", mode="tickets")
        net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", mode="tickets", tls="probe")
        return
    if kind == "openfo":
        # issue 45 §2: the open network, its check server accepting TCP Fast Open (the
        # server bit of net.ipv4.tcp_fastopen in the network's namespace only)
        net.innet("sysctl -qw net.ipv4.tcp_fastopen=3")
        net.internet()
        net.dns(*PROBE)
        net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80", extra=["--fastopen"])
        net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe", extra=["--fastopen"])
        return
    if kind in ("open", "nohttps"):
        net.internet()
        net.dns(*PROBE)
        net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
        if kind == "open":
            net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
        else:
            net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
            drop_https(net)
        return
    if kind == "capport":
        setup_capport(net)
        return
    # The café's DNS sends every name to the gateway; its HTTP server is the portal.
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    mode = "portal" if kind == "cafe302" else "login"
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode=mode,
               extra=["--portal-url", f"http://{GW_V4}/login"])
    drop_https(net)


def setup_capport(net):
    """The café of the 302 network, but the device gets its address by DHCP (dnsmasq, rapid
    commit) and the lease announces the RFC 8908 API (option 114), which says captive. The
    API is served over HTTPS on port 8443 (443 stays dropped) with a certificate of the test
    CA for the gateway's address. (d0 keeps its static address for the ping; the daemons'
    runs start without it.)"""
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6), extra=[
        f"--dhcp-range={DHCP_RANGE}", f"--dhcp-leasefile={net.dir}/dnsmasq.leases",
        "--dhcp-authoritative", "--dhcp-rapid-commit",
        f"--dhcp-option=option:router,{GW_V4}", f"--dhcp-option=option:dns-server,{GW_V4}",
        f"--dhcp-option=114,{CAPPORT_API}"])
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal",
               extra=["--portal-url", f"http://{GW_V4}/login"])
    doc = net.write("capport.json", json.dumps({
        "captive": True, "user-portal-url": f"https://{GW_V4}:8443/login"}))
    net.server(f"{GW_V4}:8443", mode="portal", tls="cafe",
               extra=["--capport-path", "/capport", "--capport-json", doc])
    drop_https(net)


# dhcpcd as the world runs it (tests/world/world.sh), for d0 and IPv4 only, in a private mount
# namespace inside the device's network namespace: its /run, /var/lib/dhcpcd (the bench's
# own directory, where roamd reads the lease) and resolv.conf are the bench's own. No hook
# script (`script ""`): every hook that would do something here is off, and dhcpcd waits for
# the script at each event, CARRIER included, before its first packet (~2.5 ms here).
DHCPCD_CONF = """nodev
script ""
noarp
noipv4ll
nodelay
option rapid_commit
option domain_name_servers, domain_name, domain_search
require dhcp_server_identifier
define 114 string captive_portal_uri
option captive_portal_uri
nohook hostname, ntp, chrony, timesyncd, openntpd, wpa_supplicant, timezone, yp, \
lookup-hostname, resolv.conf
"""

DHCPCD_SCRIPT = """set -e
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mkdir -p /run/dhcpcd
mount --bind {d} /var/lib/dhcpcd
mount --bind {d}/resolv.conf /etc/resolv.conf
exec dhcpcd -B -4 --config {d}/dhcpcd.conf --logfile {d}/dhcpcd.log d0
"""


def start_dhcpcd(net):
    net.netns("ip addr flush dev d0 scope global")
    d = os.path.join(net.dir, "dhcpcd")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "dhcpcd.conf"), "w") as f:
        f.write(DHCPCD_CONF)
    with open(os.path.join(d, "resolv.conf"), "w") as f:
        f.write("")
    p = subprocess.Popen(["ip", "netns", "exec", net.name, "unshare", "-m", "sh", "-c",
                          DHCPCD_SCRIPT.format(d=d)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    net.procs.append(p)
    return p, d


def stop_dhcpcd(net, p):
    p.terminate()
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    # what it configured goes with it, so the next daemon starts from the same state
    net.netns("ip addr flush dev d0 scope global")


def rtt_ms(net, fam=4):
    r = net.netns(f"ping -c 5 -i 0.2 -q {GW_V6 if fam == 6 else GW_V4}")
    line = [x for x in r.stdout.splitlines() if "min/avg" in x][0]
    return float(line.split("=")[1].split("/")[1])


class Events:
    """PropertiesChanged signals on the private bus (`busctl monitor`) and the kernel's link
    events of d0 (`ip monitor`), each stamped (CLOCK_REALTIME) by a reader thread as it
    arrives. No GLib main loop here: the tests' wait_until() owns the default context."""

    def __init__(self, net):
        self.signals = []
        self.carrier_up = []
        self.carrier_down = []
        self.lock = threading.Lock()
        # -ts: ip stamps each event as it reads it (this thread may run much later)
        self.mon = subprocess.Popen(["ip", "netns", "exec", net.name, "ip", "-ts", "-o",
                                     "monitor", "link"], stdout=subprocess.PIPE, text=True)
        self.busmon = subprocess.Popen(
            ["busctl", f"--address={net.address}", "monitor", "--json=short",
             "--match=type='signal',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged'"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        # IPv4 default routes of d0 (where DHCP configures the link: the DHCP client's share)
        self.routes = []
        self.route_times = []
        self.rmon = subprocess.Popen(["ip", "netns", "exec", net.name, "ip", "-ts", "-o", "-4",
                                      "monitor", "route"], stdout=subprocess.PIPE, text=True)
        net.procs += [self.mon, self.busmon, self.rmon]
        threading.Thread(target=self.read_routes, daemon=True).start()
        threading.Thread(target=self.read_links, daemon=True).start()
        threading.Thread(target=self.read_signals, daemon=True).start()

    def read_signals(self):
        self.stamped = 0  # signals busctl stamped (the others: when this thread read them)
        for line in self.busmon.stdout:
            t = time.time()
            try:
                m = json.loads(line)
                iface, changed = m["payload"]["data"][:2]
            except (ValueError, KeyError, TypeError):
                continue
            # the message's own receive stamp when busctl gives one (microseconds)
            if "timestamp-realtime" in m:
                t = m["timestamp-realtime"] / 1e6
                self.stamped += 1
            with self.lock:
                self.signals.append((t, m.get("path"), iface,
                                     {k: v.get("data") for k, v in changed.items()}))

    def read_links(self):
        for line in self.mon.stdout:
            if " d0" not in line or "LOWER_UP" not in line and "NO-CARRIER" not in line:
                continue
            try:  # [2026-12-03T23:03:32.427834], local time
                t = datetime.datetime.strptime(line[1:line.index("]")],
                                               "%Y-%m-%dT%H:%M:%S.%f").timestamp()
            except ValueError:
                t = time.time()
            with self.lock:
                (self.carrier_down if "NO-CARRIER" in line else self.carrier_up).append(t)

    def read_routes(self):
        for line in self.rmon.stdout:
            if "default via" not in line or "Deleted" in line or " d0" not in line:
                continue
            try:
                t = datetime.datetime.strptime(line[1:line.index("]")],
                                               "%Y-%m-%dT%H:%M:%S.%f").timestamp()
            except ValueError:
                t = time.time()
            with self.lock:
                self.routes.append(t)

    def first_route_after(self, t0):
        with self.lock:
            return next((t for t in self.routes if t >= t0), None)

    def first_carrier_after(self, t0, up=True):
        with self.lock:
            return next((t for t in (self.carrier_up if up else self.carrier_down) if t >= t0),
                        None)

    def first_signal_after(self, t0, path, iface, key, value):
        with self.lock:
            return next((t for t, p, i, c in self.signals
                         if t >= t0 and p == path and i == iface and key in c and
                         c[key] == value), None)

    def close(self):
        for p in (self.mon, self.busmon, self.rmon):
            if p.poll() is None:
                p.terminate()


def poll(pred, timeout, what, interval=0.002):
    """The bench's own wait for what its reader threads record (no bus signal announces it):
    a short poll, fine in a benchmark, never in a test."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(interval)


def carrier_to_verdict(net, ev, down, path, iface, key, value, from_log=None, timeout=30,
                       cut=None, between=None):
    """Carrier off until `down()` holds, then on: ms from the kernel's carrier-up event to the
    first signal saying key = value (or, with from_log, to the CLOCK_REALTIME stamp
    from_log(carrier-up) finds in a log), ms from the carrier-cut event to the stamp
    cut() finds (the daemon saying offline), and the carrier-up stamp. between(net), if
    given, runs while the carrier is off."""
    # The cut is timed from ip's stamp of the event; the daemon's answer may come before ip
    # got to print it (a loaded machine): then the time is negative, i.e. at once.
    t_req = time.time()
    net.carrier(False)
    poll(down, 60, "the daemon sees the carrier gone", 0.02)
    tc = poll(lambda: ev.first_carrier_after(t_req, up=False), 10, "the carrier-cut event")
    tc1 = poll(lambda: cut(t_req), 10, "the daemon's offline after the cut", 0.01)
    if between:
        between(net)
    t_req = time.time()
    net.carrier(True)
    t0 = poll(lambda: ev.first_carrier_after(t_req), 10, "the kernel's carrier-up event")
    if from_log:
        t1 = poll(lambda: from_log(t0), timeout, "the verdict in the log", 0.01)
    else:
        t1 = poll(lambda: ev.first_signal_after(t0, path, iface, key, value), timeout,
                  f"{key} = {value}")
    tr = ev.first_route_after(t0)
    if tr is not None and tr <= t1:
        ev.route_times.append((tr - t0) * 1000)
    return (t1 - t0) * 1000, (tc1 - tc) * 1000, t0


def roamd_config(net):
    # roamd's defaults except where the test network needs its own (names, CA, DNS).
    return (net.probe_config().replace("LogLevel=debug", "LogLevel=info")
            .replace("Timeout=3\nDNSTimeout=2\nPingTimeout=1\nBackoffMin=0.5\nBackoffMax=2\n",
                     ""))


def cpu_ms(pid):
    """CPU time (user + system) a process used so far, in ms."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def run_roamd(net, ev, verdict, dhcp=False, kind=""):
    """Carrier-up to verdict times, and the CPU roamd used per carrier cycle (what the
    machine's load cannot change). dhcp: dhcpcd configures d0, and roamd reads its lease
    (DNS servers, the captive portal API) instead of a pinned DNS server."""
    conf = roamd_config(net)
    if FAMILY.get(kind) == 6:
        conf = conf.replace(f"d0={GW_V4} {GW_V6}\n", f"d0={GW_V6}\n")
    if kind == "mtuhole":
        conf = conf.replace("[Probe]\n", f"[Probe]\nLargeURL={LARGE_URL}\n")
    if kind == "garden":
        conf = conf.replace("[Probe]\n", f"[Probe]\nGardenURL={GARDEN_URL}\n")
    if kind in ("wispr", "wisprwrong"):
        conf += f"[Portal]\nCredentialsFile={net.dir}/portal.credentials\n"
        wispr_save_login(net, conf, kind == "wisprwrong")
    dhcpcd = None
    if dhcp:
        dhcpcd, d = start_dhcpcd(net)
        conf = (conf.replace(f"[LinkDNS]\nd0={GW_V4} {GW_V6}\n", "")
                .replace(f"DhcpcdLeaseDir={net.dir}/leases", f"DhcpcdLeaseDir={d}"))
    try:
        return run_roamd_timed(net, ev, verdict, conf, dhcp, kind)
    finally:
        if dhcpcd:
            stop_dhcpcd(net, dhcpcd)


def portal_session(net, link="d0"):
    """roamd's captive portal session of the link (`roam portal --json`), or None."""
    r = subprocess.run([ROAM, "portal", "--json"], env=net.env, capture_output=True, text=True)
    return next((x for x in json.loads(r.stdout or "[]") if x.get("link") == link), None) \
        if r.returncode == 0 else None


def wispr_save_login(net, conf, wrong):
    """Class 7's saved login: roamd meets the portal, `roam portal login --always` logs in
    (the gate opens) and saves the login for this network; roamd stops. wrong: the portal
    has changed the password since (the saved one, edited in the file, is refused)."""
    wispr_gate(net, True)
    net.start_roamd(conf)
    try:
        wait_for(lambda: net.link_prop("d0", "Connectivity4") == "portal", timeout=30,
                 what="roamd: portal")
        poll(lambda: (portal_session(net) or {}).get("state") == "waiting", 30,
             "roamd's portal session waiting", 0.1)
        r = subprocess.run([ROAM, "portal", "login", "--user", WISPR_USER, "--password-file",
                            "-", "--always", "d0"], env=net.env, input=WISPR_PASSWORD + "\n",
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        wait_for(lambda: net.link_prop("d0", "Connectivity4") == "online", timeout=30,
                 what="roamd: online after the login")
        poll(lambda: os.path.exists(f"{net.dir}/portal.credentials"), 10, "the saved login")
    finally:
        net.stop_roamd()
    wispr_gate(net, True)
    if wrong:
        path = f"{net.dir}/portal.credentials"
        with open(path) as f:
            saved = json.load(f)
        saved["networks"][0]["password"] = "not " + WISPR_PASSWORD
        with open(path, "w") as f:
            json.dump(saved, f)


def roamd_log_stamp(net, t0, verdict, fam=4, reason="", what=None):
    """The stamp (ROAM_LOG_TIME) of roamd's first log line at or after t0 that puts d0's IPv4
    (fam 6: IPv6) connectivity at this verdict (and reason, if given): when roamd decided, as
    NetworkManager's own log says when it did. what: another line of d0's to look for."""
    needle = f"-> {verdict} ({reason}"
    subject = what or f"d0: IPv{fam} connectivity "
    for line in net.log().splitlines():
        stamp, _, text = line.partition(" ")
        if subject not in text or (not what and needle not in text):
            continue
        try:
            t = float(stamp)
        except ValueError:
            continue
        if t >= t0:
            return t
    return None


def roamd_since(net, t0):
    """Where to look for this carrier-up's verdict in roamd's log: t0, or roamd's own line
    for the carrier event when it carries an earlier stamp (within 50 ms). On a loaded machine
    `ip monitor` may stamp the event after roamd has reacted, and a verdict that came within a
    millisecond or two (the 200 login page) would then be before t0 and never found; the same
    allowance as NetworkManager's own "link connected" line gets (nm_check_after())."""
    for line in net.log().splitlines():
        stamp, _, text = line.partition(" ")
        if "d0: state no-carrier -> " not in text:
            continue
        try:
            t = float(stamp)
        except ValueError:
            continue
        if t0 - 0.05 <= t < t0:
            return t
    return t0


def run_roamd_timed(net, ev, verdict, conf, dhcp, kind=""):
    """Each cycle: carrier-up -> the verdict and carrier cut -> offline, both from roamd's own
    log stamps (as NetworkManager is timed from its log), and carrier-up -> the verdict's
    PropertiesChanged as a client receives it (through dbus-daemon), for reference."""
    net.env["ROAM_LOG_TIME"] = "1"
    try:
        net.start_roamd(conf)
    finally:
        net.env.pop("ROAM_LOG_TIME", None)
    path = net.link_path("d0")
    fam, reason = FAMILY.get(kind, 4), REASON.get(kind, "")
    key = f"Connectivity{fam}"
    wait_for(lambda: net.link_prop("d0", key) == verdict, timeout=30,
             what=f"roamd: {verdict}")
    # class 7 with a password the portal refuses: the right verdict is portal with the
    # portal's reply, i.e. the session's `rejected` (the portal verdict came before it)
    what = "d0: captive portal logging-in -> rejected" if kind == "wisprwrong" else None
    posts = len(wispr_posts(net))
    times, facts, logins = [], [], []
    cpu0 = cpu_ms(net.roamd.pid)
    for _ in range(REPS):
        t, cut, t0 = carrier_to_verdict(
            net, ev, lambda: net.link_prop("d0", key) == "offline", path,
            "org.roam1.Link", key, verdict,
            from_log=lambda t0: roamd_log_stamp(net, roamd_since(net, t0), verdict, fam,
                                                reason, what),
            cut=lambda tc: roamd_log_stamp(net, tc, "offline", fam), between=BETWEEN.get(kind))
        # (a session's state is no Link property: no bus time for it; the link's portal
        # signal, ~50 ms before it, may even come before ip monitor stamps the carrier-up on
        # a loaded machine)
        tb = None if what else poll(lambda: ev.first_signal_after(
            roamd_since(net, t0), path, "org.roam1.Link", key, verdict), 10,
            f"the {verdict} signal")
        times.append((t, cut, (tb - t0) * 1000 if tb else None))
        if kind == "wispr":
            # when the portal said yes to the saved login (the online verdict follows it)
            tl = roamd_log_stamp(net, t0, "", what="d0: captive portal logging-in -> logged-in")
            if tl:
                logins.append((tl - t0) * 1000)
        # the fact of the link the class also asks for: when roamd had it, and what it was
        fact = {"mtuhole": ("d0: IPv4 working path MTU 0 -> ", "WorkingMTU4"),
                "v6nat64": (f"d0: NAT64 prefix none -> {NAT64_PREFIX}", "Nat64Prefix")}.get(kind)
        if fact:
            tf = poll(lambda: roamd_log_stamp(net, t0, "", what=fact[0]), 30, fact[1])
            facts.append(((tf - t0) * 1000, net.link_prop("d0", fact[1])))
    cpu = (cpu_ms(net.roamd.pid) - cpu0) / REPS
    if facts:
        print(f"  (roamd: carrier-up -> {fact[1]} {facts[-1][1]}: median "
              f"{statistics.median(f[0] for f in facts):.1f} ms of {len(facts)}; "
              f"reason {net.link_prop('d0', f'ConnectivityReason{fam}')})", flush=True)
    if kind in ("wispr", "wisprwrong"):
        # every cycle logged in with the saved login, once; the session says how it ended
        session = poll(lambda: portal_session(net), 10, "roamd's portal session")
        print(f"  (roamd: {len(wispr_posts(net)) - posts} WISPr logins in {REPS} cycles, the "
              f"saved one; session after the last: {session.get('state')}"
              + (f", \"{session.get('message')}\"" if session.get("message") else "")
              + f"; d0 {net.link_prop('d0', 'Connectivity4')}"
              + (f"; carrier-up -> the portal's yes: median {statistics.median(logins):.1f} ms"
                 if logins else "") + ")", flush=True)
    if dhcp:
        # the lease did reach roamd, and its API was read (not only the HTTP probe's portal)
        wait_for(lambda: net.link_prop("d0", "CaptivePortalURL") == CAPPORT_API and
                 net.link_prop("d0", "CaptivePortal").get("Captive", {}).get("data"),
                 timeout=30, what="roamd: the lease's captive portal API, captive")
        print(f"  (roamd: the lease announces {CAPPORT_API}; the API says captive; "
              f"reason after the last cycle: {net.link_prop('d0', 'ConnectivityReason4')})")
    net.stop_roamd()
    return times, cpu


NM_CONF = """[main]
plugins=keyfile
dns=none
rc-manager=unmanaged
no-auto-default=*
[keyfile]
path={d}/etc/system-connections
unmanaged-devices=except:interface-name:d0
[logging]
level=INFO
domains=ALL:INFO,CONCHECK:DEBUG
[connectivity]
enabled=true
uri=http://probe.roam.test/roam-probe
response=roam-online
interval=300
[device-d0]
match-device=interface-name:d0
managed=1
"""

NM_PROFILE = f"""[connection]
id=d0
type=ethernet
interface-name=d0
autoconnect=true
[ipv4]
method=manual
address1=192.0.2.2/24,{GW_V4}
dns={GW_V4};
[ipv6]
method=manual
address1=2001:db8:1::2/64,{GW_V6}
dns={GW_V6};
"""

# In a private mount namespace inside the device's network namespace: NetworkManager's run,
# state and config directories and resolv.conf are the bench's own, and /sys is read-only so
# it does not wait for a udev that does not serve this namespace. The host's network, bus
# and NetworkManager files are never touched.
NM_SCRIPT = """set -e
mount --make-rprivate /
mount -t tmpfs tmpfs /run
mkdir -p /run/NetworkManager
mount --bind {d}/lib /var/lib/NetworkManager
mount --bind {d}/etc /etc/NetworkManager
mount --bind {d}/resolv.conf /etc/resolv.conf
mount -o remount,bind,ro /sys
exec {nm} --debug --config={d}/etc/NetworkManager.conf --config-dir={d}/etc/conf.d \
  --system-config-dir={d}/etc/sysconf.d --state-file={d}/lib/state \
  --intern-config={d}/lib/intern.conf --pid-file=/run/NetworkManager/nm.pid
"""


def nm_prop(net, name, device):
    # The device's own IPv4 connectivity: the manager's global property can stay FULL while
    # no device is connected.
    r = net.busctl("--json=short", "get-property", "org.freedesktop.NetworkManager", device,
                   "org.freedesktop.NetworkManager.Device", name, check=False)
    return json.loads(r.stdout)["data"] if r.returncode == 0 else None


NM_DEVICE_UNAVAILABLE = 20  # NMDeviceState
NM_WORDS = {NM_FULL: "FULL", NM_PORTAL: "PORTAL"}


def nm_check_after(logpath, t0, connectivity, fam=4):
    """The CLOCK_REALTIME stamp of NetworkManager's first IPv4 check of d0 that started after
    t0 and completed with this result. (Its D-Bus connectivity properties keep a stale FULL
    while the device is unavailable, so a new check does not always show there; a check
    started before the carrier came back may complete after it and must not count.)"""
    want = f"check completed: {NM_WORDS[connectivity]};"
    started = set()
    # (a check NetworkManager starts on its own carrier event may carry a stamp a fraction of
    # a millisecond before ip's stamp of that event on a loaded machine: it counts from its
    # own "link connected" line of this carrier-up)
    since = t0
    with open(logpath, errors="replace") as f:
        for line in f:
            if "(d0): carrier: link connected" in line:
                try:
                    t = float(line.split("[", 1)[1].split("]", 1)[0])
                except (IndexError, ValueError):
                    continue
                if t0 - 0.05 <= t < since:
                    since = t
                continue
            if f"(d0,IPv{fam}," not in line:
                continue
            try:
                t = float(line.split("[", 1)[1].split("]", 1)[0])
                check = line.split(f"(d0,IPv{fam},", 1)[1].split(")", 1)[0]
            except (IndexError, ValueError):
                continue
            if t >= since and "start request" in line:
                started.add(check)
            elif check in started and want in line:
                return t
    return None


def nm_unavailable_after(logpath, t0):
    """The stamp of NetworkManager's d0 going unavailable (no carrier) after t0."""
    with open(logpath, errors="replace") as f:
        for line in f:
            if "device (d0): state change:" not in line or "-> unavailable" not in line:
                continue
            try:
                t = float(line.split("[", 1)[1].split("]", 1)[0])
            except (IndexError, ValueError):
                continue
            if t >= t0:
                return t
    return None


def nm_device(net, ifname):
    r = net.busctl("--json=short", "call", "org.freedesktop.NetworkManager",
                   "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager",
                   "GetDeviceByIpIface", "s", ifname, check=False)
    return json.loads(r.stdout)["data"][0] if r.returncode == 0 else None


NM_PROFILE_DHCP = """[connection]
id=d0
type=ethernet
interface-name=d0
autoconnect=true
[ipv4]
method=auto
[ipv6]
method=ignore
"""


NM_PROFILE_V6 = f"""[connection]
id=d0
type=ethernet
interface-name=d0
autoconnect=true
[ipv4]
method=disabled
[ipv6]
method=manual
address1=2001:db8:1::2/64,{GW_V6}
dns={GW_V6};
"""


def start_nm(net, dhcp=False, kind=""):
    """NetworkManager in the device namespace (NM_SCRIPT), managing d0 with the profile the
    network needs; its log's path."""
    d = os.path.join(net.dir, "nm")
    for sub in ("etc/system-connections", "etc/conf.d", "etc/sysconf.d", "lib"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    with open(os.path.join(d, "etc/NetworkManager.conf"), "w") as f:
        f.write(NM_CONF.format(d=d))
    profile = os.path.join(d, "etc/system-connections/d0.nmconnection")
    with open(profile, "w") as f:
        f.write(NM_PROFILE_DHCP if dhcp else NM_PROFILE_V6 if FAMILY.get(kind) == 6
                else NM_PROFILE)
    os.chmod(profile, 0o600)
    with open(os.path.join(d, "resolv.conf"), "w") as f:
        f.write(f"nameserver {GW_V6 if FAMILY.get(kind) == 6 else GW_V4}\n")
    if kind in BETWEEN:
        BETWEEN[kind](net)  # the network as the carrier cycles leave it (a closed gate)
    logpath = os.path.join(d, "nm.log")
    log = open(logpath, "w")
    return subprocess.Popen(["ip", "netns", "exec", net.name, "unshare", "-m", "sh", "-c",
                             NM_SCRIPT.format(d=d, nm=NM)],
                            env=net.env, stdout=log, stderr=subprocess.STDOUT), logpath


def stop_nm(nm):
    nm.terminate()
    try:
        nm.wait(10)
    except subprocess.TimeoutExpired:
        nm.kill()
        nm.wait()


def run_nm(net, ev, connectivity, dhcp=False, kind=""):
    nm, logpath = start_nm(net, dhcp, kind)
    try:
        dev = poll(lambda: nm_device(net, "d0"), 30, "NetworkManager's d0")
        fam = FAMILY.get(kind, 4)
        poll(lambda: nm_prop(net, f"Ip{fam}Connectivity", dev) == connectivity, 60,
             f"NetworkManager: d0 IPv{fam} connectivity {connectivity}")
        times = []
        cpu0 = cpu_ms(nm.pid)  # `ip netns exec`, unshare and sh exec into NetworkManager
        for _ in range(REPS):
            times.append(carrier_to_verdict(
                net, ev, lambda: nm_prop(net, "State", dev) == NM_DEVICE_UNAVAILABLE,
                None, None, None, None, lambda t: nm_check_after(logpath, t, connectivity, fam),
                cut=lambda tc: nm_unavailable_after(logpath, tc), between=BETWEEN.get(kind)))
        return times, (cpu_ms(nm.pid) - cpu0) / REPS
    finally:
        stop_nm(nm)


def latency():
    have_nm = os.access(NM, os.X_OK)
    print(f"carrier-up -> final IPv4 verdict, addresses static (DHCP where named), "
          f"median of {REPS * ROUNDS}"
          + (f" ({ROUNDS} rounds of {REPS}, the daemons alternating)" if ROUNDS > 1 else "") + " "
          f"(NetworkManager: {'yes' if have_nm else 'not installed'})")
    print(f"  {'network':29} {'ping':>7} {'roamd':>16} {'NetworkManager':>22} {'roamd/NM':>9}"
          f" {'RTTs roamd/NM (bound)':>22}  CPU/cycle roamd/NM  roamd on the bus")
    print("  (each daemon timed from its own log's stamp of the verdict, as it decided; the last "
          "column: roamd's\n   PropertiesChanged as a client receives it, through dbus-daemon; "
          "'!' after NetworkManager's\n   verdict: wrong, the network is not what it says; "
          "'*': it has no WISPr login and stays portal.\n   Rows 1-7: issue 31's classes, "
          "roamd timed to its verdict with the class's reason (7 with\n   a refused "
          "password: to the session's `rejected`); the IPv6-only rows are timed in IPv6,\n"
          "   NetworkManager's IPv6 check)")
    only = os.environ.get("BENCH_ONLY")
    cuts = {}
    for name, kind, delay, verdict, nm_conn in NETWORKS:
        if only and only not in name:
            continue
        net = ProbeNet(f"bv{kind[:4]}{delay}", delay_ms=delay or None)
        ev = None
        try:
            setup(net, kind)
            rtt = rtt_ms(net, FAMILY.get(kind, 4))
            ev = Events(net)
            dhcp = kind == "capport"
            rt, nt, rcpus, ncpus, r_route, n_route = [], [], [], [], [], []
            # BENCH_ROUNDS > 1: the two take turns (and which goes first alternates), so that
            # the machine's drift during the run falls on both alike
            for i in range(ROUNDS):
                for who in ("roamd", "nm")[::1 if i % 2 == 0 else -1]:
                    if who == "roamd":
                        t, c = run_roamd(net, ev, verdict, dhcp, kind)
                        rt, r_route = rt + t, r_route + ev.route_times
                        rcpus.append(c)
                    elif have_nm:
                        t, c = run_nm(net, ev, nm_conn, dhcp, kind)
                        nt, n_route = nt + t, n_route + ev.route_times
                        ncpus.append(c)
                    ev.route_times = []
            rcpu = statistics.mean(rcpus)
            ncpu = statistics.mean(ncpus) if ncpus else 0
            r = statistics.median(x[0] for x in rt)
            n = statistics.median(x[0] for x in nt) if nt else None
            bus = [x[2] for x in rt if x[2] is not None]
            bus = f"{statistics.median(bus):7.1f} ms" if bus else f"{'-':>7}"
            cuts[name] = (statistics.median(x[1] for x in rt),
                          statistics.median(x[1] for x in nt) if nt else None)
            bound = (4 if verdict == "portal" else 5) + (1 if dhcp else 0)
            rtt_nominal = 2 * delay
            nm_word = {NM_FULL: "full", NM_PORTAL: "portal"}[nm_conn]
            # NetworkManager's word against the truth (roamd's: the network is built so)
            nm_right = {"online": "full", "portal": "portal"}.get(verdict) == nm_word
            mark = NM_NOTE.get(kind, " " if nm_right else "!")
            print(f"  {name:29} {rtt:6.1f}ms {verdict:>7} {r:7.1f} ms"
                  + (f" {nm_word:>7}{mark}{n:8.1f} ms {r / n:9.2f}"
                     if n else f" {'-':>22} {'-':>9}")
                  + (f" {r / rtt_nominal:5.1f}/{n / rtt_nominal if n else 0:3.1f} ({bound} RTT)"
                     if delay else f" {'-':>9} ({bound} RTT)")
                  + f"  {rcpu:4.0f}/{ncpu:.0f} ms  {bus}", flush=True)
            if dhcp and r_route and n_route:
                print(f"  {'':29} of which carrier-up -> default route (the DHCP client): "
                      f"dhcpcd {statistics.median(r_route):.1f} ms, NetworkManager "
                      f"{statistics.median(n_route):.1f} ms", flush=True)
        finally:
            if ev:
                ev.close()
            net.close()
    print(f"carrier cut -> offline (logs: roamd's IPv4 offline; NetworkManager's device "
          f"unavailable), median of {REPS * ROUNDS}")
    for name, (r, n) in cuts.items():
        print(f"  {name:29} roamd {r:7.1f} ms" + (f"  NetworkManager {n:7.1f} ms  roamd/NM "
                                                   f"{r / n:5.2f}" if n else ""))


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def mem_parts(pid):
    """RssAnon split by where smaps puts it: libraries (their relocated data and bss, paid
    before main() runs), the heap, other anonymous maps, stacks."""
    parts = {"libraries": 0, "heap": 0, "other": 0}
    name = ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and not head[0].endswith(":"):
                name = head[5] if len(head) > 5 else ""
            elif head[0] == "Anonymous:":
                kind = ("libraries" if ".so" in name else "heap" if name == "[heap]"
                        else "other")
                parts[kind] += int(head[1])
    return parts


def mem_net(n_links):
    net = ProbeNet("bvmem")
    try:
        net.internet()
        net.dns(*PROBE)
        net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
        net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
        dns = [f"d0={GW_V4} {GW_V6}"]
        for k in range(1, n_links):
            net.netns(f"ip link add d{k} type veth peer name n{k} netns {net.net}")
            net.innet(f"ip addr add 198.51.100.{4 * k + 1}/30 dev n{k}")
            net.innet(f"ip link set n{k} up")
            net.netns(f"ip addr add 198.51.100.{4 * k + 2}/30 dev d{k}")
            net.netns(f"ip link set d{k} up")
            net.netns(f"ip route add default via 198.51.100.{4 * k + 1} dev d{k} metric {100 + k}")
            dns.append(f"d{k}={GW_V4}")
        conf = net.probe_config().replace("LogLevel=debug", "LogLevel=warning")
        conf = conf.replace(f"[LinkDNS]\nd0={GW_V4} {GW_V6}\n",
                            "[LinkDNS]\n" + "\n".join(dns) + "\n")
        return net, conf
    except Exception:
        net.close()
        raise


def mem_rounds(net, names, rounds, report=None):
    """`rounds` probe rounds on every link (Reprobe, then wait for every LastProbe to move)."""
    paths = [net.link_path(x) for x in names]

    def last_probes():
        r = net.busctl("--json=short", "call", "org.roam1", "/org/roam1",
                       "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        objs = json.loads(r.stdout)["data"][0]
        return {p: objs[p]["org.roam1.Link"]["LastProbe"]["data"] for p in paths}

    for i in range(1, rounds + 1):
        before = last_probes()
        for p in paths:
            net.busctl("call", "org.roam1", p, "org.roam1.Link", "Reprobe")
        wait_for(lambda: all(v > before[p] for p, v in last_probes().items()), timeout=60,
                 what="a round on every link")
        if report:
            report(i)


def memory(n_links=10):
    net, conf = mem_net(n_links)
    try:
        net.start_roamd(conf)
        pid = net.roamd.pid
        names = [f"d{k}" for k in range(n_links)]
        wait_for(lambda: all(net.link_prop(x, "Connectivity") == "online" for x in names),
                 timeout=60, what="every link online")
        time.sleep(0.5)
        first = status_kb(pid, "RssAnon")
        print(f"roamd RssAnon at rest, {n_links} links, HTTP + HTTPS every round "
              f"(target 1024 kB)")
        print(f"  after the first round:       {first:6} kB ({first / 1024:.2f} target) "
              f"{mem_parts(pid)}")
        t0 = time.monotonic()
        samples = []

        def report(i):
            if i % max(1, MEM_ROUNDS // 5) == 0:
                time.sleep(0.3)
                samples.append(status_kb(pid, "RssAnon"))
                print(f"  after {i:5} rounds per link:  {samples[-1]:6} kB "
                      f"({samples[-1] / 1024:.2f} target, {time.monotonic() - t0:.0f} s) "
                      f"{mem_parts(pid)}", flush=True)
        mem_rounds(net, names, MEM_ROUNDS, report)
        print(f"  growth from round 1 to {MEM_ROUNDS}: {samples[-1] - first:+d} kB")
        net.stop_roamd()
    finally:
        net.close()


# (what, configuration change, links' carrier, final verdict)
MEM_PARTS = [
    ("no probe (no carrier)", lambda c, net: c, False, "offline"),
    ("HTTP only (HTTPS port closed)",
     lambda c, net: c.replace("HttpsURL=https://probe.roam.test/",
                              "HttpsURL=https://probe.roam.test:444/"), True, "partial"),
    ("HTTP + HTTPS, test CA (1 cert)", lambda c, net: c, True, "online"),
    # the default: the system's CA directory (the test CA is not in it: verification fails
    # after the lookup, as it would for a portal's own certificate)
    ("HTTP + HTTPS, system CA directory",
     lambda c, net: c.replace(f"CAFile={net.certs}/ca.pem\n", ""), True, "partial"),
    # what the default was: the system's whole bundle (here with the test CA appended)
    ("HTTP + HTTPS, system CA bundle", lambda c, net: c.replace(
        f"CAFile={net.certs}/ca.pem\n", f"CAFile={system_bundle(net)}\n"), True, "online"),
]


def system_bundle(net):
    path = os.path.join(net.dir, "bundle.pem")
    with open(path, "w") as out:
        for src in ("/etc/ssl/certs/ca-certificates.crt", f"{net.certs}/ca.pem"):
            with open(src) as f:
                out.write(f.read())
    return path


def memory_parts(n_links=10, rounds=20):
    """What costs what: roamd's RssAnon at rest after `rounds` rounds on each link, for each
    kind of round, split as mem_parts() does."""
    print(f"roamd RssAnon at rest by kind of probe round, {n_links} links, {rounds} rounds each")
    for what, change, carrier, verdict in MEM_PARTS:
        net, conf = mem_net(n_links)
        try:
            names = [f"d{k}" for k in range(n_links)]
            if not carrier:
                net.carrier(False)
                for k in range(1, n_links):
                    net.innet(f"ip link set n{k} down")
            net.start_roamd(change(conf, net))
            pid = net.roamd.pid
            wait_for(lambda: all(net.link_prop(x, "Connectivity") == verdict for x in names),
                     timeout=60, what=f"every link {verdict}")
            if carrier:
                mem_rounds(net, names, rounds)
            time.sleep(0.5)
            kb = status_kb(pid, "RssAnon")
            print(f"  {what:32} {kb:6} kB  {mem_parts(pid)}", flush=True)
            net.stop_roamd()
        finally:
            net.close()


MEM_FLOOR = os.environ.get("MEM_FLOOR", os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build/bench/mem-floor"))


def memory_floor(fetches=50):
    """The floor under roamd's probe memory: bench/mem-floor, linked against roamd's
    libraries and run with roamd.service's environment, does curl's part of the probe rounds
    (the world's check server, the test CA, TLS sessions shared, a fresh connection each
    time) and nothing else."""
    net, _ = mem_net(1)
    try:
        resolve = f"probe.roam.test:80:{PROBE_V4},probe.roam.test:443:{PROBE_V4}"
        p = subprocess.Popen(["ip", "netns", "exec", net.name, MEM_FLOOR,
                              "http://probe.roam.test/roam-probe",
                              "https://probe.roam.test/roam-probe", resolve,
                              f"{net.certs}/ca.pem", str(fetches)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, **unit_environment()))
        print("RssAnon of a process with roamd's libraries doing only curl's part of the "
              "probes (bench/mem-floor; target 1024 kB)")
        # ip netns exec execs the program: its pid is mem-floor's
        for step in p.stdout:
            print(f"  {step.strip():30} {status_kb(p.pid, 'RssAnon'):6} kB  "
                  f"{mem_parts(p.pid)}", flush=True)
            p.stdin.write("\n")
            p.stdin.flush()
        p.stdin.close()
        if p.wait(timeout=30) != 0:
            raise AssertionError("mem-floor failed (its error is above)")
    finally:
        net.close()


CAPTURE = os.path.join(TOP, "tests/integration/capture.py")
# (column, what): the instants `phases` gives, from carrier-up, of the check's IPv4 packets
PHASES = [("first", "first SYN or datagram out"), ("dns", "DNS query out"),
          ("dns<", "its answer in"), ("GET", "HTTP request out"), ("GET<", "HTTP answer in"),
          ("hello", "ClientHello out"), ("hello<", "server's flight in"),
          ("fin", "client's Finished out"), ("body<", "last HTTPS bytes in"),
          ("verdict", "the daemon's verdict (log)")]


def packet_phases(lines, t0, t1):
    """The instants (ms from t0) of PHASES in capture.py lines, up to the verdict at t1."""
    got = {"verdict": (t1 - t0) * 1000}
    for line in lines:
        stamp, way, peer, port, head = line.split()
        t = float(stamp)
        if t < t0 or t > t1 + 0.0005:
            continue
        ms, out = (t - t0) * 1000, way == "out"
        if out and head in ("syn", "udp"):
            got.setdefault("first", ms)
        if port == "53":
            got.setdefault("dns" if out else "dns<", ms)
        if peer != PROBE_V4:
            continue
        if port == "80" and out and head.startswith("47455420"):
            got.setdefault("GET", ms)
        elif port == "80" and not out and head.startswith("48545450"):
            got.setdefault("GET<", ms)
        elif port == "443" and out and head.startswith("16") and "hello" not in got:
            got["hello"] = ms
        elif port == "443" and not out and head.startswith("16"):
            got.setdefault("hello<", ms)
        elif port == "443" and out and "hello<" in got:
            got.setdefault("fin", ms)
        elif port == "443" and not out and head.startswith("17"):
            got["body<"] = ms
    return got


def phases(binaries, rounds):
    """Where the time from carrier-up to the verdict goes, packet by packet: a capture on d0
    (tests/integration/capture.py, the kernel's stamps) while each roamd binary and
    NetworkManager take turns on one network, as `latency` runs them."""
    import minienv
    kind = os.environ.get("BENCH_AB_NETWORK", "opentickets")
    verdict = next(v for _, k, d, v, _ in NETWORKS if k == kind and not d)
    nm_conn = next(c for _, k, d, _, c in NETWORKS if k == kind and not d)
    daemons = list(binaries) + (["NetworkManager"] if os.access(NM, os.X_OK) else [])
    cycles = {d: [] for d in daemons}
    who = [None]
    timed = carrier_to_verdict

    def record(*args, **kwargs):
        t, cut, t0 = timed(*args, **kwargs)
        cycles[who[0]].append((t0, t0 + t / 1000))
        return t, cut, t0

    globals()["carrier_to_verdict"] = record
    net = ProbeNet("bvph")
    ev = cap = None
    try:
        setup(net, kind)
        ev = Events(net)
        cap = subprocess.Popen(["ip", "netns", "exec", net.name, "/usr/bin/python3", CAPTURE,
                                "d0"], stdout=subprocess.PIPE, text=True)
        net.procs.append(cap)
        assert cap.stdout.readline().strip() == "ready"
        for i in range(rounds):
            for d in (daemons if i % 2 == 0 else daemons[::-1]):
                who[0] = d
                if d == "NetworkManager":
                    run_nm(net, ev, nm_conn, kind == "capport", kind)
                else:
                    minienv.ROAMD = d
                    run_roamd(net, ev, verdict, kind == "capport", kind)
    finally:
        globals()["carrier_to_verdict"] = timed
        if cap and cap.poll() is None:
            cap.terminate()
        lines = cap.stdout.read().splitlines() if cap else []
        if ev:
            ev.close()
        net.close()
    print(f"carrier-up -> {verdict} on the {kind} network, where the time goes: medians (ms "
          f"from carrier-up, the capture's stamps) of {rounds} x {REPS} cycles, IPv4")
    for col, what in PHASES:
        print(f"  {col:8} {what}")
    print(f"  {'':40}" + "".join(f"{c:>8}" for c, _ in PHASES))
    for d in daemons:
        got = [packet_phases(lines, t0, t1) for t0, t1 in cycles[d]]
        if os.environ.get("BENCH_VERBOSE"):
            for g in got:
                print(f"  {'':40}" + "".join(f"{g[c]:8.2f}" if c in g else f"{'-':>8}"
                                          for c, _ in PHASES))
        row = [statistics.median(g[c] for g in got if c in g)
               if any(c in g for g in got) else None for c, _ in PHASES]
        print(f"  {d[-40:]:40}" + "".join(f"{x:8.2f}" if x is not None else f"{'-':>8}"
                                          for x in row))


def ab(binaries, rounds):
    """Two roamd binaries on the open network, carrier-up to online: rounds of REPS cycles,
    the two alternating (which one first alternates too), in one world, so that the machine's
    drift falls on both alike. For a change whose gain is smaller than that drift.
    BENCH_AB_NETWORK names another network's setup (say, opentickets, or cafe302: timed to
    that network's verdict and reason, as the side-by-side table times it)."""
    import minienv
    kind = os.environ.get("BENCH_AB_NETWORK", "open")
    # the network's verdict (and reason, family) as the side-by-side table times it
    verdict = next(v for _, k, d, v, _ in NETWORKS if k == kind and not d)
    times = {b: [] for b in binaries}
    net = ProbeNet("bvab")
    ev = None
    try:
        setup(net, kind)
        ev = Events(net)
        for i in range(rounds):
            for b in (binaries if i % 2 == 0 else binaries[::-1]):
                minienv.ROAMD = b
                t, _ = run_roamd(net, ev, verdict, kind == "capport", kind)
                times[b] += [x[0] for x in t]
    finally:
        if ev:
            ev.close()
        net.close()
    a, b = (statistics.median(times[x]) for x in binaries)
    print(f"carrier-up -> {verdict}{f' ({REASON[kind]})' if kind in REASON else ''}, {kind} "
          f"network, {len(times[binaries[0]])} cycles each")
    for x, m in zip(binaries, (a, b)):
        print(f"  {x}: median {m:.2f} ms")
    print(f"  ratio second/first {b / a:.2f}")


RECHECK_DELAY = 300  # one-way, ms


def recheck_roamd(net, binary):
    """REPS re-checks (Link.Reprobe) of d0, online, by the roamd at binary: each one's
    ProbeDuration, roamd's own measure of its round (from its start to the last answer of
    both families' probes, DNS confirmed), in ms."""
    import minienv
    minienv.ROAMD = binary
    net.start_roamd(roamd_config(net))
    try:
        wait_for(lambda: net.verdicts()[0::2] == ("online", "online"), timeout=60,
                 what="roamd: d0 online (IPv4 and IPv6)")
        path = net.link_path("d0")
        out = []
        for _ in range(REPS):
            before = net.link_prop("d0", "LastProbe")
            net.busctl("call", "org.roam1", path, "org.roam1.Link", "Reprobe")
            poll(lambda: net.link_prop("d0", "LastProbe") > before, 30, "the re-check's end",
                 0.05)
            out.append(net.link_prop("d0", "ProbeDuration") / 1000)
            assert net.verdicts()[0::2] == ("online", "online"), net.verdicts()
        return out
    finally:
        net.stop_roamd()


def nm_check_span(logpath, t0, fam=4):
    """NetworkManager's first IPv{fam} check of d0 started at or after t0: its "start request"
    to its "check completed" (its own log's stamps), in ms, and the result; None until it
    completed."""
    start = check = None
    with open(logpath, errors="replace") as f:
        for line in f:
            if f"(d0,IPv{fam}," not in line:
                continue
            try:
                t = float(line.split("[", 1)[1].split("]", 1)[0])
                c = line.split(f"(d0,IPv{fam},", 1)[1].split(")", 1)[0]
            except (IndexError, ValueError):
                continue
            if check is None and t >= t0 and "start request" in line:
                start, check = t, c
            elif c == check and "check completed:" in line:
                return (t - start) * 1000, line.split("check completed:", 1)[1].split(";")[0]
    return None


def recheck_nm(net):
    """REPS connectivity checks of NetworkManager's (its D-Bus CheckConnectivity, as its
    300 s timer would start one), d0 connected: each IPv4 check's span in ms."""
    nm, logpath = start_nm(net)
    try:
        dev = poll(lambda: nm_device(net, "d0"), 30, "NetworkManager's d0")
        poll(lambda: nm_prop(net, "Ip4Connectivity", dev) == NM_FULL, 60,
             "NetworkManager: d0 IPv4 connectivity full")
        out = []
        for _ in range(REPS):
            t0 = time.time()
            net.busctl("call", "org.freedesktop.NetworkManager",
                       "/org/freedesktop/NetworkManager", "org.freedesktop.NetworkManager",
                       "CheckConnectivity")
            span, result = poll(lambda: nm_check_span(logpath, t0), 30,
                                "NetworkManager's check in its log", 0.05)
            assert result.strip() == "FULL", result
            out.append(span)
        return out
    finally:
        stop_nm(nm)


def recheck(old):
    """Issue 45 §2: what a re-check costs on the 300 ms one-way line, in round trips, roamd
    (before a change: old, a roamd binary; and this one) and NetworkManager in one world,
    the check server with TCP Fast Open and without."""
    import minienv
    new = minienv.ROAMD
    have_nm = os.access(NM, os.X_OK)
    rtt = 2 * RECHECK_DELAY
    print(f"re-check of an online link, open network, {RECHECK_DELAY} ms one-way (nominal RTT "
          f"{rtt} ms), median of {REPS * ROUNDS}; roamd: ProbeDuration of a Link.Reprobe "
          f"round (both families); NetworkManager: an IPv4 check after CheckConnectivity, "
          f"from its log")
    for kind, what in (("openfo", "server with TCP Fast Open"),
                       ("open", "server without TCP Fast Open")):
        net = ProbeNet(f"bvrc{kind[4:]}", delay_ms=RECHECK_DELAY)
        try:
            setup(net, kind)
            ping = rtt_ms(net)
            who = ([("roamd before", old)] if old else []) + [("roamd", new)] \
                + ([("NetworkManager", None)] if have_nm else [])
            times = {w: [] for w, _ in who}
            for i in range(ROUNDS):
                for w, b in who[::1 if i % 2 == 0 else -1]:
                    times[w] += recheck_nm(net) if b is None else recheck_roamd(net, b)
            print(f"  {what} (ping {ping:.1f} ms)")
            for w, b in who:
                m = statistics.median(times[w])
                print(f"    {w:16} {m:7.1f} ms  {m / rtt:4.2f} RTT  (min {min(times[w]):.1f}, "
                      f"max {max(times[w]):.1f})" + (f"  {b}" if b else ""), flush=True)
            if have_nm:
                n = statistics.median(times["NetworkManager"])
                print(f"    roamd/NetworkManager {statistics.median(times['roamd']) / n:.2f}"
                      + (f", before {statistics.median(times['roamd before']) / n:.2f}"
                         if old else ""), flush=True)
        finally:
            net.close()
        minienv.ROAMD = new


def minienv_roamd():
    import minienv
    return minienv.ROAMD


def main():
    if sys.argv[1:2] == ["recheck"]:
        recheck(sys.argv[2] if len(sys.argv) > 2 else None)
        return
    if sys.argv[1:2] == ["ab"]:
        ab(sys.argv[2:4], int(sys.argv[4]) if len(sys.argv) > 4 else 4)
        return
    if sys.argv[1:2] == ["phases"]:
        phases(sys.argv[2:] or [minienv_roamd()], ROUNDS)
        return
    what = sys.argv[1:] or ["latency", "memory", "memory-floor", "recheck"]
    if "latency" in what:
        latency()
    if "memory" in what:
        memory()
    if "memory-parts" in what:
        memory_parts()
    if "memory-floor" in what:
        memory_floor()
    if "recheck" in what:
        recheck(None)


if __name__ == "__main__":
    main()
