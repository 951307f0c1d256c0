#!/usr/bin/python3
"""roamd benchmarks (issue: roamd core):
  - anonymous RSS (RssAnon) when idle with 10 links, against the 2 MiB target;
  - wakeups when idle (context switches over a quiet period, scaled to a minute), target 0;
  - time for 1,000 link add/remove events to be reflected on D-Bus, against the time the
    kernel itself took to apply them.
Runs in a namespace of its own with a private bus. Prints ratios (value / target)."""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../tests/integration"))
from minienv import MiniEnv, wait_for  # noqa: E402


def status_field(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def roamd_pid(env):
    # `ip netns exec` execs roamd in place, so the Popen pid is roamd's.
    return env.roamd.pid


def link_count(env):
    r = env.busctl("--json=short", "call", "org.roam1", "/org/roam1",
                   "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
    objs = json.loads(r.stdout)["data"][0]
    return sum(1 for p in objs if p.startswith("/org/roam1/link/"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--idle-seconds", type=float, default=20)
    ap.add_argument("--pairs", type=int, default=500, help="veth pairs (2 links each)")
    args = ap.parse_args()

    env = MiniEnv("bench")
    try:
        for i in range(5):
            env.netns(f"ip link add b{i}a type veth peer name b{i}b")
            env.netns(f"ip link set b{i}a up")
            env.netns(f"ip link set b{i}b up")
            env.netns(f"ip addr add 192.0.2.{10 + i}/24 dev b{i}a")
        env.start_roamd("[Daemon]\nLogLevel=warning\n")
        pid = roamd_pid(env)
        assert link_count(env) == 10

        time.sleep(3)  # let IPv6 DAD on the new links finish before measuring idleness
        rss = status_field(pid, "RssAnon")
        rss_file = status_field(pid, "RssFile")
        c0 = status_field(pid, "voluntary_ctxt_switches") + \
            status_field(pid, "nonvoluntary_ctxt_switches")
        time.sleep(args.idle_seconds)
        c1 = status_field(pid, "voluntary_ctxt_switches") + \
            status_field(pid, "nonvoluntary_ctxt_switches")
        wakeups_per_min = (c1 - c0) * 60 / args.idle_seconds

        n = args.pairs
        add = env.write("add.batch", "".join(
            f"link add f{i}a type veth peer name f{i}b\n" for i in range(n)))
        dele = env.write("del.batch", "".join(f"link del f{i}a\n" for i in range(n)))
        base = link_count(env)

        t0 = time.monotonic()
        env.netns(f"ip -batch {add}")
        k_add = time.monotonic() - t0
        wait_for(lambda: link_count(env) == base + 2 * n, timeout=60, interval=0.005,
                 what="links added on D-Bus")
        t_add = time.monotonic() - t0

        t0 = time.monotonic()
        env.netns(f"ip -batch {dele}")
        k_del = time.monotonic() - t0
        wait_for(lambda: link_count(env) == base, timeout=60, interval=0.005,
                 what="links removed on D-Bus")
        t_del = time.monotonic() - t0
        rss_after = status_field(pid, "RssAnon")
        assert env.roamd.poll() is None

        print("roamd benchmarks")
        print(f"  idle RssAnon, 10 links:     {rss} KiB (RssFile {rss_file} KiB); "
              f"ratio to 2 MiB target: {rss / 2048:.2f}")
        print(f"  idle wakeups:               {wakeups_per_min:.1f}/min over "
              f"{args.idle_seconds:.0f} s (target 0)")
        print(f"  {2 * n} links added:          reflected on D-Bus after {t_add * 1000:.0f} ms; "
              f"kernel took {k_add * 1000:.0f} ms; ratio {t_add / k_add:.2f}")
        print(f"  {2 * n} links removed:        reflected on D-Bus after {t_del * 1000:.0f} ms; "
              f"kernel took {k_del * 1000:.0f} ms; ratio {t_del / k_del:.2f}")
        print(f"  per event (add+remove):     {(t_add + t_del) * 1e6 / (4 * n):.0f} us")
        print(f"  RssAnon after the flood:    {rss_after} KiB; ratio to 2 MiB: "
              f"{rss_after / 2048:.2f}")
    finally:
        env.close()


if __name__ == "__main__":
    main()
