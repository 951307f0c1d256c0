/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The captive portal's exchanges as roamd makes them (the transport of roamd-portal.c): the
 * host resolved by the link's own DNS servers, then one HTTP exchange through curl bound to
 * the captive link, redirects left to the session (every host is checked). */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-curl.h"
#include "roamd-link.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-portal.h"
#include "roamd-resolve.h"

typedef struct Exchange {
        PortalFetch *fetch;
        CurlGlue *curl;
        char *host;
        long port;
        Resolve *resolve;
        CURL *easy;
        struct curl_slist *connect_to;
        char *body;
        size_t body_size;
        bool truncated;
} Exchange;

static void exchange_stop(void *data)
{
        Exchange *x = data;

        if (!x)
                return;
        resolve_free(x->resolve);
        if (x->easy) {
                curl_glue_remove(x->curl, x->easy);
                curl_easy_cleanup(x->easy);
        }
        curl_slist_free_all(x->connect_to);
        free(x->body);
        free(x->host);
        free(x);
}

/* Ends the exchange with this answer: the session frees the fetch, and with it x. */
static void exchange_answer(Exchange *x, const PortalAnswer *a)
{
        portal_fetch_answered(x->fetch, a);
}

static void exchange_failed(Exchange *x, CURLcode result)
{
        exchange_answer(x, &(PortalAnswer){.result = PORTAL_ANSWER_FAILED,
                                           .error = curl_easy_strerror(result)});
}

static size_t body_write(char *ptr, size_t size, size_t nmemb, void *userdata)
{
        Exchange *x = userdata;
        size_t n = size * nmemb;
        char *nb;

        /* Debian's curl ignores CURLOPT_MAXFILESIZE for chunked bodies: cut here. */
        if (x->body_size + n > WISPR_BODY_MAX) {
                x->truncated = true;
                return 0;
        }
        nb = realloc(x->body, x->body_size + n + 1);
        if (!nb)
                return 0;
        x->body = nb;
        memcpy(x->body + x->body_size, ptr, n);
        x->body_size += n;
        x->body[x->body_size] = 0;
        return n;
}
/* "sha256//BASE64" of the public key of the certificate the login went to (what
 * CURLOPT_PINNEDPUBLICKEY compares), or NULL (plain HTTP, no certificate seen). */
static char *login_pin_of(CURL *easy)
{
        struct curl_certinfo *ci = NULL;
        const char *pem = NULL;
        unsigned char *der = NULL, md[EVP_MAX_MD_SIZE];
        unsigned char b64[4 * ((EVP_MAX_MD_SIZE + 2) / 3) + 1];
        unsigned md_len = 0;
        char *ret = NULL;
        EVP_PKEY *key;
        X509 *x = NULL;
        BIO *bio;
        int n;

        if (curl_easy_getinfo(easy, CURLINFO_CERTINFO, &ci) != CURLE_OK || !ci ||
            ci->num_of_certs < 1)
                return NULL;
        for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next)
                if (strncmp(l->data, "Cert:", 5) == 0)
                        pem = l->data + 5;
        if (!pem || !(bio = BIO_new_mem_buf(pem, -1)))
                return NULL;
        x = PEM_read_bio_X509(bio, NULL, NULL, NULL);
        BIO_free(bio);
        key = x ? X509_get0_pubkey(x) : NULL;
        n = key ? i2d_PUBKEY(key, &der) : -1;
        if (n > 0 && EVP_Digest(der, (size_t)n, md, &md_len, EVP_sha256(), NULL) == 1 &&
            EVP_EncodeBlock(b64, md, (int)md_len) > 0 &&
            asprintf(&ret, "sha256//%s", (const char *)b64) < 0)
                ret = NULL;
        OPENSSL_free(der);
        X509_free(x);
        return ret;
}

static void on_fetch_done(CURL *easy, CURLcode result, void *userdata)
{
        Exchange *x = userdata;
        PortalFetchKind kind = portal_fetch_kind(x->fetch);
        _cleanup_free_ char *pin = NULL;
        PortalAnswer a = {.result = PORTAL_ANSWER_OK};
        char *redirect = NULL;

        if (kind == PORTAL_FETCH_LOGIN && result == CURLE_SSL_PINNEDPUBKEYNOTMATCH) {
                exchange_answer(x, &(PortalAnswer){.result = PORTAL_ANSWER_PIN_MISMATCH});
                return;
        }
        if (result != CURLE_OK) {
                if (x->truncated)
                        exchange_answer(x, &(PortalAnswer){.result = PORTAL_ANSWER_TOO_LARGE});
                else
                        exchange_failed(x, result);
                return;
        }
        if (kind == PORTAL_FETCH_LOGIN)
                a.pin = pin = login_pin_of(easy);
        (void)curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &a.status);
        (void)curl_easy_getinfo(easy, CURLINFO_REDIRECT_URL, &redirect);
        a.redirect = redirect;
        a.body = x->body ? x->body : "";
        a.body_size = x->body_size;
        exchange_answer(x, &a);
}

