/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roamd-nitz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input is what ModemManager's GetNetworkTime answered (a string); its first 8 octets also
 * feed the zone and oFono checks and the tracker, as raw integers from the bus would. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char s[256];
        const char *reason = NULL;
        NitzTime n;
        int32_t a = 0, b = 0;
        int r;

        if (size >= 8) {
                memcpy(&a, data, 4);
                memcpy(&b, data + 4, 4);
        }
        size_t len = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
        memcpy(s, data, len);
        s[len] = 0;

        r = nitz_parse_mm_time(s, size % 2 ? INT_MIN : a, &n, &reason);
        if (r < 0 && !reason)
                abort(); /* every refusal says why */
        if (r >= 0) {
                /* what is accepted keeps the promises of the header */
                if (!n.has_offset || nitz_check_offset(n.utc_offset_min, NULL) < 0)
                        abort();
                if (n.utc < (usec_t)946684800 * USEC_PER_SEC - 14 * 3600 * USEC_PER_SEC ||
                    n.utc > (usec_t)4102444800 * USEC_PER_SEC + 12 * 3600 * USEC_PER_SEC)
                        abort();
        }

        r = nitz_parse_mm_zone(true, a, size % 3 == 0, b, &n, &reason);
        if (r < 0 && !reason)
                abort();
        if (r >= 0 && (nitz_check_offset(n.utc_offset_min, NULL) < 0 || n.dst < -1 || n.dst > 2))
                abort();

        OfonoNetworkTime t = {
            .has_utc = true,
            .utc = (int64_t)a * 4,
            .has_timezone = true,
            .timezone = b,
            .has_dst = true,
            .dst = (uint32_t)(size % 5),
            .mcc = len > 10 ? s + len - 3 : NULL,
        };
        r = nitz_parse_ofono(&t, &n, &reason);
        if (r < 0 && !reason)
                abort();
        if (r >= 0 && n.mcc[0] && nitz_check_mcc(n.mcc, NULL) < 0)
                abort();

        NitzTracker tr = {0};
        for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
                uint32_t u, bt;
                memcpy(&u, data + i, 4);
                memcpy(&bt, data + i + 4, 4);
                NitzTrackVerdict v =
                    nitz_track_feed(&tr, (usec_t)u * USEC_PER_SEC, (usec_t)bt * USEC_PER_SEC);
                if (!nitz_track_verdict_to_string(v))
                        abort();
        }
        return 0;
}
