/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-pmtu.h"

/* IP and TCP headers without options: an MSS of m is a packet of m + this (the sender takes
 * its TCP options, the timestamps, out of the payload: RFC 9293 3.7.1). */
#define HEADERS_V4 (20 + 20)
#define HEADERS_V6 (40 + 20)

struct PmtuSearch {
        CurlGlue *curl;
        PmtuTarget target; /* its strings are the copies below */
        char *url, *host, *ifname, *ca_file;
        PmtuDoneFn done;
        void *userdata;
        CURL *easy;
        struct curl_slist *connect_to, *headers;
        size_t got;      /* answer bytes of the running attempt */
        uint32_t lo, hi; /* the search's bounds: hi failed; lo passed if good */
        uint32_t trying; /* the size of the running attempt */
        uint32_t good;   /* the largest size that passed, 0 none yet */
        unsigned attempts;
};

uint32_t pmtu_floor(int family)
{
        return family == AF_INET6 ? 1280 : 1024;
}

static uint32_t headers(const PmtuSearch *s)
{
        return s->target.addr.family == AF_INET6 ? HEADERS_V6 : HEADERS_V4;
}

static void attempt_release(PmtuSearch *s)
{
        if (s->easy) {
                curl_glue_remove(s->curl, s->easy);
                curl_easy_cleanup(s->easy);
                s->easy = NULL;
        }
        curl_slist_free_all(s->connect_to);
        curl_slist_free_all(s->headers);
        s->connect_to = s->headers = NULL;
}

PmtuSearch *pmtu_search_free(PmtuSearch *s)
{
        if (!s)
                return NULL;
        attempt_release(s);
        free(s->url);
        free(s->host);
        free(s->ifname);
        free(s->ca_file);
        free(s);
        return NULL;
}

static size_t on_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        PmtuSearch *s = userdata;

        s->got += size * nmemb;
        return s->got < PMTU_ANSWER_BYTES ? size * nmemb : 0; /* enough: the size passed */
}

/* Before connect: the MSS our SYN advertises, so that no segment of the answer is larger
 * than the size tried; and the link's mark, as the probes carry it. */
static int on_sockopt(void *userdata, curl_socket_t fd, curlsocktype purpose)
{
        PmtuSearch *s = userdata;
        int mss = (int)(s->trying - headers(s));

        if (setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)) < 0) {
                log_warning_errno(errno, "%s: cannot clamp the TCP MSS to %d: %m", s->ifname, mss);
                return CURL_SOCKOPT_ERROR;
        }
        if (s->target.mark &&
            setsockopt(fd, SOL_SOCKET, SO_MARK, &s->target.mark, sizeof(s->target.mark)) < 0) {
                log_warning_errno(errno, "%s: cannot mark an MTU probe socket: %m", s->ifname);
                return CURL_SOCKOPT_ERROR;
        }
        return CURL_SOCKOPT_OK;
}

static void on_attempt_done(CURL *easy, CURLcode result, void *userdata);

