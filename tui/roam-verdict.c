/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-verdict.h"

static const char *const roam_verdict_table[_ROAM_VERDICT_MAX] = {
    [ROAM_VERDICT_OFFLINE] = "offline", [ROAM_VERDICT_LOCAL] = "local",
    [ROAM_VERDICT_PORTAL] = "portal",   [ROAM_VERDICT_PARTIAL] = "partial",
    [ROAM_VERDICT_ONLINE] = "online",   [ROAM_VERDICT_CHECKING] = "checking",
};

DEFINE_STRING_TABLE_LOOKUP(roam_verdict, RoamVerdict);

static const char *const roam_reason_table[_ROAM_REASON_MAX] = {
    [ROAM_REASON_NOT_PROBED] = "not-probed",
    [ROAM_REASON_NO_CARRIER] = "no-carrier",
    [ROAM_REASON_NO_ADDRESS] = "no-address",
    [ROAM_REASON_LINK_LOCAL_ONLY] = "link-local-only",
    [ROAM_REASON_NO_ROUTE] = "no-route",
    [ROAM_REASON_GATEWAY_UNREACHABLE] = "gateway-unreachable",
    [ROAM_REASON_DNS_FAILED] = "dns-failed",
    [ROAM_REASON_HTTP_TIMEOUT] = "http-timeout",
    [ROAM_REASON_HTTP_FAILED] = "http-failed",
    [ROAM_REASON_PORTAL_REDIRECT] = "portal-redirect",
    [ROAM_REASON_PORTAL_CONTENT] = "portal-content",
    [ROAM_REASON_PORTAL_DNS] = "portal-dns",
    [ROAM_REASON_CAPPORT] = "capport",
    [ROAM_REASON_HTTPS_FAILED] = "https-failed",
    [ROAM_REASON_OK] = "ok",
};

DEFINE_STRING_TABLE_LOOKUP(roam_reason, RoamReason);

/* Short phrases fit the overview's column (at most 30 columns). */
static const char *const reason_short_table[_ROAM_REASON_MAX] = {
    [ROAM_REASON_NOT_PROBED] = "not probed yet",
    [ROAM_REASON_NO_CARRIER] = "no carrier",
    [ROAM_REASON_NO_ADDRESS] = "no address",
    [ROAM_REASON_LINK_LOCAL_ONLY] = "link-local address only",
    [ROAM_REASON_NO_ROUTE] = "no default route",
    [ROAM_REASON_GATEWAY_UNREACHABLE] = "nothing answers",
    [ROAM_REASON_DNS_FAILED] = "DNS failed",
    [ROAM_REASON_HTTP_TIMEOUT] = "HTTP check timed out",
    [ROAM_REASON_HTTP_FAILED] = "HTTP check failed",
    [ROAM_REASON_PORTAL_REDIRECT] = "redirected to a login page",
    [ROAM_REASON_PORTAL_CONTENT] = "login page instead of check",
    [ROAM_REASON_PORTAL_DNS] = "DNS answers are rewritten",
    [ROAM_REASON_CAPPORT] = "network says: portal",
    [ROAM_REASON_HTTPS_FAILED] = "HTTPS check failed",
    [ROAM_REASON_OK] = "checks answered",
};

static const char *const reason_long_table[_ROAM_REASON_MAX] = {
    [ROAM_REASON_NOT_PROBED] = "no probe round has ended yet, or the link is never probed",
    [ROAM_REASON_NO_CARRIER] = "the link is down or has no carrier",
    [ROAM_REASON_NO_ADDRESS] = "no address of this family",
    [ROAM_REASON_LINK_LOCAL_ONLY] = "only link-local addresses",
    [ROAM_REASON_NO_ROUTE] = "no default route of this family",
    [ROAM_REASON_GATEWAY_UNREACHABLE] = "neither the probes, the DNS servers nor the gateway "
                                        "answered",
    [ROAM_REASON_DNS_FAILED] = "the link's DNS servers gave no address",
    [ROAM_REASON_HTTP_TIMEOUT] = "DNS worked, the HTTP check timed out, the gateway answers",
    [ROAM_REASON_HTTP_FAILED] = "DNS worked, the HTTP check failed, the gateway answers",
    [ROAM_REASON_PORTAL_REDIRECT] = "the HTTP check was redirected to a login page",
    [ROAM_REASON_PORTAL_CONTENT] = "the HTTP check got another page than expected",
    [ROAM_REASON_PORTAL_DNS] = "DNS answered with unexpected addresses",
    [ROAM_REASON_CAPPORT] = "the network's captive portal API says captive",
    [ROAM_REASON_HTTPS_FAILED] = "plain HTTP works, HTTPS does not",
    [ROAM_REASON_OK] = "the HTTPS check got the expected answer",
};

const char *roam_reason_short(const char *reason)
{
        RoamReason r = roam_reason_from_string(reason);

        if (r < 0)
                return *reason ? reason : "no reason given";
        return reason_short_table[r];
}

const char *roam_reason_long(const char *reason)
{
        RoamReason r = roam_reason_from_string(reason);

        if (r < 0)
                return *reason ? reason : "no reason given";
        return reason_long_table[r];
}

