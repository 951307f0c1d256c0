/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <curl/curl.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <limits.h>
#include <time.h>
#include <unistd.h>

#include "roam-bus.h"
#include "roam-log.h"
#include "roam-util.h"
#include "roamd-http-answer.h"
#include "roamd-link.h"
#include "roamd-config.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-portal.h"
#include "roamd-reconcile.h"
#include "roamd-probe.h"
#include "roamd-wpa.h"

static const char *const state_table[_PORTAL_STATE_MAX] = {
    [PORTAL_STATE_DISCOVERING] = "discovering",
    [PORTAL_STATE_WAITING] = "waiting",
    [PORTAL_STATE_DECLINED] = "declined",
    [PORTAL_STATE_NEED_CREDENTIALS] = "need-credentials",
    [PORTAL_STATE_BROWSER] = "browser",
    [PORTAL_STATE_LOGGING_IN] = "logging-in",
    [PORTAL_STATE_POLLING] = "polling",
    [PORTAL_STATE_LOGGED_IN] = "logged-in",
    [PORTAL_STATE_REJECTED] = "rejected",
    [PORTAL_STATE_FAILED] = "failed",
    [PORTAL_STATE_LOGGING_OFF] = "logging-off",
    [PORTAL_STATE_LOGGED_OFF] = "logged-off",
    [PORTAL_STATE_OPEN] = "open",
};

const char *portal_state_to_string(PortalState s)
{
        return s >= 0 && s < _PORTAL_STATE_MAX ? state_table[s] : NULL;
}

PortalState portal_state_from_string(const char *s)
{
        for (PortalState i = 0; s && i < _PORTAL_STATE_MAX; i++)
                if (streq(state_table[i], s))
                        return i;
        return _PORTAL_STATE_INVALID;
}

/* ---- one HTTP exchange through the captive link ---- */

typedef PortalFetchKind FetchKind;

/* One exchange; how it reaches the portal is the transport's (roamd-portal-curl.c). */
struct PortalFetch {
        PortalSession *session;
        FetchKind kind;
        char *url;
        char *post;      /* the form; holds the password: wiped when freed */
        char *pin;       /* a saved login's pin: the login host's public key must match it */
        void *transport; /* the transport's state of this exchange */
};

static PortalFetch *fetch_free(PortalFetch *f)
{
        if (!f)
                return NULL;
        if (f->transport)
                f->session->portal->transport->stop(f->transport);
        portal_secret_free(f->post);
        free(f->pin);
        free(f->url);
        free(f);
        return NULL;
}

PortalFetchKind portal_fetch_kind(const PortalFetch *f)
{
        return f->kind;
}

const char *portal_fetch_url(const PortalFetch *f)
{
        return f->url;
}

const char *portal_fetch_form(const PortalFetch *f)
{
        return f->post;
}

const char *portal_fetch_pin(const PortalFetch *f)
{
        return f->pin;
}

PortalSession *portal_fetch_session(const PortalFetch *f)
{
        return f->session;
}

static Link *session_link(PortalSession *s)
{
        return links_get(s->portal->core->links, s->ifindex);
}

static void session_set_state(PortalSession *s, PortalState state, const char *fmt, ...)
    _printf_(3, 4);
static void portal_check_login_link(Portal *p);

static void session_set_state(PortalSession *s, PortalState state, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        if (fmt) {
                va_start(ap, fmt);
                if (vasprintf(&msg, fmt, ap) < 0)
                        msg = NULL;
                va_end(ap);
        }
        if (s->state != state || !streq_ptr(s->message, msg)) {
                /* Messages never contain credentials: only URLs, hosts and the portal's own
                 * ReplyMessage. */
                log_info("%s: captive portal %s -> %s%s%s", s->ifname,
                         portal_state_to_string(s->state), portal_state_to_string(state),
                         msg ? ": " : "", strempty(msg));
                s->state = state;
                free(s->message);
                s->message = TAKE_PTR(msg);
                portal_bus_emit_changed(s->portal);
        }
        portal_check_login_link(s->portal);
}

static void session_wipe_pending(PortalSession *s)
{
        free(s->pending_user);
        portal_secret_free(s->pending_password);
        s->pending_user = s->pending_password = NULL;
        s->pending_save = s->pending_always = false;
}

static void on_fetch_finished(PortalSession *s, PortalFetch *f, const PortalAnswer *a);
static void session_fail(PortalSession *s, const char *fmt, ...) _printf_(2, 3);

void portal_fetch_answered(PortalFetch *f, const PortalAnswer *a)
{
        PortalSession *s = f->session;

        /* The handler may start the next fetch; this one is ours alone from here. */
        s->fetch = NULL;
        on_fetch_finished(s, f, a);
        fetch_free(f);
}

void portal_fetch_refused(PortalFetch *f, const char *message)
{
        PortalSession *s = f->session;

        s->fetch = NULL;
        session_fail(s, "%s", message);
        fetch_free(f);
}

/* Starts one exchange; post (taken over) makes it a POST. */
static int session_fetch(PortalSession *s, FetchKind kind, const char *url, char *post,
                         const char *pin)
{
        PortalFetch *f;
        int r;

        s->fetch = fetch_free(s->fetch);
        f = calloc(1, sizeof(*f));
        if (!f) {
                portal_secret_free(post);
                return -ENOMEM;
        }
        f->session = s;
        f->kind = kind;
        f->post = post;
        f->url = strdup(url);
        if (!f->url || (pin && !(f->pin = strdup(pin)))) {
                fetch_free(f);
                return -ENOMEM;
        }
        r = s->portal->transport->start(f, &f->transport);
        if (r < 0) {
                fetch_free(f);
                return r;
        }
        s->fetch = f;
        return 0;
}

