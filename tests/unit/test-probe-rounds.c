/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The prober's rounds and their timing (roamd-probe.c, with the real roamd-link.c): a link
 * made with link_new()/link_update() as the links registry makes it, the network faked at
 * link time (fake-fetch.c: DNS, transfers, the gateway ping answered by the test), the probe
 * timer caught and fired on demand (fake-timers.c), so the back-off, the re-check, a trigger
 * and a link change are checked without any time passing. */
#include <sys/socket.h>

#include "fake-fetch.h"
#include "fake-timers.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-link.h"
#include "roamd-probe.h"
#include "test.h"

#define HTTP_URL  "http://check.example/status.txt"
#define HTTPS_URL "https://check.example/status.txt"
#define ONLINE    "NetworkManager is online\n"

static sd_event *event;
static Config *config;
static Core core;
static Link *eth;
static bool no_dns; /* the next updates carry no DNS server */

static void setup(const char *probe_conf)
{
        _cleanup_free_ char *text = NULL;

        fake_fetch_reset();
        fake_timers_reset();
        ASSERT_OK(sd_event_new(&event));
        ASSERT_TRUE(asprintf(&text,
                             "[Bearers]\neth0=ethernet\n"
                             "[Probe]\nHttpURL=" HTTP_URL "\nHttpsURL=" HTTPS_URL "\n%s",
                             probe_conf) >= 0);
        ASSERT_OK(config_parse_string("roamd.conf", text, strlen(text), &config));
        core = (Core){.event = event, .config = config};
        ASSERT_OK(link_new(&core, 3, &eth));
}

static void teardown(void)
{
        eth->prober = prober_free(eth->prober); /* the registry's, before the link */
        eth = link_free(eth);
        fake_fetch_reset();
        fake_timers_reset();
        config = config_free(config);
        event = sd_event_unref(event);
}

/* What netlink would gather for eth0: carrier, an IPv4 address (and an IPv6 one), a gateway
 * of each family, a DNS server. */
static void update6_scope(const char *addr, const char *addr6, int scope6, bool carrier)
{
        size_t n = addr6 ? 2 : 1;
        unsigned families;
        LinkInfo i = {.name = strdup("eth0"),
                      .oper_state = strdup(carrier ? "up" : "down"),
                      .mtu = 1500,
                      .admin_up = true,
                      .carrier = carrier};

        ASSERT_TRUE(i.name && i.oper_state);
        i.addrs = calloc(n, sizeof(LinkAddress));
        i.gateways = calloc(n, sizeof(IpAddr));
        i.dns = calloc(1, sizeof(IpAddr));
        ASSERT_TRUE(i.addrs && i.gateways && i.dns);
        i.addrs[0] =
            (LinkAddress){.addr = {.family = AF_INET}, .prefixlen = 24, .scope = ADDR_SCOPE_GLOBAL};
        snprintf(i.addrs[0].addr.text, sizeof(i.addrs[0].addr.text), "%s", addr);
        i.n_addrs = 1;
        i.gateways[0] = (IpAddr){AF_INET, "192.0.2.1"};
        i.n_gateways = 1;
        i.dns[0] = (IpAddr){AF_INET, "192.0.2.53"};
        i.n_dns = no_dns ? 0 : 1;
        if (addr6) {
                i.addrs[1] =
                    (LinkAddress){.addr = {.family = AF_INET6}, .prefixlen = 64, .scope = scope6};
                snprintf(i.addrs[1].addr.text, sizeof(i.addrs[1].addr.text), "%s", addr6);
                i.n_addrs = 2;
                if (scope6 == ADDR_SCOPE_GLOBAL) { /* (a link-local address comes alone) */
                        i.gateways[1] = (IpAddr){AF_INET6, "fe80::1"};
                        i.n_gateways = 2;
                }
        }
        ASSERT_OK(link_update(eth, &i, false, &families));
        if (families) /* what the registry does with them */
                ASSERT_OK(link_reprobe_families(eth, families));
        fake_loop_run(event);
}

