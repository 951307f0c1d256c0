/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <systemd/sd-bus.h>

#include "roam-portal-session.h"

/* `roam portal`: captive portal sessions (org.roam1.Portal, docs/portal.md); the sessions
 * themselves are in roam-portal-session.h. */

int roam_portal_print_text(const RoamPortalSession *s, size_t n, uint64_t now_usec, FILE *f);

/* The verb: args are what follows `roam portal`. */
int roam_portal_run(char **args, bool json);
