#!/usr/bin/python3
"""Idle cost: how often roamd wakes with one online link and nothing happening, beside
NetworkManager in the same world (issue 45 §3). See bench/README.md.

The world is bench_verdict.py's open network (tests/integration/probenet.py: the device's
namespace with d0, a gateway, DNS and the check server). Each daemon in turn, alone, on the
same link: once its d0 is online (roamd: Connectivity4 online; NetworkManager: its IPv4
connectivity FULL), a settle of BENCH_SETTLE seconds (30) lets the first contact's work end,
then BENCH_MINUTES (10) of nothing: no app, no carrier change. Counted over that window, for
all the process's threads (/proc/PID/task/*):
- voluntary context switches (`voluntary_ctxt_switches`): each time a thread went to sleep
  waiting (epoll_wait, poll, a futex), i.e. one per wake-up it then had;
- times run on a CPU (/proc/PID/task/TID/schedstat, the third field), which counts every
  wake-up however it came (a timer, a socket, a signal).
Timer expiries are not counted apart: NetworkManager's are GLib timeouts inside its poll and
roamd's sd-event timerfds, neither visible from outside without perf; every expiry that does
anything is a wake-up above.

roamd runs with bench_verdict.py's configuration (roamd's defaults but the network's names,
CA and DNS; LogLevel=info), NetworkManager with bench_verdict.py's (connectivity interval
300 s, as roamd's RecheckInterval). Prints a table, then one JSON line. Needs root and
NetworkManager (bench/run installs it)."""
import glob
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "../tests/integration"))

import bench_verdict as bv  # noqa: E402
from minienv import ROAMD, unit_environment, wait_for, wait_until  # noqa: E402
from probenet import ProbeNet  # noqa: E402

MINUTES = float(os.environ.get("BENCH_MINUTES", "10"))
SETTLE = float(os.environ.get("BENCH_SETTLE", "30"))


def counts(pid):
    """(voluntary context switches, times run) summed over the process's threads."""
    vol = runs = 0
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(os.path.join(task, "status")) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        vol += int(line.split()[1])
            with open(os.path.join(task, "schedstat")) as f:
                runs += int(f.read().split()[2])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended meanwhile
    return vol, runs


def threads(pid):
    return len(glob.glob(f"/proc/{pid}/task/*"))


def idle_window(pid, alive):
    """Counts over SETTLE then MINUTES of nothing; per minute."""
    time.sleep(SETTLE)  # the window is the measurement: a fixed length, nothing waited for
    v0, r0 = counts(pid)
    t0 = time.monotonic()
    time.sleep(MINUTES * 60)
    v1, r1 = counts(pid)
    dt = (time.monotonic() - t0) / 60
    if not alive():
        raise RuntimeError("the daemon stopped during the window")
    return (v1 - v0) / dt, (r1 - r0) / dt, threads(pid)


# roamd in a cgroup of its own, as the root of a cgroup namespace: it watches the cgroup tree
# (inotify) for apps, and on a shared test machine other worlds' cgroups come and go all the
# time, which would be counted as roamd's idle wake-ups. A laptop's tree is quiet when idle.
ROAMD_SCRIPT = """set -e
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/{cg}
echo $$ > /sys/fs/cgroup/{cg}/cgroup.procs
exec unshare -C -m sh -c 'umount /sys/fs/cgroup; mount -t cgroup2 cgroup2 /sys/fs/cgroup; \
exec "$0" "$@"' {roamd} --config {conf}
"""


def start_roamd(net):
    conf = net.write("roamd.conf", bv.roamd_config(net))
    log = open(os.path.join(net.dir, "roamd.log"), "a")
    cg = f"roam-bench-idle-{os.getpid()}"
    net.roamd = subprocess.Popen(
        ["ip", "netns", "exec", net.name, "sh", "-c",
         ROAMD_SCRIPT.format(cg=cg, roamd=ROAMD, conf=conf)],
        env=dict(net.env, **unit_environment()), stdout=log, stderr=subprocess.STDOUT)
    wait_until(lambda: net.has_name("org.roam1") or net.roamd.poll() is not None,
               what="roamd on the bus", procs=[net.roamd])
    assert net.roamd.poll() is None, net.log()
    return cg


