"""Fixtures for testing the `roam` client against fake_roamd.py on a private system bus.

The binary is $ROAM, or build/tui/roam of this tree."""
import json
import os
import subprocess

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
FAKE_ROAMD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake_roamd.py")
PYTHON = "/usr/bin/python3"  # Debian's, which has python3-dbus and python3-gi

# A system bus with the project's own policy for org.roam1 (data/org.roam1.conf).
BUS_CONF = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={sock}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"""


class Bus:
    """A private dbus-daemon; address is ready to use as soon as the object exists."""

    def __init__(self, directory):
        self.sock = os.path.join(directory, "system_bus_socket")
        conf = os.path.join(directory, "bus.conf")
        with open(conf, "w") as f:
            f.write(BUS_CONF.format(sock=self.sock,
                                    policy=os.path.join(TOP, "data/org.roam1.conf")))
        # --print-address is written once the socket listens: no polling for it.
        self.proc = subprocess.Popen(["dbus-daemon", "--nofork", "--print-address=1",
                                      "--config-file", conf],
                                     stdout=subprocess.PIPE, text=True)
        self.address = self.proc.stdout.readline().strip()
        if not self.address:
            self.proc.wait(timeout=5)
            raise RuntimeError(f"dbus-daemon failed (exit {self.proc.returncode})")
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)

    def close(self):
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


class FakeRoamd:
    """fake_roamd.py serving one scenario; the name is owned when the object exists."""

    def __init__(self, bus, directory, scenario):
        path = os.path.join(directory, "scenario.json")
        with open(path, "w") as f:
            json.dump(scenario, f)
        self.proc = subprocess.Popen([PYTHON, FAKE_ROAMD, path], env=bus.env,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if line != "READY":
            self.proc.wait(timeout=5)
            raise RuntimeError(f"fake_roamd failed (exit {self.proc.returncode})")

    def close(self):
        self.proc.terminate()
        rc = self.proc.wait(timeout=10)
        self.proc.stdout.close()
        assert rc == 0, f"fake_roamd exited with {rc}"


class Result:
    def __init__(self, proc):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr


def run_roam(env, *args):
    proc = subprocess.run([ROAM, *args], env=env, capture_output=True, text=True, timeout=30)
    return Result(proc)


@pytest.fixture(scope="session", autouse=True)
def roam_binary():
    if not os.access(ROAM, os.X_OK):
        pytest.exit(f"{ROAM} is not built (meson setup build && ninja -C build, or set ROAM)",
                    returncode=1)
    if not os.access(PYTHON, os.X_OK):
        pytest.exit(f"{PYTHON} is missing", returncode=1)


@pytest.fixture
def bus(tmp_path):
    b = Bus(str(tmp_path))
    yield b
    b.close()


@pytest.fixture
def roamd(bus, tmp_path):
    """A factory: roamd(scenario) starts fake_roamd with it; stopped after the test."""
    fakes = []

    def start(scenario):
        fake = FakeRoamd(bus, str(tmp_path), scenario)
        fakes.append(fake)
        return fake

    yield start
    for fake in fakes:
        fake.close()


@pytest.fixture
def roam(bus):
    """roam(*args) runs the client against the private bus."""
    return lambda *args: run_roam(bus.env, *args)

