/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Data budgets in roamd (roamd-stats.c) through the real reconciler (roamd-reconcile.c) into
 * a fake kernel (fake-budget.c, in place of roamd-nft-stats.c): the budget table comes with
 * the pass that installed usage's tables and follows the apps' cgroups, the links and their
 * roaming state (the fake core's links, a modem client's change), each quota's use carried
 * into a rebuilt table and through a reboot; the budgets' states and their periods' ends (the
 * budget timer fired on the fake clock, fake-timers.c). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake-budget.h"
#include "fake-core.h"
#include "fake-timers.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-apps.h"
#include "roamd-client-mm.h"
#include "roamd-client-ofono.h"
#include "roamd-links.h"
#include "roamd-core.h"
#include "roamd-route.h"
#include "roamd-stats.h"
#include "test.h"

#define MAIL  "org.example.Mail"
#define VIDEO "org.example.Video"

static FakeCore world;

/* ---- usage's neighbours: the links, slots and roaming of the fake core ---- */

static Link links_store[FAKE_MAX];
static Link *link_table[FAKE_MAX];
static Links links;

/* The registry's Link objects made from the fake core's links (those not gone), each link's
 * modem registration a fact as the links' facts stage keeps it. */
static void links_from_world(void)
{
        links.n_links = 0;
        for (size_t i = 0; i < world.n_links; i++) {
                FakeLink *f = &world.links[i];
                if (f->gone)
                        continue;
                links_store[i] = (Link){.ifindex = (int)f->ifindex, .bearer = f->bearer};
                links_store[i].info.name = (char *)f->name;
                links_store[i].facts.modem = true;
                links_store[i].facts.roaming = f->roaming;
                link_table[links.n_links++] = &links_store[i];
        }
        links.links = link_table;
}

Link *links_get(Links *l, int ifindex)
{
        for (size_t i = 0; i < l->n_links; i++)
                if (l->links[i]->ifindex == ifindex)
                        return l->links[i];
        return NULL;
}

Link *links_get_by_name(Links *l, const char *name)
{
        for (size_t i = 0; i < l->n_links; i++)
                if (streq_ptr(l->links[i]->info.name, name))
                        return l->links[i];
        return NULL;
}

/* The registry's watch list: usage's watcher, told of a sync's LINK_CHANGE_MODEM. */
static LinksWatchFn links_watch;
static void *links_watch_userdata;

unsigned links_watch_add(Links *l, LinksWatchFn fn, void *userdata, WatchDestroyFn destroy)
{
        links_watch = fn;
        links_watch_userdata = userdata;
        return 1;
}

void links_watch_remove(Links *l, unsigned id)
{
        if (id != 0)
                links_watch = NULL;
}

static int engine_token, routes_token, bus_token;

NftEngine *apps_nft(Apps *a)
{
        return (NftEngine *)&engine_token;
}

RouteTables *apps_routes(Apps *a)
{
        return (RouteTables *)&routes_token;
}

/* The apps' cgroup watch list: usage's watcher, called by cgroup() below. */
static AppsCgroupFn cgroup_watch;
static void *cgroup_watch_userdata;

unsigned apps_cgroup_watch_add(Apps *a, AppsCgroupFn fn, void *userdata)
{
        cgroup_watch = fn;
        cgroup_watch_userdata = userdata;
        return 1;
}

void apps_cgroup_watch_remove(Apps *a, unsigned id)
{
        if (id != 0)
                cgroup_watch = NULL;
}

const uint32_t *route_tables_slots(RouteTables *rt, size_t *n)
{
        *n = FAKE_MAX;
        return world.slots;
}

int route_tables_vpn_link(RouteTables *rt)
{
        return 0;
}

/* ModemManager: the registration of the fake core's links; the usage's change watcher kept
 * (the Core's client is a token: only the fakes see it). */
static MMClientChangeFn mm_changed;
static void *mm_userdata;
static int mm_token;

