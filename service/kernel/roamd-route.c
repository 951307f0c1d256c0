/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roamd-fault.h"
#include "roamd-nft.h"
#include "roamd-route.h"

#define SLOTS 128

/* The protocol of roamd's ip rules: what lets a later roamd prove a rule is its own. */
#define RTPROT_ROAM 82

typedef struct RouteEntry {
        int family;
        uint32_t table;
        uint8_t dst[16];
        unsigned plen;
        uint8_t gw[16];
        bool has_gw;
        int oif;
        uint32_t metric;
        uint8_t scope;
} RouteEntry;

typedef struct RuleEntry {
        int family;
        uint32_t prio;
        uint32_t mark;
        uint32_t table; /* 0: prohibit */
} RuleEntry;

struct RouteTables {
        RouteConfig cfg;
        struct nl_sock *sock;
        struct nl_cache *routes; /* the manager's cache, not owned */
        int slot_link[SLOTS];    /* ifindex per slot, 0 free */
        uint32_t next_slot;      /* freed slots are reused last */
        int vpn_link;
        bool vpn_carries[2];
        int main_default[2];
        /* installed: what the kernel accepted; want: what the last sync asked for */
        RouteEntry *routes_in, *routes_want;
        size_t n_routes_in, n_routes_want;
        RuleEntry *rules_in, *rules_want;
        size_t n_rules_in, n_rules_want;
        /* slots whose prohibit rules stay: a freed slot's flows may still carry its mark,
         * and must find a prohibit, never the main table */
        bool prohibit_kept[SLOTS];
        /* slots whose four rules (lookup and prohibit, both families) are installed: only
         * those are handed to nftables */
        bool ready[SLOTS];
        /* per ifindex default metrics, from the last sync */
        struct {
                int ifindex;
                uint32_t metric[2];
        } * metrics;
        size_t n_metrics;
        uint32_t slots_used[SLOTS];
        NftPrefix *onlink;
        size_t n_onlink;
};

static int fam_idx(int family)
{
        return family == AF_INET6 ? 1 : 0;
}

static size_t alen(int family)
{
        return family == AF_INET6 ? 16 : 4;
}

/* A route's nexthop as an entry (zeroed first: entries are compared with memcmp, padding
 * too). */
static void route_entry_from(struct rtnl_route *ro, struct rtnl_nexthop *nh, RouteEntry *e)
{
        struct nl_addr *dst = rtnl_route_get_dst(ro), *gw = rtnl_route_nh_get_gateway(nh);
        int family = rtnl_route_get_family(ro);

        memset(e, 0, sizeof(*e));
        e->family = family;
        e->table = rtnl_route_get_table(ro);
        e->oif = rtnl_route_nh_get_ifindex(nh);
        e->metric = rtnl_route_get_priority(ro);
        e->scope = rtnl_route_get_scope(ro);
        e->plen = dst ? nl_addr_get_prefixlen(dst) : 0;
        if (dst && nl_addr_get_len(dst) == alen(family))
                memcpy(e->dst, nl_addr_get_binary_addr(dst), alen(family));
        if (gw && nl_addr_get_len(gw) == alen(family)) {
                memcpy(e->gw, nl_addr_get_binary_addr(gw), alen(family));
                e->has_gw = true;
        }
}

/* A rule roamd can prove is its own: at its priorities, with exactly its mask, a slot's
 * mark, and either the lookup of that slot's table or a prohibit. */
static bool rule_is_ours(RouteTables *rt, struct rtnl_rule *ru, const RuleEntry *e)
{
        uint32_t mask = rt->cfg.mark_mask, vpn = nft_slot_vpn(mask);
        uint32_t slot = (e->mark & mask) >> __builtin_ctz(mask);

        if (rtnl_rule_get_mask(ru) != mask || (e->mark & ~mask) != 0 || slot == 0 || slot > vpn ||
            slot >= SLOTS || (e->family != AF_INET && e->family != AF_INET6))
                return false;
        if (e->prio == rt->cfg.rule_priority)
                return rtnl_rule_get_action(ru) == FR_ACT_TO_TBL &&
                       e->table == rt->cfg.table_base + slot;
        return rtnl_rule_get_action(ru) == FR_ACT_PROHIBIT;
}

