/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "roam-bus-model.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-props.h"
#include "roam-time.h"
#include "roam-util.h"
#include "roam-wake-cli.h"
#include "roam-words.h"

typedef struct WaitCtx {
        sd_bus *bus;
        sd_event *event;
        const char *app;
        bool require_time;
        sd_bus_slot *app_props, *app_wake; /* the app's own signals, once its path is known */
        int result;                        /* -1 while waiting */
        char why[256];
} WaitCtx;

int roam_wait_parse_timeout(const char *s, uint64_t *ret)
{
        char *end;
        unsigned long long v;
        uint64_t mul = USEC_PER_SEC;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno)
                return -EINVAL;
        if (streq(end, "ms"))
                mul = USEC_PER_MSEC;
        else if (streq(end, "m") || streq(end, "min"))
                mul = 60 * USEC_PER_SEC;
        else if (!streq(end, "") && !streq(end, "s"))
                return -EINVAL;
        if (v > 7 * 24 * 3600ULL * USEC_PER_SEC / mul)
                return -ERANGE;
        *ret = v * mul;
        return 0;
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error);

/* The app's own PropertiesChanged and Wake, not every app's: fifty waiting wrappers would
 * otherwise each ask roamd again at every other app's turn. Added before its state is read,
 * so no change between is missed. */
static int follow_app(WaitCtx *c, const char *path)
{
        int r;

        if (c->app_props)
                return 0;
        r = sd_bus_match_signal(c->bus, &c->app_props, ROAM_BUS_NAME, path,
                                "org.freedesktop.DBus.Properties", "PropertiesChanged", on_signal,
                                c);
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, &c->app_wake, ROAM_BUS_NAME, path,
                                        ROAM_APP_INTERFACE, "Wake", on_signal, c);
        return r;
}

/* Whether what we wait for holds now. 1 yes, 0 not yet, <0 an error that ends the wait. Each
 * object is read with one GetAll into the client's model. */
static int check(WaitCtx *c)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(roam_model_freep) RoamModel *m = NULL;
        _cleanup_(roam_app_freep) RoamApp *a = NULL;
        const char *path = NULL;
        int r;

        r = roam_model_new(&m);
        if (r < 0)
                return r;
        r = roam_props_get_all(c->bus, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               roam_model_read_manager, m, NULL);
        if (r < 0) {
                snprintf(c->why, sizeof(c->why), "roamd is not running");
                return 0; /* roamd may come: its name appearing wakes us */
        }
        if (c->app) {
                r = sd_bus_call_method(c->bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                       ROAM_MANAGER_INTERFACE, "GetApp", &e, &reply, "s", c->app);
                if (r < 0) {
                        snprintf(c->why, sizeof(c->why), "%s", e.message ?: strerror(-r));
                        /* No such app, or an ID roamd refuses: an error, not a wait (2). */
                        if (sd_bus_error_has_names(&e, ROAM_ERROR_NO_SUCH_APP,
                                                   ROAM_ERROR_INVALID_ARGS))
                                return -ENOENT;
                        return 0;
                }
                r = sd_bus_message_read(reply, "o", &path);
                if (r >= 0 && c->event)
                        r = follow_app(c, path);
                if (r < 0)
                        return r;
        }
        if (!streq(m->state, "online")) {
                snprintf(c->why, sizeof(c->why), "the state is %s", m->state);
                return 0;
        }
        if (c->require_time) {
                _cleanup_(roam_time_view_done) RoamTimeView tv = {};
                bool open;

                /* Verified means settled (Time.Gate "open"): a gate opened by GateTimeout=
                 * ("unverified") lets apps out, yet the time is what `roam time` calls
                 * unverified (docs/time.md, "The gate"). A roamd without a Time object:
                 * its Manager.TimeGate. */
                r = roam_props_get_all(c->bus, ROAM_TIME_PATH, ROAM_TIME_INTERFACE,
                                       roam_time_view_replace, &tv, NULL);
                if (r >= 0)
                        open = roam_time_gate_from_string(tv.gate) == ROAM_TIME_GATE_OPEN;
                else if (m->has_time_gate)
                        open = m->time_gate;
                else {
                        snprintf(c->why, sizeof(c->why), "roamd tells no time gate");
                        return -EOPNOTSUPP;
                }
                if (!open) {
                        snprintf(c->why, sizeof(c->why), "online, time not verified (%s)",
                                 m->time_gate_reason);
                        return 0;
                }
        }
        if (!c->app)
                return 1;
        r = roam_app_new(path, &a);
        if (r < 0)
                return r;
        r = roam_props_get_all(c->bus, path, ROAM_APP_INTERFACE, roam_app_read, a, NULL);
        if (r < 0)
                return 0;
        /* Not wake-listed (""): online is its turn. Done: its turn came in this period.
         * Opening: its turn came, but its gate is not open in the kernel yet. */
        switch (roam_wake_from_string(a->wake_state)) {
        case ROAM_WAKE_WAITING:
                snprintf(c->why, sizeof(c->why), "online, %s waits for its turn", c->app);
                return 0;
        case ROAM_WAKE_OPENING:
                snprintf(c->why, sizeof(c->why), "online, %s's gate is opening", c->app);
                return 0;
        case ROAM_WAKE_AWAKE:
        case ROAM_WAKE_DONE:
        case _ROAM_WAKE_MAX:
        case _ROAM_WAKE_INVALID:
                break;
        }
        return 1;
}

