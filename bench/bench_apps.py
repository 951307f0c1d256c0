#!/usr/bin/python3
"""Per-app policy benchmarks (roamd's nftables engine, table inet roam). See bench/README.md.

a. Throughput of one allowed app over a veth with 0 (no table inet roam at all), 10, 1,000 and
   10,000 app policies loaded. The app's cgroup is in a ROUTE class that marks its packets for
   slot 1 (table 29001 through the same veth, with roamd's ip rules). A TCP bulk sender in the
   app's cgroup in the client namespace, a receiver in the server namespace, BENCH_SECONDS
   (2) per run, BENCH_ROUNDS (8) rounds; in each round every configuration runs as a pair
   with a no-table run, and its ratio is the median of the within-pair ratios.
   Target: ratio >= 0.95 at 10,000 and flat from 10 to 10,000.
b. Time to apply one policy change (one app moved to another class: one transaction) with
   10,000 apps loaded; target < 10 ms. Compared with `nft -f` of a script making the same change.

Prints a short table, then one JSON line. Values are ratios to targets, not pass/fail."""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
NFT_BENCH = os.environ.get("NFT_BENCH", os.path.join(TOP, "build/bench/nft-bench"))
STREAM = os.path.join(HERE, "tcp_stream.py")
PY = "/usr/bin/python3"

SECONDS = float(os.environ.get("BENCH_SECONDS", "2"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "8"))
CHANGES = int(os.environ.get("BENCH_CHANGES", "200"))
NFT_CHANGES = int(os.environ.get("BENCH_NFT_CHANGES", "30"))
CONFIGS = [0, 10, 1000, 10000]
# Sender on CPU 0, receiver on CPU 1 (the veth's receive work runs on the sender's CPU):
# fewer scheduler placements to vary between runs. BENCH_PIN=0 leaves them free.
PIN = os.environ.get("BENCH_PIN", "1") == "1" and os.cpu_count() >= 2

TPUT_TARGET = 0.95  # throughput ratio to no table, at least
CHANGE_TARGET_MS = 10.0

MASK = 0x7F000000
TABLE_BASE = 29000
RULE_PRIO = 29000
SLOT = 1
VPN_SLOT = MASK >> 24

CLIENT_ADDR, SERVER_ADDR, PORT = "198.51.100.1", "198.51.100.2", 5201
CLIENT_IF, SERVER_IF = "rbc0", "rbs0"


def run(argv, check=True, **kw):
    r = subprocess.run(argv, capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}: {r.stderr.strip()}")
    return r


def cgroup2_mount():
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            if post.split()[0] == "cgroup2":
                fields = pre.split()
                return fields[4], fields[3]  # mount point, root of the mount
    raise RuntimeError("no cgroup2 file system mounted")


