#!/usr/bin/python3
"""GLib apps hearing "online": the herd of GLib's own monitor against roam's, in wake order
(docs/apps-hear.md, issue 44), in bench_wake.py's world.

N unmodified GLib apps (tests/world/gio_client.py: Gio.NetworkMonitor.get_default(), and one
fetch of --size when the monitor first says connectivity FULL), each in its own cgroup under
roam.slice, over the home router's port toward wifi0 shaped to --rate (a tbf), wifi0 the only
uplink (cell0's carrier off). Each run starts with wifi0's carrier off and every app running, then turns the carrier
on. Times are from roamd's online verdict (its stamped log: State -> online) to each app
hearing network-changed (FULL) and to its fetch done.

- herd: GLib's netlink monitor (GIO_USE_NETWORK_MONITOR=netlink: what a Debian without
  NetworkManager gives every app; NetworkManager's also tells every app at once), no app
  wake-listed: every app hears it when a default route appears.
- roam, none listed: roam's monitor (GIO_EXTRA_MODULES: build/gio), no app listed: each app
  hears roamd's verdict for itself, all at once.
- roam, ordered: roam's monitor, every app wake-listed in rank order with WakeBytes= its
  fetch: each hears "online" at its turn.

- half listed: the first half wake-listed, the rest not, heard after the listed ones (roam's
  monitor: what roamd does) or at once (those given GLib's netlink monitor: what they would
  hear if roamd told them at once), for which is better.

Printed per run: first and last app hearing it, the top app's fetch done, the total (the last
fetch), seconds from roamd's verdict (negative: before it). Needs root and build/."""
import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../tests/world"))
sys.path.insert(0, HERE)
from roamworld import REPO, WHOAMI, WORLD_SH, World, wait_for  # noqa: E402
from bench_wake import PORT, app_ids, parse_rate, rel, start_roamd  # noqa: E402

PY = "/usr/bin/python3"
CLIENT = os.path.join(HERE, "../tests/world/gio_client.py")


def online_stamp(w, t0_real):
    """Seconds from carrier-up to roamd's State -> online (its stamped log), or None."""
    for line in w.roamd_log().rsplit("=== roamd-start ", 1)[-1].splitlines():
        stamp, _, rest = line.partition(" ")
        try:
            t = float(stamp) - t0_real
        except ValueError:
            continue
        if t >= 0 and "State: " in rest and rest.endswith("-> online"):
            return t
    return None


