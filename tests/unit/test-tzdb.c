/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-tzdb.h"
#include "test.h"
#include "tz-fixture.h"

/* The MCC table is a fixture in the database's layout; the zones are the system's tzdata (the
 * dates below are in years whose rules are settled). */
#define JANUARY_2024 ((usec_t)1705320000 * S) /* 2024-01-15T12:00:00Z */

TEST(candidates_table)
{
        static const struct {
                const char *mcc;
                int offset, dst;
                usec_t when;
                const char *zones; /* space-separated, sorted */
        } cases[] = {
            /* a single-zone country (Büsingen's Europe/Zurich is Switzerland's row) */
            {"262", 120, 1, JULY_2024, "Europe/Berlin"},
            {"262", 60, 0, JANUARY_2024, "Europe/Berlin"},
            {"262", 60, 1, JULY_2024, ""},  /* wrong offset for Germany in July */
            {"262", 120, 0, JULY_2024, ""}, /* right offset, but DST must be in force */
            {"262", 120, -1, JULY_2024, "Europe/Berlin"}, /* DST unknown: not checked */
            /* the US narrowed by offset and DST: Arizona keeps standard time */
            {"310", -420, 0, JULY_2024, "America/Phoenix"},
            {"310", -360, 1, JULY_2024, "America/Boise America/Denver"},
            {"310", -420, 1, JULY_2024, "America/Los_Angeles"},
            {"311", -600, 0, JULY_2024, "Pacific/Honolulu"},
            /* Puerto Rico and Guam use US MCCs (the exception table) */
            {"310", -240, 0, JULY_2024, "America/Puerto_Rico"},
            {"310", 600, 0, JULY_2024, "Pacific/Guam"},
            /* Russia: one zone at +12, several at +3 */
            {"250", 720, 0, JULY_2024, "Asia/Anadyr Asia/Kamchatka"},
            {"250", 180, 0, JULY_2024,
             "Europe/Kirov Europe/Moscow Europe/Simferopol Europe/Volgograd"},
            /* Australia in January (southern summer): DST splits +10:30 and +9:30 */
            {"505", 570, 0, JANUARY_2024, "Australia/Darwin"},
            {"505", 630, 1, JANUARY_2024, "Australia/Adelaide Australia/Broken_Hill"},
            {"505", 660, 1, JANUARY_2024,
             "Antarctica/Macquarie Australia/Hobart Australia/Lord_Howe Australia/Melbourne "
             "Australia/Sydney"}, /* Lord Howe: +10:30 with half an hour of DST */
            {"505", 660, 0, JULY_2024, "Pacific/Norfolk"}, /* shares the MCC */
            {"505", 480, -1, JULY_2024, "Australia/Perth"},
            /* Brazil: the far west is -5 */
            {"724", -300, 0, JULY_2024, "America/Eirunepe America/Rio_Branco"},
            /* the Crown Dependencies share the UK's zone and MCC */
            {"234", 60, 1, JULY_2024, "Europe/London"},
            /* French Antilles (exception, not in the fixture at all) */
            {"340", -180, 0, JULY_2024, "America/Cayenne"},
            {"340", -240, 0, JULY_2024, "America/Martinique America/Puerto_Rico"},
            /* Nepal's quarter hour */
            {"429", 345, 0, JULY_2024, "Asia/Kathmandu"},
        };
        TzDb *db = fixture();

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_strv_free_ char **l = NULL;
                int r = tzdb_candidates(db, cases[i].mcc, cases[i].offset, cases[i].dst,
                                        cases[i].when, &l);
                if (r < 0)
                        TEST_FAIL("%s %+d: %d", cases[i].mcc, cases[i].offset, r);
                if (!streq(joined(l), cases[i].zones))
                        TEST_FAIL("%s %+d dst %d: \"%s\" != \"%s\"", cases[i].mcc, cases[i].offset,
                                  cases[i].dst, joined(l), cases[i].zones);
        }
        tzdb_free(db);
}

TEST(mcc_countries_and_exceptions)
{
        TzDb *db = fixture();
        char **l = NULL;

        ASSERT_EQ(tzdb_mcc_countries(db, "262", &l), 0);
        ASSERT_STREQ(joined(l), "DE");
        l = strv_free(l);
        /* the database files a Ugandan network under 250: Russia only */
        ASSERT_EQ(tzdb_mcc_countries(db, "250", &l), 0);
        ASSERT_STREQ(joined(l), "RU");
        l = strv_free(l);
        ASSERT_EQ(tzdb_mcc_countries(db, "641", &l), 0);
        ASSERT_STREQ(joined(l), "UG");
        l = strv_free(l);
        ASSERT_EQ(tzdb_mcc_countries(db, "234", &l), 0);
        ASSERT_STREQ(joined(l), "GB GG IM JE");
        l = strv_free(l);
        ASSERT_EQ(tzdb_mcc_countries(db, "647", &l), 0);
        ASSERT_STREQ(joined(l), "RE YT");
        l = strv_free(l);
        /* unknown, international, and not an MCC at all */
        ASSERT_EQ(tzdb_mcc_countries(db, "777", &l), -ENOENT);
        ASSERT_EQ(tzdb_mcc_countries(db, "901", &l), -ENOENT);
        ASSERT_EQ(tzdb_mcc_countries(db, "12a", &l), -EINVAL);
        ASSERT_EQ(tzdb_mcc_countries(db, "2620", &l), -EINVAL);
        ASSERT_EQ(tzdb_mcc_countries(db, "", &l), -EINVAL);
        ASSERT_TRUE(!l);
        ASSERT_EQ(tzdb_candidates(db, "777", 0, 0, JULY_2024, &l), -ENOENT);
        tzdb_free(db);
}

