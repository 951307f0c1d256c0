/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <syslog.h>

#include "roam-log.h"
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
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                Config *c = NULL;
                ASSERT_EQ(parse(cases[i].text, &c), -EINVAL);
                if (!strstr(captured, cases[i].error))
                        TEST_FAIL("case %zu: expected \"%s\" in \"%s\"", i, cases[i].error,
                                  captured);
        }
}
