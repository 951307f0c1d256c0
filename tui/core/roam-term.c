/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include <curses.h>
#include <term.h>

#include "roam-log.h"
#include "roam-term.h"
#include "roam-util.h"

int tui_check_terminal(void)
{
        const char *term = getenv("TERM");
        bool ok = false;
        int err = 0;

        /* TERM=dumb (an editor's shell buffer, a CI log) would get escape sequences it prints
         * as text: refused like a TERM terminfo does not know. */
        if (term && *term && setupterm((char *)term, STDOUT_FILENO, &err) == OK) {
                const char *cup = tigetstr((char *)"cup");

                ok = cup && cup != (const char *)-1;
                (void)del_curterm(cur_term);
        }
        if (!ok)
                return log_error_errno(ENOTTY,
                                       "Cannot start the full-screen interface on TERM=%s. Try "
                                       "'roam --plain' or 'roam status'.",
                                       strempty(term));
        return 0;
}
