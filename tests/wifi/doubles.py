# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Wi-Fi owners' doubles on a test bus: NetworkManager (tests/dbusmock/
networkmanager_wifi.py) and iwd (tests/dbusmock/iwd.py) run by python3-dbusmock, and test
agents (secret_agent.py) as processes of their own, optionally as another user."""
import json
import os
import select
import subprocess
import time

from roambus import WAIT, RoamBus, wait_until  # noqa: F401 - WAIT for the tests

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(os.path.dirname(HERE), "dbusmock")
NM = "org.freedesktop.NetworkManager"
NM_PATH = "/org/freedesktop/NetworkManager"
IWD = "net.connman.iwd"
MOCK = "org.freedesktop.DBus.Mock"
PROPS = "org.freedesktop.DBus.Properties"


def start_double(address, template, bus_name, parameters=None, log=None):
    """python3-dbusmock with a template on the bus at address; returns (process, RoamBus on
    its name) once it owns the name (woken by NameOwnerChanged, or the process ending)."""
    env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    argv = ["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
            os.path.join(TEMPLATES, template)]
    if parameters:
        argv += ["--parameters", json.dumps(parameters)]
    proc = subprocess.Popen(argv, env=env, stdout=log or subprocess.DEVNULL,
                            stderr=subprocess.STDOUT if log else subprocess.DEVNULL)
    rb = RoamBus(address, name=bus_name)
    wait_until(lambda: rb.has_owner() or proc.poll() is not None, what=bus_name,
               procs=[proc])
    if proc.poll() is not None:
        rb.close()
        raise RuntimeError("the %s double did not start" % bus_name)
    return proc, rb


def stop_double(proc, rb):
    rb.close()
    if proc.poll() is None:
        proc.terminate()
        proc.wait(10)


class Agent:
    """A test agent process (secret_agent.py); lines() are its requests as dicts."""

    def __init__(self, kind, address, answers, uid=None):
        argv = ["/usr/bin/python3", os.path.join(HERE, "secret_agent.py"), kind, address,
                *answers]
        if uid is not None:
            argv = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                    "--"] + argv
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
        self.buf = b""
        line = self.readline()
        if line != "ready":
            raise RuntimeError("agent did not register: %r" % line)

    def readline(self, timeout=WAIT):
        """The agent's next line, or None when none comes within timeout (or it ended)."""
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            r, _, _ = select.select([fd], [], [], max(0, deadline - time.monotonic()))
            if not r:
                return None
            data = os.read(fd, 4096)
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode().strip()

    def request(self, timeout=WAIT):
        line = self.readline(timeout)
        return json.loads(line) if line else None

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.proc.stdout.close()


TOP = os.path.dirname(os.path.dirname(HERE))
DRIVE = os.environ.get("ROAM_WIFI_DRIVE", os.path.join(TOP, "build/tests/wifi/wifi-drive"))


class Drive(Agent):
    """One run of wifi-drive (tests/wifi/wifi-drive.c): roamd's backend for `owner` on the
    test bus; lines() are its events, write() answers its secret requests. Its log (stderr)
    is kept to check that no secret reaches it."""

    def __init__(self, address, owner, ifname, *args, stdin_first=None, env=None):
        self.log_path = os.path.join(os.environ.get("TMPDIR", "/tmp"),
                                     "wifi-drive-%d-%d.log" % (os.getpid(), id(self)))
        self.log = open(self.log_path, "w+")
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address, **(env or {}))
        self.proc = subprocess.Popen([DRIVE, owner, ifname, *args], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log)
        self.buf = b""
        if stdin_first is not None:
            self.write(stdin_first)
        first = self.readline()
        if not first or not first.startswith("bus "):
            raise RuntimeError("wifi-drive did not start: %r" % first)
        self.unique = first.split()[1]

    def write(self, text):
        self.proc.stdin.write((text + "\n").encode())
        self.proc.stdin.flush()

    def until(self, prefix, timeout=WAIT):
        """Lines up to and including the first that starts with prefix (AssertionError when
        the drive ends or falls silent first)."""
        seen = []
        while True:
            line = self.readline(timeout)
            if line is None:
                raise AssertionError("no %r from wifi-drive; saw %r; log:\n%s"
                                     % (prefix, seen, self.stderr()))
            seen.append(line)
            if line.startswith(prefix):
                return seen

    def rest(self):
        out = []
        while True:
            line = self.readline()
            if line is None:
                return out
            out.append(line)

    def wait(self):
        return self.proc.wait(WAIT)

    def stderr(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)
        self.proc.stdout.close()
        self.proc.stdin.close()
        self.log.close()
        os.unlink(self.log_path)
