/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "roamd-dhcp-lease.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        DhcpLease l;

        /* The first byte picks the family so one corpus covers both parsers. */
        if (size < 1)
                return 0;
        if (data[0] & 1)
                (void)dhcp_lease_parse_v6(data + 1, size - 1, &l);
        else
                (void)dhcp_lease_parse_v4(data + 1, size - 1, &l);
        return 0;
}