static void session_cancel(PortalSession *s)
{
        s->fetch = fetch_free(s->fetch);
        s->timer = sd_event_source_disable_unref(s->timer);
}

static int add_host(PortalSession *s, const char *url)
{
        _cleanup_free_ char *h = wispr_url_host(url);

        if (!h)
                return -EINVAL;
        if (strv_contains(s->hosts, h))
                return 0;
        return strv_push(&s->hosts, TAKE_PTR(h));
}

static int on_reprobe(sd_event_source *es, uint64_t usec, void *userdata)
{
        PortalSession *s = userdata;
        Link *l = session_link(s);

        s->reprobe_timer = sd_event_source_disable_unref(s->reprobe_timer);
        if (l)
                (void)link_reprobe(l);
        return 0;
}

/* Asks for a probe round from the event loop: a verdict that changes at once calls back
 * into portal_link_changed(), which must not run inside our own handlers. */
static void session_reprobe_in(PortalSession *s, uint64_t delay_usec)
{
        uint64_t now, due;

        if (s->reprobe_timer) {
                /* one already due: sooner if asked for sooner */
                (void)sd_event_now(s->portal->core->event, CLOCK_MONOTONIC, &now);
                if (sd_event_source_get_time(s->reprobe_timer, &due) >= 0 && due > now + delay_usec)
                        (void)sd_event_source_set_time(s->reprobe_timer, now + delay_usec);
                return;
        }
        if (sd_event_add_time_relative(s->portal->core->event, &s->reprobe_timer, CLOCK_MONOTONIC,
                                       delay_usec, 0, on_reprobe, s) < 0)
                log_warning("%s: cannot schedule a probe round", s->ifname);
}

static void session_reprobe_soon(PortalSession *s)
{
        session_reprobe_in(s, 0);
}

/* ---- the steps of a login ---- */

static void session_fail(PortalSession *s, const char *fmt, ...)
{
        _cleanup_free_ char *msg = NULL;
        va_list ap;

        va_start(ap, fmt);
        if (vasprintf(&msg, fmt, ap) < 0)
                msg = NULL;
        va_end(ap);
        session_cancel(s);
        session_wipe_pending(s);
        session_set_state(s, PORTAL_STATE_FAILED, "%s", strempty(msg));
}

static char *form_escape(const char *v)
{
        char *e = curl_easy_escape(NULL, v, 0), *r;

        if (!e)
                return NULL;
        r = strdup(e);
        explicit_bzero(e, strlen(e));
        curl_free(e);
        return r;
}

/* POSTs the credentials, if the LoginURL may have them; pin (a saved login's): the login
 * host's public key must be that one, or nothing is sent. */
static void session_send_login(PortalSession *s, const char *user, const char *password,
                               const char *pin)
{
        const PortalConfig *c = &s->portal->core->config->portal;
        const char *url = s->offer.login_url;
        _cleanup_free_ char *host = wispr_url_host(url), *u = NULL, *origin = NULL;
        char *p = NULL, *post = NULL;
        bool host_ok;
        int r;

        if (!http_url_ok(url, !c->allow_http_login)) {
                session_fail(s,
                             "refused to send the password: the login address %s is not "
                             "HTTPS (set AllowPlainHTTPLogin=yes in [Portal] to override)",
                             url);
                return;
        }
        host_ok = wispr_login_url_allowed(url, s->hosts, c->allow_http_login) ||
                  (host && strv_contains(c->allow_login_hosts, host));
        if (!host_ok) {
                session_fail(s,
                             "refused to send the password: the login address is on %s, a host "
                             "the portal's own pages did not point to (add it to "
                             "AllowLoginHosts= in [Portal] to override)",
                             strempty(host));
                return;
        }
        u = form_escape(user);
        p = form_escape(password);
        origin = form_escape(s->portal->core->config->probe.http_url);
        if (!u || !p || !origin ||
            asprintf(&post, "UserName=%s&Password=%s&button=Login&FNAME=0&OriginatingServer=%s", u,
                     p, origin) < 0) {
                portal_secret_free(p);
                session_fail(s, "out of memory");
                return;
        }
        portal_secret_free(p);
        r = session_fetch(s, PORTAL_FETCH_LOGIN, url, post, pin);
        if (r < 0) {
                session_fail(s, "cannot send the login: %s", strerror(-r));
                return;
        }
        session_set_state(s, PORTAL_STATE_LOGGING_IN, "logging in at %s", host);
}