static void update6(const char *addr, const char *addr6, bool carrier)
{
        update6_scope(addr, addr6, ADDR_SCOPE_GLOBAL, carrier);
}

static void update(const char *addr, bool carrier)
{
        update6(addr, NULL, carrier);
}

static FakeTimer *probe_timer(void)
{
        ASSERT_TRUE(eth->prober);
        return fake_timer_of(eth->prober);
}

/* A round where the link's DNS does not answer (the gateway does): local, DNS failed. */
static void round_fails(void)
{
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1); /* (HTTPS shares HTTP's lookup) */
        ASSERT_TRUE(prober_round_running(eth->prober));
        ASSERT_TRUE(!fake_timer_armed(probe_timer()));
        fake_fetch_answer_dns(AF_INET, DNS_OUTCOME_TIMEOUT, NULL);
        fake_fetch_answer_ping(true);
        ASSERT_TRUE(!prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_LOCAL);
        ASSERT_EQ(eth->verdict4.reason, REASON_DNS_FAILED);
}

/* A round where the check server answers both probes as expected: online. */
static void round_online(void)
{
        ASSERT_TRUE(prober_round_running(eth->prober));
        if (fake_fetch_pending_lookups(AF_INET) > 0)
                fake_fetch_answer_dns(AF_INET, DNS_OUTCOME_OK, "198.51.100.80");
        ASSERT_EQ(fake_fetch_pending_transfers(), 2);
        ASSERT_EQ(fake_fetch_answer_http(HTTP_URL, CURLE_OK, 200, ONLINE), 1);
        ASSERT_EQ(fake_fetch_answer_http(HTTPS_URL, CURLE_OK, 200, ONLINE), 1);
        ASSERT_TRUE(!prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_ONLINE);
        ASSERT_EQ(eth->verdict.verdict, VERDICT_ONLINE);
}

/* Not online: the next round after BackoffMin, doubling to BackoffMax, each fired timer a new
 * round (one lookup each); the timer is off while a round runs. */
TEST(probe_backoff_doubles_to_the_cap)
{
        static const uint64_t want[] = {1, 2, 4, 8, 8, 8};

        setup("BackoffMin=1s\nBackoffMax=8s\n");
        update("192.0.2.5", true);
        ASSERT_EQ(fake_fetch.lookups, 1); /* the new link's first round started at once */
        for (size_t k = 0; k < ELEMENTSOF(want); k++) {
                round_fails();
                ASSERT_TRUE(fake_timer_armed(probe_timer()));
                ASSERT_EQ(fake_timer_delay(probe_timer()), want[k] * USEC_PER_SEC);
                ASSERT_EQ(fake_fetch.lookups, k + 1); /* no round before the timer */
                fake_timer_fire(event, probe_timer());
                ASSERT_EQ(fake_fetch.lookups, k + 2);
        }
        ASSERT_EQ(fake_fetch.pings, ELEMENTSOF(want));
        teardown();
}

/* Online: the re-check after RecheckInterval, the back-off forgotten; the first failure after
 * it waits BackoffMin again, not where the back-off had got to. */
TEST(probe_online_rechecks_and_backoff_restarts)
{
        setup("BackoffMin=1s\nBackoffMax=60s\nRecheckInterval=300s\n");
        update("192.0.2.5", true);
        round_fails();
        fake_timer_fire(event, probe_timer());
        round_fails();
        ASSERT_EQ(fake_timer_delay(probe_timer()), 2 * USEC_PER_SEC);
        fake_timer_fire(event, probe_timer());
        round_online();
        ASSERT_TRUE(fake_timer_armed(probe_timer()));
        ASSERT_EQ(fake_timer_delay(probe_timer()), 300 * USEC_PER_SEC);
        /* the re-check: the transfers go to last round's address while DNS confirms it */
        fake_timer_fire(event, probe_timer());
        ASSERT_TRUE(prober_round_running(eth->prober));
        ASSERT_EQ(fake_fetch_pending_transfers(), 2);
        ASSERT_EQ(fake_fetch_answer_http(HTTP_URL, CURLE_COULDNT_CONNECT, 0, NULL), 1);
        ASSERT_EQ(fake_fetch_answer_http(HTTPS_URL, CURLE_COULDNT_CONNECT, 0, NULL), 1);
        ASSERT_TRUE(prober_round_running(eth->prober)); /* held until DNS confirms */
        fake_fetch_answer_dns(AF_INET, DNS_OUTCOME_OK, "198.51.100.80");
        ASSERT_EQ(fake_fetch.pings, 3);
        fake_fetch_answer_ping(true);
        ASSERT_TRUE(!prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_LOCAL);
        ASSERT_EQ(eth->verdict4.reason, REASON_HTTP_FAILED);
        ASSERT_EQ(fake_timer_delay(probe_timer()), 1 * USEC_PER_SEC);
        teardown();
}

