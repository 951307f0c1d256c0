/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "roam-macro.h"
#include "roam-text.h"
#include "roamd-http-answer.h"
#include "roamd-wispr.h"
#include "roamd-xml.h"

/* libxml2, loaded by the first wispr_parse() that gets past the cheap checks */
static const XmlApi *xml;

#define WISPR_ROOT     "WISPAccessGatewayParam"
#define WISPR_TEXT_MAX 2048

static const char *const element_table[_WISPR_ELEMENT_MAX] = {
    [WISPR_ELEMENT_REDIRECT] = "Redirect",
    [WISPR_ELEMENT_PROXY] = "Proxy",
    [WISPR_ELEMENT_AUTHENTICATION_REPLY] = "AuthenticationReply",
    [WISPR_ELEMENT_AUTHENTICATION_POLL_REPLY] = "AuthenticationPollReply",
    [WISPR_ELEMENT_LOGOFF_REPLY] = "LogoffReply",
    [WISPR_ELEMENT_ABORT_LOGIN_REPLY] = "AbortLoginReply",
};

static const char *const outcome_table[_WISPR_OUTCOME_MAX] = {
    [WISPR_OUTCOME_LOGIN_OFFERED] = "login-offered",
    [WISPR_OUTCOME_FOLLOW_PROXY] = "follow-proxy",
    [WISPR_OUTCOME_LOGGED_IN] = "logged-in",
    [WISPR_OUTCOME_REJECTED] = "rejected",
    [WISPR_OUTCOME_PENDING] = "pending",
    [WISPR_OUTCOME_LOGGED_OFF] = "logged-off",
    [WISPR_OUTCOME_ABORTED] = "aborted",
    [WISPR_OUTCOME_GATEWAY_ERROR] = "gateway-error",
};

const char *wispr_element_to_string(WisprElement e)
{
        return e >= 0 && e < _WISPR_ELEMENT_MAX ? element_table[e] : NULL;
}

const char *wispr_outcome_to_string(WisprOutcome o)
{
        return o >= 0 && o < _WISPR_OUTCOME_MAX ? outcome_table[o] : NULL;
}

const char *wispr_response_code_to_string(int code)
{
        switch (code) {
        case WISPR_CODE_NO_ERROR:
                return "no error";
        case WISPR_CODE_LOGIN_SUCCEEDED:
                return "login succeeded";
        case WISPR_CODE_LOGIN_FAILED:
                return "login failed (user name or password rejected)";
        case WISPR_CODE_RADIUS_ERROR:
                return "the network's authentication server failed or timed out";
        case WISPR_CODE_NO_AUTH_SERVER:
                return "the network has no authentication server enabled";
        case WISPR_CODE_LOGOFF_SUCCEEDED:
                return "logged off";
        case WISPR_CODE_LOGIN_ABORTED:
                return "login aborted";
        case WISPR_CODE_PROXY_DETECTION:
                return "proxy detected, repeat at the next URL";
        case WISPR_CODE_AUTHENTICATION_PENDING:
                return "authentication pending";
        case WISPR_CODE_GATEWAY_ERROR:
                return "the access gateway reported an internal error";
        }
        return "unknown response code";
}

const char *wispr_error_to_string(int r)
{
        switch (r) {
        case 0:
                return "ok";
        case -ENOMSG:
                return "the portal page offers no WISPr login";
        case -EFBIG:
                return "the portal page is too large";
        case -EBADMSG:
                return "the portal's WISPr document is malformed or unsafe";
        case -EILSEQ:
                return "the portal's WISPr document declares a character encoding roamd does not "
                       "read (only UTF-8, US-ASCII and ISO-8859-1)";
        case -EPROTO:
                return "the portal sent a WISPr message type or response code that WISPr 1.0 "
                       "does not define";
        case -ELIBACC:
                return "roamd cannot load libxml2 to read the portal's WISPr document";
        }
        return "the portal's WISPr document could not be read";
}

