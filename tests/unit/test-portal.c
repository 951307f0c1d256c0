/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The captive portal's state machine (roamd-portal.c) against the fake core: a hand-made link
 * behind a portal, the registry's neighbours counted (fake-links.c), a real sd-event loop whose
 * timers the test fires with a fake clock (fake-timers.c: nothing waits for the machine's
 * clock), and a fake transport that records each exchange the session asks for
 * and answers it with what a portal would send. */
#include <stdlib.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "fake-links.h"
#include "fake-timers.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-core.h"
#include "roamd-portal.h"
#include "test.h"

#define CHECK_URL "http://check.example/check_network_status.txt"

#define WISPR(x)                                                                                   \
        "<html><head><title>Portal</title></head><body><!--<?xml version=\"1.0\" "                 \
        "encoding=\"UTF-8\"?><WISPAccessGatewayParam>" x "</WISPAccessGatewayParam>-->"            \
        "</body></html>"
#define OFFER                                                                                      \
        WISPR("<Redirect><MessageType>100</MessageType><ResponseCode>0</ResponseCode>"             \
              "<LoginURL>https://portal.example/login</LoginURL></Redirect>")
#define LOGGED_IN                                                                                  \
        WISPR("<AuthenticationReply><MessageType>120</MessageType><ResponseCode>50</ResponseCode>" \
              "<ReplyMessage>Welcome</ReplyMessage>"                                               \
              "<LogoffURL>https://portal.example/logoff</LogoffURL></AuthenticationReply>")
#define REJECTED                                                                                   \
        WISPR(                                                                                     \
            "<AuthenticationReply><MessageType>120</MessageType><ResponseCode>100</ResponseCode>"  \
            "<ReplyMessage>Wrong password</ReplyMessage></AuthenticationReply>")

