/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>

#include "roamd-capport.h"
#include "test.h"

static int parse(const char *text, CapportInfo *ret)
{
        return capport_parse(text, strlen(text), ret);
}

TEST(capport_rfc8908_example)
{
        /* RFC 8908 section 5, verbatim. */
        static const char doc[] = "{\n"
                                  "   \"captive\": true,\n"
                                  "   \"user-portal-url\": \"https://example.org/portal.html\",\n"
                                  "   \"venue-info-url\": \"https://flight.example.com/"
                                  "entertainment\",\n"
                                  "   \"seconds-remaining\": 326,\n"
                                  "   \"can-extend-session\": true\n"
                                  "}\n";
        CapportInfo i = {};

        ASSERT_OK(parse(doc, &i));
        ASSERT_TRUE(i.captive);
        ASSERT_STREQ(i.user_portal_url, "https://example.org/portal.html");
        ASSERT_STREQ(i.venue_info_url, "https://flight.example.com/entertainment");
        ASSERT_TRUE(i.has_seconds_remaining);
        ASSERT_EQ(i.seconds_remaining, 326);
        ASSERT_TRUE(!i.has_bytes_remaining);
        ASSERT_TRUE(i.can_extend_session);
        capport_info_done(&i);
        ASSERT_TRUE(i.user_portal_url == NULL && i.venue_info_url == NULL);
        /* Idempotent, and NULL is fine. */
        capport_info_done(&i);
        capport_info_done(NULL);
}

TEST(capport_not_captive_and_minimal)
{
        CapportInfo i = {};

        ASSERT_OK(parse("{\"captive\": false}", &i));
        ASSERT_TRUE(!i.captive);
        ASSERT_TRUE(i.user_portal_url == NULL && i.venue_info_url == NULL);
        ASSERT_TRUE(!i.has_seconds_remaining && !i.has_bytes_remaining && !i.can_extend_session);
        capport_info_done(&i);

        ASSERT_OK(parse("{\"captive\":true}", &i));
        ASSERT_TRUE(i.captive);
        capport_info_done(&i);

        /* Whitespace around the object is fine. */
        ASSERT_OK(parse(" \r\n\t{ \"captive\" : false } \n", &i));
        capport_info_done(&i);
}

TEST(capport_all_fields_and_extensions)
{
        static const char doc[] = "{\"captive\": false,"
                                  " \"user-portal-url\": \"https://portal.test:8443/a?b=c#d\","
                                  " \"venue-info-url\": \"http://venue.test/\","
                                  " \"seconds-remaining\": 0,"
                                  " \"bytes-remaining\": 9223372036854775806,"
                                  " \"can-extend-session\": false,"
                                  " \"x-vendor\": {\"nested\": [1, 2.5, null, \"\\u0000\"]},"
                                  " \"other\": \"caf\\u00e9\"}";
        CapportInfo i = {};

        ASSERT_OK(parse(doc, &i));
        ASSERT_TRUE(!i.captive);
        ASSERT_STREQ(i.user_portal_url, "https://portal.test:8443/a?b=c#d");
        ASSERT_STREQ(i.venue_info_url, "http://venue.test/");
        ASSERT_TRUE(i.has_seconds_remaining);
        ASSERT_EQ(i.seconds_remaining, 0);
        ASSERT_TRUE(i.has_bytes_remaining);
        ASSERT_TRUE(i.bytes_remaining == 9223372036854775806ULL);
        ASSERT_TRUE(!i.can_extend_session);
        capport_info_done(&i);
}

