# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest-friendly harness around tests/world/world.sh.

    with World("w1") as w:          # world.sh up w1 ... down w1 (always)
        w.roamd_start()
        link = w.wait_link("wifi0", lambda l: l["State"] == "routable", timeout=10)

Reads go over the world's private bus through tests/lib/roambus.py (one persistent
dbus-python connection); waits on roamd's state wake on its signals (World.wait, wait_link),
and Monitor records them. Run with Debian's /usr/bin/python3, as root.
"""
import contextlib
import fcntl
import ipaddress
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import namedtuple
from dataclasses import dataclass, field
from pathlib import Path

import dbus

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO / "tests" / "lib"))
import roambus  # noqa: E402
from roambus import WAIT, message_json, plain, wait_until  # noqa: E402,F401
WORLD_SH = HERE / "world.sh"
BASE = Path("/run/roam-world")
LOCK_DIR = Path("/run/lock")

ROAMD = Path(os.environ.get("ROAMD", REPO / "build" / "service" / "roamd"))
ROAM = Path(os.environ.get("ROAM", REPO / "build" / "tui" / "roam"))

POLKIT_NAME = "org.freedesktop.PolicyKit1"
POLKIT_PATH = "/org/freedesktop/PolicyKit1/Authority"
BUS_NAME = "org.roam1"
MANAGER_PATH = "/org/roam1"
MANAGER_IFACE = "org.roam1.Manager"
LINK_IFACE = "org.roam1.Link"
OM_IFACE = "org.freedesktop.DBus.ObjectManager"
PROPS_IFACE = "org.freedesktop.DBus.Properties"

UPLINKS = ("wifi0", "cell0", "eth0")
DEFAULT_ATTACH = {"wifi0": "home", "cell0": "living", "eth0": "dead"}
DEFAULT_CONFIG = """[Daemon]
LogLevel=debug
[Bearers]
wifi0=wifi
cell0=cellular
eth0=ethernet
vpn0=vpn
[LinkDNS]
vpn0=203.0.113.65 2001:db8:fe::1
"""

# What each network hands out (see world.sh).
NETWORKS = {
    "home": {
        "v4_prefix": "192.0.2.", "v4_range": (10, 59), "v4_gateway": "192.0.2.1",
        "v6_range": ("2001:db8:1::100", "2001:db8:1::1ff"), "dns": [(4, "192.0.2.1"), (6, "2001:db8:1::1")],
        "domain": "home.test",
    },
    "living": {
        "v4_prefix": "192.0.2.", "v4_range": (80, 120), "v4_gateway": "192.0.2.65",
        "v6_range": ("2001:db8:2::100", "2001:db8:2::1ff"), "dns": [(4, "192.0.2.65"), (6, "2001:db8:2::1")],
        "domain": "living.test",
    },
    "cafe": {
        "v4_prefix": "192.0.2.", "v4_range": (140, 180), "v4_gateway": "192.0.2.129",
        "v6_range": ("2001:db8:3::100", "2001:db8:3::1ff"), "dns": [(4, "192.0.2.129"), (6, "2001:db8:3::1")],
        "domain": "cafe.test",
    },
    "silent": {
        "v4_prefix": "192.0.2.", "v4_range": (200, 240), "v4_gateway": "192.0.2.193",
        "v6_range": ("2001:db8:4::100", "2001:db8:4::1ff"), "dns": [(4, "192.0.2.193"), (6, "2001:db8:4::1")],
        "domain": "silent.test",
    },
    "httpsblocked": {
        "v4_prefix": "198.51.100.", "v4_range": (140, 180), "v4_gateway": "198.51.100.129",
        "v6_range": ("2001:db8:5::100", "2001:db8:5::1ff"), "dns": [(4, "198.51.100.129"), (6, "2001:db8:5::1")],
        "domain": "blocked.test",
    },
    "mobile": {
        "v4_prefix": "198.51.100.", "v4_range": (80, 120), "v4_gateway": "198.51.100.65",
        "v6_range": ("2001:db8:6::100", "2001:db8:6::1ff"), "dns": [(4, "198.51.100.65"), (6, "2001:db8:6::1")],
        "domain": "mobile.test",
    },
}

# Route metrics of the device's uplinks (dhcpcd.conf, IPv4 and IPv6): lowest wins.
METRICS = {"eth0": 100, "wifi0": 600, "cell0": 700}

# Cgroups of the device's services, relative to the world's cgroup (World.cgroup).
CG_ROAMD = "system.slice/roamd.service"
CG_DHCPCD = "system.slice/dhcpcd.service"
CG_BUS = "system.slice/dbus.service"
CG_VPN = "system.slice/roam-vpn.service"
CG_SSHD = "system.slice/sshd.service"

# tests/servers/whoami.py: in the internet and on the TV, TCP and UDP.
WHOAMI_PORT = 7000
WHOAMI = {
    "inet": {4: "203.0.113.10", 6: "2001:db8:ff::10"},
    "tv": {4: "192.0.2.70", 6: "2001:db8:2::70"},
}

# The VPN (tests/servers/tunvpn.py, `world.sh vpn`): the endpoint in the internet, the inner
# addresses of the server (vpns0 in the internet namespace) and of the device's vpn0, and
# the VPN's DNS (on the server's inner addresses), the only one that knows VPN_ONLY_NAME.
VPN = {
    "ifname": "vpn0",
    "endpoint": {4: "203.0.113.20", 6: "2001:db8:ff::20"},
    "port": 1194,
    "server": {4: "203.0.113.65", 6: "2001:db8:fe::1"},
    "client": {4: "203.0.113.66", 6: "2001:db8:fe::2"},
    "prefix": {4: "203.0.113.64/26", 6: "2001:db8:fe::/64"},
    "dns": {4: "203.0.113.65", 6: "2001:db8:fe::1"},
}
VPN_ONLY_NAME = "vpn-only.test"
VPN_ONLY_ADDRS = {4: "203.0.113.10", 6: "2001:db8:ff::10"}
SSHD_BANNER = "SSH-2.0-roam-world-sshd"

# The cafe's captive portal (world.sh): the RFC 8910 API URL its DHCP announces, where the API
# sends users, and where its plain HTTP server redirects every request.
CAFE_API_URL = "https://cafe.test/capport"
CAFE_PORTAL_URL = "https://cafe.test/portal"
CAFE_LOGIN_URL = "http://cafe.test/login"


class WorldError(RuntimeError):
    pass


class WorldBusy(WorldError):
    """Another process (another run of the tests) holds this world."""


def wait_for(predicate, timeout=WAIT, interval=0.05, what=None):
    """Wait until predicate() returns something truthy; return that value.

    predicate() is re-checked whenever roamd sends a signal and, for conditions no signal
    announces (kernel or file state), every `interval` seconds (and never more often); roamd's
    own state is better waited for with World.wait/wait_link (signals only). Never less than
    WAIT seconds.
    Exceptions raised by the predicate count as "not yet". Raises TimeoutError naming
    `what` and the last value (or exception) when the deadline passes."""
    return wait_until(predicate, max(timeout, WAIT),
                      what or getattr(predicate, "__name__", "condition"), errors=True,
                      recheck=interval, min_gap=interval)


unwrap = plain  # dbus-python values to plain Python ones (structs become tuples)


def unwrap_json(v):
    """busctl --json values: variants are {"type": T, "data": D}; structs stay lists."""
    if isinstance(v, dict):
        if set(v) == {"type", "data"}:
            return unwrap_json(v["data"])
        return {k: unwrap_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [unwrap_json(x) for x in v]
    return v


class DBusCallError(Exception):
    def __init__(self, name, message):
        super().__init__("%s: %s" % (name, message))
        self.name = name
        self.message = message


class Monitor:
    """Signals from roamd, in the form `busctl monitor --json=short` prints them, received on
    a connection of the Monitor's own (tests/lib/roambus.py).

    Every signal is stored with the monotonic time it was dispatched; the Monitor only sees
    signals sent after start() returned."""

    def __init__(self, address):
        self.address = address
        self.messages = []  # (t_monotonic, message dict)
        self._rb = None

    def _on_signal(self, t, msg):
        self.messages.append((t, message_json(msg)))

    def start(self):
        if self._rb is not None:
            return self  # (w.monitor() started it; `with` starts it again: one connection)
        self._rb = roambus.RoamBus(self.address)
        self._rb.sync()  # the match rules are in place, nothing older is pending
        self._rb.listeners.append(self._on_signal)
        return self

    def stop(self):
        if self._rb is not None:
            self._rb.close()
            self._rb = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def signals(self, since=0.0):
        if self._rb is not None:
            self._rb.sync()
        return [(t, m) for t, m in self.messages if m.get("type") == "signal" and t >= since]

    def wait_signal(self, predicate, timeout=WAIT, since=0.0):
        """Wait (woken by each signal) for a signal matching predicate(msg) seen at or after
        `since`; returns (t, msg)."""
        def seen():
            for t, m in self.messages:
                if t >= since and m.get("type") == "signal" and predicate(m):
                    return t, m
            return None
        try:
            return wait_until(seen, max(timeout, WAIT), "a matching signal")
        except TimeoutError:
            raise TimeoutError("no matching signal within %.1f s" % max(timeout, WAIT)) from None

    @staticmethod
    def properties_changed(msg, path=None):
        """{prop: value} of a PropertiesChanged message (None if it is not one)."""
        if msg.get("member") != "PropertiesChanged" or (path and msg.get("path") != path):
            return None
        data = msg["payload"]["data"]
        return unwrap_json(data[1])


def cgroup2_mount():
    """The host's cgroup2 mount point (/sys/fs/cgroup, or .../unified on hybrid systems)."""
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            sep = fields.index("-")
            if fields[sep + 1] == "cgroup2":
                return Path(fields[4])
    raise WorldError("no cgroup2 mount")


