/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "roam-log.h"
#include "roamd-curl.h"
#include "roamd-http-answer.h"
#include "roamd-tcp-fastopen.h"

/* A transfer's next step (send the request once connected, read the answer) goes before
 * whatever else is pending at the same moment: after carrier-up the kernel's address and
 * route events, each a full resync, arrive while the probes' first answers do. */
#define CURL_GLUE_PRIORITY SD_EVENT_PRIORITY_IMPORTANT

struct CurlGlue {
        sd_event *event;
        CURLM *multi;
        sd_event_source *timer;
        sd_event_source *check; /* reads the transfers that ended while a transfer was added */
        CurlIsLocalFn is_local;
        void *is_local_userdata;
        int io_fd; /* the socket on_io hands to curl; -1 once curl let it go meanwhile */
};

typedef struct Transfer {
        CurlGlue *glue;
        CurlDoneFn done;
        void *userdata;
        int fd; /* the socket curl_glue_add() saw opened, -1: none (yet) */
} Transfer;

static const char *target_refusal(CurlGlue *g, int family, const void *addr)
{
        const char *why = http_target_special(family, addr);

        if (why)
                return why;
        if (g && g->is_local) {
                const struct in6_addr *a6 = addr;
                if (family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(a6)) {
                        family = AF_INET;
                        addr = &a6->s6_addr32[3];
                }
                if (g->is_local(family, addr, g->is_local_userdata))
                        return "an address of this machine";
        }
        return NULL;
}

const char *curl_glue_target_refusal(CurlGlue *g, int family, const char *addr_text)
{
        struct in6_addr a;

        if ((family != AF_INET && family != AF_INET6) || inet_pton(family, addr_text, &a) != 1)
                return "not an IP address";
        return target_refusal(g, family, &a);
}

void curl_glue_set_is_local(CurlGlue *g, CurlIsLocalFn fn, void *userdata)
{
        g->is_local = fn;
        g->is_local_userdata = userdata;
}

/* Acknowledge what has arrived at once. A server that sends TLS 1.3 session tickets and then
 * writes its answer in pieces without TCP_NODELAY holds the answer (Nagle) until the tickets
 * are acknowledged, and Linux delays that ACK by 40 ms once the connection looks interactive
 * (request sent after an answer). TCP_QUICKACK is not sticky: the kernel goes back to
 * delaying, so it is armed on every wakeup before curl reads, and again after (what curl read
 * meanwhile is acknowledged: no further wakeup would come for it); set while an ACK is
 * pending it sends that ACK now. Not a TCP socket (curl's own wakeup pipe): nothing to do. */
static void quickack(int fd)
{
        static const int one = 1;

        (void)setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
}

/* curl's socket for a connect: the address it will really connect to, after CONNECT_TO and
 * everything else, is checked here once more. */
static curl_socket_t on_open_socket(void *clientp, curlsocktype purpose,
                                    struct curl_sockaddr *address)
{
        Transfer *t = clientp;
        const void *addr = NULL;
        const char *why;
        char text[INET6_ADDRSTRLEN] = "?";
        int fd;

        if (address->family == AF_INET && address->addrlen >= (unsigned)sizeof(struct sockaddr_in))
                addr = &((const struct sockaddr_in *)&address->addr)->sin_addr;
        else if (address->family == AF_INET6 &&
                 address->addrlen >= (unsigned)sizeof(struct sockaddr_in6))
                addr = &((const struct sockaddr_in6 *)&address->addr)->sin6_addr;
        why =
            addr ? target_refusal(t ? t->glue : NULL, address->family, addr) : "not an IP address";
        if (why) {
                if (addr)
                        (void)inet_ntop(address->family, addr, text, sizeof(text));
                log_warning("Refused to connect to %s: %s (a network must not lead roamd to "
                            "this machine's own services).",
                            text, why);
                return CURL_SOCKET_BAD;
        }
        fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
        if (fd < 0)
                return CURL_SOCKET_BAD;
        if (address->socktype == SOCK_STREAM)
                quickack(fd);
        if (t)
                t->fd = fd;
        return fd;
}

