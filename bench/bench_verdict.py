#!/usr/bin/python3
"""Connectivity verdicts, side by side with NetworkManager, and roamd's probe memory.

1. Latency: time from the kernel's carrier-up event to the final verdict, for roamd and for
   NetworkManager (Debian's network-manager, run in the same device namespace with the private
   bus, its own config/state/run directories in a private mount namespace, and its
   connectivity check pointed at the same check server). Networks: open; a café that answers
   HTTP with a 302 and silently drops TCP 443; a portal that answers every request with a 200
   login page and drops 443; HTTP fine, 443 silently dropped; open with 150 ms and 300 ms
   one-way delay (tests/servers/delayline.py). Addresses are static on both sides (the same
   ones; no DHCP), so the bound is DNS 1 + TCP 1 + HTTP 1 = 3 RTT for a portal and 4 RTT
   (plus TLS 1.3: 1) for online; NetworkManager checks plain HTTP only.
   Medians of BENCH_REPS (5) repetitions; ratio roamd/NM.
2. Memory: RssAnon of roamd at rest after BENCH_MEM_ROUNDS (1,000) probe rounds on each of 10
   links (HTTP + HTTPS each round), sampled five times on the way: flat or not.

`bench_verdict.py [latency|memory]` (both by default). Needs root, NetworkManager for part 1
(bench/run installs it)."""
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
from minienv import wait_for  # noqa: E402
from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet  # noqa: E402

PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]
REPS = int(os.environ.get("BENCH_REPS", "5"))
MEM_ROUNDS = int(os.environ.get("BENCH_MEM_ROUNDS", "1000"))
NM = shutil.which("NetworkManager") or "/usr/sbin/NetworkManager"
NM_FULL, NM_PORTAL, NM_NONE = 4, 2, 1

# name, setup, one-way delay, roamd's final verdict, NetworkManager's final connectivity
NETWORKS = [
    ("open", "open", 0, "online", NM_FULL),
    ("cafe 302, 443 dropped", "cafe302", 0, "portal", NM_PORTAL),
    ("200 login page, 443 dropped", "login200", 0, "portal", NM_PORTAL),
    ("HTTP ok, 443 dropped", "nohttps", 0, "partial", NM_FULL),
    ("open, 150 ms one-way", "open", 150, "online", NM_FULL),
    ("open, 300 ms one-way", "open", 300, "online", NM_FULL),
]


def drop_https(net):
    net.innet("nft add table inet nohttps")
    net.innet("nft add chain inet nohttps in { type filter hook input priority 0 \\; }")
    net.innet("nft add rule inet nohttps in tcp dport 443 drop")


def setup(net, kind):
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
    # The café's DNS sends every name to the gateway; its HTTP server is the portal.
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    mode = "portal" if kind == "cafe302" else "login"
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode=mode,
               extra=["--portal-url", f"http://{GW_V4}/login"])
    drop_https(net)


def rtt_ms(net):
    r = net.netns(f"ping -c 5 -i 0.2 -q {GW_V4}")
    line = [x for x in r.stdout.splitlines() if "min/avg" in x][0]
    return float(line.split("=")[1].split("/")[1])


class Events:
    """PropertiesChanged signals on the private bus and the kernel's link events of d0, each
    stamped when it arrives (CLOCK_MONOTONIC)."""

    def __init__(self, net):
        import dbus
        from dbus.mainloop.glib import DBusGMainLoop
        from gi.repository import GLib

        self.signals = []
        self.carrier_up = []
        self.lock = threading.Lock()
        DBusGMainLoop(set_as_default=True)
        self.bus = dbus.bus.BusConnection(net.address)
        self.bus.add_signal_receiver(self.on_signal, signal_name="PropertiesChanged",
                                     dbus_interface="org.freedesktop.DBus.Properties",
                                     path_keyword="path")
        self.loop = GLib.MainLoop()
        threading.Thread(target=self.loop.run, daemon=True).start()
        self.mon = subprocess.Popen(["ip", "netns", "exec", net.name, "ip", "-o", "monitor",
                                     "link"], stdout=subprocess.PIPE, text=True)
        net.procs.append(self.mon)
        threading.Thread(target=self.read_links, daemon=True).start()

    def on_signal(self, iface, changed, invalidated, path=None):
        t = time.monotonic()
        with self.lock:
            self.signals.append((t, str(path), str(iface),
                                 {str(k): v for k, v in changed.items()}))

    def read_links(self):
        for line in self.mon.stdout:
            t, t_real = time.monotonic(), time.time()
            if " d0" in line and "LOWER_UP" in line:
                with self.lock:
                    self.carrier_up.append((t, t_real))

    def first_carrier_after(self, t0):
        with self.lock:
            return next((t for t in self.carrier_up if t[0] >= t0), None)

    def first_signal_after(self, t0, path, iface, key, value):
        with self.lock:
            return next((t for t, p, i, c in self.signals
                         if t >= t0 and p == path and i == iface and key in c and
                         c[key] == value), None)

    def close(self):
        self.loop.quit()
        self.bus.close()