/* A trigger (a portal login, Reprobe()) starts a round now, not when the timer says, and
 * the back-off after it starts over. */
TEST(probe_trigger_starts_round_now)
{
        unsigned fired;

        setup("BackoffMin=1s\nBackoffMax=60s\n");
        update("192.0.2.5", true);
        for (int k = 0; k < 3; k++) {
                round_fails();
                fake_timer_fire(event, probe_timer());
        }
        round_fails();
        ASSERT_EQ(fake_timer_delay(probe_timer()), 8 * USEC_PER_SEC);
        fired = fake_timer_fired(probe_timer());
        ASSERT_OK(link_reprobe(eth));
        ASSERT_EQ(fake_fetch.lookups, 5);
        ASSERT_TRUE(!fake_timer_armed(probe_timer()));
        ASSERT_EQ(fake_timer_fired(probe_timer()), fired);
        round_fails();
        ASSERT_EQ(fake_timer_delay(probe_timer()), 1 * USEC_PER_SEC);
        /* a trigger while a round runs: that round is cancelled, one new one runs */
        ASSERT_OK(link_reprobe(eth));
        ASSERT_OK(link_reprobe(eth));
        ASSERT_EQ(fake_fetch.cancelled, 1);
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        round_online();
        teardown();
}

/* The link changes while a round runs (a new address): what the round asked is cancelled,
 * its answers never count, the family says `checking` and a new round decides. */
TEST(probe_link_change_cancels_round)
{
        setup("");
        update("192.0.2.5", true);
        round_online();
        fake_timer_fire(event, probe_timer());
        /* the re-check's transfers went out to the known address; its lookup runs */
        ASSERT_EQ(fake_fetch_pending_transfers(), 2);
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        update("192.0.2.6", true);
        ASSERT_EQ(fake_fetch.cancelled, 1);
        ASSERT_EQ(fake_fetch.removed, 2);
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_CHECKING);
        ASSERT_TRUE(prober_round_running(eth->prober));
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        ASSERT_EQ(fake_fetch_pending_transfers(), 2);
        /* the new round's answers decide */
        fake_fetch_answer_dns(AF_INET, DNS_OUTCOME_TIMEOUT, NULL);
        ASSERT_EQ(fake_fetch_answer_http(HTTP_URL, CURLE_OK, 200, ONLINE), 0); /* undone */
        ASSERT_EQ(fake_fetch.removed, 4);
        fake_fetch_answer_ping(false);
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_OFFLINE);
        ASSERT_EQ(eth->verdict4.reason, REASON_GATEWAY_UNREACHABLE);
        ASSERT_EQ(fake_timer_delay(probe_timer()), 1 * USEC_PER_SEC);
        /* the carrier goes: nothing is asked of the network, the verdict says why at once */
        fake_timer_fire(event, probe_timer());
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        update("192.0.2.6", false);
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 0);
        ASSERT_EQ(fake_fetch.cancelled, 2);
        ASSERT_TRUE(!prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_OFFLINE);
        ASSERT_EQ(eth->verdict4.reason, REASON_NO_CARRIER);
        teardown();
}