static void check_done(CurlGlue *g)
{
        CURLMsg *msg;
        int left;

        while ((msg = curl_multi_info_read(g->multi, &left))) {
                CURL *easy = msg->easy_handle;
                CURLcode result = msg->data.result;
                Transfer *t = NULL;

                if (msg->msg != CURLMSG_DONE)
                        continue;
                curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
                curl_multi_remove_handle(g->multi, easy);
                curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
                curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, NULL);
                if (t) {
                        CurlDoneFn done = t->done;
                        void *ud = t->userdata;
                        free(t);
                        done(easy, result, ud);
                }
        }
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        CurlGlue *g = userdata;
        int action = 0, running;

        if (revents & (EPOLLIN | EPOLLHUP))
                action |= CURL_CSELECT_IN;
        if (revents & EPOLLOUT)
                action |= CURL_CSELECT_OUT;
        if (revents & EPOLLERR)
                action |= CURL_CSELECT_ERR;
        quickack(fd);
        g->io_fd = fd;
        curl_multi_socket_action(g->multi, fd, action, &running);
        if (g->io_fd == fd) /* not closed (and its number maybe reused) by curl meanwhile */
                quickack(fd);
        g->io_fd = -1;
        check_done(g);
        return 0;
}

static int on_check(sd_event_source *s, void *userdata)
{
        check_done(userdata);
        return 0;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        CurlGlue *g = userdata;
        int running;

        curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        check_done(g);
        return 0;
}

static int socket_cb(CURL *easy, curl_socket_t fd, int what, void *userdata, void *socketp)
{
        CurlGlue *g = userdata;
        sd_event_source *s = socketp;
        uint32_t events = 0;
        int r;

        if (what == CURL_POLL_REMOVE) {
                if (fd == g->io_fd)
                        g->io_fd = -1;
                if (s) {
                        sd_event_source_disable_unref(s);
                        curl_multi_assign(g->multi, fd, NULL);
                }
                return 0;
        }
        if (what & CURL_POLL_IN)
                events |= EPOLLIN;
        if (what & CURL_POLL_OUT)
                events |= EPOLLOUT;
        if (s) {
                r = sd_event_source_set_io_events(s, events);
                if (r >= 0)
                        r = sd_event_source_set_enabled(s, SD_EVENT_ON);
        } else {
                r = sd_event_add_io(g->event, &s, fd, events, on_io, g);
                if (r >= 0) {
                        (void)sd_event_source_set_priority(s, CURL_GLUE_PRIORITY);
                        (void)sd_event_source_set_description(s, "curl-socket");
                        curl_multi_assign(g->multi, fd, s);
                }
        }
        if (r < 0) {
                log_warning_errno(r, "Failed to watch curl socket: %m");
                return -1;
        }
        return 0;
}

