/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>

#include "roam-macro.h"
#include "roamd-wispr.h"
#include "test.h"

#define ROOT(x)   "<WISPAccessGatewayParam>" x "</WISPAccessGatewayParam>"
#define MSG(e, x) ROOT("<" e ">" x "</" e ">")
#define TC(t, c)  "<MessageType>" #t "</MessageType><ResponseCode>" #c "</ResponseCode>"
#define LOGIN     "<LoginURL>https://portal.example/login</LoginURL>"
#define RESULTS   "<LoginResultsURL>https://portal.example/results</LoginResultsURL>"
#define NEXT      "<NextURL>http://portal.example/next</NextURL>"

static int parse(const char *s, WisprMessage *m)
{
        return wispr_parse(s, strlen(s), m);
}

/* Every message type and response code pair WISPr 1.0 defines, and some it does not. */
TEST(wispr_code_table)
{
        static const struct {
                const char *doc;
                int r;
                WisprElement element;
                WisprOutcome outcome;
        } table[] = {
            {MSG("Redirect", TC(100, 0) LOGIN), 0, WISPR_ELEMENT_REDIRECT,
             WISPR_OUTCOME_LOGIN_OFFERED},
            {MSG("Redirect", TC(100, 105)), 0, WISPR_ELEMENT_REDIRECT, WISPR_OUTCOME_GATEWAY_ERROR},
            {MSG("Redirect", TC(100, 255)), 0, WISPR_ELEMENT_REDIRECT, WISPR_OUTCOME_GATEWAY_ERROR},
            {MSG("Redirect", TC(100, 0)), -EPROTO, 0, 0}, /* no LoginURL */
            {MSG("Redirect", TC(100, 50) LOGIN), -EPROTO, 0, 0},
            {MSG("Redirect", TC(120, 0) LOGIN), -EPROTO, 0, 0},
            {MSG("Proxy", TC(110, 200) NEXT), 0, WISPR_ELEMENT_PROXY, WISPR_OUTCOME_FOLLOW_PROXY},
            {MSG("Proxy", TC(110, 200)), -EPROTO, 0, 0},
            {MSG("Proxy", TC(110, 255)), 0, WISPR_ELEMENT_PROXY, WISPR_OUTCOME_GATEWAY_ERROR},
            {MSG("AuthenticationReply", TC(120, 50)), 0, WISPR_ELEMENT_AUTHENTICATION_REPLY,
             WISPR_OUTCOME_LOGGED_IN},
            {MSG("AuthenticationReply", TC(120, 100)), 0, WISPR_ELEMENT_AUTHENTICATION_REPLY,
             WISPR_OUTCOME_REJECTED},
            {MSG("AuthenticationReply", TC(120, 102)), 0, WISPR_ELEMENT_AUTHENTICATION_REPLY,
             WISPR_OUTCOME_GATEWAY_ERROR},
            {MSG("AuthenticationReply", TC(120, 201) RESULTS), 0,
             WISPR_ELEMENT_AUTHENTICATION_REPLY, WISPR_OUTCOME_PENDING},
            {MSG("AuthenticationReply", TC(120, 201)), -EPROTO, 0, 0},
            {MSG("AuthenticationReply", TC(120, 255)), 0, WISPR_ELEMENT_AUTHENTICATION_REPLY,
             WISPR_OUTCOME_GATEWAY_ERROR},
            {MSG("AuthenticationReply", TC(120, 0)), -EPROTO, 0, 0},
            {MSG("AuthenticationReply", TC(140, 50)), -EPROTO, 0, 0},
            {MSG("AuthenticationPollReply", TC(140, 50)), 0,
             WISPR_ELEMENT_AUTHENTICATION_POLL_REPLY, WISPR_OUTCOME_LOGGED_IN},
            {MSG("AuthenticationPollReply", TC(140, 100)), 0,
             WISPR_ELEMENT_AUTHENTICATION_POLL_REPLY, WISPR_OUTCOME_REJECTED},
            {MSG("AuthenticationPollReply", TC(140, 201) RESULTS), 0,
             WISPR_ELEMENT_AUTHENTICATION_POLL_REPLY, WISPR_OUTCOME_PENDING},
            {MSG("LogoffReply", TC(130, 150)), 0, WISPR_ELEMENT_LOGOFF_REPLY,
             WISPR_OUTCOME_LOGGED_OFF},
            {MSG("LogoffReply", TC(130, 255)), 0, WISPR_ELEMENT_LOGOFF_REPLY,
             WISPR_OUTCOME_GATEWAY_ERROR},
            {MSG("LogoffReply", TC(130, 50)), -EPROTO, 0, 0},
            {MSG("AbortLoginReply", TC(150, 151)), 0, WISPR_ELEMENT_ABORT_LOGIN_REPLY,
             WISPR_OUTCOME_ABORTED},
            {MSG("AbortLoginReply", TC(150, 150)), -EPROTO, 0, 0},
            /* Malformed codes. */
            {MSG("Redirect", TC(abc, 0) LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", TC(100, -1) LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", TC(100, 99999999999) LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", TC(100, 1000) LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", "<MessageType>100</MessageType>" LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", "<ResponseCode>0</ResponseCode>" LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", TC(100, 0) TC(100, 255) LOGIN), -EBADMSG, 0, 0},
            {MSG("Redirect", TC(100, 0) "<LoginURL>javascript:alert(1)</LoginURL>"), -EBADMSG, 0,
             0},
            {MSG("Redirect", TC(100, 0) "<LoginURL>https://a b/</LoginURL>"), -EBADMSG, 0, 0},
            {MSG("Redirect", TC(100, 0) LOGIN "<Delay>x</Delay>"), -EBADMSG, 0, 0},
            {MSG("Unknown", TC(100, 0) LOGIN), -EBADMSG, 0, 0},
            {ROOT(""), -EBADMSG, 0, 0},
            {"<WISPAccessGatewayParam><Redirect>", -EBADMSG, 0, 0},
            {"<html><body>hello</body></html>", -ENOMSG, 0, 0},
            {"", -ENOMSG, 0, 0},
            {"<other>WISPAccessGatewayParam</other>", -ENOMSG, 0, 0},
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                WisprMessage m = {};
                int r = parse(table[i].doc, &m);

                if (r != table[i].r)
                        TEST_FAIL("case %zu (%s): %d != %d", i, table[i].doc, r, table[i].r);
                if (r == 0) {
                        ASSERT_EQ(m.element, table[i].element);
                        ASSERT_EQ(m.outcome, table[i].outcome);
                }
                wispr_message_done(&m);
        }
}

