/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <syslog.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-config.h"
#include "test.h"

static char captured[4096];

static void capture(int level, const char *msg, void *userdata)
{
        size_t n = strlen(captured);

        if (level <= LOG_ERR)
                snprintf(captured + n, sizeof(captured) - n, "%s\n", msg);
}

static int parse(const char *text, Config **ret)
{
        captured[0] = 0;
        log_set_sink(capture, NULL);
        return config_parse_string("test.conf", text, strlen(text), ret);
}

TEST(stats_config_defaults_and_values)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_TRUE(c->stats.enable);
        ASSERT_EQ(c->stats.flush_usec, 60 * USEC_PER_SEC);
        ASSERT_EQ(c->stats.retention_days, 90);
        ASSERT_TRUE(c->stats.prometheus_file == NULL);
        ASSERT_EQ(config_roaming_override(c, "wwan0"), -ENOENT);
        ASSERT_EQ(config_metered_override(c, "wwan0"), -ENOENT);
        config_free(c);

        ASSERT_OK(parse("[Stats]\nEnable=no\nFlushInterval=0.5s\nRetentionDays=30\n"
                        "Directory=/tmp/x\nPrometheusFile=/tmp/x/usage.prom\n"
                        "[Roaming]\nwwan*=yes\nwwan9=no\n",
                        &c));
        ASSERT_TRUE(!c->stats.enable);
        ASSERT_EQ(c->stats.flush_usec, 500 * USEC_PER_MSEC);
        ASSERT_EQ(c->stats.retention_days, 30);
        ASSERT_STREQ(c->stats.directory, "/tmp/x");
        ASSERT_STREQ(c->stats.prometheus_file, "/tmp/x/usage.prom");
        ASSERT_EQ(config_roaming_override(c, "wwan0"), 1);
        ASSERT_EQ(config_roaming_override(c, "wlan0"), -ENOENT);
        config_free(c);

        ASSERT_OK(parse("[Metered]\nwlan-phone*=yes\nwwan1=no\n", &c));
        ASSERT_EQ(config_metered_override(c, "wlan-phone0"), 1);
        ASSERT_EQ(config_metered_override(c, "wwan1"), 0);
        ASSERT_EQ(config_metered_override(c, "eth0"), -ENOENT);
        ASSERT_EQ(config_roaming_override(c, "wwan1"), -ENOENT);
        config_free(c);
}