static int timer_cb(CURLM *multi, long timeout_ms, void *userdata)
{
        CurlGlue *g = userdata;
        uint64_t now;
        int r;

        if (timeout_ms < 0)
                return g->timer ? sd_event_source_set_enabled(g->timer, SD_EVENT_OFF) < 0 ? -1 : 0
                                : 0;
        r = sd_event_now(g->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return -1;
        now += (uint64_t)timeout_ms * 1000;
        if (!g->timer) {
                /* Accuracy 1 µs: sd-event's default (0) lets a timer slip by up to 250 ms,
                 * and curl starts every transfer (and its connect phases) from this timer. */
                r = sd_event_add_time(g->event, &g->timer, CLOCK_MONOTONIC, now, 1, on_timer, g);
                if (r < 0)
                        return -1;
                (void)sd_event_source_set_priority(g->timer, CURL_GLUE_PRIORITY);
                (void)sd_event_source_set_description(g->timer, "curl-timer");
                return 0;
        }
        r = sd_event_source_set_time(g->timer, now);
        if (r >= 0)
                r = sd_event_source_set_enabled(g->timer, SD_EVENT_ONESHOT);
        return r < 0 ? -1 : 0;
}

int curl_glue_new(sd_event *event, CurlGlue **ret)
{
        static bool initialized;
        CurlGlue *g;

        if (!initialized) {
                if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                        return -EIO;
                initialized = true;
        }
        g = calloc(1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        g->event = sd_event_ref(event);
        g->io_fd = -1;
        g->multi = curl_multi_init();
        if (!g->multi) {
                curl_glue_free(g);
                return -ENOMEM;
        }
        if (sd_event_add_defer(event, &g->check, on_check, g) < 0) {
                curl_glue_free(g);
                return -ENOMEM;
        }
        (void)sd_event_source_set_priority(g->check, CURL_GLUE_PRIORITY);
        (void)sd_event_source_set_enabled(g->check, SD_EVENT_OFF);
        (void)sd_event_source_set_description(g->check, "curl-check");
        curl_multi_setopt(g->multi, CURLMOPT_SOCKETFUNCTION, socket_cb);
        curl_multi_setopt(g->multi, CURLMOPT_SOCKETDATA, g);
        curl_multi_setopt(g->multi, CURLMOPT_TIMERFUNCTION, timer_cb);
        curl_multi_setopt(g->multi, CURLMOPT_TIMERDATA, g);
        *ret = g;
        return 0;
}

CurlGlue *curl_glue_free(CurlGlue *g)
{
        if (!g)
                return NULL;
        /* Transfers are owned by their probes, which remove them before this runs. */
        if (g->multi)
                curl_multi_cleanup(g->multi);
        sd_event_source_disable_unref(g->timer);
        sd_event_source_disable_unref(g->check);
        sd_event_unref(g->event);
        free(g);
        return NULL;
}

int curl_glue_add(CurlGlue *g, CURL *easy, CurlDoneFn done, void *userdata)
{
        Transfer *t = calloc(1, sizeof(*t));
        int running;

        if (!t)
                return -ENOMEM;
        t->glue = g;
        t->done = done;
        t->userdata = userdata;
        t->fd = -1;
        curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
        curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, on_open_socket);
        curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, t);
        if (curl_multi_add_handle(g->multi, easy) != CURLM_OK) {
                curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
                curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, NULL);
                free(t);
                return -EIO;
        }
        /* Connect now, not when the loop comes round to curl's timer: the first SYN after
         * carrier-up should not wait for the D-Bus signals and app updates queued before it.
         * What ended meanwhile is read from a defer source, never inside the caller. */
        curl_multi_socket_action(g->multi, CURL_SOCKET_TIMEOUT, 0, &running);
        /* A peer on the link itself (a LAN, veth) has answered the SYN before connect()
         * returned: curl goes on now (the TLS ClientHello, or the request), not when the loop
         * comes round to the socket after the rest of the caller's work (the other probes'
         * set-up, a sync's D-Bus signals: ~1.5 ms on the benchmark's open network). Not
         * connected yet: curl looks (one poll) and waits for the socket as before. */
        if (t->fd >= 0) {
                int fd = t->fd;

                g->io_fd = fd;
                curl_multi_socket_action(g->multi, fd, CURL_CSELECT_OUT, &running);
                if (g->io_fd == fd) /* not closed (and its number maybe reused) meanwhile */
                        quickack(fd);
                g->io_fd = -1;
        }
        (void)sd_event_source_set_enabled(g->check, SD_EVENT_ONESHOT);
        return 0;
}

void curl_glue_remove(CurlGlue *g, CURL *easy)
{
        Transfer *t = NULL;

        if (!g || !easy)
                return;
        curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&t);
        curl_multi_remove_handle(g->multi, easy);
        curl_easy_setopt(easy, CURLOPT_PRIVATE, NULL);
        curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, NULL);
        free(t);
}

/* Without a CA file, the system's CA directory (curl's CA path: hashed certificate files) in
 * place of its CA bundle. OpenSSL then reads the one root a chain needs, when it needs it;
 * the bundle (~140 roots) is parsed whole into a store that curl keeps for a day, which on
 * ten links takes RssAnon at rest from 2.4 to 3.3 MB (bench_verdict.py memory-parts). A CA
 * file is the only trust (no CA path beside it): that is what CAFile= says, and curl keeps
 * a parsed store only then, instead of parsing the file again for every HTTPS probe. */
static void easy_set_ca(CURL *easy, const char *ca_file)
{
        const curl_version_info_data *v;

        if (ca_file) {
                curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
                curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
                return;
        }
        v = curl_version_info(CURLVERSION_NOW);
        if (!v || !v->capath)
                return; /* no CA path built in: curl's bundle it is */
        curl_easy_setopt(easy, CURLOPT_CAINFO, NULL);
        curl_easy_setopt(easy, CURLOPT_CAPATH, v->capath);
}

static int on_sockopt_mark(void *userdata, curl_socket_t fd, curlsocktype purpose)
{
        uint32_t mark = (uint32_t)(uintptr_t)userdata;

        if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) < 0) {
                log_warning_errno(errno, "Cannot mark a probe socket: %m");
                return CURL_SOCKOPT_ERROR;
        }
        return CURL_SOCKOPT_OK;
}

int curl_easy_link_setup(CURL *easy, const char *host, long port, int family, const char *addr_text,
                         const char *ifname, int ifindex, long timeout_ms, const char *ca_file,
                         struct curl_slist **ret_connect_to)
{
        char *connect_to = NULL, *iface = NULL;
        struct curl_slist *list;

