/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <grp.h>

#include "roam-bus.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-polkit.h"

int bus_check_authorized(sd_bus_message *msg, const char *action, sd_bus_error *error)
{
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const gid_t *gids = NULL;
        struct group *g;
        uid_t uid;
        gid_t gid;
        int r, n;

        r = sd_bus_query_sender_creds(msg,
                                      SD_BUS_CREDS_EUID | SD_BUS_CREDS_EGID |
                                          SD_BUS_CREDS_SUPPLEMENTARY_GIDS | SD_BUS_CREDS_AUGMENT,
                                      &creds);
        if (r < 0)
                return sd_bus_error_set(error, ROAM_ERROR_ACCESS_DENIED,
                                        "Cannot determine the caller's identity.");
        if (sd_bus_creds_get_euid(creds, &uid) < 0)
                uid = (uid_t)-1;
        if (uid == 0)
                return 0;
        r = polkit_check(msg, action, uid);
        if (r == -EINPROGRESS)
                return 1; /* polkit was asked: the handler runs again with its answer */
        if (r == -EBUSY)
                return sd_bus_error_set(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                        "Too many of this caller's (or its user's) requests are "
                                        "waiting for polkit; try again once they are answered.");
        if (r == POLKIT_CHALLENGE && !sd_bus_message_get_allow_interactive_authorization(msg))
                /* as systemd's daemons answer: the client may try again allowing interaction
                 * (and with an authentication agent running) */
                return sd_bus_error_setf(error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                         "polkit asks for authentication for %s; the call did "
                                         "not allow interactive authorization.",
                                         action);
        if (r == POLKIT_CHALLENGE)
                return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                         "polkit asks for authentication for %s, and no "
                                         "authentication agent answered (run roam on a "
                                         "terminal, or start the desktop's agent).",
                                         action);
        if (r > 0)
                return 0;
        if (r == 0)
                return sd_bus_error_setf(error, ROAM_ERROR_ACCESS_DENIED,
                                         "Not authorized by polkit for %s.", action);
        if (r != -ENOENT)
                return sd_bus_error_set_errnof(error, -r, "Cannot ask polkit: %m");
        g = getgrnam("netdev");
        if (g) {
                if (sd_bus_creds_get_egid(creds, &gid) >= 0 && gid == g->gr_gid)
                        return 0;
                n = sd_bus_creds_get_supplementary_gids(creds, &gids);
                for (int i = 0; i < n; i++)
                        if (gids[i] == g->gr_gid)
                                return 0;
        }
        return sd_bus_error_set(error, ROAM_ERROR_ACCESS_DENIED,
                                "Only root or members of group netdev may do this (polkit is "
                                "not running).");
}
