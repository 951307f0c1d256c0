#!/usr/bin/python3
"""Usage statistics benchmarks (docs/stats.md). See bench/README.md.

a. Throughput of one app over a veth with 1,000 apps loaded (bench_apps' set-up: table inet
   roam from nft-bench, the app in a ROUTE class) and 1,000 live app cgroups, counting on
   (roamd's stats chains, sets and members, installed by stats-bench) against off; paired
   runs, BENCH_ROUNDS (6) rounds of BENCH_SECONDS (2) s, the ratio is the median of the
   within-pair ratios. Target >= 0.97. The app's counter is checked against the veth.
b. Disk and memory of 90 days of hourly history for 200 apps on 3 links, every series busy
   every hour (the worst case); target < 20 MiB on disk. Save and load times.
c. Time to read the counters of 10,000 apps (3 links, both directions: 60,000 counters) with
   one dump, and of 1,000 for comparison.

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
sys.path.insert(0, HERE)

from bench_apps import NFT_BENCH, Bench, run  # noqa: E402

TOP = os.path.dirname(HERE)
STATS_BENCH = os.environ.get("STATS_BENCH", os.path.join(TOP, "build/bench/stats-bench"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "6"))
APPS = 1000
TPUT_TARGET = 0.97
DISK_TARGET = 20 * 1024 * 1024


def main():
    for tool in ("nft", "nsenter", "ip"):
        if not shutil.which(tool):
            print(f"bench_stats: {tool} is missing, skipped")
            return
    for exe in (NFT_BENCH, STATS_BENCH):
        if not os.access(exe, os.X_OK):
            raise SystemExit(f"bench_stats: {exe} is not built (ninja -C build)")

    def stop(signum, frame):
        raise KeyboardInterrupt

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)
    b = Bench()
    t0 = time.monotonic()
    ratios, bps = [], {"on": [], "off": []}
    try:
        b.setup()
        # 1,000 live app cgroups (level 3) besides the measured app (level 5)
        members = []
        for i in range(APPS):
            d = f"{b.cg_top}/apps/app-{i}.scope"
            os.makedirs(b.mount + d, exist_ok=True)
            if f"{b.cg_top}/apps" not in b.cg_dirs:
                b.cg_dirs.insert(1, f"{b.cg_top}/apps")
            b.cg_dirs.append(d)
            members.append((3, os.stat(b.mount + d).st_ino))
        members.append((5, os.stat(b.mount + b.cg_app).st_ino))
        members_text = "".join(f"{lvl} {cid}\n" for lvl, cid in members)

        def counting(on):
            b.load(APPS)  # a fresh table inet roam with 1,000 app policies
            # counting lives in table inet usage_by_roamd, which outlives table inet roam
            run(b.in_client(["nft", "delete", "table", "inet", "usage_by_roamd"]), check=False)
            if on:
                run(b.in_client([STATS_BENCH, "on"]), input=members_text)

        counting(True)
        b.stream(False)  # warm-up
        for rnd in range(ROUNDS):
            got = {}
            for on in ((True, False) if rnd % 2 == 0 else (False, True)):
                counting(on)
                got[on] = b.stream(False)[0]
            bps["on"].append(got[True])
            bps["off"].append(got[False])
            ratios.append(got[True] / got[False])
        # the app's bytes are counted: one more run with counting on, read back
        counting(True)
        b.stream(False)
        listing = run(b.in_client(["nft", "list", "set", "inet", "usage_by_roamd", "stats"])).stdout
        counted = sum(int(line.split("bytes")[1].split()[0].rstrip(","))
                      for line in listing.splitlines()
                      if "app-bench.scope" in line and "bytes" in line)
        # c. reading 10,000 and 1,000 apps' counters, each in a namespace of its own
        reads = {}
        for n in (1000, 10000):
            ns = f"roambench-r-{os.getpid()}"
            run(["ip", "netns", "add", ns])
            try:
                reads[n] = json.loads(run(["nsenter", f"--net=/run/netns/{ns}", STATS_BENCH,
                                           "read", str(n)]).stdout)
            finally:
                run(["ip", "netns", "del", ns], check=False)
    finally:
        b.close()
    hist = json.loads(run([STATS_BENCH, "history", "90", "200", "3"]).stdout)
    elapsed = time.monotonic() - t0

    ratio = statistics.median(ratios)
    print(f"usage statistics benchmarks ({elapsed:.0f} s)")
    print(f"  a. TCP over veth, {APPS} apps and {APPS} live app cgroups, {ROUNDS} paired rounds")
    print(f"     counting off {statistics.median(bps['off']) / 1e9:.2f} Gbit/s, on "
          f"{statistics.median(bps['on']) / 1e9:.2f} Gbit/s; ratio {ratio:.3f} "
          f"(min {min(ratios):.3f}, max {max(ratios):.3f}); target >= {TPUT_TARGET}: ratio to "
          f"target {ratio / TPUT_TARGET:.2f}")
    print(f"     check: {counted} bytes counted for the app in its last run")
    print(f"  b. 90 days x 200 apps x 3 links, every hour busy ({hist['buckets']} buckets): "
          f"{hist['file_bytes'] / 1048576:.1f} MiB on disk (target < 20 MiB: ratio "
          f"{DISK_TARGET / hist['file_bytes']:.2f}), {hist['heap_bytes'] / 1048576:.1f} MiB "
          f"in memory; save {hist['serialize_ms']:.0f} ms, load {hist['parse_ms']:.0f} ms")
    print(f"  c. one dump: {reads[1000]['elements']} counters (1,000 apps) in "
          f"{reads[1000]['read_ms']:.1f} ms, {reads[10000]['elements']} counters (10,000 apps) "
          f"in {reads[10000]['read_ms']:.1f} ms")
    print(json.dumps({"bench": "stats", "throughput_ratio": round(ratio, 3),
                      "throughput_ratio_to_target": round(ratio / TPUT_TARGET, 3),
                      "app_bytes_counted": counted,
                      "history_file_bytes": hist["file_bytes"],
                      "history_memory_bytes": hist["heap_bytes"],
                      "history_disk_ratio_to_target": round(DISK_TARGET / hist["file_bytes"], 3),
                      "history_save_ms": hist["serialize_ms"], "history_load_ms": hist["parse_ms"],
                      "read_1000_apps_ms": reads[1000]["read_ms"],
                      "read_10000_apps_ms": reads[10000]["read_ms"]}))


if __name__ == "__main__":
    main()
