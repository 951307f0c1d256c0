"""A raw client of wpa_supplicant's control socket for the tests: the same datagram protocol
roamd speaks (wpa_supplicant/ctrl_iface_unix.c), with no interpretation (wpa_cli rewrites and
answers some commands itself, so it cannot be used to record what the daemon says)."""
import os
import socket
import tempfile


class WpaCtl:
    def __init__(self, server, timeout=10.0):
        self.dir = tempfile.mkdtemp(prefix="wpactl-")
        self.local = os.path.join(self.dir, "c")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.local)
        self.sock.connect(server)
        self.sock.settimeout(timeout)
        self.events = []

    def recv(self):
        return self.sock.recv(65536)

    def request(self, cmd):
        """Sends cmd and returns the reply bytes; events that come first are kept."""
        self.sock.send(cmd.encode() if isinstance(cmd, str) else cmd)
        while True:
            data = self.recv()
            if data.startswith(b"<") or data.startswith(b"IFNAME="):
                self.events.append(data)
                continue
            return data

    def wait_event(self, prefix):
        """The first event whose text (after <N>) starts with prefix."""
        for i, e in enumerate(self.events):
            if e.split(b">", 1)[-1].startswith(prefix):
                return self.events.pop(i)
        while True:
            data = self.recv()
            if data.split(b">", 1)[-1].startswith(prefix):
                return data
            self.events.append(data)

    def close(self):
        self.sock.close()
        try:
            os.unlink(self.local)
            os.rmdir(self.dir)
        except OSError:
            pass
