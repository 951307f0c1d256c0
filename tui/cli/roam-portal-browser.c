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

#include "roam-apps-cli.h"
#include "roam-bus.h"
#include "roam-log.h"
#include "roam-portal-browser.h"
#include "roam-portal-session.h"
#include "roam-text.h"
#include "roam-tui.h"
#include "roam-util.h"

#define ARGS_MAX 64
/* How long `roam portal browse` waits for roamd to read the portal's page, and for the
 * round that checks the link after the browser. */
#define WAIT_USEC (15 * USEC_PER_SEC)

/* lynx first: the one that can be told to open no file: URL (docs/portal.md) */
static const char *const FALLBACKS[] = {"lynx", "w3m", "elinks", "links"};

/* Whether name runs: a path that is executable, or a name found on PATH. */
static bool runnable(const char *name)
{
        const char *path = getenv("PATH");
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;

        if (!name || !*name)
                return false;
        if (strchr(name, '/'))
                return access(name, X_OK) == 0;
        copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
        if (!copy)
                return false;
        for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
                _cleanup_free_ char *full = NULL;
                if (asprintf(&full, "%s/%s", dir, name) >= 0 && access(full, X_OK) == 0)
                        return true;
        }
        return false;
}

/* The first word of cmd, for runnable(). */
static bool command_runnable(const char *cmd)
{
        char word[256];
        size_t n = strcspn(cmd, " \t");

        if (n == 0 || n >= sizeof(word))
                return false;
        memcpy(word, cmd, n);
        word[n] = 0;
        return runnable(word);
}