void wispr_message_done(WisprMessage *m)
{
        if (!m)
                return;
        free(m->access_procedure);
        free(m->access_location);
        free(m->location_name);
        free(m->login_url);
        free(m->abort_login_url);
        free(m->next_url);
        free(m->login_results_url);
        free(m->logoff_url);
        free(m->reply_message);
        *m = (WisprMessage){.element = _WISPR_ELEMENT_INVALID, .outcome = _WISPR_OUTCOME_INVALID};
}

static void xml_free_docp(xmlDocPtr *d)
{
        if (*d)
                xml->free_doc(*d);
}

/* libxml2 prints parse errors to stderr by default; a hostile page must not fill the log. */
static void xml_silent(void *ctx, const char *msg, ...)
{
}

static bool name_is(const xmlNode *n, const char *name)
{
        /* The HTML parser lower-cases element names; the XML one keeps them. WISPr clients in
         * the field compare case-insensitively, so do we. */
        return n && n->type == XML_ELEMENT_NODE && n->name &&
               strcasecmp((const char *)n->name, name) == 0;
}

/* The text directly inside an element: text and CDATA children only. Entity references are
 * never followed (xmlNodeGetContent() would expand them). Leading and trailing white space is
 * dropped; controls (C1 too), broken UTF-8 and invisible bidi/zero-width characters are
 * cleaned (roam-text.c): the names go on the bus. -EBADMSG when longer than WISPR_TEXT_MAX. */
static int element_text(const xmlNode *e, char **ret)
{
        _cleanup_free_ char *s = NULL;
        size_t n = 0;
        int r;

        s = malloc(WISPR_TEXT_MAX + 1);
        if (!s)
                return -ENOMEM;
        for (const xmlNode *c = e->children; c; c = c->next) {
                if (c->type != XML_TEXT_NODE && c->type != XML_CDATA_SECTION_NODE)
                        continue;
                for (const xmlChar *p = c->content; p && *p; p++) {
                        if (*p < 0x20 && *p != '\t' && *p != '\n' && *p != '\r')
                                continue;
                        if (*p == 0x7f)
                                continue;
                        if (n >= WISPR_TEXT_MAX)
                                return -EBADMSG;
                        s[n++] = (char)(*p == '\t' || *p == '\n' || *p == '\r' ? ' ' : *p);
                }
        }
        while (n > 0 && s[n - 1] == ' ')
                n--;
        s[n] = 0;
        size_t lead = strspn(s, " ");
        r = roam_text_clean(s + lead, n - lead, 0, ret);
        return r < 0 ? r : 0;
}

static int parse_uint(const char *s, unsigned max, unsigned *ret)
{
        unsigned long v;
        char *end;

        if (!s || !isdigit((unsigned char)s[0]) || strlen(s) > 10)
                return -EBADMSG;
        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno || *end || v > max)
                return -EBADMSG;
        *ret = (unsigned)v;
        return 0;
}

static int take_string(const xmlNode *e, char **field)
{
        char *s;
        int r = element_text(e, &s);

        if (r < 0)
                return r;
        if (*field || !*s) {
                /* Repeated elements: the first wins; empty ones count as absent. */
                free(s);
                return 0;
        }
        *field = s;
        return 0;
}

static int take_url(const xmlNode *e, char **field)
{
        _cleanup_free_ char *s = NULL;
        int r = element_text(e, &s);

        if (r < 0)
                return r;
        if (!*s || *field)
                return 0;
        if (!http_url_ok(s, false))
                return -EBADMSG;
        /* Every URL we keep has a host we can compare ("https://[x" passes the check above). */
        _cleanup_free_ char *host = wispr_url_host(s);
        if (!host)
                return -EBADMSG;
        *field = TAKE_PTR(s);
        return 0;
}

/* Which outcome a message type and response code stand for; -EPROTO for pairs WISPr 1.0 does
 * not define, or a code in the wrong element. */
