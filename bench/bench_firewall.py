#!/usr/bin/python3
"""Firewall benchmarks (docs/firewall.md). See bench/README.md.

a. Swapping a link's 5,000-rule profile for another (flush + 5,000 rules + the default in one
   transaction, as roamd's reconciler does on a location change; build/bench/fw-bench) against
   `nft -f` of the same ruleset (flush chain + the same 5,000 rules with counters and comments,
   one file, one transaction), BENCH_ROUNDS (20) swaps each, medians. Target ratio <= 1.0.
b. Leaks under a flood: a peer sends UDP to a port the ruleset drops (a base chain with policy
   accept, 5,000 rules before the drop) while the ruleset is replaced 10 times, once atomically
   (one `nft -f`: flush and add in one transaction) and once flush-then-add (`nft flush chain`,
   then `nft -f` of the rules: what reloading by clearing does). Counts the datagrams that
   reached the listener in each case; atomic must be 0. The flood is one Python sender as fast
   as it goes; its rate is measured with the chain empty for 200 ms (flood_per_s).
c. The inbound path's per-packet cost: TCP throughput into a namespace whose link chain holds
   the stream's accept rule alone, against one where 5,000 rules come first (bench_apps' veth
   set-up and tcp_stream.py), pair by pair (TPUT_PAIRS, 4) with the order alternating; the
   ratio is the median of the within-pair ratios. Target >= 0.95.

Works in network namespaces of its own (documentation addresses) and removes them. Prints a
short table, then one JSON line. Values are ratios to targets, not pass/fail."""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench_apps import PORT, SERVER_IF, Bench  # noqa: E402

FW_BENCH = os.environ.get("FW_BENCH", os.path.join(TOP, "build/bench/fw-bench"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "20"))
RULES = 5000
SWAP_TARGET = 1.0
LEAK_PORT = 9
SWAPS = 10
TPUT_PAIRS = int(os.environ.get("TPUT_PAIRS", "4"))
TPUT_TARGET = 0.95

# the listener counts datagrams; each line on its stdin asks for the count so far
LISTEN_PY = r"""
import select, socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
s.bind(("198.51.100.2", int(sys.argv[1])))
s.setblocking(False)
print("ready", flush=True)
n = 0
while True:
    r, _, _ = select.select([s, sys.stdin], [], [])
    if s in r:
        while True:
            try:
                s.recv(2048)
                n += 1
            except BlockingIOError:
                break
    if sys.stdin in r:
        if not sys.stdin.readline():
            break
        print(n, flush=True)
"""

# as fast as one Python process sends: the rate is measured (flood_per_s)
FLOOD_PY = r"""
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
print("ready", flush=True)
while True:
    try:
        s.sendto(b"x", ("198.51.100.2", int(sys.argv[1])))
    except OSError:
        pass
"""


def run(argv, check=True, **kw):
    r = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise SystemExit("%s failed: %s%s" % (" ".join(map(str, argv)), r.stdout, r.stderr))
    return r


def ruleset_file(d, name, chain, base, with_flush, table="inet roam"):
    lines = ["flush chain %s %s\n" % (table, chain)] if with_flush else []
    lines += ['add rule %s %s tcp dport %d counter accept comment "%s:%d"\n'
              % (table, chain, base + i, name, i) for i in range(RULES)]
    path = os.path.join(d, "%s-%s.nft" % (name, "swap" if with_flush else "add"))
    with open(path, "w") as f:
        f.writelines(lines)
    return path


