/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "roam-macro.h"
#include "roamd-stats-history.h"
#include "test.h"

static StatsCount cnt(uint64_t bi, uint64_t bo)
{
        return (StatsCount){.bytes_in = bi, .bytes_out = bo, .packets_in = 1, .packets_out = 1};
}

static void fill(StatsHistory *h)
{
        StatsCount c;

        c = cnt(100, 200);
        ASSERT_OK(stats_history_add(h, "app:org.a", "wifi0", false, 500000, &c));
        ASSERT_OK(stats_history_add(h, "app:org.a", "wifi0", false, 500000, &c)); /* same hour */
        c = cnt(1, 2);
        ASSERT_OK(stats_history_add(h, "app:org.a", "wwan0", true, 500001, &c));
        /* a clock set back: an earlier hour goes in order, nothing is lost */
        c = cnt(5, 6);
        ASSERT_OK(stats_history_add(h, "app:org.a", "wifi0", false, 499990, &c));
        c = cnt(7, 8);
        ASSERT_OK(stats_history_add(h, "user:1000", "wifi0", false, 500002, &c));
        StatsBaselineEntry b = {.dir = 1,
                                .cgroup = 77,
                                .ifindex = 3,
                                .mark = 0x1000000,
                                .bytes = 12345,
                                .packets = 10,
                                .owner = "app:org.a",
                                .link = "wifi0"};
        ASSERT_OK(stats_history_set_baseline(h, "boot:42", &b, 1));
}

TEST(history_add_sum_prune)
{
        StatsHistory h = {};
        StatsCount s;

        fill(&h);
        ASSERT_EQ(h.n_series, 3);
        const StatsSeries *se = stats_history_find(&h, "app:org.a", "wifi0", false);
        ASSERT_TRUE(se != NULL);
        ASSERT_EQ(se->n, 2);
        ASSERT_EQ(se->buckets[0].hour, 499990);
        ASSERT_EQ(se->buckets[1].c.bytes_out, 400);
        s = stats_history_sum(&h, "app:org.a", NULL, -1, 0);
        ASSERT_EQ(s.bytes_in, 206);
        ASSERT_EQ(s.bytes_out, 408);
        s = stats_history_sum(&h, NULL, NULL, 1, 0);
        ASSERT_EQ(s.bytes_out, 2);
        s = stats_history_sum(&h, NULL, "wifi0", 0, 500000);
        ASSERT_EQ(s.bytes_in, 207);
        ASSERT_EQ(stats_history_prune(&h, 500001), 2);
        ASSERT_EQ(h.n_series, 2);
        ASSERT_TRUE(stats_history_find(&h, "app:org.a", "wifi0", false) == NULL);
        stats_history_done(&h);
}

/* An app's own bytes, whoever runs it: "app:ID" and "user:U/app:ID", not another ID. */
TEST(history_sum_app)
{
        StatsHistory h = {};
        StatsCount c = {.bytes_in = 10, .bytes_out = 1};
        StatsCount s;

        ASSERT_OK(stats_history_add(&h, "app:org.a", "wifi0", false, 500000, &c));
        ASSERT_OK(stats_history_add(&h, "user:1000/app:org.a", "cell0", true, 500001, &c));
        ASSERT_OK(stats_history_add(&h, "app:org.ab", "wifi0", false, 500000, &c));
        ASSERT_OK(stats_history_add(&h, "user:1000", "wifi0", false, 500000, &c));
        s = stats_history_sum_app(&h, "org.a");
        ASSERT_EQ(s.bytes_in, 20);
        ASSERT_EQ(s.bytes_out, 2);
        s = stats_history_sum_app(&h, "org.b");
        ASSERT_EQ(s.bytes_in, 0);
        stats_history_done(&h);
}