static int classify(WisprMessage *m)
{
        switch (m->element) {
        case WISPR_ELEMENT_REDIRECT:
                if (m->message_type != WISPR_MESSAGE_INITIAL)
                        return -EPROTO;
                if (m->response_code == WISPR_CODE_NO_ERROR)
                        return m->login_url ? WISPR_OUTCOME_LOGIN_OFFERED : -EPROTO;
                if (m->response_code == WISPR_CODE_NO_AUTH_SERVER ||
                    m->response_code == WISPR_CODE_GATEWAY_ERROR)
                        return WISPR_OUTCOME_GATEWAY_ERROR;
                return -EPROTO;
        case WISPR_ELEMENT_PROXY:
                if (m->message_type != WISPR_MESSAGE_PROXY)
                        return -EPROTO;
                if (m->response_code == WISPR_CODE_PROXY_DETECTION)
                        return m->next_url ? WISPR_OUTCOME_FOLLOW_PROXY : -EPROTO;
                if (m->response_code == WISPR_CODE_GATEWAY_ERROR)
                        return WISPR_OUTCOME_GATEWAY_ERROR;
                return -EPROTO;
        case WISPR_ELEMENT_AUTHENTICATION_REPLY:
        case WISPR_ELEMENT_AUTHENTICATION_POLL_REPLY:
                if (m->message_type != (m->element == WISPR_ELEMENT_AUTHENTICATION_REPLY
                                            ? WISPR_MESSAGE_AUTHENTICATION
                                            : WISPR_MESSAGE_AUTHENTICATION_POLL))
                        return -EPROTO;
                switch (m->response_code) {
                case WISPR_CODE_LOGIN_SUCCEEDED:
                        return WISPR_OUTCOME_LOGGED_IN;
                case WISPR_CODE_LOGIN_FAILED:
                        return WISPR_OUTCOME_REJECTED;
                case WISPR_CODE_AUTHENTICATION_PENDING:
                        return m->login_results_url ? WISPR_OUTCOME_PENDING : -EPROTO;
                case WISPR_CODE_RADIUS_ERROR:
                case WISPR_CODE_NO_AUTH_SERVER:
                case WISPR_CODE_GATEWAY_ERROR:
                        return WISPR_OUTCOME_GATEWAY_ERROR;
                }
                return -EPROTO;
        case WISPR_ELEMENT_LOGOFF_REPLY:
                if (m->message_type != WISPR_MESSAGE_LOGOFF)
                        return -EPROTO;
                if (m->response_code == WISPR_CODE_LOGOFF_SUCCEEDED)
                        return WISPR_OUTCOME_LOGGED_OFF;
                if (m->response_code == WISPR_CODE_GATEWAY_ERROR)
                        return WISPR_OUTCOME_GATEWAY_ERROR;
                return -EPROTO;
        case WISPR_ELEMENT_ABORT_LOGIN_REPLY:
                if (m->message_type != WISPR_MESSAGE_ABORT_LOGIN)
                        return -EPROTO;
                if (m->response_code == WISPR_CODE_LOGIN_ABORTED)
                        return WISPR_OUTCOME_ABORTED;
                if (m->response_code == WISPR_CODE_GATEWAY_ERROR)
                        return WISPR_OUTCOME_GATEWAY_ERROR;
                return -EPROTO;
        case _WISPR_ELEMENT_MAX:
        case _WISPR_ELEMENT_INVALID:
                break;
        }
        return -EPROTO;
}

