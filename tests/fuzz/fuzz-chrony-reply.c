/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "roamd-chrony-cmd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A datagram on roamd's socket beside chronyd's: any bytes, for the request of sequence 7. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
        int r = chrony_cmd_parse_reply(data, size, 7, &st);

        if (r >= 0 && !chrony_cmd_status_to_string(st))
                abort(); /* every answer is said in words */
        if (r != 0 && r != -EBADMSG && r != -EPROTO)
                abort();
        return 0;
}
