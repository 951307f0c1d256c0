/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roam-browser.h"
#include "roam-bus-model.h"
#include "roam-props.h"
#include "roam-run-app.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-portal-browser.h"
#include "roam-portal-session.h"
#include "roam-text.h"
#include "roam-util.h"

/* How long `roam portal browse` waits for roamd to read the portal's page, and for the
 * round that checks the link after the browser. */
#define WAIT_USEC (15 * USEC_PER_SEC)

/* ---- roam portal browse ---- */

static int find_session(sd_bus *bus, const char *link, RoamPortalSession **ret_all, size_t *ret_n,
                        RoamPortalSession **ret)
{
        int r = roam_portal_sessions_get(bus, ret_all, ret_n);

        if (r < 0)
                return r;
        *ret = NULL;
        for (size_t i = 0; i < *ret_n; i++)
                if (streq((*ret_all)[i].link, link))
                        *ret = &(*ret_all)[i];
        return 0;
}

/* Waits for the next message of a match (or the deadline); 0 at the deadline. */
static int wait_bus(sd_bus *bus, uint64_t deadline)
{
        int r;

        for (;;) {
                uint64_t now = clock_now_usec(CLOCK_MONOTONIC);
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        return 1;
                if (now >= deadline)
                        return 0;
                r = sd_bus_wait(bus, deadline - now);
                if (r < 0 && r != -EINTR)
                        return r;
        }
}

/* The link's last probe round and its verdict: the link read with one GetAll. */
static int get_link_probe(sd_bus *bus, const char *path, uint64_t *ret_probe, char **ret_verdict)
{
        _cleanup_(roam_link_freep) RoamLink *l = NULL;
        int r;

        r = roam_link_new(path, &l);
        if (r >= 0)
                r = roam_props_get_all(bus, path, ROAM_LINK_INTERFACE, roam_link_read, l, NULL);
        if (r < 0)
                return r;
        *ret_probe = l->last_probe;
        if (ret_verdict) {
                *ret_verdict = strdup(l->connectivity);
                if (!*ret_verdict)
                        return -ENOMEM;
        }
        return 0;
}

