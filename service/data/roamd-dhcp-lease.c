/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <stdbool.h>

#include "roam-macro.h"
#include "roamd-dhcp-lease.h"

/* Parsing by hand: no Debian library parses stored DHCP messages (dhcpcd's own code is not a
 * library); the formats are RFC 2131/2132 and RFC 8415 TLVs and need only bounds checks. */

enum {
        BOOTP_HEADER = 236,
        BOOTP_YIADDR = 16,
        DHCP4_OPT_PAD = 0,
        DHCP4_OPT_ROUTER = 3,
        DHCP4_OPT_DNS = 6,
        DHCP4_OPT_DOMAIN = 15,
        DHCP4_OPT_NTP = 42,
        DHCP4_OPT_SERVER_ID = 54,
        DHCP4_OPT_TZ_POSIX = 100,
        DHCP4_OPT_TZ_NAME = 101,
        DHCP4_OPT_CAPTIVE = 114,
        DHCP4_OPT_SEARCH = 119,
        DHCP4_OPT_END = 255,
        DHCP6_OPT_IA_NA = 3,
        DHCP6_OPT_IAADDR = 5,
        DHCP6_OPT_DNS = 23,
        DHCP6_OPT_DOMAINS = 24,
        DHCP6_OPT_SNTP = 31,
        DHCP6_OPT_TZ_POSIX = 41,
        DHCP6_OPT_TZ_NAME = 42,
        DHCP6_OPT_NTP = 56,
        NTP_SUBOPT_SRV_ADDR = 1,
        NTP_SUBOPT_MC_ADDR = 2,
        NTP_SUBOPT_SRV_FQDN = 3,
        DHCP6_OPT_CAPTIVE = 103,
        DHCP6_REPLY = 7,
        DHCP6_ADVERTISE = 2,
};

static const uint8_t cookie[4] = {99, 130, 83, 99};

static bool printable(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (p[i] < 0x21 || p[i] > 0x7e)
                        return false;
        return true;
}

static int copy_string(const uint8_t *p, size_t n, char *dst, size_t size)
{
        /* Some servers NUL-terminate strings; accept one trailing NUL. */
        if (n > 0 && p[n - 1] == 0)
                n--;
        if (n == 0 || n >= size || !printable(p, n))
                return -EBADMSG;
        memcpy(dst, p, n);
        dst[n] = 0;
        return 0;
}

/* RFC 4833 options: a malformed one is dropped (the string stays ""), not the lease. The
 * characters are those of tzdb names and POSIX TZ strings; roamd-timezone.c checks more. */
static void copy_tz(const uint8_t *p, size_t n, char *dst, size_t size)
{
        dst[0] = 0;
        if (copy_string(p, n, dst, size) < 0)
                return;
        for (const char *c = dst; *c; c++)
                if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                      (*c >= '0' && *c <= '9') || strchr("_+-/:,.<>", *c))) {
                        dst[0] = 0;
                        return;
                }
}

static void add_addr(IpAddr *arr, size_t *n, size_t max, int family, const uint8_t *raw)
{
        if (*n >= max)
                return;
        arr[*n].family = family;
        if (inet_ntop(family, raw, arr[*n].text, sizeof(arr[*n].text)))
                (*n)++;
}

/* s appended to a list of names (search domains, NTP servers) unless there or the list full */
static void add_name(char (*list)[DHCP_LEASE_DOMAIN_MAX], size_t *n, size_t max, const char *s)
{
        if (*n >= max)
                return;
        for (size_t i = 0; i < *n; i++)
                if (streq(list[i], s))
                        return;
        snprintf(list[(*n)++], DHCP_LEASE_DOMAIN_MAX, "%s", s);
}

static void add_domain(DhcpLease *l, const char *d)
{
        add_name(l->domains, &l->n_domains, DHCP_LEASE_MAX_DOMAINS, d);
}

static void add_ntp(DhcpLease *l, const char *s)
{
        add_name(l->ntp, &l->n_ntp, DHCP_LEASE_MAX_NTP, s);
}

/* A list of addresses of one family (DHCPv4 option 42, DHCPv6 option 31): the whole option or
 * nothing. */
static int add_ntp_addrs(DhcpLease *l, int family, const uint8_t *o, size_t n)
{
        size_t w = family == AF_INET ? 4 : 16;
        char text[INET6_ADDRSTRLEN];

        if (n == 0 || n % w != 0)
                return -EBADMSG;
        for (size_t k = 0; k < n; k += w)
                if (inet_ntop(family, o + k, text, sizeof(text)))
                        add_ntp(l, text);
        return 0;
}