/* What an earlier roamd left (its rules at our priorities, routes in our tables) is adopted as
 * installed: the first sync keeps what is still right and removes the rest, so a restart has
 * no moment in which a marked packet finds no rule (and a vpn=required one the main table).
 * Other programs' rules at the same priorities are left alone. */
static int adopt_old(RouteTables *rt)
{
        struct nl_cache *rules = NULL;
        struct nl_object *o;
        uint32_t vpn = nft_slot_vpn(rt->cfg.mark_mask);
        int r;

        r = rtnl_rule_alloc_cache(rt->sock, AF_UNSPEC, &rules);
        if (r < 0)
                return log_warning_errno(EIO, "Failed to dump ip rules: %s", nl_geterror(r));
        for (o = nl_cache_get_first(rules); o; o = nl_cache_get_next(o)) {
                struct rtnl_rule *ru = (struct rtnl_rule *)o;
                uint32_t p = rtnl_rule_get_prio(ru);
                RuleEntry e, *n;

                if (p != rt->cfg.rule_priority && p != rt->cfg.rule_priority + 1)
                        continue;
                e = (RuleEntry){.family = rtnl_rule_get_family(ru),
                                .prio = p,
                                .mark = rtnl_rule_get_mark(ru),
                                .table = rtnl_rule_get_action(ru) == FR_ACT_TO_TBL
                                             ? rtnl_rule_get_table(ru)
                                             : 0};
                if (!rule_is_ours(rt, ru, &e)) {
                        uint8_t proto = 0;
                        (void)rtnl_rule_get_protocol(ru, &proto);
                        if (proto == RTPROT_ROAM) {
                                /* an earlier roamd's, made with another mask or table base */
                                (void)rtnl_rule_delete(rt->sock, ru, 0);
                                continue;
                        }
                        /* Someone else's rule at our priorities: not ours to delete. */
                        log_notice("ip rule priority %u fwmark 0x%x/0x%x is not roamd's; left "
                                   "alone.",
                                   p, e.mark, rtnl_rule_get_mask(ru));
                        continue;
                }
                if (e.table == 0)
                        rt->prohibit_kept[(e.mark & rt->cfg.mark_mask) >>
                                          __builtin_ctz(rt->cfg.mark_mask)] = true;
                n = realloc(rt->rules_in, sizeof(RuleEntry) * (rt->n_rules_in + 1));
                if (!n)
                        break;
                rt->rules_in = n;
                rt->rules_in[rt->n_rules_in++] = e;
        }
        nl_cache_free(rules);

        for (o = nl_cache_get_first(rt->routes); o; o = nl_cache_get_next(o)) {
                struct rtnl_route *ro = (struct rtnl_route *)o;
                uint32_t t = rtnl_route_get_table(ro);
                int family = rtnl_route_get_family(ro);
                RouteEntry e, *n;

                if (t <= rt->cfg.table_base || t > rt->cfg.table_base + vpn)
                        continue;
                if (rtnl_route_get_nnexthops(ro) != 1 ||
                    (family != AF_INET && family != AF_INET6)) {
                        (void)rtnl_route_delete(rt->sock, ro, 0);
                        continue;
                }
                route_entry_from(ro, rtnl_route_nexthop_n(ro, 0), &e);
                n = realloc(rt->routes_in, sizeof(RouteEntry) * (rt->n_routes_in + 1));
                if (!n)
                        break;
                rt->routes_in = n;
                rt->routes_in[rt->n_routes_in++] = e;
        }
        return 0;
}

