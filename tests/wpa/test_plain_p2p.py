"""roam --plain (for screen readers) announces WiFi Direct devices and requests, one line
each, and answers them by command."""
import os
import select
import subprocess
import time

import pytest

from test_p2p import PHONE, PRINTER, TV, close_env, make_env

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))


class Plain:
    def __init__(self, env):
        self.proc = subprocess.Popen([ROAM, "--plain"], env=dict(env, TZ="UTC"),
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.buf = b""
        self.lines = []

    def say(self, text):
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def expect(self, text, timeout=10):
        """The next line (after those already taken) that contains text."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                line = line.decode()
                self.lines.append(line)
                if text in line:
                    return line
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no line with {text!r}; got {self.lines}")
            r, _, _ = select.select([self.proc.stdout], [], [], left)
            if r:
                data = os.read(self.proc.stdout.fileno(), 4096)
                if not data:
                    raise AssertionError(f"roam --plain exited; got {self.lines}")
                self.buf += data

    def close(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def p2p():
    p = make_env("plain-p2p")
    try:
        yield p
    finally:
        close_env(p)


def test_plain_announces_and_answers(p2p):
    p2p.found(TV)
    plain = Plain(p2p.env.env)
    try:
        plain.expect("WiFi Direct: 1 device known (say peers).")
        plain.say("peers")
        assert plain.expect("Living Room TV (TV)") == \
            "Living Room TV (TV): available; connect by button, its PIN, our PIN"
        p2p.fake.prov_disc_pbc_req(PHONE)
        assert plain.expect("found Ana's phone").endswith(
            "WiFi Direct: found Ana's phone (phone).")
        assert plain.expect("asks to connect").endswith(
            "Ana's phone asks to connect. Say: accept Ana's phone, or reject Ana's phone.")
        plain.say("accept ana's phone")
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PHONE.addr} pbc auth"
        plain.expect("roamd will accept Ana's phone.")
        plain.expect("Connecting to Ana's phone: press its WiFi Direct (WPS) button")
        p2p.fake.group_started(PHONE.addr, "GO")
        plain.expect("Connected to Ana's phone (p2p-wlan0-0).")
        plain.say("connect Living Room TV pin 12345670")
        assert p2p.fake.wait_request("P2P_CONNECT") == \
            f"P2P_CONNECT {TV.addr} 12345670 keypad"
        # as with the real daemon, the failure comes after roamd took the connect's OK
        plain.expect("Connecting to Living Room TV.")
        p2p.fake.go_neg_failure(11)
        plain.expect("Not connected to Living Room TV: the device said no, or no one accepted "
                     "on it in time.")
        # The TV goes out of reach while connecting: why, then gone.
        plain.say("connect Living Room TV")
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} pbc"
        plain.expect("Connecting to Living Room TV: press its WiFi Direct (WPS) button")
        p2p.fake.lose_peer(TV.addr)
        plain.expect("Could not connect to Living Room TV: the device went out of reach.")
        plain.expect("WiFi Direct: Living Room TV is gone.")
        plain.say("reject The Fridge")
        plain.expect("No WiFi Direct device 'The Fridge' (say peers).")
    finally:
        plain.close()


def test_plain_says_the_pin_to_type(p2p):
    """A PIN roam shows is not a property: plain mode asks roamd for it (GetPIN, without
    waiting) and says it once it came, the one roamd holds."""
    p2p.found(PRINTER)
    plain = Plain(p2p.env.env)
    try:
        plain.expect("WiFi Direct: 1 device known (say peers).")
        plain.say("connect Office printer show-pin")
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} pin"
        line = plain.expect("Type this PIN on Office printer: ")
        pin = line.split("Office printer: ")[1].rstrip(".").replace(" ", "")
        assert len(pin) == 8 and p2p.peer_call(PRINTER, "GetPIN") == pin
    finally:
        plain.close()
