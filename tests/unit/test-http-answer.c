/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "roam-macro.h"
#include "roamd-http-answer.h"
#include "test.h"

#define PROBE_URL "http://check.test/dir/probe.txt?x=1"
#define BODY      "NetworkManager is online\n"

static const HttpExpect expect_200 = {.status = 200, .body = BODY};
static const HttpExpect expect_204 = {.status = 204, .body = NULL};

/* Classifies a 302 from PROBE_URL with the given Location; returns the portal URL. */
static HttpOutcome redirect(const char *location, char **ret_url)
{
        HttpAnswer a = {.status = 302, .location = location, .body = "", .url = PROBE_URL};

        return http_answer_classify(&a, &expect_200, ret_url);
}

TEST(http_answer_ok)
{
        HttpAnswer a = {.status = 204, .body = "", .url = PROBE_URL};
        char *url = (char *)"untouched";

        ASSERT_EQ(http_answer_classify(&a, &expect_204, &url), HTTP_OUTCOME_OK);
        ASSERT_TRUE(url == NULL);

        a = (HttpAnswer){.status = 200, .body = BODY, .body_size = strlen(BODY), .url = PROBE_URL};
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &url), HTTP_OUTCOME_OK);
        ASSERT_TRUE(url == NULL);

        /* No expected body: any body does. */
        a.body = "whatever";
        a.body_size = 8;
        ASSERT_EQ(http_answer_classify(&a, &(HttpExpect){.status = 200}, &url), HTTP_OUTCOME_OK);
        /* A 204 has no content, whatever body is configured. */
        a.status = 204;
        ASSERT_EQ(http_answer_classify(&a, &(HttpExpect){.status = 204, .body = BODY}, &url),
                  HTTP_OUTCOME_OK);
        /* The caller may not want the URL. */
        ASSERT_EQ(http_answer_classify(&a, &expect_204, NULL), HTTP_OUTCOME_OK);
        /* An expected empty body. */
        a = (HttpAnswer){.status = 200, .url = PROBE_URL};
        ASSERT_EQ(http_answer_classify(&a, &(HttpExpect){.status = 200, .body = ""}, &url),
                  HTTP_OUTCOME_OK);
}

TEST(http_answer_wrong_body)
{
        static const char nul_inside[] = "NetworkManager is online\n\0tail";
        static const char nul_early[] = "NetworkManager\0is online\n";
        static const struct {
                const char *body;
                size_t size;
        } bodies[] = {
            {"<html>Log in</html>", 19},          {"", 0},
            {"NetworkManager is online", 24},     /* one byte short */
            {"NetworkManager is online\n\n", 26}, /* one byte more */
            {"networkmanager is online\n", 25},   {nul_inside, sizeof(nul_inside) - 1},
            {nul_early, sizeof(nul_early) - 1},   {NULL, 25},
        };

        for (size_t i = 0; i < ELEMENTSOF(bodies); i++) {
                HttpAnswer a = {.status = 200,
                                .body = bodies[i].body,
                                .body_size = bodies[i].size,
                                .url = PROBE_URL};
                _cleanup_free_ char *url = NULL;

                if (http_answer_classify(&a, &expect_200, &url) != HTTP_OUTCOME_WRONG)
                        TEST_FAIL("body %zu was not wrong", i);
                /* The portal is wherever the probe URL leads a browser. */
                ASSERT_STREQ(url, PROBE_URL);
        }
}

TEST(http_answer_truncated)
{
        HttpAnswer a = {.status = 200,
                        .body = BODY,
                        .body_size = strlen(BODY),
                        .truncated = true,
                        .url = PROBE_URL};
        _cleanup_free_ char *url = NULL, *url2 = NULL;

        /* Even a body that starts (or ends) exactly right is wrong when it was cut. */
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &url), HTTP_OUTCOME_WRONG);
        ASSERT_STREQ(url, PROBE_URL);
        ASSERT_EQ(http_answer_classify(&a, &(HttpExpect){.status = 200}, &url2),
                  HTTP_OUTCOME_WRONG);
}

TEST(http_answer_wrong_status)
{
        static const long statuses[] = {0, -1, 100, 201, 204, 400, 403, 404, 500, 511, 999};

        for (size_t i = 0; i < ELEMENTSOF(statuses); i++) {
                HttpAnswer a = {.status = statuses[i],
                                .location = "https://portal.test/",
                                .body = BODY,
                                .body_size = strlen(BODY),
                                .url = PROBE_URL};
                _cleanup_free_ char *url = NULL;

                /* A Location outside a 3xx is no redirect. */
                if (http_answer_classify(&a, &expect_200, &url) != HTTP_OUTCOME_WRONG)
                        TEST_FAIL("status %ld was not wrong", statuses[i]);
                ASSERT_STREQ(url, PROBE_URL);
        }
}