def run(w, ids, mode, size, settle, gate):
    """{heard: [s], done: [s]} from carrier-up per app in rank order, and the verdict's time.
    mixed-*: the first half listed; the rest unlisted with roam's monitor (after the listed
    ones) or with GLib's netlink monitor (at once)."""
    listed = mode in ("ordered", "mixed-after", "mixed-now")
    n_listed = len(ids) if mode == "ordered" else len(ids) // 2 if listed else 0
    # cell0 off too: its default route (the living room's, no way out) would make GLib's
    # netlink monitor say FULL before wifi0 is back
    w.carrier("cell0", False)
    w.carrier("wifi0", False)
    start_roamd(w, ids[:n_listed] if listed else ids, listed, settle, gate, size)
    for a in ids:
        (w.cgroup / rel(a)).mkdir(parents=True, exist_ok=True)
    wait_for(lambda: w.manager()["State"] != "online", 20, what="offline")
    url = "http://%s:%d/blob" % (WHOAMI["inet"][4], PORT)
    netlink = ["GIO_USE_NETWORK_MONITOR=netlink"]
    roam = ["GIO_EXTRA_MODULES=%s" % (REPO / "build" / "gio")]
    envs = [netlink if mode == "herd" or (mode == "mixed-now" and i >= n_listed) else roam
            for i in range(len(ids))]
    procs, lines = [], []
    for a, env in zip(ids, envs):
        p = w.dev_popen(["env", *env, PY, CLIENT, "--fetch", url], cgroup=rel(a),
                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        q = queue.Queue()
        threading.Thread(target=lambda p=p, q=q: [q.put(json.loads(x)) for x in p.stdout],
                         daemon=True).start()
        procs.append(p)
        lines.append(q)
    for a, q, env in zip(ids, lines, envs):
        e = q.get(timeout=30)
        want = "GNetworkMonitorNetlink" if env is netlink else "RoamNetworkMonitor"
        if e["type"] != want or e["connectivity"] == "full":
            raise RuntimeError("%s started with %s" % (a, e))
    t0, t0_real = time.monotonic(), time.time()
    w.carrier("wifi0", True)
    heard, done = [None] * len(ids), [None] * len(ids)
    end = time.monotonic() + 600
    for i, q in enumerate(lines):
        while done[i] is None:
            e = q.get(timeout=max(end - time.monotonic(), 1))
            if e["event"] == "changed" and e["connectivity"] == "full" and heard[i] is None:
                heard[i] = e["t"] - t0
            if e["event"] == "fetched":
                if e["rc"] != 0 or e["size"] != size:
                    raise RuntimeError("%s: fetch failed: %s" % (ids[i], e))
                done[i] = e["t"] - t0
    for p in procs:
        p.stdin.close()
        p.wait(10)
    return heard, done, online_stamp(w, t0_real)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--apps", type=int, default=int(os.environ.get("BENCH_GIO_APPS", "20")))
    ap.add_argument("--size", type=int, default=1024 * 1024)
    ap.add_argument("--rate", default="10mbit")
    ap.add_argument("--settle", default="1s")
    ap.add_argument("--gate-timeout", default="0")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "1")))
    ap.add_argument("--world", default="bgio")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_gio.py needs root (network namespaces, cgroups)")
    os.environ["ROAM_LOG_TIME"] = "1"
    ids = app_ids(args.apps)
    w = World(args.world)
    blobdir = tempfile.mkdtemp(prefix="roam-bench-gio-")
    with open(os.path.join(blobdir, "blob"), "wb") as f:
        f.write(os.urandom(args.size))
    modes = ("herd", "roam", "ordered", "mixed-after", "mixed-now")
    results = {m: [] for m in modes}
    srv = None
    try:
        w.up()
        w.roamd_start()
        w.wait_default_state()
        srv = subprocess.Popen([str(WORLD_SH), "exec", w.name, "inet", PY, "-m", "http.server",
                                "--bind", WHOAMI["inet"][4], "--directory", blobdir, str(PORT)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(lambda: w.exec("inet", "ss", "-ltn").stdout.count(":%d" % PORT) > 0, 10,
                 what="the blob server")
        w.exec("home", "tc", "qdisc", "replace", "dev", "up-wifi0", "root", "tbf", "rate",
               args.rate, "burst", "32kb", "latency", "400ms")
        for r in range(args.rounds):
            for m in modes:
                results[m].append(run(w, ids, m, args.size, args.settle, args.gate_timeout))
            print("round %d done" % (r + 1), flush=True)
    finally:
        if srv:
            srv.terminate()
            srv.wait()
        try:
            w.down()
        except Exception as e:
            print("warning: world %s not taken down (%s)" % (w.name, e), file=sys.stderr)
        os.unlink(os.path.join(blobdir, "blob"))
        os.rmdir(blobdir)

    ideal = args.size * 8 / parse_rate(args.rate)
    print("\nGLib apps hearing online: %d apps x %d KiB over a %s tbf (%.2f s each at line "
          "rate), [Wake] SettleSec=%s, %d round(s); seconds from roamd's online verdict"
          % (args.apps, args.size // 1024, args.rate, ideal, args.settle, args.rounds))
    print("%-18s %8s %12s %11s %8s %8s" % ("", "verdict", "first heard", "last heard",
                                          "top done", "total"))
    out = {}
    for m, name in zip(modes[:3], ("herd (netlink)", "roam, none listed", "roam, ordered")):
        def med(f):
            return statistics.median(f(h, d, v) for h, d, v in results[m])
        v = med(lambda h, d, v: v)
        row = (v, med(lambda h, d, v: min(h) - v), med(lambda h, d, v: max(h) - v),
               med(lambda h, d, v: d[0] - v), med(lambda h, d, v: max(d) - v))
        out[m] = row
        print("%-18s %8.2f %12.2f %11.2f %8.2f %8.2f" % (name, *row))
    print("(verdict: from carrier-up; the rest from the verdict)")
    half = args.apps // 2
    print("\nhalf listed (%d), half not: the unlisted hear it after the listed (roam's monitor) "
          "or at once (GLib's netlink monitor); seconds from the verdict" % half)
    print("%-18s %12s %13s %14s %13s" % ("", "listed: top", "listed: last", "unlisted: first",
                                        "unlisted: last"))
    for m, name in (("mixed-after", "after the listed"), ("mixed-now", "at once")):
        def med(f):
            return statistics.median(f(h, d, v) for h, d, v in results[m])
        row = (med(lambda h, d, v: d[0] - v), med(lambda h, d, v: max(d[:half]) - v),
               med(lambda h, d, v: min(d[half:]) - v), med(lambda h, d, v: max(d[half:]) - v))
        out[m] = row
        print("%-18s %12.2f %13.2f %14.2f %13.2f" % (name, *row))
    print("(done times: each app's fetch)")
    print(json.dumps({"apps": args.apps, "size": args.size, "rate": args.rate,
                      "results": {m: dict(zip(("verdict", "first_heard", "last_heard",
                                               "top_done", "total"), out[m]))
                                  for m in modes[:3]},
                      "half_listed": {m: dict(zip(("listed_top_done", "listed_last_done",
                                                   "unlisted_first_done", "unlisted_last_done"),
                                                  out[m])) for m in modes[3:]}}))


if __name__ == "__main__":
    main()