/* After discovery or approval: what roam can do now. */
static void session_next(PortalSession *s)
{
        const PortalEntry *e;

        if (s->state == PORTAL_STATE_DISCOVERING)
                return;
        if (!s->approved) {
                e = portal_store_get(s->portal->store, s->identity);
                /* "Always log in on this network": approved in advance, but only once per
                 * portal episode, so a refused login does not become a storm. */
                if (e && e->always && !s->auto_login_tried) {
                        s->auto_login_tried = true;
                        s->approved = true;
                } else {
                        session_set_state(s, PORTAL_STATE_WAITING,
                                          s->wispr ? "this network offers automatic login "
                                                     "(WISPr): approve to log in"
                                                   : "log in with a web browser: approve to "
                                                     "open the portal's page");
                        return;
                }
        }
        if (!s->wispr) {
                session_set_state(s, PORTAL_STATE_BROWSER,
                                  "this portal offers no automatic login: log in with a web "
                                  "browser at %s",
                                  session_link(s) && session_link(s)->portal_url
                                      ? session_link(s)->portal_url
                                      : "the portal's page");
                return;
        }
        if (s->pending_user && s->pending_password) {
                session_send_login(s, s->pending_user, s->pending_password, NULL);
                return;
        }
        e = portal_store_get(s->portal->store, s->identity);
        if (e && e->user && e->password) {
                _cleanup_free_ char *host = wispr_url_host(s->offer.login_url);

                /* A saved password goes only to the host it was saved for (and, over HTTPS,
                 * to the public key its certificate had then): a portal that now names another,
                 * or a login saved before roamd kept them, asks again. */
                if (!host || !e->login_host || !streq(host, e->login_host)) {
                        log_notice("%s: the saved portal login was saved for %s, this portal "
                                   "logs in at %s: nothing sent",
                                   s->ifname, e->login_host ? e->login_host : "an unknown host",
                                   strempty(host));
                        session_set_state(s, PORTAL_STATE_NEED_CREDENTIALS,
                                          "the saved login belongs to %s, but this portal logs "
                                          "in at %s: roam sent nothing; enter the user name and "
                                          "password to log in here",
                                          e->login_host ? e->login_host : "another login host",
                                          strempty(host));
                        return;
                }
                if (!e->login_pin && strncasecmp(strempty(s->offer.login_url), "http://", 7) != 0) {
                        session_set_state(s, PORTAL_STATE_NEED_CREDENTIALS,
                                          "the saved login does not say which certificate %s "
                                          "had: roam sent nothing; enter the user name and "
                                          "password to log in here",
                                          host);
                        return;
                }
                session_send_login(s, e->user, e->password, e->login_pin);
                return;
        }
        session_set_state(s, PORTAL_STATE_NEED_CREDENTIALS,
                          "this network offers automatic login (WISPr): enter a user name and "
                          "password");
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata);

static int session_after(PortalSession *s, unsigned delay_sec)
{
        uint64_t now;

        /* Bounded: a portal cannot park us for an hour, nor make us spin. */
        delay_sec = MAX(1u, MIN(delay_sec, 10u));
        s->timer = sd_event_source_disable_unref(s->timer);
        (void)sd_event_now(s->portal->core->event, CLOCK_MONOTONIC, &now);
        return sd_event_add_time(s->portal->core->event, &s->timer, CLOCK_MONOTONIC,
                                 now + delay_sec * USEC_PER_SEC, 0, on_timer, s);
}

static void session_logged_in(PortalSession *s, const WisprMessage *m)
{
        int r;

        if (m->logoff_url)
                (void)free_and_strdup(&s->logoff_url, m->logoff_url);
        if (s->pending_save && s->pending_user) {
                _cleanup_free_ char *host = wispr_url_host(s->offer.login_url);

                r = portal_store_set(s->portal->store, s->identity, s->pending_user,
                                     s->pending_password, s->pending_always);
                if (r >= 0)
                        r = host ? portal_store_set_login_host(s->portal->store, s->identity, host,
                                                               s->login_pin)
                                 : -EINVAL;
                if (r < 0)
                        log_warning_errno(r, "%s: cannot save the portal login: %m", s->ifname);
        }
        session_wipe_pending(s);
        session_set_state(s, PORTAL_STATE_LOGGED_IN, "logged in%s%s", m->reply_message ? ": " : "",
                          strempty(m->reply_message));
        /* Do not wait for the next re-check to learn we are online. */
        session_reprobe_soon(s);
}

static void session_handle(PortalSession *s, FetchKind kind, WisprMessage *m)
{
        switch (m->outcome) {
        case WISPR_OUTCOME_LOGIN_OFFERED:
                if (kind != PORTAL_FETCH_DISCOVER)
                        return session_fail(s, "the portal answered the login with a new "
                                               "login page (WISPr redirect)");
                s->wispr = true;
                wispr_message_done(&s->offer);
                s->offer = *m;
                *m = (WisprMessage){};
                s->state = PORTAL_STATE_WAITING;
                session_next(s);
                return;
        case WISPR_OUTCOME_FOLLOW_PROXY:
                if (kind != PORTAL_FETCH_DISCOVER || ++s->proxies > PORTAL_PROXY_MAX)
                        return session_fail(s,
                                            "the portal sent more than %d proxy "
                                            "notifications",
                                            PORTAL_PROXY_MAX);
                (void)add_host(s, m->next_url);
                (void)free_and_strdup(&s->offer.next_url, m->next_url);
                if (session_after(s, m->has_delay ? m->delay : 1) < 0)
                        return session_fail(s, "out of memory");
                return;
        case WISPR_OUTCOME_LOGGED_IN:
                if (kind != PORTAL_FETCH_LOGIN && kind != PORTAL_FETCH_RESULTS)
                        return session_fail(s, "the portal said \"logged in\" before any login");
                session_logged_in(s, m);
                return;
        case WISPR_OUTCOME_REJECTED:
                /* No retry: the same credentials would be refused again. */
                session_wipe_pending(s);
                session_set_state(s, PORTAL_STATE_REJECTED,
                                  "the network rejected the user name or password%s%s%s; "
                                  "nothing was saved",
                                  m->reply_message ? " (\"" : "", strempty(m->reply_message),
                                  m->reply_message ? "\")" : "");
                return;
        case WISPR_OUTCOME_PENDING:
                if (kind != PORTAL_FETCH_LOGIN && kind != PORTAL_FETCH_RESULTS)
                        return session_fail(s, "the portal said \"pending\" before any login");
                if (++s->polls > PORTAL_POLLS_MAX)
                        return session_fail(s,
                                            "the portal kept the login pending: gave up after %d "
                                            "checks",
                                            PORTAL_POLLS_MAX);
                (void)free_and_strdup(&s->offer.login_results_url, m->login_results_url);
                session_set_state(s, PORTAL_STATE_POLLING,
                                  "authentication pending, checking again (%u of %d)", s->polls,
                                  PORTAL_POLLS_MAX);
                if (session_after(s, m->has_delay ? m->delay : 1) < 0)
                        return session_fail(s, "out of memory");
                return;
        case WISPR_OUTCOME_LOGGED_OFF:
                session_set_state(s, PORTAL_STATE_LOGGED_OFF, "logged off");
                session_reprobe_soon(s);
                return;
        case WISPR_OUTCOME_ABORTED:
        case WISPR_OUTCOME_GATEWAY_ERROR:
                return session_fail(s, "the portal answered: %s%s%s",
                                    wispr_response_code_to_string(m->response_code),
                                    m->reply_message ? ": " : "", strempty(m->reply_message));
        case _WISPR_OUTCOME_MAX:
        case _WISPR_OUTCOME_INVALID:
                break;
        }
        session_fail(s, "the portal sent a WISPr message roam does not understand");
}

