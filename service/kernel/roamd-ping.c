/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-ping.h"

#define PING_TRIES 3

struct Ping {
        sd_event *event;
        int fd;
        int family;
        union {
                struct sockaddr_in in;
                struct sockaddr_in6 in6;
        } dst;
        uint16_t id;
        uint16_t seq;
        uint64_t timeout_usec;
        sd_event_source *io, *retry, *deadline, *finish;
        PingDoneFn done;
        void *userdata;
        bool answered, completed;
};

static uint16_t checksum(const void *data, size_t len)
{
        const uint8_t *p = data;
        uint32_t sum = 0;

        for (size_t i = 0; i + 1 < len; i += 2)
                sum += (uint32_t)(p[i] << 8 | p[i + 1]);
        if (len & 1)
                sum += (uint32_t)(p[len - 1] << 8);
        while (sum >> 16)
                sum = (sum & 0xffff) + (sum >> 16);
        return htons((uint16_t)~sum);
}

static int on_finish(sd_event_source *s, void *userdata)
{
        Ping *p = userdata;

        p->done(p, p->answered, p->userdata);
        return 0;
}

static void ping_complete(Ping *p, bool answered)
{
        if (p->completed)
                return;
        p->completed = true;
        p->answered = answered;
        p->io = sd_event_source_disable_unref(p->io);
        p->retry = sd_event_source_disable_unref(p->retry);
        p->deadline = sd_event_source_disable_unref(p->deadline);
        if (sd_event_add_defer(p->event, &p->finish, on_finish, p) < 0)
                log_warning("Failed to report a ping result.");
}

static void ping_send(Ping *p)
{
        uint8_t pkt[16] = {};
        ssize_t n;

        if (p->family == AF_INET) {
                struct icmphdr *h = (struct icmphdr *)pkt;
                h->type = ICMP_ECHO;
                h->un.echo.id = htons(p->id);
                h->un.echo.sequence = htons(++p->seq);
                h->checksum = checksum(pkt, sizeof(pkt));
                n = sendto(p->fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&p->dst.in,
                           sizeof(p->dst.in));
        } else {
                struct icmp6_hdr *h = (struct icmp6_hdr *)pkt;
                h->icmp6_type = ICMP6_ECHO_REQUEST;
                h->icmp6_id = htons(p->id);
                h->icmp6_seq = htons(++p->seq);
                /* The kernel fills in the ICMPv6 checksum (it covers the pseudo-header). */
                n = sendto(p->fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&p->dst.in6,
                           sizeof(p->dst.in6));
        }
        if (n < 0)
                log_debug_errno(errno, "ping: sendto: %m");
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        Ping *p = userdata;
        uint8_t buf[1500];

        for (;;) {
                union {
                        struct sockaddr_in in;
                        struct sockaddr_in6 in6;
                } from;
                socklen_t flen = sizeof(from);
                ssize_t n =
                    recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
                if (n < 0)
                        break;
                if (p->family == AF_INET) {
                        struct iphdr *ip = (struct iphdr *)buf;
                        size_t hl;
                        struct icmphdr *h;

                        if ((size_t)n < sizeof(*ip))
                                continue;
                        hl = (size_t)ip->ihl * 4;
                        if ((size_t)n < hl + sizeof(*h) ||
                            from.in.sin_addr.s_addr != p->dst.in.sin_addr.s_addr)
                                continue;
                        h = (struct icmphdr *)(buf + hl);
                        if (h->type == ICMP_ECHOREPLY && ntohs(h->un.echo.id) == p->id) {
                                ping_complete(p, true);
                                return 0;
                        }
                } else {
                        struct icmp6_hdr *h = (struct icmp6_hdr *)buf;

                        if ((size_t)n < sizeof(*h) ||
                            memcmp(&from.in6.sin6_addr, &p->dst.in6.sin6_addr,
                                   sizeof(struct in6_addr)) != 0)
                                continue;
                        if (h->icmp6_type == ICMP6_ECHO_REPLY && ntohs(h->icmp6_id) == p->id) {
                                ping_complete(p, true);
                                return 0;
                        }
                }
        }
        return 0;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata)
{
        Ping *p = userdata;

        ping_send(p);
        if (p->seq < PING_TRIES)
                (void)sd_event_source_set_time_relative(s, p->timeout_usec / PING_TRIES);
        else
                (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata)
{
        ping_complete(userdata, false);
        return 0;
}

Ping *ping_free(Ping *p)
{
        if (!p)
                return NULL;
        sd_event_source_disable_unref(p->io);
        sd_event_source_disable_unref(p->retry);
        sd_event_source_disable_unref(p->deadline);
        sd_event_source_disable_unref(p->finish);
        if (p->fd >= 0)
                close(p->fd);
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

int ping_start(sd_event *event, const char *ifname, int ifindex, const IpAddr *target,
               uint64_t timeout_usec, PingDoneFn done, void *userdata, Ping **ret)
{
        Ping *p;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->event = sd_event_ref(event);
        p->family = target->family;
        p->done = done;
        p->userdata = userdata;
        p->timeout_usec = timeout_usec;
        p->id = (uint16_t)(random() & 0xffff);
        *ret = p;

        if (p->family == AF_INET) {
                p->dst.in.sin_family = AF_INET;
                r = inet_pton(AF_INET, target->text, &p->dst.in.sin_addr);
        } else {
                p->dst.in6.sin6_family = AF_INET6;
                p->dst.in6.sin6_scope_id = (uint32_t)ifindex; /* gateways are often fe80:: */
                r = inet_pton(AF_INET6, target->text, &p->dst.in6.sin6_addr);
        }
        p->fd = socket(p->family, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       p->family == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
        if (r != 1 || p->fd < 0 ||
            setsockopt(p->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, strlen(ifname)) < 0) {
                log_debug_errno(errno, "%s: cannot ping %s: %m", ifname, target->text);
                ping_complete(p, false);
                return 0;
        }
        if (p->family == AF_INET6) {
                struct icmp6_filter f;
                ICMP6_FILTER_SETBLOCKALL(&f);
                ICMP6_FILTER_SETPASS(ICMP6_ECHO_REPLY, &f);
                (void)setsockopt(p->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
        }
        if ((r = sd_event_add_io(event, &p->io, p->fd, EPOLLIN, on_io, p)) < 0 ||
            /* The first echo at once (accuracy 1 µs: the default lets it slip 250 ms). */
            (r = sd_event_add_time_relative(event, &p->retry, CLOCK_MONOTONIC, 0, 1, on_retry, p)) <
                0 ||
            (r = sd_event_add_time_relative(event, &p->deadline, CLOCK_MONOTONIC, timeout_usec, 0,
                                            on_deadline, p)) < 0) {
                ping_complete(p, false);
                return 0;
        }
        return 0;
}
