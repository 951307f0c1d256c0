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

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-browser.h"
#include "roam-portal-session.h"
#include "roam-text.h"
#include "roam-run-app.h"
#include "roam-util.h"

#define ARGS_MAX 64

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
