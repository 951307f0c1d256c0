/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "roam-client-bus.h"
#include "roam-bus.h"
#include "roam-format.h"
#include "roam-plain-portal.h"
#include "roam-browser.h"
#include "roam-run-app.h"
#include "roam-portal-session.h"
#include "roam-util.h"
#include "roam-verdict.h"

/* Plain mode's captive portal part: the sessions are read again after each change of
 * org.roam1.Portal and compared with the last reading; what changed is one line. The login
 * form is two lines: "portal login LINK USER", then the password alone on the next line (not
 * echoed on a terminal), sent to roamd in a memfd and wiped. */

struct PlainPortal {
        RoamLive *live;
        sd_bus *bus;
        sd_event_source *input;
        sd_bus_slot *match, *load_slot, *call_slot;
        bool loaded; /* the first reading is said as one line per session */
        RoamPortalSession *sessions;
        size_t n_sessions;
        char what[96];
        /* "portal login LINK USER": the next line is the password */
        char *login_link, *login_user;
        struct termios saved_tio;
        bool echo_off;
        /* the login browser, while it has the terminal */
        pid_t browser_pid;
        sd_event_source *browser_source;
        char *browser_link;
        /* "portal extend LINK": the browser starts once roamd lets it reach LINK */
        char *extend_link;
};

const char plain_portal_help[] =
    "  portal         captive portals: state, login offered, time left\n"
    "  portal approve LINK   let roam log in (with the saved login, if any)\n"
    "  portal login LINK USER   log in with WISPr; the password goes on the next line\n"
    "                 (not shown on a terminal)\n"
    "  portal browse LINK   log in with a text browser that reaches LINK only\n"
    "  portal extend LINK   extend the session (when the network offers it): its\n"
    "                 page in the login browser\n"
    "  portal decline|logoff|forget LINK   send nothing; log off; forget the\n"
    "                 saved login\n";

/* What to type next, for s (NULL: nothing to do). */
static void say_next(const RoamPortalSession *s)
{
        const char *st = s->state, *l = s->link;

        if (streq(st, "waiting") || streq(st, "declined") || streq(st, "failed") ||
            streq(st, "logged-off")) {
                if (s->wispr && s->has_saved_login)
                        printf(" Say: portal approve %s, or portal decline %s.", l, l);
                else if (s->wispr)
                        printf(" Say: portal login %s USER, or portal decline %s.", l, l);
                else
                        printf(" Say: portal browse %s (a text browser that reaches %s only), "
                               "or portal decline %s.",
                               l, l, l);
        } else if (streq(st, "need-credentials") || streq(st, "rejected"))
                printf(" Say: portal login %s USER.", l);
        else if (streq(st, "browser"))
                printf(" Say: portal browse %s.", l);
        else if (streq(st, "logged-in") && s->can_logoff)
                printf(" Say: portal logoff %s to log off.", l);
}

static void announce(const RoamPortalSession *s)
{
        roam_print_stamp();
        printf("captive portal on %s: %s", s->link, roam_portal_state_words(s->state));
        if (s->message && *s->message && !streq(s->message, roam_portal_state_words(s->state)))
                printf(" (%s)", s->message);
        fputc('.', stdout);
        say_next(s);
        fputc('\n', stdout);
}

static const RoamPortalSession *find(const RoamPortalSession *list, size_t n, const char *link)
{
        for (size_t i = 0; i < n; i++)
                if (streq_ptr(list[i].link, link))
                        return &list[i];
        return NULL;
}

static void browse(PlainPortal *pp, const RoamPortalSession *s, const char *url);

static void compare(PlainPortal *pp, RoamPortalSession *now, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                const RoamPortalSession *s = &now[i];
                const RoamPortalSession *was = find(pp->sessions, pp->n_sessions, s->link);

                if (!was || !streq_ptr(was->state, s->state) ||
                    !streq_ptr(was->message, s->message))
                        announce(s);
                if (s->expiry_warning && (!was || !was->expiry_warning)) {
                        char left[64];
                        roam_portal_time_left(s, roam_now(), left, sizeof(left));
                        roam_print_stamp();
                        printf("captive portal on %s: the session ends soon (%s).", s->link, left);
                        if (s->can_extend)
                                printf(" The network lets you extend it: say portal extend %s.",
                                       s->link);
                        fputc('\n', stdout);
                }
                if (pp->extend_link && streq(pp->extend_link, s->link) && s->browser_login) {
                        free(pp->extend_link);
                        pp->extend_link = NULL;
                        browse(pp, s, s->user_portal_url);
                }
                if (s->expired && (!was || !was->expired)) {
                        roam_print_stamp();
                        printf("captive portal on %s: the session's time is over; checking the "
                               "network again.\n",
                               s->link);
                }
        }
        for (size_t i = 0; i < pp->n_sessions; i++)
                if (!find(now, n, pp->sessions[i].link)) {
                        roam_print_stamp();
                        printf("%s is no longer behind a captive portal.\n", pp->sessions[i].link);
                }
}

