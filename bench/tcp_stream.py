#!/usr/bin/python3
"""A minimal TCP bulk sender and receiver for bench_apps.py (iperf3 is not part of roam's
dependencies).

  tcp_stream.py recv ADDR PORT      accepts connections one after the other; reads each to EOF,
                                    then answers with the byte count (8 bytes, big endian)
  tcp_stream.py send ADDR PORT SECS sends a 4 MiB buffer over and over for SECS seconds, half-
                                    closes, waits for the receiver's count and prints
                                    {"bytes": N, "seconds": T} (T: connect to count received)
"""
import json
import socket
import struct
import sys
import time

CHUNK = 4 << 20


def recv(addr, port):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(4)
    print("ready", flush=True)
    buf = bytearray(CHUNK)
    while True:
        c, _ = ls.accept()
        n = 0
        with c:
            while True:
                k = c.recv_into(buf)
                if k == 0:
                    break
                n += k
            c.sendall(struct.pack("!Q", n))


def send(addr, port, secs):
    buf = b"\x5a" * CHUNK
    s = socket.create_connection((addr, port), timeout=30)
    t0 = time.monotonic()
    end = t0 + secs
    while time.monotonic() < end:
        s.sendall(buf)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while len(got) < 8:
        k = s.recv(8 - len(got))
        if not k:
            raise SystemExit("receiver closed without a count")
        got += k
    t1 = time.monotonic()
    s.close()
    print(json.dumps({"bytes": struct.unpack("!Q", got)[0], "seconds": t1 - t0}))


if __name__ == "__main__":
    if sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]))
    else:
        send(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
