/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "roam-tui.h"

/* The screens (screen-*.c): roam.c hands them to tui_run(); the core names none of them. */
extern const ScreenVTable overview_screen_vtable;
extern const ScreenVTable link_screen_vtable;
extern const ScreenVTable apps_screen_vtable;
extern const ScreenVTable portal_screen_vtable;
extern const ScreenVTable usage_screen_vtable;
extern const ScreenVTable devices_screen_vtable;
extern const ScreenVTable bluetooth_screen_vtable;
extern const ScreenVTable firewall_screen_vtable;
extern const ScreenVTable help_screen_vtable;
extern const ScreenVTable time_screen_vtable;        /* no tab: t on the overview */
extern const ScreenVTable wake_screen_vtable;        /* no tab: w on the overview */
extern const ScreenVTable wifi_screen_vtable;        /* no tab: w on a Wi-Fi link's screen */
extern const ScreenVTable wifi_enroll_screen_vtable; /* no tab: e on the Wi-Fi screen */

/* Helpers the screens share. */

/* A link's addresses as "192.0.2.10/24, 2001:db8::10/64"; all: link-local ones too. */
int screen_addresses_text(const RoamLink *l, bool all, char **ret);
/* Copies the link's portal URL to the terminal's clipboard (OSC 52), said on the status line;
 * a reaction. */
int screen_copy_url(Tui *t, const char *path);
/* Asks roamd to re-probe the link (the answer arrives later as a message); a reaction. */
int screen_reprobe(Tui *t, const char *path);

/* The personal firewall (screen-firewall.c): "Location: home (why)" and "wifi:HomeNet:...
 * (SSID HomeNet, ...)" for a link's screen; malloc'd. */
int screen_location_text(const RoamLink *l, char **ret);
int screen_network_text(const RoamLink *l, char **ret);
