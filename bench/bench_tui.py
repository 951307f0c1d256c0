#!/usr/bin/python3
"""The TUI's start-up time and memory, against fake_roamd on a private bus, on a real pty.

- start to first full frame: from spawning `roam` to the end of the first frame that shows
  roamd's links (ROAM_TEST_FRAMES=1 makes roam mark each frame's end in the terminal title);
  target 50 ms.
- RSS after live updates: 20 links, every one changing verdict every second, for --seconds
  (default 10; the issue's full run is --seconds 600); target 6 MiB, and no growth between the
  middle and the end of the run.
Ratios are measured / target: below 1.0 meets the target."""
import argparse
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "../tests/client"))
from fakebus import Bus, FakeRoamd, ROAM  # noqa: E402

START_TARGET_MS = 50
RSS_TARGET_KIB = 6 * 1024
N_LINKS = 20
VERDICTS = [("online", "ok"), ("portal", "portal-redirect"), ("partial", "https-failed"),
            ("local", "http-timeout"), ("offline", "gateway-unreachable")]
MARKER = re.compile(rb"\x1b\]2;roam-frame \d+ [^\x07]*live=ready[^\x07]*\x07")


def scenario():
    links = []
    for i in range(N_LINKS):
        links.append({
            "Index": 10 + i, "Name": f"eth{i}", "Bearer": "ethernet", "AdminUp": True,
            "Carrier": True, "OperState": "up", "State": "routable",
            "Addresses": [[4, f"192.0.2.{10 + i}", 24, "global"],
                          [6, f"2001:db8::{10 + i:x}", 64, "global"]],
            "Gateways": [[4, "192.0.2.1"]], "DNS": [[4, "192.0.2.53"]], "DNSSource": "dhcpcd",
            "Connectivity": "online", "ConnectivityReason": "ok",
            "LastProbe": int(time.time() * 1e6), "ProbeDuration": 100_000,
        })
    return {"manager": {"State": "online", "BestLink": "/org/roam1/link/10"}, "links": links}


class Pty:
    """roam on a pty whose output is read all the time (a terminal that keeps up)."""

    def __init__(self, env):
        self.master, slave = os.openpty()
        import fcntl
        import struct
        import termios
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        env = dict(env, TERM="xterm-256color", LANG="C.UTF-8", ROAM_TEST_FRAMES="1")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([ROAM], stdin=slave, stdout=slave, stderr=slave, env=env,
                                     preexec_fn=os.setsid, close_fds=True)
        os.close(slave)
        self.ready_at = None
        self.buf = b""
        self.stop = False
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self):
        while not self.stop:
            r, _, _ = select.select([self.master], [], [], 0.2)
            if not r:
                continue
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            if self.ready_at is None:
                self.buf += data
                if MARKER.search(self.buf):
                    self.ready_at = time.monotonic()

    def wait_ready(self, timeout=10):
        deadline = time.monotonic() + timeout
        while self.ready_at is None:
            if time.monotonic() > deadline:
                raise RuntimeError("roam drew no frame with roamd's links")
            time.sleep(0.001)
        return (self.ready_at - self.t0) * 1000

    def rss(self):
        """VmRSS and RssAnon in KiB."""
        values = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "RssAnon"):
                    values[key] = int(rest.split()[0])
        return values["VmRSS"], values["RssAnon"]

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.stop = True
        self.thread.join()
        os.close(self.master)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10,
                    help="how long the 20 links change state (default 10; the target's is 600)")
    ap.add_argument("--starts", type=int, default=15, help="start-up measurements (default 15)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as d:
        bus = Bus(d)
        fake = FakeRoamd(bus, d, scenario())
        try:
            starts = []
            for _ in range(args.starts):
                p = Pty(bus.env)
                try:
                    starts.append(p.wait_ready())
                finally:
                    p.close()
            start = statistics.median(starts)
            print(f"tui start to first full frame: median {start:.1f} ms "
                  f"(min {min(starts):.1f}, max {max(starts):.1f}, n={len(starts)}), "
                  f"ratio {start / START_TARGET_MS:.2f} of {START_TARGET_MS} ms")

            p = Pty(bus.env)
            try:
                p.wait_ready()
                first = p.rss()
                middle = None
                t_end = time.monotonic() + args.seconds
                tick = 0
                while time.monotonic() < t_end:
                    t_next = time.monotonic() + 1
                    for i in range(N_LINKS):
                        verdict, reason = VERDICTS[(tick + i) % len(VERDICTS)]
                        fake.send(op="set", link=10 + i, props={
                            "Connectivity": verdict, "ConnectivityReason": reason,
                            "PortalURL": "http://portal.example/login" if verdict == "portal"
                            else ""})
                        fake.send(op="set", link=10 + i, props={
                            "LastProbe": int(time.time() * 1e6), "ProbeDuration": 90_000 + i})
                    tick += 1
                    if middle is None and time.monotonic() > t_end - args.seconds / 2:
                        middle = p.rss()
                    time.sleep(max(0, t_next - time.monotonic()))
                end = p.rss()
            finally:
                p.close()
        finally:
            fake.close()
            bus.close()

    middle = middle or first
    print(f"tui RSS with {N_LINKS} links changing every second for {args.seconds:.0f} s: "
          f"VmRSS {first[0]} -> {middle[0]} -> {end[0]} KiB, RssAnon {first[1]} -> {middle[1]} "
          f"-> {end[1]} KiB; ratio {end[0] / RSS_TARGET_KIB:.2f} of 6 MiB; "
          f"growth middle to end {end[0] - middle[0]} KiB")


if __name__ == "__main__":
    main()