int portal_browser_argv(const char *given, const char *url, char ***ret)
{
        _cleanup_free_ char *cmd = NULL, *browsers = NULL;
        const char *env = getenv("ROAM_PORTAL_BROWSER");
        char **argv, *save = NULL;
        size_t n = 0;
        bool had_url = false;

        if (given && *given)
                cmd = strdup(given);
        else if (env && *env)
                cmd = strdup(env);
        else {
                /* $BROWSER: commands separated by colons, the first that runs wins. */
                const char *b = getenv("BROWSER");
                if (b && *b) {
                        browsers = strdup(b);
                        if (!browsers)
                                return log_oom();
                        for (char *c = strtok_r(browsers, ":", &save); c && !cmd;
                             c = strtok_r(NULL, ":", &save))
                                if (command_runnable(c))
                                        cmd = strdup(c);
                }
                for (size_t i = 0; !cmd && i < ELEMENTSOF(FALLBACKS); i++)
                        if (runnable(FALLBACKS[i]))
                                /* lynx can be told to open no file: URL and run nothing
                                 * local; w3m has no such switch (docs/portal.md) */
                                cmd = strdup(streq(FALLBACKS[i], "lynx")
                                                 ? "lynx -restrictions=file_url,shell,exec,"
                                                   "editor,disk_save,download"
                                                 : FALLBACKS[i]);
                if (!cmd) {
                        log_error("No text browser found: install lynx or w3m, or name one with "
                                  "--browser CMD or $ROAM_PORTAL_BROWSER.");
                        return -ENOENT;
                }
        }
        if (!cmd)
                return log_oom();
        argv = calloc(ARGS_MAX + 2, sizeof(char *));
        if (!argv)
                return log_oom();
        save = NULL;
        for (char *w = strtok_r(cmd, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                if (n >= ARGS_MAX) {
                        strv_free(argv);
                        log_error("The browser command has more than %d words.", ARGS_MAX);
                        return -E2BIG;
                }
                if (streq(w, "%s")) {
                        argv[n++] = strdup(url);
                        had_url = true;
                } else
                        argv[n++] = strdup(w);
                if (!argv[n - 1]) {
                        strv_free(argv);
                        return log_oom();
                }
        }
        if (n == 0) {
                strv_free(argv);
                log_error("The browser command is empty.");
                return -EINVAL;
        }
        if (!had_url && !(argv[n++] = strdup(url))) {
                strv_free(argv);
                return log_oom();
        }
        *ret = argv;
        return 0;
}

/* The uid the person at the terminal logged in as, when roam runs as root for them: sudo's
 * and pkexec's word, else the owner of the terminal. 0 when there is none but root. */
static uid_t invoking_uid(gid_t *ret_gid)
{
        const char *vars[] = {"SUDO_UID", "PKEXEC_UID"};
        struct stat st;

        *ret_gid = (gid_t)-1;
        for (size_t i = 0; i < ELEMENTSOF(vars); i++) {
                const char *v = getenv(vars[i]);
                char *end;
                unsigned long u;

                if (!v || !*v)
                        continue;
                errno = 0;
                u = strtoul(v, &end, 10);
                if (errno == 0 && !*end && u > 0 && u < (unsigned long)(uid_t)-1) {
                        const char *g = i == 0 ? getenv("SUDO_GID") : NULL;
                        if (g && *g) {
                                unsigned long gg = strtoul(g, &end, 10);
                                if (!*end && gg < (unsigned long)(gid_t)-1)
                                        *ret_gid = (gid_t)gg;
                        }
                        return (uid_t)u;
                }
        }
        for (int fd = 0; fd <= 2; fd++)
                if (isatty(fd) && fstat(fd, &st) >= 0 && st.st_uid != 0)
                        return st.st_uid;
        return 0;
}

/* In the browser's child, once it is in the portal-login app: a portal's page is hostile, so
 * the browser does not keep root's power. Started as root for someone (sudo, pkexec, their
 * terminal): it becomes that user, groups included, with HOME and USER of theirs. Always: no
 * new privileges (a setuid program it runs gains none). */
static int browser_drop_privileges(void *userdata)
{
        const struct passwd *pw;
        gid_t gid;
        uid_t uid;

        if (geteuid() == 0 && (uid = invoking_uid(&gid)) != 0) {
                pw = getpwuid(uid);
                if (gid == (gid_t)-1)
                        gid = pw ? pw->pw_gid : (gid_t)uid;
                if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) < 0 ||
                    setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
                        return log_error_errno(errno, "Cannot become user %u for the browser: %m",
                                               (unsigned)uid);
                /* no way back */
                if (setuid(0) == 0)
                        return log_error_errno(EPERM, "Still root after dropping to user %u.",
                                               (unsigned)uid);
                if (pw) {
                        (void)setenv("HOME", pw->pw_dir, 1);
                        (void)setenv("USER", pw->pw_name, 1);
                        (void)setenv("LOGNAME", pw->pw_name, 1);
                }
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return log_error_errno(errno, "Cannot set no_new_privs for the browser: %m");
        return 0;
}

int portal_browser_spawn(char **argv, int stderr_fd, pid_t *ret_pid, int *ret_pidfd)
{
        sigset_t all;
        pid_t pid;
        int pidfd;

        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0)
                return log_error_errno(errno, "Cannot start the browser: %m");
        if (pid == 0) {
                /* The child: messages to the terminal, signals as a shell leaves them, then
                 * into the portal-login app (roamd moves us before it answers), then exec. */
                log_set_sink(NULL, NULL);
                if (stderr_fd >= 0 && stderr_fd != STDERR_FILENO &&
                    dup2(stderr_fd, STDERR_FILENO) < 0)
                        _exit(ROAM_RUN_EXEC_FAILED);
                sigemptyset(&all);
                (void)sigprocmask(SIG_SETMASK, &all, NULL);
                (void)signal(SIGINT, SIG_DFL);
                (void)signal(SIGQUIT, SIG_DFL);
                (void)signal(SIGPIPE, SIG_DFL);
                (void)roam_run_app_full(ROAM_APP_PORTAL_LOGIN, 0, argv, browser_drop_privileges,
                                        NULL);
                /* Only when roamd refused or the exec failed: never run it ungoverned. */
                _exit(ROAM_RUN_EXEC_FAILED);
        }
        pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0) {
                int r = log_error_errno(errno, "Cannot follow the browser: %m");
                (void)kill(pid, SIGTERM);
                (void)waitpid(pid, NULL, 0);
                return r;
        }
        *ret_pid = pid;
        *ret_pidfd = pidfd;
        return 0;
}

const char *portal_browser_end_words(int status, char *buf, size_t size)
{
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return NULL;
        if (WIFEXITED(status) && WEXITSTATUS(status) == ROAM_RUN_EXEC_FAILED)
                snprintf(buf, size, "did not start (exit status %d)", ROAM_RUN_EXEC_FAILED);
        else if (WIFEXITED(status))
                snprintf(buf, size, "failed (exit status %d)", WEXITSTATUS(status));
        else if (WIFSIGNALED(status))
                snprintf(buf, size, "was killed by signal %d (%s)", WTERMSIG(status),
                         strsignal(WTERMSIG(status)));
        else
                snprintf(buf, size, "ended (wait status 0x%x)", (unsigned)status);
        return buf;
}