int route_tables_new(const RouteConfig *cfg, struct nl_cache *routes, RouteTables **ret)
{
        RouteTables *rt;
        int r;

        rt = calloc(1, sizeof(*rt));
        if (!rt)
                return -ENOMEM;
        rt->cfg = *cfg;
        rt->routes = routes;
        rt->next_slot = 1;
        rt->sock = nl_socket_alloc();
        if (!rt->sock) {
                free(rt);
                return -ENOMEM;
        }
        r = nl_connect(rt->sock, NETLINK_ROUTE);
        if (r < 0) {
                route_tables_free(rt);
                return log_error_errno(EIO, "Failed to open rtnetlink socket: %s", nl_geterror(r));
        }
        (void)adopt_old(rt);
        *ret = rt;
        return 0;
}

RouteTables *route_tables_free(RouteTables *rt)
{
        if (!rt)
                return NULL;
        if (rt->sock)
                nl_socket_free(rt->sock);
        free(rt->routes_in);
        free(rt->routes_want);
        free(rt->rules_in);
        free(rt->rules_want);
        free(rt->metrics);
        free(rt->onlink);
        free(rt);
        return NULL;
}

static struct nl_addr *addr_build(int family, const uint8_t *bytes, unsigned plen)
{
        struct nl_addr *a = nl_addr_build(family, bytes, alen(family));
        if (a)
                nl_addr_set_prefixlen(a, plen);
        return a;
}

static int route_apply(RouteTables *rt, const RouteEntry *e, bool add)
{
        struct rtnl_route *ro = rtnl_route_alloc();
        struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
        struct nl_addr *dst = addr_build(e->family, e->dst, e->plen), *gw = NULL;
        int r = -ENOMEM;

        if (!ro || !nh || !dst)
                goto out;
        rtnl_route_set_family(ro, e->family);
        rtnl_route_set_table(ro, e->table);
        rtnl_route_set_type(ro, RTN_UNICAST);
        rtnl_route_set_scope(ro, e->scope);
        rtnl_route_set_priority(ro, e->metric);
        rtnl_route_set_protocol(ro, RTPROT_STATIC);
        rtnl_route_set_dst(ro, dst);
        rtnl_route_nh_set_ifindex(nh, e->oif);
        if (e->has_gw) {
                gw = addr_build(e->family, e->gw, alen(e->family) * 8);
                if (!gw)
                        goto out;
                rtnl_route_nh_set_gateway(nh, gw);
                /* The kernel accepted this gateway on this link in the main table: the copy
                 * says so (onlink) rather than have the kernel look for it again, which fails
                 * where main's route is itself onlink (a provider's default via an address no
                 * prefix covers) or outlived the prefix it came with (kept after its address
                 * went): that copy would be refused on every pass, Degraded for nothing. */
                rtnl_route_nh_set_flags(nh, RTNH_F_ONLINK);
        }
        rtnl_route_add_nexthop(ro, nh);
        nh = NULL;
        if (add && fault_check(FAULT_ROUTE_ADD) < 0) {
                r = -EIO;
                goto out;
        }
        r = add ? rtnl_route_add(rt->sock, ro, NLM_F_CREATE | NLM_F_REPLACE)
                : rtnl_route_delete(rt->sock, ro, 0);
        if (r < 0) {
                /* A link that vanished took its routes with it. */
                if (!add && (r == -NLE_OBJ_NOTFOUND || r == -NLE_NODEV))
                        r = 0;
                else {
                        char d[INET6_ADDRSTRLEN + 4], g[INET6_ADDRSTRLEN + 4] = "";

                        nl_addr2str(dst, d, sizeof(d));
                        if (gw)
                                nl_addr2str(gw, g, sizeof(g));
                        log_debug("Failed to %s route %s%s%s dev %d in table %u: %s",
                                  add ? "add" : "delete", d, gw ? " via " : "", g, e->oif, e->table,
                                  nl_geterror(r));
                        r = -EIO;
                }
        }
out:
        nl_addr_put(dst);
        nl_addr_put(gw);
        if (nh)
                rtnl_route_nh_free(nh);
        rtnl_route_put(ro);
        return r;
}

