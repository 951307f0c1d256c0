#!/usr/bin/python3
"""The ordered wake-up against the thundering herd, at connect (docs/wake.md, issue 29).

In one test world (tests/world, world `bwake`), N apps (BENCH_WAKE_APPS or --apps, 50) each
fetch 1 MiB (--size) over HTTP from the world's internet; the home router's port toward the
device's wifi0 is a tbf of 10 Mbit/s (--rate), the only uplink that is online. Each run
starts with wifi0's carrier off (the device offline), starts every app's process, each in its
own cgroup under roam.slice, then turns the carrier on: times are from that carrier-up to
each app's curl exiting, measured by this script as the processes exit.

- alone: the top app only, not wake-listed (`roam wait-online`, then curl): the network's
  own time (DHCP, the probe, the fetch).
- alone, listed: the top app only, wake-listed (`roam when-online`): its time alone through
  the queue (the settle time, the turn, the gate). The goal's "its time alone".
- herd: every app, none wake-listed: each `roam wait-online -- ...; curl` starts its fetch
  the moment roamd says online, all at once.
- ordered: every app wake-listed (an apps.d drop-in, Wake=100 for the top app and lower for
  the next, in rank order), each `roam when-online --app ID -- curl ...`: turns one at a time
  ([Wake] AtOnce=1, the default), each ended by its Done when curl exits.

The time gate ([Time] GateTimeout=, docs/time.md) is set by --gate-timeout, 0 by default:
the world has one time source (the HTTPS probe's Date), never enough to settle the time, so
roamd's default of 5 s would add 5 s to every wake-listed app's start and measure the time
gate, not the order (--gate-timeout 5s shows that cost).

Printed: the top app's completion in each run, its ratio to its time alone listed (goal:
ordered <= 1.1, herd near N) and unlisted, the median over the apps of their completion time (in the ordered run
the app of rank N/2's), the total (the last app's) and ordered / herd (goal <= 1.05). Every
fetch must succeed with the whole size, else the run says so. ROUNDS (--rounds, 1) repeats
the three runs; medians over them. Needs root and build/ (roamd, roam)."""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../tests/world"))
from roamworld import ROAM, WHOAMI, WORLD_SH, World, wait_for  # noqa: E402

ROAM_SLICE = "system.slice/roamd.service/roam.slice"
PORT = 8099
PY = "/usr/bin/python3"


def rel(app_id):
    return "%s/app-%s.scope" % (ROAM_SLICE, app_id)


def app_ids(n):
    return ["org.bench.A%02d" % i for i in range(n)]  # rank order: A00 first


