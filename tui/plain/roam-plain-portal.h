/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <systemd/sd-event.h>

#include "roam-live.h"

/* Captive portals in plain mode (roam --plain, roam-plain-portal.c): a line when a link's
 * portal session changes (its state in words, roamd's sentence, and what to type next), and
 * the commands in plain_portal_help: the sessions in full, approve, decline, log in (the
 * password on the next line, not echoed), the login browser, log off, forget. */

typedef struct PlainPortal PlainPortal;

extern const char plain_portal_help[];

/* input: plain mode's stdin source, switched off while the login browser has the terminal
 * (NULL: none). */
int plain_portal_new(RoamLive *live, sd_event_source *input, PlainPortal **ret);
PlainPortal *plain_portal_free(PlainPortal *pp);
/* roamd is (again) there: follow its portal sessions on the live model's bus. */
void plain_portal_watch(PlainPortal *pp);
/* Whether the next input line is a password plain_portal_line() must take whole. */
bool plain_portal_wants_line(PlainPortal *pp);
void plain_portal_line(PlainPortal *pp, const char *line);
/* 1 when words were a portal command (answered), 0 when not. */
int plain_portal_command(PlainPortal *pp, char **words);
