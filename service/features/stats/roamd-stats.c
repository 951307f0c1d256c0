/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "roam-log.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-apps.h"
#include "roamd-client-mm.h"
#include "roamd-client-ofono.h"
#include "roamd-fault.h"
#include "roamd-link.h"
#include "roamd-core.h"
#include "roamd-links.h"
#include "roamd-nft-stats.h"
#include "roamd-reconcile.h"
#include "roamd-route.h"
#include "roamd-stats.h"

#define HISTORY_FILE "usage.history"
/* The group that may read PrometheusFile= (docs/stats.md) */
#define STATS_PROMETHEUS_GROUP "prometheus"

typedef StatsPending Pending;

typedef struct Owner {
        uint64_t id;
        char *owner;
        char *app_id; /* apps' cgroups: for budgets */
        unsigned level;
} Owner;

typedef StatsBudgetInfo Budget;

struct Stats {
        Core *core;
        Apps *apps;          /* NULL until they exist: owners and slots come from them */
        unsigned apps_watch; /* apps_cgroup_watch_add() id */
        NftStats *nft;
        NftEngine *engine;
        Reconcile *reconcile; /* its passes carry the members' changes */
        StatsHistory hist;
        Owner *owners; /* live members, sorted by cgroup id */
        size_t n_owners;
        char *path;
        char boot_id[40];
        sd_event_source *timer;
        unsigned mm_watch, ofono_watch; /* on the Core's modem clients: before a change */
        unsigned links_watch;           /* a link's modem registration changed */
        sd_bus_slot *bus_slot;
        StatsClock clock;
        Pending *pending; /* at start: counts of cgroups whose owner is not known yet */
        size_t n_pending;
        unsigned bad_blocks;
        bool save_failed; /* logged once until a save works again */
        Budget *budgets;
        size_t n_budgets;
        char *budget_sig;              /* what the budget table was last built from */
        sd_event_source *budget_timer; /* the nearest period's end */
        sd_event_source *budget_defer; /* after a link change */
};

static bool budgets_name(Stats *s, const char *app_id);
static int budgets_keep(Stats *s);
static void forget_dead(Stats *s);
static int stats_budgets_sync(Stats *s, bool force);

