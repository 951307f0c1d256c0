/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-client-wpa.h"

/* At most this many datagrams per wakeup: a flood of events cannot starve the rest of the
 * loop; the socket stays readable and the next iteration continues. */
#define WPA_RECV_BURST 64

typedef enum WpaClientState {
        WPA_CLIENT_DOWN,
        WPA_CLIENT_ATTACHING,
        WPA_CLIENT_UP,
} WpaClientState;

struct WpaRequest {
        WpaClient *client;
        WpaRequest *next;
        char *cmd;
        size_t len;
        WpaReplyFn cb; /* NULL once cancelled */
        void *userdata;
        bool sent;
};

struct WpaSubscription {
        WpaClient *client;
        WpaSubscription *next;
        WpaEventFn fn;
        void *userdata;
};

struct WpaClient {
        unsigned n_ref;
        sd_event *event;
        char *server;
        char *local_dir;
        char *local_path;
        uint64_t timeout_usec, ping_usec;
        int fd;
        sd_event_source *io, *timer, *ping_timer;
        WpaRequest *head, *tail;
        WpaSubscription *subs;
        WpaStateFn state_fn;
        void *state_userdata;
        WpaClientState state;
        bool freed;
        char *buf;
};

static void client_go_down(WpaClient *c, int error);

/* A command as it may be logged: SET_NETWORK's value can be a key, so it is left out. */
static const char *cmd_for_log(const WpaRequest *r, char *buf, size_t size)
{
        const char *p = r->cmd, *set = strstr(p, "SET_NETWORK ");
        size_t n;

        if (!set)
                return p;
        /* "SET_NETWORK <id> <field>" */
        n = (size_t)(set - p) + strlen("SET_NETWORK ");
        n += strcspn(p + n, " ");
        if (p[n])
                n += 1 + strcspn(p + n + 1, " ");
        snprintf(buf, size, "%.*s ...", (int)n, p);
        return buf;
}

static WpaClient *client_ref(WpaClient *c)
{
        c->n_ref++;
        return c;
}

static void client_unref(WpaClient *c)
{
        if (!c || --c->n_ref > 0)
                return;
        sd_event_unref(c->event);
        free(c->server);
        free(c->local_dir);
        free(c->local_path);
        free(c->buf);
        free(c);
}

