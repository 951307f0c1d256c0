/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Drives the nftables engine through a fixed sequence inside whatever network namespace it runs
 * in (tests run it under `unshare -n`): replace the table, add classes, levels, elements, lan
 * prefixes, slots, VPN DNS, then one policy change. Prints the transaction sizes.
 * `nft-engine-demo async`: the asynchronous commit on an sd-event loop (see async_demo()). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-nft.h"

static int commit(NftTxn *t, const char *what)
{
        size_t n = nft_txn_size(t);
        int r = nft_txn_commit(t);
        printf("%s: %zu messages: %s\n", what, n, r < 0 ? "failed" : "ok");
        nft_txn_free(t);
        return r;
}

/* `nft-engine-demo lan N`: the table with N separate IPv4 and N IPv6 LAN prefixes (a machine
 * with many docker bridges and IPv6 prefixes): the element lists span many messages. */
static int lan_many(unsigned n)
{
        NftConfig cfg = {.mark_mask = 0x7f000000};
        NftEngine *e = NULL;
        NftTxn *t = NULL;
        NftPrefix *pfx = calloc(2 * n + 1, sizeof(NftPrefix));
        int r = -ENOMEM;

        if (!pfx)
                return 1;
        for (unsigned i = 0; i < n; i++) {
                /* every other /30 of 10.0.0.0/8 and /64 of 2001:db8::/48: nothing merges */
                uint32_t v4 = htonl(0x0a000000u | (i * 8));
                pfx[2 * i].family = AF_INET;
                pfx[2 * i].prefixlen = 30;
                memcpy(&pfx[2 * i].addr.in, &v4, 4);
                pfx[2 * i + 1].family = AF_INET6;
                pfx[2 * i + 1].prefixlen = 64;
                inet_pton(AF_INET6, "2001:db8::", &pfx[2 * i + 1].addr.in6);
                pfx[2 * i + 1].addr.in6.s6_addr[6] = (uint8_t)((i * 2) >> 8);
                pfx[2 * i + 1].addr.in6.s6_addr[7] = (uint8_t)(i * 2);
        }
        if (nft_engine_new(&cfg, &e) >= 0 && nft_txn_new(e, &t) >= 0 &&
            nft_txn_replace_table(t) >= 0 && nft_txn_set_lan(t, AF_INET, pfx, 2 * n) >= 0 &&
            nft_txn_set_lan(t, AF_INET6, pfx, 2 * n) >= 0)
                r = commit(t, "lan");
        else
                nft_txn_free(t);
        nft_engine_free(e);
        free(pfx);
        return r < 0 ? 3 : 0;
}

/* ---- asynchronous commits ---- */

typedef struct Async {
        sd_event *event;
        NftEngine *e;
        NftTxn *t;
        int result;
        bool done;
        unsigned resyncs;
        char order[64];
} Async;

static void on_done(NftTxn *t, int result, void *userdata)
{
        Async *a = userdata;

        a->result = result;
        a->done = true;
        strncat(a->order, "async,", sizeof(a->order) - strlen(a->order) - 1);
        a->t = nft_txn_free(t);
}

/* Runs the loop until the commit's outcome is told (the answer, or the 5 s deadline). */
static int async_commit(Async *a, NftTxn *t, const char *what)
{
        size_t n = nft_txn_size(t);
        int r;

        a->done = false;
        a->t = t;
        r = nft_txn_commit_async(t, a->event, on_done, a);
        if (r <= 0) {
                printf("%s: %zu messages: not sent (%d)\n", what, n, r);
                a->t = nft_txn_free(t);
                return r < 0 ? r : 0;
        }
        printf("%s: sent, busy=%d\n", what, nft_engine_busy(a->e));
        while (!a->done)
                if (sd_event_run(a->event, UINT64_MAX) < 0)
                        return -EIO;
        printf("%s: %zu messages: %s\n", what, n, a->result < 0 ? "refused" : "ok");
        return a->result;
}

/* The owner's rebuild after a commit whose outcome is unknown: the table and one class. */
static int resync(void *userdata)
{
        Async *a = userdata;
        NftClass deny = {.kind = NFT_CLASS_REJECT};
        NftTxn *t = NULL;
        int r;

        a->resyncs++;
        r = nft_txn_new(a->e, &t);
        if (r >= 0)
                r = nft_txn_replace_table(t);
        if (r >= 0)
                r = nft_txn_put_class(t, "c_deny", &deny, false);
        if (r >= 0)
                r = nft_txn_commit(t);
        nft_txn_free(t);
        return r;
}

