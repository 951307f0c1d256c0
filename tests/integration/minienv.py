"""A minimal environment for roamd tests that need no full world: one network namespace of
their own, a private system bus, roamd running inside. Everything is removed on close."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAMD = os.environ.get("ROAMD", os.path.join(TOP, "build/service/roamd"))

sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
from roambus import WAIT, RoamBus, TestBus, busjson, unit_environment, wait_until  # noqa: E402,F401


def wait_for(pred, timeout=WAIT, interval=None, what="condition"):
    """Waits until pred() is true, re-checking it whenever roamd sends a signal (see
    tests/lib/roambus.py), never less than WAIT seconds; `interval` is ignored (nothing polls).
    Raises AssertionError on timeout, as it always did."""
    try:
        return wait_until(pred, max(timeout, WAIT), what)
    except TimeoutError as e:
        raise AssertionError(str(e)) from None


class MiniEnv:
    def __init__(self, name):
        self.name = f"roam-it-{name}-{os.getpid()}"
        self.dir = tempfile.mkdtemp(prefix="roam-it-")
        os.chmod(self.dir, 0o755)  # unprivileged test callers must reach the bus socket
        self.procs = []
        self.roamd = None
        self.bus = self.rb = None
        try:
            self.sh(f"ip netns add {self.name}")
            self.netns("ip link set lo up")
            # tests/lib/test-bus.conf; the address works when TestBus returns
            self.bus = TestBus(self.dir, "bus")
            self.sock = self.bus.sock
            self.address = self.bus.address
            self.env = self.bus.env
            # one connection for the whole test: reads, and the signals that end waits
            self.rb = RoamBus(self.address)
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
            env=dict(self.env, **unit_environment()), stdout=log, stderr=subprocess.STDOUT)
        # woken by the name's owner changing, or roamd exiting
        wait_until(lambda: self.has_name("org.roam1") or self.roamd.poll() is not None,
                   what="roamd on the bus", procs=[self.roamd])
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
        """busctl on this bus: for tests about the command line only (reads and waits go
        through self.rb, one persistent connection)."""
        return subprocess.run(["busctl", f"--address={self.address}", *args],
                              check=check, capture_output=True, text=True)

    def has_name(self, name):
        return self.rb.has_owner(name)

    def prop(self, path, iface, name):
        """A property as `busctl --json` gives it (variants inside are {"type", "data"})."""
        return busjson(self.rb.get(path, iface, name))

    def props(self, path, iface):
        """All properties of an interface (one GetAll), each as prop() gives it."""
        return {str(k): busjson(v) for k, v in self.rb.get_all(path, iface).items()}

    def link_path(self, ifname):
        return self.rb.link_path(ifname)

    def link_prop(self, ifname, name):
        return self.prop(self.link_path(ifname), "org.roam1.Link", name)

    def link_props(self, ifname):
        return self.props(self.link_path(ifname), "org.roam1.Link")

    def close(self):
        self.stop_roamd()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        if getattr(self, "rb", None):
            self.rb.close()
        if getattr(self, "bus", None):
            self.bus.close()
        self.sh(f"ip netns del {self.name}", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