TEST(stats_config_errors_have_file_and_line)
{
        static const struct {
                const char *text, *error;
        } cases[] = {
            {"[Stats]\nFlushInterval=0\n", "test.conf:2: FlushInterval= must be a duration"},
            {"[Stats]\nFlushInterval=2h\n", "test.conf:2: FlushInterval= must be a duration"},
            {"[Stats]\nRetentionDays=0\n", "test.conf:2: RetentionDays= must be a number"},
            {"[Stats]\nEnable=maybe\n", "test.conf:2: Enable= must be a boolean"},
            {"[Stats]\nDirectory=relative\n", "test.conf:2:"},
            {"[Stats]\nColour=red\n", "test.conf:2: Unknown key Colour= in section [Stats]."},
            {"[Roaming]\nwwan0=often\n", "test.conf:2: Roaming for wwan0 must be a boolean"},
            {"[Roaming]\nwwan0=yes\nwwan0=no\n", "test.conf:3: Roaming for wwan0 set twice."},
            {"[Roaming]\nw/x=yes\n", "test.conf:2: Invalid interface name or pattern"},
            {"[Stats]\nBudget=org.a.B cellular 5M\n",
             "test.conf:2: Budget= \"org.a.B cellular 5M\": four words"},
            {"[Stats]\nBudget=org.a.B cellular 5M month x\n", "more than four words"},
            {"[Stats]\nBudget=../x cellular 5M month\n", "not a valid app ID"},
            {"[Stats]\nBudget=org.a.B satellite 5M month\n", "links must be a bearer"},
            {"[Stats]\nBudget=org.a.B virtual 5M month\n", "links must be a bearer"},
            {"[Stats]\nBudget=org.a.B cellular 5Q month\n", "limit must be bytes"},
            {"[Stats]\nBudget=org.a.B cellular -5M month\n", "limit must be bytes"},
            {"[Stats]\nBudget=org.a.B cellular 99999999999999999999 month\n",
             "limit must be bytes"},
            {"[Stats]\nBudget=org.a.B cellular 2000T month\n", "limit must be bytes"},
            {"[Stats]\nBudget=org.a.B cellular 5M year\n", "period must be day, week, month"},
            {"[Stats]\nBudget=org.a.B cellular 5M 0s\n", "period must be day, week, month"},
            {"[Stats]\nBudget=org.a.B cellular 5M 367d\n", "period must be day, week, month"},
            {"[Stats]\nBudget=org.a.B cellular 5M month\nBudget=org.a.B cellular 1G day\n",
             "test.conf:3: Budget= for org.a.B on cellular set twice."},
            {"[Metered]\nwlan0=sometimes\n", "test.conf:2: Metered for wlan0 must be a boolean"},
            {"[Metered]\nwlan0=yes\nwlan0=no\n", "test.conf:3: Metered for wlan0 set twice."},
            {"[Metered]\nw/x=yes\n", "test.conf:2: Invalid interface name or pattern"},
            {"[Stats]\nBudgetWarning=0\n", "BudgetWarning= must be a number from 1 to 100"},
            {"[Stats]\nBudgetWarning=101%\n", "BudgetWarning= must be a number from 1 to 100"},
            {"[Stats]\nBudgetWarning=%\n", "BudgetWarning= must be a percentage"},
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Config *c = NULL;
                ASSERT_EQ(parse(cases[i].text, &c), -EINVAL);
                if (!strstr(captured, cases[i].error))
                        TEST_FAIL("case %zu: expected \"%s\" in \"%s\"", i, cases[i].error,
                                  captured);
        }
}

TEST(stats_config_budgets)
{
        Config *c = NULL;

        ASSERT_OK(parse("", &c));
        ASSERT_EQ(c->stats.n_budgets, 0);
        ASSERT_EQ(c->stats.budget_warn_percent, 80);
        config_free(c);

        ASSERT_OK(parse("[Stats]\nBudget=org.example.Mail cellular 500M month\n"
                        "Budget=org.example.Mail  roaming\t0 month\n"
                        "Budget=org.example.Maps any 2GiB 30s\nBudgetWarning=90%\n"
                        "Budget=org.example.Maps metered 1k day\n",
                        &c));
        ASSERT_EQ(c->stats.n_budgets, 4);
        ASSERT_EQ(c->stats.budgets[3].links, STATS_BUDGET_METERED);
        ASSERT_EQ(c->stats.budgets[3].limit, 1000);
        ASSERT_STREQ(c->stats.budgets[0].app_id, "org.example.Mail");
        ASSERT_EQ(c->stats.budgets[0].links, BEARER_CELLULAR);
        ASSERT_EQ(c->stats.budgets[0].limit, 500000000);
        ASSERT_EQ(c->stats.budgets[0].period, STATS_BUDGET_MONTH);
        ASSERT_EQ(c->stats.budgets[1].links, STATS_BUDGET_ROAMING);
        ASSERT_EQ(c->stats.budgets[1].limit, 0);
        ASSERT_EQ(c->stats.budgets[2].links, STATS_BUDGET_ANY);
        ASSERT_EQ(c->stats.budgets[2].limit, 2ULL << 30);
        ASSERT_EQ(c->stats.budgets[2].period, STATS_BUDGET_SPAN);
        ASSERT_EQ(c->stats.budgets[2].span_usec, 30 * USEC_PER_SEC);
        ASSERT_EQ(c->stats.budget_warn_percent, 90);

        /* the saved state's keys: canonical, and themselves valid settings */
        const char *want[] = {
            "org.example.Mail cellular 500000000 month", "org.example.Mail roaming 0 month",
            "org.example.Maps any 2147483648 30s", "org.example.Maps metered 1000 day"};
        for (size_t i = 0; i < 4; i++) {
                _cleanup_free_ char *key = NULL, *again = NULL;
                StatsBudget b = {};
                const char *err = NULL;
                ASSERT_OK(stats_budget_key(&c->stats.budgets[i], &key));
                ASSERT_STREQ(key, want[i]);
                ASSERT_OK(stats_budget_parse(key, &b, &err));
                ASSERT_OK(stats_budget_key(&b, &again));
                ASSERT_STREQ(again, key);
                stats_budget_done(&b);
        }
        config_free(c);
}