/* Reads the message element (Redirect, Proxy, ...) below the root. */
static int parse_message(const xmlNode *msg, WisprElement element, WisprMessage *ret)
{
        WisprMessage m = {.element = element, .outcome = _WISPR_OUTCOME_INVALID};
        bool have_type = false, have_code = false;
        int r = 0;

        for (const xmlNode *c = msg->children; c && r >= 0; c = c->next) {
                _cleanup_free_ char *s = NULL;
                unsigned v;

                if (c->type != XML_ELEMENT_NODE)
                        continue;
                if (name_is(c, "MessageType") || name_is(c, "ResponseCode") ||
                    name_is(c, "Delay")) {
                        bool delay = name_is(c, "Delay");
                        bool type = name_is(c, "MessageType");

                        r = element_text(c, &s);
                        if (r < 0)
                                break;
                        r = parse_uint(s, delay ? 3600 : 999, &v);
                        if (r < 0)
                                break;
                        if (delay) {
                                m.has_delay = true;
                                m.delay = v;
                        } else if (type) {
                                if (have_type && m.message_type != (int)v)
                                        r = -EBADMSG;
                                m.message_type = (int)v;
                                have_type = true;
                        } else {
                                if (have_code && m.response_code != (int)v)
                                        r = -EBADMSG;
                                m.response_code = (int)v;
                                have_code = true;
                        }
                } else if (name_is(c, "AccessProcedure"))
                        r = take_string(c, &m.access_procedure);
                else if (name_is(c, "AccessLocation"))
                        r = take_string(c, &m.access_location);
                else if (name_is(c, "LocationName"))
                        r = take_string(c, &m.location_name);
                else if (name_is(c, "ReplyMessage"))
                        r = take_string(c, &m.reply_message);
                else if (name_is(c, "LoginURL"))
                        r = take_url(c, &m.login_url);
                else if (name_is(c, "AbortLoginURL"))
                        r = take_url(c, &m.abort_login_url);
                else if (name_is(c, "NextURL"))
                        r = take_url(c, &m.next_url);
                else if (name_is(c, "LoginResultsURL"))
                        r = take_url(c, &m.login_results_url);
                else if (name_is(c, "LogoffURL"))
                        r = take_url(c, &m.logoff_url);
        }
        if (r >= 0 && (!have_type || !have_code))
                r = -EBADMSG;
        if (r >= 0) {
                r = classify(&m);
                if (r >= 0) {
                        m.outcome = r;
                        r = 0;
                }
        }
        if (r < 0) {
                wispr_message_done(&m);
                return r;
        }
        *ret = m;
        return 0;
}

/* The root's first child element that names a message. */
static int parse_root(const xmlNode *root, WisprMessage *ret)
{
        for (const xmlNode *c = root->children; c; c = c->next)
                for (WisprElement e = 0; e < _WISPR_ELEMENT_MAX; e++)
                        if (name_is(c, element_table[e]))
                                return parse_message(c, e, ret);
        return -EBADMSG;
}

static bool has_prefix_ci(const char *s, size_t n, const char *prefix)
{
        size_t l = strlen(prefix);
        return n >= l && strncasecmp(s, prefix, l) == 0;
}

/* Whether a text holds a DOCTYPE or an ENTITY declaration anywhere. WISPr needs neither, and
 * refusing them before libxml2 sees the text keeps entity expansion out of reach entirely
 * (attribute values would be expanded even without XML_PARSE_NOENT). */
static bool has_declarations(const char *s, size_t n)
{
        for (size_t i = 0; i + 2 < n; i++)
                if (s[i] == '<' && s[i + 1] == '!' &&
                    (has_prefix_ci(s + i + 2, n - i - 2, "DOCTYPE") ||
                     has_prefix_ci(s + i + 2, n - i - 2, "ENTITY")))
                        return true;
        return false;
}

/* The character encodings a WISPr document may declare. Others (UTF-7, UTF-16 on ASCII
 * bytes, the ISO-2022 family, EBCDIC...) would make libxml2 read the same bytes as other
 * text than every check before it saw: refused before libxml2 sees the document. */
static bool encoding_allowed(const char *name, size_t n)
{
        static const char *const allowed[] = {"UTF-8", "US-ASCII", "ISO-8859-1"};

        for (size_t i = 0; i < ELEMENTSOF(allowed); i++)
                if (n == strlen(allowed[i]) && strncasecmp(name, allowed[i], n) == 0)
                        return true;
        return false;
}

/* At p (n bytes left), after `word`: white space, '=', white space, an optional quote and a
 * name up to the quote (or a delimiter). Returns whether a name follows that is allowed; no
 * name at all (`word` is something else) counts as allowed. */