int dhcp_lease_parse_v4(const uint8_t *buf, size_t len, DhcpLease *ret)
{
        DhcpLease l = {.family = AF_INET};
        size_t i;

        if (len < BOOTP_HEADER + sizeof(cookie) || buf[0] != 2 /* BOOTREPLY */ ||
            memcmp(buf + BOOTP_HEADER, cookie, sizeof(cookie)) != 0)
                return -EBADMSG;

        if (memcmp(buf + BOOTP_YIADDR, "\0\0\0\0", 4) != 0)
                add_addr(l.addrs, &l.n_addrs, DHCP_LEASE_MAX_ADDRS, AF_INET, buf + BOOTP_YIADDR);

        for (i = BOOTP_HEADER + sizeof(cookie); i < len;) {
                uint8_t code = buf[i], olen;
                const uint8_t *o;
                char tmp[DHCP_LEASE_URL_MAX];

                if (code == DHCP4_OPT_PAD) {
                        i++;
                        continue;
                }
                if (code == DHCP4_OPT_END)
                        break;
                if (i + 2 > len)
                        return -EBADMSG;
                olen = buf[i + 1];
                if (i + 2 + olen > len)
                        return -EBADMSG;
                o = buf + i + 2;
                i += 2u + olen;

                switch (code) {
                case DHCP4_OPT_ROUTER:
                        if (olen == 0 || olen % 4 != 0)
                                return -EBADMSG;
                        l.has_router = true;
                        break;
                case DHCP4_OPT_DNS:
                        if (olen % 4 != 0)
                                return -EBADMSG;
                        for (size_t k = 0; k < olen; k += 4)
                                add_addr(l.dns, &l.n_dns, DHCP_LEASE_MAX_DNS, AF_INET, o + k);
                        break;
                case DHCP4_OPT_DOMAIN:
                        if (copy_string(o, olen, tmp, DHCP_LEASE_DOMAIN_MAX) < 0)
                                return -EBADMSG;
                        add_domain(&l, tmp);
                        break;
                case DHCP4_OPT_CAPTIVE:
                        if (copy_string(o, olen, l.captive_portal, sizeof(l.captive_portal)) < 0)
                                return -EBADMSG;
                        break;
                case DHCP4_OPT_TZ_NAME:
                        copy_tz(o, olen, l.tz_name, sizeof(l.tz_name));
                        break;
                case DHCP4_OPT_TZ_POSIX:
                        copy_tz(o, olen, l.tz_posix, sizeof(l.tz_posix));
                        break;
                case DHCP4_OPT_NTP:
                        (void)add_ntp_addrs(&l, AF_INET, o, olen);
                        break;
                case DHCP4_OPT_SERVER_ID:
                        if (olen != 4)
                                return -EBADMSG;
                        l.server_id.family = AF_INET;
                        inet_ntop(AF_INET, o, l.server_id.text, sizeof(l.server_id.text));
                        break;
                default:
                        break;
                }
        }
        *ret = l;
        return 0;
}

/* One RFC 1035 wire-format name without compression (RFC 8415 section 10) at p[*i]. */
static int parse_name(const uint8_t *p, size_t n, size_t *i,
                      char name[static DHCP_LEASE_DOMAIN_MAX])
{
        size_t pos = 0;

        for (;;) {
                uint8_t lab;

                if (*i >= n)
                        return -EBADMSG;
                lab = p[(*i)++];
                if (lab == 0)
                        break;
                if (lab > 63 || *i + lab > n || pos + lab + 2 > DHCP_LEASE_DOMAIN_MAX ||
                    !printable(p + *i, lab))
                        return -EBADMSG;
                if (pos > 0)
                        name[pos++] = '.';
                memcpy(name + pos, p + *i, lab);
                pos += lab;
                *i += lab;
        }
        if (pos == 0)
                return -EBADMSG;
        name[pos] = 0;
        return 0;
}

static int parse_domain_list(const uint8_t *p, size_t n, DhcpLease *l)
{
        size_t i = 0;

        while (i < n) {
                char name[DHCP_LEASE_DOMAIN_MAX];

                if (parse_name(p, n, &i, name) < 0)
                        return -EBADMSG;
                add_domain(l, name);
        }
        return 0;
}

/* RFC 5908: suboptions, each a server address, a multicast address (not a server: left out)
 * or a server's FQDN; others are skipped. The whole option or nothing. */
