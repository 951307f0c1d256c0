/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-client-gpsd.h"
#include "roamd-gpsd.h"
#include "roamd-sock-owner.h"

#define GPSD_RETRY_USEC (30 * USEC_PER_SEC)
/* gpsd reports once a second; the consensus (and its watchers on the bus) hears a fix at
 * most this often: a 16 s old sample's error has grown by 8 ms (TIME_DRIFT_PPM) */
#define GPSD_SAMPLE_INTERVAL_USEC (16 * USEC_PER_SEC)

struct GpsdClient {
        sd_event *event;
        TimeEventFn on_time;
        void *userdata;
        char address[64];
        struct sockaddr_storage sa;
        socklen_t sa_len;
        int fd;
        bool connected; /* the WATCH is sent */
        sd_event_source *io, *retry;
        char buf[GPSD_LINE_MAX + 1];
        size_t len;
        bool skipping; /* inside a line too long to read: dropped up to its newline */
        bool have_sample;
        usec_t last_sample;  /* CLOCK_BOOTTIME of the last sample handed over */
        char refused[160];   /* the last refusal, said once */
        char untrusted[160]; /* why the listener was not trusted, said once; "" trusted */
};

static void close_connection(GpsdClient *c)
{
        c->io = sd_event_source_disable_unref(c->io);
        if (c->fd >= 0)
                close(c->fd);
        c->fd = -1;
        c->connected = false;
        c->len = 0;
        c->skipping = false;
}

GpsdClient *gpsd_client_free(GpsdClient *c)
{
        if (!c)
                return NULL;
        close_connection(c);
        sd_event_source_disable_unref(c->retry);
        sd_event_unref(c->event);
        free(c);
        return NULL;
}

const char *gpsd_client_address(const GpsdClient *c)
{
        return c ? c->address : NULL;
}

static void gone(GpsdClient *c)
{
        TimeEvent ev = {.type = TIME_EVENT_GONE, .witness = GPSD_WITNESS};

        if (!c->have_sample)
                return;
        c->have_sample = false;
        c->on_time(&ev, c->userdata);
}

static int start(GpsdClient *c);

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        GpsdClient *c = userdata;

        (void)s;
        (void)usec;
        (void)start(c);
        return 0;
}

/* The connection failed or ended: the witness goes, the next try is in 30 s. */
static void lost(GpsdClient *c, const char *why)
{
        if (c->connected)
                log_info("gpsd at %s: %s; trying again in 30 s", c->address, why);
        else
                log_debug("gpsd at %s: %s", c->address, why);
        close_connection(c);
        gone(c);
        c->retry = sd_event_source_disable_unref(c->retry);
        if (sd_event_add_time_relative(c->event, &c->retry, CLOCK_BOOTTIME, GPSD_RETRY_USEC, 0,
                                       on_retry, c) < 0)
                log_warning("gpsd at %s: cannot arm the retry; not followed", c->address);
}

static void take_line(GpsdClient *c, const char *line, size_t n)
{
        TimeSample s;
        char reason[160];
        TimeEvent ev = {.type = TIME_EVENT_SAMPLE, .sample = &s, .witness = GPSD_WITNESS};
        int r;

        r = gpsd_tpv_to_sample(line, n, clock_now_usec(CLOCK_BOOTTIME), &s, reason, sizeof(reason));
        if (r == -ENODATA)
                return;
        if (r < 0) {
                if (r != -EINVAL)
                        snprintf(reason, sizeof(reason), "%s", strerror(-r));
                /* a talker that says garbage once a second is said once */
                if (!streq(reason, c->refused))
                        log_info("gpsd at %s: a line is refused: %s", c->address, reason);
                snprintf(c->refused, sizeof(c->refused), "%s", reason);
                return;
        }
        c->refused[0] = 0;
        if (c->have_sample && s.taken < c->last_sample + GPSD_SAMPLE_INTERVAL_USEC)
                return;
        c->last_sample = s.taken;
        snprintf(s.origin, sizeof(s.origin), "gpsd at %s", c->address);
        if (!c->have_sample)
                log_info("gpsd at %s: a GNSS fix gives the time", c->address);
        c->have_sample = true;
        c->on_time(&ev, c->userdata);
}

static void take_lines(GpsdClient *c)
{
        size_t start = 0;

        for (;;) {
                char *nl = memchr(c->buf + start, '\n', c->len - start);
                size_t n;

                if (!nl)
                        break;
                n = (size_t)(nl - (c->buf + start));
                if (c->skipping)
                        c->skipping = false;
                else if (n > 0 && c->buf[start + n - 1] == '\r')
                        take_line(c, c->buf + start, n - 1);
                else
                        take_line(c, c->buf + start, n);
                start += n + 1;
        }
        memmove(c->buf, c->buf + start, c->len - start);
        c->len -= start;
        if (c->len >= GPSD_LINE_MAX) {
                /* gpsd's SKY and others can be long: skipped, the rest of the stream kept */
                if (!c->skipping)
                        log_debug("gpsd at %s: a line longer than %d bytes is skipped", c->address,
                                  GPSD_LINE_MAX);
                c->skipping = true;
                c->len = 0;
        }
}

