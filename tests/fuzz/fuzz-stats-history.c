/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "roamd-stats-history.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        StatsHistory h = {};
        uint8_t *out = NULL;
        size_t n;
        unsigned bad;

        /* whatever parses must serialize again */
        if (stats_history_parse(data, size, &h, &bad) == 0 &&
            stats_history_serialize(&h, &out, &n) == 0)
                free(out);
        stats_history_done(&h);
        return 0;
}