/* The last words shown are at most this long: the status line has three rows at most. */
#define LAST_WORDS_MAX 160

int portal_browser_last_words(const char *tail, size_t n, char **ret)
{
        size_t start[2] = {}, len[2] = {}, found = 0, end = n;
        _cleanup_free_ char *joined = NULL;
        int r;

        *ret = NULL;
        /* From the end: the last two lines with something besides blanks in them. */
        while (end > 0 && found < 2) {
                size_t b = end;
                bool blank = true;
                while (b > 0 && tail[b - 1] != '\n')
                        b--;
                for (size_t i = b; i < end; i++)
                        if (!strchr(" \t\r", tail[i]))
                                blank = false;
                if (!blank) {
                        start[1 - found] = b;
                        len[1 - found] = end - b;
                        found++;
                }
                end = b > 0 ? b - 1 : 0;
        }
        if (found == 0)
                return 0;
        if (found == 1) {
                start[0] = start[1];
                len[0] = len[1];
        }
        if (asprintf(&joined, "%.*s%s%.*s", (int)len[0], tail + start[0], found == 2 ? " / " : "",
                     found == 2 ? (int)len[1] : 0, found == 2 ? tail + start[1] : "") < 0)
                return -ENOMEM;
        r = roam_text_clean_str(joined, ROAM_TEXT_MARK, ret);
        if (r < 0)
                return r;
        /* the end matters most (the error comes last): cut at the front */
        if (strlen(*ret) > LAST_WORDS_MAX) {
                const char *p = *ret + strlen(*ret) - LAST_WORDS_MAX;
                char *cut;
                while ((*p & 0xc0) == 0x80) /* not inside a character */
                        p++;
                if (asprintf(&cut, "...%s", p) < 0)
                        return -ENOMEM;
                free(*ret);
                *ret = cut;
        }
        return 0;
}

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

static int get_link_probe(sd_bus *bus, const char *path, uint64_t *ret_probe, char **ret_verdict)
{
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_get_property_trivial(bus, ROAM_BUS_NAME, path, ROAM_LINK_INTERFACE, "LastProbe",
                                        &error, 't', ret_probe);
        if (r >= 0 && ret_verdict)
                r = sd_bus_get_property_string(bus, ROAM_BUS_NAME, path, ROAM_LINK_INTERFACE,
                                               "Connectivity", &error, ret_verdict);
        return r;
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

/* ---- the TUI ---- */

/* What the TUI keeps of the browser's stderr: its end, where the reason it failed is. */
#define TAIL_MAX 4096

typedef struct TuiBrowser {
        Tui *tui;
        char *link;
        char *name; /* the browser's command, for messages */
        pid_t pid;
        sd_event_source *source;
        /* the read end of the browser's stderr, and the last TAIL_MAX bytes read from it */
        sd_event_source *err_source;
        char tail[TAIL_MAX];
        size_t tail_len;
} TuiBrowser;

static TuiBrowser *tui_browser_free(TuiBrowser *b)
{
        if (!b)
                return NULL;
        sd_event_source_disable_unref(b->err_source);
        free(b->link);
        free(b->name);
        free(b);
        return NULL;
}

static void tui_browser_destroy(void *userdata)
{
        tui_browser_free(userdata);
}

/* Reads what the browser wrote to stderr so far, keeping the end. */
static void read_stderr(TuiBrowser *b)
{
        char buf[1024]; /* less than TAIL_MAX: one read never fills the tail alone */
        int fd;

        if (!b->err_source)
                return;
        fd = sd_event_source_get_io_fd(b->err_source);
        for (;;) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        /* EOF (every writer gone) or an error: nothing more to read */
                        if (n == 0 || errno != EAGAIN)
                                b->err_source = sd_event_source_disable_unref(b->err_source);
                        return;
                }
                if (b->tail_len + (size_t)n > TAIL_MAX) {
                        size_t drop = b->tail_len + (size_t)n - TAIL_MAX;
                        memmove(b->tail, b->tail + drop, b->tail_len - drop);
                        b->tail_len -= drop;
                }
                memcpy(b->tail + b->tail_len, buf, (size_t)n);
                b->tail_len += (size_t)n;
        }
}

static void close_pair(int fd[2])
{
        for (int i = 0; i < 2; i++)
                if (fd[i] >= 0) {
                        close(fd[i]);
                        fd[i] = -1;
                }
}

static int on_browser_stderr(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        read_stderr(userdata);
        return 0;
}