def _check_cgroup(rel):
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or any(p in ("", ".", "..") for p in parts):
        raise ValueError("cgroup %r: a relative path without . or .." % (rel,))
    return rel


# A TCP or UDP client, run in a namespace: prints one JSON object (see ConnectResult).
CLIENT_PY = r'''
import errno, json, socket, sys
a = json.loads(sys.argv[1])
fam = socket.AF_INET6 if ":" in a["host"] else socket.AF_INET
res = {"ok": False, "reply": "", "error": None, "echo": [], "proto": a["proto"],
       "family": 6 if fam == socket.AF_INET6 else 4}
try:
    s = socket.socket(fam, socket.SOCK_STREAM if a["proto"] == "tcp" else socket.SOCK_DGRAM)
    if a.get("bind_dev"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, a["bind_dev"].encode())
    if a.get("mark"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, a["mark"])
    if a.get("source"):
        s.bind((a["source"], 0))
    s.settimeout(a["timeout"])
    s.connect((a["host"], a["port"]))
    if a["proto"] == "tcp":
        f = s.makefile("rb")
        line = f.readline()
        if not line:
            raise OSError(errno.ECONNRESET, "closed before the greeting")
        res["reply"] = line.decode(errors="replace").rstrip("\r\n")
        for l in a.get("send", []):
            s.sendall(l.encode() + b"\n")
            res["echo"].append(f.readline().decode(errors="replace").rstrip("\r\n"))
    else:
        s.send(b"whoami\n")
        res["reply"] = s.recv(4096).decode(errors="replace").rstrip("\n")
    res["ok"] = True
except socket.timeout:
    res["error"] = "timeout"
except OSError as e:
    res["error"] = errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)
print(json.dumps(res))
'''


