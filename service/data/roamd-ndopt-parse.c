/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/icmp6.h>
#include <string.h>
#include <sys/socket.h>

#include "roamd-ndopt-parse.h"

static int bad(const char **ret_reason, const char *why)
{
        if (ret_reason)
                *ret_reason = why;
        return -EBADMSG;
}

/* RFC 8910 2.3: the URI, then NUL octets up to the option's 8-octet boundary. A URI is
 * printable ASCII without spaces (RFC 3986 2); no NUL may be followed by anything else. */
static int parse_portal(const uint8_t *p, size_t n, char *out, const char **ret_reason)
{
        size_t len = 0;

        while (len < n && p[len] != 0)
                len++;
        if (len == 0)
                return bad(ret_reason, "captive portal option with an empty URI");
        for (size_t i = len; i < n; i++)
                if (p[i] != 0)
                        return bad(ret_reason, "captive portal option padded with non-NUL octets");
        for (size_t i = 0; i < len; i++)
                if (p[i] <= 0x20 || p[i] >= 0x7f)
                        return bad(ret_reason,
                                   "captive portal URI with a space, control or non-ASCII octet");
        memcpy(out, p, len);
        out[len] = 0;
        return 0;
}

int ndopt_parse(const void *buf, size_t size, NdUserOpt *ret, const char **ret_reason)
{
        const uint8_t *b = buf;
        struct nduseroptmsg h;
        size_t off, end;
        char uri[NDOPT_URI_MAX + 1];

        *ret = (NdUserOpt){};
        if (size < sizeof(h))
                return bad(ret_reason, "message shorter than its header");
        memcpy(&h, b, sizeof(h));
        if (h.nduseropt_family != AF_INET6)
                return bad(ret_reason, "not an IPv6 message");
        if (h.nduseropt_ifindex <= 0)
                return bad(ret_reason, "no interface index");
        if (h.nduseropt_opts_len > size - sizeof(h))
                return bad(ret_reason, "options run past the end of the message");
        ret->ifindex = h.nduseropt_ifindex;

        /* Options: type, length in units of 8 octets (RFC 4861 4.6), body. */
        off = sizeof(h);
        end = off + h.nduseropt_opts_len;
        while (off < end) {
                size_t olen;

                if (end - off < 2)
                        return bad(ret_reason, "truncated option header");
                olen = (size_t)b[off + 1] * 8;
                if (olen == 0)
                        return bad(ret_reason, "option with length 0");
                if (olen > end - off)
                        return bad(ret_reason, "option runs past the options' end");
                if (b[off] == ND_OPT_CAPTIVE_PORTAL_TYPE) {
                        int r = parse_portal(b + off + 2, olen - 2, uri, ret_reason);
                        if (r < 0)
                                return r;
                        if (ret->has_portal && strcmp(ret->portal, uri) != 0)
                                return bad(ret_reason, "two different captive portal options");
                        strcpy(ret->portal, uri);
                        ret->has_portal = true;
                }
                off += olen;
        }

        /* Attributes, from the next 4-octet boundary. */
        off = NLMSG_ALIGN(end);
        while (off < size) {
                struct rtattr a;

                if (size - off < sizeof(a))
                        return bad(ret_reason, "truncated attribute");
                memcpy(&a, b + off, sizeof(a));
                if (a.rta_len < sizeof(a) || a.rta_len > size - off)
                        return bad(ret_reason, "attribute length out of bounds");
                if (a.rta_type == NDUSEROPT_SRCADDR) {
                        if (a.rta_len != sizeof(a) + sizeof(struct in6_addr))
                                return bad(ret_reason, "source address is not 16 octets");
                        memcpy(&ret->src, b + off + sizeof(a), sizeof(struct in6_addr));
                        ret->has_src = true;
                }
                off += RTA_ALIGN(a.rta_len);
        }

        /* The kernel sends these for Router Advertisements only; anything else carries no
         * portal for us. */
        if (h.nduseropt_icmp_type != ND_ROUTER_ADVERT || h.nduseropt_icmp_code != 0)
                ret->has_portal = false;
        return 0;
}