/* Whether the sockets listening at gpsd's address are root's or the gpsd user's (systemd's
 * gpsd.socket is root's; gpsd itself runs as gpsd). While gpsd does not run, any local user
 * may bind 127.0.0.1:2947, and its made-up fixes would be a time witness. why: the refusal. */
static bool listener_trusted(GpsdClient *c, char *why, size_t size)
{
        uid_t uids[8];
        size_t n = 0;
        struct passwd *pw;
        int r;

        r = tcp_listener_uids((struct sockaddr *)&c->sa, c->sa_len, uids, ELEMENTSOF(uids), &n);
        if (r < 0) {
                snprintf(why, size, "cannot tell who listens there (%s): not trusted",
                         strerror(-r));
                return false;
        }
        if (n == 0 || n > ELEMENTSOF(uids)) {
                snprintf(why, size, "%s: not trusted",
                         n == 0 ? "no socket found listening there" : "too many listeners");
                return false;
        }
        pw = getpwnam("gpsd");
        for (size_t i = 0; i < n; i++)
                if (uids[i] != 0 && !(pw && uids[i] == pw->pw_uid)) {
                        snprintf(why, size,
                                 "its listening socket belongs to uid %u, not root or gpsd: "
                                 "not trusted as a time witness",
                                 (unsigned)uids[i]);
                        return false;
                }
        return true;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        GpsdClient *c = userdata;
        char why[160];
        ssize_t n;
        int err = 0;
        socklen_t elen = sizeof(err);

        (void)s;
        if (!c->connected) {
                /* the non-blocking connect ended */
                if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0)
                        err = errno;
                if (err) {
                        lost(c, strerror(err));
                        return 0;
                }
                if (!listener_trusted(c, why, sizeof(why))) {
                        /* said once per reason: it is tried again every 30 s */
                        if (!streq(why, c->untrusted))
                                log_warning("gpsd at %s: %s", c->address, why);
                        snprintf(c->untrusted, sizeof(c->untrusted), "%s", why);
                        lost(c, "its listener is not trusted");
                        return 0;
                }
                c->untrusted[0] = 0;
                /* a fresh socket's buffer takes these few bytes at once */
                n = send(fd, GPSD_WATCH, strlen(GPSD_WATCH), MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n != (ssize_t)strlen(GPSD_WATCH)) {
                        lost(c, n < 0 ? strerror(errno) : "the WATCH was not sent whole");
                        return 0;
                }
                c->connected = true;
                log_info("gpsd at %s: connected, watching its reports", c->address);
                if (sd_event_source_set_io_events(c->io, EPOLLIN) < 0)
                        lost(c, "cannot watch the socket");
                return 0;
        }
        if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                return 0;
        n = recv(fd, c->buf + c->len, GPSD_LINE_MAX - c->len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                lost(c, n < 0 ? strerror(errno) : "it closed the connection");
                return 0;
        }
        c->len += (size_t)n;
        take_lines(c);
        return 0;
}

static int start(GpsdClient *c)
{
        int r;

        c->retry = sd_event_source_disable_unref(c->retry);
        close_connection(c);
        c->fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->fd < 0) {
                lost(c, strerror(errno));
                return 0;
        }
        if (connect(c->fd, (struct sockaddr *)&c->sa, c->sa_len) < 0 && errno != EINPROGRESS) {
                lost(c, strerror(errno));
                return 0;
        }
        r = sd_event_add_io(c->event, &c->io, c->fd, EPOLLOUT, on_io, c);
        if (r < 0) {
                lost(c, strerror(-r));
                return 0;
        }
        return 0;
}

int gpsd_client_new(sd_event *event, const char *address, TimeEventFn on_time, void *userdata,
                    GpsdClient **ret)
{
        GpsdClient *c;
        int r;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->fd = -1;
        c->event = sd_event_ref(event);
        c->on_time = on_time;
        c->userdata = userdata;
        snprintf(c->address, sizeof(c->address), "%s", address);
        r = gpsd_address_parse(address, &c->sa, &c->sa_len);
        if (r < 0) {
                gpsd_client_free(c);
                return log_error_errno(r, "gpsd: \"%s\" is not an address:port: %m", address);
        }
        (void)start(c);
        *ret = c;
        return 0;
}