@dataclass
class ConnectResult:
    """What a client saw: ok, the peer address and port the server reported (whoami), the
    error (an errno name such as "ECONNREFUSED", "ENETUNREACH", "EPERM", or "timeout"), the
    server's first line, the echoes of lines sent; the protocol and family it used."""
    ok: bool
    addr: str = None
    port: int = None
    error: str = None
    reply: str = ""
    echo: list = field(default_factory=list)
    proto: str = "tcp"
    family: int = 4

    # What a reject rule (nft "reject": a TCP reset, else ICMP administratively prohibited)
    # makes connect(), send() or recv() fail with; a drop on the way is a "timeout" instead,
    # nothing answers. TCP hears the reset. UDP: a reject in this machine's output path also
    # drops the datagram there, and send() fails at once with EPERM; one further on answers
    # with the ICMP error, which a connected UDP socket (no IP_RECVERR) hears only when it is
    # a hard one such as administratively prohibited, never a neighbour that did not answer.
    REJECTED = {("tcp", 4): ("ECONNREFUSED",), ("tcp", 6): ("ECONNREFUSED",),
                ("udp", 4): ("EPERM", "EHOSTUNREACH"), ("udp", 6): ("EPERM", "EACCES")}

    @property
    def rejected(self):
        """Whether the attempt met a reject's answer (not a timeout, not a success)."""
        return not self.ok and self.error in self.REJECTED[self.proto, self.family]

    @classmethod
    def from_json(cls, text):
        try:
            d = json.loads(text.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise WorldError("client printed no result: %r" % text) from None
        r = cls(ok=d["ok"], error=d["error"], reply=d["reply"], echo=d["echo"],
                proto=d["proto"], family=d["family"])
        m = re.fullmatch(r"(\S+) (\d+)", r.reply)
        if r.ok and m:
            r.addr, r.port = m.group(1), int(m.group(2))
        return r


# A long TCP stream from whoami: one JSON line with the greeting, then the server's lines as
# they come, then one JSON line with how it ended.
STREAM_PY = r'''
import errno, json, socket, sys
a = json.loads(sys.argv[1])
fam = socket.AF_INET6 if ":" in a["host"] else socket.AF_INET
try:
    s = socket.socket(fam, socket.SOCK_STREAM)
    if a.get("bind_dev"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, a["bind_dev"].encode())
    if a.get("mark"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_MARK, a["mark"])
    if a.get("source"):
        s.bind((a["source"], 0))
    s.settimeout(a["timeout"])
    s.connect((a["host"], a["port"]))
    f = s.makefile("rb")
    print(json.dumps({"peer": f.readline().decode().strip()}), flush=True)
    s.sendall(b"stream\n")
    s.settimeout(a["idle_timeout"])
    for line in f:
        print(line.decode().strip(), flush=True)
    print(json.dumps({"end": "EOF"}), flush=True)
except socket.timeout:
    print(json.dumps({"end": "timeout"}), flush=True)
except OSError as e:
    print(json.dumps({"end": errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)}),
          flush=True)
'''


class WhoamiStream:
    """A TCP connection from the device to whoami in stream mode ("tick N" every 100 ms),
    for handover tests. peer: (address, port) the server saw; ticks: [(monotonic time, N)];
    end: None while it runs, else how it ended ("EOF", "timeout", an errno name)."""

    def __init__(self, world, host, port=WHOAMI_PORT, cgroup=None, bind_dev=None, source=None,
                 mark=None, timeout=5.0, idle_timeout=None, user=None):
        args = {"host": host, "port": port, "bind_dev": bind_dev, "source": source,
                "mark": mark, "timeout": timeout, "idle_timeout": idle_timeout}
        self.peer = None
        self.ticks = []
        self.end = None
        self._cond = threading.Condition()
        self.proc = world.dev_popen(["/usr/bin/python3", "-u", "-c", STREAM_PY,
                                     json.dumps(args)], cgroup=cgroup, user=user,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    text=True)
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.proc.stdout:
            now = time.monotonic()
            line = line.strip()
            with self._cond:
                if line.startswith("{"):
                    d = json.loads(line)
                    if "peer" in d:
                        m = re.fullmatch(r"(\S+) (\d+)", d["peer"])
                        self.peer = (m.group(1), int(m.group(2))) if m else (d["peer"], None)
                    else:
                        self.end = d["end"]
                elif line.startswith("tick "):
                    self.ticks.append((now, int(line.split()[1])))
                self._cond.notify_all()
        with self._cond:
            if self.end is None:
                self.end = "exited"
            self._cond.notify_all()

    def wait(self, predicate, timeout, what="stream"):
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self), timeout):
                raise TimeoutError("%s: not within %.1f s (peer %s, %d ticks, end %s)"
                                   % (what, timeout, self.peer, len(self.ticks), self.end))

    def wait_connected(self, timeout=10):
        """The peer (address, port) the server saw; raises WorldError when it failed."""
        self.wait(lambda s: s.peer is not None or s.end is not None, timeout, "connected")
        if self.peer is None:
            raise WorldError("stream failed: %s" % self.end)
        return self.peer

    def wait_ticks(self, n, timeout=10):
        """Wait for n more ticks from now."""
        with self._cond:
            want = len(self.ticks) + n
        self.wait(lambda s: len(s.ticks) >= want or s.end is not None, timeout, "%d ticks" % n)
        return self.ticks[-1] if self.ticks else None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(5)
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