TEST(wispr_html_comment)
{
        static const char page[] =
            "<!DOCTYPE html>\n<html><head><title>Cafe</title></head><body>\n"
            "<p>Welcome</p>\n<!--\n<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            "<WISPAccessGatewayParam xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\">\n"
            "<Redirect>\n<AccessProcedure>1.0</AccessProcedure>\n"
            "<AccessLocation>cafe-1</AccessLocation>\n"
            "<LocationName>Cafe &amp; Bar</LocationName>\n"
            "<LoginURL>https://Portal.Example:8443/wispr/login?a=1&amp;b=2</LoginURL>\n"
            "<AbortLoginURL>https://portal.example/abort</AbortLoginURL>\n"
            "<MessageType>100</MessageType>\n<ResponseCode>0</ResponseCode>\n"
            "</Redirect>\n</WISPAccessGatewayParam>\n-->\n</body></html>\n";
        WisprMessage m = {};
        _cleanup_free_ char *host = NULL;

        ASSERT_OK(parse(page, &m));
        ASSERT_EQ(m.element, WISPR_ELEMENT_REDIRECT);
        ASSERT_EQ(m.message_type, 100);
        ASSERT_EQ(m.response_code, 0);
        ASSERT_EQ(m.outcome, WISPR_OUTCOME_LOGIN_OFFERED);
        ASSERT_STREQ(m.access_procedure, "1.0");
        ASSERT_STREQ(m.access_location, "cafe-1");
        ASSERT_STREQ(m.location_name, "Cafe & Bar");
        ASSERT_STREQ(m.login_url, "https://Portal.Example:8443/wispr/login?a=1&b=2");
        ASSERT_STREQ(m.abort_login_url, "https://portal.example/abort");
        host = wispr_url_host(m.login_url);
        ASSERT_STREQ(host, "portal.example");
        wispr_message_done(&m);
        ASSERT_TRUE(m.login_url == NULL);
        wispr_message_done(&m);
        wispr_message_done(NULL);
}

