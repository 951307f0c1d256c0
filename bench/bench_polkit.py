#!/usr/bin/python3
"""roamd under a polkit storm (issue 26, item 17): polkit answers each check after 2 s, one at a
time (python3-dbusmock's polkitd), while 5 unprivileged callers each ask for a change. The
latency of root's property reads meanwhile, against the same reads with nobody waiting:
the ratio should stay near 1 (a roamd that waited for polkit on its loop made it ~1000).
Runs in a namespace of its own with a private bus."""
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../tests/integration"))
from minienv import MiniEnv, wait_for  # noqa: E402

NOBODY = 65534
POLKIT = "org.freedesktop.PolicyKit1"
POLKIT_PATH = "/org/freedesktop/PolicyKit1/Authority"


def reads(env, seconds=None, until=None):
    """Latencies (s) of Manager.State reads, back to back."""
    out = []
    t_end = time.monotonic() + seconds if seconds else None
    while (t_end and time.monotonic() < t_end) or (until and until()):
        t0 = time.monotonic()
        env.rb.get("/org/roam1", "org.roam1.Manager", "State")
        out.append(time.monotonic() - t0)
    return out


def main():
    env = MiniEnv("benchpk")
    mock = None
    try:
        env.netns("ip link add pk0 type veth peer name pk1")
        env.netns("ip link set pk0 up")
        env.start_roamd("[Daemon]\nLogLevel=warning\n[Apps]\nEnforce=no\n")
        link = env.link_path("pk0")
        mock = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                                 "polkitd"], env=env.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        wait_for(lambda: env.has_name(POLKIT), what="polkit mock")
        env.busctl("call", POLKIT, POLKIT_PATH, "org.freedesktop.DBus.Mock", "SetAllowed", "as",
                   "1", "org.roam1.manage")
        env.busctl("call", POLKIT, POLKIT_PATH, "org.freedesktop.DBus.Mock", "SetDelay", "d",
                   "2")
        quiet = reads(env, seconds=2)
        callers = [subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                                     "--clear-groups", "--", "dbus-send",
                                     f"--bus={env.address}", "--print-reply",
                                     "--reply-timeout=30000", "--dest=org.roam1", link,
                                     "org.roam1.Link.Reprobe"], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL) for _ in range(5)]
        t0 = time.monotonic()
        storm = reads(env, until=lambda: any(c.poll() is None for c in callers))
        t_storm = time.monotonic() - t0
        ok = sum(1 for c in callers if c.wait(30) == 0)
        q_med, s_med = statistics.median(quiet), statistics.median(storm)
        print("roamd during a polkit storm (5 callers, 2 s per check)")
        print(f"  callers answered:           {ok}/5 after {t_storm:.1f} s")
        print(f"  property read, quiet:       median {q_med * 1e3:.2f} ms, max "
              f"{max(quiet) * 1e3:.2f} ms ({len(quiet)} reads)")
        print(f"  property read, storm:       median {s_med * 1e3:.2f} ms, max "
              f"{max(storm) * 1e3:.2f} ms ({len(storm)} reads)")
        print(f"  ratio storm/quiet:          median {s_med / q_med:.2f}, "
              f"max {max(storm) / max(quiet):.2f} (target 1)")
    finally:
        if mock:
            mock.send_signal(signal.SIGTERM)
            mock.wait(10)
        env.close()


if __name__ == "__main__":
    main()
