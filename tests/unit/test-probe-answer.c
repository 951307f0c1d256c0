/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A probe round's answers, as a check server, a portal, a proxy or a broken path give them,
 * through the code roamd-probe.c runs on them (roamd-probe-answer.c, then the decision table
 * of roamd-verdict.c): each class of network to its verdict, reason and portal URL. */
#include <arpa/inet.h>

#include "roam-macro.h"
#include "roamd-probe-answer.h"
#include "test.h"

#define CHECK_URL  "http://check.example/check_network_status.txt"
#define CHECKS_URL "https://check.example/check_network_status.txt"
#define GARDEN_URL "http://garden.example/check_network_status.txt"
#define LARGE_URL  "http://check.example/large"
#define CHECK_BODY "NetworkManager is online\n"
#define CHECK_ADDR "198.51.100.10"

/* One fetch's answer; all zero: the expected answer of the check server. */
typedef struct Fetched {
        bool not_run; /* not part of the round (no GardenURL=, LargeURL=); HTTP and HTTPS always are
                       */
        ProbeTransfer transfer; /* 0: answered */
        long status;            /* 0: 200 */
        const char *location;
        const char *body; /* NULL: the expected body */
        size_t body_size; /* 0: strlen(body) */
        bool age;         /* an Age header: a cache answered */
        bool connected;   /* (large) the connection was made */
} Fetched;

typedef struct Row {
        const char *name;
        bool down;             /* no carrier */
        DnsOutcome dns;        /* the link's resolver: 0 (NOT_RUN) an answer */
        const char *addr;      /* what it answered for the check host; NULL the right one */
        DnsOutcome garden_dns; /* 0 OK */
        Fetched http, https, garden, large;
        bool ping; /* the gateway answers its ping */
        CapportOutcome capport;
        Verdict verdict;
        VerdictReason reason;
        const char *portal; /* the portal URL published with the verdict */
} Row;

#define ANSWER(s, ...)                                                                             \
        {                                                                                          \
                .status = s, __VA_ARGS__                                                           \
        }
#define FAILS                                                                                      \
        {                                                                                          \
                .transfer = PROBE_TRANSFER_FAILED                                                  \
        }
#define TIMES_OUT                                                                                  \
        {                                                                                          \
                .transfer = PROBE_TRANSFER_TIMEOUT                                                 \
        }
#define BAD_CERT                                                                                   \
        {                                                                                          \
                .transfer = PROBE_TRANSFER_CERTIFICATE                                             \
        }
#define NOT_RUN                                                                                    \
        {                                                                                          \
                .not_run = true                                                                    \
        }
#define LARGE_OK                                                                                   \
        {                                                                                          \
                .body_size = PROBE_LARGE_BYTES * 2, .connected = true                              \
        }
#define V(v, r) .verdict = VERDICT_##v, .reason = REASON_##r

static const char login_page[] = "<html><body><form action=\"/login\">Log in</form></body></html>";

