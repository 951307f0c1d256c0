/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <systemd/sd-bus.h>

#include "roam-bus-model.h"
#include "roam-json.h"

/* The personal firewall's commands (docs/firewall.md): `roam network`, `roam network trust`,
 * `roam firewall` and `roam firewall check`; what they show is in roam-firewall.h. */

/* The verbs: args are what follows `roam network` / `roam firewall`; app: --app of `roam
 * firewall check`, NULL when not given. */
int roam_network_run(char **args, bool json);
int roam_firewall_run(char **args, const char *app, bool json);