int stats_owner_of(const CgroupNode *n, char **ret)
{
        char *s = NULL;
        int k = -EINVAL;

        switch (n->cls.kind) {
        case CGROUP_KIND_APP:
                if (n->cls.uid != UID_INVALID)
                        k = asprintf(&s, "user:%u/app:%s", (unsigned)n->cls.uid, n->cls.app_id);
                else
                        k = asprintf(&s, "app:%s", n->cls.app_id);
                break;
        case CGROUP_KIND_USER:
                k = asprintf(&s, "user:%u", (unsigned)n->cls.uid);
                break;
        case CGROUP_KIND_SYSTEM:
                s = strdup("system");
                k = s ? 0 : -1;
                break;
        case CGROUP_KIND_OTHER:
        case _CGROUP_KIND_MAX:
        case _CGROUP_KIND_INVALID:
                return -EINVAL;
        }
        if (k < 0)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static Owner *owner_find(Stats *s, uint64_t id, size_t *ret_pos)
{
        size_t lo = 0, hi = s->n_owners;

        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->owners[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (ret_pos)
                *ret_pos = lo;
        return lo < s->n_owners && s->owners[lo].id == id ? &s->owners[lo] : NULL;
}

int stats_new(Core *core, Stats **ret)
{
        _cleanup_free_ char *boot = NULL;
        Stats *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->core = core;
        r = nft_stats_new(core->config->apps.mark_mask, &s->nft);
        if (r >= 0 && asprintf(&s->path, "%s/" HISTORY_FILE, core->config->stats.directory) < 0)
                r = -ENOMEM;
        if (r < 0) {
                stats_free(s);
                return r;
        }
        /* counters of a table belong to one boot: the epoch names both */
        if (read_one_line_file("/proc/sys/kernel/random/boot_id", &boot) >= 0)
                snprintf(s->boot_id, sizeof(s->boot_id), "%s", boot);
        *ret = s;
        return 0;
}

static void budgets_clear(Stats *s)
{
        for (size_t i = 0; i < s->n_budgets; i++)
                stats_budget_done(&s->budgets[i].spec);
        free(s->budgets);
        s->budgets = NULL;
        s->n_budgets = 0;
        free(s->budget_sig);
        s->budget_sig = NULL;
}

Stats *stats_free(Stats *s)
{
        if (!s)
                return NULL;
        if (s->engine)
                (void)stats_save(s);
        apps_cgroup_watch_remove(s->apps, s->apps_watch);
        sd_event_source_disable_unref(s->timer);
        mm_client_change_watch_remove(s->core->mm, s->mm_watch);
        ofono_client_change_watch_remove(s->core->ofono, s->ofono_watch);
        if (s->links_watch)
                links_watch_remove(s->core->links, s->links_watch);
        sd_bus_slot_unref(s->bus_slot);
        nft_stats_free(s->nft);
        stats_history_done(&s->hist);
        for (size_t i = 0; i < s->n_owners; i++) {
                free(s->owners[i].owner);
                free(s->owners[i].app_id);
        }
        budgets_clear(s);
        sd_event_source_disable_unref(s->budget_timer);
        sd_event_source_disable_unref(s->budget_defer);
        free(s->owners);
        for (size_t i = 0; i < s->n_pending; i++)
                free(s->pending[i].link);
        free(s->pending);
        free(s->path);
        free(s);
        return NULL;
}

const StatsHistory *stats_history(Stats *s)
{
        return &s->hist;
}

/* The link a counted packet really took: a marked outbound packet was routed again by its
 * mark's slot after the hook that counted it. */
static const char *link_name(Stats *s, uint32_t ifindex, uint32_t mark, char buf[static 16])
{
        uint32_t mask = s->core->config->apps.mark_mask;
        Apps *a = s->apps;
        Link *l;

        if (mark != 0 && a && apps_routes(a)) {
                uint32_t slot = (mark & mask) >> __builtin_ctz(mask);
                size_t n;
                const uint32_t *slots = route_tables_slots(apps_routes(a), &n);
                if (slot == nft_slot_vpn(mask))
                        ifindex = (uint32_t)route_tables_vpn_link(apps_routes(a));
                else if (slot < n && slots[slot] != 0)
                        ifindex = slots[slot];
        }
        l = links_get(s->core->links, (int)ifindex);
        if (l && l->info.name)
                return l->info.name;
        snprintf(buf, 16, "if%" PRIu32, ifindex);
        return buf;
}

/* Configuration first ([Roaming]), then the link's modem registration (a link fact: what
 * the modem clients said at the last sync); otherwise home. */
static bool link_roaming(Stats *s, const char *name)
{
        int r = config_roaming_override(s->core->config, name);
        Link *l;

        if (r >= 0)
                return r > 0;
        l = links_get_by_name(s->core->links, name);
        return l && l->facts.modem && l->facts.roaming;
}

/* Configuration first ([Metered]), otherwise cellular links are metered. */
static bool link_metered(Stats *s, const Link *l)
{
        int r = l->info.name ? config_metered_override(s->core->config, l->info.name) : -ENOENT;

        return r >= 0 ? r > 0 : l->bearer == BEARER_CELLULAR;
}

/* Whether a link counts as the budget's. */
static bool budget_has_link(Stats *s, const Budget *b, const Link *l)
{
        if (b->spec.links == STATS_BUDGET_ANY)
                return true;
        if (b->spec.links == STATS_BUDGET_ROAMING)
                return l->info.name && link_roaming(s, l->info.name);
        if (b->spec.links == STATS_BUDGET_METERED)
                return link_metered(s, l);
        return (int)l->bearer == b->spec.links;
}

bool stats_link_metered_for(Stats *s, const Link *l, const char *app_id)
{
        if (!s)
                return l->bearer == BEARER_CELLULAR || l->bearer == BEARER_BLUETOOTH;
        if (link_metered(s, l) || l->bearer == BEARER_BLUETOOTH ||
            (l->info.name && link_roaming(s, l->info.name)))
                return true;
        for (size_t i = 0; i < s->n_budgets; i++) {
                const Budget *b = &s->budgets[i];

                if (b->state != STATS_BUDGET_OK && streq_ptr(b->spec.app_id, app_id) &&
                    budget_has_link(s, b, l))
                        return true;
        }
        return false;
}

static void check_clock(Stats *s, uint64_t real, uint64_t boot)
{
        int64_t jump = stats_clock_observe(&s->clock, real, boot);

        if (jump != 0)
                log_warning("Stats: the wall clock jumped by %+" PRId64
                            " s; usage goes to the hour the clock now shows, and nothing is "
                            "pruned for a day.",
                            jump / (int64_t)USEC_PER_SEC);
}

static const char *account_owner(void *userdata, uint64_t cgroup)
{
        Owner *o = owner_find(userdata, cgroup, NULL);
        return o ? o->owner : NULL;
}

static bool account_link_exists(void *userdata, uint32_t ifindex)
{
        Stats *s = userdata;
        return links_get(s->core->links, (int)ifindex) != NULL;
}

static const char *account_link_name(void *userdata, uint32_t ifindex, uint32_t mark,
                                     char buf[static 16])
{
        return link_name(userdata, ifindex, mark, buf);
}

static bool account_roaming(void *userdata, const char *link)
{
        return link_roaming(userdata, link);
}

static const StatsAccountOps account_ops = {
    .owner = account_owner,
    .link_exists = account_link_exists,
    .link_name = account_link_name,
    .roaming = account_roaming,
};

/* One dump, accounted by stats_account() (all or nothing). */
static int read_counters(Stats *s, bool quiet_missing)
{
        _cleanup_free_ NftStatsEntry *e = NULL;
        _cleanup_free_ char *epoch = NULL;
        uint64_t handle, real = clock_now_usec(CLOCK_REALTIME);
        uint32_t hour = (uint32_t)(real / USEC_PER_SEC / 3600);
        size_t n;
        int r;

        check_clock(s, real, clock_now_usec(CLOCK_BOOTTIME));
        r = nft_stats_read(s->nft, &handle, &e, &n);
        if (r == -ENOENT && quiet_missing)
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Stats: cannot read the kernel's counters: %m");
        if (asprintf(&epoch, "%s:%" PRIu64, s->boot_id, handle) < 0)
                return -ENOMEM;
        /* at start, a cgroup the last save did not know yet: its owner is known once the
         * cgroup tree is scanned (stats_installed()) */
        r = stats_account(&s->hist, epoch, e, n, hour, !s->engine, &account_ops, s, &s->pending,
                          &s->n_pending);
        if (r < 0)
                log_warning_errno(r, "Stats: cannot account the kernel's counters, "
                                     "trying again at the next read: %m");
        return r;
}

static int on_budget_defer(sd_event_source *es, void *userdata)
{
        (void)stats_budgets_sync(userdata, false);
        return 0;
}

int stats_read(Stats *s)
{
        if (!s || !s->engine)
                return 0;
        /* called right before links change: the budgets follow once the change is made */
        if (s->n_budgets > 0) {
                if (!s->budget_defer)
                        (void)sd_event_add_defer(s->core->event, &s->budget_defer, on_budget_defer,
                                                 s);
                else
                        (void)sd_event_source_set_enabled(s->budget_defer, SD_EVENT_ONESHOT);
        }
        return read_counters(s, false);
}

static int write_prometheus(Stats *s, const char *path)
{
        _cleanup_free_ char *text = NULL;
        struct group *g;
        size_t size;
        int r;

        r = stats_history_prometheus(&s->hist, &text, &size);
        if (r < 0)
                return r;
        /* It holds every user's usage (what the read-usage action guards): readable by the
         * exporter's group when there is one (Debian's prometheus-node-exporter runs as
         * prometheus), else by root only; never by every user. */
        g = getgrnam(STATS_PROMETHEUS_GROUP);
        if (g)
                return write_file_atomic_owned(path, text, size, 0640, g->gr_gid);
        return write_file_atomic_owned(path, text, size, 0600, (gid_t)-1);
}

int stats_save(Stats *s)
{
        const StatsConfig *c;
        _cleanup_free_ uint8_t *data = NULL;
        uint64_t boot = clock_now_usec(CLOCK_BOOTTIME);
        size_t size;
        int r;

        if (!s || !s->engine)
                return 0;
        c = &s->core->config->stats;
        if (read_counters(s, false) >= 0)
                forget_dead(s);
        (void)stats_history_prune(&s->hist,
                                  stats_clock_prune_hour(&s->clock, clock_now_usec(CLOCK_REALTIME),
                                                         boot, c->retention_days));
        /* the budgets' use goes into the same file: their table does not survive a reboot */
        (void)stats_budgets_read(s);
        if (budgets_keep(s) < 0)
                return log_oom();
        r = stats_history_serialize(&s->hist, &data, &size);
        if (r < 0)
                return log_oom();
        /* the directory is not made here: it is the service's state directory */
        r = write_file_atomic(s->path, (const char *)data, size);
        if (r < 0) {
                if (!s->save_failed)
                        log_error_errno(
                            r, "Stats: cannot save %s (the history stays in memory): %m", s->path);
                s->save_failed = true;
                return r;
        }
        s->save_failed = false;
        if (c->prometheus_file) {
                r = write_prometheus(s, c->prometheus_file);
                if (r < 0)
                        log_warning_errno(r, "Stats: cannot write %s: %m", c->prometheus_file);
        }
        return 0;
}

static int on_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        Stats *s = userdata;

        (void)stats_save(s); /* reads the budgets' quotas too */
        /* links and routing slots change without telling: the budgets follow at every flush */
        (void)stats_budgets_sync(s, false);
        (void)sd_event_source_set_time(es, usec + s->core->config->stats.flush_usec);
        return sd_event_source_set_enabled(es, SD_EVENT_ONESHOT);
}

/* Before a modem's registration changes: what was counted so far goes under the old state
 * (the links' facts, which link_roaming() reads, take the new one at the next sync). */
static void on_mm_change(MMClient *c, void *userdata)
{
        (void)stats_read(userdata);
}

static void on_ofono_change(OfonoClient *c, void *userdata)
{
        (void)stats_read(userdata);
}

/* A link's modem registration changed (LINK_CHANGE_MODEM): roaming budgets follow it. */
static void on_links(Links *links, const LinksEvent *ev, void *userdata)
{
        if (ev->type == LINKS_EVENT_CHANGED && (ev->mask & LINK_CHANGE_MODEM))
                (void)stats_budgets_sync(userdata, false);
}

int stats_start(Stats *s)
{
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int r;

        if (!s)
                return 0;
        state_file_make_private(s->path);
        {
                _cleanup_free_ char *damaged = NULL;
                if (asprintf(&damaged, "%s.damaged", s->path) >= 0)
                        state_file_make_private(damaged);
        }
        r = read_full_file(s->path, 256 * 1024 * 1024, &data, &size);
        if (r >= 0) {
                StatsHistory h = {};
                r = stats_history_parse((const uint8_t *)data, size, &h, &s->bad_blocks);
                if (r < 0)
                        log_error("Stats: %s is not a usage history file (damaged header); it is "
                                  "kept as %s.damaged and counting starts afresh.",
                                  s->path, s->path);
                else {
                        if (s->bad_blocks > 0)
                                log_error("Stats: %s: %u damaged block(s) skipped; the rest of "
                                          "the history is kept.",
                                          s->path, s->bad_blocks);
                        stats_history_done(&s->hist);
                        s->hist = h;
                }
                if (r < 0 || s->bad_blocks > 0) {
                        _cleanup_free_ char *damaged = NULL;
                        if (asprintf(&damaged, "%s.damaged", s->path) >= 0)
                                (void)write_file_atomic(damaged, data, size);
                }
        } else if (r != -ENOENT)
                log_warning_errno(r, "Stats: cannot read %s: %m", s->path);
        if (s->hist.base)
                qsort(s->hist.base, s->hist.n_base, sizeof(*s->hist.base), stats_baseline_cmp);

        /* What the counters counted since the last save of an earlier roamd (a kill -9
         * included) is added now. Members are not known yet: the baseline's owners attribute
         * it. The counted set is kept when the table is installed: nothing counted after this
         * read is lost either. */
        r = read_counters(s, true);
        if (r < 0)
                return r;
        if (s->core->bus) {
                r = stats_bus_setup(s, &s->bus_slot);
                if (r < 0)
                        return log_error_errno(r, "Stats: cannot export org.roam1.Usage: %m");
                /* the Core's modem clients: roaming */
                s->mm_watch = mm_client_change_watch_add(s->core->mm, on_mm_change, s);
                s->ofono_watch = ofono_client_change_watch_add(s->core->ofono, on_ofono_change, s);
                if ((s->core->mm && !s->mm_watch) || (s->core->ofono && !s->ofono_watch))
                        return log_oom();
                s->links_watch = links_watch_add(s->core->links, on_links, s, NULL);
                if (s->links_watch == 0)
                        return log_oom();
        }
        r = sd_event_add_time_relative(s->core->event, &s->timer, CLOCK_MONOTONIC,
                                       s->core->config->stats.flush_usec, USEC_PER_SEC / 10,
                                       on_timer, s);
        if (r < 0)
                return log_error_errno(r, "Stats: cannot start the flush timer: %m");
        return 0;
}

/* ---- budgets ---- */

static bool budgets_name(Stats *s, const char *app_id)
{
        for (size_t i = 0; app_id && i < s->n_budgets; i++)
                if (streq(s->budgets[i].spec.app_id, app_id))
                        return true;
        return false;
}

/* The budgets of the configuration in force: kept (with what they used) when unchanged. */
static int budgets_from_config(Stats *s)
{
        const StatsConfig *c = &s->core->config->stats;
        Budget *nb = calloc(c->n_budgets + 1, sizeof(Budget));

        if (!nb)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_budgets; i++) {
                const StatsBudget *b = &c->budgets[i];
                nb[i].spec = *b;
                nb[i].spec.app_id = strdup(b->app_id);
                if (!nb[i].spec.app_id) {
                        for (size_t j = 0; j < i; j++)
                                free(nb[j].spec.app_id);
                        free(nb);
                        return -ENOMEM;
                }
                for (size_t j = 0; j < s->n_budgets; j++) {
                        const Budget *o = &s->budgets[j];
                        if (streq(o->spec.app_id, b->app_id) && o->spec.links == b->links &&
                            o->spec.limit == b->limit && o->spec.period == b->period &&
                            o->spec.span_usec == b->span_usec) {
                                nb[i].used = o->used;
                                nb[i].state = o->state;
                                nb[i].period = o->period;
                        }
                }
        }
        for (size_t i = 0; i < s->n_budgets; i++)
                stats_budget_done(&s->budgets[i].spec);
        free(s->budgets);
        s->budgets = nb;
        s->n_budgets = c->n_budgets;
        return 0;
}

