/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-log.h"
#include "roam-macro.h"
#include "roam-polkit-agent.h"

/* sd-bus's default when DBUS_SYSTEM_BUS_ADDRESS is not set. */
#define DEFAULT_SYSTEM_BUS_ADDRESS "unix:path=/run/dbus/system_bus_socket"
/* A call polkit may answer by asking for a password waits this long (roamd's own wait for
 * such a check is 5 min): the 25 s default is too short to type one. */
#define INTERACTIVE_CALL_TIMEOUT_USEC (5 * 60 * USEC_PER_SEC)

/* polkitd on Debian is started by the bus when first asked (D-Bus activation): a Ping starts
 * it where it is installed and idle, where NameHasOwner would say "no polkit" and leave the
 * user with roamd's refusal. ServiceUnknown: polkit is not installed. */
static bool polkit_on_bus(sd_bus *bus)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        return sd_bus_call_method(bus, "org.freedesktop.PolicyKit1",
                                  "/org/freedesktop/PolicyKit1/Authority",
                                  "org.freedesktop.DBus.Peer", "Ping", &error, NULL, NULL) >= 0;
}

int roam_bus_may_ask(sd_bus *bus)
{
        int r;

        if (geteuid() == 0 || !polkit_on_bus(bus))
                return 0;
        r = roam_polkit_agent_open();
        if (r > 0)
                r = sd_bus_set_method_call_timeout(bus, INTERACTIVE_CALL_TIMEOUT_USEC);
        return r < 0 ? r : 0;
}

int roam_bus_connect(sd_bus **ret)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *address;
        int r;

        r = sd_bus_open_system(&bus);
        if (r < 0) {
                address = getenv("DBUS_SYSTEM_BUS_ADDRESS");
                if (!address || !*address)
                        address = DEFAULT_SYSTEM_BUS_ADDRESS;

                /* No socket, or nobody listening on it: no bus, so no roamd either. */
                if (r == -ENOENT || r == -ECONNREFUSED) {
                        log_error_errno(r,
                                        "roamd is not running (cannot connect to the system bus "
                                        "at %s: %m)",
                                        address);
                        return -ROAM_ERR_NOT_RUNNING;
                }
                return log_error_errno(r, "Failed to connect to the system bus at %s: %m", address);
        }
        /* As systemctl does: every call allows interactive authorization, so polkit may ask
         * for a password (through our agent on a terminal, or the desktop's) instead of saying
         * no. */
        r = sd_bus_set_allow_interactive_authorization(bus, true);
        if (r < 0)
                return log_error_errno(r, "Cannot allow interactive authorization: %m");

        *ret = TAKE_PTR(bus);
        return 0;
}

bool roam_bus_error_is_denied(const sd_bus_error *e)
{
        return sd_bus_error_has_names(e, ROAM_ERROR_ACCESS_DENIED, SD_BUS_ERROR_ACCESS_DENIED,
                                      SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED);
}

const char *roam_bus_denied_reason(const sd_bus_error *e, char *buf, size_t size)
{
        size_t n;

        if (sd_bus_error_has_name(e, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED))
                snprintf(buf, size, "%s",
                         "polkit wants a password and nothing could ask for it (run roam on a "
                         "terminal, or start the desktop's authentication agent)");
        else if (e && e->message && *e->message)
                snprintf(buf, size, "%s", e->message);
        else
                snprintf(buf, size, "%s", "not authorized");
        n = strlen(buf);
        if (n > 0 && buf[n - 1] == '.')
                buf[n - 1] = 0;
        return buf;
}

int roam_bus_log_call_error(const sd_bus_error *error, int r, const char *what)
{
        if (sd_bus_error_has_names(error, SD_BUS_ERROR_SERVICE_UNKNOWN,
                                   SD_BUS_ERROR_NAME_HAS_NO_OWNER)) {
                log_error("roamd is not running (no owner of %s on the system bus)", ROAM_BUS_NAME);
                return -ROAM_ERR_NOT_RUNNING;
        }

        if (sd_bus_error_has_names(error, SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT) ||
            r == -ETIMEDOUT)
                return log_error_errno(r, "Failed to %s: roamd did not answer in time", what);

        if (sd_bus_error_is_set(error))
                return log_error_errno(r, "Failed to %s: %s (%s)", what,
                                       error->message ? error->message : "no message", error->name);

        return log_error_errno(r, "Failed to %s: %m", what);
}

int roam_bus_check_link(sd_bus *bus, const char *name)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetLinkByName", &error, NULL, "s", name);
        if (r >= 0)
                return 0;
        if (sd_bus_error_has_names(&error, ROAM_ERROR_NO_SUCH_LINK, ROAM_ERROR_INVALID_ARGS)) {
                log_error("no link '%s' (roam status lists them)", name);
                return -ENOENT;
        }
        return roam_bus_log_call_error(&error, r, "look the link up");
}

int roam_bus_check_app(sd_bus *bus, const char *id, const char *creates)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_MANAGER_PATH, ROAM_MANAGER_INTERFACE,
                               "GetApp", &error, NULL, "s", id);
        if (r >= 0)
                return 0;
        if (sd_bus_error_has_name(&error, ROAM_ERROR_NO_SUCH_APP)) {
                log_error("no app '%s' (roam apps lists them%s%s)", id, creates ? "; " : "",
                          creates ? creates : "");
                return -ENOENT;
        }
        if (sd_bus_error_has_name(&error, ROAM_ERROR_INVALID_ARGS) && error.message)
                return log_error_errno(r, "no app '%s': %s", id, error.message);
        return roam_bus_log_call_error(&error, r, "look the app up");
}
