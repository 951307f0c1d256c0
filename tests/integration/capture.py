#!/usr/bin/python3
"""Packet capture for tests and benchmarks: run inside a namespace (`ip netns exec NS
capture.py IFACE`), prints "ready", then one line per TCP packet with payload, TCP SYN and UDP
datagram on IFACE: the kernel's receive or send stamp (CLOCK_REALTIME, SO_TIMESTAMPNS),
direction (in, out), the peer's address and port (the destination's of what goes out, the
source's of what comes in), and the first payload bytes in hex (`syn` for a SYN, `udp` for a
datagram). Runs until it is terminated."""
import socket
import struct
import sys

ETH_P_ALL = 3
SO_TIMESTAMPNS = 35
PACKET_OUTGOING = 4


def main():
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((sys.argv[1], 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    print("ready", flush=True)
    while True:
        data, anc, _, addr = s.recvmsg(65535, 256)
        stamp = next((struct.unpack("qq", d[:16]) for lvl, typ, d in anc
                      if lvl == socket.SOL_SOCKET and typ == SO_TIMESTAMPNS), None)
        if not stamp or len(data) < 14:
            continue
        eth, ip = struct.unpack("!H", data[12:14])[0], data[14:]
        if eth == 0x0800 and len(ip) >= 20 and ip[9] in (6, 17):
            proto, a, l4 = ip[9], (ip[12:16], ip[16:20]), ip[(ip[0] & 15) * 4:]
            family = socket.AF_INET
        elif eth == 0x86DD and len(ip) >= 40 and ip[6] in (6, 17):
            proto, a, l4, family = ip[6], (ip[8:24], ip[24:40]), ip[40:], socket.AF_INET6
        else:
            continue
        if len(l4) < (20 if proto == 6 else 8):
            continue
        if proto == 17:
            head = "udp"
        elif l4[13] & 2:
            head = "syn"
        else:
            head = l4[(l4[12] >> 4) * 4:][:8].hex()
            if not head:
                continue
        out = addr[2] == PACKET_OUTGOING
        peer = socket.inet_ntop(family, a[1] if out else a[0])
        port = struct.unpack("!H", l4[2:4] if out else l4[0:2])[0]
        print(f"{stamp[0]}.{stamp[1]:09d} {'out' if out else 'in'} {peer} {port} {head}",
              flush=True)


if __name__ == "__main__":
    main()
