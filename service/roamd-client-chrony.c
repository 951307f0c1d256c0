/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-chrony-cmd.h"
#include "roamd-client-chrony.h"

/* chronyc waits a second, then tries again; one reload is never urgent */
#define CHRONY_REPLY_TIMEOUT_USEC (2 * USEC_PER_SEC)

struct ChronyClient {
        sd_event *event;
        sd_event_source *io, *timeout;
        int fd;
        char local[sizeof(((struct sockaddr_un *)NULL)->sun_path)]; /* our socket, "" none */
        char *path;  /* chronyd's socket of the exchange under way */
        char *again; /* a reload asked while one was under way: its socket path */
        uint32_t sequence;
        int last_error; /* said once; 1 before the first exchange */
};

static void exchange_end(ChronyClient *c)
{
        c->io = sd_event_source_disable_unref(c->io);
        c->timeout = sd_event_source_disable_unref(c->timeout);
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -EBADF;
        if (c->local[0])
                (void)unlink(c->local);
        c->local[0] = 0;
        free(c->path);
        c->path = NULL;
}

ChronyClient *chrony_client_free(ChronyClient *c)
{
        if (!c)
                return NULL;
        exchange_end(c);
        free(c->again);
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

int chrony_client_new(sd_event *event, ChronyClient **ret)
{
        ChronyClient *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->event = sd_event_ref(event);
        c->fd = -EBADF;
        c->last_error = 1;
        *ret = c;
        return 0;
}

/* What happened, said when it differs from the last time. */
static void said(ChronyClient *c, int r, const char *path, const char *words)
{
        if (r == c->last_error)
                return;
        c->last_error = r;
        if (r == 0)
                log_info("Time: chronyd at %s reloads its sources", path);
        else if (r == -ENOENT || r == -ECONNREFUSED)
                log_info("Time: no chronyd listens at %s: its sources are not reloaded", path);
        else if (words)
                log_warning("Time: chronyd at %s did not reload its sources: %s", path, words);
        else
                log_warning_errno(r, "Time: chronyd at %s did not reload its sources: %m", path);
}

static void exchange_done(ChronyClient *c)
{
        _cleanup_free_ char *again = TAKE_PTR(c->again);

        exchange_end(c);
        if (again)
                (void)chrony_client_reload_sources(c, again);
}

static int on_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        ChronyClient *c = userdata;
        uint8_t buf[512];
        const char *peer = c->path;
        ChronyCmdStatus st;
        ssize_t n;
        int r;

        for (;;) {
                n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0; /* a stray datagram was all: wait on */
                        said(c, -errno, peer, NULL);
                        exchange_done(c);
                        return 0;
                }
                r = chrony_cmd_parse_reply(buf, (size_t)n, c->sequence, &st);
                if (r == -EBADMSG)
                        continue; /* not the answer to our request */
                if (r == 0 && st == CHRONY_CMD_SUCCESS)
                        said(c, 0, peer, NULL);
                else
                        said(c, -EPROTO, peer, chrony_cmd_status_to_string(st));
                exchange_done(c);
                return 0;
        }
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        ChronyClient *c = userdata;

        said(c, -ETIMEDOUT, c->path, "no answer");
        exchange_done(c);
        return 0;
}

static int exchange_start(ChronyClient *c, const char *path)
{
        struct sockaddr_un remote = {.sun_family = AF_UNIX}, local = {.sun_family = AF_UNIX};
        _cleanup_free_ char *dir = NULL;
        uint8_t req[CHRONY_CMD_REQUEST_SIZE];
        const char *slash;
        int r;

        if (strlen(path) >= sizeof(remote.sun_path))
                return -ENAMETOOLONG;
        strcpy(remote.sun_path, path);
        c->path = strdup(path);
        if (!c->path)
                return -ENOMEM;
        /* our socket beside chronyd's, as chronyc does */
        slash = strrchr(path, '/');
        dir = slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
        if (!dir)
                return -ENOMEM;
        if (snprintf(local.sun_path, sizeof(local.sun_path), "%s/roamd.%d.sock", dir,
                     (int)getpid()) >= (int)sizeof(local.sun_path))
                return -ENAMETOOLONG;

        c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0)
                return -errno;
        (void)unlink(local.sun_path); /* a leftover of an earlier roamd of this pid */
        if (bind(c->fd, (struct sockaddr *)&local, sizeof(local)) < 0)
                return -errno;
        strcpy(c->local, local.sun_path);
        /* chronyd runs as its own user: it must be able to answer */
        if (chmod(c->local, 0666) < 0)
                return -errno;
        if (connect(c->fd, (struct sockaddr *)&remote, sizeof(remote)) < 0)
                return -errno;
        chrony_cmd_reload_sources(++c->sequence, 0, req);
        if (send(c->fd, req, sizeof(req), MSG_DONTWAIT) < 0)
                return -errno;
        r = sd_event_add_io(c->event, &c->io, c->fd, EPOLLIN, on_reply, c);
        if (r >= 0)
                r = sd_event_add_time_relative(c->event, &c->timeout, CLOCK_BOOTTIME,
                                               CHRONY_REPLY_TIMEOUT_USEC, 0, on_timeout, c);
        return r;
}

int chrony_client_reload_sources(ChronyClient *c, const char *socket_path)
{
        int r;

        if (c->fd >= 0) {
                char *p = strdup(socket_path);
                if (!p)
                        return -ENOMEM;
                free(c->again);
                c->again = p;
                return 0;
        }
        r = exchange_start(c, socket_path);
        if (r < 0) {
                /* ENOENT also when chronyd's directory is not there: no chronyd either */
                said(c, r, socket_path, NULL);
                exchange_end(c);
        }
        return r;
}
