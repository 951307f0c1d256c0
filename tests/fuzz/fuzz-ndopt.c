/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-ndopt-parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The whole input is the payload of an RTM_NEWNDUSEROPT message (what follows nlmsghdr). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const char *reason = NULL;
        NdUserOpt o;
        int r = ndopt_parse(data, size, &o, &reason);

        if (r < 0 && !reason)
                abort(); /* every refusal says why: roamd logs it */
        if (r >= 0 && o.has_portal) {
                /* What is accepted keeps the promises of the header. */
                size_t n = strnlen(o.portal, sizeof(o.portal));
                if (n == 0 || n > NDOPT_URI_MAX || o.ifindex <= 0)
                        abort();
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char)o.portal[i] <= 0x20 ||
                            (unsigned char)o.portal[i] >= 0x7f)
                                abort();
        }
        return 0;
}