int wpa_client_new(sd_event *event, const char *server, const char *local_dir,
                   uint64_t timeout_usec, WpaClient **ret)
{
        WpaClient *c;

        if (strlen(server) >= sizeof(((struct sockaddr_un *)NULL)->sun_path))
                return -ENAMETOOLONG;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->n_ref = 1;
        c->fd = -EBADF;
        c->event = sd_event_ref(event);
        c->timeout_usec = timeout_usec;
        c->server = strdup(server);
        c->local_dir = strdup(local_dir);
        c->buf = malloc(WPA_MESSAGE_MAX + 1);
        if (!c->server || !c->local_dir || !c->buf) {
                client_unref(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

void wpa_client_set_state_handler(WpaClient *c, WpaStateFn fn, void *userdata)
{
        c->state_fn = fn;
        c->state_userdata = userdata;
}

void wpa_client_set_ping_interval(WpaClient *c, uint64_t usec)
{
        c->ping_usec = usec;
}

static int on_ping_timer(sd_event_source *s, uint64_t usec, void *userdata);

static void client_arm_ping(WpaClient *c)
{
        int r;

        if (c->ping_usec == 0 || c->state != WPA_CLIENT_UP)
                return;
        c->ping_timer = sd_event_source_disable_unref(c->ping_timer);
        r = sd_event_add_time_relative(c->event, &c->ping_timer, CLOCK_MONOTONIC, c->ping_usec,
                                       USEC_PER_SEC / 10, on_ping_timer, c);
        if (r < 0)
                log_warning("Failed to arm the wpa_supplicant PING timer: %s", strerror(-r));
}

static void on_pong(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        /* No answer in time already took the client down (on_timeout). */
        if (error >= 0 && !(len >= 4 && memcmp(reply, "PONG", 4) == 0))
                log_warning("wpa_supplicant at %s answered PING with \"%.*s\".", c->server,
                            (int)strcspn(reply, "\n"), reply);
}

static int request_enqueue(WpaClient *c, const char *ifname, const char *cmd, WpaReplyFn cb,
                           void *userdata, WpaRequest **ret);

static int on_ping_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        WpaClient *c = userdata;

        c->ping_timer = sd_event_source_disable_unref(c->ping_timer);
        /* A request on the wire has its own timeout: it already tells whether the daemon
         * answers. */
        if (c->state == WPA_CLIENT_UP && !c->head)
                (void)request_enqueue(c, NULL, "PING", on_pong, NULL, NULL);
        client_arm_ping(c);
        return 0;
}

bool wpa_client_is_up(const WpaClient *c)
{
        return c && c->state == WPA_CLIENT_UP;
}

const char *wpa_client_server(const WpaClient *c)
{
        return c->server;
}

static void request_free(WpaRequest *r)
{
        explicit_bzero(r->cmd, r->len); /* it may carry a key (SET_NETWORK psk) */
        free(r->cmd);
        free(r);
}

/* Takes the first request off the queue, runs its callback and frees it. */
static void request_complete(WpaClient *c, int error, const char *reply, size_t len)
{
        WpaRequest *r = c->head;

        if (!r)
                return;
        c->head = r->next;
        if (!c->head)
                c->tail = NULL;
        c->timer = sd_event_source_disable_unref(c->timer);
        if (r->cb)
                r->cb(c, error, reply ? reply : "", len, r->userdata);
        request_free(r);
}

static int on_timeout(sd_event_source *s, uint64_t usec, void *userdata)
{
        WpaClient *c = userdata;
        char buf[128];

        log_warning("wpa_supplicant at %s did not answer \"%s\" within %" PRIu64
                    " ms; reconnecting.",
                    c->server, c->head ? cmd_for_log(c->head, buf, sizeof(buf)) : "?",
                    c->timeout_usec / USEC_PER_MSEC);
        client_ref(c);
        /* A late reply must never be read as the answer to the next request: new socket. */
        request_complete(c, -ETIMEDOUT, NULL, 0);
        client_go_down(c, -ECONNRESET);
        if (!c->freed)
                (void)wpa_client_connect(c);
        client_unref(c);
        return 0;
}

/* Puts the next queued request on the wire, if none is there yet. */
static void client_kick(WpaClient *c)
{
        while (c->head && !c->head->sent && c->fd >= 0) {
                WpaRequest *r = c->head;
                ssize_t n = send(c->fd, r->cmd, r->len, MSG_DONTWAIT | MSG_NOSIGNAL);
                int r_;

                if (n < 0) {
                        int e = errno;
                        if (e == ECONNREFUSED || e == ENOTCONN || e == ENOENT) {
                                client_go_down(c, -ECONNRESET);
                                return;
                        }
                        /* EAGAIN: the daemon does not read; fail rather than wait. */
                        char buf[128];
                        log_warning("Failed to send \"%s\" to %s: %s",
                                    cmd_for_log(r, buf, sizeof(buf)), c->server, strerror(e));
                        request_complete(c, -e, NULL, 0);
                        continue;
                }
                r->sent = true;
                r_ = sd_event_add_time_relative(c->event, &c->timer, CLOCK_MONOTONIC,
                                                c->timeout_usec, 0, on_timeout, c);
                if (r_ < 0)
                        log_warning("Failed to arm the wpa_supplicant reply timer: %s",
                                    strerror(-r_));
                return;
        }
}

static void dispatch_event(WpaClient *c, const WpaMessage *m)
{
        WpaEvent e = {};
        int r;

        r = wpa_event_parse(m->text, m->len, &e);
        if (r < 0) {
                log_warning("Malformed event from %s dropped (%zu bytes).", c->server, m->len);
                return;
        }
        e.level = m->level;
        memcpy(e.ifname, m->ifname, sizeof(e.ifname));
        log_debug("%s: event %s", c->server, e.name);
        for (WpaSubscription *s = c->subs; s;) {
                WpaSubscription *next = s->next;
                s->fn(c, &e, s->userdata);
                if (c->freed)
                        break;
                s = next;
        }
        if (!c->freed && streq(e.name, "CTRL-EVENT-TERMINATING"))
                client_go_down(c, -ECONNRESET);
        wpa_event_done(&e);
}

static void handle_datagram(WpaClient *c, size_t n)
{
        WpaMessage m = {};
        bool looks_event = n > 0 && (c->buf[0] == '<' || (n >= 7 && !memcmp(c->buf, "IFNAME=", 7)));

        if (n > WPA_MESSAGE_MAX) {
                log_warning("Oversized %s (%zu bytes) from %s refused.",
                            looks_event ? "event" : "reply", n, c->server);
                if (!looks_event && c->head && c->head->sent)
                        request_complete(c, -EMSGSIZE, NULL, 0);
                return;
        }
        c->buf[n] = 0;
        if (wpa_message_split(c->buf, n, &m) < 0) {
                log_warning("Malformed event prefix from %s dropped.", c->server);
                return;
        }
        if (m.event) {
                dispatch_event(c, &m);
                return;
        }
        if (!c->head || !c->head->sent) {
                log_warning("Unexpected reply from %s dropped (no request is waiting).", c->server);
                return;
        }
        request_complete(c, 0, c->buf, n);
        client_kick(c);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        WpaClient *c = userdata;

        client_ref(c);
        for (unsigned i = 0; i < WPA_RECV_BURST && c->fd == fd; i++) {
                ssize_t n = recv(fd, c->buf, WPA_MESSAGE_MAX + 1, MSG_DONTWAIT | MSG_TRUNC);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                break;
                        log_info("wpa_supplicant at %s went away: %m", c->server);
                        client_go_down(c, -ECONNRESET);
                        break;
                }
                handle_datagram(c, (size_t)n);
        }
        client_unref(c);
        return 0;
}

static void on_attach_reply(WpaClient *c, int error, const char *reply, size_t len, void *userdata)
{
        if (error < 0 || !wpa_reply_is_ok(reply, len)) {
                log_warning("wpa_supplicant at %s refused ATTACH (%s).", c->server,
                            error < 0 ? strerror(-error) : reply);
                if (error >= 0)
                        client_go_down(c, -ECONNRESET);
                return;
        }
        c->state = WPA_CLIENT_UP;
        log_info("Attached to wpa_supplicant at %s.", c->server);
        client_arm_ping(c);
        if (c->state_fn)
                c->state_fn(c, true, c->state_userdata);
}

static int request_enqueue(WpaClient *c, const char *ifname, const char *cmd, WpaReplyFn cb,
                           void *userdata, WpaRequest **ret)
{
        WpaRequest *r;
        int n;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->client = c;
        r->cb = cb;
        r->userdata = userdata;
        n = ifname ? asprintf(&r->cmd, "IFNAME=%s %s", ifname, cmd) : asprintf(&r->cmd, "%s", cmd);
        if (n < 0) {
                free(r);
                return -ENOMEM;
        }
        r->len = (size_t)n;
        if (c->tail)
                c->tail->next = r;
        else
                c->head = r;
        c->tail = r;
        if (ret)
                *ret = r;
        client_kick(c);
        return 0;
}

int wpa_client_connect(WpaClient *c)
{
        static unsigned counter;
        struct sockaddr_un local = {.sun_family = AF_UNIX}, remote = {.sun_family = AF_UNIX};
        _cleanup_close_ int fd = -EBADF;
        int r, size = 256 * 1024;

        if (c->state != WPA_CLIENT_DOWN)
                return 0;
        free(c->local_path);
        c->local_path = NULL;
        if (asprintf(&c->local_path, "%s/wpa-%d-%u", c->local_dir, (int)getpid(), ++counter) < 0)
                return -ENOMEM;
        if (strlen(c->local_path) >= sizeof(local.sun_path))
                return -ENAMETOOLONG;
        /* Created when first needed (/run/roam/wpa by default), the parent too. */
        if (mkdir(c->local_dir, 0750) < 0 && errno == ENOENT) {
                _cleanup_free_ char *parent = strdup(c->local_dir);
                if (parent && strrchr(parent, '/') != parent) {
                        *strrchr(parent, '/') = 0;
                        (void)mkdir(parent, 0755);
                }
                (void)mkdir(c->local_dir, 0750);
        }
        strcpy(local.sun_path, c->local_path);
        strcpy(remote.sun_path, c->server);

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* Bursts of events must not overflow: wpa_supplicant drops monitors that stop taking
         * its messages. */
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        (void)unlink(local.sun_path);
        if (bind(fd, (struct sockaddr *)&local, sizeof(local)) < 0)
                return log_warning_errno(errno, "Failed to bind %s: %m", c->local_path);
        if (connect(fd, (struct sockaddr *)&remote, sizeof(remote)) < 0) {
                r = -errno;
                (void)unlink(c->local_path);
                return r;
        }
        r = sd_event_add_io(c->event, &c->io, fd, EPOLLIN, on_io, c);
        if (r < 0) {
                (void)unlink(c->local_path);
                return r;
        }
        (void)sd_event_source_set_description(c->io, "wpa-client");
        c->fd = TAKE_FD(fd);
        c->state = WPA_CLIENT_ATTACHING;
        /* ATTACH goes first, before anything queued while down. */
        {
                WpaRequest *rest = c->head, *tail = c->tail;
                c->head = c->tail = NULL;
                r = request_enqueue(c, NULL, "ATTACH", on_attach_reply, NULL, NULL);
                if (r < 0)
                        return r;
                if (rest) {
                        if (c->head) {
                                c->head->next = rest;
                                c->tail = tail;
                        } else {
                                c->head = rest;
                                c->tail = tail;
                        }
                }
        }
        return 0;
}

static void client_go_down(WpaClient *c, int error)
{
        bool was_up = c->state == WPA_CLIENT_UP;

        if (c->state == WPA_CLIENT_DOWN)
                return;
        c->state = WPA_CLIENT_DOWN;
        c->io = sd_event_source_disable_unref(c->io);
        c->timer = sd_event_source_disable_unref(c->timer);
        c->ping_timer = sd_event_source_disable_unref(c->ping_timer);
        if (c->fd >= 0) {
                /* Best effort: a running daemon stops sending to a socket about to vanish. */
                if (error == -ECANCELED)
                        (void)send(c->fd, "DETACH", 6, MSG_DONTWAIT | MSG_NOSIGNAL);
                close(c->fd);
                c->fd = -EBADF;
        }
        if (c->local_path)
                (void)unlink(c->local_path);
        client_ref(c);
        while (c->head)
                request_complete(c, error, NULL, 0);
        if (was_up) {
                log_info("Lost wpa_supplicant at %s.", c->server);
                if (c->state_fn)
                        c->state_fn(c, false, c->state_userdata);
        }
        client_unref(c);
}

void wpa_client_disconnect(WpaClient *c)
{
        client_go_down(c, -ECANCELED);
}

WpaClient *wpa_client_free(WpaClient *c)
{
        if (!c)
                return NULL;
        c->state_fn = NULL;
        c->freed = true;
        client_go_down(c, -ECANCELED);
        for (WpaSubscription *s = c->subs; s; s = s->next)
                s->client = NULL;
        c->subs = NULL;
        client_unref(c);
        return NULL;
}

int wpa_client_request(WpaClient *c, const char *ifname, const char *cmd, WpaReplyFn cb,
                       void *userdata, WpaRequest **ret)
{
        if (c->state == WPA_CLIENT_DOWN)
                return -ENOTCONN;
        if (strchr(cmd, '\n') || (ifname && (strchr(ifname, ' ') || strchr(ifname, '\n'))))
                return -EINVAL;
        return request_enqueue(c, ifname, cmd, cb, userdata, ret);
}

WpaRequest *wpa_request_cancel(WpaRequest *r)
{
        WpaClient *c;

        if (!r)
                return NULL;
        c = r->client;
        if (r->sent) {
                /* On the wire: its reply will come and is then dropped. */
                r->cb = NULL;
                return NULL;
        }
        for (WpaRequest **p = &c->head, *prev = NULL; *p; prev = *p, p = &(*p)->next)
                if (*p == r) {
                        *p = r->next;
                        if (c->tail == r)
                                c->tail = prev;
                        request_free(r);
                        break;
                }
        return NULL;
}

int wpa_client_subscribe(WpaClient *c, WpaEventFn fn, void *userdata, WpaSubscription **ret)
{
        WpaSubscription *s, **p;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->client = c;
        s->fn = fn;
        s->userdata = userdata;
        for (p = &c->subs; *p; p = &(*p)->next)
                ;
        *p = s;
        *ret = s;
        return 0;
}

WpaSubscription *wpa_subscription_free(WpaSubscription *s)
{
        if (!s)
                return NULL;
        if (s->client)
                for (WpaSubscription **p = &s->client->subs; *p; p = &(*p)->next)
                        if (*p == s) {
                                *p = s->next;
                                break;
                        }
        free(s);
        return NULL;
}

/* The control directory watch. */

struct WpaDir {
        sd_event *event;
        char *dir, *parent, *base;
        sd_event_source *parent_watch, *dir_watch;
        char **present;
        WpaDirFn fn;
        void *userdata;
};

static void dir_report(WpaDir *d, const char *name, bool present)
{
        int has = strv_contains(d->present, name);

        if (present == !!has)
                return;
        if (present) {
                if (strv_extend(&d->present, name) < 0)
                        return;
        } else {
                char **k = d->present;
                for (char **p = d->present; *p; p++) {
                        if (streq(*p, name)) {
                                free(*p);
                                continue;
                        }
                        *k++ = *p;
                }
                *k = NULL;
        }
        d->fn(d, name, present, d->userdata);
}

static bool is_socket(WpaDir *d, const char *name)
{
        struct stat st;
        char path[PATH_MAX];

        if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->dir, name) >= sizeof(path))
                return false;
        return stat(path, &st) >= 0 && S_ISSOCK(st.st_mode);
}

