/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The apps' part of the reconciler's passes (roamd-reconcile.c): what the links call for
 * (routes and ip rules, the sets, the class chains' contents), the elements still missing,
 * the whole table at start and after a commit the kernel did not answer. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "roam-log.h"
#include "roam-util.h"
#include "roamd-apps-internal.h"
#include "roamd-apps.h"
#include "roamd-class.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-nft.h"
#include "roamd-reconcile.h"
#include "roamd-route.h"

/* ---- links: routing tables, sets, class chains ---- */

/* Everything add_sets() puts in the kernel, as text: the sets are rewritten only when it
 * changes. Built in one pass (this runs on every sync). */
static int sets_text(Apps *a, char **ret)
{
        Core *c = a->core;
        int vpn = route_tables_vpn_link(a->routes);
        const NftPrefix *on;
        const uint32_t *slots;
        size_t n_on, n_slots, size = 0;
        char *buf = NULL;
        FILE *f;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < c->links->n_links; i++) {
                Link *l = c->links->links[i];
                if (l->bearer == BEARER_VPN)
                        fprintf(f, "vpnif=%d;", l->ifindex);
                for (size_t k = 0; l->ifindex == vpn && k < l->info.n_dns; k++)
                        fprintf(f, "dns=%s;", l->info.dns[k].text);
        }
        on = route_tables_onlink(a->routes, &n_on);
        for (size_t i = 0; i < n_on; i++) {
                char addr[INET6_ADDRSTRLEN] = "";
                inet_ntop(on[i].family, &on[i].addr, addr, sizeof(addr));
                fprintf(f, "on=%s/%u;", addr, on[i].prefixlen);
        }
        slots = route_tables_slots(a->routes, &n_slots);
        for (size_t i = 0; i < n_slots; i++)
                if (slots[i])
                        fprintf(f, "slot%zu=%u;", i, slots[i]);
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *ret = buf;
        return 0;
}

static int add_sets(Apps *a, NftTxn *t)
{
        Core *c = a->core;
        _cleanup_free_ NftPrefix *pfx = NULL;
        _cleanup_free_ uint32_t *vpnifs = NULL;
        size_t n_pfx = 0, n_vpn = 0, cap = 8;
        struct in_addr dns4;
        struct in6_addr dns6;
        bool have4 = false, have6 = false;
        const char *fixed[] = {"169.254.0.0/16", "224.0.0.0/4", "255.255.255.255/32", "fe80::/10",
                               "ff00::/8"};
        int r;

        pfx = calloc(cap, sizeof(NftPrefix));
        vpnifs = calloc(c->links->n_links + 1, sizeof(uint32_t));
        if (!pfx || !vpnifs)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(fixed); i++) {
                char buf[64], *slash;
                snprintf(buf, sizeof(buf), "%s", fixed[i]);
                slash = strchr(buf, '/');
                *slash = 0;
                pfx[n_pfx].family = strchr(buf, ':') ? AF_INET6 : AF_INET;
                pfx[n_pfx].prefixlen = (unsigned)atoi(slash + 1);
                inet_pton(pfx[n_pfx].family, buf, &pfx[n_pfx].addr);
                n_pfx++;
        }
        for (size_t i = 0; i < c->links->n_links; i++)
                if (c->links->links[i]->bearer == BEARER_VPN)
                        vpnifs[n_vpn++] = (uint32_t)c->links->links[i]->ifindex;
        /* Local networks: the on-link prefixes of the main table (a VPN's are remote). */
        size_t n_on;
        const NftPrefix *on = route_tables_onlink(a->routes, &n_on);
        NftPrefix *np = realloc(pfx, sizeof(NftPrefix) * (n_pfx + n_on + 1));
        if (!np)
                return -ENOMEM;
        pfx = np;
        memcpy(&pfx[n_pfx], on, sizeof(NftPrefix) * n_on);
        n_pfx += n_on;
        int vpn = route_tables_vpn_link(a->routes);
        Link *vl = vpn ? links_get(c->links, vpn) : NULL;
        for (size_t k = 0; vl && k < vl->info.n_dns; k++) {
                if (vl->info.dns[k].family == AF_INET && !have4)
                        have4 = inet_pton(AF_INET, vl->info.dns[k].text, &dns4) == 1;
                if (vl->info.dns[k].family == AF_INET6 && !have6)
                        have6 = inet_pton(AF_INET6, vl->info.dns[k].text, &dns6) == 1;
        }
        size_t ns;
        const uint32_t *slots = route_tables_slots(a->routes, &ns);
        if ((r = nft_txn_set_lan(t, AF_INET, pfx, n_pfx)) < 0 ||
            (r = nft_txn_set_lan(t, AF_INET6, pfx, n_pfx)) < 0 ||
            (r = nft_txn_set_vpn_ifaces(t, vpnifs, n_vpn)) < 0 ||
            (r = nft_txn_set_slots(t, slots, ns)) < 0 ||
            (r = nft_txn_set_vpn_dns(t, have4 ? &dns4 : NULL, have6 ? &dns6 : NULL)) < 0)
                return r;
        return 0;
}