        /* CURLOPT_RESOLVE would go through the multi handle's shared DNS cache, mixing up
         * links that reach the same host. */
        /* an IPv6 literal host is bracketed, as in the URL */
        if (asprintf(&connect_to, "%s%s%s:%ld:%s%s%s:%ld", strchr(host, ':') ? "[" : "", host,
                     strchr(host, ':') ? "]" : "", port, family == AF_INET6 ? "[" : "", addr_text,
                     family == AF_INET6 ? "]" : "", port) < 0)
                return -ENOMEM;
        list = curl_slist_append(NULL, connect_to);
        free(connect_to);
        if (!list)
                return -ENOMEM;
        if (asprintf(&iface, "if!%s", ifname) < 0) {
                curl_slist_free_all(list);
                return -ENOMEM;
        }
        curl_easy_setopt(easy, CURLOPT_CONNECT_TO, list);
        curl_easy_setopt(easy, CURLOPT_INTERFACE, iface); /* curl copies strings */
        free(iface);
        curl_easy_setopt(easy, CURLOPT_IPRESOLVE,
                         family == AF_INET6 ? CURL_IPRESOLVE_V6 : CURL_IPRESOLVE_V4);
        /* IPv6 link-local targets need the link as scope. */
        curl_easy_setopt(easy, CURLOPT_ADDRESS_SCOPE, (long)ifindex);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
        curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 0L);
        curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
        curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, timeout_ms);
        curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
        curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, NULL);
        easy_set_ca(easy, ca_file);
        *ret_connect_to = list;
        return 0;
}

/* The connection's last look before it closes: was its Fast Open SYN lost on the way? */
static int on_close_socket(void *clientp, curl_socket_t fd)
{
        bool *lost = clientp;

        if (lost && tcp_fastopen_syn_lost(fd))
                *lost = true;
        return close(fd);
}

int curl_easy_link_new(const CurlLinkFetch *f, CURL **ret, struct curl_slist **ret_connect_to)
{
        CURL *easy = curl_easy_init();
        int r;

        if (!easy)
                return -ENOMEM;
        r = curl_easy_link_setup(easy, f->host, f->port, f->family, f->addr_text, f->ifname,
                                 f->ifindex, f->timeout_ms, f->ca_file, ret_connect_to);
        if (r < 0) {
                curl_easy_cleanup(easy);
                return r;
        }
        curl_easy_setopt(easy, CURLOPT_URL, f->url);
        curl_easy_setopt(easy, CURLOPT_USERAGENT, f->user_agent);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, f->write);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, f->write_data);
        if (f->share)
                curl_easy_setopt(easy, CURLOPT_SHARE, f->share);
        if (f->mark) {
                /* the value itself rides in the pointer: nothing to outlive the transfer */
                curl_easy_setopt(easy, CURLOPT_SOCKOPTFUNCTION, on_sockopt_mark);
                curl_easy_setopt(easy, CURLOPT_SOCKOPTDATA, (void *)(uintptr_t)f->mark);
        }
        if (f->fastopen) {
                /* (curl sets TCP_FASTOPEN_CONNECT: connect() returns at once, and the first
                 * write goes out with the SYN; without a cookie a plain SYN asks for one) */
                curl_easy_setopt(easy, CURLOPT_TCP_FASTOPEN, 1L);
                curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, on_close_socket);
                curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, f->fastopen_lost);
        }
        *ret = easy;
        return 0;
}

CURLSH *curl_tls_share_new(void)
{
        CURLSH *s = curl_share_init();

        if (s && curl_share_setopt(s, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION) != CURLSHE_OK) {
                curl_share_cleanup(s);
                return NULL;
        }
        return s;
}

int curl_url_host_port(const char *url, char **ret_host, long *ret_port)
{
        CURLU *u = curl_url();
        char *host = NULL, *port = NULL;
        int r = -EINVAL;

        if (!u)
                return -ENOMEM;
        if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
                size_t n = strlen(host);
                /* Bracketed IPv6 literals lose their brackets for the resolver. */
                if (n > 2 && host[0] == '[' && host[n - 1] == ']') {
                        memmove(host, host + 1, n - 2);
                        host[n - 2] = 0;
                }
                *ret_host = strdup(host);
                *ret_port = strtol(port, NULL, 10);
                r = *ret_host ? 0 : -ENOMEM;
        }
        curl_free(host);
        curl_free(port);
        curl_url_cleanup(u);
        return r;
}
