/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-client-bus.h"
#include "roam-log.h"
#include "roam-portal-session.h"
#include "roam-util.h"

void roam_portal_sessions_free(RoamPortalSession *s, size_t n)
{
        for (size_t i = 0; s && i < n; i++) {
                free(s[i].link);
                free(s[i].state);
                free(s[i].message);
                free(s[i].identity);
                free(s[i].identity_source);
                free(s[i].portal_url);
                free(s[i].login_url);
                free(s[i].location_name);
                free(s[i].venue_info_url);
                free(s[i].user_portal_url);
        }
        free(s);
}

static int set_expires(sd_bus_message *m, const char *key, void *field)
{
        RoamPortalSession *s = field;

        s->has_expires = true;
        return sd_bus_message_read_basic(m, 't', &s->expires_at_usec);
}

static int set_bytes(sd_bus_message *m, const char *key, void *field)
{
        RoamPortalSession *s = field;

        s->has_bytes = true;
        return sd_bus_message_read_basic(m, 't', &s->bytes_remaining);
}

static const BusMapEntry session_map[] = {
    {"Link", "s", bus_map_string, offsetof(RoamPortalSession, link)},
    {"State", "s", bus_map_string, offsetof(RoamPortalSession, state)},
    {"Message", "s", bus_map_string, offsetof(RoamPortalSession, message)},
    {"Identity", "s", bus_map_string, offsetof(RoamPortalSession, identity)},
    {"IdentitySource", "s", bus_map_string, offsetof(RoamPortalSession, identity_source)},
    {"PortalURL", "s", bus_map_string, offsetof(RoamPortalSession, portal_url)},
    {"LoginURL", "s", bus_map_string, offsetof(RoamPortalSession, login_url)},
    {"LocationName", "s", bus_map_string, offsetof(RoamPortalSession, location_name)},
    {"VenueInfoURL", "s", bus_map_string, offsetof(RoamPortalSession, venue_info_url)},
    {"UserPortalURL", "s", bus_map_string, offsetof(RoamPortalSession, user_portal_url)},
    {"WISPr", "b", bus_map_bool, offsetof(RoamPortalSession, wispr)},
    {"Approved", "b", bus_map_bool, offsetof(RoamPortalSession, approved)},
    {"CanLogoff", "b", bus_map_bool, offsetof(RoamPortalSession, can_logoff)},
    {"HasSavedLogin", "b", bus_map_bool, offsetof(RoamPortalSession, has_saved_login)},
    {"AlwaysLogIn", "b", bus_map_bool, offsetof(RoamPortalSession, always)},
    {"ExpiryWarning", "b", bus_map_bool, offsetof(RoamPortalSession, expiry_warning)},
    {"Expired", "b", bus_map_bool, offsetof(RoamPortalSession, expired)},
    {"CanExtendSession", "b", bus_map_bool, offsetof(RoamPortalSession, can_extend)},
    {"BrowserLogin", "b", bus_map_bool, offsetof(RoamPortalSession, browser_login)},
    {"ExpiresAt", "t", set_expires, 0},
    {"BytesRemaining", "t", set_bytes, 0},
    {},
};

/* 0: the end of the session list */
static int read_session(sd_bus_message *m, RoamPortalSession *s)
{
        int r = bus_map_read(m, session_map, s);

        if (r <= 0)
                return r;
        return s->link && s->state ? 1 : -EBADMSG;
}

int roam_portal_sessions_read_get(sd_bus_message *m, RoamPortalSession **ret, size_t *ret_n)
{
        int r = sd_bus_message_enter_container(m, 'v', "aa{sv}");

        if (r < 0)
                return r;
        return roam_portal_sessions_read(m, ret, ret_n);
}

int roam_portal_sessions_read(sd_bus_message *reply, RoamPortalSession **ret, size_t *ret_n)
{
        RoamPortalSession *s = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_enter_container(reply, 'a', "a{sv}");
        while (r >= 0) {
                RoamPortalSession *ns = realloc(s, sizeof(*s) * (n + 1));
                if (!ns) {
                        r = -ENOMEM;
                        break;
                }
                s = ns;
                s[n] = (RoamPortalSession){};
                r = read_session(reply, &s[n]);
                if (r <= 0)
                        break;
                n++;
        }
        if (r < 0) {
                roam_portal_sessions_free(s, n + 1);
                return r;
        }
        if (n == 0) {
                roam_portal_sessions_free(s, 1);
                s = NULL;
        } else
                /* the slot past the end was zeroed and never filled */
                free(s[n].link);
        *ret = s;
        *ret_n = n;
        return 0;
}