static int rule_apply(RouteTables *rt, const RuleEntry *e, bool add)
{
        struct rtnl_rule *ru = rtnl_rule_alloc();
        int r;

        if (!ru)
                return -ENOMEM;
        rtnl_rule_set_family(ru, e->family);
        rtnl_rule_set_prio(ru, e->prio);
        rtnl_rule_set_mark(ru, e->mark);
        rtnl_rule_set_mask(ru, rt->cfg.mark_mask);
        if (e->table) {
                rtnl_rule_set_table(ru, e->table);
                rtnl_rule_set_action(ru, FR_ACT_TO_TBL);
        } else
                rtnl_rule_set_action(ru, FR_ACT_PROHIBIT);
        /* On add only: a delete then also matches the same rule an older roamd made
         * without a protocol (adopted by its shape). */
        if (add)
                rtnl_rule_set_protocol(ru, RTPROT_ROAM);
        if (add && fault_check(FAULT_RULE_ADD) < 0) {
                rtnl_rule_put(ru);
                log_warning("Failed to add ip rule priority %u mark 0x%x: injected fault", e->prio,
                            e->mark);
                return -EIO;
        }
        r = add ? rtnl_rule_add(rt->sock, ru, NLM_F_CREATE) : rtnl_rule_delete(rt->sock, ru, 0);
        rtnl_rule_put(ru);
        if (r < 0 && !(add && r == -NLE_EXIST) && !(!add && r == -NLE_OBJ_NOTFOUND)) {
                log_warning("Failed to %s ip rule priority %u mark 0x%x: %s",
                            add ? "add" : "delete", e->prio, e->mark, nl_geterror(r));
                return -EIO;
        }
        return 0;
}

/* The slot of a link, ready or not (route_tables_slot() gives only ready ones). */
static uint32_t slot_of(RouteTables *rt, int ifindex)
{
        if (ifindex <= 0)
                return 0;
        for (uint32_t s = 1; s < SLOTS; s++)
                if (rt->slot_link[s] == ifindex)
                        return s;
        return 0;
}

static bool route_find(const RouteEntry *v, size_t n, const RouteEntry *e)
{
        for (size_t i = 0; i < n; i++)
                if (memcmp(&v[i], e, sizeof(*e)) == 0)
                        return true;
        return false;
}

static bool rule_find(const RuleEntry *v, size_t n, const RuleEntry *e)
{
        for (size_t i = 0; i < n; i++)
                if (memcmp(&v[i], e, sizeof(*e)) == 0)
                        return true;
        return false;
}

/* Records what the kernel accepted. */
static int route_note(RouteTables *rt, const RouteEntry *e)
{
        RouteEntry *n = realloc(rt->routes_in, sizeof(RouteEntry) * (rt->n_routes_in + 1));

        if (!n)
                return -ENOMEM;
        rt->routes_in = n;
        rt->routes_in[rt->n_routes_in++] = *e;
        return 0;
}

static int rule_note(RouteTables *rt, const RuleEntry *e)
{
        RuleEntry *n = realloc(rt->rules_in, sizeof(RuleEntry) * (rt->n_rules_in + 1));

        if (!n)
                return -ENOMEM;
        rt->rules_in = n;
        rt->rules_in[rt->n_rules_in++] = *e;
        return 0;
}

typedef struct Collect {
        RouteTables *rt;
        const RouteLinkInput *links;
        size_t n_links;
        RouteEntry *want;
        size_t n_want;
        int error;
        uint32_t best_metric[2];
} Collect;

static int want_add(Collect *c, const RouteEntry *e)
{
        RouteEntry *n;

        for (size_t i = 0; i < c->n_want; i++)
                if (memcmp(&c->want[i], e, sizeof(*e)) == 0)
                        return 0;
        n = realloc(c->want, sizeof(RouteEntry) * (c->n_want + 1));
        if (!n)
                return -ENOMEM;
        c->want = n;
        c->want[c->n_want++] = *e;
        return 0;
}