# Sniffer in a network namespace: every IPv4/IPv6 packet on the given interfaces (all but
# lo when none are given), one packet socket for all of them, until stdin closes; then one
# JSON list.
CAPTURE_PY = r'''
import json, select, socket, struct, sys
want = set(json.loads(sys.argv[1]) or ())
ETH_P_ALL, PACKET_OUTGOING = 3, 4
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
s.setblocking(False)
NAMES = {1: "icmp", 6: "tcp", 17: "udp", 58: "icmpv6"}
out = []

def l4(proto, data):
    name = NAMES.get(proto, str(proto))
    if proto in (6, 17) and len(data) >= 4:
        return name, struct.unpack("!HH", data[:4])
    return name, (None, None)

def parse(frame, addr):
    ifname, _, pkttype, hatype = addr[:4]
    if (want and ifname not in want) or (not want and ifname == "lo"):
        return
    data = frame
    if hatype in (1, 772):  # Ethernet, loopback
        if len(data) < 14:
            return
        et = struct.unpack("!H", data[12:14])[0]
        data = data[14:]
        if et == 0x8100 and len(data) >= 4:
            et, data = struct.unpack("!H", data[2:4])[0], data[4:]
        ver = {0x0800: 4, 0x86DD: 6}.get(et)
    else:  # tun: the IP packet itself
        ver = data[0] >> 4 if data else None
    if ver == 4 and len(data) >= 20:
        ihl = (data[0] & 15) * 4
        proto = data[9]
        frag = struct.unpack("!H", data[6:8])[0] & 0x1FFF
        src, dst = socket.inet_ntop(socket.AF_INET, data[12:16]), socket.inet_ntop(socket.AF_INET, data[16:20])
        name, ports = l4(proto, data[ihl:] if frag == 0 else b"")
    elif ver == 6 and len(data) >= 40:
        proto, off = data[6], 40
        while proto in (0, 43, 60, 44) and len(data) >= off + 8:
            nxt = data[off]
            if proto == 44:
                if struct.unpack("!H", data[off + 2:off + 4])[0] & 0xFFF8:
                    proto, off = nxt, len(data)  # a later fragment: no ports
                    break
                off += 8
            else:
                off += (data[off + 1] + 1) * 8
            proto = nxt
        src, dst = socket.inet_ntop(socket.AF_INET6, data[8:24]), socket.inet_ntop(socket.AF_INET6, data[24:40])
        name, ports = l4(proto, data[off:])
    else:
        return
    out.append([ifname, "out" if pkttype == PACKET_OUTGOING else "in", src, dst, name,
                ports[0], ports[1]])

def drain():
    while True:
        try:
            frame, addr = s.recvfrom(65535)
        except BlockingIOError:
            return
        parse(frame, addr)

print("ready", flush=True)
while True:
    r, _, _ = select.select([s, sys.stdin], [], [])
    if s in r:
        drain()
    if sys.stdin in r and not sys.stdin.readline():
        break
drain()
print(json.dumps(out), flush=True)
'''

Packet = namedtuple("Packet", "iface direction src dst proto sport dport")


