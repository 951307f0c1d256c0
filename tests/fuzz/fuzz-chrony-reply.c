/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-chrony-cmd.h"
#include "roamd-chrony-tracking.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A datagram on roamd's socket beside chronyd's: any bytes, as the answer to the "reload
 * sources", "tracking", "how many sources" and "source data" requests of sequence 7; a
 * tracking report read is turned into a time sample, a source weighed by the rule, as roamd
 * does. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
        ChronyTracking t;
        ChronySource src;
        ChronySources sum = CHRONY_SOURCES_NONE;
        TimeSample s;
        char reason[160], ref[96], words[64];
        uint32_t n;
        int r = chrony_cmd_parse_reply(data, size, 7, &st);

        if (r >= 0 && !chrony_cmd_status_to_string(st))
                abort(); /* every answer is said in words */
        if (r != 0 && r != -EBADMSG && r != -EPROTO)
                abort();

        st = _CHRONY_CMD_STATUS_INVALID;
        r = chrony_cmd_parse_n_sources(data, size, 7, &st, &n);
        if (r != 0 && r != -EBADMSG && r != -EPROTO)
                abort();
        if (r >= 0 && !chrony_cmd_status_to_string(st))
                abort();

        st = _CHRONY_CMD_STATUS_INVALID;
        r = chrony_cmd_parse_source_data(data, size, 7, &st, &src);
        if (r != 0 && r != -EBADMSG && r != -EPROTO && r != -ENODATA)
                abort();
        if (r == 0 && st == CHRONY_CMD_SUCCESS) {
                if (src.state != _CHRONY_SOURCE_STATE_INVALID &&
                    !chrony_source_state_to_string(src.state))
                        abort();
                chrony_sources_add(&sum, &src);
                reason[0] = 0;
                r = chrony_sources_check(&sum, reason, sizeof(reason));
                if ((r != 0 && r != -EINVAL) || (r < 0) != (reason[0] != 0))
                        abort();
                if (strlen(chrony_sources_to_string(&sum, words, sizeof(words))) >= sizeof(words))
                        abort();
        }

        st = _CHRONY_CMD_STATUS_INVALID;
        r = chrony_cmd_parse_tracking(data, size, 7, &st, &t);
        if (r != 0 && r != -EBADMSG && r != -EPROTO)
                abort();
        if (r < 0 || st != CHRONY_CMD_SUCCESS)
                return 0;
        (void)chrony_tracking_reference(&t, ref, sizeof(ref));
        if (strlen(ref) >= sizeof(ref))
                abort();
        r = chrony_tracking_to_sample(&t, 1765000000000000ULL, 1765000000001000ULL, 5000000, &s,
                                      reason, sizeof(reason));
        if (r == 0 && (s.kind != TIME_SOURCE_CHRONY || s.taken != 5000000 || s.error < 1000))
                abort();
        if (r != 0 && (r != -EINVAL || !reason[0]))
                abort();
        return 0;
}
