/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "roamd-portal-store.h"
#include "roamd-wispr.h"

typedef struct Core Core;
typedef struct Link Link;
typedef struct Portal Portal;
typedef struct PortalSession PortalSession;
typedef struct PortalFetch PortalFetch;

/* Captive portal login (docs/portal.md): one session per link that is behind a portal or
 * whose RFC 8908 session has time remaining. Nothing but plain GETs of the pages the prober
 * already fetches reaches the portal before the user approved, or saved "always log in on
 * this network" for the network's identity. */

typedef enum PortalState {
        PORTAL_STATE_DISCOVERING,      /* reading the portal's page: does it offer WISPr? */
        PORTAL_STATE_WAITING,          /* waiting for the user's approval */
        PORTAL_STATE_DECLINED,         /* the user said no: nothing more is sent */
        PORTAL_STATE_NEED_CREDENTIALS, /* approved, WISPr offered, no user name/password */
        PORTAL_STATE_BROWSER,          /* approved, no WISPr: log in with a web browser */
        PORTAL_STATE_LOGGING_IN,       /* credentials POSTed to the LoginURL */
        PORTAL_STATE_POLLING,          /* authentication pending, polling LoginResultsURL */
        PORTAL_STATE_LOGGED_IN,        /* the portal said yes */
        PORTAL_STATE_REJECTED,         /* the portal refused the user name or password */
        PORTAL_STATE_FAILED,           /* a hostile or broken portal: see the message */
        PORTAL_STATE_LOGGING_OFF,
        PORTAL_STATE_LOGGED_OFF,
        PORTAL_STATE_OPEN, /* not captive (an RFC 8908 session with time remaining) */
        _PORTAL_STATE_MAX,
        _PORTAL_STATE_INVALID = -EINVAL,
} PortalState;

const char *portal_state_to_string(PortalState s);
PortalState portal_state_from_string(const char *s);

/* Redirects followed while looking for the portal's page, Proxy NextURLs followed, and
 * LoginResultsURL polls: each bounded. */
#define PORTAL_REDIRECTS_MAX 5
/* A portal that does not answer its first page is asked again this often, a second apart. */
#define PORTAL_DISCOVER_RETRIES 2
#define PORTAL_PROXY_MAX        3
#define PORTAL_POLLS_MAX        10
/* Warn this long before an RFC 8908 session ends. */
#define PORTAL_WARN_USEC (60 * USEC_PER_SEC)
/* Rounds started by an RFC 8908 API saying the session's time is over, when it says so again
 * at once: at least this far apart, the space doubling up to the maximum. */
#define PORTAL_API_REPROBE_MIN_USEC (5 * USEC_PER_SEC)
#define PORTAL_API_REPROBE_MAX_USEC (15 * 60 * USEC_PER_SEC)

struct PortalSession {
        Portal *portal;
        int ifindex;
        char *ifname;
        char *identity; /* what the saved login is filed under, see portal_identity() */
        const char *identity_source;
        PortalState state;
        char *message; /* a sentence for the user about the state */
        bool captive;  /* the link's verdict is portal (this episode) */
        bool approved;
        bool wispr; /* the portal offers WISPr */
        bool auto_login_tried;
        WisprMessage offer; /* the Redirect (LoginURL ...) once known */
        char *logoff_url;
        char *login_pin; /* the login host's public key at the last login sent ("sha256//...") */
        char **hosts;    /* hosts the portal's own pages pointed to */
        unsigned redirects, proxies, polls;
        unsigned discover_tries; /* unanswered first pages in a row */
        PortalFetch *fetch;
        sd_event_source *timer; /* proxy delay and result polls */
        /* Credentials given by Login(), not yet known good; wiped when done. */
        char *pending_user, *pending_password;
        bool pending_save, pending_always;
        /* RFC 8908 */
        uint64_t expires_realtime_usec; /* 0: unknown */
        sd_event_source *warn_timer, *expiry_timer;
        bool expiry_warned;
        bool expired; /* the time ran out; the link is being checked again */
        /* The user asked to extend an RFC 8908 session (can-extend-session): the login
         * browser may reach the link until the session's end moves or the offer goes. */
        bool extending;
        sd_event_source *reprobe_timer;
        /* The rounds the API's "time is over" started (see on_expiry()): when the last one
         * went (CLOCK_MONOTONIC), the space before the next; 0: none, the next goes at once. */
        uint64_t api_reprobe_usec, api_backoff_usec;
};

/* ---- how a session's exchanges reach the portal ---- */