static bool starts(const char *s, const char *prefix)
{
        return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

#define PENDING                                                                                    \
        WISPR(                                                                                     \
            "<AuthenticationReply><MessageType>120</MessageType><ResponseCode>201</ResponseCode>"  \
            "<LoginResultsURL>https://portal.example/results</LoginResultsURL>"                    \
            "<Delay>1</Delay></AuthenticationReply>")
#define POLL_OK                                                                                    \
        WISPR("<AuthenticationPollReply><MessageType>140</MessageType>"                            \
              "<ResponseCode>50</ResponseCode></AuthenticationPollReply>")

/* ---- the fake transport ---- */

typedef struct Exchange {
        PortalFetch *fetch; /* NULL: stopped */
} Exchange;

static Exchange exchanges[16];
static size_t n_exchanges;

static int fake_start(PortalFetch *f, void **ret_data)
{
        if (n_exchanges >= ELEMENTSOF(exchanges))
                return -ENOBUFS;
        exchanges[n_exchanges].fetch = f;
        *ret_data = &exchanges[n_exchanges++];
        return 0;
}

static void fake_stop(void *data)
{
        ((Exchange *)data)->fetch = NULL;
}

static const PortalTransport fake_transport = {.start = fake_start, .stop = fake_stop};

/* The exchange the session waits for (the last one started, still running). */
static PortalFetch *pending(void)
{
        if (n_exchanges == 0 || !exchanges[n_exchanges - 1].fetch)
                return NULL;
        return exchanges[n_exchanges - 1].fetch;
}

static void answer(long status, const char *redirect, const char *body)
{
        PortalFetch *f = pending();

        if (!f)
                TEST_FAIL("no exchange is waiting for an answer");
        portal_fetch_answered(f, &(PortalAnswer){.result = PORTAL_ANSWER_OK,
                                                 .status = status,
                                                 .redirect = redirect,
                                                 .body = body,
                                                 .body_size = strlen(body)});
}

/* ---- the fake core around one portal ---- */

static sd_event *event;
static Config *config;
static Core core;
static Link wlan;
static Portal *portal;

static void setup(void)
{
        fake_links_reset();
        fake_timers_reset();
        n_exchanges = 0;
        memset(exchanges, 0, sizeof(exchanges));
        ASSERT_OK(sd_event_new(&event));
        ASSERT_OK(config_parse_string("roamd.conf", "", 0, &config));
        /* saved logins in memory only: the file must be root's (roamd-portal-store.c) */
        free(config->portal.credentials_file);
        config->portal.credentials_file = NULL;
        free(config->probe.http_url);
        config->probe.http_url = strdup(CHECK_URL);
        core = (Core){.event = event, .config = config};
        fake_links_add(&wlan, &core, 7, "wlan0", VERDICT_PORTAL, "http://portal.example/login");
        /* the network as the links' facts stage named it: saved logins are filed under it */
        snprintf(wlan.facts.network_id, sizeof(wlan.facts.network_id), "wifi:gw=02:00:00:00:01:01");
        ASSERT_OK(portal_new(&core, &fake_transport, &portal));
        ASSERT_EQ(fake_links.watches, 1);
}

static void teardown(void)
{
        portal = portal_free(portal);
        ASSERT_EQ(fake_links.watches, 0);
        config = config_free(config);
        fake_timers_reset();
        event = sd_event_unref(event);
}

/* Runs what the session scheduled on the loop (deferred work, timers due now). */
static void run_loop(void)
{
        fake_timers_fire_due(event);
}

static PortalSession *detect(void)
{
        PortalSession *s;

        portal_link_changed(portal, &wlan);
        s = portal_get_session(portal, "wlan0");
        ASSERT_TRUE(s);
        ASSERT_EQ(s->state, PORTAL_STATE_DISCOVERING);
        /* the same plain GET the prober made; the portal intercepts it */
        ASSERT_TRUE(pending());
        ASSERT_EQ(portal_fetch_kind(pending()), PORTAL_FETCH_DISCOVER);
        ASSERT_STREQ(portal_fetch_url(pending()), CHECK_URL);
        ASSERT_TRUE(!portal_fetch_form(pending()));
        answer(302, "http://portal.example/login", "");
        /* the redirect is followed by the session itself, one host at a time */
        ASSERT_EQ(portal_fetch_kind(pending()), PORTAL_FETCH_DISCOVER);
        ASSERT_STREQ(portal_fetch_url(pending()), "http://portal.example/login");
        answer(200, NULL, OFFER);
        /* nothing more goes to the portal before the user approves */
        ASSERT_EQ(s->state, PORTAL_STATE_WAITING);
        ASSERT_TRUE(s->wispr);
        ASSERT_TRUE(!pending());
        ASSERT_EQ(n_exchanges, 2);
        return s;
}

TEST(portal_detect_approve_login_ok)
{
        const char *error = NULL;
        PortalSession *s;
        const PortalEntry *e;

        setup();
        s = detect();
        ASSERT_OK(portal_session_approve(s, false, &error));
        ASSERT_EQ(s->state, PORTAL_STATE_NEED_CREDENTIALS);
        ASSERT_TRUE(!pending());
        ASSERT_OK(portal_session_login(s, "alice", strdup("s3cret&x"), true, false, &error));
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGING_IN);
        ASSERT_EQ(portal_fetch_kind(pending()), PORTAL_FETCH_LOGIN);
        ASSERT_STREQ(portal_fetch_url(pending()), "https://portal.example/login");
        /* the form, escaped: the password's & does not start a field */
        ASSERT_TRUE(starts(portal_fetch_form(pending()), "UserName=alice&Password=s3cret%26x&"));
        answer(200, NULL, LOGGED_IN);
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGED_IN);
        ASSERT_STREQ(s->message, "logged in: Welcome");
        ASSERT_STREQ(s->logoff_url, "https://portal.example/logoff");
        /* kept for this network (in memory here: the file would have to be root's) */
        e = portal_store_get(portal->store, s->identity);
        ASSERT_TRUE(e);
        ASSERT_STREQ(e->user, "alice");
        ASSERT_STREQ(e->password, "s3cret&x");
        ASSERT_TRUE(!s->pending_user && !s->pending_password);
        /* a probe round is asked for from the loop, not from inside the handler */
        ASSERT_EQ(fake_links.reprobes, 0);
        run_loop();
        ASSERT_EQ(fake_links.reprobes, 1);
        ASSERT_TRUE(fake_links.bus_changes > 0);
        teardown();
}

