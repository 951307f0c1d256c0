/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roam-wifi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An SSID is any bytes from the radio (tui/model/roam-wifi.c): what roam shows of it is valid
 * UTF-8 with no control and no invisible or reordering character, at most four bytes for each
 * byte in, and the same bytes give the same text. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        _cleanup_free_ char *shown = NULL, *again = NULL;

        if (wifi_ssid_display(data, size, &shown) < 0 || !roam_text_is_clean(shown, 0) ||
            !roam_text_is_clean(shown, ROAM_TEXT_STRICT) || strlen(shown) > 4 * size + 16)
                abort();
        if (size == 0 && strcmp(shown, "(hidden network)") != 0)
                abort();
        if (wifi_ssid_display(data, size, &again) < 0 || strcmp(shown, again) != 0)
                abort();
        return 0;
}