static void session_discover(PortalSession *s);

static int on_rediscover(sd_event_source *es, uint64_t usec, void *userdata)
{
        PortalSession *s = userdata;

        s->timer = sd_event_source_disable_unref(s->timer);
        session_discover(s);
        return 0;
}

static void on_fetch_finished(PortalSession *s, PortalFetch *f, const PortalAnswer *a)
{
        WisprMessage m = {};
        long status = a->status;
        const char *redirect = a->redirect;
        int r;

        if (a->result == PORTAL_ANSWER_PIN_MISMATCH) {
                session_cancel(s);
                session_wipe_pending(s);
                session_set_state(s, PORTAL_STATE_NEED_CREDENTIALS,
                                  "the login host's certificate is not the one seen when the login "
                                  "was saved: roam sent nothing; enter the user name and password "
                                  "to log in here");
                return;
        }
        if (f->kind == PORTAL_FETCH_LOGIN && a->result == PORTAL_ANSWER_OK)
                (void)free_and_strdup(&s->login_pin, a->pin);
        if (a->result != PORTAL_ANSWER_OK) {
                if (a->result == PORTAL_ANSWER_TOO_LARGE)
                        return session_fail(s, "the portal's page at %s is larger than %u KiB",
                                            f->url, WISPR_BODY_MAX / 1024);
                if (f->kind == PORTAL_FETCH_DISCOVER && s->redirects == 0) {
                        Link *l = session_link(s);

                        /* Still captive: the portal did not answer (a busy box, a lost
                         * packet). Asked again, then said: an unread page is no sign of a
                         * portal without automatic login. */
                        if (l && l->verdict.verdict == VERDICT_PORTAL) {
                                if (s->discover_tries++ < PORTAL_DISCOVER_RETRIES &&
                                    sd_event_add_time_relative(s->portal->core->event, &s->timer,
                                                               CLOCK_MONOTONIC, USEC_PER_SEC, 0,
                                                               on_rediscover, s) >= 0) {
                                        log_info("%s: the portal's page did not come (%s): "
                                                 "asking again",
                                                 s->ifname, strempty(a->error));
                                        return;
                                }
                                return session_fail(s, "cannot read the portal's page at %s: %s",
                                                    f->url, strempty(a->error));
                        }
                        /* The portal is gone (the link turned online meanwhile). */
                        s->state = PORTAL_STATE_WAITING;
                        s->wispr = false;
                        session_next(s);
                        return;
                }
                return session_fail(s, "cannot reach %s: %s", f->url, strempty(a->error));
        }
        if (f->kind == PORTAL_FETCH_DISCOVER)
                s->discover_tries = 0;
        r = wispr_parse(a->body ? a->body : "", a->body_size, &m);
        if (r >= 0) {
                session_handle(s, f->kind, &m);
                wispr_message_done(&m);
                return;
        }
        if (r != -ENOMSG)
                return session_fail(s, "%s (%s)", wispr_error_to_string(r), f->url);

        switch (f->kind) {
        case PORTAL_FETCH_DISCOVER:
                if (status >= 300 && status < 400 && redirect) {
                        if (++s->redirects > PORTAL_REDIRECTS_MAX)
                                return session_fail(s,
                                                    "the portal redirects in a loop (more than "
                                                    "%d redirects)",
                                                    PORTAL_REDIRECTS_MAX);
                        if (!http_url_ok(redirect, false) || add_host(s, redirect) < 0)
                                return session_fail(s, "the portal redirects to an unusable "
                                                       "address");
                        r = session_fetch(s, PORTAL_FETCH_DISCOVER, redirect, NULL, NULL);
                        if (r < 0)
                                return session_fail(s, "cannot follow the portal's redirect: %s",
                                                    strerror(-r));
                        return;
                }
                /* A page without WISPr: a portal for people and browsers. */
                s->wispr = false;
                s->state = PORTAL_STATE_WAITING;
                session_next(s);
                return;
        case PORTAL_FETCH_LOGIN:
        case PORTAL_FETCH_RESULTS:
                return session_fail(s,
                                    "the portal answered the login without a WISPr reply "
                                    "(HTTP %ld)",
                                    status);
        case PORTAL_FETCH_LOGOFF:
                session_set_state(s, PORTAL_STATE_LOGGED_OFF,
                                  "logged off (the portal did not confirm it)");
                session_reprobe_soon(s);
                return;
        case _PORTAL_FETCH_KIND_MAX:
        case _PORTAL_FETCH_KIND_INVALID:
                break;
        }
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        PortalSession *s = userdata;
        int r = 0;

        s->timer = sd_event_source_disable_unref(s->timer);
        if (s->state == PORTAL_STATE_POLLING && s->offer.login_results_url)
                r = session_fetch(s, PORTAL_FETCH_RESULTS, s->offer.login_results_url, NULL, NULL);
        else if (s->offer.next_url)
                r = session_fetch(s, PORTAL_FETCH_DISCOVER, s->offer.next_url, NULL, NULL);
        if (r < 0)
                session_fail(s, "cannot reach the portal: %s", strerror(-r));
        return 0;
}