TEST(http_answer_redirects)
{
        static const struct {
                const char *location;
                const char *portal;
        } cases[] = {
            /* Absolute. */
            {"https://portal.test/login?from=probe", "https://portal.test/login?from=probe"},
            {"HTTP://Portal.test", "http://Portal.test/"}, /* curl writes it out normalized */
            {"http://portal.test/a/./b/../c", "http://portal.test/a/c"},
            /* Scheme-relative: the probe's scheme. */
            {"//portal.test/login", "http://portal.test/login"},
            {"//portal.test:8080", "http://portal.test:8080/"}, /* an empty path is "/" */
            /* Absolute path: the probe's scheme and host. */
            {"/login", "http://check.test/login"},
            {"/login?a=b#c", "http://check.test/login?a=b#c"},
            {"/a/../../login", "http://check.test/login"},
            /* Relative path: the directory of the probe's path. */
            {"login.html", "http://check.test/dir/login.html"},
            {"sub/login", "http://check.test/dir/sub/login"},
            {"./login", "http://check.test/dir/login"},
            {"../login", "http://check.test/login"},
            {"../../../../login", "http://check.test/login"},
            {"..", "http://check.test/"},
            {".", "http://check.test/dir/"},
            /* Query and fragment only. */
            {"?y=2", "http://check.test/dir/probe.txt?y=2"},
            {"#top", "http://check.test/dir/probe.txt?x=1#top"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_free_ char *url = NULL;
                HttpOutcome o = redirect(cases[i].location, &url);

                if (o != HTTP_OUTCOME_REDIRECT)
                        TEST_FAIL("Location \"%s\": %s", cases[i].location,
                                  http_outcome_to_string(o));
                if (!url || strcmp(url, cases[i].portal) != 0)
                        TEST_FAIL("Location \"%s\": expected \"%s\", got \"%s\"", cases[i].location,
                                  cases[i].portal, strempty(url));
        }
}

TEST(http_answer_redirect_statuses_and_bases)
{
        static const long statuses[] = {301, 302, 303, 307, 308};
        _cleanup_free_ char *u1 = NULL, *u2 = NULL, *u3 = NULL, *u4 = NULL;
        HttpAnswer a = {.location = "/portal", .url = PROBE_URL, .truncated = true};

        /* Any 3xx with a usable Location; a redirect's body does not matter, cut or not. */
        for (size_t i = 0; i < ELEMENTSOF(statuses); i++) {
                _cleanup_free_ char *url = NULL;
                a.status = statuses[i];
                ASSERT_EQ(http_answer_classify(&a, &expect_200, &url), HTTP_OUTCOME_REDIRECT);
                ASSERT_STREQ(url, "http://check.test/portal");
        }

        /* Bases without a path, with a port, with userinfo, https. */
        a = (HttpAnswer){.status = 302, .location = "login", .url = "http://check.test"};
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &u1), HTTP_OUTCOME_REDIRECT);
        ASSERT_STREQ(u1, "http://check.test/login");
        a = (HttpAnswer){.status = 302, .location = "/x", .url = "https://check.test:8443/a/b"};
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &u2), HTTP_OUTCOME_REDIRECT);
        ASSERT_STREQ(u2, "https://check.test:8443/x");
        a = (HttpAnswer){.status = 302, .location = "//p.test/", .url = "https://check.test/"};
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &u3), HTTP_OUTCOME_REDIRECT);
        ASSERT_STREQ(u3, "https://p.test/");
        a = (HttpAnswer){.status = 302, .location = "y", .url = "http://u:p@check.test/a/"};
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &u4), HTTP_OUTCOME_REDIRECT);
        ASSERT_STREQ(u4, "http://u:p@check.test/a/y");

        /* The caller may not want the URL. */
        ASSERT_EQ(http_answer_classify(&a, &expect_200, NULL), HTTP_OUTCOME_REDIRECT);
}

TEST(http_answer_bad_locations)
{
        static const char *const bad[] = {
            "",
            "javascript:alert(1)",
            "JavaScript:alert(document.cookie)",
            "data:text/html,<script>x</script>",
            "ftp://portal.test/",
            "file:///etc/passwd",
            "http:portal.test",
            "http://",
            "http:///path",
            "//",
            "https://portal.test/a b",
            " https://portal.test/",
            "https://portal.test/\n",
            "https://portal.test/\r\nSet-Cookie: x=y",
            "https://portal.test/\t",
            "https://portal.test/\x7f",
            "https://portal.test/caf\xc3\xa9",
            "login page",
        };
        _cleanup_free_ char *none = NULL;
        HttpAnswer a = {.status = 302, .url = PROBE_URL};

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_free_ char *url = NULL;
                HttpOutcome o = redirect(bad[i], &url);

                if (o != HTTP_OUTCOME_WRONG)
                        TEST_FAIL("Location \"%s\": %s", bad[i], http_outcome_to_string(o));
                /* The probe URL, never the unusable Location. */
                ASSERT_STREQ(url, PROBE_URL);
        }

        /* Without a Location a 302 is just a wrong answer. */
        ASSERT_EQ(http_answer_classify(&a, &expect_200, &none), HTTP_OUTCOME_WRONG);
        ASSERT_STREQ(none, PROBE_URL);
}