static int on_sessions(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainPortal *pp = userdata;
        RoamPortalSession *s = NULL;
        size_t n = 0;
        int r;

        pp->load_slot = sd_bus_slot_unref(pp->load_slot);
        if (sd_bus_message_is_method_error(m, NULL))
                return 0; /* a roamd without portals: nothing to say */
        r = roam_portal_sessions_read_get(m, &s, &n);
        if (r < 0)
                return 0;
        if (pp->loaded)
                compare(pp, s, n);
        else
                for (size_t i = 0; i < n; i++)
                        announce(&s[i]);
        pp->loaded = true;
        roam_portal_sessions_free(pp->sessions, pp->n_sessions);
        pp->sessions = s;
        pp->n_sessions = n;
        fflush(stdout);
        return 0;
}

static void load(PlainPortal *pp)
{
        if (!pp->bus)
                return;
        pp->load_slot = sd_bus_slot_unref(pp->load_slot);
        (void)sd_bus_call_method_async(pp->bus, &pp->load_slot, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                       "org.freedesktop.DBus.Properties", "Get", on_sessions, pp,
                                       "ss", ROAM_PORTAL_INTERFACE, "Sessions");
}

static int on_changed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        load(userdata);
        return 0;
}

void plain_portal_watch(PlainPortal *pp)
{
        sd_bus *bus = roam_live_get_bus(pp->live);

        if (bus != pp->bus) {
                pp->match = sd_bus_slot_unref(pp->match);
                pp->load_slot = sd_bus_slot_unref(pp->load_slot);
                pp->call_slot = sd_bus_slot_unref(pp->call_slot);
                pp->bus = sd_bus_unref(pp->bus);
                pp->loaded = false;
                roam_portal_sessions_free(pp->sessions, pp->n_sessions);
                pp->sessions = NULL;
                pp->n_sessions = 0;
                if (!bus)
                        return;
                pp->bus = sd_bus_ref(bus);
                (void)sd_bus_match_signal_async(bus, &pp->match, ROAM_BUS_NAME, ROAM_PORTAL_PATH,
                                                "org.freedesktop.DBus.Properties",
                                                "PropertiesChanged", on_changed, NULL, pp);
        }
        load(pp);
}

static int on_call_done(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
        PlainPortal *pp = userdata;
        const sd_bus_error *e = sd_bus_message_get_error(m);

        pp->call_slot = sd_bus_slot_unref(pp->call_slot);
        roam_print_stamp();
        if (!e)
                printf("Done: %s.\n", pp->what);
        else if (roam_bus_error_is_denied(e)) {
                char why[256];

                printf("Not allowed to %s: %s.\n", pp->what,
                       roam_bus_denied_reason(e, why, sizeof(why)));
        } else
                printf("Cannot %s: %s\n", pp->what, e->message ? e->message : e->name);
        fflush(stdout);
        return 0;
}

static void print_field(const char *label, const char *value, void *userdata)
{
        if (value && *value)
                printf("  %s: %s\n", label, value);
}

static void print_sessions(PlainPortal *pp)
{
        if (!pp->loaded) {
                puts("Reading the captive portals; ask again in a moment.");
                return;
        }
        if (pp->n_sessions == 0) {
                puts("No captive portal: no link is behind one.");
                return;
        }
        for (size_t i = 0; i < pp->n_sessions; i++) {
                const RoamPortalSession *s = &pp->sessions[i];
                printf("%s: captive portal, %s\n", s->link, roam_portal_state_words(s->state));
                roam_portal_fields(s, roam_now(), false, print_field, NULL);
        }
}

static void echo(PlainPortal *pp, bool on)
{
        struct termios t;

        if (!on) {
                if (pp->echo_off || !isatty(STDIN_FILENO) ||
                    tcgetattr(STDIN_FILENO, &pp->saved_tio) < 0)
                        return;
                t = pp->saved_tio;
                t.c_lflag &= ~(tcflag_t)ECHO;
                pp->echo_off = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
        } else if (pp->echo_off) {
                (void)tcsetattr(STDIN_FILENO, TCSANOW, &pp->saved_tio);
                pp->echo_off = false;
        }
}