class Bench:
    def __init__(self):
        pid = os.getpid()
        self.cns, self.sns = f"roambench-c-{pid}", f"roambench-s-{pid}"
        self.netns = []
        self.procs = []
        self.mount, root = cgroup2_mount()
        if root != "/":
            raise RuntimeError(f"cgroup2 mount shows {root}, not the root of the hierarchy")
        self.cg_top = f"/roam-bench-{pid}"
        # Level 5, as a user's app: user.slice/user-1000.slice/user@1000.service/app.slice/x
        base = f"{self.cg_top}/user-1000.slice/user@1000.service/app.slice"
        self.cg_app = f"{base}/app-bench.scope"
        self.cg_moved = f"{base}/app-moved.scope"  # the app the policy changes move (empty)
        self.cg_recv = f"{self.cg_top}/receiver"  # for its CPU time
        self.cg_dirs = []

    # -- set-up and tear-down --

    def setup(self):
        for ns in (self.cns, self.sns):
            run(["ip", "netns", "add", ns])
            self.netns.append(ns)
            run(["ip", "-n", ns, "link", "set", "lo", "up"])
        # Created inside the client namespace, peer moved straight to the server's.
        run(["ip", "-n", self.cns, "link", "add", CLIENT_IF, "type", "veth", "peer", "name",
             SERVER_IF, "netns", self.sns])
        run(["ip", "-n", self.cns, "addr", "add", f"{CLIENT_ADDR}/24", "dev", CLIENT_IF])
        run(["ip", "-n", self.sns, "addr", "add", f"{SERVER_ADDR}/24", "dev", SERVER_IF])
        run(["ip", "-n", self.cns, "link", "set", CLIENT_IF, "up"])
        run(["ip", "-n", self.sns, "link", "set", SERVER_IF, "up"])
        # What roamd adds for slot 1 (the veth) and the VPN slot: a table per slot and, per
        # family, `fwmark SLOT/MASK lookup TABLE` then `prohibit` right after it.
        t = str(TABLE_BASE + SLOT)
        run(["ip", "-n", self.cns, "route", "add", "198.51.100.0/24", "dev", CLIENT_IF, "src",
             CLIENT_ADDR, "table", t])
        run(["ip", "-n", self.cns, "route", "add", "default", "via", SERVER_ADDR, "dev",
             CLIENT_IF, "table", t])
        for fam in ("-4", "-6"):
            for slot in (SLOT, VPN_SLOT):
                mark = f"0x{slot << 24:08x}/0x{MASK:08x}"
                run(["ip", "-n", self.cns, fam, "rule", "add", "priority", str(RULE_PRIO),
                     "fwmark", mark, "lookup", str(TABLE_BASE + slot)])
                run(["ip", "-n", self.cns, fam, "rule", "add", "priority", str(RULE_PRIO + 1),
                     "fwmark", mark, "prohibit"])
        self.ifindex = json.loads(run(["ip", "-n", self.cns, "-j", "link", "show",
                                       CLIENT_IF]).stdout)[0]["ifindex"]
        for path in (self.cg_app, self.cg_moved, self.cg_recv):
            parts = path.strip("/").split("/")
            for i in range(1, len(parts) + 1):
                d = "/" + "/".join(parts[:i])
                if d not in self.cg_dirs:
                    os.makedirs(self.mount + d, exist_ok=True)
                    self.cg_dirs.append(d)
        # The receiver, for all runs.
        pin = ["taskset", "-c", "1"] if PIN else []
        p = subprocess.Popen(self.in_ns(self.sns, pin + [PY, STREAM, "recv", SERVER_ADDR,
                                                         str(PORT)], cgroup=self.cg_recv),
                             stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        if p.stdout.readline().strip() != "ready":
            raise RuntimeError("receiver did not start")

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for d in reversed(self.cg_dirs):
            path = self.mount + d
            try:
                with open(path + "/cgroup.kill", "w") as f:  # only processes this bench started
                    f.write("1")
            except OSError:
                pass
            for _ in range(50):
                try:
                    os.rmdir(path)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)
        for ns in self.netns:
            run(["ip", "netns", "del", ns], check=False)

    # -- helpers --

    def in_ns(self, netns, argv, cgroup=None):
        """argv in network namespace `netns`; in `cgroup` first if given (ip netns exec
        would remount /sys and hide the cgroup file system, so: cgroup, then nsenter)."""
        ns = ["nsenter", f"--net=/run/netns/{netns}"]
        if cgroup is None:
            return ns + argv
        procs = f"{self.mount}{cgroup}/cgroup.procs"
        return ["sh", "-c", f'echo $$ > "{procs}" && exec "$@"', "sh"] + ns + argv

    def in_client(self, argv, cgroup=None):
        return self.in_ns(self.cns, argv, cgroup)

    def cpu_usec(self):
        """CPU time of the sender's and the receiver's cgroups (without IRQ time accounting,
        the veth's softirq work is charged to the task it interrupts: one of them, mostly)."""
        n = 0
        for cg in (self.cg_app, self.cg_recv):
            with open(f"{self.mount}{cg}/cpu.stat") as f:
                n += int(f.readline().split()[1])  # usage_usec
        return n

    def load(self, n):
        """Table inet roam with n apps (0: no table at all); returns nft-bench's report."""
        if n == 0:
            run(self.in_client(["nft", "delete", "table", "inet", "roam"]), check=False)
            return None
        r = run(self.in_client([NFT_BENCH, "--apps", str(n), "--cgroup", self.cg_app,
                                "--moved-cgroup", self.cg_moved, "--oif", str(self.ifindex)]))
        return json.loads(r.stdout)

    def tx_packets(self):
        j = json.loads(run(["ip", "-n", self.cns, "-s", "-j", "link", "show",
                            CLIENT_IF]).stdout)
        return j[0]["stats64"]["tx"]["packets"]

    def stream(self, perf):
        """One run of the sender in the app's cgroup: (bits/s, packets, cost per packet)."""
        pk0 = self.tx_packets()
        cpu0 = self.cpu_usec()
        argv = [PY, STREAM, "send", SERVER_ADDR, str(PORT), str(SECONDS)]
        if PIN:
            argv = ["taskset", "-c", "0"] + argv
        out = None
        if perf:
            out = f"/tmp/roambench-perf-{os.getpid()}.csv"
            argv = ["perf", "stat", "-x,", "-a", "-e", "instructions", "-o", out, "--"] + argv
        r = run(self.in_client(argv, cgroup=self.cg_app), timeout=SECONDS + 60)
        cpu1 = self.cpu_usec()
        packets = self.tx_packets() - pk0
        res = json.loads(r.stdout.strip().splitlines()[-1])
        bps = res["bytes"] * 8 / res["seconds"]
        if perf:
            cost = perf_instructions(out) / max(packets, 1)
            os.unlink(out)
        else:
            cost = (cpu1 - cpu0) * 1e3 / max(packets, 1)
        return bps, packets, cost

    def app_counter(self):
        """Packets counted on the allowed app's element (only with few apps loaded: nft 1.0.6
        resolves every cgroupsv2 element to a path when listing, a minute for 10,000)."""
        r = run(self.in_client(["nft", "list", "map", "inet", "roam", "app_l5"]))
        for line in r.stdout.splitlines():
            if "app-bench.scope" in line and "packets" in line:
                return int(line.split("packets")[1].split()[0])
        return 0

    # -- b. one policy change --

    def nft_change_times(self, moved_level, final_class):
        rel = os.path.relpath(self.mount, "/sys/fs/cgroup")  # nft's paths start there
        path = (self.cg_moved if rel == "." else "/" + rel + self.cg_moved).lstrip("/")
        if rel.startswith(".."):
            raise RuntimeError("cgroup2 is not under /sys/fs/cgroup: nft cannot name it")
        scripts = []
        for i, to in enumerate(("c_lan", "c_deny") if final_class == "c_deny"
                               else ("c_deny", "c_lan")):
            fn = f"/tmp/roambench-{os.getpid()}-{i}.nft"
            with open(fn, "w") as f:
                f.write(f'delete element inet roam app_l{moved_level} {{ "{path}" }}\n'
                        f'add element inet roam app_l{moved_level} {{ "{path}" : jump {to} }}\n')
            scripts.append(fn)
        empty = f"/tmp/roambench-{os.getpid()}-empty.nft"
        open(empty, "w").close()
        # Timed inside the namespace, so nsenter's own start is not counted.
        timer = ("import json,subprocess,sys,time\n"
                 "files,n=sys.argv[1:-1],int(sys.argv[-1])\n"
                 "def t(fn):\n"
                 "    t0=time.monotonic();subprocess.run(['nft','-f',fn],check=True)\n"
                 "    return (time.monotonic()-t0)*1000\n"
                 "print(json.dumps({'change':[t(files[i%2]) for i in range(n)],"
                 "'empty':[t(files[2]) for i in range(n)]}))\n")
        try:
            r = run(self.in_client([PY, "-c", timer] + scripts + [empty, str(NFT_CHANGES)]),
                    timeout=600)
        finally:
            for fn in scripts + [empty]:
                os.unlink(fn)
        return json.loads(r.stdout)