unsigned mm_client_change_watch_add(MMClient *c, MMClientChangeFn fn, void *userdata)
{
        ASSERT_TRUE(c == (MMClient *)&mm_token);
        mm_changed = fn;
        mm_userdata = userdata;
        return 1;
}

void mm_client_change_watch_remove(MMClient *c, unsigned id)
{
        if (id != 0)
                mm_changed = NULL;
}

int mm_client_roaming(MMClient *c, const char *ifname)
{
        for (size_t i = 0; i < world.n_links; i++)
                if (streq(world.links[i].name, ifname))
                        return world.links[i].roaming;
        return -ENOENT;
}

/* A modem's registration changes: the client's before-change watch, then the sync that takes
 * it into the link's facts (LINK_CHANGE_MODEM). */
static void modem_change(size_t i)
{
        mm_changed(NULL, mm_userdata);
        links_from_world();
        links_watch(&links,
                    &(LinksEvent){.type = LINKS_EVENT_CHANGED,
                                  .link = &links_store[i],
                                  .mask = LINK_CHANGE_MODEM},
                    links_watch_userdata);
}

unsigned ofono_client_change_watch_add(OfonoClient *c, OfonoClientChangeFn fn, void *userdata)
{
        return 0; /* (no oFono client in the Core) */
}

void ofono_client_change_watch_remove(OfonoClient *c, unsigned id)
{
}

int ofono_client_roaming(OfonoClient *c, const char *ifname)
{
        return -ENOENT;
}

int stats_bus_setup(Stats *s, sd_bus_slot **ret)
{
        *ret = NULL;
        return 0;
}

/* BudgetChanged, as the bus would carry it: "APP LINKS STATE" lines. */
static char signals[1024];

void stats_bus_emit_budget(Stats *s, const char *app_id, const char *links_word, const char *state)
{
        size_t pos = strlen(signals);

        snprintf(signals + pos, sizeof(signals) - pos, "%s %s %s\n", app_id, links_word, state);
}

/* ---- the world ---- */

#define DIR_TEMPLATE "/tmp/roam-budget.XXXXXX"
static char dir[] = DIR_TEMPLATE;
static sd_event *event;
static Config *config;
static Reconcile *rc;
static Core core;
static Stats *stats;
static int stats_part; /* its part of the passes */

static void remove_dir(void)
{
        static const char *const files[] = {"usage.history", "usage.history.damaged", ""};

        if (streq(dir, DIR_TEMPLATE))
                return;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", dir, files[i]) >= 0)
                        (void)remove(p);
        }
        memcpy(dir, DIR_TEMPLATE, sizeof(dir));
}

static uint32_t slot_mark(uint32_t slot)
{
        return nft_slot_mark(config->apps.mark_mask, slot);
}

/* Usage with its budgets started against the world; the first install not yet run. */
static void start(void)
{
        stats = NULL;
        mm_changed = NULL;
        ASSERT_OK(stats_new(&core, &stats));
        ASSERT_OK(stats_set_apps(stats, (Apps *)&engine_token));
        ASSERT_TRUE(cgroup_watch);
        ASSERT_OK(stats_start(stats));
        ASSERT_TRUE(mm_changed);
        ASSERT_TRUE(links_watch);
        stats_part = stats_register(stats, rc);
        ASSERT_TRUE(stats_part > 0);
}

static void stop(void)
{
        reconcile_remove_part(rc, stats_part);
        stats_part = 0;
        stats = stats_free(stats);
}

