#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The far end of the roam test world: tells a client which address and port it came from.

  whoami.py --listen ADDR [--listen ADDR ...] [--port 7000] [--no-udp] [--banner TEXT]

For every ADDR (a wildcard "::" listens on every address of both families) a TCP and a UDP
socket on PORT:
  UDP: every datagram is answered with "<peer address> <peer port>\\n".
  TCP: on connect the server sends "<peer address> <peer port>\\n" (or TEXT with --banner,
       then "\\r\\n", the way an SSH server greets); then, line by line: "stream\\n" makes it
       send "tick N\\n" (N = 1, 2, ...) every 100 ms until the client closes; any other line
       is echoed back.
IPv4 peers of a dual-stack socket are shown as plain IPv4 addresses. Specific addresses are
bound one by one, so UDP answers leave from the address the client asked. "ready" on stdout
once every socket listens.
"""
import argparse
import os
import select
import socket
import sys
import threading
import time

TICK = 0.1


def peer_text(addr):
    host, port = addr[0], addr[1]
    if host.startswith("::ffff:") and "." in host:
        host = host[len("::ffff:"):]
    return "%s %d\n" % (host, port)


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def make_socket(addr, port, kind):
    fam = family_of(addr)
    s = socket.socket(fam, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        # "::" takes both families; a specific address only its own
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0 if addr == "::" else 1)
    s.bind((addr, port))
    return s


def stream(conn):
    """tick N every 100 ms until the client closes (or stops reading for good)."""
    n = 0
    due = time.monotonic()
    while True:
        n += 1
        conn.sendall(b"tick %d\n" % n)
        due += TICK
        while True:
            left = due - time.monotonic()
            if left <= 0:
                break
            r, _, _ = select.select([conn], [], [], left)
            if r and not conn.recv(4096):
                return


def serve_tcp_conn(conn, addr, banner):
    try:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn.settimeout(60)  # a client that stops reading for a minute is gone
        conn.sendall(((banner + "\r\n") if banner is not None else peer_text(addr)).encode())
        buf = b""
        while True:
            data = conn.recv(4096)
            if not data:
                return
            buf += data
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                if line.rstrip(b"\r") == b"stream":
                    stream(conn)
                    return
                conn.sendall(line + b"\n")
    except OSError:
        pass
    finally:
        conn.close()


def serve_tcp(lsock, banner):
    while True:
        try:
            conn, addr = lsock.accept()
        except OSError:
            continue
        threading.Thread(target=serve_tcp_conn, args=(conn, addr, banner), daemon=True).start()


def serve_udp(sock):
    while True:
        try:
            _, addr = sock.recvfrom(65536)
            sock.sendto(peer_text(addr).encode(), addr)
        except OSError:
            continue


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--listen", action="append", required=True)
    ap.add_argument("--port", type=int, default=7000)
    ap.add_argument("--no-udp", action="store_true")
    ap.add_argument("--banner")
    ap.add_argument("--pidfile")
    a = ap.parse_args()
    threads = []
    for addr in a.listen:
        t = make_socket(addr, a.port, socket.SOCK_STREAM)
        t.listen(64)
        threads.append(threading.Thread(target=serve_tcp, args=(t, a.banner), daemon=True))
        if not a.no_udp:
            u = make_socket(addr, a.port, socket.SOCK_DGRAM)
            threads.append(threading.Thread(target=serve_udp, args=(u,), daemon=True))
    for t in threads:
        t.start()
    if a.pidfile:
        with open(a.pidfile + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.rename(a.pidfile + ".tmp", a.pidfile)
    print("ready", flush=True)
    for t in threads:
        t.join()


if __name__ == "__main__":
    sys.exit(main())
