/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>

typedef enum DnsSource {
        DNS_SOURCE_NONE,
        DNS_SOURCE_CONFIG,
        DNS_SOURCE_RESOLVED,
        DNS_SOURCE_NETWORKMANAGER,
        DNS_SOURCE_DHCPCD,
        DNS_SOURCE_RESOLV_CONF,
        _DNS_SOURCE_MAX,
        _DNS_SOURCE_INVALID = -EINVAL,
} DnsSource;

const char *dns_source_to_string(DnsSource s);
DnsSource dns_source_from_string(const char *s);
