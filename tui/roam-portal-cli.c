/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "roam-bus-map.h"
#include "roam-bus.h"
#include "roam-cli.h"
#include "roam-client-bus.h"
#include "roam-json.h"
#include "roam-log.h"
#include "roam-portal-browser.h"
#include "roam-portal-cli.h"
#include "roam-util.h"

#define LABEL_WIDTH 15
#define SECRET_MAX  512

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
            {"open", "open (no portal in the way)"},
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
        add("Time left", left, userdata);
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

static void field(const char *label, const char *value, void *userdata)
{
        FILE *f = userdata;
        char l[LABEL_WIDTH + 2];

        if (!value || !*value)
                return;
        snprintf(l, sizeof(l), "%s:", label);
        fprintf(f, "  %-*s %s\n", LABEL_WIDTH, l, value);
}

int roam_portal_print_text(const RoamPortalSession *s, size_t n, uint64_t now_usec, FILE *f)
{
        if (n == 0) {
                fputs("No captive portal: no link is behind one.\n", f);
                return 0;
        }
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        fputc('\n', f);
                fprintf(f, "%s: captive portal, %s\n", s[i].link,
                        roam_portal_state_words(s[i].state));
                roam_portal_fields(&s[i], now_usec, false, field, f);
        }
        return 0;
}

static int print_json(const RoamPortalSession *s, size_t n, FILE *f)
{
        _cleanup_(json_object_putp) json_object *doc = json_object_new_array();
        int r = doc ? 0 : -ENOMEM;

        for (size_t i = 0; r >= 0 && i < n; i++) {
                json_object *o = json_object_new_object();
                r = json_append(doc, o);
                if (r < 0)
                        break;
                if ((r = json_add_string(o, "link", s[i].link)) < 0 ||
                    (r = json_add_string(o, "state", s[i].state)) < 0 ||
                    (r = json_add_string(o, "message", s[i].message)) < 0 ||
                    (r = json_add_string(o, "portal_url", s[i].portal_url)) < 0 ||
                    (r = json_add_bool(o, "wispr", s[i].wispr)) < 0 ||
                    (r = json_add_string(o, "login_url", s[i].login_url)) < 0 ||
                    (r = json_add_string(o, "location_name", s[i].location_name)) < 0 ||
                    (r = json_add_string(o, "venue_info_url", s[i].venue_info_url)) < 0 ||
                    (r = json_add_bool(o, "approved", s[i].approved)) < 0 ||
                    (r = json_add_bool(o, "saved_login", s[i].has_saved_login)) < 0 ||
                    (r = json_add_bool(o, "always_log_in", s[i].always)) < 0 ||
                    (r = json_add_bool(o, "can_logoff", s[i].can_logoff)) < 0 ||
                    (r = json_add_string(o, "identity", s[i].identity)) < 0 ||
                    (r = json_add_string(o, "identity_source", s[i].identity_source)) < 0 ||
                    (r = json_add_bool(o, "expiry_warning", s[i].expiry_warning)) < 0 ||
                    (r = json_add_bool(o, "can_extend_session", s[i].can_extend)) < 0 ||
                    (r = json_add_bool(o, "browser_login", s[i].browser_login)) < 0)
                        break;
                if (s[i].has_expires &&
                    (r = json_add_uint(o, "expires_at_usec", s[i].expires_at_usec)) < 0)
                        break;
                if (s[i].has_bytes &&
                    (r = json_add_uint(o, "bytes_remaining", s[i].bytes_remaining)) < 0)
                        break;
        }
        if (r < 0)
                return log_oom();
        return json_print(doc, f);
}

