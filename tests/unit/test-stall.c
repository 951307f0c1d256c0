/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roamd-stall-match.h"
#include "test.h"

static IpAddr A(const char *s)
{
        IpAddr a;

        ASSERT_OK(ip_addr_parse(s, &a));
        return a;
}

TEST(stall_wait)
{
        uint64_t s = USEC_PER_SEC;

        ASSERT_EQ(stall_wait_usec(30 * s, 300 * s, 0), 0);
        ASSERT_EQ(stall_wait_usec(30 * s, 300 * s, 1), 30 * s);
        ASSERT_EQ(stall_wait_usec(30 * s, 300 * s, 2), 60 * s);
        ASSERT_EQ(stall_wait_usec(30 * s, 300 * s, 4), 240 * s);
        ASSERT_EQ(stall_wait_usec(30 * s, 300 * s, 5), 300 * s);
        ASSERT_EQ(stall_wait_usec(30 * s, 300 * s, 1000), 300 * s);
        /* a re-check shorter than the minimum: the minimum holds */
        ASSERT_EQ(stall_wait_usec(30 * s, 10 * s, 3), 30 * s);
}

TEST(stall_off_link)
{
        LinkAddress addrs[] = {
            {.addr = A("192.0.2.150"), .prefixlen = 26, .scope = ADDR_SCOPE_GLOBAL},
            {.addr = A("2001:db8:3::150"), .prefixlen = 64, .scope = ADDR_SCOPE_GLOBAL},
            {.addr = A("fe80::1"), .prefixlen = 64, .scope = ADDR_SCOPE_LINK},
        };
        size_t n = sizeof(addrs) / sizeof(addrs[0]);
        IpAddr src4 = A("192.0.2.150"), src6 = A("2001:db8:3::150");
        IpAddr inet4 = A("203.0.113.10"), inet6 = A("2001:db8:ff::10");
        IpAddr lan4 = A("192.0.2.129"), lan6 = A("2001:db8:3::1");
        IpAddr next4 = A("192.0.2.192"); /* just past the /26 */

        /* the Internet, from this link's address: counts */
        ASSERT_TRUE(stall_off_link(addrs, n, &src4, &inet4));
        ASSERT_TRUE(stall_off_link(addrs, n, &src6, &inet6));
        ASSERT_TRUE(stall_off_link(addrs, n, &src4, &next4));
        /* the LAN: says nothing about the way out */
        ASSERT_TRUE(!stall_off_link(addrs, n, &src4, &lan4));
        ASSERT_TRUE(!stall_off_link(addrs, n, &src6, &lan6));
        /* another link's address, a link-local source, mixed families */
        IpAddr other = A("198.51.100.7"), ll = A("fe80::1");
        ASSERT_TRUE(!stall_off_link(addrs, n, &other, &inet4));
        ASSERT_TRUE(!stall_off_link(addrs, n, &ll, &inet6));
        ASSERT_TRUE(!stall_off_link(addrs, n, &src4, &inet6));
        /* destinations no portal stands in front of */
        IpAddr lo = A("127.0.0.1"), mc = A("224.0.0.251"), ll4 = A("169.254.1.1"),
               mc6 = A("ff02::fb");
        ASSERT_TRUE(!stall_off_link(addrs, n, &src4, &lo));
        ASSERT_TRUE(!stall_off_link(addrs, n, &src4, &mc));
        ASSERT_TRUE(!stall_off_link(addrs, n, &src4, &ll4));
        ASSERT_TRUE(!stall_off_link(addrs, n, &src6, &mc6));
        /* no addresses */
        ASSERT_TRUE(!stall_off_link(NULL, 0, &src4, &inet4));
}

TEST(stall_dns_private)
{
        LinkAddress addrs[] = {
            {.addr = A("192.0.2.150"), .prefixlen = 26, .scope = ADDR_SCOPE_GLOBAL},
            {.addr = A("2001:db8:3::150"), .prefixlen = 64, .scope = ADDR_SCOPE_GLOBAL},
        };
        size_t n = sizeof(addrs) / sizeof(addrs[0]);
        const char *private[] = {
            "10.1.2.3",     "172.16.0.1", "172.31.255.254", "192.168.1.1", "100.64.0.1",
            "169.254.9.9",  "127.0.0.1",  "0.0.0.0",        "fd00::1",     "fe80::1",
            "::1",          "::",         "192.0.2.129", /* the cafe's router: on the link's /26 */
            "2001:db8:3::1"};
        const char *public[] = {"203.0.113.10",
                                "2001:db8:ff::10",
                                "172.32.0.1",
                                "100.128.0.1",
                                "192.0.2.192" /* just past the /26 */,
                                "8.8.8.8"};

        for (size_t i = 0; i < ELEMENTSOF(private); i++) {
                IpAddr a = A(private[i]);
                ASSERT_TRUE(stall_dns_private(addrs, n, &a));
        }
        for (size_t i = 0; i < ELEMENTSOF(public); i++) {
                IpAddr a = A(public[i]);
                ASSERT_TRUE(!stall_dns_private(addrs, n, &a));
        }
        /* without the link's addresses, its LAN is not known */
        IpAddr router = A("192.0.2.129");
        ASSERT_TRUE(!stall_dns_private(NULL, 0, &router));
}
