/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-bus-auth.h"
#include "roamd-link.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-portal.h"

static int append_str(sd_bus_message *reply, const char *key, const char *v)
{
        if (!v)
                return 0;
        return sd_bus_message_append(reply, "{sv}", key, "s", v);
}

static int append_session(sd_bus_message *reply, PortalSession *s)
{
        const PortalEntry *e = portal_store_get(s->portal->store, s->identity);
        Link *l = links_get(s->portal->core->links, s->ifindex);
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{sv}");
        if (r < 0)
                return r;
        if ((r = append_str(reply, "Link", s->ifname)) < 0 ||
            (r = append_str(reply, "State", portal_state_to_string(s->state))) < 0 ||
            (r = append_str(reply, "Message", s->message)) < 0 ||
            (r = append_str(reply, "Identity", s->identity)) < 0 ||
            (r = append_str(reply, "IdentitySource", s->identity_source)) < 0 ||
            (r = append_str(reply, "PortalURL", l ? l->portal_url : NULL)) < 0 ||
            (r = append_str(reply, "LoginURL", s->offer.login_url)) < 0 ||
            (r = append_str(reply, "LocationName", s->offer.location_name)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "WISPr", "b", s->wispr)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "Approved", "b", s->approved)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "CanLogoff", "b", !!s->logoff_url)) < 0 ||
            /* Whether a login is saved, never what it is (the user name is not secret, but
             * it is nobody else's business either). */
            (r = sd_bus_message_append(reply, "{sv}", "HasSavedLogin", "b",
                                       e && e->user && e->password)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "AlwaysLogIn", "b", e && e->always)) < 0 ||
            /* Whether the portal-login app (the login browser) may reach this link now. */
            (r = sd_bus_message_append(reply, "{sv}", "BrowserLogin", "b",
                                       portal_login_link(s->portal) == s->ifindex)) < 0)
                return r;
        if (s->expires_realtime_usec && (r = sd_bus_message_append(reply, "{sv}", "ExpiresAt", "t",
                                                                   s->expires_realtime_usec)) < 0)
                return r;
        if ((r = sd_bus_message_append(reply, "{sv}", "ExpiryWarning", "b", s->expiry_warned)) <
                0 ||
            (r = sd_bus_message_append(reply, "{sv}", "Expired", "b", s->expired)) < 0)
                return r;
        if (l && l->capport_valid) {
                if ((r = append_str(reply, "VenueInfoURL", l->capport.venue_info_url)) < 0 ||
                    (r = append_str(reply, "UserPortalURL", l->capport.user_portal_url)) < 0 ||
                    (r = sd_bus_message_append(reply, "{sv}", "CanExtendSession", "b",
                                               l->capport.can_extend_session)) < 0)
                        return r;
                if (l->capport.has_bytes_remaining &&
                    (r = sd_bus_message_append(reply, "{sv}", "BytesRemaining", "t",
                                               l->capport.bytes_remaining)) < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

static int property_get_sessions(sd_bus *bus, const char *path, const char *interface,
                                 const char *property, sd_bus_message *reply, void *userdata,
                                 sd_bus_error *error)
{
        Portal *p = userdata;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        for (size_t i = 0; r >= 0 && i < p->n_sessions; i++)
                r = append_session(reply, p->sessions[i]);
        if (r < 0)
                return r;
        return sd_bus_message_close_container(reply);
}

/* Spending, overwriting or forgetting a saved login is an administrator's action: one user must
 * not log in with another's password, replace it or drop it. */
#define SAVED_LOGIN_ACTION "org.roam1.portal-saved-login"

static int check_saved_login(sd_bus_message *msg, sd_bus_error *error)
{
        return bus_check_authorized(msg, SAVED_LOGIN_ACTION, error);
}

/* Reads the link argument, checks authorization and finds the session. */
static int get_session(sd_bus_message *msg, Portal *p, sd_bus_error *error, PortalSession **ret)
{
        const char *name;
        int r;

        r = sd_bus_message_read(msg, "s", &name);
        if (r < 0)
                return r;
        r = bus_check_authorized(msg, "org.roam1.manage", error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        *ret = portal_get_session(p, name);
        if (!*ret)
                return sd_bus_error_setf(error, ROAM_ERROR_NO_SUCH_LINK,
                                         "%s is not behind a captive portal.",
                                         strlen(name) < 64 ? name : "That link");
        return 0;
}

static int reply(sd_bus_message *msg, sd_bus_error *error, int r, const char *what)
{
        if (r >= 0)
                return sd_bus_reply_method_return(msg, NULL);
        return sd_bus_error_set(error, r == -EINVAL ? ROAM_ERROR_INVALID_ARGS : ROAM_ERROR_FAILED,
                                what ? what : "Failed.");
}

static int method_approve(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        const PortalEntry *e;
        PortalSession *s;
        const char *err = NULL;
        int always, r;

        r = get_session(msg, userdata, error, &s);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "b", &always);
        if (r < 0)
                return r;
        /* approving where a password is saved sends it; "always" changes the saved entry */
        e = portal_store_get(s->portal->store, s->identity);
        if (always || (e && e->password)) {
                r = check_saved_login(msg, error);
                if (r != 0) /* refused, or polkit asked: answered later */
                        return r;
        }
        r = portal_session_approve(s, always, &err);
        return reply(msg, error, r, err);
}

static int method_decline(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        PortalSession *s;
        const char *err = NULL;
        int r = get_session(msg, userdata, error, &s);

        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = portal_session_decline(s, &err);
        return reply(msg, error, r, err);
}

static int method_logoff(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        PortalSession *s;
        const char *err = NULL;
        int r = get_session(msg, userdata, error, &s);

        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = portal_session_logoff(s, &err);
        return reply(msg, error, r, err);
}

static int method_forget(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        PortalSession *s;
        const char *err = NULL;
        int r = get_session(msg, userdata, error, &s);

        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = check_saved_login(msg, error);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = portal_session_forget(s, &err);
        return reply(msg, error, r, err);
}

/* The password comes as a file descriptor (a file or a memfd), so it never travels in a
 * D-Bus message body where a monitor could read it. Pipes are refused: roamd must not block
 * on a reader that never writes. */
static int read_password_fd(int fd, char **ret)
{
        _cleanup_free_ char *buf = NULL;
        struct stat st;
        ssize_t n;

        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        if (st.st_size > (off_t)PORTAL_STORE_FIELD_MAX + 1)
                return -EFBIG;
        buf = calloc(1, PORTAL_STORE_FIELD_MAX + 2);
        if (!buf)
                return -ENOMEM;
        n = pread(fd, buf, PORTAL_STORE_FIELD_MAX + 1, 0);
        if (n < 0) {
                int r = negative_errno();
                explicit_bzero(buf, PORTAL_STORE_FIELD_MAX + 2);
                return r;
        }
        if (n > 0 && buf[n - 1] == '\n')
                buf[--n] = 0;
        if (n > 0 && buf[n - 1] == '\r')
                buf[--n] = 0;
        if (n == 0 || (size_t)n > PORTAL_STORE_FIELD_MAX || memchr(buf, 0, (size_t)n) ||
            memchr(buf, '\n', (size_t)n)) {
                explicit_bzero(buf, PORTAL_STORE_FIELD_MAX + 2);
                return -EINVAL;
        }
        *ret = TAKE_PTR(buf);
        return 0;
}

static int method_login(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        PortalSession *s;
        const char *user, *err = NULL;
        char *password = NULL;
        int fd, save, always, r;

        r = get_session(msg, userdata, error, &s);
        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = sd_bus_message_read(msg, "shbb", &user, &fd, &save, &always);
        if (r < 0)
                return r;
        if (save || always) {
                r = check_saved_login(msg, error);
                if (r != 0) /* refused, or polkit asked: answered later */
                        return r;
        }
        r = read_password_fd(fd, &password);
        if (r < 0)
                return sd_bus_error_set(error, ROAM_ERROR_INVALID_ARGS,
                                        r == -EBADFD
                                            ? "The password must come in a regular file or a "
                                              "memfd."
                                            : "The password must be one line of 1 to 512 bytes.");
        r = portal_session_login(s, user, password, save, always, &err);
        return reply(msg, error, r, err);
}

static int method_extend(sd_bus_message *msg, void *userdata, sd_bus_error *error)
{
        PortalSession *s;
        const char *err = NULL;
        int r = get_session(msg, userdata, error, &s);

        if (r != 0) /* refused, or polkit asked: answered later */
                return r;
        r = portal_session_extend(s, &err);
        return reply(msg, error, r, err);
}

static const sd_bus_vtable portal_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Sessions", "aa{sv}", property_get_sessions, 0,
                    SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_METHOD_WITH_ARGS("Approve", SD_BUS_ARGS("s", link, "b", always), SD_BUS_NO_RESULT,
                            method_approve, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Decline", SD_BUS_ARGS("s", link), SD_BUS_NO_RESULT, method_decline,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS(
        "Login", SD_BUS_ARGS("s", link, "s", user, "h", password_fd, "b", save, "b", always),
        SD_BUS_NO_RESULT, method_login, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Logoff", SD_BUS_ARGS("s", link), SD_BUS_NO_RESULT, method_logoff,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Forget", SD_BUS_ARGS("s", link), SD_BUS_NO_RESULT, method_forget,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Extend", SD_BUS_ARGS("s", link), SD_BUS_NO_RESULT, method_extend,
                            SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_VTABLE_END,
};

int portal_bus_setup(Portal *p)
{
        int r;

        if (!p->core->bus)
                return 0;
        r = sd_bus_add_object_vtable(p->core->bus, &p->slot, ROAM_PORTAL_PATH,
                                     ROAM_PORTAL_INTERFACE, portal_vtable, p);
        if (r < 0)
                return log_error_errno(r, "Failed to add portal object: %m");
        return 0;
}

void portal_bus_emit_changed(Portal *p)
{
        int r;

        if (!p || !p->core->bus || !p->slot)
                return;
        r = sd_bus_emit_properties_changed(p->core->bus, ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE,
                                           "Sessions", NULL);
        if (r < 0)
                log_debug_errno(r, "Failed to emit portal PropertiesChanged: %m");
}
