/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "roam-live.h"

/* Wi-Fi in plain mode (roam --plain, roam-plain-wifi.c): "wifi [LINK]" lists the networks
 * one a line, "wifi scan", "wifi join NAME", "wifi forget NAME", "wifi autoconnect NAME
 * on|off" act on the only Wi-Fi link (or "wifi LINK join NAME"); a join's steps, the
 * passphrase it asks for (the next line, not echoed), a refused one asked again, and its end
 * come as lines. */

typedef struct PlainWifi PlainWifi;

extern const char plain_wifi_help[];

int plain_wifi_new(RoamLive *live, PlainWifi **ret);
PlainWifi *plain_wifi_free(PlainWifi *pw);
/* 1 when words were a wifi command (answered), 0 when not. */
int plain_wifi_command(PlainWifi *pw, char **words);
/* A passphrase is asked for: the next input line is it (whole, never split or echoed). */
bool plain_wifi_wants_line(PlainWifi *pw);
void plain_wifi_line(PlainWifi *pw, const char *line);