TEST(capport_malformed)
{
        static const char *const bad[] = {
            "",
            "garbage",
            "captive: true",
            "true",
            "null",
            "\"captive\"",
            "[{\"captive\": true}]",
            "[]",
            "{}",
            "{\"Captive\": true}",
            "{\"captive\": \"true\"}",
            "{\"captive\": 1}",
            "{\"captive\": null}",
            "{\"captive\": true,}",
            "{\"captive\": true} {}",
            "{\"captive\": true} x",
            "{\"captive\": true",
            "{\"captive\": tr",
            "{\"captive\": true, \"seconds-remaining\": -1}",
            "{\"captive\": true, \"seconds-remaining\": 1.5}",
            "{\"captive\": true, \"seconds-remaining\": 1e3}",
            "{\"captive\": true, \"seconds-remaining\": \"60\"}",
            "{\"captive\": true, \"seconds-remaining\": 0x10}",
            "{\"captive\": true, \"seconds-remaining\": 012}",
            "{\"captive\": true, \"bytes-remaining\": 18446744073709551616}",
            "{\"captive\": true, \"bytes-remaining\": 99999999999999999999999999999}",
            "{\"captive\": true, \"bytes-remaining\": 9223372036854775807}",
            "{\"captive\": true, \"bytes-remaining\": -99999999999999999999999999}",
            "{\"captive\": true, \"can-extend-session\": \"yes\"}",
            "{\"captive\": true, \"user-portal-url\": \"http://portal.test/\"}",
            "{\"captive\": true, \"user-portal-url\": \"ftp://portal.test/\"}",
            "{\"captive\": true, \"user-portal-url\": \"javascript:alert(1)\"}",
            "{\"captive\": true, \"user-portal-url\": \"https:///nohost\"}",
            "{\"captive\": true, \"user-portal-url\": \"/relative\"}",
            "{\"captive\": true, \"user-portal-url\": \"\"}",
            "{\"captive\": true, \"user-portal-url\": 5}",
            "{\"captive\": true, \"user-portal-url\": null}",
            "{\"captive\": true, \"user-portal-url\": \"https://portal.test/a b\"}",
            "{\"captive\": true, \"user-portal-url\": \"https://portal.test/a\\nb\"}",
            "{\"captive\": true, \"user-portal-url\": \"https://portal.test/a\\u0000b\"}",
            "{\"captive\": true, \"user-portal-url\": \"https://portal.test/caf\\u00e9\"}",
            "{\"captive\": true, \"venue-info-url\": \"https://venue.test/\\t\"}",
            "{\"captive\": true, \"venue-info-url\": \"gopher://venue.test/\"}",
            "{\"captive\": true, \"venue-info-url\": [\"https://venue.test/\"]}",
            "{\"captive\": true, \"x\": \"\xff\xfe\"}",
            /* RFC 8908 strings go on the bus and to terminals (issue 26): a bidi override,
             * C1 CSI and broken UTF-8, escaped and raw, are refused with the URL. */
            "{\"captive\": true, \"user-portal-url\": \"https://portal.test/\\u202egnp.exe\"}",
            "{\"captive\": true, \"user-portal-url\": \"https://portal.test/\xe2\x80\xae\"}",
            "{\"captive\": true, \"venue-info-url\": \"https://venue.test/\\u009b2J\"}",
            "{\"captive\": true, \"venue-info-url\": \"https://venue.test/\xc3\x28\"}",
        };
        CapportInfo i = {};

        for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
                int r = parse(bad[k], &i);
                if (r != -EBADMSG)
                        TEST_FAIL("case %zu (%s): expected -EBADMSG, got %d", k, bad[k], r);
                /* Nothing is handed out on failure. */
                ASSERT_TRUE(i.user_portal_url == NULL && i.venue_info_url == NULL);
        }
        ASSERT_EQ(capport_parse(NULL, 0, &i), -EBADMSG);
}

TEST(capport_long_url)
{
        char url[2100], doc[2300];
        CapportInfo i = {};

        /* 2048 bytes is the limit, 2049 is over. */
        memcpy(url, "https://portal.test/", 20);
        memset(url + 20, 'a', 2048 - 20);
        url[2048] = 0;
        snprintf(doc, sizeof(doc), "{\"captive\": true, \"user-portal-url\": \"%s\"}", url);
        ASSERT_OK(parse(doc, &i));
        ASSERT_EQ(strlen(i.user_portal_url), 2048);
        capport_info_done(&i);

        url[2048] = 'a';
        url[2049] = 0;
        snprintf(doc, sizeof(doc), "{\"captive\": true, \"user-portal-url\": \"%s\"}", url);
        ASSERT_EQ(parse(doc, &i), -EBADMSG);
}

TEST(capport_depth_bomb)
{
        char doc[4096];
        size_t n = 0;
        CapportInfo i = {};

        n += snprintf(doc, sizeof(doc), "{\"captive\": true, \"x\": ");
        for (int k = 0; k < 1000; k++)
                doc[n++] = '[';
        for (int k = 0; k < 1000; k++)
                doc[n++] = ']';
        doc[n++] = '}';
        doc[n] = 0;
        ASSERT_EQ(parse(doc, &i), -EBADMSG);

        /* A few levels of extension are fine. */
        ASSERT_OK(parse("{\"captive\": true, \"x\": [[[{\"y\": [1]}]]]}", &i));
        capport_info_done(&i);
}

