/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* SAVE_CONFIG that does not leave passphrases readable by everyone. wpa_supplicant's
 * wpa_config_write() writes NAME.tmp with fopen("w") under its own umask and renames it over
 * the file; only Android builds chmod it (hostap config_file.c). Under systemd's default
 * UMask=0022 a 0600 wpa_supplicant.conf comes back 0644 (raspi-config#202). So roamd finds the
 * file (the -c of the wpa_supplicant holding the control socket roamd talks to), notes its
 * mode before, and after an OK puts back a mode that gained group or other bits, saying so.
 * The rewritten file is readable for the moment between the rename and the chmod: the
 * directory's own mode (0700 /etc/wpa_supplicant on most systems) is what closes that. */

#include <stdbool.h>

#include "roamd-client-wpa.h"

typedef struct WifiWpaSave WifiWpaSave;
/* error: 0 saved; <0 refused (update_config=0: -EROFS) or not answered. words: one sentence,
 * e.g. the restored mode, or why nothing was saved; no parentheses of its own (a join puts
 * them around it). */
typedef void (*WifiWpaSavedFn)(int error, const char *words, void *userdata);

int wifi_wpa_save(WpaClient *client, const char *prefix, const char *ifname, WifiWpaSavedFn cb,
                  void *userdata, WifiWpaSave **ret);
/* Drops a save: cb never runs. NULL-safe; returns NULL. A save that answered frees itself
 * before its callback: the caller forgets its pointer there. */
WifiWpaSave *wifi_wpa_save_free(WifiWpaSave *s);

/* The configuration file (absolute) of the wpa_supplicant that holds the control socket at
 * server and runs ifname, or -ENOENT. */
int wifi_wpa_config_path(const char *server, const char *ifname, char **ret);