static bool declared_value_ok(const char *p, size_t n)
{
        size_t i = 0, start;
        char quote = 0;

        while (i < n && strchr(" \t\r\n", p[i]))
                i++;
        if (i >= n || p[i] != '=')
                return true;
        i++;
        while (i < n && strchr(" \t\r\n", p[i]))
                i++;
        if (i < n && (p[i] == '"' || p[i] == '\''))
                quote = p[i++];
        start = i;
        while (i < n && (quote ? p[i] != quote : !strchr(" \t\r\n;\"'/>", p[i])))
                i++;
        return encoding_allowed(p + start, i - start);
}

/* The XML declaration's encoding="..." (s starts at the declaration, if any). */
static bool xml_encoding_ok(const char *s, size_t n)
{
        const char *end;

        if (!has_prefix_ci(s, n, "<?xml"))
                return true;
        end = memmem(s, n, "?>", 2);
        n = end ? (size_t)(end - s) : n;
        for (size_t i = 0; i + 8 <= n; i++)
                if (memcmp(s + i, "encoding", 8) == 0 && !declared_value_ok(s + i + 8, n - i - 8))
                        return false;
        return true;
}

/* An HTML page's <meta charset=...> and <meta http-equiv=Content-Type content="...;
 * charset=...">: every "charset" inside a <meta ...> tag. */
static bool html_charset_ok(const char *s, size_t n)
{
        for (size_t i = 0; i + 5 <= n; i++) {
                const char *tag_end;
                size_t len;

                if (!has_prefix_ci(s + i, n - i, "<meta"))
                        continue;
                tag_end = memchr(s + i, '>', n - i);
                len = tag_end ? (size_t)(tag_end - (s + i)) : n - i;
                for (size_t k = 5; k + 7 <= len; k++)
                        if (has_prefix_ci(s + i + k, len - k, "charset") &&
                            !declared_value_ok(s + i + k + 7, len - k - 7))
                                return false;
                i += len;
        }
        return true;
}

/* Byte order marks of encodings other than UTF-8 (UTF-16, UTF-32, UTF-7): libxml2 would
 * switch to them whatever the text declares. */
static bool foreign_bom(const char *s, size_t n)
{
        return (n >= 2 && (memcmp(s, "\xfe\xff", 2) == 0 || memcmp(s, "\xff\xfe", 2) == 0)) ||
               (n >= 4 && memcmp(s, "\0\0\xfe\xff", 4) == 0) ||
               (n >= 3 && memcmp(s, "+/v", 3) == 0);
}

static const int xml_options = XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
                               XML_PARSE_NOCDATA | XML_PARSE_NOBLANKS;

static int parse_xml(const char *s, size_t n, WisprMessage *ret)
{
        _cleanup_(xml_free_docp) xmlDocPtr doc = NULL;
        const xmlNode *root;

        /* An XML declaration must come first: comments usually start with a newline. */
        while (n > 0 && strchr(" \t\r\n", *s)) {
                s++;
                n--;
        }
        if (has_declarations(s, n))
                return -EBADMSG;
        if (!xml_encoding_ok(s, n))
                return -EILSEQ;
        /* No XML_PARSE_NOENT, no XML_PARSE_DTDLOAD, no XML_PARSE_HUGE (keeps libxml2's own
         * depth limit of 256 and its text size limits). */
        doc = xml->read_memory(s, (int)n, "wispr.xml", NULL, xml_options);
        if (!doc)
                return -EBADMSG;
        if (doc->intSubset || doc->extSubset)
                return -EBADMSG;
        root = xml->doc_get_root_element(doc);
        if (!name_is(root, WISPR_ROOT))
                return -ENOMSG;
        return parse_root(root, ret);
}

/* Iterative walk of the HTML tree in document order, WISPR_DEPTH_MAX deep at most: the first
 * comment that carries a WISPr document wins, else the first <WISPAccessGatewayParam>
 * element the HTML parser kept in the tree. */
