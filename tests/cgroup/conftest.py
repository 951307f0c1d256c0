# SPDX-License-Identifier: LGPL-2.1-or-later
"""Fixtures for the live cgroup tree tests: a private cgroup subtree per test, and the test
program (tests/cgroup/cgroup-tree-test.c) run inside it as if it were roamd.service."""
import os
import re
import select
import signal
import subprocess
import threading
import time

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.environ.get("CGROUP_TREE_TEST", os.path.join(TOP, "build/tests/cgroup/cgroup-tree-test"))
LINE = re.compile(r"^(ADDED|REMOVED|FOREACH) id=(\d+) level=(\d+) kind=(\S+) app=(\S+) uid=(\S+) path=(.*)$")


def wait_unpopulated(cgroup_dir, timeout=10):
    """Waits until cgroup_dir's cgroup.events says "populated 0": the kernel signals every
    change of that file as POLLPRI, so this sleeps until it changes instead of polling."""
    deadline = time.monotonic() + timeout
    with open(os.path.join(cgroup_dir, "cgroup.events")) as f:
        p = select.poll()
        p.register(f, select.POLLPRI)
        while True:
            f.seek(0)
            if "populated 0" in f.read():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            p.poll(left * 1000)


def _unescape(s):
    return re.sub(r"\\([0-3][0-7][0-7])", lambda m: chr(int(m.group(1), 8)), s)


def cgroup2_mount():
    """(mount point, root) of the cgroup2 mount that reaches our own cgroup, or None."""
    own = None
    with open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                own = line[3:].rstrip("\n")
    if not own:
        return None
    best = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            w = line.split()
            sep = w.index("-", 6)
            if w[sep + 1] != "cgroup2":
                continue
            root, mnt = _unescape(w[3]), _unescape(w[4])
            if root == "/" or own == root or own.startswith(root + "/"):
                if best is None or len(root) < len(best[1]):
                    best = (mnt, root)
    return best


class Subtree:
    """<mount>/roam-cgtest-PID-N: made for one test, emptied and removed after it."""

    counter = 0

    def __init__(self, mount, root):
        Subtree.counter += 1
        name = "roam-cgtest-%d-%d" % (os.getpid(), Subtree.counter)
        self.mount = mount
        self.fs = os.path.join(mount, name)
        # The same directory as roamd names it: relative to the cgroup namespace root.
        self.path = ("" if root == "/" else root) + "/" + name
        os.mkdir(self.fs)

    def fs_of(self, rel):
        return os.path.join(self.fs, rel)

    def ns_of(self, rel):
        return self.path + "/" + rel

    def mkdir(self, rel):
        os.makedirs(self.fs_of(rel), exist_ok=True)
        return os.stat(self.fs_of(rel)).st_ino

    def rmtree(self, rel):
        for d, _, _ in sorted(os.walk(self.fs_of(rel)), key=lambda x: -len(x[0])):
            os.rmdir(d)

    def cleanup(self):
        if not os.path.isdir(self.fs):
            return
        kill = os.path.join(self.fs, "cgroup.kill")
        if os.path.exists(kill):
            with open(kill, "w") as f:
                f.write("1")
        else:  # before Linux 5.14
            for d, _, _ in os.walk(self.fs):
                with open(os.path.join(d, "cgroup.procs")) as f:
                    for pid in f.read().split():
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except ProcessLookupError:
                            pass
        wait_unpopulated(self.fs)
        for d, _, _ in sorted(os.walk(self.fs), key=lambda x: -len(x[0])):
            os.rmdir(d)


