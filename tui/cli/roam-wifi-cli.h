/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* roam wifi [list|scan|join|forget|autoconnect|join-uri|share|enroll] ...: Wi-Fi through the daemon
 * that owns the link (org.roam1.WiFi). args are the words after "wifi" (its own options
 * among them); returns 0, a negative errno (logged), or an exit status of its own (> 0: the
 * join's, roam-wifi.h). */
int roam_wifi_run(char **args, bool json);