int apps_route_sync(Apps *a)
{
        Core *c = a->core;
        _cleanup_free_ RouteLinkInput *in = calloc(c->links->n_links + 1, sizeof(RouteLinkInput));

        if (!in)
                return -ENOMEM;
        for (size_t i = 0; i < c->links->n_links; i++) {
                Link *l = c->links->links[i];
                in[i].ifindex = l->ifindex;
                in[i].usable = l->bearer != BEARER_VIRTUAL && l->info.carrier &&
                               (link_has_global(l, AF_INET) || link_has_global(l, AF_INET6));
                in[i].vpn = l->bearer == BEARER_VPN;
                in[i].global4 = link_has_global(l, AF_INET);
                in[i].global6 = link_has_global(l, AF_INET6);
        }
        return route_tables_sync(a->routes, in, c->links->n_links);
}

/* Refs the kernel does not have yet (new, or a failed add): their elements, with their
 * apps' classes, in t; the maps follow, without the levels whose last element
 * del_gone_refs() removes. Each is marked adding. Returns how many. */
static int add_pending_refs(Apps *a, NftTxn *t, bool levels[NFT_LEVEL_MAX])
{
        unsigned removing[NFT_LEVEL_MAX] = {};
        int n = 0, r;

        for (size_t i = 0; i < a->n_refs; i++)
                if (a->refs[i].removing)
                        removing[a->refs[i].level]++;
        for (int l = 0; l < NFT_LEVEL_MAX; l++)
                levels[l] = a->level_refs[l] > removing[l];
        for (size_t i = 0; i < a->n_refs; i++) {
                AppClass *c = app_ref_class(a->refs[i].app, a->refs[i].uid);
                if (!a->refs[i].installed && !a->refs[i].gone && c && c->installed)
                        levels[a->refs[i].level] = true;
        }
        r = nft_txn_set_levels(t, levels);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_refs; i++) {
                CgroupRef *ref = &a->refs[i];
                AppClass *c = app_ref_class(ref->app, ref->uid);
                if (ref->installed || ref->gone || !c || !c->installed)
                        continue;
                r = nft_txn_elem(t, ref->level, ref->id, c->name, true);
                if (r < 0)
                        return r;
                ref->adding = true;
                n++;
        }
        return n;
}

/* The elements of cgroups that are gone, out of t (first: their maps and chains may go
 * after them). Each is marked removing. */
static int del_gone_refs(Apps *a, NftTxn *t)
{
        for (size_t i = 0; i < a->n_refs; i++) {
                CgroupRef *ref = &a->refs[i];
                int r;

                if (!ref->gone || !ref->installed)
                        continue;
                r = nft_txn_elem(t, ref->level, ref->id, NULL, false);
                if (r < 0)
                        return r;
                ref->removing = true;
        }
        return 0;
}

/* After the pass's commit: what it carried counts only once the kernel accepted it (ok);
 * refs of cgroups that are gone leave once their element is out of the kernel (or never
 * got in). */
static void refs_done(Apps *a, bool ok)
{
        bool again = false;

        for (size_t i = 0; i < a->n_refs;) {
                CgroupRef *ref = &a->refs[i];

                if (ok && ref->adding) {
                        ref->installed = true;
                        a->level_refs[ref->level]++;
                        if (!ref->gone)
                                apps_bus_emit_changed(ref->app, "Cgroups", NULL);
                } else if (ok && ref->removing) {
                        ref->installed = false;
                        a->level_refs[ref->level]--;
                }
                ref->adding = ref->removing = false;
                if (ref->gone && !ref->installed) {
                        apps_cgroup_ref_drop(a, i); /* the next moves into i */
                        continue;
                }
                again = again || ref->gone;
                i++;
        }
        /* a cgroup that went while its add was in flight: its element goes next */
        if (again && ok)
                reconcile_schedule(a->reconcile);
}

/* Moves the apps whose class is missing or whose move the kernel refused. On failure *what
 * names the first ("policy of app X", or "app class" for one without a class yet), so
 * Degraded keeps naming what waits. */
static int reclass_pending(Apps *a, char **what)
{
        _cleanup_free_ App **pending = calloc(a->n_apps + 1, sizeof(App *));
        size_t n = 0;
        int r;

        if (!pending)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_apps; i++)
                if (app_class_missing(a->apps[i]) || a->apps[i]->reclass_pending)
                        pending[n++] = a->apps[i];
        r = n > 0 ? apps_reclass(a, pending, n) : 0;
        if (r < 0 && pending[0]->cls && asprintf(what, "policy of app %s", pending[0]->id) < 0)
                *what = NULL;
        return r;
}

