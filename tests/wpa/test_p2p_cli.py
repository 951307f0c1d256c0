"""`roam p2p ...` against roamd and the P2P fake: what a person types and reads."""
import json
import os
import subprocess
import tempfile

import pytest

from test_p2p import PHONE, PRINTER, TV, close_env, make_env, peer_path

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROAM = os.environ.get("ROAM", os.path.join(TOP, "build/tui/roam"))


@pytest.fixture
def p2p():
    p = make_env("p2p-cli")
    try:
        yield p
    finally:
        close_env(p)


def roam(p2p, *args, user=None):
    argv = [ROAM, "p2p", *args]
    if user:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    return subprocess.run(argv, env=p2p.env.env, capture_output=True, text=True, timeout=30)


def spawn(p2p, *args):
    return subprocess.Popen([ROAM, "p2p", *args], env=p2p.env.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_peers_table_and_json(p2p):
    r = roam(p2p, "peers")
    assert r.returncode == 0 and "No WiFi Direct devices found yet" in r.stdout
    p2p.found(TV)
    p2p.found(PHONE)
    r = roam(p2p, "peers")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "STATE", "ADDRESS", "CONNECT", "BY"]
    assert lines[1].split("  ")[0] == "Living Room TV"
    assert "TV" in lines[1] and "available" in lines[1] and TV.addr in lines[1]
    assert lines[1].endswith("button, its PIN, our PIN")
    assert "Ana's phone" in lines[2] and "phone" in lines[2] and lines[2].endswith("button")
    doc = json.loads(roam(p2p, "peers", "--json").stdout)
    assert doc["state"] == "idle"
    assert [p["name"] for p in doc["peers"]] == ["Living Room TV", "Ana's phone"]
    assert doc["peers"][0]["methods"] == ["push-button", "keypad", "display"]


def test_find_names_peers_as_they_appear(p2p):
    proc = spawn(p2p, "find", "5")
    try:
        assert p2p.fake.wait_request("P2P_FIND") == "P2P_FIND 5"
        assert proc.stdout.readline() == "Searching for WiFi Direct devices for 5s...\n"
        p2p.fake.add_peer(TV)
        assert proc.stdout.readline() == f"Found Living Room TV (TV, {TV.addr})\n"
        p2p.fake.event("P2P-FIND-STOPPED ")
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert out == "Search ended: 1 device.\n"
    finally:
        proc.kill()
        proc.wait()


def test_connect_push_button_then_disconnect(p2p):
    p2p.found(TV)
    proc = spawn(p2p, "connect", "living room tv")
    try:
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} pbc"
        assert "press its WiFi Direct (WPS) button" in proc.stdout.readline()
        p2p.fake.group_started(TV.addr, "client")
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert out == "Connected to Living Room TV (interface p2p-wlan0-0).\n"
    finally:
        proc.kill()
        proc.wait()
    r = roam(p2p, "disconnect", TV.addr)
    assert r.returncode == 0 and r.stdout == "Disconnecting from Living Room TV.\n"
    assert p2p.fake.wait_request("P2P_GROUP_REMOVE") == "P2P_GROUP_REMOVE p2p-wlan0-0"


def test_connect_show_pin_and_failure(p2p):
    p2p.found(PRINTER)
    proc = spawn(p2p, "connect", "Office printer", "show-pin")
    try:
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PRINTER.addr} pin"
        line = proc.stdout.readline()
        assert line.startswith("Type this PIN on Office printer: ")
        pin = line.split(": ")[1].strip().replace(" ", "")
        assert p2p.peer_call(PRINTER, "GetPIN") == pin
        p2p.fake.go_neg_failure(11)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 1
        assert ("could not connect to Office printer: the device said no, or no one accepted "
                "on it in time") in err
    finally:
        proc.kill()
        proc.wait()


def test_connect_peer_lost_midway(p2p):
    p2p.found(TV)
    proc = spawn(p2p, "connect", "Living Room TV")
    try:
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} pbc"
        assert "press its WiFi Direct (WPS) button" in proc.stdout.readline()
        p2p.fake.lose_peer(TV.addr)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 1
        assert "could not connect to Living Room TV: the device went out of reach" in err
    finally:
        proc.kill()
        proc.wait()