static uint32_t fnv1a(uint32_t h, const void *data, size_t n)
{
        const uint8_t *p = data;
        for (size_t i = 0; i < n; i++)
                h = (h ^ p[i]) * 16777619u;
        return h;
}

static void budget_set_state(Stats *s, Budget *b, StatsBudgetState st)
{
        const char *links = stats_budget_links_to_string(b->spec.links);

        if (st == b->state)
                return;
        switch (st) {
        case STATS_BUDGET_OK:
                log_info("Budget of %s on %s: within budget (%" PRIu64 " of %" PRIu64 " bytes).",
                         b->spec.app_id, links, b->used, b->spec.limit);
                break;
        case STATS_BUDGET_WARNING:
                log_warning("Budget of %s on %s: %" PRIu64 " of %" PRIu64 " bytes used.",
                            b->spec.app_id, links, b->used, b->spec.limit);
                break;
        case STATS_BUDGET_OVER:
                log_warning("Budget of %s on %s: over budget (%" PRIu64 " bytes); its traffic "
                            "there is dropped until the period ends.",
                            b->spec.app_id, links, b->spec.limit);
                break;
        case _STATS_BUDGET_STATE_MAX:
        case _STATS_BUDGET_STATE_INVALID:
                return;
        }
        b->state = st;
        stats_bus_emit_budget(s, b->spec.app_id, links, stats_budget_state_to_string(st));
}

