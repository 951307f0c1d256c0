"""Debian's real wpa_supplicant (2.10) in a network namespace of the test's own, with the wired
driver on a veth pair that exists only there: never on a host interface."""
import os
import shutil
import signal
import subprocess
import tempfile
import time

WPA = shutil.which("wpa_supplicant") or "/usr/sbin/wpa_supplicant"

CONF = """ctrl_interface={ctrl}
ap_scan=0
"""
NETWORK = """network={{
\tkey_mgmt=NONE
\tssid="{ssid}"
}}
"""


def wait_path(path, present=True, timeout=10.0):
    deadline = time.monotonic() + timeout
    while os.path.exists(path) != present:
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} {'did not appear' if present else 'stayed'}")
        time.sleep(0.02)


class RealWpa:
    """wpa_supplicant -Dwired on veth IFNAME inside netns NS (which the caller created)."""

    def __init__(self, netns, ifname, ctrl_dir, global_path=None, ssid="wired",
                 update_config=False):
        self.netns, self.ifname, self.ctrl = netns, ifname, ctrl_dir
        self.global_path = global_path
        self.dir = tempfile.mkdtemp(prefix="realwpa-")
        self.conf = os.path.join(self.dir, "wpa.conf")
        with open(self.conf, "w") as f:
            f.write(CONF.format(ctrl=ctrl_dir))
            if update_config:
                f.write("update_config=1\n")
            if ssid:
                f.write(NETWORK.format(ssid=ssid))
        self.proc = None

    @property
    def socket(self):
        return os.path.join(self.ctrl, self.ifname)

    def start(self):
        argv = ["ip", "netns", "exec", self.netns, WPA, "-Dwired", "-i", self.ifname,
                "-c", self.conf, "-f", os.path.join(self.dir, "log")]
        if self.global_path:
            argv += ["-g", self.global_path]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_path(self.global_path or self.socket)
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(10)
        self.proc = None

    def config(self):
        """The configuration file as wpa_supplicant left it (SAVE_CONFIG rewrites it)."""
        with open(self.conf) as f:
            return f.read()

    def log(self):
        try:
            with open(os.path.join(self.dir, "log")) as f:
                return f.read()
        except OSError:
            return ""

    def close(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