/* IPv4 online, IPv6 failing: the timer's rounds probe IPv6 alone with its back-off, IPv4 is
 * left alone until its own re-check is due, and the back-off is cut short to meet it (the
 * clock is the fake one: only the fired timers move it). */
TEST(probe_ipv6_retries_keep_ipv4_recheck)
{
        static const uint64_t want[] = {1, 2, 4, 3}; /* the last: the re-check at 10 s */

        setup("BackoffMin=1s\nBackoffMax=8s\nRecheckInterval=10s\n");
        update6("192.0.2.5", "2001:db8::5", true);
        /* the check host and, beside each IPv6 round, ipv4only.arpa (NAT64) */
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET6), 2);
        fake_fetch_answer_dns(AF_INET6, DNS_OUTCOME_TIMEOUT, NULL);
        fake_fetch_answer_ping(true);
        round_online();
        ASSERT_EQ(eth->verdict6.verdict, VERDICT_LOCAL);
        for (size_t k = 0; k < ELEMENTSOF(want); k++) {
                ASSERT_EQ(fake_timer_delay(probe_timer()), want[k] * USEC_PER_SEC);
                fake_timer_fire(event, probe_timer());
                if (k + 1 == ELEMENTSOF(want))
                        break;
                /* IPv6 alone: no IPv4 lookup or transfer, IPv4 stays online */
                ASSERT_EQ(fake_fetch_pending_lookups(AF_INET6), 2);
                ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 0);
                ASSERT_EQ(fake_fetch_pending_transfers(), 0);
                fake_fetch_answer_dns(AF_INET6, DNS_OUTCOME_TIMEOUT, NULL);
                fake_fetch_answer_ping(true);
                ASSERT_EQ(eth->verdict4.verdict, VERDICT_ONLINE);
        }
        /* 10 s after IPv4 was found online: both families */
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET6), 2);
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        ASSERT_EQ(fake_fetch_pending_transfers(), 2);
        teardown();
}

/* IPv4 online; then the link gets its IPv6 link-local address (IPv6's facts changed, so IPv6
 * is looked at again): IPv4's re-check stays where it was, not a full interval later (issue
 * 41 §2: the families' timers are independent). */
TEST(probe_ipv6_link_local_keeps_ipv4_recheck)
{
        setup("RecheckInterval=10s\n");
        update("192.0.2.5", true);
        round_online();
        ASSERT_EQ(fake_timer_delay(probe_timer()), 10 * USEC_PER_SEC);
        fake_clock_advance(4 * USEC_PER_SEC);
        update6_scope("192.0.2.5", "fe80::5", ADDR_SCOPE_LINK, true);
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_ONLINE);
        ASSERT_TRUE(fake_timer_armed(probe_timer()));
        ASSERT_EQ(fake_timer_delay(probe_timer()), 6 * USEC_PER_SEC);
        /* then both families' round, as due */
        fake_timer_fire(event, probe_timer());
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        teardown();
}

/* An address and a route before any DNS server (an RA's RDNSS comes a moment later): the
 * round waits for a server instead of publishing `local (dns-failed)`; the server's arrival
 * starts the round that decides. Without one, the lookups fail after DNSTimeout= (issue 41
 * §2: a verdict only from a round that had what it needed). */
TEST(probe_waits_for_a_dns_server)
{
        setup("DNSTimeout=5s\n");
        no_dns = true;
        update("192.0.2.5", true);
        ASSERT_TRUE(prober_round_running(eth->prober));
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 0);
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_CHECKING);
        ASSERT_TRUE(fake_timer_armed(fake_timer_of(prober_family(eth->prober, AF_INET))));
        ASSERT_EQ(fake_timer_delay(fake_timer_of(prober_family(eth->prober, AF_INET))),
                  5 * USEC_PER_SEC);
        no_dns = false;
        update("192.0.2.5", true);
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_CHECKING);
        round_online();

        /* the server goes; a new round finds none and, after the wait, fails */
        no_dns = true;
        update("192.0.2.5", true);
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 0);
        ASSERT_TRUE(prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_CHECKING);
        fake_timer_fire(event, fake_timer_of(prober_family(eth->prober, AF_INET)));
        /* (what c-ares answers a lookup through no server) */
        ASSERT_EQ(fake_fetch_pending_lookups(AF_INET), 1);
        fake_fetch_answer_dns(AF_INET, DNS_OUTCOME_FAILED, NULL);
        fake_fetch_answer_ping(true);
        ASSERT_TRUE(!prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict4.verdict, VERDICT_LOCAL);
        ASSERT_EQ(eth->verdict4.reason, REASON_DNS_FAILED);
        no_dns = false;
        teardown();
}

