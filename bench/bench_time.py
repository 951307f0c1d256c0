#!/usr/bin/python3
"""The time consensus against chronyd (issue 28's benchmark), in the test world
(tests/world/world.sh): time from roamd's first online verdict to `settled`, the settled
bound (its ± in ms and how far its middle really is from the host's clock), and beside it
chronyd's own time to its first synchronisation in the same world.

The world: wifi0 and eth0 in the home network, cell0 in the mobile network, whose HTTPS
check server's Date lies by 2 h (tests/world/test_time.py's liar: tests/world/httpd.py
--date-offset in the mobile router, the LAN's port 443 DNATed to it). Three shapes:

- "2 links, one lying" (wifi0 + cell0): two witnesses that disagree cannot be told apart, so
  roamd does not settle (by design: no majority, `disputed`, and the gate opens "unverified"
  after GateTimeout=); timed to `disputed`.
- "2 links, both honest" (wifi0 + eth0): the least that settles.
- "3 links, one lying" (wifi0 + eth0 + cell0): the liar is named, the others settle.

Each round stops roamd, removes its saved time (a first boot: no lower bound) and starts
roamd and a fresh chronyd in the device at once, the links already configured by dhcpcd.
roamd is timed on its own bus signals (`busctl monitor` stamps): the Manager's State turning
`online` (the first online verdict, where the gate's wait starts) to the Time's State turning
`settled`. chronyd is Debian's, unpacked by tools/fetch-chronyd.sh (never installed), always
run with -x (it never touches the clock): one in the world's internet namespace serves NTP
from the host's clock (`local stratum 8`, `allow`) at 203.0.113.10, the check server's
address; the device's has `server 203.0.113.10 iburst` and is timed from its start to the
reference time of its first synchronised tracking (`chronyc tracking`, leap status no longer
"Not synchronised"). Ratios: roamd's first online -> settled over chronyd's start -> sync,
and roamd's own start -> settled over the same (both from their start, links up).

BENCH_ROUNDS (5) rounds per shape (2 for the one that never settles). Needs root, a built
roamd with probes (build/service/roamd) and, for the chrony column, chronyd
(ROAM_CHRONYD=PATH, or tools/fetch-chronyd.sh's /var/cache/roam-test/chrony). The host's
clock and network are never touched: namespaces only."""
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "world"))
from roamworld import World, WorldBusy, unwrap_json, wait_for  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
LIE = -7200
TIMEOUT = 30
TIME_PATH = "/org/roam1/time"
FETCHED_CHRONYD = "/var/cache/roam-test/chrony/root/usr/sbin/chronyd"
LIAR_NFT = """table inet timeliar {
  chain pre {
    type nat hook prerouting priority -100;
    iifname "br0" meta nfproto ipv4 tcp dport 443 dnat ip to 198.51.100.65:8443
    iifname "br0" meta nfproto ipv6 tcp dport 443 dnat ip6 to [2001:db8:6::1]:8443
  }
}
"""
# (name, where each uplink is, the state roamd ends in, chronyd beside it)
SHAPES = [
    ("2 links, one lying", {"wifi0": "home", "cell0": "mobile", "eth0": "dead"}, "disputed",
     False),
    ("2 links, both honest", {"wifi0": "home", "cell0": "living", "eth0": "home"}, "settled",
     True),
    ("3 links, one lying", {"wifi0": "home", "cell0": "mobile", "eth0": "home"}, "settled", True),
]
ONLINE = {"home", "mobile"}

# chronyd's own files are the world's (its state directory) or the device's private /run:
# nothing of the host's /run/chrony, no drift file, no clock control (-x).
INET_CONF = """local stratum 8
allow
bindcmdaddress /
cmdport 0
pidfile {dir}/chronyd-inet.pid
"""
DEV_CONF = """server 203.0.113.10 iburst
port 0
bindcmdaddress /run/roam-bench-chrony/chronyd.sock
cmdport 0
pidfile /run/roam-bench-chrony/chronyd.pid
"""
DEV_SOCK = "/run/roam-bench-chrony/chronyd.sock"


def chronyd_binary():
    for p in (os.environ.get("ROAM_CHRONYD"), FETCHED_CHRONYD):
        if p and os.access(p, os.X_OK):
            return p
    return None


