"""Two namespaces for connectivity tests: the device (roamd, private bus) and a network with
a gateway, a DNS server (dnsmasq) and check servers, joined by a veth pair. Addresses are
static (DHCP is the world's business); each test reshapes the network to one situation."""
import atexit
import os
import shutil
import subprocess
import tempfile

from minienv import WAIT, MiniEnv, wait_until

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = os.path.join(TOP, "tests/servers/roam_testserver.py")
MKCERTS = os.path.join(TOP, "tests/servers/mkcerts.sh")

PROBE_V4 = "203.0.113.10"
PROBE_V6 = "2001:db8:ff::10"
GW_V4 = "192.0.2.1"
GW_V6 = "2001:db8:1::1"

_certs = None


def shared_certs():
    """The throw-away CA and the servers' certificates (tests/servers/mkcerts.sh), made once
    per test process: three RSA keys cost about a second of CPU, and every test needs them."""
    global _certs
    if _certs is None:
        d = tempfile.mkdtemp(prefix="roam-it-certs-")
        atexit.register(shutil.rmtree, d, True)
        subprocess.run([MKCERTS, d, "probe", "DNS:probe.roam.test",
                        f"IP:{PROBE_V4}", f"IP:{PROBE_V6}"], check=True)
        subprocess.run([MKCERTS, d, "cafe", "DNS:cafe.test", f"IP:{GW_V4}"], check=True)
        _certs = d
    return _certs


class ProbeNet(MiniEnv):
    def __init__(self, name, delay_ms=None):
        super().__init__(name)
        self.net = self.name + "-net"
        self.mid = self.name + "-dl"
        self.delayed = delay_ms is not None
        try:
            self.sh(f"ip netns add {self.net}")
            self.innet("ip link set lo up")
            # A router: what it cannot reach it answers with ICMP unreachable.
            self.innet("sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 "
                       "net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0")
            if delay_ms is None:
                self.netns(f"ip link add d0 type veth peer name n0 netns {self.net}")
            else:
                self.delay_line(delay_ms)
            self.netns("ip link set d0 up")
            # A router keeps its addresses when its port goes down and up.
            self.innet("sysctl -qw net.ipv6.conf.n0.keep_addr_on_down=1")
            self.innet("ip link set n0 up")
            # Partial checksums over veth confuse raw-socket peers; keep it plain.
            self.innet("ethtool -K n0 tx off", check=False)
            self.innet(f"ip addr add {GW_V4}/24 dev n0")
            self.innet(f"ip addr add {GW_V6}/64 dev n0 nodad")
            self.netns("ip addr add 192.0.2.2/24 dev d0")
            self.netns("ip addr add 2001:db8:1::2/64 dev d0 nodad")
            self.netns(f"ip route add default via {GW_V4} dev d0")
            self.netns(f"ip -6 route add default via {GW_V6} dev d0")
            self.certs = os.path.join(self.dir, "certs")
            shutil.copytree(shared_certs(), self.certs)
        except Exception:
            self.close()
            raise

    def delay_line(self, delay_ms):
        """d0 <-> m0 [delay line] m1 <-> n0: every frame waits delay_ms each way."""
        self.sh(f"ip netns add {self.mid}")
        self.netns(f"ip link add d0 type veth peer name m0 netns {self.mid}")
        self.sh(f"ip -n {self.mid} link add m1 type veth peer name n0 netns {self.net}")
        for ns, ifname in ((self.name, "d0"), (self.mid, "m0"), (self.mid, "m1"),
                           (self.net, "n0")):
            self.sh(f"ip netns exec {ns} ethtool -K {ifname} tx off rx off tso off gso off "
                    "gro off", check=False)
        for ifname in ("m0", "m1"):
            self.sh(f"ip -n {self.mid} link set {ifname} up")
        p = subprocess.Popen(["ip", "netns", "exec", self.mid, "/usr/bin/python3",
                              os.path.join(TOP, "tests/servers/delayline.py"), "m0", "m1",
                              str(delay_ms)], stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        assert p.stdout.readline().strip() == "ready"

    def carrier(self, on):
        """Cut or restore the device's carrier by setting its veth peer down or up."""
        state = "up" if on else "down"
        if self.delayed:
            self.sh(f"ip -n {self.mid} link set m0 {state}")
        else:
            self.innet(f"ip link set n0 {state}")

    def innet(self, cmd, check=True):
        return self.sh(f"ip netns exec {self.net} {cmd}", check=check)

    def internet(self, v6=True):
        """The check server's addresses exist (on the network namespace's loopback)."""
        self.innet(f"ip addr add {PROBE_V4}/32 dev lo")
        if v6:
            self.innet(f"ip addr add {PROBE_V6}/128 dev lo nodad")

    def dns(self, *records, extra=()):
        """dnsmasq on the gateway answering only the given name=address records."""
        args = ["dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts",
                "--bind-interfaces", f"--listen-address={GW_V4}", f"--listen-address={GW_V6}",
                "--port=53", f"--pid-file={self.dir}/dnsmasq.pid", "--user=root",
                "--log-facility=-" if os.environ.get("ROAM_TEST_VERBOSE") else "--quiet-dhcp"]
        for name, addr in records:
            args.append(f"--host-record={name},{addr}")
        args.extend(extra)
        self.spawn_in(self.net, args)

    def server(self, listen, mode="probe", tls=None, extra=()):
        argv = ["/usr/bin/python3", SERVER, "--listen", listen, "--mode", mode, *extra]
        if tls:
            argv += ["--tls", f"{self.certs}/{tls}.pem", f"{self.certs}/{tls}.key"]
        p = self.spawn_in(self.net, argv, stdout=subprocess.PIPE)
        assert p.stdout.readline().strip() == "ready"
        return p

    def spawn_in(self, ns, argv, stdout=subprocess.DEVNULL):
        p = subprocess.Popen(["ip", "netns", "exec", ns, *argv], stdout=stdout, text=True)
        self.procs.append(p)
        return p

    def probe_config(self, extra=""):
        return ("[Daemon]\nLogLevel=debug\n"
                f"[LinkDNS]\nd0={GW_V4} {GW_V6}\n"
                f"[DNS]\nDhcpcdLeaseDir={self.dir}/leases\n"
                "[Probe]\nHttpURL=http://probe.roam.test/roam-probe\n"
                "HttpsURL=https://probe.roam.test/roam-probe\n"
                "ExpectBody=roam-online\\n\n"
                f"CAFile={self.certs}/ca.pem\n"
                "Timeout=3\nDNSTimeout=2\nPingTimeout=1\nBackoffMin=0.5\nBackoffMax=2\n"
                + extra)

    def verdicts(self, ifname="d0"):
        p = self.link_props(ifname)  # one GetAll
        return (p["Connectivity4"], p["ConnectivityReason4"],
                p["Connectivity6"], p["ConnectivityReason6"])

    def wait_verdicts(self, expected, timeout=WAIT, ifname="d0"):
        """Waits (woken by roamd's PropertiesChanged, at least WAIT seconds) until the link's
        four verdict properties are `expected`."""
        seen = []

        def check():
            seen.append(self.verdicts(ifname))
            return seen[-1] == expected
        try:
            return wait_until(check, max(timeout, WAIT), what=f"verdicts {expected}")
        except TimeoutError as e:
            raise AssertionError(f"{e}; seen {seen[-5:]}; roamd log tail:\n"
                                 f"{self.log()[-3000:]}") from None

    def close(self):
        super().close()
        self.sh(f"ip netns del {self.net}", check=False)
        self.sh(f"ip netns del {self.mid}", check=False)
