/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-nat64-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is a DNS64's AAAA answers for ipv4only.arpa, 16 octets each (what c-ares hands
 * over); a trailing partial address is dropped. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct in6_addr a[64];
        size_t n = size / 16 < 64 ? size / 16 : 64;
        char buf[NAT64_PREFIX_STRLEN];
        const char *why = NULL;
        Nat64Prefix p;

        memcpy(a, data, n * 16);
        if (nat64_prefix_find(a, n, &p, &why) < 0)
                return 0;
        /* What is accepted keeps the header's promises: a known length, no bits past it. */
        if (p.plen != 32 && p.plen != 40 && p.plen != 48 && p.plen != 56 && p.plen != 64 &&
            p.plen != 96)
                abort();
        for (unsigned i = p.plen / 8; i < 16; i++)
                if (p.prefix.s6_addr[i])
                        abort();
        if (!nat64_prefix_to_string(&p, buf)[0] || !strchr(buf, '/'))
                abort();
        return 0;
}
