#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Event source for shell waits (tests/world/world.sh wait_event): prints "ready" once every
source below is watched, then one line "event" whenever something may have changed (events
that arrive together make one line), and exits after --timeout seconds. The shell re-checks
its condition after "ready" and after each line, so a wait costs no polling and misses no
change: every source is subscribed before "ready".

Sources (any number):
  --file PATH        inotify on PATH and its directory (created, written, removed; a cgroup's
                     cgroup.events is written by the kernel when it changes)
  --netns NAME       rtnetlink multicast (links, addresses, routes) in /run/netns/NAME
  --pid PID          the process exits (pidfd)
  --bus-name ADDRESS NAME
                     NAME gets an owner on the bus at ADDRESS (`gdbus wait`, which watches
                     NameOwnerChanged itself)
"""
import argparse
import ctypes
import os
import select
import signal
import socket
import subprocess
import sys
import time

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF = 0x400, 0x800
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE |
        IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
CLONE_NEWNET = 0x40000000
# RTMGRP_LINK, IPV4_IFADDR, IPV4_ROUTE, IPV6_IFADDR, IPV6_ROUTE
RTNL_GROUPS = 0x1 | 0x10 | 0x40 | 0x100 | 0x400

libc = ctypes.CDLL(None, use_errno=True)


def check(ret, what):
    if ret < 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (what, os.strerror(e)))
    return ret


def inotify(paths):
    fd = check(libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC), "inotify_init1")
    for p in paths:
        for target in (p, os.path.dirname(os.path.abspath(p))):
            # a path that does not exist yet is seen through its directory
            libc.inotify_add_watch(fd, os.fsencode(target), MASK)
    return fd


def rtnetlink(ns):
    """A socket of NAME's network namespace, made there (this process moves into it)."""
    with open("/run/netns/" + ns) as f:
        check(libc.setns(f.fileno(), CLONE_NEWNET), "setns " + ns)
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_NONBLOCK, 0)
    s.bind((0, RTNL_GROUPS))
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--timeout", type=float, required=True)
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--netns", action="append", default=[])
    ap.add_argument("--pid", action="append", type=int, default=[])
    ap.add_argument("--bus-name", nargs=2, action="append", default=[])
    a = ap.parse_args()
    # the shell ends this helper with SIGTERM once its condition holds: children go too
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    deadline = time.monotonic() + a.timeout
    readers = {}  # fd or socket -> drain(); None: a pidfd, readable once its process ended
    children = []
    if a.file:
        fd = inotify(a.file)
        readers[fd] = lambda fd=fd: os.read(fd, 65536)
    if len(a.netns) > 1:
        sys.exit("waitevent.py: one --netns at a time")
    for ns in a.netns:
        s = rtnetlink(ns)
        readers[s] = lambda s=s: s.recv(65536)
    for pid in a.pid:
        try:
            readers[os.pidfd_open(pid)] = None
        except ProcessLookupError:
            pass  # already gone: the condition says so at once
    for address, name in a.bus_name:
        p = subprocess.Popen(["gdbus", "wait", "--address", address,
                              "--timeout", str(max(1, int(a.timeout + 1))), name],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        children.append(p)
        readers[os.pidfd_open(p.pid)] = None
    print("ready", flush=True)
    try:
        while readers:
            left = deadline - time.monotonic()
            if left <= 0:
                return 0
            ready, _, _ = select.select(list(readers), [], [], left)
            if not ready:
                return 0
            for r in ready:
                drain = readers[r]
                if drain is None:
                    del readers[r]  # a pidfd stays readable: said once
                    continue
                try:
                    while drain():
                        pass
                except (BlockingIOError, InterruptedError):
                    pass
            try:
                print("event", flush=True)
            except BrokenPipeError:
                return 0  # the shell has what it waited for
        # nothing left to watch: the condition alone decides, until the deadline
        time.sleep(max(0.0, deadline - time.monotonic()))
        return 0
    finally:
        for p in children:
            p.kill()
            p.wait()


if __name__ == "__main__":
    sys.exit(main())