def main():
    for tool in ("nft", "nsenter", "ip"):
        if not shutil.which(tool):
            print("bench_firewall: %s is missing, skipped" % tool)
            return
    if not os.access(FW_BENCH, os.X_OK):
        raise SystemExit("bench_firewall: %s is not built (ninja -C build)" % FW_BENCH)

    def stop(signum, frame):
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    pid = os.getpid()
    ns, cns = "roambench-fw-%d" % pid, "roambench-fwc-%d" % pid
    procs = []
    tmp = tempfile.mkdtemp(prefix="roam-bench-fw-")
    result = {}
    try:
        run(["ip", "netns", "add", ns])
        run(["ip", "netns", "add", cns])
        inns = ["nsenter", "--net=/run/netns/" + ns, "--"]
        incns = ["nsenter", "--net=/run/netns/" + cns, "--"]

        # a. roamd's swap against nft -f of the same ruleset
        ours = json.loads(run(inns + [FW_BENCH, "--rules", RULES, "--rounds", ROUNDS]).stdout)
        files = [ruleset_file(tmp, n, "fwi_1", base, True) for n, base in (("a", 10000),
                                                                          ("b", 30000))]
        times = []
        for i in range(ROUNDS):
            t0 = time.monotonic()
            run(inns + ["nft", "-f", files[i % 2]])
            times.append((time.monotonic() - t0) * 1000)
        nft_ms = statistics.median(times)
        result["swap_ms"] = ours["swap_median_ms"]
        result["nft_f_ms"] = round(nft_ms, 3)
        result["swap_ratio"] = round(ours["swap_median_ms"] / nft_ms, 3)
        result["swap_target_ratio"] = round(result["swap_ratio"] / SWAP_TARGET, 3)

        # b. leaks: a flood at a dropped port while the ruleset is replaced (roam's table
        # goes first: its fallback would drop the flood whatever the test table does)
        run(inns + ["nft", "delete", "table", "inet", "roam"])
        run(["ip", "link", "add", "fwb0", "netns", ns, "type", "veth", "peer", "name", "fwb1",
             "netns", cns])
        run(inns + ["ip", "addr", "add", "198.51.100.2/24", "dev", "fwb0"])
        run(incns + ["ip", "addr", "add", "198.51.100.1/24", "dev", "fwb1"])
        for n, dev in ((inns, "fwb0"), (incns, "fwb1"), (inns, "lo"), (incns, "lo")):
            run(n + ["ip", "link", "set", dev, "up"])
        run(inns + ["nft", "-f", "-"], input="table inet leak {\n chain in {\n"
            "  type filter hook input priority 0; policy accept;\n }\n}\n")
        drop = "add rule inet leak in udp dport %d drop\n" % LEAK_PORT
        swap = ruleset_file(tmp, "l", "in", 10000, True, "inet leak")
        add = ruleset_file(tmp, "l", "in", 10000, False, "inet leak")
        for p in (swap, add):
            with open(p, "a") as f:
                f.write(drop)
        run(inns + ["nft", "-f", swap])
        lst = subprocess.Popen(inns + ["/usr/bin/python3", "-c", LISTEN_PY, str(LEAK_PORT)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(lst)
        assert lst.stdout.readline().strip() == "ready"
        flood = subprocess.Popen(incns + ["/usr/bin/python3", "-c", FLOOD_PY, str(LEAK_PORT)],
                               stdout=subprocess.PIPE, text=True)
        procs.append(flood)
        assert flood.stdout.readline().strip() == "ready"

        def count():
            lst.stdin.write("\n")
            lst.stdin.flush()
            return int(lst.stdout.readline())

        # the flood arrives: with the chain empty for a moment, the listener hears it
        before = count()
        run(inns + ["nft", "flush", "chain", "inet", "leak", "in"])
        time.sleep(0.2)
        run(inns + ["nft", "-f", add])
        result["flood_per_s"] = int((count() - before) / 0.2)
        leaks = {}
        for mode in ("atomic", "flush-then-add"):
            before = count()
            for _ in range(SWAPS):
                if mode == "atomic":
                    run(inns + ["nft", "-f", swap])
                else:
                    run(inns + ["nft", "flush", "chain", "inet", "leak", "in"])
                    run(inns + ["nft", "-f", add])
            time.sleep(0.2)
            leaks[mode] = count() - before
        result["leaked_atomic"] = leaks["atomic"]
        result["leaked_flush_then_add"] = leaks["flush-then-add"]
    finally:
        for p in procs:
            p.kill()
            p.wait()
        run(["ip", "netns", "del", ns], check=False)
        run(["ip", "netns", "del", cns], check=False)
        shutil.rmtree(tmp, ignore_errors=True)

    # c. the inbound path with 0 and 5,000 rules before the stream's
    b = Bench()
    try:
        b.setup()
        sif = json.loads(run(["ip", "-n", b.sns, "-j", "link", "show", SERVER_IF]).stdout)[0]
        ratios = []

        def load(n):
            run(b.in_ns(b.sns, [FW_BENCH, "--install-only", "--rules", n, "--ifindex",
                                sif["ifindex"], "--accept-port", PORT]))

        load(0)
        b.stream(False)  # warm-up
        for i in range(TPUT_PAIRS):
            got = {}
            for n in ((0, RULES) if i % 2 == 0 else (RULES, 0)):
                load(n)
                got[n] = b.stream(False)[0]
            ratios.append(got[RULES] / got[0])
        result["inbound_tput_ratio"] = round(statistics.median(ratios), 3)
        result["inbound_tput_target_ratio"] = round(result["inbound_tput_ratio"] / TPUT_TARGET, 3)
    finally:
        b.close()

    print("firewall: swap of a %d-rule profile: roamd %.1f ms, nft -f %.1f ms: ratio %.2f "
          "(target <= %.1f)" % (RULES, result["swap_ms"], result["nft_f_ms"],
                                result["swap_ratio"], SWAP_TARGET))
    print("firewall: datagrams leaked during %d replacements under a flood of about %d/s: "
          "atomic %d, flush-then-add %d" % (SWAPS, result["flood_per_s"], result["leaked_atomic"],
                                            result["leaked_flush_then_add"]))
    print("firewall: inbound TCP throughput with %d rules before the stream's against none: "
          "%.3f (target >= %.2f)" % (RULES, result["inbound_tput_ratio"], TPUT_TARGET))
    print(json.dumps({"bench": "firewall", **result}))


if __name__ == "__main__":
    sys.exit(main())
