#!/usr/bin/python3
"""Packet capture for tests: run inside a namespace (`ip netns exec NS capture.py IFACE`),
prints "ready", then one line per TCP packet with payload on IFACE: the kernel's receive or
send stamp (CLOCK_REALTIME, SO_TIMESTAMPNS), direction, destination address and port, and the
first payload bytes in hex. Ends when its stdin closes or it is terminated."""
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
        if eth == 0x0800 and len(ip) >= 20 and ip[9] == 6:
            dst, l4 = socket.inet_ntop(socket.AF_INET, ip[16:20]), ip[(ip[0] & 15) * 4:]
        elif eth == 0x86DD and len(ip) >= 40 and ip[6] == 6:
            dst, l4 = socket.inet_ntop(socket.AF_INET6, ip[24:40]), ip[40:]
        else:
            continue
        if len(l4) < 20:
            continue
        payload = l4[(l4[12] >> 4) * 4:]
        if not payload:
            continue
        way = "out" if addr[2] == PACKET_OUTGOING else "in"
        print(f"{stamp[0]}.{stamp[1]:09d} {way} {dst} {struct.unpack('!H', l4[2:4])[0]} "
              f"{payload[:8].hex()}", flush=True)


if __name__ == "__main__":
    main()
