#!/usr/bin/python3
"""Time from carrier-up and from address-up to a verdict, on a healthy network ("home") and
behind a captive portal ("café"), with 0 ms and 150 ms of added one-way delay. Reported in
milliseconds and as a multiple of the uplink's round-trip time. The physical minimum for the
first verdict is about DNS (1 RTT) + TCP (1) + HTTP (1) = 3 RTT; the HTTPS-validated one
needs TLS on top (1-2 RTT more, TLS 1.3 / 1.2). Also the time from a carrier cut (the peer's
port going down) to the "offline, no-carrier" verdict on the bus, as a ratio to its target
of CUT_TARGET_MS (docs/connectivity.md: offline at once; the functional test in
tests/integration only checks that it happens)."""
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "../tests/integration"))
from minienv import wait_for  # noqa: E402
from probenet import GW_V4, GW_V6, PROBE_V4, PROBE_V6, ProbeNet  # noqa: E402

PROBE = [("probe.roam.test", PROBE_V4), ("probe.roam.test", PROBE_V6)]
REPS = int(os.environ.get("BENCH_REPS", "5"))
CUT_TARGET_MS = 1000.0


def setup(net, kind):
    if kind == "home":
        net.internet()
        net.dns(*PROBE)
        net.server(f"{PROBE_V4}:80,[{PROBE_V6}]:80")
        net.server(f"{PROBE_V4}:443,[{PROBE_V6}]:443", tls="probe")
        return ("online", "ok")
    net.dns(("probe.roam.test", GW_V4), ("probe.roam.test", GW_V6))
    net.server(f"{GW_V4}:80,[{GW_V6}]:80", mode="portal")
    return ("portal", "portal-redirect")


def rtt_ms(net):
    r = net.netns(f"ping -c 5 -i 0.2 -q {GW_V4}")
    line = [x for x in r.stdout.splitlines() if "min/avg" in x][0]
    return float(line.split("=")[1].split("/")[1])


def timed(net, expected, action):
    v4 = lambda: net.verdicts()[:2] == expected  # noqa: E731
    t0 = time.monotonic()
    action()
    wait_for(v4, timeout=30, interval=0.002, what=f"{expected}")
    return (time.monotonic() - t0) * 1000


def run(kind, delay):
    net = ProbeNet(f"b{kind[:2]}{delay}", delay_ms=delay if delay else None)
    try:
        expected = setup(net, kind)
        net.start_roamd(net.probe_config().replace("LogLevel=debug", "LogLevel=warning")
                        .replace("Timeout=3", "Timeout=5"))
        net.wait_verdicts(expected * 2, timeout=30)
        rtt = rtt_ms(net)
        carrier, address, cut = [], [], []
        for _ in range(REPS):
            cut.append(timed(net, ("offline", "no-carrier"), lambda: net.carrier(False)))
            # From the moment roamd sees the carrier (the kernel's linkwatch may hold a
            # carrier event back for up to a second) to the verdict.
            net.carrier(True)
            wait_for(lambda: net.link_prop("d0", "Carrier"), timeout=5, interval=0.002)
            carrier.append(timed(net, expected, lambda: None))
            net.netns("ip addr del 192.0.2.2/24 dev d0")
            wait_for(lambda: net.verdicts()[0] == "offline", timeout=5)

            def readd():
                net.netns("ip addr add 192.0.2.2/24 dev d0")
                net.netns(f"ip route replace default via {GW_V4} dev d0")
            address.append(timed(net, expected, readd))
        net.stop_roamd()
        return (rtt, statistics.median(carrier), statistics.median(address),
                statistics.median(cut))
    finally:
        net.close()


def main():
    print(f"verdict latency (IPv4 verdict, median of {REPS})")
    for kind in ("home", "cafe"):
        for delay in (0, 150):
            rtt, c, a, x = run(kind, delay)
            print(f"  {kind:4} +{delay:3} ms one-way (RTT {rtt:6.1f} ms): carrier seen -> "
                  f"verdict {c:7.1f} ms ({c / rtt:6.1f} RTT), address-up -> verdict "
                  f"{a:7.1f} ms ({a / rtt:6.1f} RTT), carrier cut -> offline {x:7.1f} ms "
                  f"({x / CUT_TARGET_MS:.2f} of the {CUT_TARGET_MS:.0f} ms target)")


if __name__ == "__main__":
    main()
