"""A private system bus and fake_roamd.py on it: shared by tests/client and tests/tui."""
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
FAKE_ROAMD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_roamd.py")
PYTHON = "/usr/bin/python3"  # Debian's, which has python3-dbus and python3-gi

# The private system bus: one configuration for every test bus (tests/lib/test-bus.conf,
# with the project's own policy for org.roam1, data/org.roam1.conf).
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
from roambus import TestBus  # noqa: E402


class Bus(TestBus):
    """A private dbus-daemon; address is ready to use as soon as the object exists."""


class FakeRoamd:
    """fake_roamd.py serving one scenario; the name is owned when the object exists."""

    def __init__(self, bus, directory, scenario):
        path = os.path.join(directory, "scenario.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        self.proc = subprocess.Popen([PYTHON, FAKE_ROAMD, path], env=bus.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "READY":
            self.proc.wait(timeout=5)
            raise RuntimeError(f"fake_roamd failed (exit {self.proc.returncode})")

    def send(self, **cmd):
        """Sends one control command (see fake_roamd.py); returns the reply's payload. The
        signals it causes are on the bus when this returns."""
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline().strip()
        if not reply.startswith("OK"):
            raise RuntimeError(f"fake_roamd: {reply or 'no reply'} to {cmd}")
        payload = reply[2:].strip()
        return json.loads(payload) if payload else None

    def close(self):
        if self.proc.poll() is not None:
            return
        self.proc.terminate()
        rc = self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.proc.stdin.close()
        assert rc == 0, f"fake_roamd exited with {rc}"


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr


def run_roam(env, *args):
    proc = subprocess.run([ROAM, *args], env=env, capture_output=True, text=True, timeout=30)
    return Result(proc)
