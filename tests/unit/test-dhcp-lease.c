/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>

#include "roamd-dhcp-lease.h"
#include "test.h"

static size_t bootp(uint8_t *b, const uint8_t *opts, size_t n)
{
        memset(b, 0, 240);
        b[0] = 2; /* BOOTREPLY */
        b[16] = 192, b[17] = 0, b[18] = 2, b[19] = 23;
        b[236] = 99, b[237] = 130, b[238] = 83, b[239] = 99;
        if (n > 0)
                memcpy(b + 240, opts, n);
        return 240 + n;
}

TEST(lease_v4_options)
{
        static const uint8_t opts[] = {
            53,  1,   5,                                     /* message type ACK */
            0,                                               /* pad */
            6,   8,   192, 0,   2,   1,   198, 51,  100, 53, /* DNS */
            15,  9,   'h', 'o', 'm', 'e', '.', 't', 'e', 's', 't', 114, 24,
            'h', 't', 't', 'p', 's', ':', '/', '/', 'c', 'a', 'f', 'e', '.',
            't', 'e', 's', 't', '/', 'a', 'p', 'i', '/', 'x', 0,   255,
        };
        uint8_t buf[512];
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, opts, sizeof(opts)), &l));
        ASSERT_EQ(l.n_addrs, 1);
        ASSERT_STREQ(l.addrs[0].text, "192.0.2.23");
        ASSERT_EQ(l.n_dns, 2);
        ASSERT_STREQ(l.dns[0].text, "192.0.2.1");
        ASSERT_STREQ(l.dns[1].text, "198.51.100.53");
        ASSERT_EQ(l.n_domains, 1);
        ASSERT_STREQ(l.domains[0], "home.test");
        ASSERT_STREQ(l.captive_portal, "https://cafe.test/api/x");
        ASSERT_TRUE(!l.has_router);
}

TEST(lease_v4_router)
{
        static const uint8_t opts[] = {3, 4, 192, 0, 2, 1, 255};
        uint8_t buf[512];
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, opts, sizeof(opts)), &l));
        ASSERT_TRUE(l.has_router);
}

TEST(lease_v4_malformed)
{
        static const struct {
                const uint8_t opts[16];
                size_t n;
        } bad[] = {
            {{6, 5, 1, 2, 3, 4, 5}, 7}, /* DNS length not a multiple of 4 */
            {{6, 8, 1, 2, 3, 4}, 6},    /* option runs past the end */
            {{15, 2, 'a', '\n'}, 4},    /* control char in domain */
            /* Names go on the bus and to terminals: broken UTF-8, ESC, C1 CSI and RLO are
             * refused (DNS names are ASCII; IDNs travel as xn--). */
            {{15, 3, 'a', 0xc3, 0x28}, 5},
            {{15, 3, 'a', 0x1b, '['}, 5},
            {{15, 3, 'a', 0xc2, 0x9b}, 5},
            {{15, 4, 'a', 0xe2, 0x80, 0xae}, 6},
            {{114, 3, 'h', 0xc3, 0x28}, 5},
            {{114, 0}, 2},                /* empty URL */
            {{114, 3, 'a', ' ', 'b'}, 5}, /* space in URL */
            {{6}, 1},                     /* truncated header */
            {{3, 0}, 2},                  /* router option without a router */
            {{3, 3, 1, 2, 3}, 5},         /* router length not a multiple of 4 */
        };
        uint8_t buf[512];
        DhcpLease l;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (dhcp_lease_parse_v4(buf, bootp(buf, bad[i].opts, bad[i].n), &l) != -EBADMSG)
                        TEST_FAIL("malformed v4 case %zu accepted", i);

        /* Too short, wrong op, wrong cookie. */
        ASSERT_EQ(dhcp_lease_parse_v4(buf, 100, &l), -EBADMSG);
        bootp(buf, NULL, 0);
        buf[0] = 1;
        ASSERT_EQ(dhcp_lease_parse_v4(buf, 240, &l), -EBADMSG);
        bootp(buf, NULL, 0);
        buf[239] = 0;
        ASSERT_EQ(dhcp_lease_parse_v4(buf, 240, &l), -EBADMSG);
}

