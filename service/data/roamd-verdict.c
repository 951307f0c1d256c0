/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roam-words.h"
#include "roamd-verdict.h"

/* The words are the shared table's (shared/roam-words.c), which roam uses too. */
_Static_assert((int)_VERDICT_MAX == (int)_ROAM_VERDICT_MAX &&
                   (int)VERDICT_ONLINE == (int)ROAM_VERDICT_ONLINE &&
                   (int)VERDICT_CHECKING == (int)ROAM_VERDICT_CHECKING,
               "verdicts and their shared words differ");
_Static_assert((int)_REASON_MAX == (int)_ROAM_REASON_MAX && (int)REASON_OK == (int)ROAM_REASON_OK,
               "reasons and their shared words differ");

const char *verdict_to_string(Verdict v)
{
        return roam_verdict_to_string((RoamVerdict)v);
}

Verdict verdict_from_string(const char *s)
{
        return (Verdict)roam_verdict_from_string(s);
}

const char *verdict_reason_to_string(VerdictReason r)
{
        return roam_reason_to_string((RoamReason)r);
}

VerdictReason verdict_reason_from_string(const char *s)
{
        return (VerdictReason)roam_reason_from_string(s);
}

static const char *const dns_outcome_table[_DNS_OUTCOME_MAX] = {
    [DNS_OUTCOME_NOT_RUN] = "not-run", [DNS_OUTCOME_OK] = "ok",
    [DNS_OUTCOME_LIED] = "lied",       [DNS_OUTCOME_FAILED] = "failed",
    [DNS_OUTCOME_TIMEOUT] = "timeout",
};
DEFINE_STRING_TABLE_LOOKUP(dns_outcome, DnsOutcome)

static const char *const http_outcome_table[_HTTP_OUTCOME_MAX] = {
    [HTTP_OUTCOME_NOT_RUN] = "not-run",   [HTTP_OUTCOME_OK] = "ok",
    [HTTP_OUTCOME_REDIRECT] = "redirect", [HTTP_OUTCOME_WRONG] = "wrong",
    [HTTP_OUTCOME_TIMEOUT] = "timeout",   [HTTP_OUTCOME_FAILED] = "failed",
    [HTTP_OUTCOME_CACHED] = "cached",     [HTTP_OUTCOME_CERTIFICATE] = "certificate",
};
DEFINE_STRING_TABLE_LOOKUP(http_outcome, HttpOutcome)

static VerdictResult result(Verdict v, VerdictReason r)
{
        return (VerdictResult){.verdict = v, .reason = r};
}

/* Nothing out there gave a usable answer: whether the link reaches anything at all is up to
 * the gateway. */
static VerdictResult unreachable(const ProbeFacts *f, VerdictReason local_reason)
{
        if (f->gateway_answers)
                return result(VERDICT_LOCAL, local_reason);
        return result(VERDICT_OFFLINE, REASON_GATEWAY_UNREACHABLE);
}

/* The check server answered as expected. Online, unless the probe of a destination outside
 * it ([Probe] GardenURL=) did not get the same answer (a walled garden that lets the check
 * hosts through and nothing else), or the full-size transfer got nothing (an MTU black
 * hole). */
static VerdictResult reached(const ProbeFacts *f)
{
        switch (f->garden) {
        case HTTP_OUTCOME_NOT_RUN:
        case HTTP_OUTCOME_OK:
                return f->large_stalled ? result(VERDICT_PARTIAL, REASON_MTU)
                                        : result(VERDICT_ONLINE, REASON_OK);
        case HTTP_OUTCOME_REDIRECT:
        case HTTP_OUTCOME_WRONG:
        case HTTP_OUTCOME_TIMEOUT:
        case HTTP_OUTCOME_FAILED:
        case HTTP_OUTCOME_CACHED:
        case HTTP_OUTCOME_CERTIFICATE:
        case _HTTP_OUTCOME_MAX:
        case _HTTP_OUTCOME_INVALID:
                break;
        }
        return result(VERDICT_PORTAL, REASON_WALLED_GARDEN);
}

bool verdict_needs_probe(const ProbeFacts *f)
{
        return f->carrier && f->has_address && f->has_usable && f->has_route;
}