static void login_done(PlainPortal *pp)
{
        echo(pp, true);
        free(pp->login_link);
        free(pp->login_user);
        pp->login_link = pp->login_user = NULL;
}

bool plain_portal_wants_line(PlainPortal *pp)
{
        return pp && pp->login_link;
}

void plain_portal_line(PlainPortal *pp, const char *line)
{
        size_t n = strlen(line);
        int fd, r = 0;

        echo(pp, true);
        fputc('\n', stdout);
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == '\n'))
                n--;
        if (n == 0) {
                puts("No password: nothing was sent.");
                login_done(pp);
                return;
        }
        /* As `roam portal login`: the password in a memfd, never in a message body. */
        fd = memfd_create("roam-portal-password", MFD_CLOEXEC);
        if (fd < 0 || write(fd, line, n) != (ssize_t)n)
                r = -errno;
        snprintf(pp->what, sizeof(pp->what), "log in on %s", pp->login_link);
        if (r >= 0 && pp->bus) {
                pp->call_slot = sd_bus_slot_unref(pp->call_slot);
                r = sd_bus_call_method_async(pp->bus, &pp->call_slot, ROAM_BUS_NAME,
                                             ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE, "Login",
                                             on_call_done, pp, "sshbb", pp->login_link,
                                             pp->login_user, fd, true, false);
        } else if (r >= 0)
                r = -ENOTCONN;
        if (fd >= 0)
                close(fd);
        if (r < 0)
                printf("Cannot ask roamd: %s\n", strerror(-r));
        else
                printf("Logging in on %s...\n", pp->login_link);
        login_done(pp);
}

static void browser_done(PlainPortal *pp)
{
        pp->browser_source = sd_event_source_disable_unref(pp->browser_source);
        free(pp->browser_link);
        pp->browser_link = NULL;
        pp->browser_pid = 0;
        if (pp->input)
                (void)sd_event_source_set_enabled(pp->input, SD_EVENT_ON);
}

static int on_browser_exit(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        PlainPortal *pp = userdata;
        const RoamModel *m = roam_live_get_model(pp->live);
        char words[96];
        int status = 0;
        pid_t r;

        while ((r = waitpid(pp->browser_pid, &status, WNOHANG)) < 0 && errno == EINTR)
                ;
        if (r == 0)
                return 0;
        roam_print_stamp();
        if (r > 0 && WIFEXITED(status) && WEXITSTATUS(status) == ROAM_RUN_EXEC_FAILED)
                printf("The login browser did not start (see above).\n");
        else if (r > 0 && portal_browser_end_words(status, words, sizeof(words)))
                printf("The login browser %s (see above).\n", words);
        else {
                const char *path = NULL;
                for (size_t i = 0; i < m->n_links; i++)
                        if (streq_ptr(m->links[i]->name, pp->browser_link))
                                path = m->links[i]->path;
                printf("Browser closed; asking roamd to check %s again.\n", pp->browser_link);
                if (path)
                        (void)roam_live_reprobe(pp->live, path);
        }
        fflush(stdout);
        browser_done(pp);
        return 0;
}

static void browse(PlainPortal *pp, const RoamPortalSession *s, const char *url)
{
        char **argv = NULL;
        int pidfd, r;

        if (!url || !*url) {
                printf("roamd knows no login page for %s.\n", s->link);
                return;
        }
        if (pp->browser_pid) {
                puts("The login browser runs already.");
                return;
        }
        r = portal_browser_argv(NULL, url, &argv);
        if (r < 0)
                return;
        printf("Opening %s in %s, as app %s: it reaches %s only. Quit it to come back.\n", url,
               argv[0], ROAM_APP_PORTAL_LOGIN, s->link);
        fflush(stdout);
        pp->browser_link = strdup(s->link);
        if (pp->input)
                (void)sd_event_source_set_enabled(pp->input, SD_EVENT_OFF);
        r = pp->browser_link ? portal_browser_spawn(argv, -1, &pp->browser_pid, &pidfd) : -ENOMEM;
        strv_free(argv);
        if (r >= 0) {
                r = sd_event_add_io(sd_bus_get_event(pp->bus), &pp->browser_source, pidfd, EPOLLIN,
                                    on_browser_exit, pp);
                if (r >= 0)
                        r = sd_event_source_set_io_fd_own(pp->browser_source, true);
                else
                        close(pidfd);
        }
        if (r < 0) {
                printf("Cannot start the login browser: %s\n", strerror(-r));
                browser_done(pp);
        }
}

