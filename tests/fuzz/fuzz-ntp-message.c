/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-ntp-message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is timesyncd's NTPMessage as the bus hands it over (any values), then the two
 * clocks' readings. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        NtpMessage m = {0};
        usec_t clocks[2] = {0, 0};
        char reason[160] = "";
        TimeSample s;
        int r;

        memcpy(&m, data, size < sizeof(m) ? size : sizeof(m));
        if (size > sizeof(m))
                memcpy(clocks, data + sizeof(m),
                       size - sizeof(m) < sizeof(clocks) ? size - sizeof(m) : sizeof(clocks));
        m.spike = !!((const uint8_t *)&m.spike)[0];
        r = ntp_message_to_sample(&m, 5000000, clocks[0], clocks[1], &s, reason, sizeof(reason));
        if (r == -EINVAL && !reason[0])
                abort(); /* every refusal says why */
        if (r >= 0 && (s.taken > clocks[1] || s.kind != TIME_SOURCE_NTP))
                abort();
        return 0;
}