typedef enum PortalFetchKind {
        PORTAL_FETCH_DISCOVER, /* GET: the probe URL, then where it redirects */
        PORTAL_FETCH_LOGIN,    /* POST credentials to the LoginURL */
        PORTAL_FETCH_RESULTS,  /* GET LoginResultsURL */
        PORTAL_FETCH_LOGOFF,   /* GET LogoffURL */
        _PORTAL_FETCH_KIND_MAX,
        _PORTAL_FETCH_KIND_INVALID = -EINVAL,
} PortalFetchKind;

typedef enum PortalAnswerResult {
        PORTAL_ANSWER_OK,           /* an answer: status, Location, body */
        PORTAL_ANSWER_FAILED,       /* none came (error says why) */
        PORTAL_ANSWER_TOO_LARGE,    /* its body outgrew WISPR_BODY_MAX */
        PORTAL_ANSWER_PIN_MISMATCH, /* a login whose host's public key is not the saved one:
                                     * nothing was sent */
        _PORTAL_ANSWER_RESULT_MAX,
        _PORTAL_ANSWER_RESULT_INVALID = -EINVAL,
} PortalAnswerResult;

typedef struct PortalAnswer {
        PortalAnswerResult result;
        const char *error; /* FAILED: why, in words */
        long status;
        const char *redirect; /* the Location of a 3xx, absolute */
        const char *body;
        size_t body_size;
        const char *pin; /* a login's: the public key it went to ("sha256//..."), NULL none */
} PortalAnswer;

/* The transport (roamd-portal-curl.c: the link's DNS, then curl bound to the link; a fake in
 * tests/unit/test-portal.c): start() sends f on its way and keeps its state in *ret_data;
 * the answer comes later, from the event loop, through portal_fetch_answered() (or
 * portal_fetch_refused()), which frees f; stop() ends what runs for a fetch freed first. */
typedef struct PortalTransport {
        int (*start)(PortalFetch *f, void **ret_data);
        void (*stop)(void *data);
} PortalTransport;

extern const PortalTransport portal_transport_curl;

PortalFetchKind portal_fetch_kind(const PortalFetch *f);
const char *portal_fetch_url(const PortalFetch *f);
const char *portal_fetch_form(const PortalFetch *f); /* the POSTed form; NULL: a GET */
const char *portal_fetch_pin(const PortalFetch *f);  /* the public key a login must go to */
PortalSession *portal_fetch_session(const PortalFetch *f);
void portal_fetch_answered(PortalFetch *f, const PortalAnswer *a);
/* The transport would not open f's address: the session fails with message. */
void portal_fetch_refused(PortalFetch *f, const char *message);

struct Portal {
        Core *core;
        const PortalTransport *transport;
        unsigned links_watch; /* links_watch_add() id */
        PortalStore *store;
        PortalSession **sessions;
        size_t n_sessions;
        sd_bus_slot *slot;
        /* The link the portal-login app may use (portal_login_link()) as the apps engine last
         * heard of it, and the event that tells it of a change (outside our handlers). */
        int login_ifindex;
        sd_event_source *login_defer;
};

/* transport: &portal_transport_curl (a fake in tests). */
int portal_new(Core *core, const PortalTransport *transport, Portal **ret);
Portal *portal_free(Portal *p);

/* Hooks: a link's verdict or RFC 8908 data changed, or links went away. NULL p allowed. */
void portal_link_changed(Portal *p, Link *l);
void portal_links_changed(Portal *p);

PortalSession *portal_get_session(Portal *p, const char *ifname);

/* The link the login browser (the portal-login app) may reach: one behind a captive portal
 * without WISPr whose browser login the user approved (state browser), or one whose RFC 8908
 * session the user asked to extend; 0 none. NULL p allowed. */
int portal_login_link(Portal *p);

/* User actions. Return 0 or a negative errno, with a sentence in *ret_error for the user. */
int portal_session_approve(PortalSession *s, bool always, const char **ret_error);
int portal_session_decline(PortalSession *s, const char **ret_error);
/* Takes over password (wiped and freed in any case). */
int portal_session_login(PortalSession *s, const char *user, char *password, bool save, bool always,
                         const char **ret_error);
int portal_session_logoff(PortalSession *s, const char **ret_error);
int portal_session_forget(PortalSession *s, const char **ret_error);
/* RFC 8908 can-extend-session: lets the login browser reach the (online) link to open the
 * user-portal-url. */
int portal_session_extend(PortalSession *s, const char **ret_error);

/* The network identity a saved login is filed under: the link's NetworkId (a fact of the
 * link, roamd-netid.h), "" while the network is not named yet. *ret_source says in words what
 * named it. */
int portal_identity(const Link *l, char **ret, const char **ret_source);

/* D-Bus (roamd-portal-bus.c). */
int portal_bus_setup(Portal *p);
void portal_bus_emit_changed(Portal *p);