/* The link's network, a fact of the link (Link.NetworkId). */
static void set_network(const char *id)
{
        snprintf(eth->facts.network_id, sizeof(eth->facts.network_id), "%s", id);
}

/* A round where the check page is not the one expected and HTTPS is refused: a portal. */
static void round_portal(void)
{
        ASSERT_TRUE(prober_round_running(eth->prober));
        if (fake_fetch_pending_lookups(AF_INET) > 0)
                fake_fetch_answer_dns(AF_INET, DNS_OUTCOME_OK, "198.51.100.80");
        /* (a prefix of the expected page: the body is cut at the first byte that differs) */
        ASSERT_EQ(fake_fetch_answer_http(HTTP_URL, CURLE_OK, 200, "Network"), 1);
        ASSERT_EQ(fake_fetch_answer_http(HTTPS_URL, CURLE_COULDNT_CONNECT, 0, NULL), 1);
        ASSERT_TRUE(!prober_round_running(eth->prober));
        ASSERT_EQ(eth->verdict.verdict, VERDICT_PORTAL);
}

static uint64_t next_round_s(void)
{
        ASSERT_TRUE(fake_timer_armed(probe_timer()));
        return fake_timer_delay(probe_timer()) / USEC_PER_SEC;
}

/* Issue 45 §4: on a network that had a portal, an online link is re-checked 30 s into the
 * session, doubling; once a session's length is known, the next is re-checked when it would
 * end. A network that never had one (or another network than the portal's) keeps
 * RecheckInterval: no more rounds than before. */
TEST(probe_recheck_sooner_after_a_portal)
{
        setup("BackoffMin=1s\nBackoffMax=8s\nRecheckInterval=300s\n");
        set_network("ethernet:gw=02:00:00:00:00:01");
        update("192.0.2.5", true);
        round_online();
        ASSERT_EQ(next_round_s(), 300u); /* never a portal here */
        fake_timer_fire(event, probe_timer());
        round_portal();
        ASSERT_EQ(next_round_s(), 1u);
        fake_timer_fire(event, probe_timer());
        round_online(); /* a login: the session begins */
        ASSERT_EQ(next_round_s(), 30u);
        fake_timer_fire(event, probe_timer());
        round_online();
        ASSERT_EQ(next_round_s(), 60u);
        fake_timer_fire(event, probe_timer());
        round_portal(); /* it ended: 90 s after it began, as far as roamd knows */
        fake_timer_fire(event, probe_timer());
        round_online(); /* the next session: re-checked when the last one ended */
        ASSERT_EQ(next_round_s(), 90u);
        fake_timer_fire(event, probe_timer());
        round_online(); /* longer this time: short re-checks again, doubling */
        ASSERT_EQ(next_round_s(), 30u);
        fake_timer_fire(event, probe_timer());
        round_online();
        ASSERT_EQ(next_round_s(), 60u);
        /* another network (same addresses): none of that */
        set_network("ethernet:gw=02:00:00:00:00:02");
        fake_timer_fire(event, probe_timer());
        round_online();
        ASSERT_EQ(next_round_s(), 300u);
        /* no network known: no portal history applies either */
        set_network("");
        fake_timer_fire(event, probe_timer());
        round_online();
        ASSERT_EQ(next_round_s(), 300u);
        set_network("");
        teardown();
}