static int parse_ntp_v6(const uint8_t *p, size_t n, DhcpLease *l)
{
        DhcpLease t = {};

        if (n == 0)
                return -EBADMSG;
        for (size_t i = 0; i < n;) {
                uint16_t code, olen;
                size_t k = 0;
                char name[DHCP_LEASE_DOMAIN_MAX];

                if (i + 4 > n)
                        return -EBADMSG;
                code = (uint16_t)(p[i] << 8 | p[i + 1]);
                olen = (uint16_t)(p[i + 2] << 8 | p[i + 3]);
                if (i + 4 + olen > n)
                        return -EBADMSG;
                switch (code) {
                case NTP_SUBOPT_SRV_ADDR:
                        if (olen != 16 || add_ntp_addrs(&t, AF_INET6, p + i + 4, olen) < 0)
                                return -EBADMSG;
                        break;
                case NTP_SUBOPT_MC_ADDR:
                        if (olen != 16)
                                return -EBADMSG;
                        break;
                case NTP_SUBOPT_SRV_FQDN:
                        if (parse_name(p + i + 4, olen, &k, name) < 0 || k != olen)
                                return -EBADMSG;
                        add_ntp(&t, name);
                        break;
                default: /* a suboption of later RFCs: not ours */
                        break;
                }
                i += 4u + olen;
        }
        for (size_t i = 0; i < t.n_ntp; i++)
                add_ntp(l, t.ntp[i]);
        return 0;
}

static int parse_ia_na(const uint8_t *p, size_t n, DhcpLease *l)
{
        /* IAID, T1, T2, then options. */
        for (size_t i = 12; i < n;) {
                uint16_t code, olen;

                if (i + 4 > n)
                        return -EBADMSG;
                code = (uint16_t)(p[i] << 8 | p[i + 1]);
                olen = (uint16_t)(p[i + 2] << 8 | p[i + 3]);
                if (i + 4 + olen > n)
                        return -EBADMSG;
                if (code == DHCP6_OPT_IAADDR) {
                        if (olen < 24)
                                return -EBADMSG;
                        add_addr(l->addrs, &l->n_addrs, DHCP_LEASE_MAX_ADDRS, AF_INET6, p + i + 4);
                }
                i += 4u + olen;
        }
        return n < 12 ? -EBADMSG : 0;
}

int dhcp_lease_parse_v6(const uint8_t *buf, size_t len, DhcpLease *ret)
{
        DhcpLease l = {.family = AF_INET6};

        if (len < 4 || (buf[0] != DHCP6_REPLY && buf[0] != DHCP6_ADVERTISE))
                return -EBADMSG;

        for (size_t i = 4; i < len;) {
                uint16_t code, olen;
                const uint8_t *o;
                int r = 0;

                if (i + 4 > len)
                        return -EBADMSG;
                code = (uint16_t)(buf[i] << 8 | buf[i + 1]);
                olen = (uint16_t)(buf[i + 2] << 8 | buf[i + 3]);
                if (i + 4 + olen > len)
                        return -EBADMSG;
                o = buf + i + 4;
                i += 4u + olen;

                switch (code) {
                case DHCP6_OPT_IA_NA:
                        r = parse_ia_na(o, olen, &l);
                        break;
                case DHCP6_OPT_DNS:
                        if (olen % 16 != 0)
                                return -EBADMSG;
                        for (size_t k = 0; k < olen; k += 16)
                                add_addr(l.dns, &l.n_dns, DHCP_LEASE_MAX_DNS, AF_INET6, o + k);
                        break;
                case DHCP6_OPT_DOMAINS:
                        r = parse_domain_list(o, olen, &l);
                        break;
                case DHCP6_OPT_CAPTIVE:
                        r = copy_string(o, olen, l.captive_portal, sizeof(l.captive_portal));
                        break;
                case DHCP6_OPT_TZ_NAME:
                        copy_tz(o, olen, l.tz_name, sizeof(l.tz_name));
                        break;
                case DHCP6_OPT_TZ_POSIX:
                        copy_tz(o, olen, l.tz_posix, sizeof(l.tz_posix));
                        break;
                case DHCP6_OPT_NTP:
                        (void)parse_ntp_v6(o, olen, &l);
                        break;
                case DHCP6_OPT_SNTP:
                        (void)add_ntp_addrs(&l, AF_INET6, o, olen);
                        break;
                default:
                        break;
                }
                if (r < 0)
                        return r;
        }
        *ret = l;
        return 0;
}