static int walk_html(const xmlNode *top, WisprMessage *ret)
{
        const xmlNode *n = top, *element = NULL;
        unsigned depth = 0;
        int first_error = -ENOMSG;

        while (n) {
                if (n->type == XML_COMMENT_NODE && n->content &&
                    strstr((const char *)n->content, WISPR_ROOT)) {
                        const char *c = (const char *)n->content;
                        int r = parse_xml(c, strlen(c), ret);
                        if (r >= 0)
                                return 0;
                        if (first_error == -ENOMSG)
                                first_error = r;
                } else if (!element && name_is(n, WISPR_ROOT))
                        element = n;

                if (n->children && depth < WISPR_DEPTH_MAX && n->type == XML_ELEMENT_NODE) {
                        n = n->children;
                        depth++;
                        continue;
                }
                while (n && !n->next && n != top) {
                        n = n->parent;
                        depth--;
                }
                if (!n || n == top)
                        break;
                n = n->next;
        }
        if (first_error != -ENOMSG)
                return first_error;
        if (element)
                return parse_root(element, ret);
        return -ENOMSG;
}

static int parse_html(const char *s, size_t n, WisprMessage *ret)
{
        _cleanup_(xml_free_docp) xmlDocPtr doc = NULL;
        const xmlNode *root;

        if (!html_charset_ok(s, n))
                return -EILSEQ;
        doc = xml->html_read_memory(s, (int)n, "portal.html", NULL,
                                    HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                                        HTML_PARSE_RECOVER | HTML_PARSE_NOIMPLIED);
        if (!doc)
                return -ENOMSG;
        root = xml->doc_get_root_element(doc);
        if (!root)
                return -ENOMSG;
        /* Siblings of the root (comments before <html>) count too. */
        for (const xmlNode *top = doc->children; top; top = top->next) {
                int r = walk_html(top, ret);
                if (r != -ENOMSG)
                        return r;
        }
        return -ENOMSG;
}

int wispr_parse(const char *body, size_t size, WisprMessage *ret)
{
        WisprMessage m = {};
        size_t skip = 0;
        int r;

        if (!body || !ret)
                return -EINVAL;
        if (size > WISPR_BODY_MAX)
                return -EFBIG;
        if (foreign_bom(body, size))
                return -EILSEQ;
        if (size == 0 || memmem(body, size, "\0", 1))
                return size == 0 ? -ENOMSG : -EBADMSG;
        if (!memmem(body, size, WISPR_ROOT, strlen(WISPR_ROOT)) &&
            !memmem(body, size, "wispaccessgatewayparam", strlen(WISPR_ROOT)) &&
            !memmem(body, size, "WISPACCESSGATEWAYPARAM", strlen(WISPR_ROOT)))
                /* Cheap and usual: most portal pages do not speak WISPr. */
                return -ENOMSG;

        r = xml_api_get(&xml);
        if (r < 0)
                return r;
        xml->set_generic_error_func(NULL, xml_silent);

        if (size >= 3 && memcmp(body, "\xef\xbb\xbf", 3) == 0)
                skip = 3;
        while (skip < size && strchr(" \t\r\n", body[skip]))
                skip++;
        if (has_prefix_ci(body + skip, size - skip, "<?xml") ||
            has_prefix_ci(body + skip, size - skip, "<" WISPR_ROOT))
                r = parse_xml(body + skip, size - skip, &m);
        else
                r = parse_html(body, size, &m);
        if (r < 0)
                return r;
        *ret = m;
        return 0;
}

char *wispr_url_host(const char *url)
{
        CURLU *u;
        char *host = NULL, *h = NULL;

        if (!url || !http_url_ok(url, false))
                return NULL;
        /* curl's URL API, the parser the fetches use: user info and port dropped, an IPv6
         * address in its brackets */
        u = curl_url();
        if (u && curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) == CURLUE_OK &&
            curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK && host[0])
                h = strdup(host);
        curl_free(host);
        curl_url_cleanup(u);
        for (char *c = h; c && *c; c++)
                *c = (char)tolower((unsigned char)*c);
        return h;
}

bool wispr_login_url_allowed(const char *url, char *const *hosts, bool allow_http)
{
        _cleanup_free_ char *host = NULL;

        if (!url || !http_url_ok(url, !allow_http))
                return false;
        host = wispr_url_host(url);
        if (!host)
                return false;
        for (char *const *h = hosts; h && *h; h++)
                if (strcasecmp(*h, host) == 0)
                        return true;
        return false;
}
