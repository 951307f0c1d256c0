/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>

#include "roamd-nat64-parse.h"
#include "test.h"

static struct in6_addr addr(const char *s)
{
        struct in6_addr a;

        if (inet_pton(AF_INET6, s, &a) != 1)
                abort();
        return a;
}

static const char *prefix_of(const char *s)
{
        static char buf[NAT64_PREFIX_STRLEN];
        struct in6_addr a = addr(s);
        const char *why = NULL;
        Nat64Prefix p;

        if (nat64_prefix_from_addr(&a, &p, &why) < 0)
                return why ? why : "none";
        return nat64_prefix_to_string(&p, buf);
}

TEST(nat64_rfc6052_formats)
{
        /* RFC 6052 2.4's examples, with 192.0.0.170 (c0.00.00.aa) in place of 192.0.2.33. */
        ASSERT_STREQ(prefix_of("2001:db8:c000:aa::"), "2001:db8::/32");
        ASSERT_STREQ(prefix_of("2001:db8:1c0:0:aa::"), "2001:db8:100::/40");
        ASSERT_STREQ(prefix_of("2001:db8:122:c000:0:aa00::"), "2001:db8:122::/48");
        ASSERT_STREQ(prefix_of("2001:db8:122:3c0:0:aa::"), "2001:db8:122:300::/56");
        ASSERT_STREQ(prefix_of("2001:db8:122:344:c0:0:aa00:0"), "2001:db8:122:344::/64");
        ASSERT_STREQ(prefix_of("2001:db8:122:344::c000:aa"), "2001:db8:122:344::/96");
        /* the well-known prefix (RFC 6052 2.1) and the secondary address */
        ASSERT_STREQ(prefix_of("64:ff9b::c000:aa"), "64:ff9b::/96");
        ASSERT_STREQ(prefix_of("64:ff9b::192.0.0.171"), "64:ff9b::/96");
}

TEST(nat64_refuses)
{
        /* no well-known address: an ordinary AAAA */
        ASSERT_STREQ(prefix_of("2001:db8:ff::10"), "none");
        ASSERT_STREQ(prefix_of("64:ff9b::c000:ac"), "none");
        /* the "u" octet set: not an RFC 6052 address of a shorter prefix */
        ASSERT_STREQ(prefix_of("2001:db8:122:344:ffc0:0:aa00:0"), "none");
        /* at two positions: the length is not known */
        ASSERT_STREQ(prefix_of("2001:db8:c000:aa:0:0:c000:aa"),
                     "the well-known address appears at more than one position");
        /* prefixes no NAT64 uses */
        ASSERT_STREQ(prefix_of("ff02::c000:aa"),
                     "the prefix is multicast, link-local, loopback or IPv4-mapped");
        ASSERT_STREQ(prefix_of("fe80::c000:aa"),
                     "the prefix is multicast, link-local, loopback or IPv4-mapped");
        ASSERT_STREQ(prefix_of("::192.0.0.170"),
                     "the prefix is multicast, link-local, loopback or IPv4-mapped");
        ASSERT_STREQ(prefix_of("::ffff:192.0.0.170"),
                     "the prefix is multicast, link-local, loopback or IPv4-mapped");
}

TEST(nat64_first_of_several)
{
        struct in6_addr a[3] = {addr("fe80::c000:aa"), addr("2001:db8:ff::10"),
                                addr("2001:db8:64::c000:ab")};
        char buf[NAT64_PREFIX_STRLEN];
        const char *why = NULL;
        Nat64Prefix p;

        ASSERT_OK(nat64_prefix_find(a, 3, &p, &why));
        ASSERT_STREQ(nat64_prefix_to_string(&p, buf), "2001:db8:64::/96");
        ASSERT_EQ(nat64_prefix_find(a, 2, &p, &why), -ENOENT);
        ASSERT_STREQ(why, "the prefix is multicast, link-local, loopback or IPv4-mapped");
        ASSERT_EQ(nat64_prefix_find(a, 0, &p, &why), -ENOENT);
        ASSERT_TRUE(why == NULL);
}
