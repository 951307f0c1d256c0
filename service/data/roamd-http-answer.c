/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <strings.h>

#include "roam-macro.h"
#include "roamd-http-answer.h"

#define URL_MAX 2048

/* One component of a URI reference (RFC 3986 section 3); p == NULL: the component is absent,
 * which differs from present but empty ("http://h/?" has an empty query). */
typedef struct Span {
        const char *p;
        size_t n;
} Span;

typedef struct UrlRef {
        Span scheme, authority, path, query, fragment;
} UrlRef;

/* Printable ASCII only: a URI is ASCII (RFC 3986), and these URLs end up in D-Bus strings,
 * which must be valid UTF-8. */
static bool url_chars_ok(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
                        return false;
        return true;
}

static bool span_caseeq(Span s, const char *word)
{
        return s.p && s.n == strlen(word) && strncasecmp(s.p, word, s.n) == 0;
}

/* Splits a reference the way RFC 3986 appendix B does; never fails. */
static void url_parse(const char *s, UrlRef *ret)
{
        UrlRef r = {};
        size_t n;

        n = strcspn(s, ":/?#");
        if (n > 0 && s[n] == ':') {
                r.scheme = (Span){s, n};
                s += n + 1;
        }
        if (s[0] == '/' && s[1] == '/') {
                s += 2;
                n = strcspn(s, "/?#");
                r.authority = (Span){s, n};
                s += n;
        }
        n = strcspn(s, "?#");
        r.path = (Span){s, n};
        s += n;
        if (*s == '?') {
                n = strcspn(s + 1, "#");
                r.query = (Span){s + 1, n};
                s += 1 + n;
        }
        if (*s == '#')
                r.fragment = (Span){s + 1, strlen(s + 1)};
        *ret = r;
}

static bool authority_has_host(Span a)
{
        const char *at;

        if (!a.p)
                return false;
        /* Skip "user:password@", then something must remain before the port. */
        at = memrchr(a.p, '@', a.n);
        if (at) {
                a.n -= at + 1 - a.p;
                a.p = at + 1;
        }
        return a.n > 0 && a.p[0] != ':';
}

bool http_url_ok(const char *url, bool https_only)
{
        UrlRef r;
        size_t n;

        if (!url)
                return false;
        n = strnlen(url, URL_MAX + 1);
        if (n > URL_MAX || !url_chars_ok(url, n))
                return false;
        url_parse(url, &r);
        if (!authority_has_host(r.authority))
                return false;
        if (span_caseeq(r.scheme, "https"))
                return true;
        return !https_only && span_caseeq(r.scheme, "http");
}

/* RFC 3986 section 5.2.4. Writes at most n bytes to out (the result is never longer) and
 * returns how many. */
static size_t remove_dot_segments(const char *in, size_t n, char *out)
{
        size_t o = 0;

#define STARTS(s) (n >= sizeof(s) - 1 && memcmp(in, s, sizeof(s) - 1) == 0)
#define IS(s)     (n == sizeof(s) - 1 && memcmp(in, s, sizeof(s) - 1) == 0)
        while (n > 0) {
                if (STARTS("../")) {
                        in += 3, n -= 3;
                } else if (STARTS("./")) {
                        in += 2, n -= 2;
                } else if (STARTS("/./")) {
                        in += 2, n -= 2;
                } else if (IS("/.")) {
                        out[o++] = '/';
                        break;
                } else if (STARTS("/../") || IS("/..")) {
                        /* Drop the last output segment with its '/'. */
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--;
                        if (n == 3) {
                                out[o++] = '/';
                                break;
                        }
                        in += 3, n -= 3;
                } else if (IS(".") || IS("..")) {
                        break;
                } else {
                        /* Move the first segment, with its leading '/' if any. */
                        size_t k = 1;
                        while (k < n && in[k] != '/')
                                k++;
                        memcpy(out + o, in, k);
                        o += k, in += k, n -= k;
                }
        }
#undef STARTS
#undef IS
        return o;
}

/* RFC 3986 section 5.2.2 (strict): the absolute URL that ref means on the page base. */
static int url_resolve(const char *base, const char *ref, char **ret)
{
        _cleanup_free_ char *merged = NULL, *out = NULL;
        Span scheme, authority, path, query;
        UrlRef b = {}, r;
        size_t o = 0;

        url_parse(ref, &r);
        if (r.scheme.p) {
                scheme = r.scheme, authority = r.authority, path = r.path, query = r.query;
        } else {
                /* Without a usable base a relative reference means nothing. */
                if (!http_url_ok(base, false))
                        return -EINVAL;
                url_parse(base, &b);
                scheme = b.scheme;
                if (r.authority.p) {
                        authority = r.authority, path = r.path, query = r.query;
                } else if (r.path.n == 0) {
                        authority = b.authority, path = b.path;
                        query = r.query.p ? r.query : b.query;
                } else if (r.path.p[0] == '/') {
                        authority = b.authority, path = r.path, query = r.query;
                } else {
                        /* "x" replaces the last segment of the base path: "/a/b" + "x" is
                         * "/a/x"; an empty base path counts as "/". */
                        size_t dir = b.path.n, m;
                        while (dir > 0 && b.path.p[dir - 1] != '/')
                                dir--;
                        merged = malloc(dir + 1 + r.path.n);
                        if (!merged)
                                return -ENOMEM;
                        if (dir == 0) {
                                merged[0] = '/';
                                m = 1;
                        } else {
                                memcpy(merged, b.path.p, dir);
                                m = dir;
                        }
                        memcpy(merged + m, r.path.p, r.path.n);
                        authority = b.authority, path = (Span){merged, m + r.path.n};
                        query = r.query;
                }
        }

        out = malloc(scheme.n + 3 + authority.n + path.n + 1 + query.n + 1 + r.fragment.n + 1);
        if (!out)
                return -ENOMEM;
        memcpy(out + o, scheme.p, scheme.n), o += scheme.n;
        out[o++] = ':';
        if (authority.p) {
                memcpy(out + o, "//", 2), o += 2;
                memcpy(out + o, authority.p, authority.n), o += authority.n;
        }
        o += remove_dot_segments(path.p, path.n, out + o);
        if (query.p) {
                out[o++] = '?';
                memcpy(out + o, query.p, query.n), o += query.n;
        }
        if (r.fragment.p) {
                out[o++] = '#';
                memcpy(out + o, r.fragment.p, r.fragment.n), o += r.fragment.n;
        }
        out[o] = 0;
        *ret = TAKE_PTR(out);
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
