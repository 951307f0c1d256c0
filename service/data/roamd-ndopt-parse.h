/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

/* RTM_NEWNDUSEROPT messages: the kernel hands the neighbour discovery options it does not
 * consume itself (RDNSS, DNSSL, PREF64, RFC 8910 captive portal) to userspace, one message
 * per option of a Router Advertisement it accepted. */

#define ND_OPT_CAPTIVE_PORTAL_TYPE 37
/* An ND option is at most 255 units of 8 octets; two of them are type and length. */
#define NDOPT_URI_MAX (255 * 8 - 2)

typedef struct NdUserOpt {
        int ifindex;
        bool has_src;
        struct in6_addr src; /* the router's link-local address (NDUSEROPT_SRCADDR) */
        bool has_portal;
        char portal[NDOPT_URI_MAX + 1]; /* the captive portal API URI, NUL-terminated */
} NdUserOpt;

/* Parses the payload of an RTM_NEWNDUSEROPT message (after the nlmsghdr: struct
 * nduseroptmsg, the options, then attributes). Returns 0 with ret filled (has_portal false
 * when the message carries no option 37, or is about another ICMPv6 type than a Router
 * Advertisement), or -EBADMSG with *ret_reason saying what is wrong: a short header, a family
 * other than IPv6, options or attributes past the end, an option length of 0, a source
 * address attribute that is not 16 octets, or an option 37 whose URI is empty, holds octets
 * outside printable ASCII, is followed by padding that is not all NUL, or differs from
 * another option 37 in the same message. */
int ndopt_parse(const void *buf, size_t size, NdUserOpt *ret, const char **ret_reason);