static void recheck(WaitCtx *c)
{
        int r = check(c);

        if (r == 0)
                return;
        c->result = r > 0 ? ROAM_WAIT_ONLINE : ROAM_WAIT_ERROR;
        if (r < 0 && r != -ENOENT && r != -EOPNOTSUPP)
                snprintf(c->why, sizeof(c->why), "%s", strerror(-r));
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error)
{
        recheck(userdata);
        return 0;
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WaitCtx *c = userdata;

        c->result = ROAM_WAIT_NOT_IN_TIME;
        return 0;
}

static int on_term(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
        WaitCtx *c = userdata;

        c->result = ROAM_WAIT_ERROR;
        snprintf(c->why, sizeof(c->why), "interrupted");
        return 0;
}

/* The wait itself: signals (PropertiesChanged, Wake, roamd's name) wake a re-check; no
 * polling. */
static int wait_for_turn(WaitCtx *c, uint64_t timeout_usec)
{
        _cleanup_(sd_event_source_unrefp) sd_event_source *timer = NULL, *sint = NULL,
                                                          *sterm = NULL;
        sigset_t mask;
        int r;

        c->result = -1;
        if (!c->bus) {
                r = roam_bus_connect(&c->bus);
                if (r < 0)
                        return ROAM_WAIT_ERROR;
        }
        r = sd_event_default(&c->event);
        if (r >= 0)
                r = sd_bus_attach_event(c->bus, c->event, SD_EVENT_PRIORITY_NORMAL);
        /* the manager's changes (State, TimeGate), the time's (Gate); the app's:
         * follow_app() */
        if (r >= 0)
                r = sd_bus_match_signal(c->bus, NULL, ROAM_BUS_NAME, ROAM_MANAGER_PATH,
                                        "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                        on_signal, c);
        if (r >= 0 && c->require_time)
                r = sd_bus_match_signal(c->bus, NULL, ROAM_BUS_NAME, ROAM_TIME_PATH,
                                        "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                        on_signal, c);
        if (r >= 0)
                /* roamd's name only: not a check at every name change on the bus */
                r = sd_bus_add_match(
                    c->bus, NULL,
                    "type='signal',sender='org.freedesktop.DBus',"
                    "path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',"
                    "member='NameOwnerChanged',arg0='" ROAM_BUS_NAME "'",
                    on_signal, c);
        if (r >= 0 && timeout_usec > 0)
                r = sd_event_add_time_relative(c->event, &timer, CLOCK_MONOTONIC, timeout_usec, 0,
                                               on_timeout, c);
        if (r >= 0) {
                sigemptyset(&mask);
                sigaddset(&mask, SIGINT);
                sigaddset(&mask, SIGTERM);
                r = sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ? -errno : 0;
        }
        if (r >= 0)
                r = sd_event_add_signal(c->event, &sint, SIGINT, on_term, c);
        if (r >= 0)
                r = sd_event_add_signal(c->event, &sterm, SIGTERM, on_term, c);
        if (r < 0) {
                log_error_errno(r, "Cannot wait for roamd: %m");
                return ROAM_WAIT_ERROR;
        }
        /* The matches are in place: what happens from here on wakes us. */
        /* Iterations, not sd_event_loop(): its exit would close the bus, and with it the
         * registration when-online's command runs under. */
        recheck(c);
        while (c->result < 0) {
                r = sd_event_run(c->event, UINT64_MAX);
                if (r < 0) {
                        log_error_errno(r, "Cannot wait for roamd: %m");
                        return ROAM_WAIT_ERROR;
                }
        }
        /* The signals go back to what they were for a command run afterwards. */
        (void)sigprocmask(SIG_UNBLOCK, &mask, NULL);
        /* roamd's messages end in a period; ours add one */
        for (size_t l = strlen(c->why); l > 0 && c->why[l - 1] == '.'; l--)
                c->why[l - 1] = '\0';
        if (c->result == ROAM_WAIT_NOT_IN_TIME)
                log_error("Not online in time: %s.", c->why[0] ? c->why : "no answer");
        else if (c->result == ROAM_WAIT_ERROR)
                log_error("Cannot wait: %s.", c->why);
        return c->result;
}

static void ctx_done(WaitCtx *c)
{
        sd_bus_slot_unref(c->app_props);
        sd_bus_slot_unref(c->app_wake);
        sd_bus_flush_close_unref(c->bus);
        sd_event_unref(c->event);
}

int roam_wait_online_run(const char *app, uint64_t timeout_usec, bool require_time)
{
        _cleanup_(ctx_done) WaitCtx c = {.app = app, .require_time = require_time};

        return wait_for_turn(&c, timeout_usec);
}

/* Registers this process's app (so its turn ends if we die), when it is wake-listed and no
 * one else registered it; failures only mean no registration. */
static void try_register(WaitCtx *c, const char *path)
{
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;

        if (sd_bus_call_method(c->bus, ROAM_BUS_NAME, path, ROAM_APP_INTERFACE, "Register", &e,
                               NULL, "a{sv}", 0) < 0)
                log_debug("Register %s: %s", c->app, e.message ?: "failed");
}

int roam_when_online_run(const char *app, uint64_t timeout_usec, bool require_time, char **cmd)
{
        _cleanup_(ctx_done) WaitCtx c = {.app = app, .require_time = require_time};
        _cleanup_(sd_bus_error_free) sd_bus_error e = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const char *path = NULL;
        int r, status;
        pid_t pid;

        r = roam_bus_connect(&c.bus);
        if (r < 0)
                return ROAM_WAIT_ERROR;
        r = sd_bus_call_method(c.bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetApp", &e, &reply, "s", app);
        if (r >= 0 && sd_bus_message_read(reply, "o", &path) >= 0)
                try_register(&c, path); /* on this connection: it ends with us */

        r = wait_for_turn(&c, timeout_usec);
        if (r != ROAM_WAIT_ONLINE)
                return r;

        fflush(stdout);
        pid = fork();
        if (pid < 0) {
                log_error_errno(errno, "Cannot fork: %m");
                return ROAM_WAIT_ERROR;
        }
        if (pid == 0) {
                execvp(cmd[0], cmd);
                log_error_errno(errno, "Cannot run %s: %m", cmd[0]);
                _exit(127);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR) {
                        log_error_errno(errno, "Cannot wait for %s: %m", cmd[0]);
                        return ROAM_WAIT_ERROR;
                }

        /* The app's turn ends with its command (not an error when it ended before). */
        sd_bus_error_free(&e);
        if (!path || sd_bus_call_method(c.bus, ROAM_BUS_NAME, path, ROAM_APP_INTERFACE, "Done", &e,
                                        NULL, NULL) < 0)
                log_debug("Done %s: %s", app, e.message ?: "not wake-listed");
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + WTERMSIG(status);
}
