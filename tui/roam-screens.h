/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-tui.h"

/* Helpers the screens share. */

/* A link's addresses as "192.0.2.10/24, 2001:db8::10/64"; all: link-local ones too. */
int screen_addresses_text(const RoamLink *l, bool all, char **ret);
/* Where to log in when the link is behind a portal, else NULL. */
const char *screen_portal_url(const RoamLink *l);
/* Copies the link's portal URL to the terminal's clipboard (OSC 52), said on the status line;
 * a reaction. */
int screen_copy_url(Tui *t, const char *path);
/* Asks roamd to re-probe the link (the answer arrives later as a message); a reaction. */
int screen_reprobe(Tui *t, const char *path);

/* The personal firewall (screen-firewall.c): "Location: home (why)" and "wifi:HomeNet:...
 * (SSID HomeNet, ...)" for a link's screen; malloc'd. */
int screen_location_text(const RoamLink *l, char **ret);
int screen_network_text(const RoamLink *l, char **ret);
