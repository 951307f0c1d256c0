/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-live.h"

/* Locations in plain mode (roam --plain): when a link joins a network nobody placed yet, a
 * numbered question is printed ("Question 1: eth1 joined a network roam has not seen ... Is
 * this a home, work or public network?"), answered by typing "home 1", "work 1", "public 1" or
 * "untrusted 1" (the word alone answers the oldest question). Changes of a link's location are
 * announced as lines; "network" lists every link's location and "trust LOCATION LINK" sets
 * one. */

typedef struct PlainFw PlainFw;

extern const char plain_fw_help[];

int plain_fw_new(RoamLive *live, PlainFw **ret);
PlainFw *plain_fw_free(PlainFw *pf);
/* After a change of the model: asks what needs asking, says what changed. */
void plain_fw_model_changed(PlainFw *pf);
/* A command line split in words: 1 when it was one of ours (answered), 0 otherwise. */
int plain_fw_command(PlainFw *pf, char **words);