def carrier_to_verdict(net, ev, down, path, iface, key, value, from_log=None, timeout=30):
    """Carrier off until `down()` holds, then on: ms from the kernel's carrier-up event to the
    first signal saying key = value (or, with from_log, to the CLOCK_REALTIME stamp
    from_log(carrier-up) finds in a log)."""
    net.carrier(False)
    wait_for(down, timeout=60, interval=0.05, what="the daemon sees the carrier gone")
    t_req = time.monotonic()
    net.carrier(True)
    t0, t0_real = wait_for(lambda: ev.first_carrier_after(t_req), timeout=10, interval=0.005,
                           what="the kernel's carrier-up event")
    if from_log:
        t1 = wait_for(lambda: from_log(t0_real), timeout=timeout, interval=0.01,
                      what="the verdict in the log")
        return (t1 - t0_real) * 1000
    t1 = wait_for(lambda: ev.first_signal_after(t0, path, iface, key, value), timeout=timeout,
                  interval=0.005, what=f"{key} = {value}")
    return (t1 - t0) * 1000


def roamd_config(net):
    # roamd's defaults except where the test network needs its own (names, CA, DNS).
    return (net.probe_config().replace("LogLevel=debug", "LogLevel=info")
            .replace("Timeout=3\nDNSTimeout=2\nPingTimeout=1\nBackoffMin=0.5\nBackoffMax=2\n",
                     ""))


def run_roamd(net, ev, verdict):
    net.start_roamd(roamd_config(net))
    path = net.link_path("d0")
    wait_for(lambda: net.link_prop("d0", "Connectivity4") == verdict, timeout=30,
             what=f"roamd: {verdict}")
    times = []
    for _ in range(REPS):
        times.append(carrier_to_verdict(
            net, ev, lambda: net.link_prop("d0", "Connectivity4") == "offline", path,
            "org.roam1.Link", "Connectivity4", verdict))
    net.stop_roamd()
    return times


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


def nm_check_after(logpath, t0, connectivity):
    """The CLOCK_REALTIME stamp of NetworkManager's first IPv4 check of d0 that completed
    with this result after t0. (Its D-Bus connectivity properties keep a stale FULL while the
    device is unavailable, so a new check does not always show there.)"""
    want = f"check completed: {NM_WORDS[connectivity]};"
    with open(logpath, errors="replace") as f:
        for line in f:
            if "(d0,IPv4," not in line or want not in line:
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