def remove_cgroup(cg):
    # the host's cgroup2 hierarchy (roamd's app cgroups below it are gone with roamd)
    subprocess.run(["sh", "-c", f"d=$(mktemp -d) && mount -t cgroup2 cgroup2 $d && "
                    f"find $d/{cg} -depth -type d -exec rmdir {{}} + ; umount $d; rmdir $d"],
                   capture_output=True)


def run_roamd(net):
    cg = start_roamd(net)
    try:
        wait_for(lambda: net.link_prop("d0", "Connectivity4") == "online", timeout=30,
                 what="roamd: d0 online")
        pid = net.roamd.pid
        res = idle_window(pid, lambda: net.roamd.poll() is None)
        log = net.log()
        mode = ("signs" if "looked at when the kernel logs a sign" in log
                else "poll" if "looked at every StallInterval" in log else "?")
        return res, mode
    finally:
        net.stop_roamd()
        remove_cgroup(cg)


def run_nm(net):
    d = os.path.join(net.dir, "nm")
    for sub in ("etc/system-connections", "etc/conf.d", "etc/sysconf.d", "lib"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    with open(os.path.join(d, "etc/NetworkManager.conf"), "w") as f:
        # its log (--debug: in the foreground, to stderr) at INFO: CONCHECK's debug lines are
        # bench_verdict.py's clock, not needed here
        f.write(bv.NM_CONF.format(d=d).replace("ALL:INFO,CONCHECK:DEBUG", "ALL:INFO"))
    profile = os.path.join(d, "etc/system-connections/d0.nmconnection")
    with open(profile, "w") as f:
        f.write(bv.NM_PROFILE)
    os.chmod(profile, 0o600)
    with open(os.path.join(d, "resolv.conf"), "w") as f:
        f.write(f"nameserver {bv.GW_V4}\n")
    log = open(os.path.join(d, "nm.log"), "w")
    nm = subprocess.Popen(["ip", "netns", "exec", net.name, "unshare", "-m", "sh", "-c",
                           bv.NM_SCRIPT.format(d=d, nm=bv.NM)],
                          env=net.env, stdout=log, stderr=subprocess.STDOUT)
    try:
        dev = bv.poll(lambda: bv.nm_device(net, "d0"), 30, "NetworkManager's d0")
        bv.poll(lambda: bv.nm_prop(net, "Ip4Connectivity", dev) == bv.NM_FULL, 60,
                "NetworkManager: d0 IPv4 connectivity full", interval=0.1)
        # `ip netns exec`, unshare and sh exec into NetworkManager: nm.pid is its pid
        return idle_window(nm.pid, lambda: nm.poll() is None)
    finally:
        nm.terminate()
        try:
            nm.wait(10)
        except subprocess.TimeoutExpired:
            nm.kill()
            nm.wait()


def main():
    have_nm = os.access(bv.NM, os.X_OK)
    net = ProbeNet("bidle")
    try:
        bv.setup(net, "open")
        (rv, rr, rt), mode = run_roamd(net)
        nv = nr = nt = None
        if have_nm:
            nv, nr, nt = run_nm(net)
    finally:
        net.close()
    print(f"idle with d0 online, {MINUTES:g} min after a {SETTLE:g} s settle, per minute "
          f"(all threads)")
    print(f"  {'':16} {'voluntary switches':>19} {'times run':>10} {'threads':>8}")
    print(f"  {'roamd':16} {rv:19.1f} {rr:10.1f} {rt:8}   (stall looks: {mode})")
    if have_nm:
        print(f"  {'NetworkManager':16} {nv:19.1f} {nr:10.1f} {nt:8}")
        print(f"  {'roamd/NM':16} {rv / nv if nv else float('nan'):19.2f} "
              f"{rr / nr if nr else float('nan'):10.2f}")
    else:
        print("  NetworkManager: not installed (bench/run installs it)")
    print(json.dumps({"bench": "idle", "minutes": MINUTES, "stall_looks": mode,
                      "roamd": {"voluntary_per_min": rv, "runs_per_min": rr},
                      "nm": ({"voluntary_per_min": nv, "runs_per_min": nr}
                             if have_nm else None)}))


if __name__ == "__main__":
    main()