static void session_discover(PortalSession *s)
{
        Link *l = session_link(s);
        const char *start = s->portal->core->config->probe.http_url;
        int r;

        session_cancel(s);
        strv_free(s->hosts);
        s->hosts = NULL;
        s->redirects = s->proxies = s->polls = 0;
        s->wispr = false;
        wispr_message_done(&s->offer);
        /* The hosts of the portal's own pages: where the link's probe was sent. */
        if (l && l->portal_url)
                (void)add_host(s, l->portal_url);
        s->state = PORTAL_STATE_DISCOVERING;
        /* The same plain GET the prober makes; the portal intercepts it. */
        r = session_fetch(s, PORTAL_FETCH_DISCOVER, start, NULL, NULL);
        if (r < 0)
                return session_fail(s, "cannot read the portal's page: %s", strerror(-r));
        session_set_state(s, PORTAL_STATE_DISCOVERING, "reading the portal's page");
}

/* ---- RFC 8908 session time ---- */

static int on_expiry(sd_event_source *es, uint64_t usec, void *userdata)
{
        PortalSession *s = userdata;

        uint64_t now, delay = 0;

        s->expiry_timer = sd_event_source_disable_unref(s->expiry_timer);
        (void)sd_event_now(s->portal->core->event, CLOCK_MONOTONIC, &now);
        /* The API's word starts a round at once (the next scheduled one is minutes away), but
         * an API that keeps saying the time is over, each round again ("seconds-remaining":
         * 0; any LAN neighbour can announce such an API), would have roamd probe without
         * end, a TLS fetch each: the rounds it starts are spaced, the space doubling while
         * it keeps saying so, back to none when a session with time comes. */
        if (s->api_backoff_usec > 0 && s->api_reprobe_usec + s->api_backoff_usec > now)
                delay = s->api_reprobe_usec + s->api_backoff_usec - now;
        if (s->api_backoff_usec == 0)
                log_notice("%s: the captive portal session's time is over: checking the link now",
                           s->ifname);
        else if (s->api_backoff_usec == PORTAL_API_REPROBE_MIN_USEC)
                log_notice("%s: the captive portal API says again that the session's time is "
                           "over: checking the link at most every %d s from now on, less often "
                           "while it keeps saying so",
                           s->ifname, (int)(PORTAL_API_REPROBE_MIN_USEC / USEC_PER_SEC));
        else
                log_debug("%s: next probe round in %" PRIu64 " s (the portal API's session "
                          "time still over)",
                          s->ifname, delay / USEC_PER_SEC);
        s->api_reprobe_usec = now + delay;
        s->api_backoff_usec = s->api_backoff_usec == 0
                                  ? PORTAL_API_REPROBE_MIN_USEC
                                  : MIN(2 * s->api_backoff_usec, PORTAL_API_REPROBE_MAX_USEC);
        s->expires_realtime_usec = 0;
        s->expired = true;
        portal_bus_emit_changed(s->portal);
        session_reprobe_in(s, delay);
        return 0;
}

static int on_warn(sd_event_source *es, uint64_t usec, void *userdata)
{
        PortalSession *s = userdata;

        s->warn_timer = sd_event_source_disable_unref(s->warn_timer);
        s->expiry_warned = true;
        log_notice("%s: the captive portal session ends in less than %d s", s->ifname,
                   (int)(PORTAL_WARN_USEC / USEC_PER_SEC));
        portal_bus_emit_changed(s->portal);
        return 0;
}

static void session_update_expiry(PortalSession *s, const Link *l)
{
        sd_event *e = s->portal->core->event;
        uint64_t now_mono, now_real, left, expires;

        if (s->extending &&
            (!l->capport_valid || l->capport.captive || !l->capport.can_extend_session)) {
                log_info("%s: the network no longer offers to extend the session", s->ifname);
                s->extending = false;
                portal_bus_emit_changed(s->portal);
        }
        if (!l->capport_valid || l->capport.captive || !l->capport.has_seconds_remaining) {
                s->warn_timer = sd_event_source_disable_unref(s->warn_timer);
                s->expiry_timer = sd_event_source_disable_unref(s->expiry_timer);
                if (s->expires_realtime_usec) {
                        s->expires_realtime_usec = 0;
                        portal_bus_emit_changed(s->portal);
                }
                return;
        }
        (void)sd_event_now(e, CLOCK_MONOTONIC, &now_mono);
        (void)sd_event_now(e, CLOCK_REALTIME, &now_real);
        left = MIN(l->capport.seconds_remaining, (uint64_t)365 * 24 * 3600) * USEC_PER_SEC;
        /* A session with time: a real one again, the API's next "over" is heard at once. */
        if (left >= PORTAL_API_REPROBE_MIN_USEC)
                s->api_backoff_usec = 0;
        expires = now_real + left;
        /* Same expiry within a second: a refresh that changes nothing. */
        if (s->expires_realtime_usec && expires + USEC_PER_SEC > s->expires_realtime_usec &&
            expires < s->expires_realtime_usec + USEC_PER_SEC)
                return;
        if (s->extending && s->expires_realtime_usec &&
            expires > s->expires_realtime_usec + 5 * USEC_PER_SEC) {
                /* The network moved the end: extended. The browser's access ends. */
                log_info("%s: the captive portal session was extended", s->ifname);
                s->extending = false;
        }
        s->expires_realtime_usec = expires;
        s->expiry_warned = left <= PORTAL_WARN_USEC;
        s->warn_timer = sd_event_source_disable_unref(s->warn_timer);
        s->expiry_timer = sd_event_source_disable_unref(s->expiry_timer);
        if (left > PORTAL_WARN_USEC)
                (void)sd_event_add_time(e, &s->warn_timer, CLOCK_MONOTONIC,
                                        now_mono + left - PORTAL_WARN_USEC, USEC_PER_SEC / 10,
                                        on_warn, s);
        (void)sd_event_add_time(e, &s->expiry_timer, CLOCK_MONOTONIC, now_mono + left,
                                USEC_PER_SEC / 10, on_expiry, s);
        portal_bus_emit_changed(s->portal);
}