int roam_portal_sessions_get(sd_bus *bus, RoamPortalSession **ret, size_t *ret_n)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_get_property(bus, ROAM_BUS_NAME, ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE,
                                "Sessions", &error, &reply, "aa{sv}");
        if (r < 0)
                return roam_bus_log_call_error(&error, r, "read the captive portal sessions");
        r = roam_portal_sessions_read(reply, ret, ret_n);
        if (r < 0)
                return log_error_errno(r, "Failed to read roamd's answer: %m");
        return 0;
}

const char *roam_portal_state_words(const char *state)
{
        static const struct {
                const char *state, *words;
        } table[] = {
            {"discovering", "reading the portal's page"},
            {"waiting", "waiting for your approval"},
            {"declined", "declined: roam sends nothing to this portal"},
            {"need-credentials", "needs a user name and password"},
            {"browser", "log in with a web browser"},
            {"logging-in", "logging in"},
            {"polling", "login pending"},
            {"logged-in", "logged in"},
            {"rejected", "user name or password rejected"},
            {"failed", "login failed"},
            {"logging-off", "logging off"},
            {"logged-off", "logged off"},
            {"open", "open: it lets this device through"},
        };
        for (size_t i = 0; state && i < ELEMENTSOF(table); i++)
                if (streq(table[i].state, state))
                        return table[i].words;
        return "unknown";
}

bool roam_portal_needs_you(const RoamPortalSession *s)
{
        static const char *const states[] = {
            "waiting",  "declined", "need-credentials", "browser",
            "rejected", "failed",   "logged-off",
        };

        for (size_t i = 0; s && i < ELEMENTSOF(states); i++)
                if (streq(s->state, states[i]))
                        return true;
        return false;
}

bool roam_portal_can_approve(const RoamPortalSession *s)
{
        /* "browser" is approved already: the browser is what is left to do. */
        return roam_portal_needs_you(s) && !streq(s->state, "browser");
}

bool roam_portal_can_decline(const RoamPortalSession *s)
{
        return roam_portal_needs_you(s) && !streq(s->state, "declined");
}

bool roam_portal_can_login(const RoamPortalSession *s)
{
        return roam_portal_needs_you(s) && s->wispr;
}

bool roam_portal_can_browse(const RoamPortalSession *s)
{
        return roam_portal_needs_you(s) && !s->wispr;
}

const char *roam_portal_next_step(const RoamPortalSession *s, bool keys)
{
        const char *st = s->state;

        /* keys: the TUI's Portal screen, where a key does it; else the command that does. */
        if (streq(st, "waiting") || streq(st, "declined") || streq(st, "failed") ||
            streq(st, "logged-off"))
                return s->wispr && !s->has_saved_login
                           ? (keys ? "log in: press l"
                                   : "log in: roam portal login --user NAME --password-file FILE")
                       : s->wispr ? (keys ? "approve to log in with the saved login: press a"
                                          : "approve to log in with the saved login: roam portal "
                                            "approve")
                                  : (keys ? "log in with a text browser: press b"
                                          : "log in with a text browser: roam portal browse");
        if (streq(st, "need-credentials") || streq(st, "rejected"))
                return keys ? "log in: press l"
                            : "log in: roam portal login --user NAME --password-file FILE";
        if (streq(st, "browser"))
                return keys ? "log in with a text browser: press b"
                            : "log in with a text browser: roam portal browse";
        if (streq(st, "logged-in") && s->can_logoff)
                return keys ? "log off: press o" : "log off: roam portal logoff";
        return NULL;
}

void roam_portal_time_left(const RoamPortalSession *s, uint64_t now_usec, char *buf, size_t n)
{
        uint64_t left;

        if (!s->has_expires) {
                snprintf(buf, n, "%s", s->expired ? "over: checking the network again" : "");
                return;
        }
        left = s->expires_at_usec > now_usec ? (s->expires_at_usec - now_usec) / 1000000 : 0;
        if (left >= 3600)
                snprintf(buf, n, "%" PRIu64 " h %02" PRIu64 " min left", left / 3600,
                         left % 3600 / 60);
        else if (left >= 60)
                snprintf(buf, n, "%" PRIu64 " min %02" PRIu64 " s left", left / 60, left % 60);
        else
                snprintf(buf, n, "%" PRIu64 " s left%s", left,
                         s->expiry_warning ? " (ends soon)" : "");
}

