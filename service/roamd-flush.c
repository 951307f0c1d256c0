/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/netfilter/nf_tables.h>
#include <netlink/netlink.h>
#include <netlink/route/route.h>
#include <sys/socket.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-config.h"
#include "roamd-flush.h"
#include "roamd-nft-internal.h"
#include "roamd-nft-stats.h"
#include "roamd-nft.h"
#include "roamd-ntp-dhcp.h"
#include "roamd-route.h"

/* The three tables in one transaction (each created first, so that the delete finds one). */
static int flush_nft(const Config *c)
{
        NftConfig nc = {.mark_mask = c->apps.mark_mask};
        NftEngine *e = NULL;
        NftTxn *t = NULL;
        int r;

        r = nft_engine_new(&nc, &e);
        if (r < 0)
                return r;
        r = nft_txn_new(e, &t);
        if (r >= 0)
                r = nft_txn_table(t, NFT_MSG_NEWTABLE);
        if (r >= 0)
                r = nft_txn_table(t, NFT_MSG_DELTABLE);
        if (r >= 0)
                r = nft_stats_txn_remove(t);
        if (r >= 0)
                r = nft_budget_txn_replace(t, c->apps.mark_mask, NULL, 0);
        if (r >= 0)
                r = nft_txn_commit(t);
        nft_txn_free(t);
        nft_engine_free(e);
        if (r < 0)
                return log_error_errno(r, "Failed to remove roamd's nftables tables: %m");
        log_info("nftables tables inet %s, inet %s and inet %s removed.", NFT_TABLE_NAME,
                 NFT_STATS_TABLE, NFT_BUDGET_TABLE);
        return 0;
}

/* What route_tables_new() adopts as an earlier roamd's (its rules at its priorities, routes in
 * its tables) is exactly what the prune of a roamd that wants nothing removes. */
static int flush_routes(const Config *c)
{
        RouteConfig rc = {.mark_mask = c->apps.mark_mask,
                          .table_base = c->apps.table_base,
                          .rule_priority = c->apps.rule_priority};
        struct nl_sock *sock = nl_socket_alloc();
        struct nl_cache *routes = NULL;
        RouteTables *rt = NULL;
        int r;

        if (!sock)
                return log_oom();
        r = nl_connect(sock, NETLINK_ROUTE);
        if (r >= 0)
                r = rtnl_route_alloc_cache(sock, AF_UNSPEC, 0, &routes);
        if (r < 0) {
                nl_socket_free(sock);
                return log_error_errno(EIO, "Failed to dump the routes: %s", nl_geterror(r));
        }
        r = route_tables_new(&rc, routes, &rt);
        if (r >= 0)
                r = route_tables_prune(rt);
        route_tables_free(rt);
        nl_cache_free(routes);
        nl_socket_free(sock);
        if (r < 0)
                return log_error_errno(r, "Failed to remove roamd's ip rules and routes: %m");
        log_info("ip rules at priorities %u and %u and routes in tables %u+ removed.",
                 c->apps.rule_priority, c->apps.rule_priority + 1, c->apps.table_base + 1);
        return 0;
}

int kernel_state_flush(const Config *c)
{
        int r = 0, k;

        k = flush_nft(c);
        if (k < 0)
                r = k;
        k = flush_routes(c);
        if (k < 0 && r == 0)
                r = k;
        if (c->time.chrony_source_dir) {
                k = ntp_dhcp_remove_all(c->time.chrony_source_dir);
                if (k < 0 && r == 0)
                        r = k;
        }
        return r;
}