static int attempt_start(PmtuSearch *s, uint32_t size)
{
        _cleanup_free_ char *url = NULL;
        uint64_t nonce = 0;
        int r;

        s->trying = size;
        s->got = 0;
        s->attempts++;
        s->easy = curl_easy_init();
        if (!s->easy)
                return -ENOMEM;
        r = curl_easy_link_setup(s->easy, s->host, s->target.port, s->target.addr.family,
                                 s->target.addr.text, s->ifname, s->target.ifindex,
                                 (long)(s->target.attempt_usec / USEC_PER_MSEC), s->ca_file,
                                 &s->connect_to);
        if (r < 0)
                return r;
        /* Each attempt must reach the server, not a cache that kept the last one. */
        if (getrandom(&nonce, sizeof(nonce), GRND_NONBLOCK) != sizeof(nonce))
                nonce = clock_now_usec(CLOCK_MONOTONIC) ^ s->attempts;
        if (asprintf(&url, "%s%croam-nonce=%016" PRIx64, s->url, strchr(s->url, '?') ? '&' : '?',
                     nonce) < 0)
                return -ENOMEM;
        s->headers = curl_slist_append(NULL, "Cache-Control: no-cache");
        if (!s->headers)
                return -ENOMEM;
        curl_easy_setopt(s->easy, CURLOPT_URL, strchr(s->url, '#') ? s->url : url);
        curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->headers);
        curl_easy_setopt(s->easy, CURLOPT_USERAGENT, "roamd/" ROAM_VERSION);
        curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, on_write);
        curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
        curl_easy_setopt(s->easy, CURLOPT_SOCKOPTFUNCTION, on_sockopt);
        curl_easy_setopt(s->easy, CURLOPT_SOCKOPTDATA, s);
        log_debug("%s: path MTU: trying %" PRIu32 " (%" PRIu32 " failed%s)", s->ifname, size, s->hi,
                  s->good ? ", larger than the last that passed" : "");
        return curl_glue_add(s->curl, s->easy, on_attempt_done, s);
}

/* The next size to try: the middle of the bounds while they are more than a step apart;
 * when nothing passed, the floor itself last. 0: the search is over. */
static uint32_t next_size(const PmtuSearch *s)
{
        if (s->hi - s->lo > PMTU_STEP)
                return s->lo + (s->hi - s->lo) / 2;
        if (!s->good && s->trying != s->lo)
                return s->lo;
        return 0;
}

static void search_end(PmtuSearch *s)
{
        if (s->good)
                log_info("%s: path MTU to %s is %" PRIu32 " (%" PRIu32 " vanishes; %u attempts)",
                         s->ifname, s->target.addr.text, s->good, s->hi, s->attempts);
        else
                log_info("%s: path MTU to %s not found: not even %" PRIu32 " bytes passed",
                         s->ifname, s->target.addr.text, s->lo);
        s->done(s, s->good, s->userdata); /* (may free s) */
}

static void on_attempt_done(CURL *easy, CURLcode result, void *userdata)
{
        PmtuSearch *s = userdata;
        bool passed = s->got >= PMTU_ANSWER_BYTES;
        uint32_t size;
        int r;

        log_debug("%s: path MTU: %" PRIu32 ": %s (%zu bytes)", s->ifname, s->trying,
                  passed ? "passed" : "vanished", s->got);
        curl_easy_cleanup(easy);
        s->easy = NULL;
        attempt_release(s);
        if (passed) {
                s->good = MAX(s->good, s->trying);
                s->lo = MAX(s->lo, s->trying);
        } else if (s->trying > s->lo)
                s->hi = s->trying;
        size = next_size(s);
        if (!size) {
                search_end(s);
                return;
        }
        r = attempt_start(s, size);
        if (r < 0) {
                log_warning_errno(r, "%s: cannot go on searching the path MTU: %m", s->ifname);
                attempt_release(s);
                search_end(s);
        }
}

int pmtu_search_start(CurlGlue *curl, const PmtuTarget *target, PmtuDoneFn done, void *userdata,
                      PmtuSearch **ret)
{
        PmtuSearch *s;
        uint32_t floor = pmtu_floor(target->addr.family);
        int r;

        if (target->link_mtu <= floor)
                return -ERANGE; /* nothing between the floor and the size that failed */
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->curl = curl;
        s->target = *target;
        s->done = done;
        s->userdata = userdata;
        s->url = strdup(target->url);
        s->host = strdup(target->host);
        s->ifname = strdup(target->ifname);
        s->ca_file = target->ca_file ? strdup(target->ca_file) : NULL;
        if (!s->url || !s->host || !s->ifname || (target->ca_file && !s->ca_file)) {
                pmtu_search_free(s);
                return -ENOMEM;
        }
        s->lo = floor;
        s->hi = target->link_mtu;
        r = attempt_start(s, next_size(s));
        if (r < 0) {
                pmtu_search_free(s);
                return r;
        }
        *ret = s;
        return 0;
}