int portal_browser_run(sd_bus *bus, const char *link, const char *browser, bool extend)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *match = NULL;
        _cleanup_free_ char *path = NULL, *url = NULL, *verdict = NULL;
        RoamPortalSession *all = NULL, *s = NULL;
        char **argv = NULL;
        uint64_t deadline, probe = 0, probe_after = 0;
        size_t n = 0;
        pid_t pid;
        int pidfd, status, r;
        bool browser_failed = false;
        const char *p;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetLinkByName", &error, &reply, "s", link);
        if (r < 0)
                return log_error_errno(r, "No link %s: %s", link,
                                       error.message ? error.message : strerror(-r));
        r = sd_bus_message_read(reply, "o", &p);
        if (r < 0 || !(path = strdup(p)))
                return log_oom();
        /* Every change of the portal object wakes the waits below. */
        r = sd_bus_match_signal(bus, &match, ROAM_BUS_NAME, NULL, "org.freedesktop.DBus.Properties",
                                "PropertiesChanged", NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Cannot follow roamd: %m");

        r = find_session(bus, link, &all, &n, &s);
        if (r < 0)
                return r;
        if (!s) {
                roam_portal_sessions_free(all, n);
                log_error("%s is not behind a captive portal.", link);
                return -ENOENT;
        }
        if (extend) {
                roam_portal_sessions_free(all, n);
                all = NULL;
                r = roam_portal_action(bus, "extend", link, false);
                if (r < 0)
                        return r;
                r = find_session(bus, link, &all, &n, &s);
                if (r < 0)
                        return r;
                if (!s || !s->browser_login || !s->user_portal_url) {
                        roam_portal_sessions_free(all, n);
                        log_error("%s: roamd did not let the browser extend the session.", link);
                        return -EBUSY;
                }
                url = strdup(s->user_portal_url);
                roam_portal_sessions_free(all, n);
                if (!url)
                        return log_oom();
                goto run;
        }
        if (!s->approved || streq(s->state, "waiting") || streq(s->state, "declined") ||
            streq(s->state, "failed") || streq(s->state, "logged-off")) {
                roam_portal_sessions_free(all, n);
                all = NULL;
                r = roam_portal_action(bus, "approve", link, false);
                if (r < 0)
                        return r;
                r = find_session(bus, link, &all, &n, &s);
                if (r < 0)
                        return r;
        }
        /* Approval of a page not read yet continues once it is. */
        deadline = clock_now_usec(CLOCK_MONOTONIC) + WAIT_USEC;
        while (s && streq(s->state, "discovering")) {
                roam_portal_sessions_free(all, n);
                all = NULL;
                r = wait_bus(bus, deadline);
                if (r <= 0)
                        break;
                r = find_session(bus, link, &all, &n, &s);
                if (r < 0)
                        return r;
        }
        if (!s || !streq(s->state, "browser")) {
                if (s && s->wispr)
                        log_error("%s offers automatic login (WISPr): log in with 'roam portal "
                                  "login --user NAME --password-file FILE'.",
                                  link);
                else
                        log_error("%s: the captive portal is %s, not waiting for a browser.", link,
                                  s ? roam_portal_state_words(s->state) : "gone");
                roam_portal_sessions_free(all, n);
                return -EBUSY;
        }
        url = strdup(s->portal_url ? s->portal_url : "");
        roam_portal_sessions_free(all, n);
        if (!url)
                return log_oom();
        if (!*url) {
                log_error("roamd knows no login page for %s.", link);
                return -ENOENT;
        }

run:
        r = portal_browser_argv(browser, url, &argv);
        if (r < 0)
                return r;
        printf("%s: opening %s in %s (as app %s: the captive link only)\n", link, url, argv[0],
               ROAM_APP_PORTAL_LOGIN);
        r = portal_browser_spawn(argv, -1, &pid, &pidfd);
        strv_free(argv);
        if (r < 0)
                return r;
        close(pidfd);
        /* As system() does: the terminal's Ctrl-C and Ctrl-\ are the browser's. */
        {
                struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
                sigaction(SIGINT, &ign, &old_int);
                sigaction(SIGQUIT, &ign, &old_quit);
                while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                        ;
                sigaction(SIGINT, &old_int, NULL);
                sigaction(SIGQUIT, &old_quit, NULL);
        }
        if (r < 0)
                return log_error_errno(errno, "Cannot wait for the browser: %m");
        if (WIFEXITED(status) && WEXITSTATUS(status) == ROAM_RUN_EXEC_FAILED)
                return -ENOEXEC;
        {
                char words[96];
                browser_failed = portal_browser_end_words(status, words, sizeof(words));
                if (browser_failed)
                        log_error("%s: the login browser %s.", link, words);
        }

        /* Logged in or not: a probe round says, now rather than at the next re-check. */
        (void)get_link_probe(bus, path, &probe, NULL);
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, path, ROAM_LINK_INTERFACE, "Reprobe", &error,
                               NULL, NULL);
        if (r < 0)
                return log_error_errno(r, "Cannot ask roamd to check %s again: %s", link,
                                       error.message ? error.message : strerror(-r));
        deadline = clock_now_usec(CLOCK_MONOTONIC) + WAIT_USEC;
        for (;;) {
                r = get_link_probe(bus, path, &probe_after, NULL);
                if (r < 0 || probe_after != probe)
                        break;
                r = wait_bus(bus, deadline);
                if (r <= 0)
                        break;
        }
        r = get_link_probe(bus, path, &probe_after, &verdict);
        if (r < 0)
                return log_error_errno(r, "Cannot read %s: %m", link);
        if (extend) {
                r = find_session(bus, link, &all, &n, &s);
                if (r >= 0 && s) {
                        char left[64];
                        struct timespec ts;
                        clock_gettime(CLOCK_REALTIME, &ts);
                        roam_portal_time_left(
                            s, (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000,
                            left, sizeof(left));
                        printf("%s: %s; session %s.\n", link, verdict,
                               *left ? left : "time unknown");
                }
                roam_portal_sessions_free(all, n);
        } else if (streq(verdict, "online"))
                printf("%s: online. The login browser's access ended; every app follows its own "
                       "policy.\n",
                       link);
        else if (probe_after == probe)
                printf("%s: still being checked; 'roam portal' shows the result.\n", link);
        else
                printf("%s: %s (not logged in yet: 'roam portal browse' opens the page again)\n",
                       link, verdict);
        /* A browser that failed is a failure (1), unless the link is online all the same. */
        return browser_failed && !streq(verdict, "online") ? -ECHILD : 0;
}
