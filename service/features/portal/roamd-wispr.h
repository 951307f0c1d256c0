/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* WISPr 1.0 (Wi-Fi Alliance, "Best Current Practices for Wireless Internet Service Provider
 * (WISP) Roaming", appendix D): the <WISPAccessGatewayParam> document a captive portal puts
 * in an HTML comment of its login page, or serves as an XML body. Pure code: no network. */

/* The largest body we parse; the engine stops downloads at this size too. */
#define WISPR_BODY_MAX (256u * 1024u)
/* Elements deeper than this are not looked at. */
#define WISPR_DEPTH_MAX 32

typedef enum WisprElement {
        WISPR_ELEMENT_REDIRECT,
        WISPR_ELEMENT_PROXY,
        WISPR_ELEMENT_AUTHENTICATION_REPLY,
        WISPR_ELEMENT_AUTHENTICATION_POLL_REPLY,
        WISPR_ELEMENT_LOGOFF_REPLY,
        WISPR_ELEMENT_ABORT_LOGIN_REPLY,
        _WISPR_ELEMENT_MAX,
        _WISPR_ELEMENT_INVALID = -1,
} WisprElement;

/* MessageType values. */
typedef enum WisprMessageType {
        WISPR_MESSAGE_INITIAL = 100,
        WISPR_MESSAGE_PROXY = 110,
        WISPR_MESSAGE_AUTHENTICATION = 120,
        WISPR_MESSAGE_LOGOFF = 130,
        WISPR_MESSAGE_AUTHENTICATION_POLL = 140,
        WISPR_MESSAGE_ABORT_LOGIN = 150,
} WisprMessageType;

/* ResponseCode values. */
typedef enum WisprResponseCode {
        WISPR_CODE_NO_ERROR = 0,
        WISPR_CODE_LOGIN_SUCCEEDED = 50,
        WISPR_CODE_LOGIN_FAILED = 100,
        WISPR_CODE_RADIUS_ERROR = 102,
        WISPR_CODE_NO_AUTH_SERVER = 105,
        WISPR_CODE_LOGOFF_SUCCEEDED = 150,
        WISPR_CODE_LOGIN_ABORTED = 151,
        WISPR_CODE_PROXY_DETECTION = 200,
        WISPR_CODE_AUTHENTICATION_PENDING = 201,
        WISPR_CODE_GATEWAY_ERROR = 255,
} WisprResponseCode;

/* What a valid message asks the client to do next. */
typedef enum WisprOutcome {
        WISPR_OUTCOME_LOGIN_OFFERED, /* 100/0: POST credentials to LoginURL */
        WISPR_OUTCOME_FOLLOW_PROXY,  /* 110/200: fetch NextURL (after Delay) */
        WISPR_OUTCOME_LOGGED_IN,     /* 120|140/50 */
        WISPR_OUTCOME_REJECTED,      /* 120|140/100: wrong user name or password */
        WISPR_OUTCOME_PENDING,       /* 120|140/201: poll LoginResultsURL */
        WISPR_OUTCOME_LOGGED_OFF,    /* 130/150 */
        WISPR_OUTCOME_ABORTED,       /* 150/151 */
        WISPR_OUTCOME_GATEWAY_ERROR, /* 102, 105 and 255: the network's fault, not the user's */
        _WISPR_OUTCOME_MAX,
        _WISPR_OUTCOME_INVALID = -1,
} WisprOutcome;

typedef struct WisprMessage {
        WisprElement element;
        int message_type;
        int response_code;
        WisprOutcome outcome;
        /* Strings are NULL when absent; URLs are checked absolute http(s) URLs. */
        char *access_procedure;
        char *access_location;
        char *location_name;
        char *login_url;
        char *abort_login_url;
        char *next_url;
        char *login_results_url;
        char *logoff_url;
        char *reply_message; /* printable ASCII/UTF-8 only, control characters dropped */
        bool has_delay;
        unsigned delay; /* seconds, at most 3600 */
} WisprMessage;

void wispr_message_done(WisprMessage *m);

/* Finds the WISPr document in a portal page and parses it. The body may be an XML document
 * whose root is <WISPAccessGatewayParam>, or an HTML page carrying it in a comment (or, from
 * sloppy portals, as elements in the HTML itself). The XML parser runs without network,
 * without entity substitution and without DTD loading; a document type declaration in the
 * WISPr XML is refused outright (no entities at all, so no billion laughs, no XXE).
 * Returns 0, or:
 *   -ENOMSG   the page carries no WISPr document (a portal without WISPr),
 *   -EFBIG    the body is larger than WISPR_BODY_MAX,
 *   -EBADMSG  a WISPr document that is not well formed, has a DTD, lacks MessageType or
 *             ResponseCode, has a non-numeric code, or a URL that is not absolute http(s),
 *   -EPROTO   a well-formed message whose MessageType/ResponseCode combination WISPr 1.0
 *             does not define, or that lacks the URL its outcome needs,
 *   -ELIBACC  libxml2 (loaded at the first document) cannot be loaded. */
int wispr_parse(const char *body, size_t size, WisprMessage *ret);

/* Words for wispr_parse()'s errors, for the user. */
const char *wispr_error_to_string(int r);

const char *wispr_element_to_string(WisprElement e);
const char *wispr_outcome_to_string(WisprOutcome o);
/* A short sentence for a response code ("login succeeded", "authentication pending", ...). */
const char *wispr_response_code_to_string(int code);

/* Whether url may receive credentials: https (http only with allow_http), its host equal
 * (case-insensitively, port ignored) to one of the NULL-terminated hosts. */
bool wispr_login_url_allowed(const char *url, char *const *hosts, bool allow_http);

/* The host of an absolute http(s) URL, lower-cased, without port or user info; brackets of
 * IPv6 literals are kept. NULL when url is not one. */
char *wispr_url_host(const char *url);