class Signals:
    """PropertiesChanged on the world's bus (`busctl monitor`), each with busctl's receive
    stamp (CLOCK_REALTIME), read by a thread; roamd's restarts do not interrupt it."""

    def __init__(self, address):
        self.items = []
        self.cond = threading.Condition()
        self.p = subprocess.Popen(
            ["busctl", "--address=" + address, "monitor", "--json=short",
             "--match=type='signal',interface='org.freedesktop.DBus.Properties',"
             "member='PropertiesChanged'"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.p.stdout:
            t = time.time()
            try:
                m = json.loads(line)
                iface, changed = m["payload"]["data"][:2]
            except (ValueError, KeyError, TypeError):
                continue
            t = m.get("timestamp-realtime", t * 1e6) / 1e6
            with self.cond:
                self.items.append((t, m.get("path"), iface,
                                   {k: v.get("data") for k, v in changed.items()}))
                self.cond.notify_all()

    def wait(self, since, path, key, values, timeout=TIMEOUT):
        """(stamp, changed) of the first signal after `since` that sets path's `key` to one of
        `values`: woken by each signal as it arrives."""
        def first():
            return next(((t, c) for t, p, _, c in self.items
                         if t >= since and p == path and c.get(key) in values), None)
        with self.cond:
            if not self.cond.wait_for(first, timeout):
                raise TimeoutError("%s %s in %s: not within %d s" % (path, key, values, timeout))
            return first()

    def close(self):
        self.p.terminate()
        self.p.wait()


def claim_world():
    for i in range(10):
        name = "btime" if i == 0 else "btime_%d" % i
        try:
            return World(name).lock()
        except WorldBusy:
            continue
    raise SystemExit("bench_time: worlds btime and btime_1..9 are all in use")


def start_liar(w):
    pidfile = w.path("bench-liar.pid")
    pidfile.unlink(missing_ok=True)
    ca = w.path("ca")
    p = subprocess.Popen(
        ["nsenter", "--net=/run/netns/roam-%s-mobile" % w.name, "--", "/usr/bin/python3",
         str(HERE.parent / "tests" / "world" / "httpd.py"), "--port", "8027", "--tls-port", "8443",
         "--cert", str(ca / "probe.pem"), "--key", str(ca / "probe.key"),
         "--route", "/roam-probe=roam-online\\n", "--date-offset", str(LIE),
         "--pidfile", str(pidfile)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(pidfile.exists, what="the lying check server")
    w.exec("mobile", "nft", "-f", "-", input=LIAR_NFT)
    return p


def start_ntp_server(w, chronyd):
    conf = w.path("chronyd-inet.conf")
    conf.write_text(INET_CONF.format(dir=w.dir))
    log = open(w.path("chronyd-inet.log"), "w")
    return subprocess.Popen(["nsenter", "--net=/run/netns/roam-%s-inet" % w.name, "--",
                             chronyd, "-x", "-d", "-u", "root", "-f", str(conf)],
                            stdout=log, stderr=subprocess.STDOUT)


def stop(p):
    if p and p.poll() is None:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def chrony_synced(w, chronyc):
    """(reference time, error bound) of the device chronyd's tracking once it is
    synchronised, else None: the CLOCK_REALTIME of the measurement it synchronised on, and
    root dispersion + root delay / 2 in seconds (chrony's own bound on its error)."""
    r = w.dev_run([chronyc, "-h", DEV_SOCK, "-n", "-c", "tracking"], check=False)
    f = r.stdout.strip().split(",")
    if r.returncode != 0 or len(f) < 14 or f[13] == "Not synchronised":
        return None
    return float(f[3]), float(f[11]) + float(f[10]) / 2


def time_props(w):
    """org.roam1.Time's properties, read with busctl (the bench keeps no bus connection of
    its own across roamd's restarts)."""
    r = subprocess.run(["busctl", "--address=" + w.address, "--json=short", "call", "org.roam1",
                        TIME_PATH, "org.freedesktop.DBus.Properties", "GetAll", "s",
                        "org.roam1.Time"], capture_output=True, text=True, check=True)
    return unwrap_json(json.loads(r.stdout)["data"][0])


def addresses_ready(w, where):
    """The uplinks that should come online have their IPv4 and IPv6 addresses from dhcpcd
    (kernel state: polled)."""
    return all(w.dev_addr(u, 4) and w.dev_addr(u, 6) for u, net in where.items()
               if net in ONLINE)


def round_once(w, sig, chronyd, chronyc, final):
    """One round: roamd (saved time removed) and chronyd started together. Returns a dict
    of what was measured."""
    w.roamd_stop()
    w.path("var-lib-roam", "time.state").unlink(missing_ok=True)
    out = {}
    dev_chrony = None
    t0 = time.time()
    if chronyd:
        w.dev_run(["sh", "-c", "rm -rf /run/roam-bench-chrony && "
                   "mkdir -m 0750 /run/roam-bench-chrony"])
        conf = w.path("chronyd-dev.conf")
        conf.write_text(DEV_CONF)
        log = open(w.path("chronyd-dev.log"), "a")
        t0 = time.time()
        dev_chrony = w.dev_popen([chronyd, "-x", "-d", "-u", "root", "-f", str(conf)],
                                 stdout=log, stderr=subprocess.STDOUT)
    try:
        t_roamd = time.time()
        w.roamd_start()
        t_online, _ = sig.wait(t_roamd, "/org/roam1", "State", ("online",))
        t_state, _ = sig.wait(t_roamd, TIME_PATH, "State", (final,))
        out["online"] = t_online - t_roamd
        out["first_online_to_state"] = t_state - t_online
        out["start_to_state"] = t_state - t_roamd
        t = time_props(w)
        now = time.time()
        out["reasons"] = t["Reasons"]
        out["falsetickers"] = sorted({s[1] for s in t["Sources"] if s[5] == "falseticker"})
        if final == "settled":
            realtime, error = t["Bound"]
            out["bound_ms"] = error / 1000
            out["middle_off_ms"] = (realtime / 1e6 - now) * 1000
        else:
            t_gate, _ = sig.wait(t_roamd, TIME_PATH, "Gate", ("unverified",))
            out["gate_unverified"] = t_gate - t_online
        if dev_chrony:
            ref, err = wait_for(lambda: chrony_synced(w, chronyc), timeout=60, interval=0.1,
                                what="chronyd synchronised")
            out["chrony_sync"] = ref - t0
            out["chrony_bound_ms"] = err * 1000
    finally:
        stop(dev_chrony)
    return out


def row(*cols):
    print("  %-22s %-9s %8s %9s %8s %14s %9s %8s %7s %7s" % cols, flush=True)


def med(xs):
    return statistics.median(xs)


def main():
    if os.geteuid() != 0:
        raise SystemExit("bench_time: needs root (the world's namespaces)")
    chronyd = chronyd_binary()
    chronyc = chronyd and os.path.join(os.path.dirname(os.path.dirname(chronyd)), "bin",
                                       "chronyc")
    w = claim_world()
    liar = ntp = sig = None
    try:
        w.up()
        if not w.probes:
            raise SystemExit("bench_time: this roamd has no connectivity probes")
        liar = start_liar(w)
        if chronyd:
            ntp = start_ntp_server(w, chronyd)
        sig = Signals(w.address)
        print("roamd: first online verdict -> time state, the saved time removed before each "
              "round (BENCH_ROUNDS=%d); chronyd %s" % (ROUNDS, chronyd or "not found "
                                                       "(tools/fetch-chronyd.sh): roamd alone"))
        row("shape", "state", "start->", "first", "start->", "bound ±", "middle", "chrony",
            "ratio", "ratio")
        row("", "", "online", "online->", "state", "roamd/chrony", "vs clock", "start->",
            "first/", "start/")
        row("", "", "", "state", "", "", "", "sync", "chrony", "chrony")
        summary = {}
        for name, where, final, with_chrony in SHAPES:
            for uplink, net in where.items():
                w.move(uplink, net)
            wait_for(lambda: addresses_ready(w, where), timeout=60, interval=0.2,
                     what="the uplinks' addresses in %s" % name)
            rounds = []
            for _ in range(ROUNDS if final == "settled" else min(ROUNDS, 2)):
                rounds.append(round_once(w, sig, chronyd if with_chrony else None, chronyc,
                                         final))
            m = {k: med([r[k] for r in rounds])
                 for k in ("online", "first_online_to_state", "start_to_state", "bound_ms",
                           "middle_off_ms", "chrony_sync", "chrony_bound_ms",
                           "gate_unverified") if k in rounds[-1]}
            m["falsetickers"] = rounds[-1]["falsetickers"]
            m["reasons"] = rounds[-1]["reasons"]
            m["rounds"] = len(rounds)
            m["per_round"] = [{k: v for k, v in r.items() if k not in ("reasons",)}
                              for r in rounds]
            ms = lambda k, f="%.0f ms": f % (m[k] * 1000) if k in m else "-"
            c = m.get("chrony_sync")
            row(name, final, ms("online"), ms("first_online_to_state"), ms("start_to_state"),
                "%.0f / %.1f ms" % (m["bound_ms"], m["chrony_bound_ms"])
                if "chrony_bound_ms" in m else "%.0f ms" % m["bound_ms"] if "bound_ms" in m
                else "-",
                "%+.0f ms" % m["middle_off_ms"] if "middle_off_ms" in m else "-",
                ms("chrony_sync"),
                "%.3f" % (m["first_online_to_state"] / c) if c else "-",
                "%.3f" % (m["start_to_state"] / c) if c else "-")
            print("  %-22s %s; falseticker: %s" % (
                "", m["reasons"][0] if m["reasons"] else "",
                ", ".join(m["falsetickers"]) or "none") + (
                "; gate open unverified %.0f ms after the first online verdict"
                % (m["gate_unverified"] * 1000) if final != "settled" else ""), flush=True)
            summary[name] = m
        print(json.dumps({"bench": "time", "rounds": ROUNDS, "shapes": summary}))
    finally:
        if sig:
            sig.close()
        stop(liar)
        stop(ntp)
        try:
            w.exec("mobile", "nft", "delete", "table", "inet", "timeliar", check=False)
        except Exception:
            pass
        w.down()


if __name__ == "__main__":
    main()