static int fetch_start_transfer(Exchange *x, const IpAddr *addr)
{
        PortalFetch *f = x->fetch;
        PortalSession *s = portal_fetch_session(f);
        const ProbeConfig *c = &s->portal->core->config->probe;
        const char *post = portal_fetch_form(f);
        int r;

        /* As the prober does: our resolver's address, the URL's host for Host and TLS, bound
         * to the captive link (nothing leaves through another one); redirects are followed by
         * us, one at a time, so every host is checked. WISPr clients identify themselves in
         * the user agent. */
        r = curl_easy_link_new(
            &(const CurlLinkFetch){.url = portal_fetch_url(f),
                                   .host = x->host,
                                   .port = x->port,
                                   .family = addr->family,
                                   .addr_text = addr->text,
                                   .ifname = s->ifname,
                                   .ifindex = s->ifindex,
                                   .timeout_ms = (long)(c->timeout_usec / USEC_PER_MSEC),
                                   .ca_file = c->ca_file,
                                   .user_agent = "roamd/" ROAM_VERSION " WISPr",
                                   .write = body_write,
                                   .write_data = x},
            &x->easy, &x->connect_to);
        if (r < 0)
                return r;
        if (post) {
                curl_easy_setopt(x->easy, CURLOPT_POSTFIELDS, post);
                curl_easy_setopt(x->easy, CURLOPT_POSTFIELDSIZE, (long)strlen(post));
        }
        if (portal_fetch_kind(f) == PORTAL_FETCH_LOGIN) {
                /* the certificate the password goes to is seen (and pinned when saved): a full
                 * handshake, not a resumed session without it */
                curl_easy_setopt(x->easy, CURLOPT_CERTINFO, 1L);
                curl_easy_setopt(x->easy, CURLOPT_SSL_SESSIONID_CACHE, 0L);
                if (portal_fetch_pin(f))
                        curl_easy_setopt(x->easy, CURLOPT_PINNEDPUBLICKEY, portal_fetch_pin(f));
        }
        return curl_glue_add(x->curl, x->easy, on_fetch_done, x);
}

static void on_fetch_resolved(Resolve *res, DnsOutcome outcome, const IpAddr *addrs, size_t n,
                              void *userdata)
{
        Exchange *x = userdata;
        PortalSession *s = portal_fetch_session(x->fetch);
        IpAddr first = {};
        const char *why;
        int r;

        if (n > 0)
                first = addrs[0];
        x->resolve = resolve_free(x->resolve);
        if (outcome != DNS_OUTCOME_OK || n == 0) {
                log_info("%s: captive portal: %s did not resolve (%s)", s->ifname, x->host,
                         dns_outcome_to_string(outcome));
                exchange_failed(x, CURLE_COULDNT_RESOLVE_HOST);
                return;
        }
        why = curl_glue_target_refusal(x->curl, first.family, first.text);
        if (why) {
                _cleanup_free_ char *msg = NULL;

                /* The network named it; roamd runs as root and sits past the firewall. */
                if (asprintf(&msg,
                             "refused to open %s: %s is at %s, %s (a network's address must not "
                             "lead roamd to this machine's own services)",
                             portal_fetch_url(x->fetch), x->host, first.text, why) < 0)
                        msg = NULL;
                portal_fetch_refused(x->fetch, msg ? msg : "refused to open the portal's address");
                return;
        }
        r = fetch_start_transfer(x, &first);
        if (r < 0)
                exchange_failed(x, CURLE_FAILED_INIT);
}
static int exchange_start(PortalFetch *f, void **ret_data)
{
        PortalSession *s = portal_fetch_session(f);
        Core *m = s->portal->core;
        Link *l = links_get(m->links, s->ifindex);
        Exchange *x;
        int r, family = AF_INET;

        if (!l)
                return -ENOMEM; /* (as before: the link went away under the session) */
        x = calloc(1, sizeof(*x));
        if (!x)
                return -ENOMEM;
        x->fetch = f;
        x->curl = m->curl;
        r = curl_url_host_port(portal_fetch_url(f), &x->host, &x->port);
        if (r < 0) {
                exchange_stop(x);
                return r;
        }
        /* The family that saw the portal, IPv4 first. */
        if (l->verdict4.verdict != VERDICT_PORTAL && l->verdict6.verdict == VERDICT_PORTAL)
                family = AF_INET6;
        /* An address as the URL's host ("[2001:db8::1]"): its own family, whichever saw the
         * portal (resolve_start() takes it as it is, and the checks below still apply). */
        if (inet_pton(AF_INET, x->host, &(struct in_addr){}) == 1 ||
            inet_pton(AF_INET6, x->host, &(struct in6_addr){}) == 1)
                family = AF_UNSPEC;
        r = resolve_start(m->event, l->info.name, l->info.dns, l->info.n_dns, x->host, family, 0,
                          m->config->probe.dns_timeout_usec, on_fetch_resolved, x, &x->resolve);
        if (r < 0) {
                exchange_stop(x);
                return r;
        }
        *ret_data = x;
        return 0;
}

const PortalTransport portal_transport_curl = {
    .start = exchange_start,
    .stop = exchange_stop,
};