TEST(lease_v6_options)
{
        static const uint8_t msg[] = {
            7,    0xaa, 0xbb, 0xcc, /* REPLY, transaction id */
            0,    3,    0,    40,   /* IA_NA, 40 bytes */
            0,    0,    0,    1,    0,   0,   0,   60,  0,   0,   0,   90, /* IAID T1 T2 */
            0,    5,    0,    24,                                          /* IAADDR */
            0x20, 0x01, 0x0d, 0xb8, 0,   1,   0,   0,   0,   0,   0,   0,   0,   0,   0x01, 0x23, 0,
            0,    0,    120,  0,    0,   0,   240, 0,   23,  0,   16, /* DNS */
            0x20, 0x01, 0x0d, 0xb8, 0,   1,   0,   0,   0,   0,   0,   0,   0,   0,   0,    1,    0,
            24,   0,    11,   4,    'h', 'o', 'm', 'e', 4,   't', 'e', 's', 't', 0,   0,    103,  0,
            15,   'h',  't',  't',  'p', 's', ':', '/', '/', 'p', '.', 't', 'e', 's', 't',  '/',
        };
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v6(msg, sizeof(msg), &l));
        ASSERT_EQ(l.n_addrs, 1);
        ASSERT_STREQ(l.addrs[0].text, "2001:db8:1::123");
        ASSERT_EQ(l.n_dns, 1);
        ASSERT_STREQ(l.dns[0].text, "2001:db8:1::1");
        ASSERT_EQ(l.n_domains, 1);
        ASSERT_STREQ(l.domains[0], "home.test");
        ASSERT_STREQ(l.captive_portal, "https://p.test/");
}

TEST(lease_v6_malformed)
{
        static const struct {
                uint8_t msg[24];
                size_t n;
        } bad[] = {
            {{7, 0, 0, 0, 0, 23, 0, 15}, 23},             /* DNS length not multiple of 16 */
            {{7, 0, 0, 0, 0, 23, 0, 16}, 12},             /* runs past end */
            {{7, 0, 0, 0, 0, 24, 0, 3, 5, 'a', 'b'}, 11}, /* label past option */
            {{7, 0, 0, 0, 0, 24, 0, 1, 0}, 9},            /* empty name */
            {{7, 0, 0, 0, 0, 24, 0, 5, 3, 'a', 0xc3, 0x28, 0}, 13},       /* broken UTF-8 */
            {{7, 0, 0, 0, 0, 24, 0, 6, 4, 'a', 0xe2, 0x80, 0xae, 0}, 14}, /* RLO */
            {{7, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 1}, 12},                   /* IA_NA too short */
            {{7, 0, 0, 0, 0}, 5}, /* truncated option header */
            {{1, 0, 0, 0}, 4},    /* SOLICIT is not a lease */
        };
        DhcpLease l;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                if (dhcp_lease_parse_v6(bad[i].msg, bad[i].n, &l) != -EBADMSG)
                        TEST_FAIL("malformed v6 case %zu accepted", i);
}

/* RFC 4833: option 101 (tzdb name) and 100 (POSIX TZ string); a bad one is dropped, the lease
 * kept. */
TEST(lease_v4_timezone)
{
        static const uint8_t opts[] = {
            53,  1,   5,   101, 13,  'E', 'u', 'r', 'o', 'p', 'e', '/', 'B', 'e', 'r', 'l',
            'i', 'n', 100, 27,  'C', 'E', 'T', '-', '1', 'C', 'E', 'S', 'T', ',', 'M', '3',
            '.', '5', '.', '0', ',', 'M', '1', '0', '.', '5', '.', '0', '/', '3', 0,   255,
        };
        static const uint8_t bad[] = {
            53, 1, 5, 101, 6, 'a', '"', ';', 'r', 'm', 'x', 6, 4, 192, 0, 2, 1, 255,
        };
        uint8_t buf[512];
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, opts, sizeof(opts)), &l));
        ASSERT_STREQ(l.tz_name, "Europe/Berlin");
        ASSERT_STREQ(l.tz_posix, "CET-1CEST,M3.5.0,M10.5.0/3");
        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, bad, sizeof(bad)), &l));
        ASSERT_STREQ(l.tz_name, "");
        ASSERT_EQ(l.n_dns, 1);
}

