/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "roamd-gpsd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is one line as gpsd (or whatever listens on its port) sends it. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char reason[160] = "";
        TimeSample s;
        int r;

        r = gpsd_tpv_to_sample((const char *)data, size, 42, &s, reason, sizeof(reason));
        if (r == -EINVAL && !reason[0])
                abort(); /* every refusal says why */
        if (r >= 0 && (s.taken != 42 || s.kind != TIME_SOURCE_GNSS || s.error == 0))
                abort();
        return 0;
}
