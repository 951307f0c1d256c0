/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
        /* The words for roamd; the password file and the browser are this machine's own. */
        r = roam_args_check_utf8("portal", (char *const[]){(char *)link, (char *)user}, 2);
        if (r < 0)
                return r;

        r = roam_bus_connect(&bus);
        if (r >= 0 && action && !streq(action, "show"))
                r = roam_bus_may_ask(bus);
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
