#!/usr/bin/python3
"""A userspace delay line: copies every Ethernet frame between two interfaces, each after a
fixed delay. This kernel has no sch_netem, so tests that need latency put two veth ends in a
namespace of their own and run this between them.

  delayline.py IF_A IF_B DELAY_MS

Offloads must be off on both ends and their peers (frames larger than the MTU cannot be
re-sent through a packet socket)."""
import heapq
import select
import socket
import sys
import time

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


def open_if(name):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((name, 0))
    s.setblocking(False)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 * 1024 * 1024)
    return s


def main():
    a_name, b_name, delay_ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
    delay = delay_ms / 1000.0
    a, b = open_if(a_name), open_if(b_name)
    peer = {a.fileno(): b, b.fileno(): a}
    queue = []  # (due, seq, out_socket, frame)
    seq = 0
    print("ready", flush=True)
    while True:
        timeout = max(0.0, queue[0][0] - time.monotonic()) if queue else None
        ready, _, _ = select.select([a, b], [], [], timeout)
        now = time.monotonic()
        for s in ready:
            while True:
                try:
                    frame, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                except OSError:
                    break  # the interface went down (a test cutting the carrier)
                if addr[2] == PACKET_OUTGOING:
                    continue  # our own transmissions seen on the way out
                seq += 1
                heapq.heappush(queue, (now + delay, seq, peer[s.fileno()], frame))
        now = time.monotonic()
        while queue and queue[0][0] <= now:
            _, _, out, frame = heapq.heappop(queue)
            try:
                out.send(frame)
            except OSError:
                pass


if __name__ == "__main__":
    main()
