/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

/* `roam p2p ...` (docs/wifi-direct.md): WiFi Direct from the command line.
 *
 *   roam p2p find [SECONDS]          search (30 s by default), naming peers as they appear
 *   roam p2p peers                   the peers roamd knows
 *   roam p2p connect PEER [push-button | show-pin | pin]
 *   roam p2p accept PEER             an incoming request
 *   roam p2p reject PEER
 *   roam p2p disconnect PEER
 *
 * PEER is a device address or a name as `roam p2p peers` shows it. connect and accept wait
 * until the peer is connected or the attempt failed (at most two minutes, WPS's walk time).
 * args: what follows "p2p". Returns 0 or a negative errno (logged); -EINVAL for a usage error
 * (logged), -EHOSTDOWN when roamd is not running. pin_file: where the PIN the peer shows is
 * read (NULL or "-": standard input); never argv, which every local user reads. */
int roam_p2p_run(char **args, bool json, const char *pin_file);
