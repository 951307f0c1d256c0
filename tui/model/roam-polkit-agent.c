/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-polkit-agent.h"

#define REGISTER_TIMEOUT_MSEC 10000

static pid_t agent_pid;

bool roam_polkit_agent_running(void)
{
        return agent_pid > 0;
}

void roam_polkit_agent_close(void)
{
        if (agent_pid <= 0)
                return;
        (void)kill(agent_pid, SIGTERM);
        (void)kill(agent_pid, SIGCONT);
        while (waitpid(agent_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        agent_pid = 0;
}

static void exit_handler(void)
{
        roam_polkit_agent_close();
}

/* The child: the notify fd as fd 3, nothing else of ours, output to the terminal. */
static _noreturn_ void run_agent(int notify_fd, pid_t parent)
{
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sigset_t none;
        char pid[32];
        int tty;

        /* the signals as a new program expects them (the TUI blocks some for its event loop
         * and ignores SIGQUIT while suspended; both would be inherited): as systemd's
         * fork_agent() resets them */
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &dfl, NULL);
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                _exit(EXIT_FAILURE);
        /* gone with us: an agent must not outlive the process it answers for */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(EXIT_FAILURE);
        if (notify_fd != 3) {
                if (dup2(notify_fd, 3) < 0)
                        _exit(EXIT_FAILURE);
        } else if (fcntl(3, F_SETFD, 0) < 0)
                _exit(EXIT_FAILURE);
        for (int fd = 4; fd < 1024; fd++)
                (void)close(fd);
        /* stdout redirected (roam status > file): the questions still go to the terminal */
        if (!isatty(STDOUT_FILENO) || !isatty(STDERR_FILENO)) {
                tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC);
                if (tty >= 0) {
                        if (!isatty(STDOUT_FILENO))
                                (void)dup2(tty, STDOUT_FILENO);
                        if (!isatty(STDERR_FILENO))
                                (void)dup2(tty, STDERR_FILENO);
                }
        }
        snprintf(pid, sizeof(pid), "%d", (int)parent);
        execl(ROAM_POLKIT_AGENT_PATH, ROAM_POLKIT_AGENT_PATH, "--process", pid, "--notify-fd", "3",
              "--fallback", (char *)NULL);
        _exit(127);
}

int roam_polkit_agent_open(void)
{
        _cleanup_close_ int rfd = -EBADF;
        int fds[2];
        pid_t parent = getpid(), pid;

        if (agent_pid > 0)
                return 1;
        /* root is never asked; without a terminal nobody could answer (a desktop's own agent
         * still may: the calls allow interaction either way) */
        if (geteuid() == 0 || !isatty(STDIN_FILENO))
                return 0;
        if (access(ROAM_POLKIT_AGENT_PATH, X_OK) < 0)
                return 0;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return log_error_errno(errno, "Cannot start polkit's agent: %m");
        rfd = fds[0];
        fflush(stdout);
        fflush(stderr);
        pid = fork();
        if (pid < 0) {
                close(fds[1]);
                return log_error_errno(errno, "Cannot start polkit's agent: %m");
        }
        if (pid == 0)
                run_agent(fds[1], parent);
        close(fds[1]);
        agent_pid = pid;
        static bool registered;
        if (!registered && atexit(exit_handler) == 0)
                registered = true;

        /* Registered once it closes its end (or it failed and exited): then our calls go out. */
        for (;;) {
                struct pollfd p = {.fd = rfd, .events = POLLIN};
                char buf[64];
                int n = poll(&p, 1, REGISTER_TIMEOUT_MSEC);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        log_warning("polkit's agent did not register within %d s",
                                    REGISTER_TIMEOUT_MSEC / 1000);
                        break;
                }
                if (read(rfd, buf, sizeof(buf)) <= 0)
                        break;
        }
        return 1;
}