/* Fires the session's next timer, which must be due in delay_usec, and returns the exchange
 * it asked for. */
static PortalFetch *wait_for_exchange(uint64_t delay_usec)
{
        FakeTimer *t = fake_timer_next();

        ASSERT_TRUE(t);
        ASSERT_EQ(fake_timer_delay(t), delay_usec);
        fake_timer_fire(event, t);
        return pending();
}

TEST(portal_login_pending_then_polled)
{
        const char *error = NULL;
        PortalSession *s;

        setup();
        s = detect();
        ASSERT_OK(portal_session_login(s, "carol", strdup("pw"), false, false, &error));
        answer(200, NULL, PENDING);
        ASSERT_EQ(s->state, PORTAL_STATE_POLLING);
        ASSERT_STREQ(s->message, "authentication pending, checking again (1 of 10)");
        /* nothing is asked before the portal's delay */
        ASSERT_TRUE(!pending());
        /* the portal's <Delay>1</Delay> */
        ASSERT_TRUE(wait_for_exchange(USEC_PER_SEC));
        ASSERT_EQ(portal_fetch_kind(pending()), PORTAL_FETCH_RESULTS);
        ASSERT_STREQ(portal_fetch_url(pending()), "https://portal.example/results");
        ASSERT_TRUE(!portal_fetch_form(pending()));
        answer(200, NULL, POLL_OK);
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGED_IN);
        /* not asked to save: nothing kept */
        ASSERT_TRUE(!portal_store_get(portal->store, s->identity));
        teardown();
}

TEST(portal_wrong_password_is_rejected_and_not_saved)
{
        const char *error = NULL;
        PortalSession *s;

        setup();
        s = detect();
        ASSERT_OK(portal_session_login(s, "alice", strdup("wrong"), true, false, &error));
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGING_IN);
        answer(200, NULL, REJECTED);
        ASSERT_EQ(s->state, PORTAL_STATE_REJECTED);
        ASSERT_STREQ(s->message, "the network rejected the user name or password (\"Wrong "
                                 "password\"); nothing was saved");
        ASSERT_TRUE(!portal_store_get(portal->store, s->identity));
        ASSERT_TRUE(!s->pending_user && !s->pending_password);
        /* no retry with the same credentials */
        ASSERT_TRUE(!pending());
        run_loop();
        ASSERT_EQ(fake_links.reprobes, 0);
        /* a new try reads the page again first */
        ASSERT_OK(portal_session_login(s, "alice", strdup("right"), false, false, &error));
        ASSERT_EQ(s->state, PORTAL_STATE_DISCOVERING);
        ASSERT_STREQ(portal_fetch_url(pending()), CHECK_URL);
        teardown();
}

/* A login saved earlier with "always log in on this network", for the host it went to and
 * the public key that host had then. */
static void save_login(const char *host, const char *pin)
{
        _cleanup_free_ char *identity = NULL;
        const char *source;

        ASSERT_OK(portal_identity(&wlan, &identity, &source));
        /* (-EROFS: the store is in memory only; the entry is there) */
        (void)portal_store_set(portal->store, identity, "bob", "pw", true);
        (void)portal_store_set_login_host(portal->store, identity, host, pin);
        ASSERT_TRUE(portal_store_get(portal->store, identity));
}

