/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* `roam portal browse` and `roam portal extend`: the login browser (roam-browser.h) in the
 * foreground. */

/* `roam portal browse [--browser CMD] [LINK]`: approves when needed, runs the browser in the
 * foreground at the portal's page, then asks roamd to check the link again and says what it
 * is. extend (`roam portal extend`): asks roamd to let the browser extend an RFC 8908 session
 * instead, and opens the network's user-portal-url. */
int portal_browser_run(sd_bus *bus, const char *link, const char *browser, bool extend);
