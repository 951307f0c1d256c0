#!/usr/bin/python3
"""Sends an RTM_NEWNDUSEROPT message carrying a well-formed captive portal option (RFC 8910
2.3) to rtnetlink group RTNLGRP_ND_USEROPT from a process (root may), as if the kernel had
passed it from a Router Advertisement: roamd must believe only the kernel.

  nl_spoof.py IFNAME URI"""
import socket
import struct
import sys

RTM_NEWNDUSEROPT = 68
RTNLGRP_ND_USEROPT = 20
NDUSEROPT_SRCADDR = 1


def main():
    ifindex = socket.if_nametoindex(sys.argv[1])
    uri = sys.argv[2].encode()
    units = (2 + len(uri) + 7) // 8
    opt = bytes([37, units]) + uri + b"\0" * (units * 8 - 2 - len(uri))
    # struct nduseroptmsg: family, pad1, opts_len, ifindex, icmp type, code, pad2, pad3
    body = struct.pack("=BBHiBBHI", socket.AF_INET6, 0, len(opt), ifindex, 134, 0, 0, 0) + opt
    body += struct.pack("=HH", 20, NDUSEROPT_SRCADDR) + socket.inet_pton(socket.AF_INET6,
                                                                          "fe80::66")
    msg = struct.pack("=IHHII", 16 + len(body), RTM_NEWNDUSEROPT, 0, 1, 0) + body
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.bind((0, 0))
    s.sendto(msg, (0, 1 << (RTNLGRP_ND_USEROPT - 1)))
    s.close()
    print("sent", flush=True)


if __name__ == "__main__":
    main()