static void dir_drop_all(WpaDir *d)
{
        while (d->present && d->present[0]) {
                _cleanup_free_ char *n = strdup(d->present[0]);
                if (!n)
                        return;
                dir_report(d, n, false);
        }
}

static int on_dir_event(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
        WpaDir *d = userdata;

        if (ev->mask & (IN_DELETE_SELF | IN_IGNORED | IN_MOVE_SELF)) {
                d->dir_watch = sd_event_source_disable_unref(d->dir_watch);
                dir_drop_all(d);
                return 0;
        }
        if (ev->len == 0)
                return 0;
        if (ev->mask & (IN_CREATE | IN_MOVED_TO | IN_ATTRIB)) {
                if (is_socket(d, ev->name))
                        dir_report(d, ev->name, true);
        } else if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
                dir_report(d, ev->name, false);
        return 0;
}

static void dir_scan(WpaDir *d)
{
        _cleanup_closedir_ DIR *dir = NULL;
        struct dirent *de;
        int r;

        if (d->dir_watch)
                return;
        r = sd_event_add_inotify(d->event, &d->dir_watch, d->dir,
                                 IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB |
                                     IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR,
                                 on_dir_event, d);
        if (r < 0) {
                if (r != -ENOENT)
                        log_warning_errno(r, "Cannot watch %s: %m", d->dir);
                return;
        }
        dir = opendir(d->dir);
        if (!dir)
                return;
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.' && is_socket(d, de->d_name))
                        dir_report(d, de->d_name, true);
}

