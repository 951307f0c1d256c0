/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "roamd-http-date.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is a Date header's value as the server sent it (raw bytes, NULs included). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        uint64_t t;

        if (http_date_parse((const char *)data, size, &t) == 0 && t % 1000000 != 0)
                __builtin_trap();
        return 0;
}