TEST(history_roundtrip)
{
        StatsHistory h = {}, g = {};
        uint8_t *data;
        size_t size;
        unsigned bad = 99;

        fill(&h);
        ASSERT_OK(stats_history_serialize(&h, &data, &size));
        ASSERT_OK(stats_history_parse(data, size, &g, &bad));
        ASSERT_EQ(bad, 0);
        ASSERT_EQ(g.n_series, h.n_series);
        for (size_t i = 0; i < h.n_series; i++) {
                ASSERT_STREQ(g.series[i].owner, h.series[i].owner);
                ASSERT_STREQ(g.series[i].link, h.series[i].link);
                ASSERT_EQ(g.series[i].roaming, h.series[i].roaming);
                ASSERT_EQ(g.series[i].n, h.series[i].n);
                for (size_t j = 0; j < h.series[i].n; j++) {
                        ASSERT_EQ(g.series[i].buckets[j].hour, h.series[i].buckets[j].hour);
                        ASSERT_TRUE(memcmp(&g.series[i].buckets[j].c, &h.series[i].buckets[j].c,
                                           sizeof(StatsCount)) == 0);
                }
        }
        ASSERT_STREQ(g.epoch, "boot:42");
        const StatsBaselineEntry *b = stats_history_baseline_find(&g, 1, 77, 3, 0x1000000);
        ASSERT_TRUE(b != NULL);
        ASSERT_EQ(b->bytes, 12345);
        ASSERT_STREQ(b->link, "wifi0");
        free(data);
        stats_history_done(&h);
        stats_history_done(&g);
}

TEST(history_damage_is_detected_and_the_rest_kept)
{
        StatsHistory h = {}, g = {};
        uint8_t *data;
        size_t size;
        unsigned bad;

        fill(&h);
        ASSERT_OK(stats_history_serialize(&h, &data, &size));
        /* the first series block ("app:org.a" on wifi0) damaged in its payload */
        data[8 + 13 + 3] ^= 0x40;
        ASSERT_OK(stats_history_parse(data, size, &g, &bad));
        ASSERT_EQ(bad, 1);
        ASSERT_EQ(g.n_series, 2);
        ASSERT_TRUE(stats_history_find(&g, "user:1000", "wifi0", false) != NULL);
        ASSERT_STREQ(g.epoch, "boot:42");
        stats_history_done(&g);

        /* a torn file: the tail is cut in the middle of the last block */
        ASSERT_OK(stats_history_parse(data, size - 5, &g, &bad));
        ASSERT_EQ(bad, 2);
        ASSERT_TRUE(g.epoch == NULL); /* the baseline was last: gone, nothing made up */
        stats_history_done(&g);

        /* not a history file at all */
        ASSERT_EQ(stats_history_parse((const uint8_t *)"hello", 5, &g, &bad), -EBADMSG);
        free(data);
        stats_history_done(&h);
}

TEST(history_budgets_roundtrip_and_damage)
{
        const StatsBudgetUse u[] = {
            {.key = "org.a metered 1000000 month", .start = 1795996800, .used = 412000},
            {.key = "org.b any 20000 12s", .start = 1796000004, .used = 20000},
        };
        StatsHistory h = {}, g = {};
        uint8_t *data;
        size_t size;
        unsigned bad;

        fill(&h);
        ASSERT_OK(stats_history_set_budgets(&h, u, 2));
        ASSERT_OK(stats_history_serialize(&h, &data, &size));
        ASSERT_OK(stats_history_parse(data, size, &g, &bad));
        ASSERT_EQ(bad, 0);
        ASSERT_EQ(g.n_budgets, 2);
        const StatsBudgetUse *b = stats_history_budget_find(&g, "org.b any 20000 12s");
        ASSERT_TRUE(b != NULL);
        ASSERT_EQ(b->start, 1796000004);
        ASSERT_EQ(b->used, 20000);
        ASSERT_TRUE(stats_history_budget_find(&g, "org.b any 20000 13s") == NULL);
        stats_history_done(&g);

        /* the first budget's block damaged: that budget's use is lost, the other and the
         * history are kept */
        uint8_t *p = memmem(data, size, "org.a metered", 13);
        ASSERT_TRUE(p != NULL);
        p[2] ^= 0x20;
        ASSERT_OK(stats_history_parse(data, size, &g, &bad));
        ASSERT_EQ(bad, 1);
        ASSERT_EQ(g.n_budgets, 1);
        ASSERT_TRUE(stats_history_budget_find(&g, "org.b any 20000 12s") != NULL);
        ASSERT_EQ(g.n_series, h.n_series);
        ASSERT_STREQ(g.epoch, "boot:42");
        stats_history_done(&g);

        /* torn in the last budget's block */
        p[2] ^= 0x20;
        ASSERT_OK(stats_history_parse(data, size - 3, &g, &bad));
        ASSERT_EQ(bad, 1);
        ASSERT_EQ(g.n_budgets, 1);
        ASSERT_TRUE(stats_history_budget_find(&g, "org.a metered 1000000 month") != NULL);
        stats_history_done(&g);
        free(data);
        stats_history_done(&h);
}