static void call(PlainPortal *pp, const char *action, const char *link)
{
        const char *member = streq(action, "approve")   ? "Approve"
                             : streq(action, "decline") ? "Decline"
                             : streq(action, "logoff")  ? "Logoff"
                             : streq(action, "extend")  ? "Extend"
                                                        : "Forget";
        int r;

        snprintf(pp->what, sizeof(pp->what), "%s on %s", action, link);
        pp->call_slot = sd_bus_slot_unref(pp->call_slot);
        if (streq(member, "Approve"))
                r = sd_bus_call_method_async(pp->bus, &pp->call_slot, ROAM_BUS_NAME,
                                             ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE, member,
                                             on_call_done, pp, "sb", link, false);
        else
                r = sd_bus_call_method_async(pp->bus, &pp->call_slot, ROAM_BUS_NAME,
                                             ROAM_PORTAL_PATH, ROAM_PORTAL_INTERFACE, member,
                                             on_call_done, pp, "s", link);
        if (r < 0)
                printf("Cannot ask roamd: %s\n", strerror(-r));
}

int plain_portal_command(PlainPortal *pp, char **words)
{
        const RoamPortalSession *s;
        const char *action = words[1], *link = action ? words[2] : NULL;

        if (!streq(words[0], "portal"))
                return 0;
        if (!action) {
                print_sessions(pp);
                return 1;
        }
        if (!link || (words[3] && !streq(action, "login")) ||
            (streq(action, "login") && (!words[3] || words[4]))) {
                puts("Say: portal approve|decline|browse|extend|logoff|forget LINK, or portal "
                     "login LINK USER.");
                return 1;
        }
        if (!pp->bus || !pp->loaded) {
                puts("roamd is not there; waiting for it.");
                return 1;
        }
        s = find(pp->sessions, pp->n_sessions, link);
        if (!s) {
                printf("%s is not behind a captive portal.\n", link);
                return 1;
        }
        if (streq(action, "login")) {
                if (!s->wispr) {
                        printf("%s offers no automatic login: portal browse %s opens its page.\n",
                               link, link);
                        return 1;
                }
                login_done(pp);
                pp->login_link = strdup(link);
                pp->login_user = strdup(words[3]);
                if (!pp->login_link || !pp->login_user) {
                        login_done(pp);
                        return -ENOMEM;
                }
                printf("Password for %s on %s (type it and press Enter; it is not shown):\n",
                       words[3], link);
                echo(pp, false);
                return 1;
        }
        if (streq(action, "browse")) {
                if (s->wispr) {
                        printf("%s offers automatic login: portal login %s USER.\n", link, link);
                        return 1;
                }
                if (streq(s->state, "browser") && s->browser_login) {
                        browse(pp, s, s->portal_url);
                        return 1;
                }
                puts("Approve first: portal approve LINK, then portal browse LINK.");
                return 1;
        }
        if (streq(action, "extend") && !s->can_extend) {
                printf("The network does not offer to extend the session on %s.\n", link);
                return 1;
        }
        if (streq(action, "extend")) {
                free(pp->extend_link);
                pp->extend_link = strdup(link);
        }
        if (streq(action, "approve") || streq(action, "extend") || streq(action, "decline") ||
            streq(action, "logoff") || streq(action, "forget")) {
                call(pp, action, link);
                return 1;
        }
        printf("Unknown portal command '%s'. Type help for the list.\n", action);
        return 1;
}

int plain_portal_new(RoamLive *live, sd_event_source *input, PlainPortal **ret)
{
        PlainPortal *pp = calloc(1, sizeof(*pp));

        if (!pp)
                return -ENOMEM;
        pp->live = live;
        pp->input = input;
        *ret = pp;
        return 0;
}

PlainPortal *plain_portal_free(PlainPortal *pp)
{
        if (!pp)
                return NULL;
        login_done(pp);
        pp->browser_source = sd_event_source_disable_unref(pp->browser_source);
        free(pp->browser_link);
        free(pp->extend_link);
        sd_bus_slot_unref(pp->match);
        sd_bus_slot_unref(pp->load_slot);
        sd_bus_slot_unref(pp->call_slot);
        sd_bus_unref(pp->bus);
        roam_portal_sessions_free(pp->sessions, pp->n_sessions);
        free(pp);
        return NULL;
}
