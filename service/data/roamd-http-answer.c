/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>

#include <curl/curl.h>

#include "roam-macro.h"
#include "roamd-http-answer.h"

#define URL_MAX 2048

/* Printable ASCII only: a URI is ASCII (RFC 3986), and these URLs end up in D-Bus strings,
 * which must be valid UTF-8. */
static bool url_chars_ok(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
                        return false;
        return true;
}

static void curl_url_cleanupp(CURLU **u)
{
        curl_url_cleanup(*u);
}

static void curl_freep(char **p)
{
        curl_free(*p);
}

/* Parses an absolute http(s) URL with curl's URL API (the parser the fetches use), into u
 * when given (which may hold a base already: then url may be a reference relative to it). */
static bool url_set_http(CURLU *u, const char *url, bool https_only)
{
        _cleanup_(curl_freep) char *scheme = NULL, *host = NULL;
        size_t n = strspn(url, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+.-");

        /* curl reads "http:///x" as the host x (it takes 1 to 3 slashes); RFC 3986 gives it an
         * empty authority: no host, no portal. */
        if (n > 0 && strncmp(url + n, ":///", 4) == 0)
                return false;
        /* Any scheme parses (a "javascript:" Location is refused below, not by curl's list of
         * what it was built to fetch). */
        if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host[0])
                return false;
        if (strcasecmp(scheme, "https") == 0)
                return true;
        return !https_only && strcasecmp(scheme, "http") == 0;
}

bool http_url_ok(const char *url, bool https_only)
{
        _cleanup_(curl_url_cleanupp) CURLU *u = NULL;
        size_t n;

        if (!url)
                return false;
        n = strnlen(url, URL_MAX + 1);
        if (n > URL_MAX || !url_chars_ok(url, n))
                return false;
        u = curl_url();
        return u && url_set_http(u, url, https_only);
}

/* RFC 3986 section 5.2 through curl's URL API: the absolute URL that ref means on the page
 * base (an absolute ref stands alone; a relative one needs a usable base). */
static int url_resolve(const char *base, const char *ref, char **ret)
{
        _cleanup_(curl_url_cleanupp) CURLU *u = curl_url();
        _cleanup_(curl_freep) char *out = NULL;
        char *dup;

        if (!u)
                return -ENOMEM;
        if (!url_set_http(u, ref, false)) {
                curl_url_cleanup(u);
                u = curl_url();
                if (!u)
                        return -ENOMEM;
                if (!http_url_ok(base, false) || !url_set_http(u, base, false))
                        return -EINVAL;
                /* A fragment alone keeps the base's path and query (RFC 3986 5.2.2), which
                 * curl's resolution of "#x" drops. */
                if (ref[0] == '#' ? curl_url_set(u, CURLUPART_FRAGMENT, ref + 1, 0) != CURLUE_OK
                                  : !url_set_http(u, ref, false))
                        return -EINVAL;
        }
        if (curl_url_get(u, CURLUPART_URL, &out, 0) != CURLUE_OK)
                return -EINVAL;
        dup = strdup(out);
        if (!dup)
                return -ENOMEM;
        *ret = dup;
        return 0;
}

/* The portal URL a 3xx points to, or -EINVAL when its Location is unusable. */
static int redirect_target(const HttpAnswer *a, char **ret)
{
        _cleanup_free_ char *target = NULL;
        size_t n = strnlen(a->location, URL_MAX + 1);
        int r;

        if (n == 0 || n > URL_MAX || !url_chars_ok(a->location, n))
                return -EINVAL;
        r = url_resolve(a->url, a->location, &target);
        if (r < 0)
                return r;
        /* Checked on the result: "javascript:", "data:" and the like are no portal. */
        if (!http_url_ok(target, false))
                return -EINVAL;
        *ret = TAKE_PTR(target);
        return 0;
}

static bool body_matches(const HttpAnswer *a, const HttpExpect *e)
{
        size_t n;

        /* A 204 has no content by definition (RFC 9110 section 15.3.5). */
        if (!e->body || e->status == 204)
                return true;
        /* Compared with its length: a body with a NUL inside must not match a shorter one. */
        n = strlen(e->body);
        if (a->body_size != n)
                return false;
        return n == 0 || (a->body && memcmp(a->body, e->body, n) == 0);
}

static HttpOutcome answer(HttpOutcome o, const char *portal_url, char **ret_portal_url)
{
        /* On allocation failure the outcome still stands, only without its URL. */
        if (ret_portal_url)
                *ret_portal_url = portal_url ? strdup(portal_url) : NULL;
        return o;
}

static HttpOutcome wrong(const HttpAnswer *a, char **ret_portal_url)
{
        /* The probe URL is where a browser would meet the portal. A URL that could not be
         * shown safely is not offered at all. */
        return answer(HTTP_OUTCOME_WRONG, http_url_ok(a->url, false) ? a->url : NULL,
                      ret_portal_url);
}

HttpOutcome http_answer_classify(const HttpAnswer *a, const HttpExpect *e, char **ret_portal_url)
{
        _cleanup_free_ char *target = NULL;
        int r;

        if (a->status == e->status) {
                /* A body cut at the limit is never the expected one, whatever it starts with. */
                if (!a->truncated && body_matches(a, e))
                        return answer(HTTP_OUTCOME_OK, NULL, ret_portal_url);
                return wrong(a, ret_portal_url);
        }

        if (a->status < 300 || a->status > 399 || !a->location)
                return wrong(a, ret_portal_url);
        r = redirect_target(a, &target);
        if (r == -ENOMEM)
                return answer(HTTP_OUTCOME_REDIRECT, NULL, ret_portal_url);
        if (r < 0)
                return wrong(a, ret_portal_url);
        if (ret_portal_url)
                *ret_portal_url = TAKE_PTR(target);
        return HTTP_OUTCOME_REDIRECT;
}

const char *http_target_special(int family, const void *addr)
{
        uint32_t a;

        if (family == AF_INET6) {
                const struct in6_addr *a6 = addr;

                if (IN6_IS_ADDR_V4MAPPED(a6) || IN6_IS_ADDR_V4COMPAT(a6))
                        return http_target_special(AF_INET, &a6->s6_addr32[3]);
                if (IN6_IS_ADDR_UNSPECIFIED(a6))
                        return "the unspecified address";
                if (IN6_IS_ADDR_LOOPBACK(a6))
                        return "a loopback address";
                if (IN6_IS_ADDR_MULTICAST(a6))
                        return "a multicast address";
                return NULL;
        }
        if (family != AF_INET)
                return "not an IP address";
        memcpy(&a, addr, sizeof(a));
        a = ntohl(a);
        if ((a >> 24) == 0)
                return "the unspecified address";
        if ((a >> 24) == 127)
                return "a loopback address";
        if ((a >> 28) == 0xe)
                return "a multicast address";
        if (a == 0xffffffffu)
                return "the broadcast address";
        return NULL;
}