static void setup(void)
{
        _cleanup_free_ char *conf = NULL;

        world = (FakeCore){};
        fake_budget = (FakeBudgetKernel){.fail_error = -ENOBUFS};
        signals[0] = 0;
        fake_timers_reset();
        if (streq(dir, DIR_TEMPLATE) && atexit(remove_dir) != 0)
                TEST_FAIL("atexit");
        remove_dir();
        ASSERT_TRUE(mkdtemp(dir));
        ASSERT_TRUE(asprintf(&conf,
                             "[Stats]\nDirectory=%s\n"
                             "Budget=" MAIL " cellular 500M month\n"
                             "Budget=" MAIL " roaming 0 month\n"
                             "Budget=" VIDEO " any 1G day\n",
                             dir) >= 0);
        ASSERT_OK(config_parse_string("roamd.conf", conf, strlen(conf), &config));
        ASSERT_OK(sd_event_new(&event));
        ASSERT_OK(reconcile_new(event, NULL, NULL, &rc));
        reconcile_set_txn(rc, &fake_budget_txn_ops, NULL, &engine_token);

        fake_link_add(&world, 3, "wlan0", BEARER_WIFI);
        fake_link_add(&world, 4, "wwan0", BEARER_CELLULAR);
        fake_link_add(&world, 5, "wwan1", BEARER_CELLULAR)->roaming = true;
        /* the apps' routing slots 1..3 */
        world.slots[1] = 4;
        world.slots[2] = 5;
        world.slots[3] = 3;
        links_from_world();
        core = (Core){.event = event,
                      .bus = (sd_bus *)&bus_token, /* (only the fakes see it) */
                      .config = config,
                      .links = &links,
                      .reconcile = rc,
                      .mm = (MMClient *)&mm_token};
        start();
}

static void teardown(void)
{
        stop();
        rc = reconcile_free(rc);
        fake_timers_reset();
        event = sd_event_unref(event);
        config = config_free(config);
        ASSERT_OK(access(dir, F_OK));
        remove_dir();
}

/* A cgroup of an app (or, app_id NULL, of the user) coming or going, as the cgroup tree says. */
static void cgroup(CgroupEvent ev, uint64_t id, const char *app_id)
{
        CgroupNode n = {.id = id,
                        .path = (char *)"user.slice/user-1000.slice/app.slice/x",
                        .level = 4,
                        .cls = {.kind = app_id ? CGROUP_KIND_APP : CGROUP_KIND_USER,
                                .app_id = (char *)app_id,
                                .uid = 1000}};

        ASSERT_TRUE(cgroup_watch);
        cgroup_watch((Apps *)&engine_token,
                     &(AppsCgroupEvent){.apps = (Apps *)&engine_token,
                                        .event = ev,
                                        .node = &n,
                                        .nft = apps_nft(NULL),
                                        .started = true},
                     cgroup_watch_userdata);
        fake_loop_run(event);
}

static const char *matches(size_t i)
{
        FakeQuota *q = fake_budget_quota(i);

        ASSERT_TRUE(q);
        return fake_quota_matches(q);
}

/* A string made with asprintf(), freed by the caller. */
#define FORMAT(...)                                                                                \
        ({                                                                                         \
                char *_s;                                                                          \
                ASSERT_TRUE(asprintf(&_s, __VA_ARGS__) >= 0);                                      \
                _s;                                                                                \
        })

/* The budget table comes with the install the kernel took, never before: each budget's app
 * cgroups, its links (cellular: both modems; roaming: the roaming one; any) and the marks of
 * the routing slots that lead there. */