def perf_works():
    if not shutil.which("perf"):
        return False, "perf is not installed"
    r = run(["perf", "stat", "-x,", "-e", "instructions", "--", "true"], check=False)
    line = [x for x in r.stderr.splitlines() if "instructions" in x]
    if r.returncode != 0 or not line or not line[0].split(",")[0].strip().isdigit():
        return False, "perf cannot count instructions here (no hardware counters: " + \
            (line[0].split(",")[0] if line else r.stderr.strip()[:60]) + ")"
    return True, ""


def perf_instructions(path):
    with open(path) as f:
        for line in f:
            if "instructions" in line:
                return int(line.split(",")[0])
    raise RuntimeError("no instruction count from perf")


def p95(v):
    v = sorted(v)
    return v[max(0, -(-len(v) * 95 // 100) - 1)]


def main():
    for tool in ("nft", "nsenter", "ip"):
        if not shutil.which(tool):
            print(f"bench_apps: {tool} is missing, skipped")
            return
    if not os.access(NFT_BENCH, os.X_OK):
        raise SystemExit(f"bench_apps: {NFT_BENCH} is not built (ninja -C build)")
    perf, perf_why = perf_works()
    cost_unit = "instr/pkt" if perf else "cpu ns/pkt"

    def stop(signum, frame):
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # clean up on all of them
        signal.signal(sig, stop)
    b = Bench()
    t_start = time.monotonic()
    try:
        b.setup()
        res = {n: {"bps": [], "ratio": [], "cost": [], "cost_ratio": [], "pkts": []}
               for n in CONFIGS}
        loaded = {}
        checked = None
        b.stream(False)  # warm-up (route caches, the receiver), not counted
        # Pair by pair: each configuration right next to a no-table run (which one goes first
        # alternates), its ratio taken within the pair: the machine's drift between pairs
        # cancels out.
        tables = CONFIGS[1:]
        for rnd in range(ROUNDS):
            for j, n in enumerate(tables[rnd % len(tables):] + tables[:rnd % len(tables)]):
                got = {}
                for m in ((0, n) if (rnd + j) % 2 == 0 else (n, 0)):
                    rep = b.load(m)
                    if rep:
                        loaded[m] = rep
                    got[m] = b.stream(perf)
                    if m == 10 and checked is None:
                        checked = b.app_counter()
                for m in (0, n):
                    bps, pkts, cost = got[m]
                    res[m]["bps"].append(bps)
                    res[m]["pkts"].append(pkts)
                    res[m]["cost"].append(cost)
                res[n]["ratio"].append(got[n][0] / got[0][0])
                res[n]["cost_ratio"].append(got[n][2] / got[0][2])
        res[0]["ratio"] = [1.0]
        res[0]["cost_ratio"] = [1.0]
        route = run(b.in_client(["ip", "route", "get", SERVER_ADDR, "mark",
                                 f"0x{SLOT << 24:08x}"])).stdout.split()
        route_table = route[route.index("table") + 1] if "table" in route else "main"

        # b. One policy change with 10,000 apps: the engine, then nft -f.
        b.load(0)
        rep = json.loads(run(b.in_client(
            [NFT_BENCH, "--apps", "10000", "--cgroup", b.cg_app, "--moved-cgroup", b.cg_moved,
             "--oif", str(b.ifindex), "--changes", str(CHANGES)])).stdout)
        nft = b.nft_change_times(rep["moved"]["level"], rep["moved"]["class"])
        b.load(0)
    finally:
        b.close()
    elapsed = time.monotonic() - t_start

    med = {n: statistics.median(res[n]["bps"]) / 1e9 for n in CONFIGS}
    ratio = {n: statistics.median(res[n]["ratio"]) for n in CONFIGS}
    cost = {n: statistics.median(res[n]["cost"]) for n in CONFIGS}
    pkts = {n: statistics.median(res[n]["pkts"]) for n in CONFIGS}
    cost_ratio = {n: statistics.median(res[n]["cost_ratio"]) for n in CONFIGS}
    flat = ratio[10000] / ratio[10]
    nft_med, nft_p95 = statistics.median(nft["change"]), p95(nft["change"])
    nft_empty = statistics.median(nft["empty"])
    roam_med, roam_p95 = rep["change_median_ms"], rep["change_p95_ms"]

    print(f"per-app policy benchmarks ({ROUNDS} rounds of {SECONDS:g} s per configuration, "
          f"medians; {elapsed:.0f} s)")
    print(f"  a. TCP over veth, sender in the allowed app's cgroup (ROUTE class, marked for "
          f"table {route_table})")
    print(f"     {'apps':>6} {'Gbit/s':>7} {'ratio':>6} {'min..max ratio':>15} "
          f"{'skbs/run':>9} {cost_unit:>11} {'ratio':>6}  install")
    for n in CONFIGS:
        rs = res[n]["ratio"]
        inst = (f"{loaded[n]['install_ms']:.1f} ms, {loaded[n]['install_msgs']} msgs in "
                f"{loaded[n]['install_txns']} txn" if n in loaded else "no table")
        print(f"     {n:>6} {med[n]:7.2f} {ratio[n]:6.3f} {min(rs):7.3f}..{max(rs):<7.3f} "
              f"{pkts[n]:9.0f} {cost[n]:11.0f} {cost_ratio[n]:6.3f}  {inst}")
    print(f"     ratio at 10,000 to no table: {ratio[10000]:.3f} (target >= {TPUT_TARGET}: "
          f"ratio to target {ratio[10000] / TPUT_TARGET:.2f}); 10,000 vs 10 apps: {flat:.3f} "
          f"(flat = 1.0)")
    if not perf:
        print(f"     {perf_why}; per-packet cost is the CPU time of the sender's and "
              f"receiver's cgroups per skb leaving the veth")
    if checked is not None:
        print(f"     check: {checked} packets counted on the app's element with 10 apps")
    if loaded.get(10000, {}).get("install_single_txn_error"):
        print(f"     note: the 10,000-app install as one transaction failed "
              f"({loaded[10000]['install_single_txn_error']}: the engine's netlink send buffer "
              f"is smaller than the batch); installed in {loaded[10000]['install_txns']} "
              f"transactions")
    print(f"  b. one policy change with 10,000 apps (app moved to another class)")
    print(f"     roamd engine: median {roam_med:.3f} ms, p95 {roam_p95:.3f} ms over {CHANGES}, "
          f"{rep['change_msgs']} messages in one transaction; ratio to the {CHANGE_TARGET_MS:g} "
          f"ms target: {roam_med / CHANGE_TARGET_MS:.3f}")
    print(f"     nft -f:       median {nft_med:.2f} ms, p95 {nft_p95:.2f} ms over {NFT_CHANGES} "
          f"(an empty script: {nft_empty:.2f} ms); ratio nft/roam: {nft_med / roam_med:.0f}")
    print(json.dumps({
        "bench": "apps",
        "seconds_per_run": SECONDS, "rounds": ROUNDS,
        "throughput_gbps": {str(n): round(med[n], 3) for n in CONFIGS},
        "throughput_ratio_to_no_table": {str(n): round(ratio[n], 4) for n in CONFIGS},
        "throughput_ratio_10000_to_10": round(flat, 4),
        "throughput_target_ratio": TPUT_TARGET,
        "cost_per_packet": {"unit": cost_unit,
                            **{str(n): round(cost[n], 1) for n in CONFIGS}},
        "cost_ratio_to_no_table": {str(n): round(cost_ratio[n], 4) for n in CONFIGS},
        "perf": perf or perf_why,
        "app_element_packets_10": checked,
        "marked_route_table": route_table,
        "install": {str(n): {k: loaded[n][k] for k in ("install_ms", "install_msgs",
                                                      "install_txns",
                                                      "install_single_txn_error")}
                    for n in loaded},
        "change_roam_ms": {"median": roam_med, "p95": roam_p95, "n": CHANGES,
                           "messages": rep["change_msgs"]},
        "change_nft_ms": {"median": round(nft_med, 3), "p95": round(nft_p95, 3),
                          "n": NFT_CHANGES, "empty_script_median": round(nft_empty, 3)},
        "change_ratio_to_target": round(roam_med / CHANGE_TARGET_MS, 4),
        "change_ratio_nft_to_roam": round(nft_med / roam_med, 1),
        "elapsed_s": round(elapsed, 1),
    }))


if __name__ == "__main__":
    main()