/* One dump of the quotas: what each budget used so far this period. */
int stats_budgets_read(Stats *s)
{
        _cleanup_free_ NftQuotaUse *q = NULL;
        size_t n = 0;
        int r;

        if (!s || !s->engine || s->n_budgets == 0)
                return 0;
        r = nft_budget_read(s->nft, &q, &n);
        if (r == -ENOENT) /* not installed yet */
                return 0;
        if (r < 0)
                return log_warning_errno(r, "Stats: cannot read the budgets' quotas: %m");
        for (size_t i = 0; i < s->n_budgets; i++) {
                Budget *b = &s->budgets[i];
                budget_set_state(
                    s, b,
                    stats_budget_apply_quotas(b, q, n, s->core->config->stats.budget_warn_percent));
        }
        return 0;
}

/* What each budget used in its current period, as last read, for the file; a budget not in
 * force yet keeps what the file had. */
static int budgets_keep(Stats *s)
{
        _cleanup_free_ StatsBudgetUse *u = calloc(s->n_budgets + 1, sizeof(StatsBudgetUse));
        size_t n = 0;
        int r = 0;

        if (!u)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_budgets && r >= 0; i++) {
                const Budget *b = &s->budgets[i];
                const StatsBudgetUse *old;
                r = stats_budget_key(&b->spec, &u[n].key);
                if (r < 0)
                        break;
                if (b->quota[0])
                        u[n].start = b->start / USEC_PER_SEC, u[n].used = b->used;
                else if ((old = stats_history_budget_find(&s->hist, u[n].key)))
                        u[n].start = old->start, u[n].used = old->used;
                else {
                        free(u[n].key);
                        continue;
                }
                n++;
        }
        if (r >= 0)
                r = stats_history_set_budgets(&s->hist, u, n);
        for (size_t i = 0; i < n; i++)
                free(u[i].key);
        return r;
}