/* ---- sessions ---- */

static PortalSession *session_free(PortalSession *s)
{
        if (!s)
                return NULL;
        session_cancel(s);
        sd_event_source_disable_unref(s->warn_timer);
        sd_event_source_disable_unref(s->expiry_timer);
        sd_event_source_disable_unref(s->reprobe_timer);
        session_wipe_pending(s);
        wispr_message_done(&s->offer);
        strv_free(s->hosts);
        free(s->logoff_url);
        free(s->login_pin);
        free(s->message);
        free(s->identity);
        free(s->ifname);
        free(s);
        return NULL;
}

int portal_identity(const Link *l, char **ret, const char **ret_source)
{
        const char *id = l->facts.network_id;

        /* the words of what named it, from the id's form (roamd-netid.h) */
        if (!id[0])
                *ret_source = "nothing yet: the network is not named";
        else if (strncmp(id, "wifi:", 5) == 0)
                *ret_source = "WiFi network and access point";
        else if (strstr(id, ":gw="))
                *ret_source = "gateway MAC address";
        else if (strstr(id, ":dhcp="))
                *ret_source = "DHCP server";
        else
                *ret_source = "interface";
        *ret = strdup(id);
        return *ret ? 0 : -ENOMEM;
}

static int session_new(Portal *p, Link *l, PortalSession **ret)
{
        PortalSession *s, **ns;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->portal = p;
        s->ifindex = l->ifindex;
        s->state = PORTAL_STATE_OPEN;
        s->offer = (WisprMessage){.element = _WISPR_ELEMENT_INVALID};
        s->ifname = strdup(strempty(l->info.name));
        r = portal_identity(l, &s->identity, &s->identity_source);
        if (!s->ifname || r < 0) {
                session_free(s);
                return -ENOMEM;
        }
        ns = realloc(p->sessions, sizeof(*ns) * (p->n_sessions + 1));
        if (!ns) {
                session_free(s);
                return -ENOMEM;
        }
        p->sessions = ns;
        p->sessions[p->n_sessions++] = s;
        *ret = s;
        return 0;
}

static void portal_remove_session(Portal *p, size_t i)
{
        log_info("%s: captive portal session ends", p->sessions[i]->ifname);
        session_free(p->sessions[i]);
        memmove(p->sessions + i, p->sessions + i + 1,
                sizeof(*p->sessions) * (p->n_sessions - i - 1));
        p->n_sessions--;
        portal_bus_emit_changed(p);
        portal_check_login_link(p);
}

static PortalSession *find_session(Portal *p, int ifindex, size_t *ret_i)
{
        for (size_t i = 0; p && i < p->n_sessions; i++)
                if (p->sessions[i]->ifindex == ifindex) {
                        if (ret_i)
                                *ret_i = i;
                        return p->sessions[i];
                }
        return NULL;
}

int portal_login_link(Portal *p)
{
        for (size_t i = 0; p && i < p->n_sessions; i++) {
                PortalSession *s = p->sessions[i];
                if ((s->approved && s->captive && s->state == PORTAL_STATE_BROWSER) ||
                    (s->extending && !s->captive))
                        return s->ifindex;
        }
        return 0;
}

static int on_login_defer(sd_event_source *es, void *userdata)
{
        Portal *p = userdata;

        p->login_defer = sd_event_source_disable_unref(p->login_defer);
        /* The portal-login app's class follows: one reconciler pass. */
        reconcile_schedule(p->core->reconcile);
        return 0;
}

/* The portal-login app gains or loses a link: tell the apps engine from the event loop (a
 * reconciler pass must not run inside the link handlers that brought us here). */
static void portal_check_login_link(Portal *p)
{
        int now = portal_login_link(p);
        char name[IF_NAMESIZE + 1] = "";

        if (!p || now == p->login_ifindex)
                return;
        if (now)
                (void)if_indextoname((unsigned)now, name);
        log_info("captive portal login browser (app %s): %s%s", ROAM_APP_PORTAL_LOGIN,
                 now ? "may reach " : "no link", name);
        p->login_ifindex = now;
        if (!p->login_defer &&
            sd_event_add_defer(p->core->event, &p->login_defer, on_login_defer, p) < 0)
                log_warning("Cannot schedule the portal-login app's change");
}

PortalSession *portal_get_session(Portal *p, const char *ifname)
{
        for (size_t i = 0; p && ifname && i < p->n_sessions; i++)
                if (streq(p->sessions[i]->ifname, ifname))
                        return p->sessions[i];
        return NULL;
}

