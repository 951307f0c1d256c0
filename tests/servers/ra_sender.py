#!/usr/bin/python3
"""A router's side of IPv6 neighbour discovery, for tests: sends one Router Advertisement
(RFC 4861 4.2) from a link-local address to all nodes, with an optional captive portal
option (RFC 8910 2.3: type 37, length in 8-octet units, the URI padded with NUL octets).

  ra_sender.py IFNAME SRC_LL [--portal URI] [--raw-option HEX]... [--lifetime S]

--raw-option appends an option exactly as given (hex octets, type and length included), for
malformed options. The kernel computes the ICMPv6 checksum (RFC 3542 3.1, raw ICMPv6 sockets).
Prints "sent" once the datagram left."""
import argparse
import socket
import struct

ND_RA = 134
OPT_CAPTIVE_PORTAL = 37


def portal_option(uri):
    data = uri.encode("ascii")
    units = (2 + len(data) + 7) // 8
    return bytes([OPT_CAPTIVE_PORTAL, units]) + data + b"\0" * (units * 8 - 2 - len(data))


def router_advertisement(lifetime, options):
    # type, code, checksum (kernel), cur hop limit, flags (M=0 O=0), router lifetime,
    # reachable time, retrans timer
    return struct.pack("!BBHBBHII", ND_RA, 0, 0, 64, 0, lifetime, 0, 0) + b"".join(options)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("ifname")
    ap.add_argument("src")
    ap.add_argument("--portal")
    ap.add_argument("--raw-option", action="append", default=[])
    ap.add_argument("--lifetime", type=int, default=0)
    a = ap.parse_args()
    opts = []
    if a.portal:
        opts.append(portal_option(a.portal))
    opts += [bytes.fromhex(h) for h in a.raw_option]
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, a.ifname.encode())
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_HOPS, 255)  # RFC 4861 6.1.2
    idx = socket.if_nametoindex(a.ifname)
    s.bind((a.src, 0, 0, idx))
    s.sendto(router_advertisement(a.lifetime, opts), ("ff02::1", 0, 0, idx))
    s.close()
    print("sent", flush=True)


if __name__ == "__main__":
    main()