/* At start. A plain restart finds the budget table, and the kernel's numbers win (the sync
 * reads them). After a reboot the table is gone: each quota starts from what the file kept,
 * for the current period only. */
static void budgets_seed(Stats *s)
{
        const unsigned warn = s->core->config->stats.budget_warn_percent;
        _cleanup_free_ NftQuotaUse *q = NULL;
        uint64_t real = clock_now_usec(CLOCK_REALTIME);
        size_t n = 0;

        if (s->n_budgets == 0 || nft_budget_read(s->nft, &q, &n) != -ENOENT)
                return;
        for (size_t i = 0; i < s->n_budgets; i++) {
                Budget *b = &s->budgets[i];
                const char *links = stats_budget_links_to_string(b->spec.links);
                _cleanup_free_ char *key = NULL;
                const StatsBudgetUse *u;
                uint64_t period, start, end;

                if (stats_budget_key(&b->spec, &key) < 0) {
                        log_oom();
                        return;
                }
                u = stats_history_budget_find(&s->hist, key);
                if (!u)
                        continue;
                stats_budget_period_at(&b->spec, real, &period, &start, &end);
                if (u->start != start / USEC_PER_SEC) {
                        log_info("Budget of %s on %s: the saved use (%" PRIu64
                                 " bytes) is of an earlier period; this one starts at zero.",
                                 b->spec.app_id, links, u->used);
                        continue;
                }
                b->used = MIN(u->used, b->spec.limit);
                log_info("Budget of %s on %s: the budget table was gone (a reboot): %" PRIu64
                         " of %" PRIu64 " bytes used this period, as saved.",
                         b->spec.app_id, links, b->used, b->spec.limit);
                budget_set_state(s, b, stats_budget_state(&b->spec, b->used, warn));
        }
}

static int on_budget_timer(sd_event_source *es, uint64_t usec, void *userdata)
{
        (void)stats_budgets_sync(userdata, false);
        return 0;
}

/* The links a budget counts now, and the marks of the routing slots that lead to them. */
static int budget_links(Stats *s, const Budget *b, uint32_t **ret_if, size_t *ret_nif,
                        uint32_t **ret_mk, size_t *ret_nmk)
{
        uint32_t mask = s->core->config->apps.mark_mask;
        Core *c = s->core;
        _cleanup_free_ uint32_t *ifs = calloc(c->links->n_links + 1, sizeof(uint32_t));
        _cleanup_free_ uint32_t *mks = NULL;
        size_t nif = 0, nmk = 0, n_slots = 0;
        const uint32_t *slots = NULL;
        int vpn = 0;

        if (!ifs)
                return -ENOMEM;
        for (size_t i = 0; i < c->links->n_links; i++) {
                Link *l = c->links->links[i];
                bool match;
                if (b->spec.links == STATS_BUDGET_ROAMING)
                        match = l->info.name && link_roaming(s, l->info.name);
                else if (b->spec.links == STATS_BUDGET_METERED)
                        match = link_metered(s, l);
                else
                        match = (int)l->bearer == b->spec.links;
                if (match)
                        ifs[nif++] = (uint32_t)l->ifindex;
        }
        if (s->apps && apps_routes(s->apps)) {
                slots = route_tables_slots(apps_routes(s->apps), &n_slots);
                vpn = route_tables_vpn_link(apps_routes(s->apps));
        }
        mks = calloc(n_slots + 2, sizeof(uint32_t));
        if (!mks)
                return -ENOMEM;
        for (size_t i = 0; i < nif; i++) {
                for (size_t sl = 1; sl < n_slots; sl++)
                        if (slots[sl] == ifs[i])
                                mks[nmk++] = nft_slot_mark(mask, (uint32_t)sl);
                if (vpn > 0 && (uint32_t)vpn == ifs[i])
                        mks[nmk++] = nft_slot_mark(mask, nft_slot_vpn(mask));
        }
        *ret_if = TAKE_PTR(ifs);
        *ret_nif = nif;
        *ret_mk = TAKE_PTR(mks);
        *ret_nmk = nmk;
        return 0;
}