void portal_link_changed(Portal *p, Link *l)
{
        PortalSession *s;
        size_t i = 0;
        bool captive, timed;

        if (!p || !l)
                return;
        captive = l->verdict.verdict == VERDICT_PORTAL;
        timed = l->capport_valid && !l->capport.captive && l->capport.has_seconds_remaining;
        s = find_session(p, l->ifindex, &i);
        if (!s) {
                if (!captive && !timed)
                        return;
                if (session_new(p, l, &s) < 0) {
                        log_oom();
                        return;
                }
                log_info("%s: captive portal session begins (network identity: %s, from the %s)",
                         s->ifname, s->identity, s->identity_source);
                portal_bus_emit_changed(p);
        }
        /* Still captive (a family's verdict moved, a round ended): nothing new. */
        if (captive && !s->captive) {
                /* A new portal episode: first sight, or back after being online (a session
                 * that ran out, a log off, a portal that forgot us). */
                s->captive = true;
                s->extending = false;
                s->approved = false;
                s->auto_login_tried = false;
                s->expired = false;
                s->discover_tries = 0;
                s->api_backoff_usec = 0;
                session_discover(s);
        } else if (!captive && (l->verdict.verdict == VERDICT_ONLINE ||
                                (l->capport_valid && !l->capport.captive))) {
                /* Online, or the network's own API says the portal let us through (the other
                 * checks may say otherwise): no login is pending any more. An exchange in
                 * flight finishes first: the portal may open the gate before it answers the
                 * login, and a round already running may still say "online" while we log
                 * off. */
                if (s->state != PORTAL_STATE_LOGGED_IN && s->state != PORTAL_STATE_OPEN &&
                    s->state != PORTAL_STATE_LOGGING_OFF && s->state != PORTAL_STATE_LOGGING_IN &&
                    s->state != PORTAL_STATE_POLLING) {
                        session_cancel(s);
                        session_wipe_pending(s);
                        session_set_state(s, PORTAL_STATE_OPEN, "%s",
                                          l->verdict.verdict == VERDICT_ONLINE
                                              ? "online"
                                              : "the network says the portal let this link "
                                                "through");
                }
        }
        if (!captive)
                s->captive = false;
        session_update_expiry(s, l);
        portal_check_login_link(p);
        /* Gone for good: not captive, no session time, no login of ours to show or end. */
        if (!captive && !timed && !s->expires_realtime_usec && !s->logoff_url &&
            s->state == PORTAL_STATE_OPEN && !s->reprobe_timer)
                portal_remove_session(p, i);
}

void portal_links_changed(Portal *p)
{
        for (size_t i = 0; p && i < p->n_sessions;) {
                PortalSession *s = p->sessions[i];
                Link *l = links_get(p->core->links, s->ifindex);
                char *id;

                if (!l) {
                        portal_remove_session(p, i);
                        continue;
                }
                /* a session that began before its network was named (the gateway's MAC not
                 * known yet) files its login under the name once it is known */
                if (!s->identity[0] && l->facts.network_id[0] &&
                    portal_identity(l, &id, &s->identity_source) >= 0) {
                        free(s->identity);
                        s->identity = id;
                        portal_bus_emit_changed(p);
                }
                i++;
        }
}

/* ---- user actions ---- */

int portal_session_approve(PortalSession *s, bool always, const char **ret_error)
{
        int r;

        if (s->state == PORTAL_STATE_OPEN) {
                *ret_error = "this link is not behind a captive portal";
                return -EALREADY;
        }
        if (always) {
                r = portal_store_set(s->portal->store, s->identity, NULL, NULL, true);
                if (r < 0) {
                        *ret_error = "cannot save \"always log in on this network\"";
                        return r;
                }
        }
        s->approved = true;
        if (s->state == PORTAL_STATE_DISCOVERING)
                return 0; /* continues when the page is read */
        if (s->state == PORTAL_STATE_LOGGED_IN || s->state == PORTAL_STATE_LOGGING_IN ||
            s->state == PORTAL_STATE_POLLING)
                return 0;
        if (s->state == PORTAL_STATE_FAILED || s->state == PORTAL_STATE_REJECTED ||
            s->state == PORTAL_STATE_LOGGED_OFF) {
                /* An explicit retry: read the page again first. */
                session_discover(s);
                s->approved = true;
                return 0;
        }
        session_next(s);
        return 0;
}

int portal_session_decline(PortalSession *s, const char **ret_error)
{
        const PortalEntry *e = portal_store_get(s->portal->store, s->identity);

        session_cancel(s);
        session_wipe_pending(s);
        s->approved = false;
        s->auto_login_tried = true;
        if (e && e->always &&
            portal_store_set(s->portal->store, s->identity, NULL, NULL, false) < 0) {
                *ret_error = "cannot save the change";
                return -EIO;
        }
        session_set_state(s, PORTAL_STATE_DECLINED, "declined: roam sends nothing to this portal");
        return 0;
}

int portal_session_login(PortalSession *s, const char *user, char *password, bool save, bool always,
                         const char **ret_error)
{
        if (!user || !*user || strlen(user) > PORTAL_STORE_FIELD_MAX || !password || !*password ||
            strlen(password) > PORTAL_STORE_FIELD_MAX || strpbrk(user, "\r\n")) {
                portal_secret_free(password);
                *ret_error = "the user name and password must be 1 to 512 bytes, one line each";
                return -EINVAL;
        }
        if (s->state == PORTAL_STATE_OPEN || s->state == PORTAL_STATE_LOGGED_IN) {
                portal_secret_free(password);
                *ret_error = "this link is not behind a captive portal";
                return -EALREADY;
        }
        if (s->state == PORTAL_STATE_LOGGING_IN || s->state == PORTAL_STATE_POLLING) {
                portal_secret_free(password);
                *ret_error = "a login is already under way";
                return -EBUSY;
        }
        session_wipe_pending(s);
        s->pending_user = strdup(user);
        s->pending_password = password;
        s->pending_save = save;
        s->pending_always = always;
        if (!s->pending_user) {
                session_wipe_pending(s);
                return -ENOMEM;
        }
        s->approved = true;
        if (s->state == PORTAL_STATE_DISCOVERING)
                return 0;
        if (s->state == PORTAL_STATE_WAITING || s->state == PORTAL_STATE_NEED_CREDENTIALS ||
            s->state == PORTAL_STATE_DECLINED) {
                if (!s->wispr) {
                        session_wipe_pending(s);
                        *ret_error = "this portal offers no automatic login (WISPr): log in "
                                     "with a web browser";
                        return -EOPNOTSUPP;
                }
                s->state = PORTAL_STATE_WAITING;
                session_next(s);
                return 0;
        }
        /* After a rejection or a failure: read the page again, then log in. */
        session_discover(s);
        s->approved = true;
        return 0;
}