class Capture:
    """Packets on interfaces of a namespace (AF_PACKET, in a child that entered the
    namespace). Started by World.capture(); stop() returns [Packet(iface, direction ("in" or
    "out"), src, dst, proto ("tcp", "udp", "icmp", "icmpv6" or the number), sport, dport)]
    (ports None but for TCP and UDP). Use as a context manager; packets stays set."""

    def __init__(self, world, ifaces=None, ns="dev"):
        self.packets = None
        self.proc = subprocess.Popen(
            ["nsenter", "--net=/run/netns/roam-%s-%s" % (world.name, ns), "--",
             "/usr/bin/python3", "-u", "-c", CAPTURE_PY, json.dumps(list(ifaces or []))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready = self.proc.stdout.readline()
        if ready.strip() != "ready":
            self.proc.kill()
            self.proc.wait()
            raise WorldError("the capture did not start: %r" % ready)

    def stop(self):
        if self.packets is None:
            self.proc.stdin.close()
            text = self.proc.stdout.read()
            self.proc.wait(30)
            self.packets = [Packet(*p) for p in json.loads(text)]
        return self.packets

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.packets is None:
            try:
                self.stop()
            except Exception:  # noqa: BLE001
                self.proc.kill()
                self.proc.wait()


class World:
    def __init__(self, name, roamd=None, roam=None):
        if not re.fullmatch(r"[A-Za-z0-9_]{1,16}", name):
            raise ValueError("bad world name %r" % name)
        self.name = name
        self.roamd = Path(roamd or ROAMD)
        self.roam = Path(roam or ROAM)
        self.dir = BASE / name
        self.address = "unix:path=%s/bus" % self.dir
        self._bus = None
        self._lock = None

    # ---- world.sh ---------------------------------------------------------------------------
    def sh(self, *args, check=True, timeout=120, input=None):
        r = subprocess.run([str(WORLD_SH), *map(str, args)], capture_output=True, text=True,
                           timeout=timeout, input=input, env=dict(os.environ, WORLD_QUIET="1"))
        if check and r.returncode != 0:
            raise WorldError("world.sh %s failed (%d):\n%s%s"
                             % (" ".join(map(str, args)), r.returncode, r.stdout, r.stderr))
        return r

    def lock(self):
        """Claim the name (flock on /run/lock/roam-world-NAME.lock) until down(): a second run
        of the tests on this machine gets WorldBusy instead of tearing this world down."""
        if self._lock is None:
            LOCK_DIR.mkdir(parents=True, exist_ok=True)
            f = open(LOCK_DIR / ("roam-world-%s.lock" % self.name), "w")
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.close()
                raise WorldBusy("world %s is in use by another process" % self.name) from None
            self._lock = f
        return self

    def up(self, wait=True):
        self.lock()
        self._drop_bus()
        self.sh("down", self.name, timeout=120)
        args = ["up", self.name, "--roamd", self.roamd, "--roam", self.roam]
        if not wait:
            args.append("--no-wait")
        self.sh(*args, timeout=180)
        return self

    def down(self):
        """Tear the world down (never one another process holds) and release the name."""
        self.lock()
        self._drop_bus()
        try:
            self.sh("down", self.name, timeout=120)
        finally:
            self._lock.close()
            self._lock = None

    def __enter__(self):
        try:
            return self.up()
        except BaseException:
            self.down()
            raise

    def __exit__(self, *exc):
        self.down()

    def path(self, *parts):
        return self.dir.joinpath(*parts)

    # ---- roamd --------------------------------------------------------------------------
    def roamd_start(self, *args):
        r = self.sh("roamd-start", self.name, *args, timeout=60)
        self._drop_bus()
        return int(r.stdout.strip().splitlines()[-1])

    def roamd_stop(self, signal="TERM"):
        self.sh("roamd-stop", self.name, signal, timeout=60)
        self._drop_bus()

    def roamd_kill9(self):
        self.sh("roamd-kill9", self.name, timeout=60)
        self._drop_bus()

    def roamd_signal(self, signal):
        self.sh("roamd-signal", self.name, signal)

    def roamd_restart(self, *args):
        self.roamd_stop()
        return self.roamd_start(*args)

    def roamd_pid(self):
        r = self.sh("roamd-pid", self.name, check=False)
        return int(r.stdout) if r.returncode == 0 and r.stdout.strip() else None

    def roamd_running(self):
        return self.roamd_pid() is not None

    def roamd_log(self):
        try:
            return self.path("roamd.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    @property
    def default_config(self):
        """roamd.conf as `up` wrote it: DEFAULT_CONFIG, plus a [Probe] section aimed at the
        world's check server when this roamd knows probes."""
        try:
            return self.path("roamd.conf.default").read_text()
        except FileNotFoundError:
            return DEFAULT_CONFIG

    @property
    def probes(self):
        return "[Probe]" in self.default_config

    def write_config(self, text=None, name="roamd.conf"):
        """Write a file into the device's /etc/roam (atomically)."""
        if text is None:
            text = self.default_config
        p = self.path("etc-roam", name)
        tmp = p.with_name(p.name + ".tmp")
        tmp.write_text(text)
        os.rename(tmp, p)
        return "/etc/roam/" + name

    # ---- the kernel side ------------------------------------------------------------------
    def move(self, uplink, network):
        self.sh("move", self.name, uplink, network)

    def carrier(self, uplink, on):
        self.sh("carrier", self.name, uplink, "on" if on else "off")

    def internet(self, on):
        self.sh("internet", self.name, "on" if on else "off")

    def delay(self, uplink, ms):
        """A delay line of ms milliseconds each way between uplink and its network (0: none)."""
        self.sh("delay", self.name, uplink, int(ms))

    def uplink(self, uplink):
        """(network, carrier on?, delay in ms) of a device uplink."""
        net, carrier, ms = self.sh("uplink", self.name, uplink).stdout.split()
        return net, carrier == "on", int(ms)

    def wifi(self, on):
        """wpa_supplicant for wifi0 (world.sh wifi): each network's SSID and BSSID."""
        self.sh("wifi", self.name, "on" if on else "off")

    def cafe_login(self):
        self.sh("cafe-login", self.name)

    def cafe_logout(self, reset=False):
        """Close the cafe (the session ran out); reset: as a portal that refuses apps'
        connections with TCP resets and keeps its DNS truthful (world.sh)."""
        self.sh("cafe-logout-reset" if reset else "cafe-logout", self.name)

    def reset(self):
        """The network side of the default world (world.sh reset); returns what changed."""
        return self.sh("reset", self.name).stdout.splitlines()

    def dhcpcd_restart(self):
        self.sh("dhcpcd-restart", self.name, timeout=120)

    def add_link(self, ifname):
        self.sh("add-link", self.name, ifname)

    def del_link(self, ifname):
        self.sh("del-link", self.name, ifname)

    def exec(self, ns, *cmd, check=True, timeout=60, input=None, user=None):
        """Run cmd in namespace roam-NAME-ns (dev: the device's mount+net namespaces).
        user: run as that uid/gid (through setpriv, groups cleared)."""
        cmd = list(map(str, cmd))
        if user is not None:
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups",
                   "--", *cmd]
        return self.sh("exec", self.name, ns, *cmd, check=check, timeout=timeout, input=input)

    def dev(self, *cmd, **kw):
        return self.exec("dev", *cmd, **kw)

    def kernel_links(self):
        """{name: ifindex} of the device's links, loopback excluded."""
        r = self.dev("ip", "-j", "link", "show")
        return {l["ifname"]: l["ifindex"] for l in json.loads(r.stdout)
                if l["ifname"] != "lo"}

    def status(self, *args, check=False, user=None):
        cmd = [self.roam, "status", *args]
        return self.dev(*cmd, check=check, user=user)

    # ---- the device's processes, in cgroups -------------------------------------------------
    @property
    def cgroup(self):
        """The world's cgroup on the host: <cgroup2 mount>/roam-world-NAME (the device sees
        the same one as /sys/fs/cgroup/roam-world-NAME)."""
        return cgroup2_mount() / ("roam-world-" + self.name)

    def cgroup_procs(self, cgroup):
        """Pids in cgroup (relative to the world's cgroup), [] when it does not exist."""
        try:
            text = (self.cgroup / _check_cgroup(cgroup) / "cgroup.procs").read_text()
        except FileNotFoundError:
            return []
        return [int(x) for x in text.split()]

    def _dev_argv(self, cmd, cgroup=None, user=None):
        cmd = list(map(str, cmd))
        if user is not None:
            cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups",
                   "--", *cmd]
        # a world up with --cgroupns: the device's cgroup namespace too (world.sh's CGNS)
        cgns = (["--cgroup=%s" % self.path("cgroupns")]
                if self.path("cgroupns.on").exists() else [])
        argv = ["nsenter", "--mount=%s" % self.path("mnt"), "--uts=%s" % self.path("uts"),
                *cgns, "--net=/run/netns/roam-%s-dev" % self.name, "--wd=/", "--",
                "env", "DBUS_SYSTEM_BUS_ADDRESS=" + self.address, *cmd]
        if cgroup is not None:
            d = self.cgroup / _check_cgroup(cgroup)
            d.mkdir(parents=True, exist_ok=True)
            # the shell joins the cgroup, then becomes nsenter and the command (a socket's
            # cgroup is fixed when it is made: join before exec)
            argv = ["/bin/sh", "-c", 'echo $$ >"$0" && exec "$@"', str(d / "cgroup.procs"),
                    *argv]
        return argv

    def dev_popen(self, cmd, cgroup=None, user=None, **popen_kw):
        """Start cmd in the device (mount, uts and net namespaces, the world's bus, like
        `world.sh exec NAME dev`), in cgroup `cgroup` relative to the world's cgroup (created
        when missing; None: the caller's cgroup), as uid/gid `user` when given."""
        return subprocess.Popen(self._dev_argv(cmd, cgroup, user), **popen_kw)

    def dev_run(self, cmd, cgroup=None, user=None, check=True, timeout=60, input=None):
        """dev_popen and wait: a CompletedProcess with text stdout and stderr."""
        r = subprocess.run(self._dev_argv(cmd, cgroup, user), capture_output=True, text=True,
                           timeout=timeout, input=input)
        if check and r.returncode != 0:
            raise WorldError("%s in the device failed (%d):\n%s%s"
                             % (" ".join(map(str, cmd)), r.returncode, r.stdout, r.stderr))
        return r

    def dev_addr(self, ifname, family):
        """The first global address of family 4 or 6 on a device link, or None."""
        for l in json.loads(self.dev("ip", "-j", "-%d" % family, "addr", "show", "dev",
                                     ifname, "scope", "global", check=False).stdout or "[]"):
            for a in l.get("addr_info", []):
                if "local" in a and "tentative" not in a:
                    return a["local"]
        return None

    # ---- clients --------------------------------------------------------------------------
    @staticmethod
    def _client_args(host, port, proto, bind_dev, source, mark, timeout, send):
        if proto not in ("tcp", "udp"):
            raise ValueError("proto tcp or udp")
        return json.dumps({"host": host, "port": port, "proto": proto, "bind_dev": bind_dev,
                           "source": source, "mark": mark, "timeout": timeout,
                           "send": list(send)})

    def dev_connect(self, host, port=WHOAMI_PORT, proto="tcp", cgroup=None, bind_dev=None,
                    source=None, mark=None, timeout=5.0, send=(), user=None):
        """A TCP connection (read the greeting, send each line of `send`, read its echo) or a
        UDP request/answer from the device, in `cgroup`; SO_BINDTODEVICE bind_dev, bound to
        address `source`, SO_MARK `mark` when given. Returns a ConnectResult: with whoami,
        addr/port are what the server saw; on failure the errno name ("timeout" when nothing
        answered within `timeout`)."""
        args = self._client_args(host, port, proto, bind_dev, source, mark, timeout, send)
        r = self.dev_run(["/usr/bin/python3", "-c", CLIENT_PY, args], cgroup=cgroup,
                         user=user, timeout=timeout + 30)
        return ConnectResult.from_json(r.stdout)

    def ns_connect(self, ns, host, port=WHOAMI_PORT, proto="tcp", bind_dev=None, source=None,
                   timeout=5.0, send=()):
        """dev_connect from namespace roam-NAME-ns (e.g. "home", the router behind wifi0)."""
        args = self._client_args(host, port, proto, bind_dev, source, None, timeout, send)
        r = self.exec(ns, "/usr/bin/python3", "-c", CLIENT_PY, args, timeout=timeout + 30)
        return ConnectResult.from_json(r.stdout)

    def whoami(self, family=4, proto="tcp", server="inet", **kw):
        """Ask whoami (server "inet": the internet, "tv": the living room's TV) from the
        device which address it sees; keywords as for dev_connect (cgroup, bind_dev, ...)."""
        return self.dev_connect(WHOAMI[server][family], WHOAMI_PORT, proto, **kw)

    def silent_whoami_drops(self):
        """How many packets to whoami's port the silent gateway dropped (world.sh counts
        them apart from its other drops)."""
        rules = self.exec("silent", "nft", "list", "chain", "inet", "silent", "lan").stdout
        m = re.search(r'th dport %d counter packets (\d+)' % WHOAMI_PORT, rules)
        if not m:
            raise WorldError("the silent gateway counts no whoami drops:\n" + rules)
        return int(m.group(1))

    def whoami_dropped_by_silent(self, family=4, proto="tcp", timeout=10.0, **kw):
        """A whoami attempt from the device (keywords as for dev_connect: cgroup...) that the
        silent gateway drops: waits until its drop counter for whoami's port moves while the
        attempt runs (so the attempt left by the link in the silent network, and nothing
        answered it), then ends the attempt. Raises when the counter does not move within
        timeout, or when the attempt ended first (it got an answer or an error elsewhere)."""
        before = self.silent_whoami_drops()
        args = self._client_args(WHOAMI["inet"][family], WHOAMI_PORT, proto, kw.get("bind_dev"),
                                 kw.get("source"), kw.get("mark"), timeout + 5, ())
        p = self.dev_popen(["/usr/bin/python3", "-c", CLIENT_PY, args], cgroup=kw.get("cgroup"),
                           user=kw.get("user"), stdout=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: p.poll() is not None or self.silent_whoami_drops() > before,
                     timeout, interval=0.2, what="the silent gateway drops the whoami attempt")
            if p.poll() is not None:
                raise WorldError("the whoami attempt ended before the silent gateway dropped "
                                 "it: %s" % p.communicate()[0].strip())
        finally:
            if p.poll() is None:
                p.kill()
            p.communicate()

    def whoami_stream(self, family=4, server="inet", **kw):
        """A long TCP stream ("tick N" every 100 ms) from whoami to the device; keywords as
        for WhoamiStream (cgroup, bind_dev, source, mark, timeout, idle_timeout, user)."""
        return WhoamiStream(self, WHOAMI[server][family], WHOAMI_PORT, **kw)

    def capture(self, ifaces=None, ns="dev"):
        """Start capturing IPv4/IPv6 packets on the device's interfaces `ifaces` (None: all
        but lo), returns a Capture: stop() gives the list of Packets."""
        return Capture(self, ifaces, ns)

    # ---- the VPN and sshd -----------------------------------------------------------------
    def vpn_up(self, transport=4):
        """Start the VPN client (world.sh vpn NAME up): vpn0 pings the server when this
        returns. transport: 4 or 6, the family of the UDP transport to the endpoint."""
        self.sh("vpn", self.name, "up", transport, timeout=60)

    def vpn_down(self):
        self.sh("vpn", self.name, "down", timeout=60)

    def vpn_status(self):
        """"up" or "down"."""
        return self.sh("vpn", self.name, "status").stdout.split()[0]

    def sshd_start(self):
        """The SSH-like line echo on port 22 of the device (world.sh sshd NAME start)."""
        self.sh("sshd", self.name, "start")

    def sshd_stop(self):
        self.sh("sshd", self.name, "stop")

    def ssh_check(self, family=4, ns="home", ifname="wifi0", timeout=5.0):
        """Connect from namespace ns (default: the home router, on wifi0's side) to port 22
        of the device's ifname address of that family; ok when the SSH banner came and a line
        was echoed. Returns a ConnectResult (reply: the banner)."""
        addr = self.dev_addr(ifname, family)
        if addr is None:
            raise WorldError("%s has no global IPv%d address" % (ifname, family))
        r = self.ns_connect(ns, addr, 22, "tcp", timeout=timeout, send=["roam-ssh-check"])
        r.ok = r.ok and r.reply == SSHD_BANNER and r.echo == ["roam-ssh-check"]
        return r

    # ---- the bus ------------------------------------------------------------------------
    def _drop_bus(self):
        if self._bus is not None:
            self._bus.close()
            self._bus = None

    @property
    def rb(self):
        """The world's roambus.RoamBus (persistent; its signals wake World.wait)."""
        if self._bus is None:
            self._bus = roambus.RoamBus(self.address)
        return self._bus

    @property
    def bus(self):
        return self.rb.conn

    def call(self, path, iface, method, signature="", args=(), timeout=10,
             dest=BUS_NAME):
        """A blocking method call; returns the unwrapped reply (a tuple when there are
        several values) or raises DBusCallError with the D-Bus error name."""
        try:
            r = self.bus.call_blocking(dest, path, iface, method, signature, tuple(args),
                                       timeout=timeout)
        except dbus.exceptions.DBusException as e:
            name = e.get_dbus_name() or ""
            if name in ("org.freedesktop.DBus.Error.Disconnected",):
                self._drop_bus()
            raise DBusCallError(name, e.get_dbus_message() or "") from None
        return unwrap(r)

    def call_as(self, uid, path, iface, method, *typed_args):
        """Call as another user through dbus-send (typed_args like 'string:wifi0').
        Returns (ok, error_name, output)."""
        cmd = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups", "--",
               "dbus-send", "--bus=" + self.address, "--print-reply", "--reply-timeout=10000",
               "--dest=" + BUS_NAME, path, "%s.%s" % (iface, method), *typed_args]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        out = r.stdout + r.stderr
        m = re.search(r"^Error ([A-Za-z0-9_.]+)", out, re.M)
        return r.returncode == 0, (m.group(1) if m else None), out

    @contextlib.contextmanager
    def polkit(self, allowed=(), delay=None):
        """polkit on the world's bus (tests/dbusmock/polkitd.py: as strict as polkitd, with
        data/org.roam1.policy's implicit authorizations) for the body of a with block, a rule
        granting the actions in allowed (and answering after delay seconds); yields a function
        that replaces the granted actions."""
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        template = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dbusmock",
                                "polkitd.py")
        mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                                 template], env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)

        def allow(actions):
            self.call(POLKIT_PATH, "org.freedesktop.DBus.Mock", "SetAllowed", "as",
                      [list(actions)], dest=POLKIT_NAME)
        try:
            wait_for(lambda: self.call("/org/freedesktop/DBus", "org.freedesktop.DBus",
                                       "NameHasOwner", "s", [POLKIT_NAME],
                                       dest="org.freedesktop.DBus"), 10, what="polkit mock")
            if allowed:
                allow(allowed)
            if delay is not None:
                self.call(POLKIT_PATH, "org.freedesktop.DBus.Mock", "SetDelay", "d", [delay],
                          dest=POLKIT_NAME)
            yield allow
        finally:
            mock.send_signal(signal.SIGTERM)
            mock.wait(10)

    def managed_objects(self):
        return self.call(MANAGER_PATH, OM_IFACE, "GetManagedObjects")

    def manager(self):
        return self.call(MANAGER_PATH, PROPS_IFACE, "GetAll", "s", (MANAGER_IFACE,))

    def links(self):
        """{name: properties} of every org.roam1.Link object; '_path' holds its path."""
        out = {}
        for path, ifaces in self.managed_objects().items():
            props = ifaces.get(LINK_IFACE)
            if props is not None:
                out[props["Name"]] = dict(props, _path=path)
        return out

    def link(self, name):
        return self.links().get(name)

    def check_log_size(self):
        """Where the internet's check server's request log ends now (for check_requests)."""
        return self.path("inet-httpd.log").stat().st_size

    def check_requests(self, since):
        """The check server's probe requests after byte offset `since` of its log:
        [(client, line)]."""
        with open(self.path("inet-httpd.log"), "rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
        out = []
        for line in text.splitlines():
            client, _, rest = line.partition(" ")
            if "/roam-probe" in rest:
                out.append((client.removeprefix("::ffff:"), rest))
        return out

    def wait(self, predicate, timeout=WAIT, what=None):
        """Wait until predicate() (a condition on roamd's state, read over the bus) is true;
        re-checked only when roamd sends a signal or its name changes owner. Exceptions
        count as "not yet". Returns its value; TimeoutError after `timeout` (>= WAIT)."""
        try:
            self.rb  # connected before the first check, so no signal is missed
        except dbus.exceptions.DBusException:
            pass  # no bus (yet): the predicate's calls fail and say so
        return wait_until(predicate, max(timeout, WAIT),
                          what or getattr(predicate, "__name__", "condition"), errors=True)

    def wait_link(self, name, predicate=lambda l: True, timeout=WAIT, what=None):
        """Wait until link `name` exists and predicate(props) holds; returns its props."""
        def check():
            l = self.link(name)
            return l if l is not None and predicate(l) else None
        return self.wait(check, timeout, what=what or "link %s" % name)

    def wait_no_link(self, name, timeout=WAIT):
        return self.wait(lambda: name not in self.links(), timeout, what="link %s gone" % name)

    def monitor(self):
        return Monitor(self.address).start()

    # ---- restoring the default world ----------------------------------------------------
    def uplink_network(self, uplink):
        net, carrier, _ = self.uplink(uplink)
        return net, carrier

    def restore(self, timeout=25):
        """Put the world back as `up` made it: uplinks attached where they were, carrier on,
        no delay, internet on, the cafe captive, extra links gone, default configuration,
        roamd running and showing the leases."""
        changed = bool(self.reset())
        kernel = self.kernel_links()
        extra = [n for n in kernel if n not in UPLINKS]
        if extra:
            batch = "".join("link del %s\n" % n for n in extra if "@" not in n)
            self.dev("ip", "-force", "-batch", "-", input=batch, check=False)
        conf = self.path("etc-roam", "roamd.conf")
        if conf.read_text() != self.default_config:
            self.write_config()
            if self.roamd_running():
                self.roamd_signal("HUP")
        if not self.roamd_running():
            self.roamd_start()
        try:
            self.wait_default_state(timeout if (changed or extra) else WAIT)
        except TimeoutError:
            # roamd lost track (a bug the failing test has reported already), or dhcpcd did
            # (its route socket overflowed): start them afresh so the next test begins from
            # a known state.
            if not self.kernel_default_ok():
                self.dhcpcd_restart()
            self.roamd_kill9()
            self.roamd_start()
            self.wait_default_state(timeout)

    def kernel_default_ok(self):
        """The kernel side of the default state: wifi0 and cell0 with global IPv4 and IPv6
        addresses and default routes of both families, no extra links."""
        if set(self.kernel_links()) != set(UPLINKS):
            return False
        a = json.loads(self.dev("ip", "-j", "addr", "show").stdout)
        r4 = json.loads(self.dev("ip", "-j", "-4", "route", "show", "default").stdout)
        r6 = json.loads(self.dev("ip", "-j", "-6", "route", "show", "default").stdout)
        for ifname in ("wifi0", "cell0"):
            info = [x for l in a if l["ifname"] == ifname for x in l.get("addr_info", [])]
            fams = {x["family"] for x in info if x.get("scope") == "global"}
            if fams != {"inet", "inet6"}:
                return False
            if not any(r.get("dev") == ifname for r in r4) or \
                    not any(r.get("dev") == ifname for r in r6):
                return False
        return True

    def wait_default_state(self, timeout=30):
        """Wait until roamd shows wifi0 in the home network, cell0 in the living room
        (both routable, dual stack, DNS) and eth0 without a usable address."""
        problems = []

        def ok():
            ls = self.links()
            problems[:] = default_state_problems(ls)
            return not problems and ls
        try:
            return self.wait(ok, timeout, what="default world state")
        except TimeoutError as e:
            raise TimeoutError("%s; still wrong: %s" % (e, "; ".join(problems))) from None


def default_state_problems(links):
    """What differs from the default world in roamd's view (a list of strings)."""
    out = []
    if set(links) != set(UPLINKS):
        out.append("links %s" % sorted(links))
    for name, net in (("wifi0", "home"), ("cell0", "living")):
        l = links.get(name)
        if l is not None and not lease_matches(l, net):
            out.append("%s: State=%s Addresses=%s Gateways=%s DNS=%s/%s Domains=%s"
                       % (name, l["State"], l["Addresses"], l["Gateways"], l["DNS"],
                          l["DNSSource"], l["Domains"]))
    e = links.get("eth0")
    if e is not None and e["State"] not in ("no-address", "link-local"):
        out.append("eth0: State=%s" % e["State"])
    return out


def addrs(link, family, scope="global"):
    return [a[1] for a in link["Addresses"] if a[0] == family and a[3] == scope]


def link_addrs(link):
    """The link's global addresses (of both families), as a set."""
    return {a[1] for a in link["Addresses"] if a[3] == "global"} if link else set()


def gateways(link, family):
    return [g[1] for g in link["Gateways"] if g[0] == family]


def lease_matches(link, network):
    """The link shows exactly what `network` hands out: routable, v4 and v6 addresses from
    its DHCP ranges, its gateways, its DNS servers and domain."""
    n = NETWORKS[network]
    v4, v6 = addrs(link, 4), addrs(link, 6)
    if link["State"] != "routable" or len(v4) != 1 or len(v6) < 1:
        return False
    if not v4[0].startswith(n["v4_prefix"]):
        return False
    last = int(v4[0].rsplit(".", 1)[1])
    lo, hi = n["v4_range"]
    if not lo <= last <= hi:
        return False
    lo6, hi6 = (ipaddress.IPv6Address(a) for a in n["v6_range"])
    if not all(lo6 <= ipaddress.IPv6Address(a) <= hi6 for a in v6):
        return False
    if gateways(link, 4) != [n["v4_gateway"]] or len(gateways(link, 6)) != 1:
        return False
    if sorted(map(tuple, link["DNS"])) != sorted(n["dns"]):
        return False
    return link["DNSSource"] == "dhcpcd" and n["domain"] in link["Domains"]


DNS_QUERY_PY = r'''
import random, socket, struct, sys
server, name, qtype = sys.argv[1], sys.argv[2], {"A": 1, "AAAA": 28}[sys.argv[3]]
qid = random.randrange(65536)
q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0)
q += b"".join(bytes([len(p)]) + p.encode() for p in name.split(".")) + b"\0"
q += struct.pack(">HH", qtype, 1)
fam = socket.AF_INET6 if ":" in server else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, (server, 53))
r = s.recv(4096)
rid, flags, qd, an = struct.unpack(">HHHH", r[:8])
assert rid == qid
print("rcode", flags & 15)
off = 12
def skip_name(off):
    while True:
        l = r[off]
        if l == 0: return off + 1
        if l & 0xC0 == 0xC0: return off + 2
        off += l + 1
for _ in range(qd):
    off = skip_name(off) + 4
for _ in range(an):
    off = skip_name(off)
    t, c, ttl, rdl = struct.unpack(">HHIH", r[off:off + 10])
    off += 10
    if t == 1: print(socket.inet_ntop(socket.AF_INET, r[off:off + 4]))
    if t == 28: print(socket.inet_ntop(socket.AF_INET6, r[off:off + 16]))
    off += rdl
'''


def dns_query(world, server, name, qtype="A", ns="dev"):
    """Ask one DNS server directly (no resolv.conf); returns (rcode, [addresses])."""
    r = world.exec(ns, "/usr/bin/python3", "-c", DNS_QUERY_PY, server, name, qtype)
    lines = r.stdout.split()
    return int(lines[1]), lines[2:]