static int async_levels(NftTxn *t)
{
        bool levels[NFT_LEVEL_MAX] = {[0] = true, [2] = true};

        return nft_txn_set_levels(t, levels);
}

/* `nft-engine-demo async`: the table, an element, a refused transaction (the element stays
 * where the good one put it), one commit at a time, a synchronous commit while an
 * asynchronous one awaits its answer (the latter told on its own turn of the loop, after),
 * and a transaction freed mid-commit (the next one settles the unknown outcome by the
 * generation: the owner's resync runs). */
static int async_demo(void)
{
        NftConfig cfg = {.mark_mask = 0x7f000000};
        NftClass deny = {.kind = NFT_CLASS_REJECT};
        NftClass lan = {.kind = NFT_CLASS_LAN};
        Async a = {};
        NftTxn *t = NULL, *t2 = NULL;
        int r;

        if (sd_event_new(&a.event) < 0 || nft_engine_new(&cfg, &a.e) < 0)
                return 1;
        nft_engine_set_resync(a.e, resync, &a);
        if (nft_txn_new(a.e, &t) < 0 || nft_txn_replace_table(t) < 0 ||
            nft_txn_put_class(t, "c_deny", &deny, false) < 0 ||
            nft_txn_put_class(t, "c_lan", &lan, false) < 0 || async_levels(t) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_lan", true) < 0)
                return 2;
        if (async_commit(&a, t, "async start") < 0)
                return 3;
        /* refused: an element in a class that does not exist */
        if (nft_txn_new(a.e, &t) < 0 || nft_txn_elem(t, 2, 1234, NULL, false) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_nope", true) < 0)
                return 2;
        if (async_commit(&a, t, "async bad") == 0)
                return 4;
        printf("async bad: result %s\n", strerror(-a.result));
        fflush(stdout);
        if (system("nft list map inet roam app_l2 | grep -o '1234 .*'") != 0)
                return 8;

        /* one at a time; a synchronous commit meanwhile */
        if (nft_txn_new(a.e, &t) < 0 || nft_txn_elem(t, 2, 1234, NULL, false) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_deny", true) < 0)
                return 2;
        a.done = false;
        a.order[0] = 0;
        a.t = t;
        if (nft_txn_commit_async(t, a.event, on_done, &a) != 1)
                return 5;
        if (nft_txn_new(a.e, &t2) < 0 || nft_txn_elem(t2, 2, 99, "c_lan", true) < 0)
                return 2;
        printf("second async: %s\n", strerror(-nft_txn_commit_async(t2, a.event, on_done, &a)));
        r = nft_txn_commit(t2);
        strncat(a.order, r < 0 ? "sync-refused," : "sync,", sizeof(a.order) - strlen(a.order) - 1);
        t2 = nft_txn_free(t2);
        while (!a.done)
                if (sd_event_run(a.event, UINT64_MAX) < 0)
                        return 6;
        printf("order: %s async result %d\n", a.order, a.result);

        /* a new transaction reads the answer of the one in flight (it builds on what the
         * kernel said): that one is told on the next turn of the loop, not at its deadline */
        if (nft_txn_new(a.e, &t) < 0 || nft_txn_elem(t, 2, 1234, NULL, false) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_lan", true) < 0)
                return 2;
        a.done = false;
        a.t = t;
        if (nft_txn_commit_async(t, a.event, on_done, &a) != 1)
                return 5;
        if (nft_txn_new(a.e, &t2) < 0)
                return 2;
        t2 = nft_txn_free(t2);
        for (int i = 0; i < 4 && !a.done; i++)
                if (sd_event_run(a.event, 0) < 0)
                        return 6;
        printf("read by a new transaction: told on the next turn=%d result %d\n", a.done, a.result);

        /* settled by its owner: told inside nft_engine_settle(), the answer being there */
        if (nft_txn_new(a.e, &t) < 0 || nft_txn_elem(t, 2, 1234, NULL, false) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_deny", true) < 0)
                return 2;
        a.done = false;
        a.t = t;
        if (nft_txn_commit_async(t, a.event, on_done, &a) != 1)
                return 5;
        r = nft_engine_settle(a.e);
        printf("settled: %d told=%d result %d busy=%d\n", r, a.done, a.result,
               nft_engine_busy(a.e));

        /* freed mid-commit: the element 777 may be in or not; roamd assumes neither */
        if (nft_txn_new(a.e, &t) < 0 || nft_txn_elem(t, 2, 777, "c_lan", true) < 0)
                return 2;
        if (nft_txn_commit_async(t, a.event, on_done, &a) != 1)
                return 5;
        t = nft_txn_free(t);
        printf("freed mid-commit: busy=%d\n", nft_engine_busy(a.e));
        r = nft_txn_new(a.e, &t);
        printf("next transaction: %s, resyncs %u\n", r < 0 ? "failed" : "ok", a.resyncs);
        nft_txn_free(t);
        /* the loop has nothing of the freed commit left to run */
        while ((r = sd_event_run(a.event, 0)) > 0)
                ;
        nft_engine_free(a.e);
        sd_event_unref(a.event);
        return r < 0 ? 7 : 0;
}

int main(int argc, char **argv)
{
        NftConfig cfg = {.mark_mask = 0x7f000000};
        NftEngine *e = NULL;
        NftTxn *t = NULL;
        bool levels[NFT_LEVEL_MAX] = {};
        uint32_t slots[8] = {0, 2, 3};
        NftClass deny = {.kind = NFT_CLASS_REJECT};
        NftClass lan = {.kind = NFT_CLASS_LAN, .local_dns_refused = true};
        NftClass route = {.kind = NFT_CLASS_ROUTE,
                          .sticky = true,
                          .fam = {{.slot = 1, .slot_oif = 2, .main_oif = 2},
                                  {.slot = 2, .slot_oif = 3, .restricted = true}}};
        NftClass vpn = {.kind = NFT_CLASS_ROUTE,
                        .vpn_required = true,
                        .local_dns_refused = true,
                        .fam = {{.slot = 1}, {0}}};
        NftClass portal = {.kind = NFT_CLASS_ROUTE,
                           .loopback_refused = true,
                           .fam = {{.slot = 1, .slot_oif = 2, .restricted = true},
                                   {.slot = 1, .slot_oif = 2, .restricted = true}}};
        NftPrefix pfx[3] = {{.family = AF_INET, .prefixlen = 24},
                            {.family = AF_INET6, .prefixlen = 64},
                            {.family = AF_INET, .prefixlen = 16}};
        struct in_addr dns4;
        uint32_t vpnif = 5;
        int r;

        if (argc == 2 && strcmp(argv[1], "async") == 0)
                return async_demo();
        if (argc == 3 && strcmp(argv[1], "lan") == 0)
                return lan_many((unsigned)atoi(argv[2]));
        inet_pton(AF_INET, "192.0.2.10", &pfx[0].addr.in);
        inet_pton(AF_INET6, "2001:db8::1", &pfx[1].addr.in6);
        inet_pton(AF_INET, "169.254.0.0", &pfx[2].addr.in);
        inet_pton(AF_INET, "203.0.113.65", &dns4);

        r = nft_engine_new(&cfg, &e);
        if (r < 0)
                return 1;
        levels[0] = levels[2] = true;
        if (nft_txn_new(e, &t) < 0 || nft_txn_replace_table(t) < 0 ||
            nft_txn_put_class(t, "c_deny", &deny, false) < 0 ||
            nft_txn_put_class(t, "c_lan", &lan, false) < 0 ||
            nft_txn_set_slots(t, slots, ELEMENTSOF(slots)) < 0 ||
            nft_txn_put_class(t, "c_route", &route, false) < 0 ||
            nft_txn_put_class(t, "c_vpn", &vpn, false) < 0 ||
            nft_txn_put_class(t, "c_portal", &portal, false) < 0 ||
            nft_txn_set_levels(t, levels) < 0 || nft_txn_elem(t, 0, 1, "c_route", true) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_deny", true) < 0 ||
            nft_txn_set_lan(t, AF_INET, pfx, 3) < 0 || nft_txn_set_lan(t, AF_INET6, pfx, 3) < 0 ||
            nft_txn_set_vpn_ifaces(t, &vpnif, 1) < 0 || nft_txn_set_vpn_dns(t, &dns4, NULL) < 0)
                return 2;
        if (commit(t, "start") < 0)
                return 3;
        /* one change: element 1234 from deny to lan */
        if (nft_txn_new(e, &t) < 0 || nft_txn_elem(t, 2, 1234, NULL, false) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_lan", true) < 0)
                return 2;
        if (commit(t, "change") < 0)
                return 3;
        /* a bad one: element in a class that does not exist, must change nothing */
        if (nft_txn_new(e, &t) < 0 || nft_txn_elem(t, 2, 1234, NULL, false) < 0 ||
            nft_txn_elem(t, 2, 1234, "c_nope", true) < 0)
                return 2;
        if (commit(t, "bad") == 0)
                return 4;
        nft_engine_free(e);
        return 0;
}
