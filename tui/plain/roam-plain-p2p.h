/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-live.h"

/* WiFi Direct in plain mode (roam-plain-p2p.c): a line per change of a peer, and the
 * commands in plain_p2p_help. */

typedef struct PlainP2p PlainP2p;

extern const char plain_p2p_help[];

int plain_p2p_new(RoamLive *live, PlainP2p **ret);
PlainP2p *plain_p2p_free(PlainP2p *pp);
/* roamd is (again) there: follow its peers on the live model's bus. */
void plain_p2p_watch(PlainP2p *pp);
/* 1 when words were a WiFi Direct command (answered), 0 when not. */
int plain_p2p_command(PlainP2p *pp, char **words);
