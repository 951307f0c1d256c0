"""A minimal environment for roamd tests that need no full world: one network namespace of
their own, a private system bus, roamd running inside. Everything is removed on close."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAMD = os.environ.get("ROAMD", os.path.join(TOP, "build/service/roamd"))

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
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
  </policy>
  <policy user="root">
    <allow own="org.freedesktop.resolve1"/>
    <allow own="org.freedesktop.NetworkManager"/>
    <allow send_destination="org.freedesktop.resolve1"/>
    <allow send_destination="org.freedesktop.NetworkManager"/>
  </policy>
  <include>{policy}</include>
</busconfig>
"""


def wait_for(pred, timeout=5.0, interval=0.02, what="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = pred()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


class MiniEnv:
    def __init__(self, name):
        self.name = f"roam-it-{name}-{os.getpid()}"
        self.dir = tempfile.mkdtemp(prefix="roam-it-")
        os.chmod(self.dir, 0o755)  # unprivileged test callers must reach the bus socket
        self.sock = os.path.join(self.dir, "bus")
        self.address = f"unix:path={self.sock}"
        self.procs = []
        self.roamd = None
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        try:
            self.sh(f"ip netns add {self.name}")
            self.netns("ip link set lo up")
            conf = os.path.join(self.dir, "bus.conf")
            with open(conf, "w") as f:
                f.write(BUS_CONF.format(sock=self.sock,
                                        policy=os.path.join(TOP, "data/org.roam1.conf")))
            self.bus = subprocess.Popen(["dbus-daemon", "--nofork", "--config-file", conf],
                                        stdout=subprocess.DEVNULL)
            wait_for(lambda: os.path.exists(self.sock), what="bus socket")
        except Exception:
            self.close()
            raise

    def sh(self, cmd, check=True):
        return subprocess.run(cmd, shell=True, check=check, capture_output=True, text=True)

    def netns(self, cmd, check=True):
        return self.sh(f"ip netns exec {self.name} {cmd}", check=check)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def start_roamd(self, config_text, extra=()):
        conf = self.write("roamd.conf", config_text)
        log = open(os.path.join(self.dir, "roamd.log"), "a")
        # `ip netns exec` mounts a fresh /sys (links of this namespace) without cgroup2: mount
        # it again so roamd governs apps here too (its table lives in this namespace only).
        self.roamd = subprocess.Popen(
            ["ip", "netns", "exec", self.name, "sh", "-c",
             'mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null; exec "$@"', "roamd",
             ROAMD, "--config", conf, *extra],
            env=self.env, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.has_name("org.roam1") or self.roamd.poll() is not None,
                 what="roamd on the bus")
        assert self.roamd.poll() is None, self.log()
        return self.roamd

    def stop_roamd(self):
        """Stops roamd with SIGTERM; returns its exit code (a sanitizer build fails it on
        leaks or errors)."""
        rc = None
        if self.roamd and self.roamd.poll() is None:
            self.roamd.send_signal(signal.SIGTERM)
            rc = self.roamd.wait(10)
        self.roamd = None
        return rc

    def log(self):
        try:
            with open(os.path.join(self.dir, "roamd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def spawn(self, argv):
        p = subprocess.Popen(argv, env=self.env, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        return p

    def busctl(self, *args, check=True):
        return subprocess.run(["busctl", f"--address={self.address}", *args],
                              check=check, capture_output=True, text=True)

    def has_name(self, name):
        r = self.busctl("status", name, check=False)
        return r.returncode == 0

    def prop(self, path, iface, name):
        r = self.busctl("--json=short", "get-property", "org.roam1", path, iface, name)
        return json.loads(r.stdout)["data"]

    def link_path(self, ifname):
        r = self.busctl("--json=short", "call", "org.roam1", "/org/roam1", "org.roam1.Manager",
                        "GetLinkByName", "s", ifname)
        return json.loads(r.stdout)["data"][0]

    def link_prop(self, ifname, name):
        return self.prop(self.link_path(ifname), "org.roam1.Link", name)

    def close(self):
        self.stop_roamd()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        if getattr(self, "bus", None):
            self.bus.terminate()
            self.bus.wait(5)
        self.sh(f"ip netns del {self.name}", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