TEST(wispr_xml_body_and_fields)
{
        static const char doc[] = "\xef\xbb\xbf  <?xml version=\"1.0\"?>\n" MSG(
            "AuthenticationReply",
            "<MessageType> 120 </MessageType><ResponseCode>201</ResponseCode>"
            "<ReplyMessage>  Please\twait </ReplyMessage><Delay>5</Delay>" RESULTS
            "<LogoffURL><![CDATA[https://portal.example/logoff]]></LogoffURL>");
        WisprMessage m = {};

        ASSERT_OK(parse(doc, &m));
        ASSERT_EQ(m.outcome, WISPR_OUTCOME_PENDING);
        ASSERT_STREQ(m.reply_message, "Please wait");
        ASSERT_TRUE(m.has_delay);
        ASSERT_EQ(m.delay, 5);
        ASSERT_STREQ(m.login_results_url, "https://portal.example/results");
        ASSERT_STREQ(m.logoff_url, "https://portal.example/logoff");
        wispr_message_done(&m);
}

TEST(wispr_html_elements_without_comment)
{
        /* Some gateways put the elements straight into the HTML; the HTML parser lower-cases
         * them. */
        WisprMessage m = {};

        ASSERT_OK(parse("<html><body><WISPAccessGatewayParam><Redirect>" TC(100, 0) LOGIN
                        "</Redirect></WISPAccessGatewayParam></body></html>",
                        &m));
        ASSERT_EQ(m.outcome, WISPR_OUTCOME_LOGIN_OFFERED);
        ASSERT_STREQ(m.login_url, "https://portal.example/login");
        wispr_message_done(&m);
}

