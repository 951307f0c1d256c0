#!/usr/bin/python3
"""Records what the real wpa_supplicant answers on its control sockets (per-interface and
global) for every command roamd or the P2P fake uses, on the wired driver in a namespace of
its own. Writes tests/wpa/transcripts/*.json; test_fake_vs_real.py checks the fake against
them. Run as root: tests/wpa/record_transcripts.py"""
import json
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from realwpa import RealWpa  # noqa: E402
from wpactl import WpaCtl  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PEER = "02:00:00:00:00:01"

# Per-interface socket: commands in the order roamd sends them, then the P2P ones (all of which
# fail without a P2P-capable driver) and bad input.
IFACE_COMMANDS = [
    "PING", "ATTACH", "DISCONNECT", "STATUS", "P2P_FIND 30", "P2P_STOP_FIND", "P2P_PEER FIRST",
    f"P2P_PEER NEXT-{PEER}", f"P2P_PEER {PEER}", f"P2P_CONNECT {PEER} pbc",
    f"P2P_CONNECT {PEER} pin", f"P2P_CONNECT {PEER} 12345670 keypad",
    f"P2P_CONNECT {PEER} 12345670 display auth", f"P2P_REJECT {PEER}", "P2P_CANCEL",
    "P2P_GROUP_REMOVE p2p-wtest0-0", "SET device_name roam-test", "NO_SUCH_COMMAND",
    "", "DETACH", "DETACH",
]
# Networks, as roamd adds an NFC tag's credential, on a daemon with update_config=1 and no
# network yet; then what the tests read back, bad input and SIGNAL_POLL (the wired driver has
# no signal: FAIL).
NETWORK_COMMANDS = [
    "LIST_NETWORKS", "ADD_NETWORK", "SET_NETWORK 0 ssid 726f616d2d746573742d6e6574",
    "SET_NETWORK 0 key_mgmt WPA-PSK", "SET_NETWORK 0 proto RSN",
    'SET_NETWORK 0 psk "correct horse battery"', "LIST_NETWORKS", "ENABLE_NETWORK 0",
    "SAVE_CONFIG", "GET_NETWORK 0 ssid", "GET_NETWORK 0 psk", "GET_NETWORK 0 key_mgmt",
    'SET_NETWORK 0 psk "short"', "SET_NETWORK 0 ssid 7", "SET_NETWORK 7 ssid 41",
    "ENABLE_NETWORK 7", "GET_NETWORK 7 ssid", "ADD_NETWORK", "REMOVE_NETWORK 1",
    "REMOVE_NETWORK 1", "SIGNAL_POLL",
]
GLOBAL_COMMANDS = ["PING", "INTERFACES", "IFNAME={ifname} PING", "IFNAME={ifname} STATUS",
                   "IFNAME=nosuch0 PING", "NO_SUCH_COMMAND", "ATTACH", "DETACH"]


def run(cmd):
    subprocess.run(cmd, shell=True, check=True)


def main():
    ns = f"roam-wpa-rec-{os.getpid()}"
    tmp = tempfile.mkdtemp(prefix="wparec-")
    ctrl = os.path.join(tmp, "ctrl")
    run(f"ip netns add {ns}")
    w = None
    try:
        run(f"ip -n {ns} link add wtest0 type veth peer name wtest1")
        run(f"ip -n {ns} link set wtest0 address 02:00:00:00:aa:01 up")
        run(f"ip -n {ns} link set wtest1 up")
        w = RealWpa(ns, "wtest0", ctrl, global_path=os.path.join(tmp, "global")).start()
        version = subprocess.run(["wpa_supplicant", "-v"], capture_output=True,
                                 text=True).stdout.splitlines()[0]
        out = {"wpa_supplicant": version, "interface": [], "global": [], "events": []}
        c = WpaCtl(w.socket)
        for cmd in IFACE_COMMANDS:
            out["interface"].append([cmd, c.request(cmd).decode()])
        # Events after ATTACH: a disconnect and reconnect of the wired "network".
        c.request("ATTACH")
        c.request("DISCONNECT")  # the wired driver may have associated already
        c.request("RECONNECT")
        out["events"].append(c.wait_event(b"CTRL-EVENT-CONNECTED").decode())
        out["status_connected"] = c.request("STATUS").decode()
        # What a command's own events and its reply look like in order: the events it causes
        # come first (ctrl_iface_unix.c sends them from wpa_msg() while the command runs).
        time.sleep(1)  # the association's late events (SUBNET-STATUS-UPDATE) are out
        c.events = []
        c.sock.settimeout(0.5)
        try:
            while True:
                c.recv()
        except socket.timeout:
            pass
        c.sock.settimeout(10)
        c.sock.send(b"DISCONNECT")
        seq = []
        while not seq or seq[-1].startswith("<"):
            seq.append(c.recv().decode())
        out["disconnect_exchange"] = seq
        out["events"].append(next(d for d in seq if "CTRL-EVENT-DISCONNECTED" in d))
        c.close()
        g = WpaCtl(os.path.join(tmp, "global"))
        for cmd in GLOBAL_COMMANDS:
            cmd = cmd.format(ifname="wtest0")
            out["global"].append([cmd, g.request(cmd).decode()])
        g.close()
        w.close()
        w = RealWpa(ns, "wtest0", ctrl, ssid=None, update_config=True).start()
        c = WpaCtl(w.socket)
        out["networks"] = [[cmd, c.request(cmd).decode()] for cmd in NETWORK_COMMANDS]
        c.close()
        out["networks_saved"] = "psk=\"correct horse battery\"" in w.config()
        w.close()
        path = os.path.join(HERE, "transcripts", "wpa_supplicant-2.10-wired.json")
        with open(path, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        print("wrote", path)
    finally:
        if w:
            w.close()  # stops wpa_supplicant even when recording failed
        subprocess.run(f"ip netns del {ns}", shell=True)
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