static const Row rows[] = {
    {"open network", .garden = NOT_RUN, .large = NOT_RUN, V(ONLINE, OK)},
    {"open network, garden and large probes too", .large = LARGE_OK, V(ONLINE, OK)},
    {"portal: 302 to its login page",
     .http = ANSWER(302, .location = "http://portal.example/login?from=check", .body = ""),
     .https = FAILS, .garden = NOT_RUN, .large = NOT_RUN, V(PORTAL, PORTAL_REDIRECT),
     .portal = "http://portal.example/login?from=check"},
    {"portal: 302 with a relative Location", .http = ANSWER(302, .location = "/login", .body = ""),
     .https = FAILS, .garden = NOT_RUN, .large = NOT_RUN, V(PORTAL, PORTAL_REDIRECT),
     .portal = "http://check.example/login"},
    {"portal: 200 with its login page instead of the check's body",
     .http = ANSWER(200, .body = login_page), .https = TIMES_OUT, .garden = NOT_RUN,
     .large = NOT_RUN, V(PORTAL, PORTAL_CONTENT), .portal = CHECK_URL},
    {"portal: 511 Network Authentication Required", .http = ANSWER(511, .body = login_page),
     .https = FAILS, .garden = NOT_RUN, .large = NOT_RUN, V(PORTAL, PORTAL_CONTENT),
     .portal = CHECK_URL},
    {"DNS hijack: the check host resolves to the portal", .addr = "192.0.2.1",
     .http = ANSWER(200, .body = login_page), .https = FAILS, .garden = NOT_RUN, .large = NOT_RUN,
     V(PORTAL, PORTAL_DNS), .portal = CHECK_URL},
    {"HTTPS blocked, HTTP passes", .https = FAILS, .garden = NOT_RUN, .large = NOT_RUN,
     V(PARTIAL, HTTPS_FAILED)},
    {"partial: HTTPS never answers", .https = TIMES_OUT, .garden = NOT_RUN, .large = NOT_RUN,
     V(PARTIAL, HTTPS_FAILED)},
    {"partial: HTTPS answers something else", .https = ANSWER(403, .body = "forbidden"),
     .garden = NOT_RUN, .large = NOT_RUN, V(PARTIAL, HTTPS_FAILED)},
    {"local: DNS silent, the gateway answers", .dns = DNS_OUTCOME_TIMEOUT, .garden = NOT_RUN,
     .large = NOT_RUN, .ping = true, V(LOCAL, DNS_FAILED)},
    {"local: DNS refuses (a neighbour answered) and nothing pings", .dns = DNS_OUTCOME_FAILED,
     .garden = NOT_RUN, .large = NOT_RUN, V(LOCAL, DNS_FAILED)},
    {"local: the check server refuses, the gateway answers", .http = FAILS, .https = FAILS,
     .garden = NOT_RUN, .large = NOT_RUN, .ping = true, V(LOCAL, HTTP_FAILED)},
    {"offline: nothing answers, not even the gateway", .dns = DNS_OUTCOME_TIMEOUT,
     .garden = NOT_RUN, .large = NOT_RUN, V(OFFLINE, GATEWAY_UNREACHABLE)},
    {"offline: no carrier", .down = true, .garden = NOT_RUN, .large = NOT_RUN,
     V(OFFLINE, NO_CARRIER)},
    {"walled garden: the check passes, another host is redirected",
     .garden = ANSWER(302, .location = "http://portal.example/pay", .body = ""), .large = NOT_RUN,
     V(PORTAL, WALLED_GARDEN), .portal = "http://portal.example/pay"},
    {"walled garden: another host's name does not resolve", .garden_dns = DNS_OUTCOME_FAILED,
     .large = NOT_RUN, V(PORTAL, WALLED_GARDEN)},
    {"walled garden: another host refuses", .garden = FAILS, .large = NOT_RUN,
     V(PORTAL, WALLED_GARDEN)},
    {"TLS-intercepting portal: HTTP redirected, HTTPS with its own certificate",
     .http = ANSWER(302, .location = "http://portal.example/", .body = ""), .https = BAD_CERT,
     .garden = NOT_RUN, .large = NOT_RUN, V(PORTAL, PORTAL_CERTIFICATE),
     .portal = "http://portal.example/"},
    {"TLS-intercepting portal: HTTP silent, HTTPS with its own certificate", .http = TIMES_OUT,
     .https = BAD_CERT, .garden = NOT_RUN, .large = NOT_RUN, V(PORTAL, PORTAL_CERTIFICATE)},
    {"a bad certificate while plain HTTP reached the check server", .https = BAD_CERT,
     .garden = NOT_RUN, .large = NOT_RUN, V(PARTIAL, HTTPS_FAILED)},
    {"caching proxy answers HTTP from its store, HTTPS blocked", .http = ANSWER(200, .age = true),
     .https = FAILS, .garden = NOT_RUN, .large = NOT_RUN, V(PARTIAL, HTTP_CACHED)},
    {"caching proxy answers HTTP from its store, HTTPS works", .http = ANSWER(200, .age = true),
     .garden = NOT_RUN, .large = NOT_RUN, V(ONLINE, OK)},
    {"a proxy whose upstream is gone (502): no portal spoke",
     .http = ANSWER(502, .body = "Bad Gateway"), .https = FAILS, .garden = NOT_RUN,
     .large = NOT_RUN, .ping = true, V(LOCAL, HTTP_FAILED)},
    {"MTU black hole: small answers pass, the large transfer stalls",
     .large = {.transfer = PROBE_TRANSFER_TIMEOUT, .body_size = 300, .connected = true},
     .garden = NOT_RUN, V(PARTIAL, MTU)},
    {"a slow large transfer that brought full-size segments is no black hole",
     .large = {.transfer = PROBE_TRANSFER_TIMEOUT, .body_size = 4000, .connected = true},
     .garden = NOT_RUN, V(ONLINE, OK)},
    {"a large transfer that never connected is no black hole",
     .large = {.transfer = PROBE_TRANSFER_TIMEOUT}, .garden = NOT_RUN, V(ONLINE, OK)},
    {"RFC 8908 API says captive, whatever the probes saw", .capport = CAPPORT_OUTCOME_CAPTIVE,
     .garden = NOT_RUN, .large = NOT_RUN, V(PORTAL, CAPPORT)},
};