/* Brings table inet budget_by_roamd to the budgets, their periods, the apps' cgroups and the
 * links: rebuilt as a whole when any of these changed (rare), the quotas carried over. */
static int stats_budgets_sync(Stats *s, bool force)
{
        const unsigned warn = s->core->config->stats.budget_warn_percent;
        _cleanup_(nft_txn_freep) NftTxn *t = NULL;
        _cleanup_free_ NftBudget *nb = NULL;
        _cleanup_free_ char *sig = NULL;
        uint64_t real = clock_now_usec(CLOCK_REALTIME), next_end = UINT64_MAX;
        uint64_t **cgs = NULL;
        unsigned **lvls = NULL;
        uint32_t **ifs = NULL, **mks = NULL;
        size_t sig_size = 0;
        FILE *f;
        int r = 0;

        if (!s || !s->engine)
                return 0;
        nb = calloc(s->n_budgets + 1, sizeof(NftBudget));
        cgs = calloc(s->n_budgets + 1, sizeof(*cgs));
        lvls = calloc(s->n_budgets + 1, sizeof(*lvls));
        ifs = calloc(s->n_budgets + 1, sizeof(*ifs));
        mks = calloc(s->n_budgets + 1, sizeof(*mks));
        f = open_memstream(&sig, &sig_size);
        if (!nb || !cgs || !lvls || !ifs || !mks || !f) {
                r = -ENOMEM;
                goto finish;
        }
        for (size_t i = 0; i < s->n_budgets && r >= 0; i++) {
                Budget *b = &s->budgets[i];
                uint64_t period, start, end;
                uint32_t h = 2166136261u;

                stats_budget_period_at(&b->spec, real, &period, &start, &end);
                if (period != b->period && b->quota[0]) {
                        log_info("Budget of %s on %s: a new period starts.", b->spec.app_id,
                                 stats_budget_links_to_string(b->spec.links));
                        b->used = 0;
                        budget_set_state(s, b, stats_budget_state(&b->spec, 0, warn));
                }
                b->period = period, b->start = start, b->end = end;
                next_end = MIN(next_end, end);
                h = fnv1a(h, b->spec.app_id, strlen(b->spec.app_id));
                h = fnv1a(h, &b->spec.links, sizeof(b->spec.links));
                h = fnv1a(h, &b->spec.limit, sizeof(b->spec.limit));
                h = fnv1a(h, &b->spec.period, sizeof(b->spec.period));
                h = fnv1a(h, &b->spec.span_usec, sizeof(b->spec.span_usec));
                /* a new name every period: the new quota starts at zero */
                snprintf(b->quota, sizeof(b->quota), "q%zu_%08x_%" PRIu64, i, h, period);

                cgs[i] = calloc(s->n_owners + 1, sizeof(uint64_t));
                lvls[i] = calloc(s->n_owners + 1, sizeof(unsigned));
                if (!cgs[i] || !lvls[i]) {
                        r = -ENOMEM;
                        break;
                }
                nb[i] = (NftBudget){.quota = b->quota,
                                    .limit = b->spec.limit,
                                    .cgroups = cgs[i],
                                    .levels = lvls[i],
                                    .any_link = b->spec.links == STATS_BUDGET_ANY};
                fprintf(f, "%s:", b->quota);
                for (size_t j = 0; j < s->n_owners; j++)
                        if (s->owners[j].app_id && streq(s->owners[j].app_id, b->spec.app_id)) {
                                cgs[i][nb[i].n_cgroups] = s->owners[j].id;
                                lvls[i][nb[i].n_cgroups++] = s->owners[j].level;
                                fprintf(f, "c%" PRIu64 "/%u,", s->owners[j].id, s->owners[j].level);
                        }
                if (!nb[i].any_link) {
                        r = budget_links(s, b, &ifs[i], &nb[i].n_ifindex, &mks[i], &nb[i].n_marks);
                        nb[i].ifindex = ifs[i];
                        nb[i].marks = mks[i];
                        for (size_t j = 0; r >= 0 && j < nb[i].n_ifindex; j++)
                                fprintf(f, "i%" PRIu32 ",", ifs[i][j]);
                        for (size_t j = 0; r >= 0 && j < nb[i].n_marks; j++)
                                fprintf(f, "m%" PRIx32 ",", mks[i][j]);
                }
                fputc(';', f);
        }
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        f = NULL;
        if (r < 0)
                goto finish;

        if (next_end != UINT64_MAX) {
                if (!s->budget_timer)
                        r = sd_event_add_time(s->core->event, &s->budget_timer, CLOCK_REALTIME,
                                              next_end, USEC_PER_SEC / 100, on_budget_timer, s);
                else {
                        r = sd_event_source_set_time(s->budget_timer, next_end);
                        if (r >= 0)
                                r = sd_event_source_set_enabled(s->budget_timer, SD_EVENT_ONESHOT);
                }
                if (r < 0)
                        log_warning_errno(r, "Stats: cannot wait for the budget period's end: %m");
                r = 0;
        }
        if (!force && s->budget_sig && streq(s->budget_sig, sig))
                goto finish;

        /* what the quotas used until now is carried into the new table */
        (void)stats_budgets_read(s);
        for (size_t i = 0; i < s->n_budgets; i++)
                nb[i].consumed = s->budgets[i].used;
        r = nft_txn_new(s->engine, &t);
        if (r >= 0)
                r = nft_budget_txn_replace(t, s->core->config->apps.mark_mask, nb, s->n_budgets);
        if (r >= 0)
                r = nft_txn_commit(t);
        if (r < 0) {
                log_error_errno(r, "Stats: cannot install the data budgets: %m");
                goto finish;
        }
        free(s->budget_sig);
        s->budget_sig = TAKE_PTR(sig);
finish:
        if (f)
                fclose(f);
        for (size_t i = 0; i < s->n_budgets; i++) {
                if (cgs)
                        free(cgs[i]);
                if (lvls)
                        free(lvls[i]);
                if (ifs)
                        free(ifs[i]);
                if (mks)
                        free(mks[i]);
        }
        free(cgs);
        free(lvls);
        free(ifs);
        free(mks);
        return r;
}

