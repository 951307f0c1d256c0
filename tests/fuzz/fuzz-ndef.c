/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "roamd-ndef.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        NdefHandover h;
        BtOob o;
        WscInfo w;
        char err[NDEF_ERROR_MAX];

        /* The whole message path (records, chunks, handover, carriers), then the carrier
         * parsers on their own so that their branches are reached without a valid wrapper. */
        (void)ndef_handover_parse(data, size, &h, err, sizeof(err));
        if (size < 1)
                return 0;
        switch (data[0] % 3) {
        case 0:
                (void)ndef_bt_oob_parse(data + 1, size - 1, false, &o, err, sizeof(err));
                break;
        case 1:
                (void)ndef_bt_oob_parse(data + 1, size - 1, true, &o, err, sizeof(err));
                break;
        default:
                (void)ndef_wsc_parse(data + 1, size - 1, &w, err, sizeof(err));
        }
        return 0;
}
