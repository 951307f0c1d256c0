"""A private system bus and fake_roamd.py on it: shared by tests/client and tests/tui."""
import json
import os
import subprocess

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