typedef struct ClassSaved {
        int route[2];
        AppState state;
        int state_link, state_verdict;
} ClassSaved;

/* What the pass's sync computed, for its done. */
typedef struct ApplyPass {
        char *sets; /* the sets' text, when they were rewritten */
        NftClass *specs;
        ClassSaved *saved;
        size_t n_classes;
        int n_pending;
} ApplyPass;

ApplyPass *apps_apply_pass_free(ApplyPass *p)
{
        if (!p)
                return NULL;
        free(p->sets);
        free(p->specs);
        free(p->saved);
        free(p);
        return NULL;
}
DEFINE_TRIVIAL_CLEANUP_FUNC(ApplyPass *, apps_apply_pass_free);

/* The apps' part of a pass (the reconciler runs it: roamd-reconcile.c). Before the
 * transaction: apps whose class could not be made earlier get one, apps whose move the
 * kernel refused are moved (own transaction), and the routes and rules the links call for
 * are added. */
static void part_prepare(void *userdata, Reconcile *rc)
{
        Apps *a = userdata;
        _cleanup_free_ char *what = NULL;
        int r;

        if (!a->started)
                return;
        r = reclass_pending(a, &what);
        if (r < 0)
                reconcile_failed(rc, what ?: "app class", r);
        r = apps_route_sync(a);
        if (r < 0)
                reconcile_failed(rc, "routes and ip rules", r);
}

/* Into the pass's transaction: sets, class chains whose contents changed, pending cgroup
 * elements. */
static int part_sync(void *userdata, NftTxn *t)
{
        Apps *a = userdata;
        _cleanup_free_ ClassLink *world_links = NULL;
        ClassWorld world;
        bool levels[NFT_LEVEL_MAX];
        ApplyPass *p;
        int r;

        if (!a->started)
                return 0;
        a->pass = apps_apply_pass_free(a->pass);
        p = a->pass = calloc(1, sizeof(ApplyPass));
        if (!p)
                return -ENOMEM;
        r = del_gone_refs(a, t);
        if (r < 0)
                return r;
        if (sets_text(a, &p->sets) >= 0 && !streq(p->sets, strempty(a->installed_sets))) {
                r = add_sets(a, t);
                if (r < 0)
                        return r;
        } else {
                free(p->sets);
                p->sets = NULL;
        }
        p->specs = calloc(a->n_classes + 1, sizeof(NftClass));
        p->saved = calloc(a->n_classes + 1, sizeof(ClassSaved));
        if (!p->specs || !p->saved)
                return -ENOMEM;
        r = app_class_world_build(a, &world, &world_links);
        if (r < 0)
                return r;
        p->n_classes = a->n_classes;
        for (size_t i = 0; i < a->n_classes; i++) {
                AppClass *c = a->classes[i];
                p->saved[i] = (ClassSaved){
                    {c->route[0], c->route[1]}, c->state, c->state_link, c->state_verdict};
                /* no app uses it any more (its last one was forgotten): its chain goes */
                if (c->refs == 0) {
                        if (r >= 0 && c->installed)
                                r = nft_txn_del_class(t, c->name);
                        continue;
                }
                app_class_compute(&world, c, &p->specs[i]);
                if (r >= 0 && memcmp(&p->specs[i], &c->spec, sizeof(NftClass)) != 0)
                        r = nft_txn_put_class(t, c->name, &p->specs[i], c->installed);
        }
        if (r < 0)
                return r;
        p->n_pending = add_pending_refs(a, t, levels);
        return p->n_pending < 0 ? p->n_pending : 0;
}

static void installed_full(Apps *a);

/* After the commit: what was committed counts as installed and what is no longer used is
 * removed; after a failure the last good state stays in force (nothing is removed before
 * nftables stopped using it). */
static void part_done(void *userdata, Reconcile *rc, int result, bool full)
{
        Apps *a = userdata;
        _cleanup_(apps_apply_pass_freep) ApplyPass *p = TAKE_PTR(a->pass);
        int r;

        if (full) {
                if (result >= 0)
                        installed_full(a);
                return;
        }
        if (!a->started)
                return;
        if (result < 0) {
                for (size_t i = 0; p && p->saved && i < MIN(p->n_classes, a->n_classes); i++) {
                        a->classes[i]->route[0] = p->saved[i].route[0];
                        a->classes[i]->route[1] = p->saved[i].route[1];
                        a->classes[i]->state = p->saved[i].state;
                        a->classes[i]->state_link = p->saved[i].state_link;
                        a->classes[i]->state_verdict = p->saved[i].state_verdict;
                }
                refs_done(a, false);
                return;
        }
        for (size_t i = 0; i < MIN(p->n_classes, a->n_classes); i++) {
                a->classes[i]->spec = p->specs[i];
                a->classes[i]->installed = true;
        }
        for (size_t i = 0; i < a->n_classes;)
                if (a->classes[i]->refs == 0)
                        app_class_drop(a, a->classes[i]); /* swaps the last into i */
                else
                        i++;
        if (p->sets) {
                free(a->installed_sets);
                a->installed_sets = TAKE_PTR(p->sets);
        }
        r = route_tables_prune(a->routes);
        if (r < 0)
                reconcile_failed(rc, "removing old routes and ip rules", r);
        for (size_t i = 0; i < a->n_apps; i++)
                app_refresh(a->apps[i], true);
        /* last: a cgroup's leaving may move its app (its own transaction), which changes
         * the classes the specs above are applied to by place */
        refs_done(a, true);
}