const char *roam_verdict_word(const char *verdict)
{
        return *verdict ? verdict : "unknown";
}

static const char *link_label(const RoamLink *l)
{
        return *l->name ? l->name : l->path;
}

/* Where to log in: the portal URL roamd found, else the RFC 8908 user portal URL. */
static const char *portal_login_url(const RoamLink *l)
{
        if (*l->portal_url)
                return l->portal_url;
        if (l->capport.user_portal_url && *l->capport.user_portal_url)
                return l->capport.user_portal_url;
        return NULL;
}

char *roam_global_sentence(const RoamModel *m)
{
        const RoamLink *best = roam_model_best_link(m);
        RoamVerdict v = roam_verdict_from_string(m->state);
        char *s = NULL;
        int r = 0;

        if (v < 0)
                r = asprintf(&s, "State unknown (roamd says \"%s\")", m->state);
        else if (!best) {
                if (v == ROAM_VERDICT_OFFLINE)
                        r = asprintf(&s, "Offline: no usable link");
                else
                        r = asprintf(&s, "%c%s (no best link known)", m->state[0] - 'a' + 'A',
                                     m->state + 1);
        } else {
                const char *name = link_label(best), *url;

                switch (v) {
                case ROAM_VERDICT_ONLINE:
                        r = asprintf(&s, "Online via %s (%s)", name, best->bearer);
                        break;
                case ROAM_VERDICT_PARTIAL:
                        r = asprintf(&s, "HTTPS blocked on %s (partial)", name);
                        break;
                case ROAM_VERDICT_PORTAL:
                        url = portal_login_url(best);
                        if (url)
                                r = asprintf(&s, "Behind a captive portal on %s: log in at %s",
                                             name, url);
                        else
                                r = asprintf(&s,
                                             "Behind a captive portal on %s: open a web page to "
                                             "log in",
                                             name);
                        break;
                case ROAM_VERDICT_LOCAL:
                        r = asprintf(&s, "Local network only on %s: no Internet", name);
                        break;
                case ROAM_VERDICT_CHECKING:
                        r = asprintf(&s, "Checking %s: no answer yet", name);
                        break;
                case ROAM_VERDICT_OFFLINE:
                        r = asprintf(&s, "Offline: %s, %s", name,
                                     roam_reason_short(best->connectivity_reason));
                        break;
                case _ROAM_VERDICT_MAX:
                case _ROAM_VERDICT_INVALID:
                        break;
                }
        }
        if (r < 0)
                return NULL;
        return s;
}

void roam_format_age(uint64_t usec, uint64_t now, char *buf, size_t size, uint64_t *ret_next)
{
        static const struct {
                uint64_t unit;
                char suffix;
                uint64_t limit; /* in units: the next unit takes over from here */
        } steps[] = {
            {USEC_PER_SEC, 's', 60},
            {60 * USEC_PER_SEC, 'm', 60},
            {3600 * USEC_PER_SEC, 'h', 24},
            {86400 * USEC_PER_SEC, 'd', UINT64_MAX},
        };
        uint64_t age;

        if (ret_next)
                *ret_next = UINT64_MAX;
        if (usec == 0) {
                snprintf(buf, size, "never");
                return;
        }
        if (usec > now) {
                /* A clock step: the probe "happened in the future". Say so rather than lie. */
                snprintf(buf, size, "just now");
                if (ret_next)
                        *ret_next = usec - now + USEC_PER_SEC;
                return;
        }
        age = now - usec;
        for (size_t i = 0; i < ELEMENTSOF(steps); i++) {
                uint64_t n = age / steps[i].unit;

                if (n >= steps[i].limit)
                        continue;
                snprintf(buf, size, "%" PRIu64 "%c ago", n, steps[i].suffix);
                if (ret_next)
                        *ret_next = (n + 1) * steps[i].unit - age;
                return;
        }
}

void roam_format_duration(uint64_t usec, char *buf, size_t size)
{
        if (usec < USEC_PER_SEC)
                snprintf(buf, size, "%" PRIu64 " ms", (usec + USEC_PER_MSEC / 2) / USEC_PER_MSEC);
        else
                snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " s", usec / USEC_PER_SEC,
                         usec % USEC_PER_SEC / (USEC_PER_SEC / 10));
}

void roam_format_clock(uint64_t usec, char *buf, size_t size)
{
        time_t t = (time_t)(usec / USEC_PER_SEC);
        struct tm tm;

        if (!localtime_r(&t, &tm) || strftime(buf, size, "%H:%M:%S", &tm) == 0)
                snprintf(buf, size, "??:??:??");
}

uint64_t roam_now(void)
{
        const char *e = getenv("ROAM_TEST_NOW");
        struct timespec ts;

        if (e && *e) {
                char *end;
                unsigned long long v;

                errno = 0;
                v = strtoull(e, &end, 10);
                if (errno == 0 && end != e && !*end)
                        return v;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t)ts.tv_sec * USEC_PER_SEC + (uint64_t)ts.tv_nsec / 1000;
}
