/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "roamd-nat64-parse.h"

/* RFC 6052 2.2: the IPv4 address's four octets per prefix length, around octet 8 ("u"),
 * which is always zero. */
static const struct {
        unsigned plen;
        uint8_t pos[4];
} formats[] = {
    {32, {4, 5, 6, 7}},   {40, {5, 6, 7, 9}},    {48, {6, 7, 9, 10}},
    {56, {7, 9, 10, 11}}, {64, {9, 10, 11, 12}}, {96, {12, 13, 14, 15}},
};

/* 192.0.0.170 and 192.0.0.171 (RFC 7050 2.2): ipv4only.arpa's only A records. */
static bool is_wka(const uint8_t v4[4])
{
        return v4[0] == 192 && v4[1] == 0 && v4[2] == 0 && (v4[3] == 170 || v4[3] == 171);
}

static bool prefix_unusable(const struct in6_addr *p)
{
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        const uint8_t *b = p->s6_addr;

        return b[0] == 0xff ||                            /* multicast */
               (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) || /* link-local */
               IN6_IS_ADDR_UNSPECIFIED(p) || IN6_IS_ADDR_LOOPBACK(p) ||
               memcmp(b, mapped, sizeof(mapped)) == 0;
}

int nat64_prefix_from_addr(const struct in6_addr *a, Nat64Prefix *ret, const char **ret_reason)
{
        const uint8_t *b = a->s6_addr;
        Nat64Prefix found = {};
        unsigned hits = 0;

        for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
                uint8_t v4[4];

                if (formats[i].plen < 96 && b[8] != 0)
                        continue; /* the "u" octet must be zero */
                for (size_t k = 0; k < 4; k++)
                        v4[k] = b[formats[i].pos[k]];
                if (!is_wka(v4))
                        continue;
                hits++;
                found = (Nat64Prefix){.plen = formats[i].plen};
                memcpy(found.prefix.s6_addr, b, formats[i].plen / 8);
        }
        if (hits == 0)
                return -ENOENT;
        if (hits > 1) {
                *ret_reason = "the well-known address appears at more than one position";
                return -EINVAL;
        }
        if (prefix_unusable(&found.prefix)) {
                *ret_reason = "the prefix is multicast, link-local, loopback or IPv4-mapped";
                return -EINVAL;
        }
        *ret = found;
        return 0;
}

int nat64_prefix_find(const struct in6_addr *addrs, size_t n, Nat64Prefix *ret,
                      const char **ret_reason)
{
        *ret_reason = NULL;
        for (size_t i = 0; i < n; i++) {
                const char *why = NULL;

                if (nat64_prefix_from_addr(&addrs[i], ret, &why) == 0)
                        return 0;
                if (why)
                        *ret_reason = why;
        }
        return -ENOENT;
}

const char *nat64_prefix_to_string(const Nat64Prefix *p, char buf[static NAT64_PREFIX_STRLEN])
{
        char a[INET6_ADDRSTRLEN];

        if (!inet_ntop(AF_INET6, &p->prefix, a, sizeof(a)))
                a[0] = 0;
        snprintf(buf, NAT64_PREFIX_STRLEN, "%s/%u", a, p->plen);
        return buf;
}