static ProbeFetchResult fetch(const Row *row, const ProbeConfig *c, FetchKind kind,
                              const Fetched *a, char **portal)
{
        /* (0 in a row, DNS_OUTCOME_NOT_RUN, stands for an answer) */
        DnsOutcome dns = kind == FETCH_GARDEN ? row->garden_dns : row->dns;
        IpAddr addr = {.family = AF_INET};
        const char *url = kind == FETCH_HTTP     ? CHECK_URL
                          : kind == FETCH_HTTPS  ? CHECKS_URL
                          : kind == FETCH_GARDEN ? GARDEN_URL
                                                 : LARGE_URL;
        ProbeFetchResult r = {};

        *portal = NULL;
        if (a->not_run)
                return r;
        if (dns == DNS_OUTCOME_NOT_RUN)
                dns = DNS_OUTCOME_OK;
        snprintf(addr.text, sizeof(addr.text), "%s",
                 row->addr && kind != FETCH_GARDEN ? row->addr : CHECK_ADDR);
        r.done = true;
        r.dns = probe_dns_outcome(c, kind, dns, &addr, dns == DNS_OUTCOME_OK ? 1 : 0);
        if (dns != DNS_OUTCOME_OK) /* no address: no transfer */
                return r;
        ProbeAnswer pa = {
            .kind = kind,
            .transfer = a->transfer,
            .http =
                {
                    .status = a->status ? a->status : 200,
                    .location = a->location,
                    .body = a->body ? a->body : CHECK_BODY,
                    .url = url,
                },
            .age_header = a->age,
        };
        pa.http.body_size = a->body_size ? a->body_size : strlen(pa.http.body);
        HttpExpect e = {.status = c->expect_status, .body = c->expect_body};
        r.outcome = probe_answer_outcome(&pa, &e, portal);
        return r;
}

/* What roamd-probe.c does with a family's fetches once they ended, and the verdict it
 * publishes with its portal URL (family_publish()). */
static VerdictResult drive(const Row *row, char **ret_portal)
{
        IpAddr expect = {.family = AF_INET, .text = CHECK_ADDR};
        ProbeConfig c = {
            .expect_status = 200,
            .expect_body = (char *)CHECK_BODY,
            .expect_addrs = &expect,
            .n_expect_addrs = 1,
        };
        const Fetched *a[FETCH_CAPPORT] = {&row->http, &row->https, &row->garden, &row->large};
        char *portal[FETCH_CAPPORT] = {};
        ProbeFetchResult r[FETCH_CAPPORT];
        ProbeFacts f = {
            .carrier = !row->down,
            .has_address = true,
            .has_usable = true,
            .has_route = true,
        };
        VerdictResult v;

        for (int k = 0; k < FETCH_CAPPORT; k++)
                r[k] = fetch(row, &c, (FetchKind)k, a[k], &portal[k]);
        if (!row->large.not_run && row->large.transfer == PROBE_TRANSFER_TIMEOUT)
                f.large_stalled = probe_large_stalled(row->large.connected, row->large.body_size);
        probe_facts_from_fetches(&f, r);
        f.gateway_answers = probe_facts_answered(&f) ? true : probe_gateway_answers(&f, row->ping);
        f.capport = row->capport;
        v = verdict_decide(&f);
        *ret_portal = NULL;
        if (v.reason == REASON_WALLED_GARDEN)
                *ret_portal = TAKE_PTR(portal[FETCH_GARDEN]);
        else if (v.verdict == VERDICT_PORTAL && v.reason != REASON_CAPPORT)
                *ret_portal = TAKE_PTR(portal[FETCH_HTTP]);
        for (int k = 0; k < FETCH_CAPPORT; k++)
                free(portal[k]);
        return v;
}

