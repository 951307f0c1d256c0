/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <curl/curl.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

/* libcurl's multi interface driven by sd-event: curl's sockets become io sources and its
 * timeout one time source. No threads, no blocking calls. */

typedef struct CurlGlue CurlGlue;

/* Called once per transfer when it ends (result is the easy handle's CURLcode). The handle is
 * already removed from the multi handle; the callee owns it again. */
typedef void (*CurlDoneFn)(CURL *easy, CURLcode result, void *userdata);

/* Whether addr (struct in_addr or in6_addr of family) is an address of this machine. */
typedef bool (*CurlIsLocalFn)(int family, const void *addr, void *userdata);

int curl_glue_new(sd_event *event, CurlGlue **ret);
/* Every transfer's socket is checked when curl opens it (the address it really connects
 * to): loopback, unspecified, multicast, broadcast and, with fn, the machine's own addresses
 * are refused. A network (a portal's redirect, a WISPr URL, an RFC 8908 API URL, a lying DNS)
 * must not make roamd, as root, reach services on the machine itself. */
void curl_glue_set_is_local(CurlGlue *g, CurlIsLocalFn fn, void *userdata);
/* Why roamd must not connect to addr, in words ("a loopback address", "an address of this
 * machine", ...), or NULL when it may. The check the socket-open callback makes, for callers
 * that want to refuse with a clear reason before a transfer starts. */
const char *curl_glue_target_refusal(CurlGlue *g, int family, const char *addr_text);

CurlGlue *curl_glue_free(CurlGlue *g);

/* Starts a transfer. CURLOPT_PRIVATE of easy is used by the glue. */
int curl_glue_add(CurlGlue *g, CURL *easy, CurlDoneFn done, void *userdata);

/* Cancels a transfer that has not ended; no callback follows. NULL allowed. */
void curl_glue_remove(CurlGlue *g, CURL *easy);

/* What every transfer roamd makes on one link's behalf shares (probes, captive portal
 * fetches): connect to addr (our resolver's answer) keeping host for Host, SNI and the
 * certificate check, bound to the link, one fresh connection that is never reused, no
 * redirects followed (the caller checks every host), http and https only, timeout_ms for
 * connect and whole, and the CA file (NULL: the system's CA directory, see roamd-curl.c).
 * *ret_connect_to must outlive the transfer; the caller frees it with curl_slist_free_all(). */
int curl_easy_link_setup(CURL *easy, const char *host, long port, int family, const char *addr_text,
                         const char *ifname, int ifindex, long timeout_ms, const char *ca_file,
                         struct curl_slist **ret_connect_to);

/* One transfer roamd makes on one link's behalf (probes, captive portal fetches). */
typedef struct CurlLinkFetch {
        const char *url;  /* curl copies it */
        const char *host; /* the URL's host: for Host, SNI and the certificate check */
        long port;
        int family; /* of addr_text, our resolver's answer: what is connected to */
        const char *addr_text;
        const char *ifname; /* the link the transfer is bound to */
        int ifindex;
        long timeout_ms;     /* for connect and whole */
        const char *ca_file; /* NULL: the system's CA directory, see roamd-curl.c */
        const char *user_agent;
        curl_write_callback write;
        void *write_data;
        uint32_t mark; /* SO_MARK of its socket; 0: none */
        CURLSH *share; /* TLS sessions to resume and keep (one network's); NULL: none */
        /* TCP Fast Open: the first flight (a TLS ClientHello) rides in the SYN when the
         * kernel keeps a cookie of the server's; the caller has made sure that cookie was
         * given on this network (roamd-tcp-fastopen.h). *fastopen_lost, if given, is set when
         * that SYN (with data, or asking for a cookie) was lost and only its retransmission
         * got through (tcp_fastopen_syn_lost()); it must outlive the handle. */
        bool fastopen;
        bool *fastopen_lost;
} CurlLinkFetch;

/* A new easy handle for the fetch: connected to addr_text keeping host, bound to the link,
 * one fresh connection that is never reused, no redirects followed (the caller checks every
 * host), http and https only. The handle is the caller's until curl_glue_add();
 * *ret_connect_to must outlive the transfer, the caller frees it with curl_slist_free_all(). */
int curl_easy_link_new(const CurlLinkFetch *f, CURL **ret, struct curl_slist **ret_connect_to);

/* A share of TLS sessions (curl's share interface), for one link on one network: a session
 * resumed elsewhere would tell the server there that this device was here. */
CURLSH *curl_tls_share_new(void);

/* The host of url (an IPv6 literal without its brackets, as the resolver wants it) and its
 * port (the scheme's when the URL names none). -EINVAL: not a URL curl can parse. */
int curl_url_host_port(const char *url, char **ret_host, long *ret_port);