/* A document of size bytes: {"captive": true, "pad": "aaa...a"} */
static char *padded(size_t size)
{
        static const char head[] = "{\"captive\": true, \"pad\": \"";
        char *doc = malloc(size + 1);

        if (!doc)
                return NULL;
        memcpy(doc, head, sizeof(head) - 1);
        memset(doc + sizeof(head) - 1, 'a', size - (sizeof(head) - 1) - 2);
        memcpy(doc + size - 2, "\"}", 3);
        return doc;
}

TEST(capport_size_limit)
{
        char *big = padded(70 * 1024), *max = padded(64 * 1024), *over = padded(64 * 1024 + 1);
        CapportInfo i = {};
        int r_big, r_max, r_over;

        ASSERT_TRUE(big && max && over);
        r_big = capport_parse(big, 70 * 1024, &i);
        r_over = capport_parse(over, 64 * 1024 + 1, &i);
        r_max = capport_parse(max, 64 * 1024, &i);
        free(big);
        free(max);
        free(over);
        ASSERT_EQ(r_big, -EBADMSG);
        ASSERT_EQ(r_over, -EBADMSG);
        /* Exactly 64 KiB is still accepted. */
        ASSERT_EQ(r_max, 0);
        ASSERT_TRUE(i.captive);
        capport_info_done(&i);
}

TEST(capport_nul_inside)
{
        static const char doc[] = "{\"captive\": true}\0{\"captive\": false}";
        static const char doc2[] = "{\"captive\": true, \0\"x\": 1}";
        CapportInfo i = {};

        ASSERT_EQ(capport_parse(doc, sizeof(doc) - 1, &i), -EBADMSG);
        ASSERT_EQ(capport_parse(doc2, sizeof(doc2) - 1, &i), -EBADMSG);
        /* A size that stops before the NUL sees a good document. */
        ASSERT_OK(capport_parse(doc, strlen(doc), &i));
        capport_info_done(&i);
}

TEST(capport_content_type)
{
        ASSERT_TRUE(capport_content_type_ok("application/captive+json"));
        ASSERT_TRUE(capport_content_type_ok("Application/Captive+JSON; charset=utf-8"));
        ASSERT_TRUE(capport_content_type_ok("application/captive+json;charset=utf-8"));
        ASSERT_TRUE(capport_content_type_ok(" application/captive+json ; x=y"));
        ASSERT_TRUE(!capport_content_type_ok("application/json"));
        ASSERT_TRUE(!capport_content_type_ok("text/html"));
        ASSERT_TRUE(!capport_content_type_ok(""));
        ASSERT_TRUE(!capport_content_type_ok(NULL));
        ASSERT_TRUE(!capport_content_type_ok("application/captive+jsonx"));
        ASSERT_TRUE(!capport_content_type_ok("application/captive+json, text/html"));
        ASSERT_TRUE(!capport_content_type_ok("application/captive"));
        ASSERT_TRUE(!capport_content_type_ok("xapplication/captive+json"));
}

TEST(capport_api_url)
{
        ASSERT_TRUE(capport_api_url_ok("https://cafe.test/api/x"));
        ASSERT_TRUE(capport_api_url_ok("HTTPS://cafe.test:8443/api?x=1"));
        ASSERT_TRUE(capport_api_url_ok("https://[2001:db8::1]/api"));
        ASSERT_TRUE(!capport_api_url_ok("http://cafe.test/api"));
        ASSERT_TRUE(!capport_api_url_ok("https://"));
        ASSERT_TRUE(!capport_api_url_ok("https:///api"));
        ASSERT_TRUE(!capport_api_url_ok("https://user@/api"));
        ASSERT_TRUE(!capport_api_url_ok("https://:443/api"));
        ASSERT_TRUE(!capport_api_url_ok("https:cafe.test"));
        ASSERT_TRUE(!capport_api_url_ok("https://cafe.test/a b"));
        ASSERT_TRUE(!capport_api_url_ok("https://cafe.test/a\tb"));
        ASSERT_TRUE(!capport_api_url_ok("https://cafe.test/\x7f"));
        ASSERT_TRUE(!capport_api_url_ok("https://caf\xc3\xa9.test/"));
        ASSERT_TRUE(!capport_api_url_ok(""));
        ASSERT_TRUE(!capport_api_url_ok(NULL));
}