class TreeProgram:
    """The test program, run in <subtree>/system.slice/roamd.service, its output collected.
    A custom script gets the command line as "$@" and must put itself somewhere first."""

    def __init__(self, sub, *args, script=None, filter=None):
        self.sub = sub
        cg = sub.fs_of("system.slice/roamd.service")
        os.makedirs(cg, exist_ok=True)
        if script is None:
            script = 'echo $$ > "%s/cgroup.procs" && exec "$@"' % cg
        self.proc = subprocess.Popen(
            ["/bin/sh", "-c", script, "sh", PROGRAM, "--filter", filter or sub.path, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            bufsize=1)
        self.lines = []
        self.stderr = []
        self.cond = threading.Condition()
        self.threads = [threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True),
                        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr), daemon=True)]
        for t in self.threads:
            t.start()
        self.wait_line(lambda l: l == "ready")

    def _read(self, stream, into):
        for line in stream:
            with self.cond:
                into.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            into.append(None)
            self.cond.notify_all()

    def wait_line(self, pred, timeout=10, start=0, stderr=False):
        """The index of the first output line from start on that satisfies pred."""
        deadline = time.monotonic() + timeout
        lines = self.stderr if stderr else self.lines
        with self.cond:
            i = start
            while True:
                while i < len(lines):
                    line = lines[i]
                    if line is None:
                        raise AssertionError("program exited: %s\n%s" % (self.lines, self.stderr))
                    if pred(line):
                        return i
                    i += 1
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out; output:\n%s\nstderr:\n%s" %
                                         ("\n".join(l for l in self.lines if l), "\n".join(l for l in self.stderr if l)))
                self.cond.wait(left)

    def command(self, cmd, reply_prefix):
        start = len(self.lines)
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self.lines[self.wait_line(lambda l: l.startswith(reply_prefix), start=start)]

    def header(self):
        """The mount, own and roam-slice lines printed once the tree is up."""
        with self.cond:
            return [l for l in self.lines[:self.lines.index("ready")] if not LINE.match(l)]

    def events(self, kind=None):
        out = []
        with self.cond:
            for line in self.lines:
                m = LINE.match(line or "")
                if m and (kind is None or m.group(1) == kind):
                    out.append(dict(ev=m.group(1), id=int(m.group(2)), level=int(m.group(3)),
                                    kind=m.group(4), app=m.group(5), uid=m.group(6),
                                    path=m.group(7)))
        return out

    def wait_event(self, ev, path, timeout=10):
        self.wait_line(lambda l: l.startswith(ev + " ") and l.endswith(" path=" + path), timeout)

    def barrier(self):
        """Waits until every inotify event from before has been handled: events of one inotify
        instance are read in order, so once a new marker service is reported, so is the
        rest."""
        TreeProgram.markers = getattr(TreeProgram, "markers", 0) + 1
        rel = "system.slice/barrier-%d.service" % TreeProgram.markers
        self.sub.mkdir(rel)
        self.wait_event("ADDED", self.sub.ns_of(rel))
        os.rmdir(self.sub.fs_of(rel))
        self.wait_event("REMOVED", self.sub.ns_of(rel))

    def bugs(self):
        with self.cond:
            return [l for l in self.lines if l and l.startswith("BUG")]

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for t in self.threads:
            t.join(timeout=5)


@pytest.fixture
def subtree():
    if os.geteuid() != 0:
        pytest.skip("needs root")
    m = cgroup2_mount()
    if not m:
        pytest.skip("no cgroup2 hierarchy")
    if not os.access(PROGRAM, os.X_OK):
        pytest.skip("test program not built: %s" % PROGRAM)
    sub = Subtree(*m)
    try:
        yield sub
    finally:
        sub.cleanup()


@pytest.fixture
def start(subtree):
    progs = []

    def run(*args, **kwargs):
        p = TreeProgram(subtree, *args, **kwargs)
        progs.append(p)
        return p

    yield run
    for p in progs:
        p.stop()
    for p in progs:
        # Exits cleanly (also under the sanitizers: no leak, no error report).
        assert p.proc.returncode == 0, "\n".join(l for l in p.stderr if l)
        assert not [l for l in p.stderr if l and "Sanitizer" in l], "\n".join(l for l in p.stderr if l)


_counts = {"passed": 0, "failed": 0, "skipped": 0}


def pytest_runtest_logreport(report):
    if report.skipped:
        _counts["skipped"] += 1
    elif report.failed:
        _counts["failed"] += 1
    elif report.when == "call":
        _counts["passed"] += 1


def pytest_sessionfinish(session, exitstatus):
    # Under meson, a run that could only skip says so (exit 77) instead of passing.
    code = os.environ.get("ROAM_ALL_SKIPPED_EXIT")
    if code and exitstatus == 0 and _counts["skipped"] and not _counts["passed"] and not _counts["failed"]:
        session.exitstatus = int(code)
