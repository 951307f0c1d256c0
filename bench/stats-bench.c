/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Driver of bench_stats.py:
 *   stats-bench history DAYS APPS LINKS   builds a worst-case history (every series busy every
 *       hour), serializes it, parses it back; prints JSON: file bytes, series, buckets,
 *       serialize/parse ms, heap bytes of the in-memory history
 *   stats-bench on                        adds the counting objects (table inet
 *       usage_by_roamd), the members ("LEVEL CGROUP-ID" lines) from stdin
 *   stats-bench read APPS                 fills a fresh stats set with
 *       APPS x 3 links x 2 directions counters (in the caller's network namespace), then times
 * nft_stats_read() of the stats set (in the caller's network namespace); prints JSON:
 * elements, ms */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roamd-nft-stats.h"
#include "roamd-stats-history.h"

static double now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int history(unsigned days, unsigned apps, unsigned links)
{
        StatsHistory h = {}, g = {};
        uint8_t *data;
        size_t size, heap1;
        unsigned bad;
        uint32_t hour0 = 490000;
        uint64_t x = 88172645463325252ull;
        char owner[64], link[16];
        double t0, t1, t2;

        for (unsigned a = 0; a < apps; a++)
                for (unsigned l = 0; l < links; l++) {
                        snprintf(owner, sizeof(owner), "user:1000/app:org.example.App%u", a);
                        snprintf(link, sizeof(link), "wlan%u", l);
                        for (unsigned hr = 0; hr < days * 24; hr++) {
                                /* xorshift: up to ~100 MB an hour, packets ~1/1000 of bytes */
                                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                                StatsCount c = {.bytes_in = x % 100000000,
                                                .bytes_out = (x >> 20) % 10000000};
                                c.packets_in = c.bytes_in / 1000 + 1;
                                c.packets_out = c.bytes_out / 1000 + 1;
                                if (stats_history_add(&h, owner, link, l == 2, hour0 + hr, &c) < 0)
                                        return 1;
                        }
                }
        heap1 = 0;
        for (size_t i = 0; i < h.n_series; i++)
                heap1 += h.series[i].allocated * sizeof(StatsBucket) + sizeof(StatsSeries) +
                         strlen(h.series[i].owner) + strlen(h.series[i].link) + 2;
        t0 = now_ms();
        if (stats_history_serialize(&h, &data, &size) < 0)
                return 1;
        t1 = now_ms();
        if (stats_history_parse(data, size, &g, &bad) < 0 || bad != 0)
                return 1;
        t2 = now_ms();
        printf("{\"file_bytes\": %zu, \"series\": %zu, \"buckets\": %zu, \"serialize_ms\": %.1f, "
               "\"parse_ms\": %.1f, \"heap_bytes\": %zu}\n",
               size, h.n_series, (size_t)apps * links * days * 24, t1 - t0, t2 - t1, heap1);
        free(data);
        stats_history_done(&h);
        stats_history_done(&g);
        return 0;
}

/* A fresh table inet roam and counting table with the stats objects and apps x 3 links x 2
 * directions counters (elements added from userspace get the set's counter, as the packet path's
 * do). */
static int fill(NftStats *s, unsigned apps)
{
        NftConfig cfg = {.mark_mask = 0x7f000000};
        NftEngine *e;
        NftTxn *t;
        int r;

        if (nft_engine_new(&cfg, &e) < 0 || nft_txn_new(e, &t) < 0)
                return -1;
        if (nft_txn_replace_table(t) < 0 || nft_stats_txn_remove(t) < 0 ||
            nft_stats_txn_install(s, t) < 0 || nft_txn_commit(t) < 0)
                return -1;
        nft_txn_free(t);
        nft_stats_set_installed(s, true);
        for (unsigned a = 0; a < apps; a += 1000) {
                NftStatsEntry keys[6000];
                size_t n = 0;
                for (unsigned i = a; i < a + 1000 && i < apps; i++)
                        for (unsigned l = 0; l < 3; l++)
                                for (unsigned d = 0; d < 2; d++)
                                        keys[n++] = (NftStatsEntry){
                                            .cgroup = 100000 + i, .ifindex = 2 + l, .dir = d};
                r = nft_stats_add(s, e, keys, n);
                if (r < 0)
                        return r;
        }
        nft_engine_free(e);
        return 0;
}

static int read_counters(unsigned apps)
{
        NftStats *s;
        NftStatsEntry *e = NULL;
        uint64_t handle;
        size_t n = 0;
        double t0, best = 1e9;

        if (nft_stats_new(0x7f000000, &s) < 0)
                return 1;
        if (fill(s, apps) < 0) {
                fprintf(stderr, "cannot fill the stats set\n");
                return 1;
        }
        for (int i = 0; i < 5; i++) {
                free(e);
                t0 = now_ms();
                if (nft_stats_read(s, &handle, &e, &n) < 0) {
                        fprintf(stderr, "cannot read the stats set\n");
                        return 1;
                }
                if (now_ms() - t0 < best)
                        best = now_ms() - t0;
        }
        printf("{\"elements\": %zu, \"read_ms\": %.2f}\n", n, best);
        free(e);
        nft_stats_free(s);
        return 0;
}

/* Adds the counting objects (their own table), with the cgroups "LEVEL ID"
 * read from stdin as members: what roamd adds at start. */
static int stats_on(void)
{
        NftConfig cfg = {.mark_mask = 0x7f000000};
        NftEngine *e;
        NftStats *s;
        NftTxn *t;
        unsigned level;
        unsigned long long id;

        if (nft_stats_new(0x7f000000, &s) < 0 || nft_engine_new(&cfg, &e) < 0)
                return 1;
        while (scanf("%u %llu", &level, &id) == 2)
                if (nft_stats_member(s, id, level, true) < 0)
                        return 1;
        if (nft_txn_new(e, &t) < 0 || nft_stats_txn_install(s, t) < 0 || nft_txn_commit(t) < 0) {
                fprintf(stderr, "cannot install the counting objects\n");
                return 1;
        }
        return 0;
}

int main(int argc, char *argv[])
{
        if (argc == 2 && strcmp(argv[1], "on") == 0)
                return stats_on();
        if (argc == 5 && strcmp(argv[1], "history") == 0)
                return history(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
        if (argc == 3 && strcmp(argv[1], "read") == 0)
                return read_counters(atoi(argv[2]));
        fprintf(stderr, "usage: stats-bench history DAYS APPS LINKS | read APPS | on\n");
        return 2;
}