TEST(wispr_hostile_entities)
{
        static const char xxe[] =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE WISPAccessGatewayParam "
            "[<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n" MSG(
                "Redirect", TC(100, 0) "<LocationName>&x;</LocationName>" LOGIN);
        static const char laughs[] =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE l [\n<!ENTITY a \"lollollollollol\">\n"
            "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
            "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">\n"
            "<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\">\n"
            "<!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">\n"
            "<!ENTITY f \"&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;\">\n"
            "]>\n" MSG("Redirect", TC(100, 0) "<LocationName x=\"&f;\">&f;</LocationName>" LOGIN);
        /* The same, hidden in the comment of an HTML page (whose own DOCTYPE is fine). */
        static const char in_html[] =
            "<!DOCTYPE html><html><!-- <!DOCTYPE x [<!ENTITY a "
            "\"b\">]>" MSG("Redirect",
                           TC(100, 0) LOGIN "<LocationName>&a;</LocationName>") " --></html>";
        static const char undeclared[] =
            MSG("Redirect", TC(100, 0) LOGIN "<LocationName>&nope;</LocationName>");
        WisprMessage m = {};

        ASSERT_EQ(parse(xxe, &m), -EBADMSG);
        ASSERT_EQ(parse(laughs, &m), -EBADMSG);
        ASSERT_EQ(parse(in_html, &m), -EBADMSG);
        /* An undeclared entity is a well-formedness error. */
        ASSERT_EQ(parse(undeclared, &m), -EBADMSG);
        ASSERT_TRUE(m.login_url == NULL && m.location_name == NULL);
}

TEST(wispr_hostile_sizes)
{
        size_t big = 10u * 1024 * 1024, n = 0;
        _cleanup_free_ char *s = malloc(big + 1);
        WisprMessage m = {};

        ASSERT_TRUE(s);
        memset(s, 'a', big);
        s[big] = 0;
        memcpy(s, "<!--" ROOT("") "-->", strlen("<!--" ROOT("") "-->"));
        ASSERT_EQ(wispr_parse(s, big, &m), -EFBIG);
        ASSERT_EQ(wispr_parse(s, WISPR_BODY_MAX + 1, &m), -EFBIG);

        /* Deep nesting, XML: libxml2's own limit (256 without XML_PARSE_HUGE) refuses it. */
        n = 0;
        n += sprintf(s + n, "<WISPAccessGatewayParam>");
        for (int i = 0; i < 5000; i++)
                n += sprintf(s + n, "<a>");
        for (int i = 0; i < 5000; i++)
                n += sprintf(s + n, "</a>");
        n += sprintf(s + n, "</WISPAccessGatewayParam>");
        ASSERT_EQ(wispr_parse(s, n, &m), -EBADMSG);

        /* Deep nesting, HTML: the comment below our depth limit is not looked at. */
        n = sprintf(s, "<html><body>");
        for (int i = 0; i < 20000; i++)
                n += sprintf(s + n, "<div>");
        n += sprintf(s + n, "<!--" MSG("Redirect", TC(100, 0) LOGIN) "-->");
        ASSERT_EQ(wispr_parse(s, n, &m), -ENOMSG);

        /* Long text in a field. */
        n = sprintf(s, "<WISPAccessGatewayParam><Redirect>" TC(100, 0) LOGIN "<LocationName>");
        memset(s + n, 'x', 5000);
        n += 5000;
        n += sprintf(s + n, "</LocationName></Redirect></WISPAccessGatewayParam>");
        ASSERT_EQ(wispr_parse(s, n, &m), -EBADMSG);

        /* NUL bytes. */
        ASSERT_EQ(wispr_parse(ROOT("\0"), sizeof(ROOT("\0")) - 1, &m), -EBADMSG);
}

TEST(wispr_declared_encodings)
{
        /* UTF-7 hides markup from every check before libxml2 ("+ADw-" is '<'). */
        static const char utf7[] =
            "<?xml version=\"1.0\" encoding=\"UTF-7\"?>\n" MSG("Redirect", TC(100, 0) LOGIN);
        static const char utf16[] =
            "<?xml version='1.0' encoding='utf-16'?>" MSG("Redirect", TC(100, 0) LOGIN);
        static const char in_comment[] =
            "<html><body><!--<?xml version=\"1.0\" encoding = \"ISO-2022-JP\" ?>" MSG(
                "Redirect", TC(100, 0) LOGIN) "--></body></html>";
        static const char meta_charset[] =
            "<html><head><meta charset=\"UTF-7\"></head><body><!--" MSG(
                "Redirect", TC(100, 0) LOGIN) "--></body></html>";
        static const char meta_http_equiv[] =
            "<html><head><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; "
            "charset=shift_jis\"></head><body><!--" MSG("Redirect", TC(100, 0) LOGIN) "--></body>"
                                                                                      "</html>";
        static const char bom16[] = "\xff\xfe<WISPAccessGatewayParam>";
        /* The three allowed, in any case, and the usual forms of saying so. */
        static const char latin1[] = "<?xml version=\"1.0\" encoding=\"iso-8859-1\"?>" MSG(
            "Redirect", TC(100, 0) LOGIN "<LocationName>Caf\xe9</LocationName>");
        static const char ascii[] =
            "<?xml version=\"1.0\" encoding='US-ASCII'?>" MSG("Redirect", TC(100, 0) LOGIN);
        static const char html_ok[] =
            "<html><head><meta http-equiv=\"content-type\" content=\"text/html; "
            "charset=utf-8\"><meta charset=UTF-8></head><body><!--" MSG(
                "Redirect", TC(100, 0) LOGIN) "--></body></html>";
        WisprMessage m = {};

        ASSERT_EQ(parse(utf7, &m), -EILSEQ);
        ASSERT_EQ(parse(utf16, &m), -EILSEQ);
        ASSERT_EQ(parse(in_comment, &m), -EILSEQ);
        ASSERT_EQ(parse(meta_charset, &m), -EILSEQ);
        ASSERT_EQ(parse(meta_http_equiv, &m), -EILSEQ);
        ASSERT_EQ(wispr_parse(bom16, sizeof(bom16) - 1, &m), -EILSEQ);
        ASSERT_TRUE(m.login_url == NULL);
        ASSERT_TRUE(strstr(wispr_error_to_string(-EILSEQ), "UTF-8, US-ASCII and ISO-8859-1"));

        ASSERT_OK(parse(latin1, &m));
        ASSERT_STREQ(m.location_name, "Caf\xc3\xa9"); /* libxml2 gives UTF-8 */
        wispr_message_done(&m);
        ASSERT_OK(parse(ascii, &m));
        wispr_message_done(&m);
        ASSERT_OK(parse(html_ok, &m));
        ASSERT_STREQ(m.login_url, "https://portal.example/login");
        wispr_message_done(&m);
}

TEST(wispr_fields_cleaned)
{
        /* C1 CSI, RLO and a zero-width space (as characters and as references) in the names
         * that reach the bus. */
        static const char doc[] =
            MSG("Redirect", TC(100, 0) LOGIN "<LocationName>Caf\xc2\x9b"
                                             "31m\xe2\x80\xae&#x200B;e</LocationName>"
                                             "<AccessLocation>a&#x202E;b&#x85;c</AccessLocation>");
        WisprMessage m = {};

        ASSERT_OK(parse(doc, &m));
        ASSERT_STREQ(m.location_name, "Caf31me");
        ASSERT_STREQ(m.access_location, "abc");
        wispr_message_done(&m);
}

TEST(wispr_login_url_policy)
{
        char *hosts[] = {(char *)"portal.example", (char *)"[2001:db8::1]", NULL};
        static const struct {
                const char *url, *host;
        } hosts_table[] = {
            {"https://portal.example/x", "portal.example"},
            {"https://PORTAL.example:8443/x?y#z", "portal.example"},
            {"http://user:pw@portal.example/", "portal.example"},
            {"https://[2001:db8::1]:443/", "[2001:db8::1]"},
            {"https://portal.example@evil.example/", "evil.example"}, /* user info is no host */
            {"https://portal.example?x=1", "portal.example"},
            {"ftp://portal.example/", NULL},
            {"https:///x", NULL},
            {"portal.example", NULL},
        };

        for (size_t i = 0; i < ELEMENTSOF(hosts_table); i++) {
                _cleanup_free_ char *h = wispr_url_host(hosts_table[i].url);
                if (hosts_table[i].host)
                        ASSERT_STREQ(h, hosts_table[i].host);
                else
                        ASSERT_TRUE(h == NULL);
        }
        ASSERT_TRUE(wispr_login_url_allowed("https://portal.example/login", hosts, false));
        ASSERT_TRUE(wispr_login_url_allowed("https://Portal.Example:444/login", hosts, false));
        ASSERT_TRUE(wispr_login_url_allowed("https://[2001:db8::1]/login", hosts, false));
        ASSERT_TRUE(!wispr_login_url_allowed("http://portal.example/login", hosts, false));
        ASSERT_TRUE(wispr_login_url_allowed("http://portal.example/login", hosts, true));
        ASSERT_TRUE(!wispr_login_url_allowed("https://evil.example/login", hosts, false));
        ASSERT_TRUE(!wispr_login_url_allowed("https://portal.example.evil.example/", hosts, false));
        ASSERT_TRUE(
            !wispr_login_url_allowed("https://evil.example@portal.example.evil/", hosts, false));
        ASSERT_TRUE(!wispr_login_url_allowed("https://portal.example/login", NULL, false));
        ASSERT_TRUE(!wispr_login_url_allowed(NULL, hosts, false));
}

TEST(wispr_words)
{
        for (WisprElement e = 0; e < _WISPR_ELEMENT_MAX; e++)
                ASSERT_TRUE(wispr_element_to_string(e));
        for (WisprOutcome o = 0; o < _WISPR_OUTCOME_MAX; o++)
                ASSERT_TRUE(wispr_outcome_to_string(o));
        ASSERT_TRUE(wispr_element_to_string(_WISPR_ELEMENT_INVALID) == NULL);
        ASSERT_STREQ(wispr_response_code_to_string(100),
                     "login failed (user name or password rejected)");
        ASSERT_STREQ(wispr_error_to_string(-ENOMSG), "the portal page offers no WISPr login");
}