TEST(lease_v6_timezone)
{
        static const uint8_t m[] = {
            7,   0xaa, 0xbb, 0xcc, 0,   42,  0,   15,  'A', 'm', 'e', 'r',
            'i', 'c',  'a',  '/',  'P', 'h', 'o', 'e', 'n', 'i', 'x',
        };
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v6(m, sizeof(m), &l));
        ASSERT_STREQ(l.tz_name, "America/Phoenix");
        ASSERT_STREQ(l.tz_posix, "");
}

/* NTP servers: DHCPv4 option 42; a malformed one is dropped, the lease kept. */
TEST(lease_v4_ntp)
{
        static const uint8_t opts[] = {
            53, 1, 5, 42, 8, 192, 0, 2, 1, 198, 51, 100, 123, 42, 4, 192, 0, 2, 1, 255,
        };
        static const uint8_t bad[] = {53, 1, 5, 42, 5, 192, 0, 2, 1, 7, 6, 4, 192, 0, 2, 1, 255};
        static const uint8_t empty[] = {42, 0, 255};
        uint8_t buf[512];
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, opts, sizeof(opts)), &l));
        ASSERT_EQ(l.n_ntp, 2); /* the repeated option adds no duplicate */
        ASSERT_STREQ(l.ntp[0], "192.0.2.1");
        ASSERT_STREQ(l.ntp[1], "198.51.100.123");
        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, bad, sizeof(bad)), &l));
        ASSERT_EQ(l.n_ntp, 0);
        ASSERT_EQ(l.n_dns, 1);
        ASSERT_OK(dhcp_lease_parse_v4(buf, bootp(buf, empty, sizeof(empty)), &l));
        ASSERT_EQ(l.n_ntp, 0);
}

/* DHCPv6 option 56 (server address, multicast address left out, FQDN, an unknown suboption
 * skipped) and option 31 (SNTP). */
TEST(lease_v6_ntp)
{
        /* clang-format off */
        static const uint8_t m[] = {
            7, 0xaa, 0xbb, 0xcc,
            0, 56, 0, 63, /* NTP server: */
            0, 1, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            0, 2, 0, 16, 0xff, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1,
            0, 3, 0, 15, 3, 'n', 't', 'p', 4, 'h', 'o', 'm', 'e', 4, 't', 'e', 's', 't', 0,
            0, 9, 0, 0, /* an unknown suboption */
            0, 31, 0, 32, /* SNTP: two */
            0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
            0x20, 0x01, 0x0d, 0xb8, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x7b,
        };
        /* clang-format on */
        static const struct {
                uint8_t msg[32];
                size_t n;
        } bad[] = {
            {{7, 0, 0, 0, 0, 56, 0, 0}, 8},                                 /* empty */
            {{7, 0, 0, 0, 0, 56, 0, 6, 0, 1, 0, 2, 1, 2}, 14},              /* address of 2 */
            {{7, 0, 0, 0, 0, 56, 0, 7, 0, 3, 0, 3, 2, 'a', 'b'}, 15},       /* no end of name */
            {{7, 0, 0, 0, 0, 56, 0, 9, 0, 3, 0, 5, 1, 'a', 0, 1, 'b'}, 17}, /* bytes after name */
            {{7, 0, 0, 0, 0, 56, 0, 7, 0, 3, 0, 3, 1, 0x1b, 0}, 15},        /* control char */
            {{7, 0, 0, 0, 0, 56, 0, 3, 0, 1, 0}, 11},                       /* cut suboption */
            {{7, 0, 0, 0, 0, 31, 0, 4, 1, 2, 3, 4}, 12}, /* SNTP not 16 bytes a server */
        };
        DhcpLease l;

        ASSERT_OK(dhcp_lease_parse_v6(m, sizeof(m), &l));
        ASSERT_EQ(l.n_ntp, 3);
        ASSERT_STREQ(l.ntp[0], "2001:db8:1::1");
        ASSERT_STREQ(l.ntp[1], "ntp.home.test");
        ASSERT_STREQ(l.ntp[2], "2001:db8:2::7b");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ASSERT_OK(dhcp_lease_parse_v6(bad[i].msg, bad[i].n, &l));
                if (l.n_ntp != 0)
                        TEST_FAIL("malformed NTP option %zu taken", i);
        }
}