static void metric_note(RouteTables *rt, int ifindex, int family, uint32_t metric)
{
        for (size_t i = 0; i < rt->n_metrics; i++)
                if (rt->metrics[i].ifindex == ifindex) {
                        rt->metrics[i].metric[fam_idx(family)] =
                            MIN(rt->metrics[i].metric[fam_idx(family)], metric);
                        return;
                }
        void *n = realloc(rt->metrics, sizeof(*rt->metrics) * (rt->n_metrics + 1));
        if (!n)
                return;
        rt->metrics = n;
        rt->metrics[rt->n_metrics].ifindex = ifindex;
        rt->metrics[rt->n_metrics].metric[0] = rt->metrics[rt->n_metrics].metric[1] = UINT32_MAX;
        rt->metrics[rt->n_metrics].metric[fam_idx(family)] = metric;
        rt->n_metrics++;
}

static void collect_route(struct nl_object *obj, void *userdata)
{
        struct rtnl_route *ro = (struct rtnl_route *)obj;
        Collect *c = userdata;
        RouteTables *rt = c->rt;
        int family = rtnl_route_get_family(ro);

        if (c->error < 0 || rtnl_route_get_table(ro) != RT_TABLE_MAIN ||
            rtnl_route_get_type(ro) != RTN_UNICAST || (family != AF_INET && family != AF_INET6))
                return;
        for (int i = 0; i < rtnl_route_get_nnexthops(ro); i++) {
                RouteEntry e;
                int oif;
                uint32_t slot;

                route_entry_from(ro, rtnl_route_nexthop_n(ro, i), &e);
                oif = e.oif;
                slot = slot_of(rt, oif);
                if (e.plen == 0) {
                        metric_note(rt, oif, family, e.metric);
                        if (e.metric < c->best_metric[fam_idx(family)]) {
                                c->best_metric[fam_idx(family)] = e.metric;
                                rt->main_default[fam_idx(family)] = oif;
                        }
                }
                if (!e.has_gw && e.plen > 0) {
                        bool vpn = false;
                        for (size_t k = 0; k < c->n_links; k++)
                                if (c->links[k].ifindex == oif)
                                        vpn = c->links[k].vpn;
                        void *np =
                            vpn ? NULL
                                : realloc(rt->onlink, sizeof(NftPrefix) * (rt->n_onlink + 1));
                        if (np) {
                                NftPrefix *p = &((NftPrefix *)np)[rt->n_onlink++];
                                rt->onlink = np;
                                memset(p, 0, sizeof(*p));
                                p->family = family;
                                p->prefixlen = e.plen;
                                memcpy(&p->addr, e.dst, alen(family));
                        }
                }
                if (slot) {
                        e.table = rt->cfg.table_base + slot;
                        if (want_add(c, &e) < 0)
                                c->error = -ENOMEM;
                }
                if (oif == rt->vpn_link && rt->vpn_link) {
                        e.table = rt->cfg.table_base + nft_slot_vpn(rt->cfg.mark_mask);
                        if (want_add(c, &e) < 0)
                                c->error = -ENOMEM;
                }
        }
}

static int rules_want(RouteTables *rt, RuleEntry **ret, size_t *ret_n)
{
        uint32_t vpn = nft_slot_vpn(rt->cfg.mark_mask);
        RuleEntry *w = calloc(4 * (SLOTS + 1), sizeof(RuleEntry));
        size_t n = 0;

        if (!w)
                return -ENOMEM;
        for (uint32_t s = 1; s <= vpn && s < SLOTS; s++) {
                bool lookup = s == vpn || rt->slot_link[s];

                if (lookup)
                        rt->prohibit_kept[s] = true;
                if (!rt->prohibit_kept[s])
                        continue;
                for (int f = 0; f < 2; f++) {
                        int family = f ? AF_INET6 : AF_INET;
                        uint32_t mark = nft_slot_mark(rt->cfg.mark_mask, s);
                        if (lookup)
                                w[n++] = (RuleEntry){family, rt->cfg.rule_priority, mark,
                                                     rt->cfg.table_base + s};
                        w[n++] = (RuleEntry){family, rt->cfg.rule_priority + 1, mark, 0};
                }
        }
        *ret = w;
        *ret_n = n;
        return 0;
}