int stats_budgets_changed(Stats *s)
{
        int r;

        if (!s)
                return 0;
        r = budgets_from_config(s);
        if (r < 0)
                return log_oom();
        return stats_budgets_sync(s, false);
}

size_t stats_budgets(Stats *s, const StatsBudgetInfo **ret)
{
        *ret = NULL;
        if (!s)
                return 0;
        (void)stats_budgets_read(s);
        *ret = s->budgets;
        return s->n_budgets;
}

/* Its counters were just read: their elements go, or the set would grow with every app
 * started (each start is a new cgroup). The next dump lacks them, and so does the baseline. */
static void forget_cgroup(Stats *s, uint64_t id)
{
        _cleanup_free_ NftStatsEntry *keys = calloc(s->hist.n_base + 1, sizeof(NftStatsEntry));
        size_t n = 0;
        int r;

        if (!keys)
                return (void)log_oom();
        for (size_t i = 0; i < s->hist.n_base; i++)
                if (s->hist.base[i].cgroup == id)
                        keys[n++] = (NftStatsEntry){.cgroup = id,
                                                    .ifindex = s->hist.base[i].ifindex,
                                                    .mark = s->hist.base[i].mark,
                                                    .dir = s->hist.base[i].dir};
        r = nft_stats_forget(s->nft, s->engine, keys, n);
        if (r < 0)
                log_warning_errno(r, "Stats: cannot drop the counters of cgroup %" PRIu64 ": %m",
                                  id);
}

static void stats_on_cgroup(Stats *s, NftEngine *e, CgroupEvent ev, const CgroupNode *n)
{
        _cleanup_free_ char *owner = NULL;
        size_t pos;
        Owner *o;
        int r;

        if (!s || n->level == 0 || n->level >= NFT_LEVEL_MAX)
                return;
        switch (ev) {
        case CGROUP_EVENT_ADDED:
                if (stats_owner_of(n, &owner) < 0 || owner_find(s, n->id, &pos))
                        return;
                Owner *no = realloc(s->owners, sizeof(Owner) * (s->n_owners + 1));
                if (!no)
                        return (void)log_oom();
                s->owners = no;
                memmove(&no[pos + 1], &no[pos], sizeof(Owner) * (s->n_owners - pos));
                no[pos] = (Owner){.id = n->id, .owner = TAKE_PTR(owner), .level = n->level};
                if (n->cls.kind == CGROUP_KIND_APP && n->cls.app_id)
                        no[pos].app_id = strdup(n->cls.app_id);
                s->n_owners++;
                if (budgets_name(s, n->cls.kind == CGROUP_KIND_APP ? n->cls.app_id : NULL))
                        (void)stats_budgets_sync(s, false);
                /* its element comes with the reconciler's next pass (no waiting here) */
                r = nft_stats_member(s->nft, n->id, n->level, true);
                if (r < 0)
                        log_warning_errno(r, "Stats: cannot count cgroup %s: %m", n->path);
                if (r > 0)
                        reconcile_schedule(s->reconcile);
                break;
        case CGROUP_EVENT_REMOVED:
                o = owner_find(s, n->id, &pos);
                if (!o)
                        return;
                /* read first: the last bytes of the cgroup keep its owner (the baseline
                 * remembers it) */
                (void)stats_read(s);
                r = nft_stats_member(s->nft, n->id, n->level, false);
                if (r > 0)
                        reconcile_schedule(s->reconcile); /* its element leaves with it */
                forget_cgroup(s, n->id);
                char *app_id = o->app_id;
                free(o->owner);
                memmove(o, o + 1, sizeof(Owner) * (s->n_owners - pos - 1));
                s->n_owners--;
                if (budgets_name(s, app_id))
                        (void)stats_budgets_sync(s, false);
                free(app_id);
                break;
        case _CGROUP_EVENT_MAX:
        case _CGROUP_EVENT_INVALID:
                break;
        }
}