TEST(stats_budgets_installed_with_the_pass)
{
        _cleanup_free_ char *cellular = NULL, *roaming = NULL;
        const StatsBudgetInfo *info;

        setup();
        cgroup(CGROUP_EVENT_ADDED, 100, MAIL);
        cgroup(CGROUP_EVENT_ADDED, 200, VIDEO);
        cgroup(CGROUP_EVENT_ADDED, 300, NULL);
        fake_budget.fail_next = 1;
        ASSERT_TRUE(reconcile_install(rc) < 0);
        ASSERT_TRUE(!fake_budget.table.exists);
        ASSERT_EQ(fake_budget.replaced, 0);

        ASSERT_OK(reconcile_install(rc));
        ASSERT_TRUE(fake_budget.table.exists);
        ASSERT_EQ(fake_budget.replaced, 1);
        ASSERT_EQ(fake_budget.table.n, 3);
        cellular = FORMAT("c100/4 i4,i5 m%x,m%x", slot_mark(1), slot_mark(2));
        ASSERT_STREQ(matches(0), cellular);
        ASSERT_EQ(fake_budget_quota(0)->limit, 500000000);
        roaming = FORMAT("c100/4 i5 m%x", slot_mark(2));
        ASSERT_STREQ(matches(1), roaming);
        ASSERT_EQ(fake_budget_quota(1)->limit, 0);
        ASSERT_STREQ(matches(2), "c200/4 any");
        ASSERT_EQ(fake_budget_quota(2)->limit, 1000000000);
        ASSERT_EQ(stats_budgets(stats, &info), 3);
        ASSERT_STREQ(info[0].quota, fake_budget_quota(0)->name);
        ASSERT_EQ(info[0].state, STATS_BUDGET_OK);
        teardown();
}

/* After the install the table follows: a link that starts roaming (the modem client's change),
 * an app's new and ended cgroups, a new link after a pass's read; each rebuild carries what
 * the quotas consumed; nothing changed, nothing is rebuilt; a user's cgroup is no app's. */
TEST(stats_budget_sync_follows_roaming_cgroups_links)
{
        _cleanup_free_ char *roaming = NULL, *cellular = NULL;
        unsigned replaced;

        setup();
        cgroup(CGROUP_EVENT_ADDED, 100, MAIL);
        ASSERT_OK(reconcile_install(rc));
        fake_budget_quota(0)->consumed = 123456;
        fake_budget_quota(1)->consumed = 0;

        /* wwan0 starts roaming */
        world.links[1].roaming = true;
        modem_change(1);
        ASSERT_EQ(fake_budget.replaced, 2);
        roaming = FORMAT("c100/4 i4,i5 m%x,m%x", slot_mark(1), slot_mark(2));
        ASSERT_STREQ(matches(1), roaming);
        ASSERT_EQ(fake_budget_quota(0)->consumed, 123456); /* carried into the new table */
        modem_change(1);
        ASSERT_EQ(fake_budget.replaced, 2); /* the same table: not rebuilt */

        cgroup(CGROUP_EVENT_ADDED, 101, MAIL);
        ASSERT_EQ(fake_budget.replaced, 3);
        ASSERT_TRUE(strncmp(matches(0), "c100/4,c101/4 ", 14) == 0);
        ASSERT_TRUE(strncmp(matches(1), "c100/4,c101/4 ", 14) == 0);
        replaced = fake_budget.replaced;
        cgroup(CGROUP_EVENT_ADDED, 300, NULL); /* the user's own: no budget names it */
        cgroup(CGROUP_EVENT_ADDED, 301, "org.example.Other");
        ASSERT_EQ(fake_budget.replaced, replaced);
        cgroup(CGROUP_EVENT_REMOVED, 101, MAIL);
        ASSERT_EQ(fake_budget.replaced, replaced + 1);
        ASSERT_TRUE(strncmp(matches(0), "c100/4 ", 7) == 0);
        ASSERT_EQ(fake_budget_quota(0)->consumed, 123456);

        /* a third modem: a pass reads the counters before links change, the budgets follow
         * once the change is made */
        fake_link_add(&world, 6, "wwan2", BEARER_CELLULAR);
        world.slots[4] = 6;
        ASSERT_OK(stats_read(stats));
        ASSERT_EQ(fake_budget.replaced, replaced + 1);
        links_from_world();
        fake_loop_run(event);
        ASSERT_EQ(fake_budget.replaced, replaced + 2);
        cellular = FORMAT("c100/4 i4,i5,i6 m%x,m%x,m%x", slot_mark(1), slot_mark(2), slot_mark(4));
        ASSERT_STREQ(matches(0), cellular);
        teardown();
}