void roam_portal_fields(const RoamPortalSession *s, uint64_t now_usec, bool keys,
                        void (*add)(const char *label, const char *value, void *userdata),
                        void *userdata)
{
        char buf[256], left[64];

        add("Message", s->message, userdata);
        add("Portal page", s->portal_url, userdata);
        add("Venue", s->location_name, userdata);
        add("Venue info", s->venue_info_url, userdata);
        if (s->wispr)
                snprintf(buf, sizeof(buf), "WISPr, at %s", s->login_url ? s->login_url : "?");
        else
                snprintf(buf, sizeof(buf), "none: log in with a web browser");
        /* Only while the portal is in the way: once open, how to get past it is history. */
        if (roam_portal_needs_you(s))
                add("Auto login", buf, userdata);
        if (s->browser_login)
                add("Browser",
                    "the login browser (app " ROAM_APP_PORTAL_LOGIN ") may reach this link only",
                    userdata);
        add("Saved login", s->has_saved_login ? "yes" : "no", userdata);
        add("Always log in", s->always ? "yes, on this network" : "no", userdata);
        snprintf(buf, sizeof(buf), "%s (%s)", s->identity ? s->identity : "?",
                 s->identity_source ? s->identity_source : "?");
        add("Network", buf, userdata);
        roam_portal_time_left(s, now_usec, left, sizeof(left));
        /* the value says "left" itself ("59 min 57 s left") */
        add("Session", left, userdata);
        if (s->can_extend)
                add("Extend",
                    keys ? "the network offers to extend the session: press e"
                         : "the network offers to extend the session: roam portal extend",
                    userdata);
        if (s->has_bytes) {
                snprintf(buf, sizeof(buf), "%" PRIu64 " bytes", s->bytes_remaining);
                add("Data left", buf, userdata);
        }
        add("Next", roam_portal_next_step(s, keys), userdata);
}

static int log_portal_error(const sd_bus_error *error, int r, const char *what)
{
        if (roam_bus_error_is_denied(error)) {
                char why[256];

                log_error("not allowed to %s: %s", what,
                          roam_bus_denied_reason(error, why, sizeof(why)));
                return -EACCES;
        }
        if (sd_bus_error_has_names(error, ROAM_ERROR_INVALID_ARGS, ROAM_ERROR_FAILED,
                                   ROAM_ERROR_NO_SUCH_LINK) &&
            error->message && *error->message)
                return log_error_errno(r, "cannot %s: %s", what, error->message);
        return roam_bus_log_call_error(error, r, what);
}

int roam_portal_action(sd_bus *bus, const char *action, const char *link, bool always)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *member = streq(action, "approve")   ? "Approve"
                             : streq(action, "decline") ? "Decline"
                             : streq(action, "logoff")  ? "Logoff"
                             : streq(action, "extend")  ? "Extend"
                                                        : "Forget";
        char what[64];
        int r;

        snprintf(what, sizeof(what), "%s on %s", action, link);
        if (streq(member, "Approve"))
                r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE,
                                       member, &error, NULL, "sb", link, always);
        else
                r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE,
                                       member, &error, NULL, "s", link);
        if (r < 0)
                return log_portal_error(&error, r, what);
        return 0;
}

int roam_portal_login(sd_bus *bus, const char *link, const char *user, const char *password,
                      bool save, bool always)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = strlen(password);
        char what[64];
        int r;

        /* The password travels as a memfd: never in a message body on the bus. */
        fd = memfd_create("roam-portal-password", MFD_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Cannot create a memfd: %m");
        if (write(fd, password, n) != (ssize_t)n)
                return log_error_errno(errno ? errno : EIO, "Cannot write to the memfd: %m");
        snprintf(what, sizeof(what), "log in on %s", link);
        r = sd_bus_call_method(bus, ROAM_BUS_NAME, ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE, "Login",
                               &error, NULL, "sshbb", link, user, fd, save, always);
        if (r < 0)
                return log_portal_error(&error, r, what);
        return 0;
}