static int log_portal_error(const sd_bus_error *error, int r, const char *what)
{
        if (sd_bus_error_has_name(error, ROAM_ERROR_ACCESS_DENIED)) {
                log_error("not allowed to %s (needs root, group netdev or polkit authorization)",
                          what);
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

static int read_secret_file(const char *path, char **ret)
{
        _cleanup_close_ int fd = -EBADF;
        char *buf;
        size_t n = 0;

        fd = streq(path, "-") ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Cannot open %s: %m", path);
        buf = calloc(1, SECRET_MAX + 2);
        if (!buf)
                return log_oom();
        while (n < SECRET_MAX + 1) {
                ssize_t k = read(fd, buf + n, SECRET_MAX + 1 - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                n += (size_t)k;
        }
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                buf[--n] = 0;
        if (n == 0 || n > SECRET_MAX || memchr(buf, '\n', n) || strlen(buf) != n) {
                explicit_bzero(buf, SECRET_MAX + 2);
                free(buf);
                log_error("%s must hold the password on one line (1 to %d bytes).", path,
                          SECRET_MAX);
                return -EINVAL;
        }
        *ret = buf;
        return 0;
}

/* The link an action is about: the one given, else the only session. */
static int pick_link(sd_bus *bus, const char *given, char **ret)
{
        RoamPortalSession *s = NULL;
        size_t n = 0;
        int r;

        if (given) {
                *ret = strdup(given);
                return *ret ? 0 : log_oom();
        }
        r = roam_portal_sessions_get(bus, &s, &n);
        if (r < 0)
                return r;
        if (n != 1) {
                roam_portal_sessions_free(s, n);
                log_error(n == 0 ? "No link is behind a captive portal."
                                 : "Several links are behind captive portals: name one.");
                return -ENOENT;
        }
        *ret = TAKE_PTR(s[0].link);
        roam_portal_sessions_free(s, n);
        return 0;
}

int roam_portal_run(char **args, bool json)
{
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const char *action = args[0], *user = NULL, *pwfile = NULL, *link = NULL;
        const char *browser = NULL;
        bool always = false, save = true;
        _cleanup_free_ char *lk = NULL;
        int argc = 0, r, c;

        static const struct option options[] = {
            {"user", required_argument, NULL, 'u'},
            {"password-file", required_argument, NULL, 'p'},
            {"always", no_argument, NULL, 'a'},
            {"no-save", no_argument, NULL, 'n'},
            {"browser", required_argument, NULL, 'b'},
            {},
        };

        if (action && !streq(action, "approve") && !streq(action, "decline") &&
            !streq(action, "login") && !streq(action, "logoff") && !streq(action, "forget") &&
            !streq(action, "browse") && !streq(action, "extend") && !streq(action, "show")) {
                /* `roam portal LINK` shows one link. */
                link = action;
                action = "show";
                if (args[1])
                        return roam_usage_error("portal",
                                                "unknown action '%s' for 'roam portal': approve, "
                                                "decline, login, browse, extend, logoff or forget.",
                                                args[1]);
        }
        if (action && !link) {
                while (args[argc])
                        argc++;
                opterr = 0;
                optind = 0;
                while ((c = getopt_long(argc, args, ":", options, NULL)) >= 0) {
                        switch (c) {
                        case 'u':
                                user = optarg;
                                break;
                        case 'p':
                                pwfile = optarg;
                                break;
                        case 'a':
                                always = true;
                                break;
                        case 'n':
                                save = false;
                                break;
                        case 'b':
                                browser = optarg;
                                break;
                        case ':':
                                return roam_usage_error("portal",
                                                        "roam portal %s: option '%s' needs an "
                                                        "argument.",
                                                        action, args[optind - 1]);
                        default:
                                return roam_usage_error("portal",
                                                        "roam portal %s: bad option '%s'.", action,
                                                        args[optind - 1]);
                        }
                }
                if (optind + 1 < argc)
                        return roam_usage_error("portal", "roam portal %s takes at most one link.",
                                                action);
                link = optind < argc ? args[optind] : NULL;
                if (streq(action, "login") && (!user || !pwfile))
                        return roam_usage_error("portal",
                                                "roam portal login needs --user NAME and "
                                                "--password-file FILE (- for standard input).");
                if (!streq(action, "login") && (user || pwfile || !save))
                        return roam_usage_error("portal", "--user, --password-file and --no-save "
                                                          "go with 'roam portal login'.");
                if (browser && !streq(action, "browse") && !streq(action, "extend"))
                        return roam_usage_error(
                            "portal", "--browser goes with 'roam portal browse' or 'extend'.");
                if (always && !streq(action, "login") && !streq(action, "approve"))
                        return roam_usage_error(
                            "portal", "--always goes with 'roam portal approve' or 'login'.");
        }
        if (json && action && !streq(action, "show"))
                return roam_usage_error("portal", "--json goes with 'roam portal' alone.");

        r = roam_bus_connect(&bus);
        if (r < 0)
                return r;

        if (!action || streq(action, "show")) {
                RoamPortalSession *s = NULL;
                size_t n = 0, k = 0;
                struct timespec ts;

                /* A link roamd does not have is an error, not "no portal". */
                if (link) {
                        r = roam_bus_check_link(bus, link);
                        if (r < 0)
                                return r;
                }
                r = roam_portal_sessions_get(bus, &s, &n);
                if (r < 0)
                        return r;
                /* One link: keep only it. */
                for (size_t i = 0; i < n; i++) {
                        if (link && !streq(s[i].link, link))
                                continue;
                        if (k != i) {
                                RoamPortalSession t = s[k];
                                s[k] = s[i];
                                s[i] = t;
                        }
                        k++;
                }
                clock_gettime(CLOCK_REALTIME, &ts);
                if (link && k == 0 && !json) {
                        printf("%s is not behind a captive portal.\n", link);
                        roam_portal_sessions_free(s, n);
                        return 0;
                }
                r = json ? print_json(s, k, stdout)
                         : roam_portal_print_text(
                               s, k, (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000,
                               stdout);
                roam_portal_sessions_free(s, n);
                return r;
        }

        r = pick_link(bus, link, &lk);
        if (r < 0)
                return r;
        if (streq(action, "browse") || streq(action, "extend"))
                return portal_browser_run(bus, lk, browser, streq(action, "extend"));
        if (streq(action, "login")) {
                char *pw = NULL;
                r = read_secret_file(pwfile, &pw);
                if (r < 0)
                        return r;
                r = roam_portal_login(bus, lk, user, pw, save, always);
                explicit_bzero(pw, strlen(pw));
                free(pw);
                if (r >= 0)
                        printf("%s: login sent; roam portal shows the result.\n", lk);
                return r;
        }
        r = roam_portal_action(bus, action, lk, always);
        if (r >= 0 && streq(action, "forget"))
                printf("%s: the saved login of this network is forgotten.\n", lk);
        return r;
}