VerdictResult verdict_decide(const ProbeFacts *f)
{
        HttpOutcome failed;

        if (!f->carrier)
                return result(VERDICT_OFFLINE, REASON_NO_CARRIER);
        if (!f->has_address)
                return result(VERDICT_OFFLINE, REASON_NO_ADDRESS);
        if (!f->has_usable)
                return result(VERDICT_OFFLINE, REASON_LINK_LOCAL_ONLY);
        if (!f->has_route)
                return result(VERDICT_OFFLINE, REASON_NO_ROUTE);

        /* The network itself says so (RFC 8908): nothing the probes saw can be more certain. */
        if (f->capport == CAPPORT_OUTCOME_CAPTIVE)
                return result(VERDICT_PORTAL, REASON_CAPPORT);
        if (f->dns == DNS_OUTCOME_LIED)
                return result(VERDICT_PORTAL, REASON_PORTAL_DNS);

        if (f->http == HTTP_OUTCOME_REDIRECT || f->http == HTTP_OUTCOME_WRONG) {
                /* A mangled plain-HTTP answer is portal evidence, unless the network's own API
                 * says it is not captive and a certificate-checked HTTPS answer agrees (a
                 * transparent proxy rewriting HTTP, not a portal). */
                if (f->capport == CAPPORT_OUTCOME_NOT_CAPTIVE && f->https == HTTP_OUTCOME_OK)
                        return reached(f);
                /* ... and HTTPS answered by someone without the check host's certificate: the
                 * portal intercepts TLS too (the certificate is the stronger evidence). */
                if (f->https == HTTP_OUTCOME_CERTIFICATE)
                        return result(VERDICT_PORTAL, REASON_PORTAL_CERTIFICATE);
                return result(VERDICT_PORTAL, f->http == HTTP_OUTCOME_REDIRECT
                                                  ? REASON_PORTAL_REDIRECT
                                                  : REASON_PORTAL_CONTENT);
        }

        /* (a TLS handshake with a large certificate chain falls into an MTU black hole too) */
        if (f->http == HTTP_OUTCOME_OK)
                return f->https == HTTP_OUTCOME_OK ? reached(f)
                       : f->large_stalled          ? result(VERDICT_PARTIAL, REASON_MTU)
                                                   : result(VERDICT_PARTIAL, REASON_HTTPS_FAILED);
        /* Plain HTTP may be blocked on purpose; a verified HTTPS answer is the stronger proof. */
        if (f->https == HTTP_OUTCOME_OK)
                return reached(f);
        /* A cache answered for the check server, which HTTPS does not reach: not online, and
         * not "HTTP reaches the check server" either. */
        if (f->http == HTTP_OUTCOME_CACHED)
                return result(VERDICT_PARTIAL, REASON_HTTP_CACHED);
        /* Nothing answered plain HTTP as the check server, and something answered HTTPS in its
         * place without its certificate: an intercepting portal (or a middlebox that wants to
         * be let through first). */
        if (f->https == HTTP_OUTCOME_CERTIFICATE)
                return result(VERDICT_PORTAL, REASON_PORTAL_CERTIFICATE);

        if (f->dns == DNS_OUTCOME_FAILED || f->dns == DNS_OUTCOME_TIMEOUT)
                return unreachable(f, REASON_DNS_FAILED);

        /* When the HTTP probe did not run, what became of the HTTPS one tells the same story. */
        failed = f->http == HTTP_OUTCOME_NOT_RUN ? f->https : f->http;
        switch (failed) {
        case HTTP_OUTCOME_TIMEOUT:
                return unreachable(f, REASON_HTTP_TIMEOUT);
        case HTTP_OUTCOME_FAILED:
        case HTTP_OUTCOME_REDIRECT:
        case HTTP_OUTCOME_WRONG:
        case HTTP_OUTCOME_CACHED:
        case HTTP_OUTCOME_CERTIFICATE:
                /* Only reached for HTTPS (HTTP's are decided above): a server answered, but
                 * not the check server's answer. */
                return unreachable(f, REASON_HTTP_FAILED);
        case HTTP_OUTCOME_NOT_RUN:
        case HTTP_OUTCOME_OK:
        case _HTTP_OUTCOME_MAX:
        case _HTTP_OUTCOME_INVALID:
                break;
        }
        return result(VERDICT_OFFLINE, REASON_NOT_PROBED);
}

bool verdict_decide_early(const ProbeFacts *f, VerdictResult *ret)
{
        bool proven;

        if (!verdict_needs_probe(f))
                return false;
        /* A mangled HTTP answer is no proof while the network's API says "not captive": a
         * transparent proxy may rewrite HTTP, and only the HTTPS answer tells. */
        proven = f->capport == CAPPORT_OUTCOME_CAPTIVE || f->dns == DNS_OUTCOME_LIED ||
                 ((f->http == HTTP_OUTCOME_REDIRECT || f->http == HTTP_OUTCOME_WRONG) &&
                  f->capport != CAPPORT_OUTCOME_NOT_CAPTIVE);
        if (!proven)
                return false;
        *ret = verdict_decide(f);
        return true;
}

static bool verdict_valid(Verdict v)
{
        return v >= 0 && v < _VERDICT_MAX;
}

Verdict verdict_best(Verdict a, Verdict b)
{
        /* The enum is ordered worst to best; an invalid value never wins over a valid one. */
        if (!verdict_valid(b))
                return a;
        if (!verdict_valid(a))
                return b;
        return MAX(a, b);
}
