/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "fake-fetch.h"
#include "roam-macro.h"
#include "roamd-core.h"
#include "roamd-curl.h"
#include "roamd-link-bus.h"
#include "roamd-ping.h"
#include "roamd-pmtu.h"
#include "roamd-reconcile.h"
#include "roamd-resolve.h"
#include "roamd-tcp-fastopen.h"
#include "test.h"

FakeFetch fake_fetch;

#define FAKE_SLOTS 32

struct Resolve {
        int family;
        ResolveDoneFn done;
        void *userdata;
};

struct Ping {
        PingDoneFn done;
        void *userdata;
};

typedef struct Transfer {
        CURL *easy;
        char *url;
        curl_write_callback write;
        void *write_data;
        CurlDoneFn done;
        void *userdata;
        long status; /* what curl_easy_getinfo() says once it ended */
        bool running;
} Transfer;

static Resolve *lookups[FAKE_SLOTS];
static Ping *pings[FAKE_SLOTS];
static Transfer transfers[FAKE_SLOTS];

void fake_fetch_reset(void)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++) {
                free(lookups[i]);
                free(pings[i]);
                if (transfers[i].easy)
                        curl_easy_cleanup(transfers[i].easy);
                free(transfers[i].url);
        }
        memset(lookups, 0, sizeof(lookups));
        memset(pings, 0, sizeof(pings));
        memset(transfers, 0, sizeof(transfers));
        fake_fetch = (FakeFetch){};
}

/* ---- DNS (roamd-resolve.c) ---- */

int resolve_start(sd_event *event, const char *ifname, const IpAddr *servers, size_t n_servers,
                  const char *host, int family, uint32_t mark, uint64_t timeout_usec,
                  ResolveDoneFn done, void *userdata, Resolve **ret)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++) {
                if (lookups[i])
                        continue;
                lookups[i] = calloc(1, sizeof(Resolve));
                if (!lookups[i])
                        return -ENOMEM;
                *lookups[i] = (Resolve){.family = family, .done = done, .userdata = userdata};
                fake_fetch.lookups++;
                *ret = lookups[i];
                return 0;
        }
        return -ENOBUFS;
}

Resolve *resolve_free(Resolve *r)
{
        for (size_t i = 0; r && i < FAKE_SLOTS; i++)
                if (lookups[i] == r) {
                        if (r->done)
                                fake_fetch.cancelled++;
                        lookups[i] = NULL;
                }
        free(r);
        return NULL;
}

unsigned fake_fetch_pending_lookups(int family)
{
        unsigned n = 0;

        for (size_t i = 0; i < FAKE_SLOTS; i++)
                n += lookups[i] && lookups[i]->done &&
                     (family == AF_UNSPEC || lookups[i]->family == family);
        return n;
}

void fake_fetch_answer_dns(int family, DnsOutcome outcome, const char *addr)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++) {
                Resolve *r = lookups[i];
                IpAddr a = {.family = family};
                ResolveDoneFn done;

                if (!r || !r->done || r->family != family)
                        continue;
                if (addr)
                        snprintf(a.text, sizeof(a.text), "%s", addr);
                /* answered: no longer a cancellation when the prober frees it */
                done = r->done;
                r->done = NULL;
                done(r, outcome, &a, addr ? 1 : 0, r->userdata);
        }
}

/* ---- transfers (roamd-curl.c) ---- */

/* no TLS here: nothing to share */
CURLSH *curl_tls_share_new(void)
{
        return NULL;
}

int curl_easy_link_new(const CurlLinkFetch *f, CURL **ret, struct curl_slist **ret_connect_to)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++) {
                Transfer *t = &transfers[i];
                if (t->easy)
                        continue;
                *t = (Transfer){.easy = curl_easy_init(),
                                .url = strdup(f->url),
                                .write = f->write,
                                .write_data = f->write_data};
                if (!t->easy || !t->url)
                        return -ENOMEM;
                *ret = t->easy;
                *ret_connect_to = NULL;
                return 0;
        }
        return -ENOBUFS;
}

static Transfer *transfer_of(const CURL *easy)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++)
                if (transfers[i].easy == easy)
                        return &transfers[i];
        return NULL;
}

/* The prober frees the handle itself (curl_easy_cleanup()): the slot only forgets it. */
static void transfer_forget(Transfer *t)
{
        free(t->url);
        *t = (Transfer){};
}

int curl_glue_add(CurlGlue *g, CURL *easy, CurlDoneFn done, void *userdata)
{
        Transfer *t = transfer_of(easy);

        ASSERT_TRUE(t);
        t->done = done;
        t->userdata = userdata;
        t->running = true;
        fake_fetch.transfers++;
        return 0;
}

