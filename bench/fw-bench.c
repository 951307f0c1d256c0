/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Benchmark driver for the firewall's swap (bench/bench_firewall.py runs it inside a network
 * namespace of its own): installs table inet roam with the firewall's chains and one link
 * chain (ifindex 1) holding N rules, then swaps that chain between two N-rule profiles R times,
 * each swap one transaction (flush + N rules + the default), as roamd's reconciler does on a
 * location change. Times each swap with CLOCK_MONOTONIC from building the transaction to the
 * kernel's answer; prints one JSON object.
 *
 * With --install-only --ifindex I --accept-port P: installs the table with link I's chain holding
 * the N rules, then an accept for TCP port P, and exits (the inbound path's per-packet cost). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-firewall-nft.h"
#include "roamd-nft.h"

static uint64_t now_ns(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* profile p: "tcp dport BASE+i counter accept comment P:i", BASE 10000 or 30000 */
static FwNftRule *profile(unsigned long n, int p)
{
        FwNftRule *r = calloc(n, sizeof(FwNftRule));

        for (unsigned long i = 0; r && i < n; i++) {
                r[i].action = FW_ACTION_ACCEPT;
                r[i].proto = FW_PROTO_TCP;
                r[i].family = AF_UNSPEC;
                r[i].port_min = r[i].port_max = (uint16_t)((p ? 30000 : 10000) + i);
                snprintf(r[i].id, sizeof(r[i].id), "%c:%lu", p ? 'b' : 'a', i);
        }
        return r;
}

static int swap(NftEngine *e, int ifindex, const FwNftRule *rules, unsigned long n, bool exists)
{
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        int r = nft_txn_new(e, &t);

        if (r >= 0 && !exists) {
                r = nft_txn_replace_table(t);
                if (r >= 0)
                        r = fw_nft_install(t);
        }
        if (r >= 0)
                r = fw_nft_put_link(t, ifindex, FW_DIRECTION_IN, rules, n, FW_ACTION_DROP,
                                    "built-in:default", exists);
        if (r >= 0 && !exists)
                r = fw_nft_link_elem(t, ifindex, FW_DIRECTION_IN, true);
        if (r >= 0)
                r = nft_txn_commit(t);
        return r;
}

int main(int argc, char **argv)
{
        static const struct option opts[] = {
            {"rules", required_argument, NULL, 'n'},
            {"rounds", required_argument, NULL, 'r'},
            {"install-only", no_argument, NULL, 'i'},
            {"ifindex", required_argument, NULL, 'x'},
            {"accept-port", required_argument, NULL, 'p'},
            {},
        };
        NftConfig cfg = {.mark_mask = 0x7f000000};
        unsigned long n = 5000, rounds = 20, accept_port = 0;
        bool install_only = false;
        int ifindex = 1;
        _cleanup_free_ FwNftRule *a = NULL, *b = NULL;
        _cleanup_free_ uint64_t *dt = NULL;
        NftEngine *e = NULL;
        int c, r;

        while ((c = getopt_long(argc, argv, "", opts, NULL)) >= 0)
                switch (c) {
                case 'n':
                        n = strtoul(optarg, NULL, 10);
                        break;
                case 'r':
                        rounds = strtoul(optarg, NULL, 10);
                        break;
                case 'i':
                        install_only = true;
                        break;
                case 'x':
                        ifindex = atoi(optarg);
                        break;
                case 'p':
                        accept_port = strtoul(optarg, NULL, 10);
                        break;
                default:
                        fprintf(stderr, "usage: fw-bench [--rules N] [--rounds R]\n");
                        return 2;
                }
        if (n > 30000 || rounds == 0 || rounds > 10000 || ifindex <= 0 || accept_port > 65535 ||
            (install_only && accept_port == 0))
                return 2;
        a = profile(n + 1, 0);
        b = profile(n, 1);
        dt = calloc(rounds, sizeof(uint64_t));
        if (!a || !b || !dt)
                return 1;
        r = nft_engine_new(&cfg, &e);
        if (install_only) {
                /* the N rules (ports 10000..., never the stream's), then the stream's port */
                a[n].port_min = a[n].port_max = (uint16_t)accept_port;
                snprintf(a[n].id, sizeof(a[n].id), "stream");
                if (r >= 0)
                        r = swap(e, ifindex, a, n + 1, false);
                nft_engine_free(e);
                if (r < 0)
                        fprintf(stderr, "fw-bench: %s\n", strerror(-r));
                return r < 0;
        }
        if (n == 0)
                return 2;
        if (r >= 0)
                r = swap(e, ifindex, a, n, false);
        for (unsigned long i = 0; r >= 0 && i < rounds; i++) {
                uint64_t t0 = now_ns();
                r = swap(e, ifindex, i % 2 ? a : b, n, true);
                dt[i] = now_ns() - t0;
        }
        nft_engine_free(e);
        if (r < 0) {
                fprintf(stderr, "fw-bench: %s\n", strerror(-r));
                return 1;
        }
        qsort(dt, rounds, sizeof(uint64_t), cmp_u64);
        printf("{\"rules\": %lu, \"rounds\": %lu, \"swap_median_ms\": %.3f, \"swap_min_ms\": "
               "%.3f, \"swap_max_ms\": %.3f}\n",
               n, rounds, dt[rounds / 2] / 1e6, dt[0] / 1e6, dt[rounds - 1] / 1e6);
        return 0;
}
