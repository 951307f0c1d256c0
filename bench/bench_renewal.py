#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Work per DHCP renewal that changes nothing (issue 42): 10 links, every feature of the test
world's configuration on (9 of them with a lease); a renewal that changes nothing is each
DHCPv4 lease file written anew with what it said (as dhcpcd writes it on a renewal); per
renewal, roamd's
reconcile passes and lease file parses (counted in its debug log: "Reconciler: pass N",
"FILE: lease file read and parsed") and the D-Bus signals it sent (a monitor on the world's
bus: all of them, and the Links' PropertiesChanged).

    bench/bench_renewal.py [--roamd PATH]   (PATH: a roamd to compare, e.g. main's build with
                                             the same two debug lines)

Each round waits for dhcpcd's new files to be read, then until roamd's log is quiet for 1 s
(a bench's settle time, not a test's wait); BENCH_ROUNDS rounds (default 5), the median
printed."""
import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "world"))
from roamworld import Monitor, World, WorldBusy, addrs, wait_for  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
# wifi0 (home), cell0 (living room), eth0 (the dead network: no lease) and 7 more
EXTRA = [("ext%d" % i, "home" if i % 2 == 0 else "living") for i in range(7)]
LEASED = ["wifi0", "cell0"] + [n for n, _ in EXTRA]


def claim_world(roamd):
    for i in range(10):
        name = "brenew" if i == 0 else "brenew_%d" % i
        try:
            return World(name, roamd=roamd).lock()
        except WorldBusy:
            continue
    raise SystemExit("bench_renewal: worlds brenew and brenew_1..9 are all in use")


MISSING = []


def ready(w):
    ls = w.links()
    MISSING[:] = [n for n in LEASED if n not in ls or ls[n]["State"] != "routable" or
                  not addrs(ls[n], 4)]
    return not MISSING and len(ls) >= 10


def quiet(w, seconds=1.0, limit=15.0):
    """Until roamd's log has not grown for `seconds` (at most `limit`)."""
    end = time.monotonic() + limit
    last, since = len(w.roamd_log()), time.monotonic()
    while time.monotonic() < end:
        time.sleep(0.1)
        n = len(w.roamd_log())
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since >= seconds:
            return


# What a renewal does to the lease files, without dhcpcd's timing: each file written anew
# with what it said (dhcpcd -N in the first runs did not always write one within 30 s with 10
# links; its route re-adds on a subnet shared by several links are dhcpcd's churn, not this).
# (Renamed into place: a file truncated and written in place may be read half-written.)
RENEW = "cd /var/lib/dhcpcd && for f in %s; do cp -p $f.lease .bench && mv .bench $f.lease; done"


def one_round(w):
    quiet(w)
    at = len(w.roamd_log())
    with Monitor(w.address) as mon:
        w.dev("sh", "-c", RENEW % " ".join(LEASED))
        wait_for(lambda: all("/%s.lease: lease file read" % n in w.roamd_log()[at:]
                             for n in LEASED), timeout=30,
                 what="roamd reading every rewritten DHCPv4 lease")
        quiet(w)
        sigs = [m for _, m in mon.signals()]
    log = w.roamd_log()[at:]
    link_pc = [m for m in sigs if m.get("member") == "PropertiesChanged" and
               m.get("path", "").startswith("/org/roam1/link/")]
    if os.environ.get("BENCH_VERBOSE"):
        import collections
        props = collections.Counter(k for m in link_pc for k in Monitor.properties_changed(m))
        kinds = collections.Counter(l.split("roamd-links.c")[1] for l in log.splitlines()
                                    if "Sync:" in l)
        print("  changed properties:", dict(props), "\n  syncs:", dict(kinds), flush=True)
    return {"passes": log.count("Reconciler: pass "),
            "parses": log.count(": lease file read and parsed"),
            "signals": len(sigs), "link_properties_changed": len(link_pc)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--roamd", help="the roamd to run (default: build/service/roamd)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("bench_renewal: needs root (the world's namespaces)")
    w = claim_world(args.roamd)
    try:
        w.up()
        w.roamd_start()
        w.wait_default_state()
        for name, net in EXTRA:
            w.sh("add-link", w.name, name)
            w.sh("move", w.name, name, net)
        # the world's dhcpcd runs its three uplinks: the extra links too, from scratch
        conf = w.path("dhcpcd.conf")
        conf.write_text(conf.read_text().replace(
            "allowinterfaces wifi0 cell0 eth0",
            "allowinterfaces wifi0 cell0 eth0 " + " ".join(n for n, _ in EXTRA)))
        w.sh("dhcpcd-restart", w.name, timeout=120)
        try:
            wait_for(lambda: ready(w), timeout=90, interval=0.5,
                     what="10 links, 9 with a lease")
        except TimeoutError:
            raise SystemExit("bench_renewal: not ready: %s" % {
                n: (l["State"], l["Addresses"]) for n, l in w.links().items()
                if n in MISSING})
        rounds = [one_round(w) for _ in range(ROUNDS)]
        med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
        print("roamd %s: per renewal (9 DHCPv4 lease files rewritten), 10 links (median of %d)" % (
            w.roamd, ROUNDS))
        for k, v in med.items():
            print("  %-26s %g   (rounds: %s)" % (k, v, " ".join(str(r[k]) for r in rounds)))
        print(json.dumps({"bench": "renewal", "roamd": str(w.roamd), "rounds": rounds,
                          "median": med}))
    finally:
        w.down()


if __name__ == "__main__":
    main()