def test_requests_and_refusals(p2p):
    p2p.fake.prov_disc_enter_pin(PHONE)
    p2p.wait_state(PHONE, "request")
    r = roam(p2p, "peers")
    assert "asks to connect" in r.stdout
    r = roam(p2p, "accept", "Ana's phone")
    assert r.returncode == 1 and "shows a PIN" in r.stderr and "standard input" in r.stderr
    r = roam(p2p, "reject", "Ana's phone", user=True)
    assert r.returncode == 1 and "not allowed to reject" in r.stderr
    r = roam(p2p, "reject", "Ana's phone")
    assert r.returncode == 0 and r.stdout == "Rejected Ana's phone.\n"
    assert p2p.fake.wait_request("P2P_REJECT") == f"P2P_REJECT {PHONE.addr}"
    r = roam(p2p, "connect", "The Fridge")
    assert r.returncode == 1 and 'no WiFi Direct device "The Fridge"' in r.stderr
    r = roam(p2p, "connect", "Ana's phone", "telepathy")
    assert r.returncode == 2 and "unknown way to connect" in r.stderr  # a bad command line
    r = roam(p2p, "frobnicate")
    assert r.returncode == 2 and "unknown command 'p2p frobnicate'" in r.stderr
    r = roam(p2p, "find", "0")
    assert r.returncode == 2 and "seconds from 1 to 3600" in r.stderr
    assert peer_path(PHONE)


def test_json_answers_say_the_outcome(p2p):
    """--json after an action prints the device as it is once roamd answered: accepted and
    connected, rejected (available, reason rejected)."""
    p2p.fake.prov_disc_pbc_req(PHONE)
    p2p.wait_state(PHONE, "request")
    proc = spawn(p2p, "accept", "Ana's phone", "--json")
    try:
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {PHONE.addr} pbc auth"
        p2p.wait_state(PHONE, "connecting")
        p2p.fake.group_started(PHONE.addr, "GO")
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
    finally:
        proc.kill()
        proc.wait()
    doc = json.loads(out)
    assert (doc["name"], doc["state"], doc["group"]) == ("Ana's phone", "connected",
                                                        "p2p-wlan0-0")
    p2p.fake.prov_disc_enter_pin(PRINTER)
    p2p.wait_state(PRINTER, "request")
    r = roam(p2p, "reject", "Office printer", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["name"], doc["state"], doc["reason"]) == ("Office printer", "available",
                                                          "rejected")


def test_pins_come_on_stdin_not_argv(p2p):
    """`roam p2p connect NAME pin` and `roam p2p accept NAME` read the PIN the device shows
    on standard input, or from --pin-file FILE: argv is readable by every local user, and a
    PIN there is refused before anything is asked of roamd."""
    p2p.found(TV)
    proc = subprocess.Popen([ROAM, "p2p", "connect", "Living Room TV", "pin"], env=p2p.env.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("12345670\n")
        proc.stdin.close()
        assert p2p.fake.wait_request("P2P_CONNECT") == f"P2P_CONNECT {TV.addr} 12345670 keypad"
    finally:
        proc.kill()
        proc.wait()
    p2p.fake.prov_disc_enter_pin(PHONE)
    p2p.wait_state(PHONE, "request")
    proc = subprocess.Popen([ROAM, "p2p", "accept", "Ana's phone"], env=p2p.env.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.stdin.write("12345670\n")
        proc.stdin.close()
        assert p2p.fake.wait_request("P2P_CONNECT") == \
            f"P2P_CONNECT {PHONE.addr} 12345670 keypad auth"
    finally:
        proc.kill()
        err = proc.stderr.read()
        proc.wait()
    assert "visible to every local user" not in err
    # a PIN in argv: refused, nothing sent
    r = subprocess.run([ROAM, "p2p", "connect", "Living Room TV", "pin", "12345670"],
                       env=p2p.env.env, stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "visible to every local user" in r.stderr, r


def test_pin_file(p2p):
    """`roam p2p connect NAME pin --pin-file FILE`: the PIN is the file's first line."""
    p2p.found(TV)
    with tempfile.NamedTemporaryFile("w", suffix=".pin") as f:
        f.write("87654325\n")
        f.flush()
        proc = subprocess.Popen([ROAM, "p2p", "connect", "Living Room TV", "pin", "--pin-file",
                                 f.name], env=p2p.env.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert p2p.fake.wait_request("P2P_CONNECT") == \
                f"P2P_CONNECT {TV.addr} 87654325 keypad"
        except AssertionError:
            proc.kill()
            raise AssertionError(proc.communicate()[1])
        finally:
            proc.kill()
            proc.wait()