int route_tables_sync(RouteTables *rt, const RouteLinkInput *links, size_t n)
{
        uint32_t vpn = nft_slot_vpn(rt->cfg.mark_mask), max = nft_slot_max(rt->cfg.mark_mask);
        Collect c = {
            .rt = rt, .links = links, .n_links = n, .best_metric = {UINT32_MAX, UINT32_MAX}};
        RuleEntry *rules = NULL;
        size_t n_rules = 0;
        int r = 0;

        /* Slots: kept while the link stays usable; a new link takes the next free one after
         * the last handed out, so a slot just freed (whose flows may still be marked) is
         * reused last. */
        for (uint32_t s = 1; s <= max && s < SLOTS; s++) {
                bool keep = false;
                for (size_t i = 0; rt->slot_link[s] && i < n; i++)
                        if (links[i].ifindex == rt->slot_link[s] && links[i].usable)
                                keep = true;
                if (!keep)
                        rt->slot_link[s] = 0;
        }
        rt->vpn_link = 0;
        rt->vpn_carries[0] = rt->vpn_carries[1] = false;
        for (size_t i = 0; i < n; i++) {
                if (!links[i].usable)
                        continue;
                if (links[i].vpn && !rt->vpn_link)
                        rt->vpn_link = links[i].ifindex;
                if (slot_of(rt, links[i].ifindex))
                        continue;
                for (uint32_t k = 0; k < max; k++) {
                        uint32_t s = (rt->next_slot - 1 + k) % max + 1;
                        if (!rt->slot_link[s]) {
                                rt->slot_link[s] = links[i].ifindex;
                                rt->next_slot = s % max + 1;
                                break;
                        }
                }
                if (!slot_of(rt, links[i].ifindex))
                        log_warning("No routing slot left for link %d (%u in use)",
                                    links[i].ifindex, max);
        }

        rt->main_default[0] = rt->main_default[1] = 0;
        rt->n_metrics = 0;
        rt->n_onlink = 0;
        nl_cache_foreach(rt->routes, collect_route, &c);
        if (c.error < 0) {
                free(c.want);
                return c.error;
        }
        /* The VPN's table: its own routes plus a default into it for each family it has an
         * address of, so vpn=required apps have exactly one way out. */
        for (size_t i = 0; rt->vpn_link && i < n; i++) {
                if (links[i].ifindex != rt->vpn_link)
                        continue;
                for (int f = 0; f < 2; f++) {
                        bool has = f ? links[i].global6 : links[i].global4;
                        RouteEntry e;

                        memset(&e, 0, sizeof(e));
                        e.family = f ? AF_INET6 : AF_INET;
                        e.table = rt->cfg.table_base + vpn;
                        e.oif = rt->vpn_link;
                        e.scope = RT_SCOPE_LINK;
                        if (!has)
                                continue;
                        rt->vpn_carries[f] = true;
                        if (want_add(&c, &e) < 0) {
                                free(c.want);
                                return -ENOMEM;
                        }
                }
        }

        /* Add what is new; what is no longer wanted goes in route_tables_prune(), once
         * nftables stopped sending packets there. */
        free(rt->routes_want);
        rt->routes_want = c.want;
        rt->n_routes_want = c.n_want;
        for (size_t j = 0; j < c.n_want; j++)
                if (!route_find(rt->routes_in, rt->n_routes_in, &c.want[j])) {
                        int k = route_apply(rt, &c.want[j], true);
                        if (k >= 0)
                                k = route_note(rt, &c.want[j]);
                        if (k < 0)
                                r = k;
                }

        if (rules_want(rt, &rules, &n_rules) < 0)
                return -ENOMEM;
        free(rt->rules_want);
        rt->rules_want = rules;
        rt->n_rules_want = n_rules;
        for (size_t j = 0; j < n_rules; j++)
                if (!rule_find(rt->rules_in, rt->n_rules_in, &rules[j])) {
                        int k = rule_apply(rt, &rules[j], true);
                        if (k >= 0)
                                k = rule_note(rt, &rules[j]);
                        if (k < 0)
                                r = k;
                }

        /* A slot is handed to nftables only with all its rules in place. */
        for (uint32_t s = 1; s < SLOTS; s++) {
                uint32_t mark = nft_slot_mark(rt->cfg.mark_mask, s);
                bool ok = s <= vpn;
                for (int f = 0; f < 2 && ok; f++) {
                        RuleEntry look = {f ? AF_INET6 : AF_INET, rt->cfg.rule_priority, mark,
                                          rt->cfg.table_base + s};
                        RuleEntry pro = {f ? AF_INET6 : AF_INET, rt->cfg.rule_priority + 1, mark,
                                         0};
                        ok = rule_find(rt->rules_in, rt->n_rules_in, &look) &&
                             rule_find(rt->rules_in, rt->n_rules_in, &pro);
                }
                rt->ready[s] = ok;
        }
        if (rt->vpn_link && !rt->ready[vpn])
                rt->vpn_carries[0] = rt->vpn_carries[1] = false;

        for (uint32_t s = 0; s < SLOTS; s++)
                rt->slots_used[s] = s <= max && rt->ready[s] ? (uint32_t)rt->slot_link[s] : 0;
        return r;
}