/* What the quotas consumed decides each budget's state (BudgetChanged on each change); at a
 * period's end (the budget timer, on the fake clock: 2026-01-01 00:00 UTC at the start) the
 * budget gets a new quota that starts from zero, the others keep theirs. */
TEST(stats_budget_states_and_period_end)
{
        char month[64], day[64];
        FakeTimer *t;

        setup();
        cgroup(CGROUP_EVENT_ADDED, 100, MAIL);
        ASSERT_OK(reconcile_install(rc));
        snprintf(month, sizeof(month), "%s", fake_budget_quota(0)->name);
        snprintf(day, sizeof(day), "%s", fake_budget_quota(2)->name);
        ASSERT_OK(stats_budgets_read(stats));
        ASSERT_STREQ(signals, MAIL " roaming over\n"); /* 0 bytes: over from the start */
        signals[0] = 0;

        fake_budget_quota(0)->consumed = 300000000;
        ASSERT_OK(stats_budgets_read(stats));
        ASSERT_STREQ(signals, "");
        fake_budget_quota(0)->consumed = 400000000; /* 80 %: [Stats] BudgetWarning= */
        ASSERT_OK(stats_budgets_read(stats));
        ASSERT_STREQ(signals, MAIL " cellular warning\n");
        fake_budget_quota(0)->consumed = 500000000;
        ASSERT_OK(stats_budgets_read(stats));
        ASSERT_STREQ(signals, MAIL " cellular warning\n" MAIL " cellular over\n");
        signals[0] = 0;
        fake_budget_quota(2)->consumed = 900000000;

        /* the nearest period's end: the video budget's day, at midnight UTC */
        t = fake_timer_of_clock(stats, CLOCK_REALTIME);
        ASSERT_TRUE(t && fake_timer_armed(t));
        ASSERT_EQ(fake_timer_delay(t), 24 * 3600 * USEC_PER_SEC);
        fake_timer_fire(event, t);
        ASSERT_TRUE(!streq(fake_budget_quota(2)->name, day));
        ASSERT_EQ(fake_budget_quota(2)->consumed, 0);
        ASSERT_STREQ(fake_budget_quota(0)->name, month); /* the month goes on */
        ASSERT_EQ(fake_budget_quota(0)->consumed, 500000000);
        ASSERT_STREQ(signals, "");
        /* day by day to the month's end (February 1st) */
        for (int d = 2; d <= 31; d++) {
                ASSERT_EQ(fake_timer_delay(t), 24 * 3600 * USEC_PER_SEC);
                fake_timer_fire(event, t);
                if (d < 31)
                        ASSERT_STREQ(fake_budget_quota(0)->name, month);
        }
        ASSERT_TRUE(!streq(fake_budget_quota(0)->name, month));
        ASSERT_EQ(fake_budget_quota(0)->consumed, 0);
        ASSERT_STREQ(signals, MAIL " cellular ok\n");
        teardown();
}

/* A reboot empties the kernel: the use saved with the history seeds the new quotas of the
 * same period. */
TEST(stats_budget_use_survives_reboot)
{
        setup();
        cgroup(CGROUP_EVENT_ADDED, 100, MAIL);
        ASSERT_OK(reconcile_install(rc));
        fake_budget_quota(0)->consumed = 77000000;
        stop();                                  /* saves */
        fake_budget.table = (FakeBudgetTable){}; /* the reboot */
        fake_clock_advance(3600 * USEC_PER_SEC);
        start();
        cgroup(CGROUP_EVENT_ADDED, 100, MAIL);
        ASSERT_OK(reconcile_install(rc));
        ASSERT_TRUE(fake_budget.table.exists);
        ASSERT_EQ(fake_budget_quota(0)->consumed, 77000000);
        ASSERT_EQ(fake_budget_quota(2)->consumed, 0);
        teardown();
}