TEST(portal_saved_login_goes_by_itself_once)
{
        PortalSession *s;

        setup();
        save_login("portal.example", "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        portal_link_changed(portal, &wlan);
        s = portal_get_session(portal, "wlan0");
        answer(200, NULL, OFFER);
        /* approved in advance: the saved login goes, pinned to the key it was saved with */
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGING_IN);
        ASSERT_TRUE(starts(portal_fetch_form(pending()), "UserName=bob&Password=pw&"));
        ASSERT_STREQ(portal_fetch_pin(pending()),
                     "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        answer(200, NULL, LOGGED_IN);
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGED_IN);
        /* online, then captive again (the session ran out): once more by itself */
        wlan.verdict = wlan.verdict4 = (VerdictResult){VERDICT_ONLINE, REASON_OK};
        portal_link_changed(portal, &wlan);
        wlan.verdict = wlan.verdict4 = (VerdictResult){VERDICT_PORTAL, REASON_PORTAL_REDIRECT};
        portal_link_changed(portal, &wlan);
        ASSERT_EQ(s->state, PORTAL_STATE_DISCOVERING);
        answer(200, NULL, OFFER);
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGING_IN);
        /* refused now: no storm of retries, the user is asked */
        answer(200, NULL, REJECTED);
        ASSERT_EQ(s->state, PORTAL_STATE_REJECTED);
        ASSERT_TRUE(!pending());
        teardown();
}

TEST(portal_saved_login_only_to_its_host_and_key)
{
        PortalSession *s;

        /* another login host than the one it was saved for: nothing is sent */
        setup();
        save_login("elsewhere.example", "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        portal_link_changed(portal, &wlan);
        s = portal_get_session(portal, "wlan0");
        answer(200, NULL, OFFER);
        ASSERT_EQ(s->state, PORTAL_STATE_NEED_CREDENTIALS);
        ASSERT_TRUE(!pending());
        ASSERT_EQ(n_exchanges, 1);
        teardown();

        /* the login host shows another public key: the transport sent nothing */
        setup();
        save_login("portal.example", "sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
        portal_link_changed(portal, &wlan);
        s = portal_get_session(portal, "wlan0");
        answer(200, NULL, OFFER);
        ASSERT_EQ(s->state, PORTAL_STATE_LOGGING_IN);
        portal_fetch_answered(pending(), &(PortalAnswer){.result = PORTAL_ANSWER_PIN_MISMATCH});
        ASSERT_EQ(s->state, PORTAL_STATE_NEED_CREDENTIALS);
        ASSERT_TRUE(strstr(s->message, "certificate is not the one seen"));
        teardown();
}

TEST(portal_decline_and_browser)
{
        const char *error = NULL;
        PortalSession *s;

        setup();
        s = detect();
        ASSERT_OK(portal_session_decline(s, &error));
        ASSERT_EQ(s->state, PORTAL_STATE_DECLINED);
        ASSERT_TRUE(!pending());
        teardown();

        /* a portal without WISPr: approval opens the way for the login browser only */
        setup();
        portal_link_changed(portal, &wlan);
        s = portal_get_session(portal, "wlan0");
        answer(200, NULL, "<html><body><form>Accept the terms</form></body></html>");
        ASSERT_EQ(s->state, PORTAL_STATE_WAITING);
        ASSERT_TRUE(!s->wispr);
        ASSERT_EQ(portal_login_link(portal), 0);
        ASSERT_EQ(portal_session_login(s, "a", strdup("b"), false, false, &error), -EOPNOTSUPP);
        ASSERT_OK(portal_session_approve(s, false, &error));
        ASSERT_EQ(s->state, PORTAL_STATE_BROWSER);
        ASSERT_EQ(portal_login_link(portal), 7);
        /* the portal-login app's class changes in a reconciler pass, scheduled from the loop */
        ASSERT_EQ(fake_links.passes, 0);
        run_loop();
        ASSERT_EQ(fake_links.passes, 1);
        /* the user logged in with the browser: online, the session ends */
        wlan.verdict = wlan.verdict4 = (VerdictResult){VERDICT_ONLINE, REASON_OK};
        portal_link_changed(portal, &wlan);
        ASSERT_TRUE(!portal_get_session(portal, "wlan0"));
        teardown();
}

TEST(portal_unanswered_page_fails)
{
        PortalSession *s;

        setup();
        portal_link_changed(portal, &wlan);
        s = portal_get_session(portal, "wlan0");
        answer(302, "ftp://portal.example/", "");
        ASSERT_EQ(s->state, PORTAL_STATE_FAILED);
        ASSERT_STREQ(s->message, "the portal redirects to an unusable address");
        teardown();
}
