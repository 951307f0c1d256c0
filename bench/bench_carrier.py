#!/usr/bin/python3
"""CPU per carrier cycle: roamd binaries beside NetworkManager, as a ratio (issue 42's
"must not get worse").

One world (bench_verdict.py's open network: the device d0 in its namespace, the check server
on the gateway, a private bus), and in it, taking turns, each roamd binary given and
NetworkManager (Debian's, run as bench_verdict.py runs it: the device namespace, its own /run,
config and state in a private mount namespace, the private bus; never as a service). Each
daemon is started, reaches its verdict (roamd: online; NetworkManager: FULL), then the
carrier of d0 is cut and restored BENCH_REPS (20) times, each cycle waiting for the daemon
to say offline and then online again (both check connectivity after carrier-up). The CPU
time the daemon used over the cycles (utime + stime from /proc/PID/stat, before and after)
divided by the cycles is its cost per carrier cycle; the machine's load does not change it
(it does change the wall times, which this bench does not report). BENCH_ROUNDS (2) rounds,
the order of the daemons alternating.

`bench_carrier.py ROAMD [ROAMD...]` (default: this tree's build/service/roamd). Needs root
and NetworkManager (bench/run installs it)."""
import os
import statistics
import sys

os.environ.setdefault("BENCH_REPS", "20")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_verdict as bv  # noqa: E402
import minienv  # noqa: E402
from probenet import ProbeNet  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))


def main():
    roamds = [os.path.abspath(x) for x in sys.argv[1:]] or \
        [os.path.join(bv.TOP, "build/service/roamd")]
    for b in roamds:
        if not os.access(b, os.X_OK):
            sys.exit(f"bench_carrier.py: {b}: not an executable")
    daemons = roamds + ["NetworkManager"]
    cpu = {d: [] for d in daemons}
    net = ProbeNet("bcar")
    ev = None
    try:
        bv.setup(net, "open")
        ev = bv.Events(net)
        for i in range(ROUNDS):
            for d in (daemons if i % 2 == 0 else daemons[::-1]):
                if d == "NetworkManager":
                    _, c = bv.run_nm(net, ev, bv.NM_FULL)
                else:
                    minienv.ROAMD = d
                    _, c = bv.run_roamd(net, ev, "online")
                cpu[d].append(c)
                print(f"  round {i + 1}: {d}: {c:.2f} ms CPU per carrier cycle", flush=True)
    finally:
        if ev:
            ev.close()
        net.close()
    nm = statistics.mean(cpu["NetworkManager"])
    print(f"CPU per carrier cycle (down + up to the verdict), {bv.REPS} cycles x {ROUNDS} "
          f"rounds each, open network")
    for d in daemons:
        m = statistics.mean(cpu[d])
        print(f"  {d}: {m:.2f} ms" + (f"  ratio to NetworkManager {m / nm:.2f}"
                                       if d != "NetworkManager" else ""))


if __name__ == "__main__":
    main()