int stats_txn_install(Stats *s, NftTxn *t)
{
        /* counting off: the counters an earlier roamd left would cost every packet a lookup,
         * and its budgets would block apps with nobody watching them */
        if (!s) {
                int r = nft_stats_txn_remove(t);
                return r < 0 ? r : nft_budget_txn_replace(t, 0, NULL, 0);
        }
        return nft_stats_txn_install(s->nft, t);
}

/* Elements that can never count again, their counts just read: of cgroups that ended while no
 * roamd ran (no member any more), and of links that were removed (a VPN or a tethered phone
 * comes and goes with a new ifindex every time: without this the set and the baseline would
 * grow with every one). */
/* Whether the interface is gone; the few links' answers are remembered for one pass. */
static bool link_gone(uint32_t ifindex, uint32_t seen[static 32], bool gone[static 32],
                      size_t *n_seen)
{
        char name[IF_NAMESIZE];
        bool g;

        if (ifindex == 0)
                return false;
        for (size_t i = 0; i < *n_seen; i++)
                if (seen[i] == ifindex)
                        return gone[i];
        g = !if_indextoname(ifindex, name) && errno == ENXIO;
        if (*n_seen < 32) {
                seen[*n_seen] = ifindex;
                gone[(*n_seen)++] = g;
        }
        return g;
}

static void forget_dead(Stats *s)
{
        uint32_t seen[32];
        bool gone[32];
        size_t n_seen = 0;
        _cleanup_free_ NftStatsEntry *keys = calloc(s->hist.n_base + 1, sizeof(NftStatsEntry));
        size_t n = 0;
        int r;

        if (!keys)
                return (void)log_oom();
        for (size_t i = 0; i < s->hist.n_base; i++) {
                const StatsBaselineEntry *b = &s->hist.base[i];
                bool cgroup_gone = b->cgroup != 0 && !owner_find(s, b->cgroup, NULL);
                if (!cgroup_gone && !link_gone(b->ifindex, seen, gone, &n_seen))
                        continue;
                keys[n++] = (NftStatsEntry){
                    .cgroup = b->cgroup, .ifindex = b->ifindex, .mark = b->mark, .dir = b->dir};
        }
        r = nft_stats_forget(s->nft, s->engine, keys, n);
        if (r < 0)
                log_warning_errno(r, "Stats: cannot drop the counters of ended cgroups and "
                                     "removed links: %m");
}

void stats_installed(Stats *s)
{
        if (!s)
                return;
        s->engine = s->apps ? apps_nft(s->apps) : NULL;
        nft_stats_set_installed(s->nft, true);
        /* the cgroup tree has been scanned: owners of what the old table counted */
        for (size_t i = 0; i < s->n_pending; i++) {
                Pending *p = &s->pending[i];
                Owner *o = owner_find(s, p->cgroup, NULL);
                if (stats_history_add(&s->hist, o ? o->owner : "gone", p->link,
                                      link_roaming(s, p->link), p->hour, &p->c) < 0)
                        log_oom();
                free(p->link);
        }
        free(s->pending);
        s->pending = NULL;
        s->n_pending = 0;
        /* the counted set was kept (same epoch): what it counted since stats_start() goes
         * to the owners now known, then the elements of cgroups that are gone are dropped */
        if (read_counters(s, false) >= 0)
                forget_dead(s);
        /* the budget table of an earlier roamd is replaced, its quotas carried over */
        if (budgets_from_config(s) < 0)
                log_oom();
        budgets_seed(s);
        (void)stats_budgets_sync(s, true);
}

/* Usage's part of the reconciler's passes: the bytes so far go to the links they took before
 * links change; the counting tables in the install (removed while counting is off). */
static void part_prepare(void *userdata, Reconcile *rc)
{
        (void)stats_read(userdata);
}

static int part_install(void *userdata, NftTxn *t)
{
        return stats_txn_install(userdata, t);
}

/* The members' changes since the last commit (cgroups that began or ended). */
static int part_sync(void *userdata, NftTxn *t)
{
        Stats *s = userdata;

        return s ? nft_stats_txn_sync(s->nft, t) : 0;
}

static void part_done(void *userdata, Reconcile *rc, int result, bool full)
{
        Stats *s = userdata;

        if (full) {
                if (result >= 0)
                        stats_installed(s);
                return;
        }
        if (s && nft_stats_txn_done(s->nft, result >= 0))
                reconcile_schedule(rc);
}

static const ReconcilePart stats_part = {
    .prepare = part_prepare,
    .install = part_install,
    .sync = part_sync,
    .done = part_done,
};

int stats_register(Stats *s, Reconcile *rc)
{
        if (s)
                s->reconcile = rc;
        return reconcile_add_part(rc, &stats_part, s);
}

static void on_apps_cgroup(Apps *a, const AppsCgroupEvent *ev, void *userdata)
{
        stats_on_cgroup(userdata, ev->nft, ev->event, ev->node);
}

int stats_set_apps(Stats *s, Apps *apps)
{
        if (!s)
                return 0;
        apps_cgroup_watch_remove(s->apps, s->apps_watch);
        s->apps_watch = 0;
        s->apps = apps;
        if (apps) {
                s->apps_watch = apps_cgroup_watch_add(apps, on_apps_cgroup, s);
                if (s->apps_watch == 0)
                        return -ENOMEM;
        }
        return 0;
}

Core *stats_core(Stats *s)
{
        return s->core;
}