void curl_glue_remove(CurlGlue *g, CURL *easy)
{
        Transfer *t = transfer_of(easy);

        if (!t)
                return;
        if (t->running)
                fake_fetch.removed++;
        transfer_forget(t);
}

const char *curl_glue_target_refusal(CurlGlue *g, int family, const char *addr_text)
{
        return NULL;
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
                *ret_host = strdup(host);
                *ret_port = strtol(port, NULL, 10);
                r = *ret_host ? 0 : -ENOMEM;
        }
        curl_free(host);
        curl_free(port);
        curl_url_cleanup(u);
        return r;
}

unsigned fake_fetch_pending_transfers(void)
{
        unsigned n = 0;

        for (size_t i = 0; i < FAKE_SLOTS; i++)
                n += transfers[i].running;
        return n;
}

unsigned fake_fetch_answer_http(const char *url_prefix, CURLcode result, long status,
                                const char *body)
{
        unsigned n = 0;

        for (size_t i = 0; i < FAKE_SLOTS; i++) {
                Transfer *t = &transfers[i];
                CURL *easy;

                if (!t->running || strncmp(t->url, url_prefix, strlen(url_prefix)) != 0)
                        continue;
                t->running = false;
                t->status = result == CURLE_OK ? status : 0;
                if (result == CURLE_OK && body && *body)
                        ASSERT_EQ(t->write((char *)body, 1, strlen(body), t->write_data),
                                  strlen(body));
                n++;
                easy = t->easy;
                /* the prober frees the handle in its callback; the slot keeps it until then
                 * for curl_easy_getinfo() */
                t->done(easy, result, t->userdata);
                if (t->easy == easy)
                        transfer_forget(t);
        }
        return n;
}

CURLcode __real_curl_easy_getinfo(CURL *easy, CURLINFO info, ...);
CURLcode __wrap_curl_easy_getinfo(CURL *easy, CURLINFO info, ...);

/* What a transfer that ended here says: its status; nothing was connected or redirected. */
CURLcode __wrap_curl_easy_getinfo(CURL *easy, CURLINFO info, ...)
{
        Transfer *t = transfer_of(easy);
        va_list ap;
        void *arg;

        va_start(ap, info);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!t)
                return __real_curl_easy_getinfo(easy, info, arg);
        switch (info) {
        case CURLINFO_RESPONSE_CODE:
                *(long *)arg = t->status;
                return CURLE_OK;
        case CURLINFO_REDIRECT_URL:
                *(char **)arg = NULL;
                return CURLE_OK;
        default:
                return __real_curl_easy_getinfo(easy, info, arg);
        }
}

/* ---- the gateway ping (roamd-ping.c) ---- */

int ping_start(sd_event *event, const char *ifname, int ifindex, const IpAddr *target,
               uint64_t timeout_usec, PingDoneFn done, void *userdata, Ping **ret)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++) {
                if (pings[i])
                        continue;
                pings[i] = calloc(1, sizeof(Ping));
                if (!pings[i])
                        return -ENOMEM;
                *pings[i] = (Ping){.done = done, .userdata = userdata};
                fake_fetch.pings++;
                *ret = pings[i];
                return 0;
        }
        return -ENOBUFS;
}

Ping *ping_free(Ping *p)
{
        for (size_t i = 0; p && i < FAKE_SLOTS; i++)
                if (pings[i] == p)
                        pings[i] = NULL;
        free(p);
        return NULL;
}

void fake_fetch_answer_ping(bool answered)
{
        for (size_t i = 0; i < FAKE_SLOTS; i++)
                if (pings[i])
                        pings[i]->done(pings[i], answered, pings[i]->userdata);
}

/* ---- the rest the prober reaches ---- */

int pmtu_search_start(CurlGlue *curl, const PmtuTarget *target, PmtuDoneFn done, void *userdata,
                      PmtuSearch **ret)
{
        return -EOPNOTSUPP; /* (no black hole in these tests) */
}

PmtuSearch *pmtu_search_free(PmtuSearch *s)
{
        return NULL;
}

/* A VPN's probes wait for a pass; no link here is a VPN with apps enforced. */
int reconcile_wait(Reconcile *rc, reconcile_done_t done, void *userdata,
                   reconcile_destroy_t destroy, ReconcileWait **ret)
{
        return -ENOMEDIUM;
}

ReconcileWait *reconcile_wait_free(ReconcileWait *w)
{
        return NULL;
}

void core_schedule_trim(Core *c)
{
        fake_fetch.trims++;
}

void link_bus_emit_changed(Link *l, const char *first, ...)
{
        fake_fetch.bus_emits++;
}

void link_bus_emit_changed_strv(Link *l, char **names)
{
        fake_fetch.bus_emits++;
}

/* (roamd-tcp-fastopen.c) the kernel's cookies are not the unit tests' to forget */
int tcp_fastopen_forget(int family, const void *addr)
{
        return 0;
}