/* The whole table from the model, into a transaction (at start, and the rebuild after a
 * commit the kernel did not answer): the other parts follow with theirs. */
static int part_install(void *userdata, NftTxn *t)
{
        Apps *a = userdata;
        _cleanup_free_ ClassLink *links = NULL;
        ClassWorld w;
        bool levels[NFT_LEVEL_MAX];
        int r;

        r = nft_txn_replace_table(t);
        if (r < 0)
                return r;
        r = app_class_world_build(a, &w, &links);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_classes; i++) {
                app_class_compute(&w, a->classes[i], &a->classes[i]->spec);
                r = nft_txn_put_class(t, a->classes[i]->name, &a->classes[i]->spec, false);
                if (r < 0)
                        return r;
        }
        r = add_sets(a, t);
        if (r < 0)
                return r;
        for (int l = 0; l < NFT_LEVEL_MAX; l++)
                levels[l] = a->level_refs[l] > 0;
        for (size_t i = 0; i < a->n_refs; i++)
                if (!a->refs[i].gone && app_ref_class(a->refs[i].app, a->refs[i].uid))
                        levels[a->refs[i].level] = true;
        r = nft_txn_set_levels(t, levels);
        if (r < 0)
                return r;
        for (size_t i = 0; i < a->n_refs; i++) {
                AppClass *c = app_ref_class(a->refs[i].app, a->refs[i].uid);
                if (!c || a->refs[i].gone)
                        continue; /* the reconciler adds it with the app's class */
                r = nft_txn_elem(t, a->refs[i].level, a->refs[i].id, c->name, true);
                if (r < 0)
                        return r;
        }
        return nft_txn_elem(t, 0, a->root_id, a->app_default->cls->name, true);
}

/* What a committed install put in the kernel. */
static void installed_full(Apps *a)
{
        for (size_t i = 0; i < a->n_classes; i++)
                a->classes[i]->installed = true;
        for (size_t i = 0; i < a->n_refs; i++) {
                CgroupRef *ref = &a->refs[i];
                if (ref->gone && ref->installed) {
                        /* not in the new table */
                        ref->installed = false;
                        a->level_refs[ref->level]--;
                }
                if (ref->installed || ref->gone || !app_ref_class(ref->app, ref->uid))
                        continue;
                ref->installed = true;
                a->level_refs[ref->level]++;
                if (a->started)
                        apps_bus_emit_changed(ref->app, "Cgroups", NULL);
        }
        free(a->installed_sets);
        a->installed_sets = NULL;
        (void)sets_text(a, &a->installed_sets);
        refs_done(a, true); /* the gone ones leave */
}

/* After a commit the kernel did not answer (and the ruleset's generation moved): the whole
 * table again from the model, in one transaction, so nothing builds on a guess. */
int apps_resync(void *userdata)
{
        Apps *a = userdata;
        int r = reconcile_install(a->reconcile);

        if (r >= 0)
                log_info("Table inet roam rebuilt from roamd's model.");
        return r;
}

static int txn_begin(void *userdata, NftTxn **ret)
{
        Apps *a = userdata;

        return nft_txn_new(a->nft, ret);
}

static void txn_free(NftTxn *t)
{
        nft_txn_free(t);
}

static int txn_commit_async(void *userdata, NftTxn *t, reconcile_commit_done_t done, void *data)
{
        Apps *a = userdata;

        return nft_txn_commit_async(t, a->core->event, done, data);
}

static void txn_settle(void *userdata, NftTxn *t)
{
        Apps *a = userdata;

        (void)nft_engine_settle(a->nft);
}

const ReconcileTxnOps apps_txn_ops = {
    .begin = txn_begin,
    .commit = nft_txn_commit,
    .free = txn_free,
    .commit_async = txn_commit_async,
    .settle = txn_settle,
};

const ReconcilePart apps_part = {
    .prepare = part_prepare,
    .install = part_install,
    .sync = part_sync,
    .done = part_done,
};