def run_nm(net, ev, connectivity):
    d = os.path.join(net.dir, "nm")
    for sub in ("etc/system-connections", "etc/conf.d", "etc/sysconf.d", "lib"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    with open(os.path.join(d, "etc/NetworkManager.conf"), "w") as f:
        f.write(NM_CONF.format(d=d))
    profile = os.path.join(d, "etc/system-connections/d0.nmconnection")
    with open(profile, "w") as f:
        f.write(NM_PROFILE)
    os.chmod(profile, 0o600)
    with open(os.path.join(d, "resolv.conf"), "w") as f:
        f.write(f"nameserver {GW_V4}\n")
    logpath = os.path.join(d, "nm.log")
    log = open(logpath, "w")
    nm = subprocess.Popen(["ip", "netns", "exec", net.name, "unshare", "-m", "sh", "-c",
                           NM_SCRIPT.format(d=d, nm=NM)],
                          env=net.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        dev = wait_for(lambda: nm_device(net, "d0"), timeout=30, what="NetworkManager's d0")
        wait_for(lambda: nm_prop(net, "Ip4Connectivity", dev) == connectivity, timeout=60,
                 what=f"NetworkManager: d0 IPv4 connectivity {connectivity}")
        times = []
        for _ in range(REPS):
            times.append(carrier_to_verdict(
                net, ev, lambda: nm_prop(net, "State", dev) == NM_DEVICE_UNAVAILABLE,
                None, None, None, None, lambda t: nm_check_after(logpath, t, connectivity)))
        return times
    finally:
        nm.terminate()
        try:
            nm.wait(10)
        except subprocess.TimeoutExpired:
            nm.kill()
            nm.wait()


def latency():
    have_nm = os.access(NM, os.X_OK)
    print(f"carrier-up -> final IPv4 verdict, addresses static, median of {REPS} "
          f"(NetworkManager: {'yes' if have_nm else 'not installed'})")
    print(f"  {'network':29} {'RTT':>7} {'roamd':>16} {'NetworkManager':>22} {'roamd/NM':>9}"
          f" {'roamd RTTs (bound)':>19}")
    only = os.environ.get("BENCH_ONLY")
    for name, kind, delay, verdict, nm_conn in NETWORKS:
        if only and only not in name:
            continue
        net = ProbeNet(f"bv{kind[:4]}{delay}", delay_ms=delay or None)
        ev = None
        try:
            setup(net, kind)
            rtt = rtt_ms(net)
            ev = Events(net)
            r = statistics.median(run_roamd(net, ev, verdict))
            n = statistics.median(run_nm(net, ev, nm_conn)) if have_nm else None
            bound = 3 if verdict == "portal" else 4
            nm_word = {NM_FULL: "full", NM_PORTAL: "portal"}[nm_conn]
            print(f"  {name:29} {rtt:6.1f}ms {verdict:>7} {r:7.1f} ms"
                  + (f" {nm_word:>7} {n:9.1f} ms {r / n:9.2f}" if n else f" {'-':>22} {'-':>9}")
                  + (f" {r / rtt:8.1f} ({bound} RTT)" if delay else f" {'-':>8} ({bound} RTT)"),
                  flush=True)
        finally:
            if ev:
                ev.close()
            net.close()


def status_kb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def memory(n_links=10):
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
        net.start_roamd(conf)
        pid = net.roamd.pid
        names = [f"d{k}" for k in range(n_links)]
        wait_for(lambda: all(net.link_prop(x, "Connectivity") == "online" for x in names),
                 timeout=60, what="every link online")
        paths = {net.link_path(x): x for x in names}

        def last_probes():
            r = net.busctl("--json=short", "call", "org.roam1", "/org/roam1",
                           "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
            objs = json.loads(r.stdout)["data"][0]
            return {p: objs[p]["org.roam1.Link"]["LastProbe"]["data"] for p in paths}

        time.sleep(0.5)
        first = status_kb(pid, "RssAnon")
        print(f"roamd RssAnon at rest, {n_links} links, HTTP + HTTPS every round "
              f"(target 1024 kB)")
        print(f"  after the first round:       {first:6} kB ({first / 1024:.2f} target)")
        t0 = time.monotonic()
        samples = []
        for i in range(1, MEM_ROUNDS + 1):
            before = last_probes()
            for p in paths:
                net.busctl("call", "org.roam1", p, "org.roam1.Link", "Reprobe")
            wait_for(lambda: all(v > before[p] for p, v in last_probes().items()), timeout=60,
                     interval=0.005, what="a round on every link")
            if i % max(1, MEM_ROUNDS // 5) == 0:
                time.sleep(0.3)
                samples.append(status_kb(pid, "RssAnon"))
                print(f"  after {i:5} rounds per link:  {samples[-1]:6} kB "
                      f"({samples[-1] / 1024:.2f} target, {time.monotonic() - t0:.0f} s)",
                      flush=True)
        print(f"  growth from round 1 to {MEM_ROUNDS}: {samples[-1] - first:+d} kB")
        net.stop_roamd()
    finally:
        net.close()


def main():
    what = sys.argv[1:] or ["latency", "memory"]
    if "latency" in what:
        latency()
    if "memory" in what:
        memory()


if __name__ == "__main__":
    main()
