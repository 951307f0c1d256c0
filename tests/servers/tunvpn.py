#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A small userspace VPN for the roam test world: IP packets over UDP, no crypto.

  tunvpn.py server --tun vpns0 --listen 203.0.113.20 --listen 2001:db8:ff::20 [--port 1194]
                   --addr 203.0.113.65/26 --addr 2001:db8:fe::1/64
  tunvpn.py client --tun vpn0 --server 203.0.113.20 [--port 1194]
                   --addr 203.0.113.66/26 --addr 2001:db8:fe::2/64

Each side opens a tun link (IFF_TUN, no packet information, not persistent: it vanishes
when the process exits), gives it the --addr addresses (no IPv6 link-local, no DAD, MTU
1400 so a tunnelled packet fits a 1500-byte uplink), sets it up and prints "ready". The
client changes no other route: only the prefixes of its own addresses lead into the tunnel.

Every UDP datagram is one frame: a 6-byte header, then the payload.
    magic "RW" | version 1 | type | payload length (16 bits, network order)
type 1 (data): the payload is one IPv4 or IPv6 packet. type 2 (hello, client to server):
the client's inner IPv4 (4 bytes) and IPv6 (16 bytes) addresses, sent at start and every
second (so the server learns where the client is after it changed uplinks); type 3 (hello
ack, server to client): empty. Malformed frames (short, wrong magic, version, type or length,
a payload that is not an IP packet of exactly that length, an inner source address outside
the tunnel's prefixes) are dropped and counted. The client sends through an unbound UDP
socket, so the kernel picks the uplink from the device's main routing table at every packet;
it accepts frames only from the server's address and port.
"""
import argparse
import fcntl
import ipaddress
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

TUNSETIFF = 0x400454CA
IFF_TUN = 0x0001
IFF_NO_PI = 0x1000
MAGIC = b"RW"
VERSION = 1
DATA, HELLO, HELLO_ACK = 1, 2, 3
HDR = struct.Struct("!2sBBH")
MTU = 1400
KEEPALIVE = 1.0


def log(*args):
    print(*args, flush=True)


def open_tun(name):
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, TUNSETIFF, struct.pack("16sH", name.encode(), IFF_TUN | IFF_NO_PI))
    os.set_blocking(fd, False)
    return fd


def ip(*args):
    subprocess.run(["ip", *args], check=True)


def configure(name, addrs):
    ip("link", "set", "dev", name, "mtu", str(MTU), "addrgenmode", "none")
    for a in addrs:
        if a.version == 6:
            ip("-6", "addr", "add", str(a), "dev", name, "nodad")
        else:
            ip("addr", "add", str(a), "dev", name)
    ip("link", "set", "dev", name, "up")


def frame(kind, payload=b""):
    return HDR.pack(MAGIC, VERSION, kind, len(payload)) + payload


def inner_addrs(packet):
    """(version, source, destination) of an IP packet whose length fields agree with its
    size, else None."""
    if len(packet) >= 20 and packet[0] >> 4 == 4:
        ihl = (packet[0] & 15) * 4
        if ihl < 20 or struct.unpack("!H", packet[2:4])[0] != len(packet) or ihl > len(packet):
            return None
        return 4, ipaddress.IPv4Address(packet[12:16]), ipaddress.IPv4Address(packet[16:20])
    if len(packet) >= 40 and packet[0] >> 4 == 6:
        if 40 + struct.unpack("!H", packet[4:6])[0] != len(packet):
            return None
        return 6, ipaddress.IPv6Address(packet[8:24]), ipaddress.IPv6Address(packet[24:40])
    return None


def parse(data):
    """(type, payload) of a well-formed frame, else None."""
    if len(data) < HDR.size:
        return None
    magic, version, kind, length = HDR.unpack_from(data)
    payload = data[HDR.size:]
    if magic != MAGIC or version != VERSION or length != len(payload):
        return None
    if kind == DATA and inner_addrs(payload) is None:
        return None
    if kind == HELLO and length != 20:
        return None
    if kind == HELLO_ACK and length != 0:
        return None
    if kind not in (DATA, HELLO, HELLO_ACK):
        return None
    return kind, payload


class Drops:
    def __init__(self):
        self.n = 0
        self.last = 0.0

    def drop(self, why):
        self.n += 1
        now = time.monotonic()
        if now - self.last >= 1.0:
            self.last = now
            log("dropped (%d so far): %s" % (self.n, why))


def udp_socket(family, bind=None):
    s = socket.socket(family, socket.SOCK_DGRAM)
    if bind is not None:
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind(bind)
    s.setblocking(False)
    return s


def server(a):
    nets = [ipaddress.ip_interface(x).network for x in a.addr]
    fd = open_tun(a.tun)
    configure(a.tun, [ipaddress.ip_interface(x) for x in a.addr])
    socks = []
    for addr in a.listen:
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        socks.append(udp_socket(fam, (addr, a.port)))
    peers = {}  # inner address -> (socket, transport address)
    drops = Drops()
    log("ready")
    while True:
        r, _, _ = select.select([fd, *socks], [], [])
        for s in socks:
            if s not in r:
                continue
            while True:
                try:
                    data, src = s.recvfrom(65536)
                except BlockingIOError:
                    break
                f = parse(data)
                if f is None:
                    drops.drop("malformed frame from %s" % (src,))
                    continue
                kind, payload = f
                if kind == HELLO:
                    inners = (ipaddress.IPv4Address(payload[:4]),
                              ipaddress.IPv6Address(payload[4:]))
                    if not all(any(i in n for n in nets) for i in inners):
                        drops.drop("hello for %s from %s" % (inners, src))
                        continue
                    for inner in inners:
                        if peers.get(inner, (None, None))[1] != src:
                            log("client %s at %s" % (inner, src[0]))
                        peers[inner] = (s, src)
                    s.sendto(frame(HELLO_ACK), src)
                    continue
                if kind != DATA:
                    drops.drop("frame type %d from %s" % (kind, src))
                    continue
                _, isrc, _ = inner_addrs(payload)
                if not any(isrc in n for n in nets):
                    drops.drop("inner source %s from %s" % (isrc, src))
                    continue
                peers[isrc] = (s, src)
                try:
                    os.write(fd, payload)
                except OSError as e:
                    drops.drop("tun write: %s" % e)
        if fd in r:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                info = inner_addrs(packet)
                peer = peers.get(info[2]) if info else None
                if peer is None:
                    continue  # nobody there (yet)
                try:
                    peer[0].sendto(frame(DATA, packet), peer[1])
                except OSError:
                    pass


def client(a):
    ifaces = [ipaddress.ip_interface(x) for x in a.addr]
    v4 = [i.ip for i in ifaces if i.version == 4]
    v6 = [i.ip for i in ifaces if i.version == 6]
    if len(v4) != 1 or len(v6) != 1:
        sys.exit("tunvpn client: give one IPv4 and one IPv6 --addr")
    nets = [i.network for i in ifaces]
    hello = frame(HELLO, v4[0].packed + v6[0].packed)
    fam = socket.AF_INET6 if ":" in a.server else socket.AF_INET
    server_addr = socket.getaddrinfo(a.server, a.port, fam, socket.SOCK_DGRAM)[0][4]
    fd = open_tun(a.tun)
    configure(a.tun, ifaces)
    s = udp_socket(fam)
    drops = Drops()
    acked = False
    next_hello = 0.0
    log("ready")
    while True:
        now = time.monotonic()
        if now >= next_hello:
            try:
                s.sendto(hello, server_addr)
            except OSError as e:
                drops.drop("hello: %s" % e)  # no route (yet): try again in a second
            next_hello = now + KEEPALIVE
        r, _, _ = select.select([fd, s], [], [], max(0.0, next_hello - time.monotonic()))
        if s in r:
            while True:
                try:
                    data, src = s.recvfrom(65536)
                except BlockingIOError:
                    break
                except OSError:
                    break  # an ICMP error for an earlier datagram
                if src[:2] != server_addr[:2]:
                    drops.drop("frame from %s, not the server" % (src,))
                    continue
                f = parse(data)
                if f is None:
                    drops.drop("malformed frame")
                    continue
                kind, payload = f
                if kind == HELLO_ACK:
                    if not acked:
                        log("connected to %s" % a.server)
                        acked = True
                    continue
                if kind != DATA:
                    drops.drop("frame type %d" % kind)
                    continue
                try:
                    os.write(fd, payload)
                except OSError as e:
                    drops.drop("tun write: %s" % e)
        if fd in r:
            while True:
                try:
                    packet = os.read(fd, 65536)
                except BlockingIOError:
                    break
                info = inner_addrs(packet)
                if info is None or not any(info[1] in n for n in nets):
                    continue  # not ours to send (e.g. an unconfigured source)
                try:
                    s.sendto(frame(DATA, packet), server_addr)
                except OSError as e:
                    drops.drop("send: %s" % e)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="role", required=True)
    sp = sub.add_parser("server")
    sp.add_argument("--tun", required=True)
    sp.add_argument("--listen", action="append", required=True)
    sp.add_argument("--port", type=int, default=1194)
    sp.add_argument("--addr", action="append", required=True)
    cp = sub.add_parser("client")
    cp.add_argument("--tun", required=True)
    cp.add_argument("--server", required=True)
    cp.add_argument("--port", type=int, default=1194)
    cp.add_argument("--addr", action="append", required=True)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    if a.role == "server":
        server(a)
    else:
        client(a)


if __name__ == "__main__":
    main()