TEST(zone_offset)
{
        TzDb *db = NULL;
        int off;
        bool dst;

        setenv("TZ", "UTC", 1);
        ASSERT_OK(tzdb_new(NULL, NULL, &db));
        ASSERT_EQ(tzdb_zone_offset(db, "America/New_York", JULY_2024, &off, &dst), 0);
        ASSERT_EQ(off, -240);
        ASSERT_TRUE(dst);
        ASSERT_EQ(tzdb_zone_offset(db, "America/New_York", JANUARY_2024, &off, &dst), 0);
        ASSERT_EQ(off, -300);
        ASSERT_TRUE(!dst);
        ASSERT_EQ(tzdb_zone_offset(db, "Australia/Lord_Howe", JANUARY_2024, &off, &dst), 0);
        ASSERT_EQ(off, 660);
        ASSERT_EQ(tzdb_zone_offset(db, "Nowhere/Atlantis", JULY_2024, &off, &dst), -ENOENT);
        ASSERT_EQ(tzdb_zone_offset(db, "../../etc/passwd", JULY_2024, &off, &dst), -EINVAL);
        ASSERT_EQ(tzdb_zone_offset(db, "/etc/localtime", JULY_2024, &off, &dst), -EINVAL);
        ASSERT_EQ(tzdb_zone_offset(db, "Europe/Berlin\n", JULY_2024, &off, &dst), -EINVAL);
        /* the process's own TZ is left as it was */
        ASSERT_STREQ(getenv("TZ"), "UTC");
        unsetenv("TZ");
        ASSERT_EQ(tzdb_zone_offset(db, "Asia/Kathmandu", JULY_2024, &off, &dst), 0);
        ASSERT_EQ(off, 345);
        ASSERT_TRUE(!getenv("TZ"));
        tzdb_free(db);
}

static char last_log[512];
static void capture(int level, const char *message, void *userdata)
{
        (void)level;
        (void)userdata;
        snprintf(last_log, sizeof(last_log), "%s", message);
}

TEST(missing_files)
{
        TzDb *db = NULL;
        char **l = NULL;

        log_set_sink(capture, NULL);
        ASSERT_OK(tzdb_new("/nonexistent/serviceproviders.xml", NULL, &db));
        ASSERT_EQ(tzdb_mcc_countries(db, "262", &l), -ENOENT);
        ASSERT_TRUE(strstr(last_log, "/nonexistent/serviceproviders.xml"));
        ASSERT_TRUE(strstr(last_log, "mobile-broadband-provider-info"));
        /* the exceptions need no file */
        ASSERT_EQ(tzdb_mcc_countries(db, "340", &l), 0);
        l = strv_free(l);
        db = tzdb_free(db);

        char path[4096];
        snprintf(path, sizeof(path), "%s/tz/serviceproviders.xml", test_fixture_dir);
        ASSERT_OK(tzdb_new(path, "/nonexistent/zoneinfo", &db));
        last_log[0] = 0;
        ASSERT_EQ(tzdb_candidates(db, "262", 120, 1, JULY_2024, &l), -ENOENT);
        ASSERT_TRUE(strstr(last_log, "/nonexistent/zoneinfo/zone1970.tab"));
        ASSERT_TRUE(strstr(last_log, "tzdata"));
        db = tzdb_free(db);

        /* not XML */
        snprintf(path, sizeof(path), "%s/tz/not-xml.xml", test_fixture_dir);
        ASSERT_OK(tzdb_new(path, NULL, &db));
        ASSERT_EQ(tzdb_mcc_countries(db, "262", &l), -EBADMSG);
        ASSERT_TRUE(strstr(last_log, "not-xml.xml"));
        db = tzdb_free(db);
        log_set_sink(NULL, NULL);
}

/* The installed database (a dependency of roamd's package), read as roamd reads it. */
TEST(installed_database)
{
        TzDb *db = NULL;
        char **l = NULL;

        if (access(TZDB_PROVIDERS_XML, R_OK) < 0)
                TEST_FAIL("%s missing: tools/install-deps.sh installs it", TZDB_PROVIDERS_XML);
        ASSERT_OK(tzdb_new(NULL, NULL, &db));
        ASSERT_EQ(tzdb_candidates(db, "262", 120, 1, JULY_2024, &l), 0);
        ASSERT_STREQ(joined(l), "Europe/Berlin");
        l = strv_free(l);
        ASSERT_EQ(tzdb_candidates(db, "440", 540, 0, JULY_2024, &l), 0);
        ASSERT_STREQ(joined(l), "Asia/Tokyo");
        l = strv_free(l);
        tzdb_free(db);
}