TEST(stats_budget_periods_and_states)
{
        /* 2026-12-03 22:47:16 UTC, a Thursday */
        const uint64_t now = 1796338036ULL * USEC_PER_SEC;
        StatsBudget b = {.limit = 1000, .period = STATS_BUDGET_DAY};
        uint64_t idx, start, end, idx2;

        stats_budget_period_at(&b, now, &idx, &start, &end);
        ASSERT_EQ(start, 1796256000ULL * USEC_PER_SEC); /* 2026-12-03 00:00 */
        ASSERT_EQ(end, 1796342400ULL * USEC_PER_SEC);
        stats_budget_period_at(&b, end, &idx2, &start, &end);
        ASSERT_EQ(idx2, idx + 1);

        b.period = STATS_BUDGET_WEEK;
        stats_budget_period_at(&b, now, &idx, &start, &end);
        ASSERT_EQ(start, 1795996800ULL * USEC_PER_SEC); /* Monday 2026-11-30 */
        ASSERT_EQ(end, 1796601600ULL * USEC_PER_SEC);   /* Monday 2026-12-07 */

        b.period = STATS_BUDGET_MONTH;
        stats_budget_period_at(&b, now, &idx, &start, &end);
        ASSERT_EQ(start, 1796083200ULL * USEC_PER_SEC); /* 2026-12-01 */
        ASSERT_EQ(end, 1798761600ULL * USEC_PER_SEC);   /* 2027-01-01: December + 1 */
        stats_budget_period_at(&b, end, &idx2, &start, &end);
        ASSERT_EQ(idx2, idx + 1);
        ASSERT_EQ(end, 1801440000ULL * USEC_PER_SEC); /* 2027-02-01 */

        b.period = STATS_BUDGET_SPAN;
        b.span_usec = 10 * USEC_PER_SEC;
        stats_budget_period_at(&b, now, &idx, &start, &end);
        ASSERT_EQ(start, 1796338030ULL * USEC_PER_SEC);
        ASSERT_EQ(end, 1796338040ULL * USEC_PER_SEC);

        ASSERT_EQ(stats_budget_state(&b, 0, 80), STATS_BUDGET_OK);
        ASSERT_EQ(stats_budget_state(&b, 799, 80), STATS_BUDGET_OK);
        ASSERT_EQ(stats_budget_state(&b, 800, 80), STATS_BUDGET_WARNING);
        ASSERT_EQ(stats_budget_state(&b, 1000, 80), STATS_BUDGET_OVER);
        b.limit = 0; /* nothing at all */
        ASSERT_EQ(stats_budget_state(&b, 0, 80), STATS_BUDGET_OVER);
        ASSERT_STREQ(stats_budget_state_to_string(STATS_BUDGET_OVER), "over");
        ASSERT_EQ(stats_budget_state_from_string("warning"), STATS_BUDGET_WARNING);
        ASSERT_STREQ(stats_budget_links_to_string(STATS_BUDGET_ROAMING), "roaming");
        ASSERT_STREQ(stats_budget_links_to_string(STATS_BUDGET_METERED), "metered");
        ASSERT_STREQ(stats_budget_links_to_string(BEARER_WIFI), "wifi");
}
