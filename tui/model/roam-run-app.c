/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-log.h"
#include "roam-polkit-agent.h"
#include "roam-run-app.h"
#include "roam-util.h"

/* Logs why roamd refused a call about app id; what: "change", "show", ... Returns a negative
 * errno (-EHOSTDOWN when roamd is not running). */
int roam_app_log_call_error(const sd_bus_error *error, int r, const char *id, const char *what,
                            const char *denied)
{
        if (roam_bus_error_is_denied(error)) {
                char why[256];

                log_error("%s: %s", denied, roam_bus_denied_reason(error, why, sizeof(why)));
                return -EACCES;
        }
        if (sd_bus_error_has_name(error, ROAM_ERROR_NO_SUCH_APP)) {
                log_error("no app '%s' (roam apps lists them)", id);
                return -ENOENT;
        }
        /* roamd's own words name the problem ("unknown key 'foo' (known: ...)"): as they are. */
        if (sd_bus_error_has_names(error, ROAM_ERROR_INVALID_ARGS, ROAM_ERROR_FAILED) &&
            error->message && *error->message)
                return log_error_errno(r, "cannot %s %s: %s", what, id, error->message);
        if (sd_bus_error_is_set(error) &&
            !sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                    SD_BUS_ERROR_NAME_HAS_NO_OWNER, SD_BUS_ERROR_NO_REPLY,
                                    SD_BUS_ERROR_TIMEOUT)) {
                return log_error_errno(r, "cannot %s %s: %s (%s)", what, id,
                                       error->message ? error->message : "no message", error->name);
        }
        return roam_bus_log_call_error(error, r, "ask roamd");
}

int roam_run_app(const char *id, uint64_t online_for_usec, char *const *argv)
{
        return roam_run_app_full(id, online_for_usec, argv, NULL, NULL);
}

int roam_run_app_full(const char *id, uint64_t online_for_usec, char *const *argv,
                      int (*before_exec)(void *userdata), void *userdata)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int pidfd = -EBADF;
        _cleanup_free_ char *what = NULL;
        const char *cgroup;
        int r;

        r = roam_bus_connect(&bus);
        if (r >= 0)
                r = roam_bus_may_ask(bus);
        if (r < 0)
                return r;
        /* RunApp would make a new app of a typo: only apps roamd knows, new ones are made on
         * purpose (with their policy) by `roam app ID set`. The login browser's app is roamd's
         * own, made when first run. */
        if (!streq(id, ROAM_APP_PORTAL_LOGIN)) {
                r = roam_bus_check_app(bus, id, "roam app ID set KEY=VALUE... makes one");
                if (r < 0)
                        return r;
        }

        /* A pidfd names this very process, race-free: roamd moves it into the app's cgroup
         * before it answers, so CMD starts inside the app and its first packet is governed. */
        pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        if (pidfd < 0)
                return log_error_errno(errno, "Cannot open a pidfd of this process: %m");

        if (asprintf(&what, "start %s in app", argv[0]) < 0)
                return log_oom();
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "RunApp", &error, &reply, "sht", id, pidfd, online_for_usec);
        if (r < 0)
                return roam_app_log_call_error(&error, r, id, what,
                                               "not allowed to run programs in apps");
        r = sd_bus_message_read(reply, "s", &cgroup);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        log_debug("In cgroup %s of app %s.", cgroup, id);

        /* Nothing of roam's may reach the program: the bus, the pidfd and polkit's agent go
         * first. */
        roam_polkit_agent_close();
        reply = sd_bus_message_unref(reply);
        bus = sd_bus_flush_close_unref(bus);
        close(TAKE_FD(pidfd));
        fflush(stdout);
        fflush(stderr);
        if (before_exec) {
                r = before_exec(userdata);
                if (r < 0)
                        return ROAM_RUN_EXEC_FAILED;
        }

        execvp(argv[0], argv);
        log_error_errno(errno, "cannot run '%s': %m", argv[0]);
        return ROAM_RUN_EXEC_FAILED;
}
