# SPDX-License-Identifier: LGPL-2.1-or-later
"""The world's wpa_supplicant for wifi0 (world.sh wifi NAME on): the control-socket double of
tests/wpa/fakewpa.py (wpa_supplicant 2.10's replies and events, checked against the real
daemon's transcripts) as a station without P2P, associated with the network wifi0 is in, so
roamd reads the network's SSID and BSSID as it would on a laptop.

Usage: wifi_station.py CTRL_DIR IFNAME FIFO READY BSSID SSID
Binds CTRL_DIR/IFNAME, associates with BSSID/SSID, creates READY, then takes lines from FIFO
(world.sh move and carrier write them): "associate BSSID SSID" (the SSID is the rest of the
line) and "disassociate". Ends on SIGTERM, removing its socket."""
import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "wpa"))
from fakewpa import FakeWpa  # noqa: E402

FREQ, RSSI, LINKSPEED = 2437, -52, 144


class Station(FakeWpa):
    def handle(self, cmd, addr):
        # Nobody waits for requests here: keep none (a demo may run for hours).
        with self.cond:
            self.requests.clear()
        return super().handle(cmd, addr)


def main():
    ctrl_dir, ifname, fifo, ready, bssid, ssid = sys.argv[1:7]
    st = Station(ctrl_dir, ifname=ifname, p2p=False, address="02:72:6d:00:00:10").start()
    signal.signal(signal.SIGTERM, lambda *_: (st.close(), os._exit(0)))
    st.associate(ssid, bssid, FREQ, RSSI, LINKSPEED)
    # O_RDWR: the FIFO never reads as ended while no writer has it open.
    fd = os.open(fifo, os.O_RDWR)
    with open(ready, "w") as f:
        f.write("%d\n" % os.getpid())
    with os.fdopen(fd, "r") as commands:
        for line in commands:
            words = line.rstrip("\n").split(" ", 2)
            if words[0] == "associate" and len(words) == 3:
                if st.station:
                    st.disassociate()
                st.associate(words[2], words[1], FREQ, RSSI, LINKSPEED)
            elif words[0] == "disassociate":
                if st.station:
                    st.disassociate()
            else:
                print("wifi_station: unknown command %r" % line, file=sys.stderr, flush=True)
            print("wifi_station: %s" % line.strip(), flush=True)


if __name__ == "__main__":
    main()