int portal_session_logoff(PortalSession *s, const char **ret_error)
{
        int r;

        if (!s->logoff_url) {
                *ret_error = "the network gave no address to log off at";
                return -EOPNOTSUPP;
        }
        r = session_fetch(s, PORTAL_FETCH_LOGOFF, s->logoff_url, NULL, NULL);
        if (r < 0) {
                *ret_error = "cannot reach the portal";
                return r;
        }
        free(s->logoff_url);
        s->logoff_url = NULL;
        session_set_state(s, PORTAL_STATE_LOGGING_OFF, "logging off");
        return 0;
}

int portal_session_extend(PortalSession *s, const char **ret_error)
{
        Link *l = session_link(s);

        if (!l || !l->capport_valid || l->capport.captive || !l->capport.can_extend_session ||
            !l->capport.user_portal_url) {
                *ret_error = "the network does not offer to extend this session";
                return -EOPNOTSUPP;
        }
        if (!s->extending) {
                log_info("%s: extending the captive portal session at %s", s->ifname,
                         l->capport.user_portal_url);
                s->extending = true;
                portal_bus_emit_changed(s->portal);
        }
        portal_check_login_link(s->portal);
        return 0;
}

int portal_session_forget(PortalSession *s, const char **ret_error)
{
        int r = portal_store_forget(s->portal->store, s->identity);

        session_wipe_pending(s);
        if (r < 0) {
                *ret_error = "cannot write the saved logins";
                return r;
        }
        log_info("%s: forgot the saved portal login of this network", s->ifname);
        portal_bus_emit_changed(s->portal);
        return 0;
}

/* ---- the whole ---- */

static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        Portal *p = userdata;

        switch (ev->type) {
        case LINKS_EVENT_VERDICT:
        case LINKS_EVENT_CAPPORT:
                portal_link_changed(p, ev->link);
                break;
        case LINKS_EVENT_SYNCED:
                /* sessions follow their link's network name, and go with the link */
                if ((ev->mask & LINK_CHANGE_IDENTITY) || ev->n_gone)
                        portal_links_changed(p);
                break;
        case LINKS_EVENT_NEW:
        case LINKS_EVENT_CHANGED:
        case LINKS_EVENT_NETWORK:
        case LINKS_EVENT_GONE:
        case LINKS_EVENT_BEST:
        case LINKS_EVENT_PROBED:
        case LINKS_EVENT_LOCATION:
        case _LINKS_EVENT_MAX:
        case _LINKS_EVENT_INVALID:
                break;
        }
}

/* An interface's bearer for the saved logins' migration: the link's, else as a sync would
 * classify it (its configuration's override, else sysfs); NULL when it is not there. */
static const char *bearer_of(const char *ifname, void *userdata)
{
        Portal *p = userdata;
        Link *l = links_get_by_name(p->core->links, ifname);
        const Config *c = p->core->config;
        char dir[PATH_MAX];
        Bearer b;

        if (l)
                return bearer_to_string(l->bearer);
        b = config_bearer_override(c, ifname);
        if (b >= 0)
                return bearer_to_string(b);
        snprintf(dir, sizeof(dir), "%s/class/net/%s", c->sysfs_path, ifname);
        if (access(dir, F_OK) < 0 ||
            bearer_classify(&(BearerInput){.sysfs_dir = dir,
                                           .ifname = ifname,
                                           .initial_netns = p->core->initial_netns},
                            &b) < 0)
                return NULL;
        return bearer_to_string(b);
}

int portal_new(Core *core, const PortalTransport *transport, Portal **ret)
{
        Portal *p;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->core = core;
        p->transport = transport;
        r = portal_store_load(core->config->portal.credentials_file, &p->store);
        if (r < 0) {
                /* Refused or broken: left as it is on disk; nothing is saved over it. */
                log_warning_errno(r,
                                  "Cannot use the saved portal logins in %s (%m): it must be a "
                                  "JSON file owned by root with mode 0600; starting without",
                                  core->config->portal.credentials_file);
                r = portal_store_load(NULL, &p->store);
        }
        if (r < 0) {
                free(p);
                return r;
        }
        r = portal_store_migrate(p->store, bearer_of, p);
        if (r < 0)
                log_warning_errno(r, "Cannot rewrite the saved portal logins' networks as "
                                     "NetworkIds: %m; the old ones are kept");
        else if (r > 0)
                log_info("Saved portal logins: %d network(s) now filed by NetworkId", r);
        p->links_watch = links_watch_add(core->links, on_links, p, NULL);
        if (p->links_watch == 0) {
                portal_free(p);
                return -ENOMEM;
        }
        *ret = p;
        return 0;
}

Portal *portal_free(Portal *p)
{
        if (!p)
                return NULL;
        links_watch_remove(p->core->links, p->links_watch);
        for (size_t i = 0; i < p->n_sessions; i++)
                session_free(p->sessions[i]);
        free(p->sessions);
        portal_store_free(p->store);
        sd_bus_slot_unref(p->slot);
        sd_event_source_disable_unref(p->login_defer);
        free(p);
        return NULL;
}