static int on_parent_event(sd_event_source *s, const struct inotify_event *ev, void *userdata)
{
        WpaDir *d = userdata;

        if (ev->len > 0 && streq(ev->name, d->base) && (ev->mask & (IN_CREATE | IN_MOVED_TO)))
                dir_scan(d);
        return 0;
}

int wpa_dir_new(sd_event *event, const char *dir, WpaDirFn fn, void *userdata, WpaDir **ret)
{
        WpaDir *d;
        char *slash;
        int r;

        if (dir[0] != '/' || streq(dir, "/"))
                return -EINVAL;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->event = sd_event_ref(event);
        d->fn = fn;
        d->userdata = userdata;
        d->dir = strdup(dir);
        d->parent = strdup(dir);
        if (!d->dir || !d->parent) {
                wpa_dir_free(d);
                return -ENOMEM;
        }
        /* "/run/wpa_supplicant/" -> parent "/run", base "wpa_supplicant". */
        while (strlen(d->parent) > 1 && d->parent[strlen(d->parent) - 1] == '/')
                d->parent[strlen(d->parent) - 1] = 0;
        slash = strrchr(d->parent, '/');
        d->base = strdup(slash + 1);
        if (!d->base) {
                wpa_dir_free(d);
                return -ENOMEM;
        }
        if (slash == d->parent)
                slash[1] = 0;
        else
                *slash = 0;
        r = sd_event_add_inotify(event, &d->parent_watch, d->parent,
                                 IN_CREATE | IN_MOVED_TO | IN_ONLYDIR, on_parent_event, d);
        if (r < 0) {
                log_warning_errno(r, "Cannot watch %s: %m", d->parent);
                wpa_dir_free(d);
                return r;
        }
        *ret = d;
        dir_scan(d);
        return 0;
}

WpaDir *wpa_dir_free(WpaDir *d)
{
        if (!d)
                return NULL;
        sd_event_source_disable_unref(d->parent_watch);
        sd_event_source_disable_unref(d->dir_watch);
        strv_free(d->present);
        free(d->dir);
        free(d->parent);
        free(d->base);
        sd_event_unref(d->event);
        free(d);
        return NULL;
}
