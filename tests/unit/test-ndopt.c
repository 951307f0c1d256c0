/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <netinet/icmp6.h>
#include <stdint.h>

#include "roamd-ndopt-parse.h"
#include "test.h"

/* An RTM_NEWNDUSEROPT payload as the kernel builds it (ndisc_ra_useropt): the header, the
 * options, padding to 4 octets, then NDUSEROPT_SRCADDR. */
static size_t build(uint8_t *buf, const void *opts, size_t opts_len, uint8_t icmp_type)
{
        struct nduseroptmsg h = {
            .nduseropt_family = AF_INET6,
            .nduseropt_opts_len = (uint16_t)opts_len,
            .nduseropt_ifindex = 7,
            .nduseropt_icmp_type = icmp_type,
        };
        struct rtattr a = {.rta_len = RTA_LENGTH(16), .rta_type = NDUSEROPT_SRCADDR};
        size_t off = 0;

        memcpy(buf, &h, sizeof(h));
        off = sizeof(h);
        memcpy(buf + off, opts, opts_len);
        off = NLMSG_ALIGN(off + opts_len);
        memcpy(buf + off, &a, sizeof(a));
        inet_pton(AF_INET6, "fe80::1", buf + off + sizeof(a));
        return off + RTA_LENGTH(16);
}

static uint8_t buf[4096];

TEST(ndopt_kernel_capture)
{
        /* Captured from kernel 6.18 (tests/fuzz/corpus/ndopt/kernel-6.18-capture.bin). */
        static const uint8_t opt[] = "\x25\x04https://192.0.2.1/capport\0\0\0\0";
        size_t n = build(buf, opt, 32, ND_ROUTER_ADVERT);
        char src[INET6_ADDRSTRLEN];
        NdUserOpt o;

        ASSERT_OK(ndopt_parse(buf, n, &o, NULL));
        ASSERT_EQ(o.ifindex, 7);
        ASSERT_TRUE(o.has_portal);
        ASSERT_STREQ(o.portal, "https://192.0.2.1/capport");
        ASSERT_TRUE(o.has_src);
        inet_ntop(AF_INET6, &o.src, src, sizeof(src));
        ASSERT_STREQ(src, "fe80::1");
}

TEST(ndopt_uri_filling_the_option)
{
        /* 2 + 14 octets: no NUL needed to reach the 8-octet boundary. */
        size_t n = build(buf, "\x25\x02https://ab.cd/", 16, ND_ROUTER_ADVERT);
        NdUserOpt o;

        ASSERT_OK(ndopt_parse(buf, n, &o, NULL));
        ASSERT_STREQ(o.portal, "https://ab.cd/");
}

TEST(ndopt_other_options_carry_no_portal)
{
        /* RDNSS (type 25), 3 units. */
        static const uint8_t rdnss[24] = {25, 3, 0, 0, 0, 0, 0x0e, 0x10};
        size_t n = build(buf, rdnss, sizeof(rdnss), ND_ROUTER_ADVERT);
        NdUserOpt o;

        ASSERT_OK(ndopt_parse(buf, n, &o, NULL));
        ASSERT_TRUE(!o.has_portal);
        n = build(buf, "\x25\x02https://ab.cd/", 16, ND_ROUTER_SOLICIT);
        ASSERT_OK(ndopt_parse(buf, n, &o, NULL));
        ASSERT_TRUE(!o.has_portal);
}

static void assert_bad(const void *opts, size_t len, const char *why)
{
        size_t n = build(buf, opts, len, ND_ROUTER_ADVERT);
        const char *reason = NULL;
        NdUserOpt o;

        ASSERT_EQ(ndopt_parse(buf, n, &o, &reason), -EBADMSG);
        ASSERT_STREQ(reason, why);
}

TEST(ndopt_malformed_options)
{
        assert_bad("\x25\x02https://x\0ZZZZ", 16,
                   "captive portal option padded with non-NUL octets");
        assert_bad("\x25\x01\0\0\0\0\0\0", 8, "captive portal option with an empty URI");
        assert_bad("\x25\x00https:", 8, "option with length 0");
        assert_bad("\x25\x02https:", 8, "option runs past the options' end");
        assert_bad("\x25\x02https:/ /x\0\0\0", 16,
                   "captive portal URI with a space, control or non-ASCII octet");
        assert_bad("\x25\x02https://\xc3\xa9\0\0\0\0", 16,
                   "captive portal URI with a space, control or non-ASCII octet");
        assert_bad("\x25\x02https://a/\0\0\0\0\x25\x02https://b/\0\0\0\0", 32,
                   "two different captive portal options");
        assert_bad("\x25", 1, "truncated option header");
}

TEST(ndopt_malformed_messages)
{
        size_t n = build(buf, "\x25\x02https://ab.cd/", 16, ND_ROUTER_ADVERT);
        const char *reason = NULL;
        struct nduseroptmsg h;
        NdUserOpt o;

        ASSERT_EQ(ndopt_parse(buf, 10, &o, &reason), -EBADMSG);
        ASSERT_STREQ(reason, "message shorter than its header");
        /* Options claimed past the end. */
        memcpy(&h, buf, sizeof(h));
        h.nduseropt_opts_len = 4000;
        memcpy(buf, &h, sizeof(h));
        ASSERT_EQ(ndopt_parse(buf, n, &o, &reason), -EBADMSG);
        ASSERT_STREQ(reason, "options run past the end of the message");
        h.nduseropt_opts_len = 16;
        h.nduseropt_family = AF_INET;
        memcpy(buf, &h, sizeof(h));
        ASSERT_EQ(ndopt_parse(buf, n, &o, &reason), -EBADMSG);
        ASSERT_STREQ(reason, "not an IPv6 message");
        /* The source address attribute cut short. */
        h.nduseropt_family = AF_INET6;
        memcpy(buf, &h, sizeof(h));
        ASSERT_EQ(ndopt_parse(buf, n - 4, &o, &reason), -EBADMSG);
        ASSERT_STREQ(reason, "attribute length out of bounds");
}
