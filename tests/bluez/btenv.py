"""roamd with a BlueZ on its bus: a network namespace, a private system bus, python3-dbusmock's
bluez5 template extended by bluez_agent.py (the peer), roamd inside the namespace. Waits are
driven by D-Bus signals (PropertiesChanged, InterfacesAdded/Removed, NameOwnerChanged, method
replies), each with a deadline; nothing sleeps."""
import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
from roambus import bus_config, unit_environment  # noqa: E402  (the one test bus policy, BlueZ's part included)
HERE = os.path.dirname(os.path.abspath(__file__))
ROAMD = os.environ.get("ROAMD", os.path.join(TOP, "build/service/roamd"))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))
BT = "org.roam1.Bluetooth"
BT_PATH = "/org/roam1/bluetooth"
MOCK = "org.bluez.Mock"
HEADSET = "00:1B:66:AA:01:02"
PHONE = "5C:F3:70:11:22:33"

dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)


class BtEnv:
    def __init__(self, name, config="", question_timeout="15s"):
        # Long enough for a loaded machine to show a question and type its answer; the test of
        # the timeout itself asks for a short one.
        self.question_timeout = question_timeout
        self.name = f"roam-bt-{name}-{os.getpid()}"
        self.dir = tempfile.mkdtemp(prefix="roam-bt-")
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "bus")
        self.address = f"unix:path={self.sock}"
        self.env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=self.address)
        self.procs = []
        self.roamd = None
        self.bus = None
        self.changed = False
        try:
            self.sh(f"ip netns add {self.name}")
            self.sh(f"ip netns add {self.name}-nap")
            self.netns("ip link set lo up")
            conf = bus_config(self.dir, self.address)
            self.daemon = subprocess.Popen(["dbus-daemon", "--nofork", "--print-address",
                                            "--config-file", conf],
                                           stdout=subprocess.PIPE, text=True)
            self.daemon.stdout.readline()  # printed once the socket listens
            self.bus = dbus.bus.BusConnection(self.address)
            for sig in ("PropertiesChanged", "InterfacesAdded", "InterfacesRemoved",
                        "NameOwnerChanged", "AgentRegistered"):
                self.bus.add_signal_receiver(self._on_signal, signal_name=sig)
            self.start_mock()
            self.start_roamd(config)
        except Exception:
            self.close()
            raise

    # plumbing
    def sh(self, cmd, check=True):
        return subprocess.run(cmd, shell=True, check=check, capture_output=True, text=True)

    def netns(self, cmd, check=True):
        return self.sh(f"ip netns exec {self.name} {cmd}", check=check)

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def _on_signal(self, *args, **kwargs):
        self.changed = True

    def wait(self, pred, timeout=10.0, what="condition"):
        """Evaluates pred now and after every signal or reply until it is true."""
        deadline = time.monotonic() + timeout
        ctx = GLib.MainContext.default()
        last = None
        while True:
            while ctx.pending():
                ctx.iteration(False)
            last = pred()
            if last:
                return last
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out after {timeout}s waiting for {what} "
                                     f"(last: {last!r})\n{self.log()[-3000:]}")
            self.changed = False
            fired = [False]

            def on_timer():
                fired[0] = True
                return False
            timer = GLib.timeout_add(int(remaining * 1000) + 1, on_timer)
            while not self.changed and not fired[0]:
                ctx.iteration(True)
            if not fired[0]:
                GLib.source_remove(timer)

    def has_name(self, name):
        return bool(self.bus.name_has_owner(name))

    # the peer
    def start_mock(self):
        params = json.dumps({"netns": self.name, "napns": self.name + "-nap",
                             "ifname": "bnep0"})
        self.mock_log = open(os.path.join(self.dir, "mock.log"), "w")
        p = subprocess.Popen(["/usr/bin/python3", "-m", "dbusmock", "--system", "--template",
                              os.path.join(HERE, "bluez_agent.py"), "-p", params],
                             env=self.env, stdout=self.mock_log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        self.mock = p
        self.wait(lambda: self.has_name("org.bluez") or p.poll() is not None, what="the mock")
        assert p.poll() is None, open(os.path.join(self.dir, "mock.log")).read()

    def start_neard(self):
        p = subprocess.Popen(["/usr/bin/python3", os.path.join(HERE, "fake_neard.py")],
                             env=self.env, stdout=subprocess.PIPE, text=True)
        self.procs.append(p)
        assert p.stdout.readline().strip() == "ready"
        return self.bus.get_object("org.neard", "/org/neard")

    def mock_call(self, method, *args, path="/", iface=MOCK):
        return self.bus.get_object("org.bluez", path).get_dbus_method(method, iface)(*args)

    # roamd
    def start_roamd(self, extra_config=""):
        conf = self.write("roamd.conf", "[Apps]\nEnforce=no\n[Bluetooth]\n"
                          f"QuestionTimeout={self.question_timeout}\n"
                          "NfcDiscoveryTimeout=2s\n" + extra_config)
        log = open(os.path.join(self.dir, "roamd.log"), "a")
        self.roamd = subprocess.Popen(["ip", "netns", "exec", self.name, ROAMD, "--config", conf],
                                      env=dict(self.env, **unit_environment()), stdout=log,
                                      stderr=subprocess.STDOUT)
        self.procs.append(self.roamd)
        self.wait(lambda: self.has_name("org.roam1") or self.roamd.poll() is not None,
                  what="roamd on the bus")
        assert self.roamd.poll() is None, self.log()

    def stop_roamd(self):
        rc = None
        if self.roamd and self.roamd.poll() is None:
            self.roamd.send_signal(signal.SIGTERM)
            rc = self.roamd.wait(10)
        return rc

    def log(self):
        try:
            with open(os.path.join(self.dir, "roamd.log")) as f:
                return f.read()
        except OSError:
            return ""

    def bt(self):
        return dbus.Interface(self.bus.get_object("org.roam1", BT_PATH), BT)

    def prop(self, name):
        obj = self.bus.get_object("org.roam1", BT_PATH)
        return obj.Get(BT, name, dbus_interface="org.freedesktop.DBus.Properties")

    def device(self, address):
        for d in self.prop("Devices"):
            if str(d[0]) == address:
                return {"address": str(d[0]), "adapter": str(d[1]), "name": str(d[2]),
                        "kind": str(d[3]), "rssi": int(d[4]), "paired": bool(d[5]),
                        "trusted": bool(d[6]), "connected": bool(d[7]), "battery": int(d[8]),
                        "network": str(d[9]), "interface": str(d[10])}
        return None

    def question(self):
        """The Question property; a passkey or PIN is not in it (every local user reads
        properties): "value" is what GetQuestionValue gives root, "shown" the property's."""
        q = self.prop("Question")
        res = {"id": int(q[0]), "kind": str(q[1]), "address": str(q[2]), "name": str(q[3]),
               "value": str(q[4]), "shown": str(q[4])}
        if res["kind"] in ("confirm", "show-pin", "show-passkey"):
            try:
                res["value"] = str(self.bt().GetQuestionValue(dbus.UInt32(res["id"])))
            except dbus.DBusException:
                pass  # closed meanwhile
        return res

    def call_async(self, method, *args):
        """Starts a roamd call; the returned dict fills in with 'ok' or 'error'."""
        result = {}

        def ok(*a):
            result["ok"] = a
            self.changed = True

        def err(e):
            result["error"] = e
            self.changed = True
        self.bt().get_dbus_method(method)(*args, reply_handler=ok, error_handler=err,
                                          timeout=60)
        return result

    def roam(self, *args, input=None):
        return subprocess.run([ROAM, *args], env=self.env, input=input, capture_output=True,
                              text=True, timeout=30)

    def add_headset(self):
        """hci0 with the headset, once roamd knows it and its agent is registered."""
        self.mock_call("AddAdapter", "hci0", "roam-laptop")
        self.dev = self.mock_call("AddDevice", "hci0", HEADSET, "Roam Headset")
        self.wait(lambda: self.device(HEADSET) and self.prop("AgentRegistered"),
                  what="the device and the agent")

    @contextlib.contextmanager
    def plain(self):
        """roam --plain on this bus: yields (proc, out), out the list of what it has printed
        so far (filled while wait() runs). The output's watch goes when the block ends: a
        watch left on the pipe fires for whatever file takes its fd number next (a later
        test's terminal) and reads that file's bytes away."""
        proc = subprocess.Popen([ROAM, "--plain"], env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out = []

        def on_output(fd, condition):
            data = os.read(fd, 65536)
            out.append(data.decode(errors="replace"))
            self.changed = True
            return bool(data)
        watch = GLib.io_add_watch(proc.stdout.fileno(), GLib.PRIORITY_DEFAULT,
                                  GLib.IO_IN | GLib.IO_HUP, on_output)
        try:
            yield proc, out
        finally:
            source = GLib.MainContext.default().find_source_by_id(watch)
            if source is not None and not source.is_destroyed():
                source.destroy()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
            proc.stdin.close()

    def close(self):
        self.stop_roamd()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
        if getattr(self, "daemon", None):
            self.daemon.terminate()
            self.daemon.wait(5)
        self.sh(f"ip netns del {self.name}", check=False)
        self.sh(f"ip netns del {self.name}-nap", check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