TEST(clock_jumps_both_ways)
{
        const uint64_t H = 3600ULL * 1000000ULL, now = 500000 * H, boot = 1000 * H;
        StatsClock c = {};

        /* steady: no jump, prune relative to the wall clock */
        ASSERT_EQ(stats_clock_observe(&c, now, boot), 0);
        ASSERT_EQ(stats_clock_observe(&c, now + H, boot + H), 0);
        ASSERT_EQ(stats_clock_prune_hour(&c, now + H, boot + H, 90), 500001 - 90 * 24);
        /* set ten years ahead: reported, nothing pruned for a day of boot time */
        uint64_t ahead = now + H + 87600 * H;
        ASSERT_TRUE(stats_clock_observe(&c, ahead, boot + H + 1000000) > 0);
        ASSERT_EQ(stats_clock_prune_hour(&c, ahead, boot + 2 * H, 90), 0);
        /* and back again: reported too, still held */
        ASSERT_TRUE(stats_clock_observe(&c, now + 2 * H, boot + 2 * H) < 0);
        ASSERT_EQ(stats_clock_prune_hour(&c, now + 2 * H, boot + 2 * H, 90), 0);
        /* a day later pruning resumes from the clock as it is */
        ASSERT_EQ(stats_clock_observe(&c, now + 27 * H, boot + 27 * H), 0);
        ASSERT_EQ(stats_clock_prune_hour(&c, now + 27 * H, boot + 27 * H, 90), 500027 - 90 * 24);
        /* a small drift (NTP slewing) is no jump */
        ASSERT_EQ(stats_clock_observe(&c, now + 28 * H + 30000000, boot + 28 * H), 0);
}

TEST(history_prometheus_labels_escaped)
{
        StatsHistory h = {};
        StatsCount c = cnt(10, 20);
        _cleanup_free_ char *text = NULL;
        size_t size;

        /* An interface name may hold '"' and '\' (the kernel refuses only '/', ':' and
         * spaces); an app ID arrives from a file. */
        ASSERT_OK(stats_history_add(&h, "app:a\"b\\c", "we\"ird\\0", false, 500000, &c));
        ASSERT_OK(stats_history_add(&h, "system", "line\nbreak", true, 500000, &c));
        ASSERT_OK(stats_history_prometheus(&h, &text, &size));
        ASSERT_EQ(size, strlen(text));
        ASSERT_TRUE(strstr(text,
                           "roam_bytes_total{owner=\"app:a\\\"b\\\\c\",link=\"we\\\"ird\\\\0\","
                           "direction=\"in\",roaming=\"no\"} 10\n") != NULL);
        ASSERT_TRUE(strstr(text, "roam_packets_total{owner=\"system\",link=\"line\\nbreak\","
                                 "direction=\"out\",roaming=\"yes\"} 1\n") != NULL);
        /* Every sample is one line: the HELP/TYPE lines, then 2 kinds x 2 series x 2 ways. */
        size_t lines = 0;
        for (const char *p = text; *p; p++)
                lines += *p == '\n';
        ASSERT_EQ(lines, 4 + 8);
        stats_history_done(&h);
}