TEST(http_answer_long_location)
{
        char loc[2100];
        _cleanup_free_ char *ok = NULL, *too_long = NULL, *resolved_too_long = NULL;

        /* 2048 bytes is the limit, for the Location and for the resolved URL. */
        memcpy(loc, "https://portal.test/", 20);
        memset(loc + 20, 'a', 2048 - 20);
        loc[2048] = 0;
        ASSERT_EQ(redirect(loc, &ok), HTTP_OUTCOME_REDIRECT);
        ASSERT_EQ(strlen(ok), 2048);

        loc[2048] = 'a';
        loc[2049] = 0;
        ASSERT_EQ(redirect(loc, &too_long), HTTP_OUTCOME_WRONG);
        ASSERT_STREQ(too_long, PROBE_URL);

        /* Short enough itself, too long once resolved against the probe URL. */
        memset(loc, 'a', 2040);
        loc[2040] = 0;
        ASSERT_EQ(redirect(loc, &resolved_too_long), HTTP_OUTCOME_WRONG);
        ASSERT_STREQ(resolved_too_long, PROBE_URL);
}

TEST(http_answer_odd_probe_urls)
{
        static const char *const urls[] = {NULL,      "",    "check.test/probe",
                                           "http://", "x:y", "http://check.test/\x01"};

        for (size_t i = 0; i < ELEMENTSOF(urls); i++) {
                _cleanup_free_ char *u1 = NULL, *u2 = NULL, *u3 = NULL;
                HttpAnswer a = {.status = 302, .location = "/login", .url = urls[i]};

                /* A relative Location means nothing without a usable base; no portal URL is
                 * made up from a probe URL that is not one. */
                ASSERT_EQ(http_answer_classify(&a, &expect_200, &u1), HTTP_OUTCOME_WRONG);
                ASSERT_TRUE(u1 == NULL);
                a.location = "https://portal.test/";
                ASSERT_EQ(http_answer_classify(&a, &expect_200, &u2), HTTP_OUTCOME_REDIRECT);
                ASSERT_STREQ(u2, "https://portal.test/");
                a.status = 200;
                ASSERT_EQ(http_answer_classify(&a, &expect_200, &u3), HTTP_OUTCOME_WRONG);
                ASSERT_TRUE(u3 == NULL);
        }
}

TEST(http_url_ok)
{
        ASSERT_TRUE(http_url_ok("http://a", false));
        ASSERT_TRUE(http_url_ok("https://a:1/b?c#d", false));
        ASSERT_TRUE(http_url_ok("https://a", true));
        ASSERT_TRUE(!http_url_ok("http://a", true));
        ASSERT_TRUE(!http_url_ok("httpx://a", false));
        ASSERT_TRUE(!http_url_ok("://a", false));
        ASSERT_TRUE(!http_url_ok("http//a", false));
        ASSERT_TRUE(!http_url_ok(NULL, false));
}

static const char *special(const char *text)
{
        struct in6_addr a;
        int family = strchr(text, ':') ? AF_INET6 : AF_INET;

        ASSERT_TRUE(inet_pton(family, text, &a) == 1);
        return http_target_special(family, &a);
}

TEST(http_target_special)
{
        ASSERT_STREQ(special("127.0.0.1"), "a loopback address");
        ASSERT_STREQ(special("127.1.2.3"), "a loopback address");
        ASSERT_STREQ(special("::1"), "a loopback address");
        ASSERT_STREQ(special("::ffff:127.0.0.1"), "a loopback address");
        ASSERT_STREQ(special("0.0.0.0"), "the unspecified address");
        ASSERT_STREQ(special("0.1.2.3"), "the unspecified address");
        ASSERT_STREQ(special("::"), "the unspecified address");
        ASSERT_STREQ(special("224.0.0.1"), "a multicast address");
        ASSERT_STREQ(special("239.255.255.250"), "a multicast address");
        ASSERT_STREQ(special("ff02::1"), "a multicast address");
        ASSERT_STREQ(special("255.255.255.255"), "the broadcast address");
        ASSERT_STREQ(special("::ffff:224.0.0.1"), "a multicast address");
        ASSERT_TRUE(special("192.0.2.1") == NULL);
        ASSERT_TRUE(special("203.0.113.10") == NULL);
        ASSERT_TRUE(special("2001:db8::1") == NULL);
        ASSERT_TRUE(special("fe80::1") == NULL);
        ASSERT_TRUE(special("::ffff:198.51.100.1") == NULL);
        ASSERT_STREQ(http_target_special(AF_UNIX, "x"), "not an IP address");
}
