/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stddef.h>
#include <stdint.h>

#include "roam-log.h"
#include "roamd-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void quiet(int level, const char *msg, void *userdata)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        Config *c = NULL;

        log_set_sink(quiet, NULL);
        if (config_parse_string("fuzz.conf", (const char *)data, size, &c) >= 0) {
                /* Exercise the lookups on whatever was accepted. */
                (void)config_bearer_override(c, "wlan0");
                (void)config_dns_pin(c, "eth0");
        }
        config_free(c);
        return 0;
}