def start_roamd(w, ids, listed, settle, gate, size):
    """roamd afresh; the apps wake-listed (ranked by their order, WakeBytes= what they fetch)
    or not."""
    w.roamd_stop()
    d = w.path("etc-roam", "apps.d")
    d.mkdir(exist_ok=True)
    for f in d.iterdir():
        f.unlink()
    if listed:
        # priorities 100 down to 1 in rank order (ties would go by listing order anyway)
        (d / "50-bench-wake.conf").write_text("".join(
            "[App]\nID=%s\nWake=%d\nWakeSlice=60s\nWakeBytes=%d\n"
            % (a, max(100 - i * 99 // max(len(ids) - 1, 1), 1), size)
            for i, a in enumerate(ids)))
    w.write_config(w.default_config + "\n[Wake]\nSettleSec=%s\n\n[Time]\nGateTimeout=%s\n"
                   % (settle, gate))
    for a in ids:
        (w.cgroup / rel(a)).mkdir(parents=True, exist_ok=True)
    w.roamd_start()


def run(w, ids, listed, size, settle, gate):
    """Carrier off, the apps started, carrier on: [seconds from carrier-up to each app's
    fetch done] in rank order."""
    # offline before roamd starts: no turn may be given before the apps run
    w.carrier("wifi0", False)
    start_roamd(w, ids, listed, settle, gate, size)
    wait_for(lambda: w.manager()["State"] != "online", 20, what="offline")
    url = "http://%s:%d/blob" % (WHOAMI["inet"][4], PORT)
    curl = ["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download}\\n", "--max-time", "600",
            url]
    procs = []
    for a in ids:
        if listed:
            cmd = [str(ROAM), "when-online", "--app", a, "--timeout", "0", "--"] + curl
        else:
            cmd = ["/bin/sh", "-c", '"$0" wait-online --timeout 0 && exec "$@"', str(ROAM)] + curl
        procs.append(w.dev_popen(cmd, cgroup=rel(a), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True))
    done = [None] * len(ids)
    outs = [None] * len(ids)

    def waiter(i, p):
        out, err = p.communicate()
        done[i] = time.monotonic()
        outs[i] = (p.returncode, out.strip(), err.strip())

    threads = [threading.Thread(target=waiter, args=(i, p)) for i, p in enumerate(procs)]
    for t in threads:
        t.start()
    t0, t0_real = time.monotonic(), time.time()
    w.carrier("wifi0", True)
    for t in threads:
        t.join(900)
    bad = [(ids[i], o) for i, o in enumerate(outs) if o is None or o[0] != 0 or o[1] != str(size)]
    if bad:
        raise RuntimeError("fetches failed: %s" % bad[:5])
    times = [d - t0 for d in done]
    if os.environ.get("BENCH_WAKE_LOG") and len(ids) > 1:
        # roamd's stamped log of the run, and the apps' done times (wall clock) beside it
        with open("%s.%s.log" % (os.environ["BENCH_WAKE_LOG"], "ordered" if listed else "herd"),
                  "w") as f:
            f.write(w.roamd_log().rsplit("=== roamd-start ", 1)[-1])
            for a, t in zip(ids, times):
                f.write("%.6f bench: %s fetch done\n" % (t0_real + t, a))
    return times, marks(w, ids[0], t0_real)


def marks(w, top, t0_real):
    """From roamd's log (its lines stamped, ROAM_LOG_TIME=1): seconds from carrier-up to the
    state online and to the top app's turn (None when it had none: not listed)."""
    online = turn = None
    for line in w.roamd_log().rsplit("=== roamd-start ", 1)[-1].splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            t = float(stamp) - t0_real
        except ValueError:
            continue
        if t < 0:
            continue
        if online is None and "State: " in rest and rest.endswith("-> online"):
            online = t
        if turn is None and (" wake: %s: opening -> awake" % top) in rest:
            turn = t
    return online, turn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--apps", type=int, default=int(os.environ.get("BENCH_WAKE_APPS", "50")))
    ap.add_argument("--size", type=int, default=1024 * 1024)
    ap.add_argument("--rate", default="10mbit")
    ap.add_argument("--settle", default="1s", help="[Wake] SettleSec= (roamd's default 1s)")
    ap.add_argument("--gate-timeout", default="0", help="[Time] GateTimeout= (0; roamd's 5s)")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "1")))
    ap.add_argument("--world", default="bwake")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_wake.py needs root (network namespaces, cgroups)")
    os.environ["ROAM_LOG_TIME"] = "1"  # roamd's lines stamped: where the top app's time went
    ids = app_ids(args.apps)
    w = World(args.world)
    blobdir = tempfile.mkdtemp(prefix="roam-bench-wake-")
    with open(os.path.join(blobdir, "blob"), "wb") as f:
        f.write(os.urandom(args.size))
    srv = None
    results = {"alone": [], "listed": [], "herd": [], "ordered": []}
    steps = {name: [] for name in results}  # (carrier-up -> online, -> the top app's turn)
    try:
        w.up()
        w.roamd_start()
        w.wait_default_state()
        srv = subprocess.Popen([str(WORLD_SH), "exec", w.name, "inet", PY, "-m", "http.server",
                                "--bind", WHOAMI["inet"][4], "--directory", blobdir, str(PORT)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: w.exec("inet", "ss", "-ltn").stdout.count(":%d" % PORT) > 0, 10,
                 what="the blob server")
        # the home router's port toward wifi0: the rate down to the device
        w.exec("home", "tc", "qdisc", "replace", "dev", "up-wifi0", "root", "tbf", "rate",
               args.rate, "burst", "32kb", "latency", "400ms")
        for r in range(args.rounds):
            k = (args.size, args.settle, args.gate_timeout)
            for name, n, listed in (("alone", 1, False), ("listed", 1, True),
                                    ("herd", len(ids), False), ("ordered", len(ids), True)):
                times, mk = run(w, ids[:n], listed, *k)
                results[name].append(times)
                steps[name].append(mk)
            print("round %d: alone %.2f s, alone listed %.2f s, herd top %.2f s, ordered top "
                  "%.2f s" % (r + 1, results["alone"][-1][0], results["listed"][-1][0],
                              results["herd"][-1][0], results["ordered"][-1][0]), flush=True)
    finally:
        if srv:
            srv.terminate()
            srv.wait()
        try:
            w.down()
        except Exception as e:  # a loaded machine: the results stand, the world may linger
            print("warning: world %s not taken down (%s); `tests/world/world.sh down %s`"
                  % (w.name, e, w.name), file=sys.stderr)
        finally:
            os.unlink(os.path.join(blobdir, "blob"))
            os.rmdir(blobdir)

    def med(name, f):
        return statistics.median(f(t) for t in results[name])

    alone = med("alone", lambda t: t[0])
    listed = med("listed", lambda t: t[0])
    ideal = args.size * 8 / parse_rate(args.rate)
    print("\nwake-up at connect: %d apps x %d KiB over a %s tbf (%.2f s each at line rate), "
          "[Wake] SettleSec=%s, [Time] GateTimeout=%s, %d round(s); seconds from carrier-up"
          % (args.apps, args.size // 1024, args.rate, ideal, args.settle, args.gate_timeout,
             args.rounds))
    print("%-14s %8s %9s %10s %11s %8s" % ("", "top app", "x listed", "x unlisted",
                                           "median app", "total"))
    print("%-14s %8.2f %9s %10.2f" % ("alone", alone, "", 1.0))
    print("%-14s %8.2f %9.2f %10.2f" % ("alone, listed", listed, 1.0, listed / alone))
    row = {}
    for name in ("herd", "ordered"):
        top = med(name, lambda t: t[0])
        mid = med(name, lambda t: statistics.median(t))
        total = med(name, lambda t: max(t))
        row[name] = (top, mid, total)
        print("%-14s %8.2f %9.2f %10.2f %11.2f %8.2f" % (name, top, top / listed, top / alone,
                                                         mid, total))
    ranks = sorted({0, 1, len(ids) // 4, len(ids) // 2, len(ids) - 1})
    print("rank-k completion (k: %s):" % ", ".join(str(k + 1) for k in ranks))
    for name in ("herd", "ordered"):
        print("  %-8s %s" % (name, "  ".join("%6.2f" % med(name, lambda t, k=k: t[k])
                                             for k in ranks)))
    if len(ids) > 1:
        gaps = [statistics.median(b - a for a, b in zip(t, t[1:])) for t in results["ordered"]]
        print("ordered: median time between turns' ends %.2f s (the fetch alone at line rate "
              "%.2f s)" % (statistics.median(gaps), ideal))
    print("the top app's time, from carrier-up: online, its turn, its fetch done (medians):")
    for name in ("alone", "listed", "herd", "ordered"):
        on = [m[0] for m in steps[name] if m[0] is not None]
        tu = [m[1] for m in steps[name] if m[1] is not None]
        print("  %-8s online %s  turn %s  done %.2f" % (
            name, "%.2f" % statistics.median(on) if on else "-",
            "%.2f" % statistics.median(tu) if tu else "-", med(name, lambda t: t[0])))
    print("ordered top / alone listed: %.2f (goal <= 1.1: ratio to goal %.2f); / alone "
          "unlisted: %.2f" % (row["ordered"][0] / listed, row["ordered"][0] / listed / 1.1,
                              row["ordered"][0] / alone))
    print("herd top / alone unlisted: %.1f (near %d)" % (row["herd"][0] / alone, args.apps))
    print("ordered total / herd total: %.3f (goal <= 1.05: ratio to goal %.2f)"
          % (row["ordered"][2] / row["herd"][2], row["ordered"][2] / row["herd"][2] / 1.05))


def parse_rate(s):
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9}
    for u, f in units.items():
        if s.lower().endswith(u):
            return float(s[:-len(u)]) * f
    return float(s)


if __name__ == "__main__":
    main()
