# SPDX-License-Identifier: LGPL-2.1-or-later
"""An unmodified GLib app, as far as its network monitor goes: Gio.NetworkMonitor.get_default()
and nothing else. Prints one JSON line at start and one per network-changed:
{"t": CLOCK_MONOTONIC s, "event": "start"|"changed"|"metered"|"backend", "type": the monitor's GType,
 "backend": roam's monitor's backend (null for others), "available", "connectivity", "metered"}.
Arguments: HOST:PORT ... are asked with can_reach (sync) and can_reach_async at start:
{"event": "reach", "target", "sync": true|error text, "async": true|error text}.
--fetch URL (first): the app's work once it hears it is online (connectivity full): curl
fetches URL, then {"event": "fetched", "t", "rc", "size"} (bench/bench_gio.py).
Runs until its stdin closes."""
import json
import os
import subprocess
import sys
import time

from gi.repository import Gio, GLib

CONN = {Gio.NetworkConnectivity.LOCAL: "local", Gio.NetworkConnectivity.LIMITED: "limited",
        Gio.NetworkConnectivity.PORTAL: "portal", Gio.NetworkConnectivity.FULL: "full"}


def say(mon, event, **extra):
    line = {"t": time.monotonic(), "event": event, "type": type(mon).__gtype__.name,
            "backend": (mon.props.backend if hasattr(mon.props, "backend") else None),
            "available": mon.get_network_available(),
            "connectivity": CONN[mon.get_connectivity()],
            "metered": mon.get_network_metered()}
    line.update(extra)
    print(json.dumps(line), flush=True)


def fetch_when_online(mon, url):
    """Like an app that syncs when its monitor says online: one fetch, at the first full."""
    started = []

    def check(m, *_):
        if started or m.get_connectivity() != Gio.NetworkConnectivity.FULL:
            return
        p = subprocess.Popen(["curl", "-sS", "-o", "/dev/null", "-w", "%{size_download}",
                              "--max-time", "600", url], stdout=subprocess.PIPE, text=True)
        started.append(p)

        def done(pid, status):  # GLib reaped it: its status is this one
            print(json.dumps({"event": "fetched", "t": time.monotonic(),
                              "rc": os.waitstatus_to_exitcode(status),
                              "size": int(p.stdout.read() or 0)}), flush=True)
        GLib.child_watch_add(GLib.PRIORITY_DEFAULT, p.pid, done)
    mon.connect("network-changed", check)
    check(mon)


def main():
    loop = GLib.MainLoop()
    mon = Gio.NetworkMonitor.get_default()
    say(mon, "start")
    mon.connect("network-changed", lambda m, available: say(m, "changed", arg=available))
    args = sys.argv[1:]
    if args[:1] == ["--fetch"]:
        fetch_when_online(mon, args[1])
        args = args[2:]
    mon.connect("notify::network-metered", lambda m, _: say(m, "metered"))
    if hasattr(mon.props, "backend"):  # roam's: who answers (roamd, or GLib's own meanwhile)
        mon.connect("notify::backend", lambda m, _: say(m, "backend"))
    pending = []
    for target in args:
        host, port = target.rsplit(":", 1)
        addr = Gio.NetworkAddress.new(host, int(port))
        try:
            sync = mon.can_reach(addr, None)
        except GLib.Error as e:
            sync = e.message
        result = {"event": "reach", "target": target, "sync": sync}
        pending.append(result)

        def done(m, res, result=result):
            try:
                result["async"] = m.can_reach_finish(res)
            except GLib.Error as e:
                result["async"] = e.message
            print(json.dumps(result), flush=True)
        mon.can_reach_async(addr, None, done)
    GLib.io_add_watch(GLib.IOChannel.unix_new(0), GLib.PRIORITY_DEFAULT,
                      GLib.IOCondition.IN | GLib.IOCondition.HUP,
                      lambda *a: (loop.quit(), False)[1])
    loop.run()


main()