static int on_browser_exit(sd_event_source *es, int fd, uint32_t revents, void *userdata)
{
        TuiBrowser *b = userdata;
        Tui *t = b->tui;
        const RoamModel *m = tui_model(t);
        _cleanup_free_ char *last = NULL;
        const char *path = NULL, *end = NULL;
        char words[96];
        int status = 0;
        pid_t r;

        while ((r = waitpid(b->pid, &status, WNOHANG)) < 0 && errno == EINTR)
                ;
        if (r == 0)
                return 0; /* not yet */
        tui_resume(t);
        for (size_t i = 0; i < m->n_links; i++)
                if (streq_ptr(m->links[i]->name, b->link))
                        path = m->links[i]->path;
        if (r > 0)
                end = portal_browser_end_words(status, words, sizeof(words));
        if (end) {
                /* It failed: what it said last is why (a name that does not resolve, roamd
                 * refusing the app); a probe round would only hide that. */
                read_stderr(b);
                (void)portal_browser_last_words(b->tail, b->tail_len, &last);
                tui_message(t, THEME_ERROR, "The login browser %s %s%s%s", b->name, end,
                            last ? ": " : ".", strempty(last));
        } else if (!path || roam_live_reprobe(tui_live(t), path) < 0)
                tui_message(t, THEME_WARNING, "Browser closed; roamd checks %s at its next round.",
                            b->link);
        else
                tui_message(t, THEME_STATUS, "Browser closed: checking %s again%s", b->link,
                            tui_glyph_ellipsis(t));
        /* The event loop's reference was the only one: this frees the watch, and b with it
         * (the destroy callback). */
        (void)sd_event_source_set_enabled(es, SD_EVENT_OFF);
        (void)sd_event_source_set_floating(es, false);
        return 0;
}

int portal_browser_tui(Tui *t, const char *link, const char *url)
{
        TuiBrowser *b;
        char **argv = NULL;
        int pidfd, r, err[2] = {-1, -1};

        r = portal_browser_argv(NULL, url, &argv);
        if (r < 0)
                return r;
        b = calloc(1, sizeof(*b));
        /* the command's name, not its directory: the message has three rows at most */
        if (!b || !(b->link = strdup(link)) ||
            !(b->name = strdup(strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0]))) {
                strv_free(argv);
                tui_browser_free(b);
                return -ENOMEM;
        }
        b->tui = t;
        /* The browser's stderr goes to a pipe the event loop reads (bounded), so a browser
         * that fails at once leaves its reason on the screen rather than under it. */
        if (pipe2(err, O_CLOEXEC) < 0 || fcntl(err[0], F_SETFL, O_NONBLOCK) < 0)
                r = -errno;
        else if ((r = sd_event_add_io(tui_event(t), &b->err_source, err[0], EPOLLIN,
                                      on_browser_stderr, b)) >= 0) {
                r = sd_event_source_set_io_fd_own(b->err_source, true);
                if (r >= 0)
                        err[0] = -1;
        }
        if (r < 0) {
                close_pair(err);
                strv_free(argv);
                tui_browser_free(b);
                return r;
        }
        r = tui_suspend(t);
        if (r < 0) {
                close_pair(err);
                strv_free(argv);
                tui_browser_free(b);
                return r;
        }
        printf("roam: %s in %s as app %s (the captive link %s only). Quit it to come back.\n", url,
               argv[0], ROAM_APP_PORTAL_LOGIN, link);
        r = portal_browser_spawn(argv, err[1], &b->pid, &pidfd);
        strv_free(argv);
        close_pair(err); /* the write end is the browser's alone */
        if (r >= 0) {
                /* A pidfd turns readable when the child ends: no SIGCHLD handling needed. */
                r = sd_event_add_io(tui_event(t), &b->source, pidfd, EPOLLIN, on_browser_exit, b);
                if (r >= 0)
                        r = sd_event_source_set_io_fd_own(b->source, true);
                if (r < 0) {
                        b->source = sd_event_source_disable_unref(b->source);
                        close(pidfd);
                        (void)kill(b->pid, SIGTERM);
                        (void)waitpid(b->pid, NULL, 0);
                }
        }
        if (r < 0) {
                tui_resume(t);
                tui_browser_free(b);
                return r;
        }
        /* The event loop owns the watch from here (and b with it): the TUI may end while the
         * browser runs. */
        (void)sd_event_source_set_destroy_callback(b->source, tui_browser_destroy);
        (void)sd_event_source_set_floating(b->source, true);
        b->source = sd_event_source_unref(b->source);
        return 0;
}