TEST(probe_answers_to_verdicts)
{
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char *portal = NULL;
                VerdictResult v = drive(&rows[i], &portal);

                if (v.verdict != rows[i].verdict || v.reason != rows[i].reason ||
                    !streq_ptr(portal, rows[i].portal)) {
                        fprintf(stderr,
                                "  row %zu (%s): %s/%s portal %s, expected %s/%s portal %s\n", i,
                                rows[i].name, verdict_to_string(v.verdict),
                                verdict_reason_to_string(v.reason), portal ? portal : "(none)",
                                verdict_to_string(rows[i].verdict),
                                verdict_reason_to_string(rows[i].reason),
                                rows[i].portal ? rows[i].portal : "(none)");
                        free(portal);
                        TEST_FAIL("row %zu", i);
                }
                free(portal);
        }
}

TEST(probe_answer_outcomes)
{
        HttpExpect e = {.status = 204};
        char *portal = NULL;
        ProbeAnswer a = {.kind = FETCH_HTTP, .http = {.status = 204, .body = "", .url = CHECK_URL}};

        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_OK);
        ASSERT_TRUE(!portal);
        /* Age on HTTPS says nothing: TLS is end to end */
        a.age_header = true;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_CACHED);
        a.kind = FETCH_HTTPS;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_OK);
        /* a 504 through HTTPS is whoever holds the certificate speaking */
        a.http.status = 504;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_WRONG);
        free(portal);
        portal = NULL;
        a.kind = FETCH_GARDEN;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_FAILED);
        /* a bad certificate is evidence only on the HTTPS probe */
        a.transfer = PROBE_TRANSFER_CERTIFICATE;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_FAILED);
        a.kind = FETCH_HTTPS;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_CERTIFICATE);
        /* the large transfer: its size counts, not its body */
        a = (ProbeAnswer){.kind = FETCH_LARGE, .http = {.status = 200, .body = "x"}};
        a.http.body_size = PROBE_LARGE_BYTES - 1;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_WRONG);
        a.http.body_size = PROBE_LARGE_BYTES;
        ASSERT_EQ(probe_answer_outcome(&a, &e, &portal), HTTP_OUTCOME_OK);
        ASSERT_TRUE(!portal);
}

TEST(probe_dns_outcomes)
{
        IpAddr expect[2] = {{AF_INET, CHECK_ADDR}, {AF_INET6, "2001:db8::10"}};
        IpAddr got[2] = {{AF_INET6, "2001:db8::66"}, {AF_INET6, "2001:db8::10"}};
        ProbeConfig c = {.expect_addrs = expect, .n_expect_addrs = 2};
        ProbeConfig any = {};

        /* one expected address among the answers is enough */
        ASSERT_EQ(probe_dns_outcome(&c, FETCH_HTTP, DNS_OUTCOME_OK, got, 2), DNS_OUTCOME_OK);
        ASSERT_EQ(probe_dns_outcome(&c, FETCH_HTTPS, DNS_OUTCOME_OK, got, 1), DNS_OUTCOME_LIED);
        /* the same text in another family is another address */
        IpAddr v4[1] = {{AF_INET, "2001:db8::10"}};
        ASSERT_EQ(probe_dns_outcome(&c, FETCH_HTTP, DNS_OUTCOME_OK, v4, 1), DNS_OUTCOME_LIED);
        /* the garden and the large transfer are other hosts */
        ASSERT_EQ(probe_dns_outcome(&c, FETCH_GARDEN, DNS_OUTCOME_OK, got, 1), DNS_OUTCOME_OK);
        ASSERT_EQ(probe_dns_outcome(&c, FETCH_LARGE, DNS_OUTCOME_OK, got, 1), DNS_OUTCOME_OK);
        ASSERT_EQ(probe_dns_outcome(&any, FETCH_HTTP, DNS_OUTCOME_OK, got, 1), DNS_OUTCOME_OK);
        ASSERT_EQ(probe_dns_outcome(&c, FETCH_HTTP, DNS_OUTCOME_TIMEOUT, NULL, 0),
                  DNS_OUTCOME_TIMEOUT);
        /* the HTTPS probe's lookup stands in only when HTTP's found nothing */
        ASSERT_EQ(probe_family_dns(DNS_OUTCOME_TIMEOUT, DNS_OUTCOME_LIED), DNS_OUTCOME_LIED);
        ASSERT_EQ(probe_family_dns(DNS_OUTCOME_OK, DNS_OUTCOME_LIED), DNS_OUTCOME_OK);
        ASSERT_EQ(probe_family_dns(DNS_OUTCOME_FAILED, DNS_OUTCOME_TIMEOUT), DNS_OUTCOME_FAILED);
}
