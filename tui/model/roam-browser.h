/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* The login browser of a captive portal (docs/portal.md): a text browser in the user's own
 * terminal, run as the portal-login app (ROAM_APP_PORTAL_LOGIN), which roamd lets reach the
 * captive link only, and only while the user's approval of a browser login stands. */

/* The command: given (--browser), else $ROAM_PORTAL_BROWSER, else the first entry of $BROWSER
 * (colon separated) found on PATH, else the first of lynx, w3m, elinks, links found on PATH.
 * Split at blanks (no shell); a "%s" word stands for the URL, else the URL goes last.
 * -ENOENT (logged) when there is none. */
int portal_browser_argv(const char *given, const char *url, char ***ret);

/* Forks a child that asks roamd to put it in the portal-login app (RunApp with its own
 * pidfd), then execs argv on the terminal; it never runs ungoverned (exit status 127 and a
 * message on stderr when roamd refused). stderr_fd >= 0: the child's stderr instead of ours
 * (the TUI keeps the browser's last words). Returns the child's pid and a pidfd of it. */
int portal_browser_spawn(char **argv, int stderr_fd, pid_t *ret_pid, int *ret_pidfd);

/* How the browser ended, in words: NULL for a clean exit (status 0), else "did not start
 * (exit status 127)", "failed (exit status N)" or "was killed by signal N (NAME)" in buf. */
const char *portal_browser_end_words(int status, char *buf, size_t size);

/* The last words of the browser: the last two non-empty lines of the n bytes of its stderr at
 * tail, cleaned for the terminal, joined by " / "; *ret NULL when there are none. */
int portal_browser_last_words(const char *tail, size_t n, char **ret);
