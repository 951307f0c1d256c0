/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Every configuration file roamd reads, checked together: roamd.conf, and the apps.d,
 * networks.d and firewall.d drop-ins it names (for the features it turns on). What
 * `roamd --check-config` checks, and what a reload must pass before any of it is applied
 * (docs/configuration.md). */

#include <stdbool.h>

#include "roamd-config.h"

typedef enum ConfigPart {
        CONFIG_PART_MAIN,     /* roamd.conf */
        CONFIG_PART_APPS,     /* [Apps] PolicyDirectory= */
        CONFIG_PART_FIREWALL, /* [Firewall] NetworksDirectory=, ProfilesDirectory= */
        _CONFIG_PART_MAX,
        _CONFIG_PART_INVALID = -22,
} ConfigPart;

/* Reads roamd.conf at path (missing_ok: an absent file is the built-in defaults) and checks the
 * drop-ins it names. Every error is logged as FILE:LINE. Returns 0 and the configuration in
 * *ret; or a negative errno (-EINVAL for errors in a file) with *ret_error the first
 * "FILE:LINE: message" (or what could not be read) and *ret_part the part it is in. */
int config_check_all(const char *path, bool missing_ok, Config **ret, char **ret_error,
                     ConfigPart *ret_part);
