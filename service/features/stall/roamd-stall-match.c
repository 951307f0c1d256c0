/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <string.h>

#include "roam-util.h"
#include "roamd-stall-match.h"

typedef struct Bin {
        int family;
        unsigned char b[16];
} Bin;

static bool to_bin(const IpAddr *a, Bin *ret)
{
        ret->family = a->family;
        return (a->family == AF_INET || a->family == AF_INET6) &&
               inet_pton(a->family, a->text, ret->b) == 1;
}

static bool prefix_has(const Bin *net, unsigned prefixlen, const Bin *a)
{
        unsigned bytes = prefixlen / 8, bits = prefixlen % 8;
        unsigned max = net->family == AF_INET ? 32 : 128;

        if (net->family != a->family || prefixlen > max)
                return false;
        if (memcmp(net->b, a->b, bytes) != 0)
                return false;
        return bits == 0 || ((net->b[bytes] ^ a->b[bytes]) & (0xff << (8 - bits))) == 0;
}

static bool not_routed(const Bin *a)
{
        if (a->family == AF_INET)
                return a->b[0] == 127 || a->b[0] == 0 || (a->b[0] == 169 && a->b[1] == 254) ||
                       a->b[0] >= 224;
        return IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)a->b) ||
               IN6_IS_ADDR_UNSPECIFIED((const struct in6_addr *)a->b) ||
               IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)a->b) ||
               IN6_IS_ADDR_MULTICAST((const struct in6_addr *)a->b);
}

uint64_t stall_wait_usec(uint64_t min, uint64_t recheck, unsigned rounds)
{
        uint64_t cap = MAX(min, recheck), w = min;

        if (rounds == 0)
                return 0;
        for (unsigned i = 1; i < rounds && w < cap; i++)
                w *= 2;
        return MIN(w, cap);
}

bool stall_off_link(const LinkAddress *addrs, size_t n, const IpAddr *src, const IpAddr *dst)
{
        Bin s, d;
        bool ours = false;

        if (!to_bin(src, &s) || !to_bin(dst, &d) || s.family != d.family || not_routed(&d))
                return false;
        for (size_t i = 0; i < n; i++) {
                Bin a;

                if (addrs[i].scope != ADDR_SCOPE_GLOBAL && addrs[i].scope != ADDR_SCOPE_SITE)
                        continue;
                if (!to_bin(&addrs[i].addr, &a) || a.family != s.family)
                        continue;
                if (memcmp(a.b, s.b, a.family == AF_INET ? 4 : 16) == 0)
                        ours = true;
        }
        if (!ours)
                return false;
        for (size_t i = 0; i < n; i++) {
                Bin a;

                if (to_bin(&addrs[i].addr, &a) && prefix_has(&a, addrs[i].prefixlen, &d))
                        return false;
        }
        return true;
}

bool stall_dns_private(const LinkAddress *addrs, size_t n, const IpAddr *a)
{
        Bin b;

        if (!to_bin(a, &b))
                return false;
        if (b.family == AF_INET) {
                if (b.b[0] == 10 || b.b[0] == 127 || b.b[0] == 0 ||
                    (b.b[0] == 172 && (b.b[1] & 0xf0) == 16) || (b.b[0] == 192 && b.b[1] == 168) ||
                    (b.b[0] == 169 && b.b[1] == 254) || (b.b[0] == 100 && (b.b[1] & 0xc0) == 64))
                        return true;
        } else if ((b.b[0] & 0xfe) == 0xfc || IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)b.b) ||
                   IN6_IS_ADDR_UNSPECIFIED((const struct in6_addr *)b.b) ||
                   IN6_IS_ADDR_LINKLOCAL((const struct in6_addr *)b.b))
                return true;
        /* the link's own LAN: a portal's DNS answers the router's address */
        for (size_t i = 0; i < n; i++) {
                Bin l;

                if (to_bin(&addrs[i].addr, &l) && prefix_has(&l, addrs[i].prefixlen, &b))
                        return true;
        }
        return false;
}
