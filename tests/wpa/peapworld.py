"""A real 802.1X PEAP world (issue 43), shared by the tests that drive it over D-Bus, from the
CLI and from the TUI: Debian's hostapd with its own EAP server (driver=wired, ieee8021x=1) on
wlan0-peer, Debian's real wpa_supplicant (-Dwired, ap_scan=0) on wlan0, the two ends of a veth
pair in the test's own namespace (test_wifi_join.Env), roamd beside them; a CA and a server
certificate (CN and DNS name radius.roam.test) made for the test. hostapd knows one user:
alice, PASSWORD."""
import os
import shutil
import signal
import subprocess
import tempfile

from realwpa import wait_path
from test_wifi_join import Env

HOSTAPD = shutil.which("hostapd") or "/usr/sbin/hostapd"
SSID = "wired-8021x"
IDENTITY = "alice"
PASSWORD = "correct-horse-42"
DOMAIN = "radius.roam.test"

HOSTAPD_CONF = """interface=wlan0-peer
driver=wired
ctrl_interface={dir}/hostapd
logger_stdout=-1
logger_stdout_level=1
ieee8021x=1
eap_reauth_period=0
use_pae_group_addr=1
eap_server=1
eap_user_file={dir}/users
ca_cert={dir}/ca.pem
server_cert={dir}/server.pem
private_key={dir}/server.key
"""
# phase 1 for anyone, phase 2 for alice only (hostapd's eap_user_file format)
USERS = """* PEAP
"{identity}" MSCHAPV2 "{password}" [2]
"""


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
            "ca.pem", "-days", "2", "-subj", "/CN=roam test CA", cwd=d)
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out",
            "server.csr", "-subj", "/CN=" + DOMAIN, cwd=d)
    with open(os.path.join(d, "ext"), "w") as f:
        f.write("subjectAltName=DNS:%s\nextendedKeyUsage=serverAuth\n" % DOMAIN)
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext", cwd=d)


class PeapEnv(Env):
    """test_wifi_join.Env (roamd, the real wpa_supplicant on wlan0, no network saved) and
    hostapd's EAP server on wlan0-peer; .dir holds ca.pem."""

    def __init__(self):
        super().__init__(office=False)
        self.hostapd = None
        self.dir = tempfile.mkdtemp(prefix="hostapd-")
        try:
            make_certs(self.dir)
            with open(os.path.join(self.dir, "users"), "w") as f:
                f.write(USERS.format(identity=IDENTITY, password=PASSWORD))
            conf = os.path.join(self.dir, "hostapd.conf")
            with open(conf, "w") as f:
                f.write(HOSTAPD_CONF.format(dir=self.dir))
            self.hostapd_log = open(os.path.join(self.dir, "log"), "w")
            self.hostapd = subprocess.Popen(["ip", "netns", "exec", self.env.name, HOSTAPD,
                                             conf], stdout=self.hostapd_log,
                                            stderr=subprocess.STDOUT)
            wait_path(os.path.join(self.dir, "hostapd", "wlan0-peer"))
            # hostapd drops a station a moment after its EAP failure and ignores its EAPOL
            # until then: a join right after a refused one (a test types fast) would have its
            # EAPOL-Start lost and wait wpa_supplicant's startPeriod (30 s) for the next
            for key, value in (("startPeriod", "1"), ("maxStart", "10")):
                assert self.ctl(f"SET EAPOL::{key} {value}") == "OK\n"
        except Exception:
            self.close()
            raise

    @property
    def ca(self):
        return os.path.join(self.dir, "ca.pem")

    def close(self):
        try:
            if self.hostapd and self.hostapd.poll() is None:
                self.hostapd.send_signal(signal.SIGTERM)
                self.hostapd.wait(10)
            super().close()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
