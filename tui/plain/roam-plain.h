/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

/* `roam --plain`: a line-oriented mode for screen readers and braille displays. Prints the
 * state, then one line per change ("14:02:11 wlan0: portal -> online"), and reads commands
 * from stdin line by line (help, status, links, link NAME, reprobe NAME, quit). */
int plain_run(void);
