/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
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
#include "roamd-chrony-tracking.h"
#include "roamd-client-chrony.h"

/* chronyc waits a second, then tries again; one reload is never urgent */
#define CHRONY_REPLY_TIMEOUT_USEC (2 * USEC_PER_SEC)
#define WITNESS                   "ntp"
/* chronyd's sources read beside its tracking at most; more: the tracking is refused */
#define CHRONY_MAX_SOURCES 256

typedef enum ChronyExchange {
        CHRONY_EXCHANGE_RELOAD,
        CHRONY_EXCHANGE_TRACKING,
        CHRONY_EXCHANGE_N_SOURCES,   /* after a tracking report that is a sample */
        CHRONY_EXCHANGE_SOURCE_DATA, /* one by one, up to n_sources */
        _CHRONY_EXCHANGE_MAX,
        _CHRONY_EXCHANGE_INVALID = -EINVAL,
} ChronyExchange;

struct ChronyClient {
        sd_event *event;
        TimeEventFn on_time;
        void *userdata;
        sd_event_source *io, *timeout, *poll;
        int fd;
        char local[sizeof(((struct sockaddr_un *)NULL)->sun_path)]; /* our socket, "" none */
        char *path;              /* chronyd's socket of the exchange under way */
        ChronyExchange exchange; /* what is under way */
        usec_t sent;             /* CLOCK_REALTIME when the request went */
        char *again;             /* a reload asked while one was under way: its socket path */
        char *follow;            /* the socket whose tracking is read; NULL: none */
        bool tracking_due;       /* asked while another exchange was under way */
        uint32_t sequence;
        int last_error;          /* the reload's, said once; 1 before the first exchange */
        char tracking_said[256]; /* the tracking's last news, said once */
        char origin[128];        /* of the sample handed on; "" none: the witness is gone */
        /* the tracking's sample, held while chronyd's sources are read */
        TimeSample pending;
        char pending_ref[96];
        ChronySources sources;
        uint32_t n_sources, index;
        bool next; /* the answer read, the exchange's next request went */
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
        c->poll = sd_event_source_disable_unref(c->poll);
        free(c->again);
        free(c->follow);
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

int chrony_client_new(sd_event *event, TimeEventFn on_time, void *userdata, ChronyClient **ret)
{
        ChronyClient *c = calloc(1, sizeof(*c));

        if (!c)
                return -ENOMEM;
        c->event = sd_event_ref(event);
        c->on_time = on_time;
        c->userdata = userdata;
        c->fd = -EBADF;
        c->last_error = 1;
        *ret = c;
        return 0;
}

/* What happened to a reload, said when it differs from the last time. */
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

/* The tracking's news, logged when it differs from the last. */
static void tracking_say(ChronyClient *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void tracking_say(ChronyClient *c, const char *fmt, ...)
{
        char buf[sizeof(c->tracking_said)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        if (streq(buf, c->tracking_said))
                return;
        memcpy(c->tracking_said, buf, sizeof(buf));
        log_info("Time: %s", buf);
}

static void tracking_gone(ChronyClient *c)
{
        TimeEvent ev = {.type = TIME_EVENT_GONE, .witness = WITNESS};

        if (!c->origin[0])
                return;
        c->origin[0] = 0;
        c->on_time(&ev, c->userdata);
}

static void tracking_failed(ChronyClient *c, int r, const char *path, const char *words)
{
        if (r == -ENOENT || r == -ECONNREFUSED)
                tracking_say(c, "no chronyd listens at %s: its time is not read", path);
        else if (words)
                tracking_say(c, "chronyd at %s does not say what it tracks: %s", path, words);
        else
                tracking_say(c, "chronyd at %s does not say what it tracks: %s", path,
                             strerror(-r));
        tracking_gone(c);
}

static int exchange_next(ChronyClient *c, ChronyExchange what);

/* A tracking report: refused, or held while chronyd's sources are read. */
static void tracking_read(ChronyClient *c, const ChronyTracking *t)
{
        TimeSample s;
        char reason[160];
        int r;

        r = chrony_tracking_to_sample(t, c->sent, clock_now_usec(CLOCK_REALTIME),
                                      clock_now_usec(CLOCK_BOOTTIME), &s, reason, sizeof(reason));
        if (r < 0) {
                tracking_say(c, "chronyd's time is refused: %s", reason);
                tracking_gone(c);
                return;
        }
        /* held until chronyd's sources say whether roamd's own refclock is in it */
        c->pending = s;
        (void)chrony_tracking_reference(t, c->pending_ref, sizeof(c->pending_ref));
        c->sources = CHRONY_SOURCES_NONE;
        c->n_sources = c->index = 0;
        r = exchange_next(c, CHRONY_EXCHANGE_N_SOURCES);
        if (r < 0)
                tracking_failed(c, r, c->path, NULL);
}

/* All of chronyd's sources read: the held sample goes on, or is refused. */
static void sources_read(ChronyClient *c)
{
        TimeEvent ev = {.type = TIME_EVENT_SAMPLE, .sample = &c->pending, .witness = WITNESS};
        char reason[160], words[64];

        if (chrony_sources_check(&c->sources, reason, sizeof(reason)) < 0) {
                tracking_say(c, "chronyd's time is refused: %s", reason);
                tracking_gone(c);
                return;
        }
        snprintf(c->pending.origin, sizeof(c->pending.origin), "chronyd, reference %s, %s",
                 c->pending_ref, chrony_sources_to_string(&c->sources, words, sizeof(words)));
        tracking_say(c, "chronyd at %s follows %s: its time is a sample", c->path, c->pending_ref);
        /* another reference: the sample replaces the last, not beside it */
        if (!streq(c->pending.origin, c->origin))
                tracking_gone(c);
        memcpy(c->origin, c->pending.origin, sizeof(c->origin));
        c->on_time(&ev, c->userdata);
}

static int exchange_start(ChronyClient *c, const char *path, ChronyExchange what);

static void exchange_done(ChronyClient *c)
{
        _cleanup_free_ char *again = TAKE_PTR(c->again);

        exchange_end(c);
        if (again)
                (void)chrony_client_reload_sources(c, again);
        else if (c->tracking_due && c->follow) {
                int r;

                c->tracking_due = false;
                r = exchange_start(c, c->follow, CHRONY_EXCHANGE_TRACKING);
                if (r < 0) {
                        tracking_failed(c, r, c->follow, NULL);
                        exchange_end(c);
                }
        }
}

/* A reply about chronyd's sources: the next request went, or the sample is decided. */
static void sources_reply(ChronyClient *c, int r, ChronyCmdStatus st, const ChronySource *src)
{
        const char *status;
        char words[96];

        if (r == -ENODATA)
                r = 0, st = CHRONY_CMD_SUCCESS, src = NULL; /* a source gone meanwhile */
        if (r < 0 || st != CHRONY_CMD_SUCCESS) {
                status = chrony_cmd_status_to_string(st);
                snprintf(words, sizeof(words), "its sources: %s", status ?: "unreadable");
                tracking_failed(c, -EPROTO, c->path, words);
                return;
        }
        if (c->exchange == CHRONY_EXCHANGE_SOURCE_DATA) {
                if (src)
                        chrony_sources_add(&c->sources, src);
                c->index++;
        }
        if (c->index >= c->n_sources) {
                sources_read(c);
                return;
        }
        r = exchange_next(c, CHRONY_EXCHANGE_SOURCE_DATA);
        if (r < 0)
                tracking_failed(c, r, c->path, NULL);
}

/* One datagram: 1 when it was the answer and the exchange is over, 2 when it goes on (the
 * next request went), 0 when it was not ours. */
static int reply_read(ChronyClient *c, const uint8_t *buf, size_t n)
{
        const char *peer = c->path;
        ChronyTracking t;
        ChronySource src;
        ChronyCmdStatus st = _CHRONY_CMD_STATUS_INVALID;
        int r;

        c->next = false;

        switch (c->exchange) {
        case CHRONY_EXCHANGE_RELOAD:
                r = chrony_cmd_parse_reply(buf, n, c->sequence, &st);
                if (r == -EBADMSG)
                        return 0;
                if (r == 0 && st == CHRONY_CMD_SUCCESS) {
                        said(c, 0, peer, NULL);
                        /* the sources changed: what chronyd tracks may too */
                        c->tracking_due = true;
                } else
                        said(c, -EPROTO, peer, chrony_cmd_status_to_string(st));
                return 1;
        case CHRONY_EXCHANGE_TRACKING:
                r = chrony_cmd_parse_tracking(buf, n, c->sequence, &st, &t);
                if (r == -EBADMSG)
                        return 0;
                if (r == 0 && st == CHRONY_CMD_SUCCESS)
                        tracking_read(c, &t);
                else
                        tracking_failed(c, -EPROTO, peer, chrony_cmd_status_to_string(st));
                return c->next ? 2 : 1;
        case CHRONY_EXCHANGE_N_SOURCES:
                r = chrony_cmd_parse_n_sources(buf, n, c->sequence, &st, &c->n_sources);
                if (r == -EBADMSG)
                        return 0;
                if (r == 0 && st == CHRONY_CMD_SUCCESS && c->n_sources > CHRONY_MAX_SOURCES) {
                        tracking_say(c,
                                     "chronyd's time is refused: it has %u sources, more than "
                                     "roamd reads (%u)",
                                     (unsigned)c->n_sources, CHRONY_MAX_SOURCES);
                        tracking_gone(c);
                        return 1;
                }
                sources_reply(c, r, st, NULL);
                return c->next ? 2 : 1;
        case CHRONY_EXCHANGE_SOURCE_DATA:
                r = chrony_cmd_parse_source_data(buf, n, c->sequence, &st, &src);
                if (r == -EBADMSG)
                        return 0;
                sources_reply(c, r, st, &src);
                return c->next ? 2 : 1;
        case _CHRONY_EXCHANGE_MAX:
        case _CHRONY_EXCHANGE_INVALID:
                break;
        }
        return 1;
}

static int on_reply(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        ChronyClient *c = userdata;
        uint8_t buf[512];
        ssize_t n;
        int r;

        for (;;) {
                n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                return 0; /* a stray datagram was all: wait on */
                        if (c->exchange == CHRONY_EXCHANGE_RELOAD)
                                said(c, -errno, c->path, NULL);
                        else
                                tracking_failed(c, -errno, c->path, NULL);
                        exchange_done(c);
                        return 0;
                }
                r = reply_read(c, buf, (size_t)n);
                if (r == 1) {
                        exchange_done(c);
                        return 0;
                }
                if (r == 2)
                        return 0; /* the next request is under way */
        }
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        ChronyClient *c = userdata;

        if (c->exchange == CHRONY_EXCHANGE_RELOAD)
                said(c, -ETIMEDOUT, c->path, "no answer");
        else
                tracking_failed(c, -ETIMEDOUT, c->path, "no answer");
        exchange_done(c);
        return 0;
}

static int exchange_start(ChronyClient *c, const char *path, ChronyExchange what)
{
        struct sockaddr_un remote = {.sun_family = AF_UNIX}, local = {.sun_family = AF_UNIX};
        _cleanup_free_ char *dir = NULL;
        const char *slash;
        mode_t old_umask;
        int r;

        if (strlen(path) >= sizeof(remote.sun_path))
                return -ENAMETOOLONG;
        strcpy(remote.sun_path, path);
        c->path = strdup(path);
        if (!c->path)
                return -ENOMEM;
        c->exchange = what;
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
        /* chronyd runs as its own user: it must be able to answer, so the socket is made
         * 0666 by the umask as bind() creates it. Not chmod() after: the directory is
         * chronyd's user's, who could swap the new socket for a symlink in between. */
        old_umask = umask(0111);
        r = bind(c->fd, (struct sockaddr *)&local, sizeof(local)) < 0 ? -errno : 0;
        (void)umask(old_umask);
        if (r < 0)
                return r;
        strcpy(c->local, local.sun_path);
        if (connect(c->fd, (struct sockaddr *)&remote, sizeof(remote)) < 0)
                return -errno;
        r = sd_event_add_io(c->event, &c->io, c->fd, EPOLLIN, on_reply, c);
        if (r < 0)
                return r;
        return exchange_next(c, what);
}

/* Sends the request of this exchange on the socket of the one under way (the first, or the
 * next after an answer), and waits for its answer at most CHRONY_REPLY_TIMEOUT_USEC. */
static int exchange_next(ChronyClient *c, ChronyExchange what)
{
        uint8_t req[CHRONY_CMD_TRACKING_SIZE];
        size_t len = 0;
        int r;

        c->exchange = what;
        switch (what) {
        case CHRONY_EXCHANGE_RELOAD:
                chrony_cmd_reload_sources(++c->sequence, 0, req);
                len = CHRONY_CMD_REQUEST_SIZE;
                break;
        case CHRONY_EXCHANGE_TRACKING:
                chrony_cmd_tracking(++c->sequence, 0, req);
                len = CHRONY_CMD_TRACKING_SIZE;
                break;
        case CHRONY_EXCHANGE_N_SOURCES:
                chrony_cmd_n_sources(++c->sequence, 0, req);
                len = CHRONY_CMD_N_SOURCES_SIZE;
                break;
        case CHRONY_EXCHANGE_SOURCE_DATA:
                chrony_cmd_source_data(++c->sequence, 0, c->index, req);
                len = CHRONY_CMD_SOURCE_DATA_SIZE;
                break;
        case _CHRONY_EXCHANGE_MAX:
        case _CHRONY_EXCHANGE_INVALID:
                return -EINVAL;
        }
        if (what != CHRONY_EXCHANGE_N_SOURCES && what != CHRONY_EXCHANGE_SOURCE_DATA)
                c->sent = clock_now_usec(CLOCK_REALTIME);
        if (send(c->fd, req, len, MSG_DONTWAIT) < 0)
                return -errno;
        c->timeout = sd_event_source_disable_unref(c->timeout);
        r = sd_event_add_time_relative(c->event, &c->timeout, CLOCK_BOOTTIME,
                                       CHRONY_REPLY_TIMEOUT_USEC, 0, on_timeout, c);
        if (r < 0)
                return r;
        c->next = true;
        return 0;
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
        r = exchange_start(c, socket_path, CHRONY_EXCHANGE_RELOAD);
        if (r < 0) {
                /* ENOENT also when chronyd's directory is not there: no chronyd either */
                said(c, r, socket_path, NULL);
                exchange_end(c);
                /* the reload that went nowhere leaves a tracking read queued behind it */
                exchange_done(c);
        }
        return r;
}

/* Asks for the tracking now, or after the exchange under way. */
static void tracking_ask(ChronyClient *c)
{
        c->tracking_due = true;
        if (c->fd < 0)
                exchange_done(c);
}

static int on_poll(sd_event_source *s, uint64_t usec, void *userdata)
{
        ChronyClient *c = userdata;

        tracking_ask(c);
        (void)sd_event_source_set_time(s, usec + CHRONY_TRACKING_INTERVAL_USEC);
        (void)sd_event_source_set_enabled(s, SD_EVENT_ON);
        return 0;
}

int chrony_client_follow(ChronyClient *c, const char *socket_path)
{
        char *p = NULL;
        int r;

        if (socket_path) {
                p = strdup(socket_path);
                if (!p)
                        return -ENOMEM;
        }
        free(c->follow);
        c->follow = p;
        if (!p) {
                c->poll = sd_event_source_disable_unref(c->poll);
                c->tracking_due = false;
                c->tracking_said[0] = 0;
                tracking_gone(c);
                return 0;
        }
        if (!c->poll) {
                r = sd_event_add_time_relative(c->event, &c->poll, CLOCK_BOOTTIME,
                                               CHRONY_TRACKING_INTERVAL_USEC, 0, on_poll, c);
                if (r < 0)
                        return r;
                (void)sd_event_source_set_enabled(c->poll, SD_EVENT_ON);
        }
        tracking_ask(c);
        return 0;
}
