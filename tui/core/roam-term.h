/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Whether the terminal in $TERM can run the full-screen interface: terminfo knows it and it
 * can move the cursor (TERM=dumb cannot). 0, or logs why with the pointer to `roam --plain`
 * and returns -ENOTTY. In a file of its own: <term.h> defines capability names (tab, lines,
 * ...) as macros. */
int tui_check_terminal(void);