int route_tables_prune(RouteTables *rt)
{
        size_t k = 0;
        int r = 0;

        /* Rules first: a lookup goes before the routes of its table. */
        for (size_t i = 0; i < rt->n_rules_in; i++) {
                if (rule_find(rt->rules_want, rt->n_rules_want, &rt->rules_in[i]) ||
                    rule_apply(rt, &rt->rules_in[i], false) < 0) {
                        if (!rule_find(rt->rules_want, rt->n_rules_want, &rt->rules_in[i]))
                                r = -EIO;
                        rt->rules_in[k++] = rt->rules_in[i];
                }
        }
        rt->n_rules_in = k;
        k = 0;
        for (size_t i = 0; i < rt->n_routes_in; i++) {
                if (route_find(rt->routes_want, rt->n_routes_want, &rt->routes_in[i]) ||
                    route_apply(rt, &rt->routes_in[i], false) < 0) {
                        if (!route_find(rt->routes_want, rt->n_routes_want, &rt->routes_in[i]))
                                r = -EIO;
                        rt->routes_in[k++] = rt->routes_in[i];
                }
        }
        rt->n_routes_in = k;
        return r;
}

uint32_t route_tables_slot(RouteTables *rt, int ifindex)
{
        if (ifindex <= 0)
                return 0;
        for (uint32_t s = 1; s < SLOTS; s++)
                if (rt->slot_link[s] == ifindex)
                        return rt->ready[s] ? s : 0;
        return 0;
}

int route_tables_vpn_link(RouteTables *rt)
{
        return rt->vpn_link;
}

bool route_tables_vpn_carries(RouteTables *rt, int family)
{
        return rt->vpn_link && rt->vpn_carries[fam_idx(family)];
}

int route_tables_main_default(RouteTables *rt, int family)
{
        return rt->main_default[fam_idx(family)];
}

uint32_t route_tables_default_metric(RouteTables *rt, int ifindex, int family)
{
        for (size_t i = 0; i < rt->n_metrics; i++)
                if (rt->metrics[i].ifindex == ifindex)
                        return rt->metrics[i].metric[fam_idx(family)];
        return UINT32_MAX;
}

const uint32_t *route_tables_slots(RouteTables *rt, size_t *n)
{
        *n = SLOTS;
        return rt->slots_used;
}

const NftPrefix *route_tables_onlink(RouteTables *rt, size_t *n)
{
        *n = rt->n_onlink;
        return rt->onlink;
}
