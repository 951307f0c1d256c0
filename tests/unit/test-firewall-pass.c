/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The firewall's kernel side (roamd-firewall.c) through the real reconciler
 * (roamd-reconcile.c) into a fake kernel (fake-kernel.c, in place of roamd-firewall-nft.c):
 * a link's rules count as installed only once a commit took them, a refused commit leaves the
 * last good rules in force, listed by GetRules with the location in force (Link.Location; the
 * new one is Link.LocationWanted until then) and said by Manager.Degraded, and the retry (its
 * timer fired by the test, fake-timers.c) brings the kernel to what is wanted. */
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake-kernel.h"
#include "fake-timers.h"
#include "roam-macro.h"
#include "roam-util.h"
#include "roamd-apps.h"
#include "roamd-firewall.h"
#include "roamd-link-bus.h"
#include "roamd-links.h"
#include "roamd-core.h"
#include "roamd-netlink.h"
#include "roamd-wpa.h"
#include "test.h"

/* ---- the firewall's neighbours, counted ---- */

static unsigned watches, bus_changes, degraded_changes;
/* the names of the links' last PropertiesChanged, space-separated */
static char link_changed[256];

unsigned links_watch_add(Links *l, LinksWatchFn fn, void *userdata, WatchDestroyFn destroy)
{
        return ++watches;
}

void links_watch_remove(Links *l, unsigned id)
{
        if (id != 0)
                watches--;
}

void links_link_location_changed(Links *l, Link *link)
{
}

void link_bus_emit_changed_strv(Link *l, char **names)
{
        size_t n = 0;

        bus_changes++;
        link_changed[0] = 0;
        for (char **p = names; *p; p++)
                n += (size_t)snprintf(link_changed + n, sizeof(link_changed) - n, "%s%s",
                                      n > 0 ? " " : "", *p);
}

Link *links_get(Links *l, int ifindex)
{
        for (size_t i = 0; i < l->n_links; i++)
                if (l->links[i]->ifindex == ifindex)
                        return l->links[i];
        return NULL;
}

void core_emit_manager_changed(Core *c, const char *first, ...)
{
        bus_changes++;
}

App *apps_get(Apps *a, const char *id)
{
        return NULL;
}

unsigned apps_cgroup_watch_add(Apps *a, AppsCgroupFn fn, void *userdata)
{
        return 1;
}

void apps_cgroup_watch_remove(Apps *a, unsigned id)
{
}

/* ---- the world: one wired link at home, its files in a directory of the test's own ---- */

static const char networks[] = "[Network]\n"
                               "Location=home\n"
                               "Domain=home.example\n";
static const char home[] = "[Profile]\n"
                           "Location=home\n"
                           "[Rule]\n"
                           "Protocol=tcp\n"
                           "Port=22000\n";
static const char public[] = "[Profile]\n"
                             "Location=public\n"
                             "Inbound=drop\n";

#define DIR_TEMPLATE "/tmp/roam-fw-pass.XXXXXX"
static char dir[] = DIR_TEMPLATE;
/* link 3's inbound chain at home: the profile's rule (file:line), what firewalld's home zone
 * lets in (mDNS and Samba browsing two rules each, DHCPv6), ssh (SSH=trusted), home's default */
#define HOME_IN                                                                                    \
        "10-home.conf:3:accept built-in:mdns:accept built-in:mdns:accept "                         \
        "built-in:samba-client:accept built-in:samba-client:accept "                               \
        "built-in:dhcpv6-client:accept built-in:ssh:accept built-in:default:reject"
#define HOME_ROWS                                                                                  \
        "home in 10-home.conf:3 accept\n"                                                          \
        "home in built-in:mdns accept\n"                                                           \
        "home in built-in:samba-client accept\n"                                                   \
        "home in built-in:dhcpv6-client accept\n"                                                  \
        "home in built-in:ssh accept\n"                                                            \
        "home in built-in:default reject\n"                                                        \
        "home out built-in:default accept\n"
/* and in public (Inbound=drop) */
#define PUBLIC_IN "built-in:dhcpv6-client:accept built-in:ssh:accept built-in:default:drop"
#define PUBLIC_ROWS                                                                                \
        "public in built-in:dhcpv6-client accept\n"                                                \
        "public in built-in:ssh accept\n"                                                          \
        "public in built-in:default drop\n"                                                        \
        "public out built-in:default accept\n"

static sd_event *event;
static Config *config;
static Reconcile *rc;
static Links links;
static Link *link_table[1];
static Link eth;
static LinkAddress eth_addr = {.addr = {AF_INET, "192.0.2.5"}, .prefixlen = 24};
static char *eth_domains[] = {(char *)"home.example", NULL};
static Core core;
static Firewall *fw;
static FakeKernel kernel;

static void on_degraded(void *userdata)
{
        degraded_changes++;
}

static void write_at(const char *sub, const char *name, const char *text)
{
        _cleanup_free_ char *d = NULL, *p = NULL;

        ASSERT_TRUE(asprintf(&d, "%s/%s", dir, sub) >= 0);
        (void)mkdir(d, 0700);
        ASSERT_TRUE(asprintf(&p, "%s/%s", d, name) >= 0);
        ASSERT_OK(write_file_atomic(p, text, strlen(text)));
}

/* The test's files go also when a test failed half-way (its teardown skipped). */
static void remove_dir(void)
{
        static const char *const files[] = {"networks.d/10-home.conf",
                                            "firewall.d/10-home.conf",
                                            "firewall.d/20-public.conf",
                                            "locations.state",
                                            "networks.d",
                                            "firewall.d",
                                            ""};

        if (streq(dir, DIR_TEMPLATE))
                return;
        for (size_t i = 0; i < ELEMENTSOF(files); i++) {
                _cleanup_free_ char *p = NULL;
                if (asprintf(&p, "%s/%s", dir, files[i]) >= 0)
                        (void)remove(p);
        }
        memcpy(dir, DIR_TEMPLATE, sizeof(dir));
}

static void setup(void)
{
        _cleanup_free_ char *conf = NULL;

        watches = bus_changes = degraded_changes = 0;
        link_changed[0] = 0;
        kernel = (FakeKernel){.fail_error = -ENOBUFS};
        fake_timers_reset();
        if (streq(dir, DIR_TEMPLATE) && atexit(remove_dir) != 0)
                TEST_FAIL("atexit");
        remove_dir();
        ASSERT_TRUE(mkdtemp(dir));
        write_at("networks.d", "10-home.conf", networks);
        write_at("firewall.d", "10-home.conf", home);
        write_at("firewall.d", "20-public.conf", public);
        ASSERT_TRUE(asprintf(&conf,
                             "[Firewall]\nNetworksDirectory=%s/networks.d\n"
                             "ProfilesDirectory=%s/firewall.d\nStateFile=%s/locations.state\n",
                             dir, dir, dir) >= 0);
        ASSERT_OK(config_parse_string("roamd.conf", conf, strlen(conf), &config));
        free(config->dhcpcd_lease_dir); /* (no leases: none of the host's) */
        config->dhcpcd_lease_dir = strdup(dir);
        ASSERT_OK(sd_event_new(&event));
        ASSERT_OK(reconcile_new(event, on_degraded, NULL, &rc));
        reconcile_set_txn(rc, &fake_kernel_txn_ops, NULL, &kernel);

        eth = (Link){.ifindex = 3, .bearer = BEARER_ETHERNET};
        eth.info = (LinkInfo){.name = (char *)"eth0",
                              .admin_up = true,
                              .carrier = true,
                              .addrs = &eth_addr,
                              .n_addrs = 1,
                              .domains = eth_domains};
        /* what the links' facts stage found: a network named by its domain */
        eth.facts = (LinkFacts){.has_network = true};
        eth.facts.fact[NETID_INTERFACE] = (char *)"eth0";
        eth.facts.fact[NETID_BEARER] = (char *)"ethernet";
        eth.facts.fact[NETID_DOMAIN] = (char *)"home.example";
        snprintf(eth.facts.network_id, sizeof(eth.facts.network_id), "ethernet:if=eth0");
        link_table[0] = &eth;
        links = (Links){.links = link_table, .n_links = 1};
        core = (Core){.event = event, .config = config, .links = &links, .reconcile = rc};
        ASSERT_OK(firewall_new(&core, &fw));
        ASSERT_EQ(watches, 1);
}

static void teardown(void)
{
        fw = firewall_free(fw);
        ASSERT_EQ(watches, 0);
        rc = reconcile_free(rc);
        fake_timers_reset();
        event = sd_event_unref(event);
        config = config_free(config);
        ASSERT_TRUE(access(dir, F_OK) == 0);
        remove_dir();
}

/* GetRules' rows of link eth0 as "LOCATION DIRECTION ID ACTION" lines, "" none. */
static char *rules_of_eth0(void)
{
        FwRuleRow *rows = NULL;
        size_t n = 0, size = 0;
        char *s = NULL;
        FILE *f;

        ASSERT_OK(firewall_rules(fw, &rows, &n));
        f = open_memstream(&s, &size);
        ASSERT_TRUE(f);
        for (size_t i = 0; i < n; i++)
                if (streq(rows[i].link, "eth0"))
                        fprintf(f, "%s %s %s %s\n", rows[i].location, rows[i].direction, rows[i].id,
                                rows[i].action);
        ASSERT_TRUE(fclose(f) == 0);
        firewall_rules_free(rows, n);
        return s;
}

/* Link.Location: the location in force */
static const char *location_of_eth0(void)
{
        LinkIdentityView v;

        firewall_link_view(fw, eth.ifindex, &v);
        return v.location;
}

/* Link.LocationWanted: the network's location, in force or not */
static const char *wanted_of_eth0(void)
{
        LinkIdentityView v;

        firewall_link_view(fw, eth.ifindex, &v);
        return v.wanted;
}

/* Nothing counts as installed before a commit took it; the start's install commits the
 * home rules, and GetRules lists what the kernel has. */
TEST(firewall_installed_only_once_committed)
{
        _cleanup_free_ char *before = NULL, *after = NULL;
        const char *in;
        bool elem;

        setup();
        ASSERT_OK(firewall_start(fw));
        ASSERT_STREQ(wanted_of_eth0(), "home");
        ASSERT_STREQ(location_of_eth0(), ""); /* nothing in force yet */
        before = rules_of_eth0();
        ASSERT_STREQ(before, ""); /* located, but nothing in the kernel yet */
        ASSERT_TRUE(!fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, NULL));

        /* a refused install: still nothing installed (reconcile_install() returns the error
         * to its caller, the manager's start, and leaves Degraded to it) */
        kernel.fail_next = 1;
        ASSERT_TRUE(reconcile_install(rc) < 0);
        ASSERT_EQ(kernel.commits, 0);
        ASSERT_STREQ(reconcile_degraded(rc), "");
        free(before);
        before = rules_of_eth0();
        ASSERT_STREQ(before, "");
        ASSERT_STREQ(location_of_eth0(), "");

        ASSERT_OK(reconcile_install(rc));
        ASSERT_EQ(kernel.commits, 1);
        in = fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, &elem);
        ASSERT_TRUE(in && elem);
        ASSERT_STREQ(in, HOME_IN);
        ASSERT_TRUE(fake_kernel_chain(&kernel, 3, FW_DIRECTION_OUT, &elem) && elem);
        ASSERT_STREQ(fake_kernel_chain(&kernel, 3, FW_DIRECTION_OUT, NULL),
                     "built-in:default:accept");
        after = rules_of_eth0();
        ASSERT_STREQ(after, HOME_ROWS);
        ASSERT_STREQ(location_of_eth0(), "home");
        ASSERT_STREQ(wanted_of_eth0(), "home");
        teardown();
}

/* A location change whose commit the kernel refuses: the home rules stay in the kernel and
 * in GetRules, Degraded names the refusal; the retry commits the public rules, exactly once
 * (the chain rewritten, not created twice), and Degraded clears. */
TEST(firewall_refused_pass_keeps_last_good_rules)
{
        _cleanup_free_ char *kept = NULL, *now = NULL;
        FakeTimer *retry;
        bool elem;

        setup();
        ASSERT_OK(firewall_start(fw));
        ASSERT_OK(reconcile_install(rc));
        ASSERT_STREQ(fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, NULL), HOME_IN);
        ASSERT_STREQ(reconcile_degraded(rc), "");

        kernel.fail_next = 1;
        link_changed[0] = 0;
        ASSERT_OK(firewall_set_location(fw, &eth, "public"));
        ASSERT_STREQ(wanted_of_eth0(), "public"); /* what the user asked for */
        ASSERT_STREQ(location_of_eth0(), "home"); /* not in force before a commit took it */
        ASSERT_STREQ(link_changed, "");           /* said with the pass that carries it */
        reconcile_schedule(rc);
        fake_loop_run(event);
        ASSERT_STREQ(link_changed, "LocationWanted");
        ASSERT_EQ(kernel.refused, 1);
        ASSERT_EQ(kernel.commits, 1);
        ASSERT_STREQ(reconcile_degraded(rc),
                     "nftables transaction: No buffer space available; retrying");
        ASSERT_TRUE(reconcile_degraded_since(rc) > 0);
        ASSERT_EQ(degraded_changes, 1);
        /* in force: home's rules, in the kernel and in GetRules, labelled home; public is
         * wanted, not in force */
        ASSERT_STREQ(fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, &elem), HOME_IN);
        ASSERT_TRUE(elem);
        kept = rules_of_eth0();
        ASSERT_STREQ(kept, HOME_ROWS);
        ASSERT_STREQ(location_of_eth0(), "home");
        ASSERT_STREQ(wanted_of_eth0(), "public");

        /* the retry, 250 ms later by the reconciler's clock */
        retry = fake_timer_of(rc);
        ASSERT_TRUE(retry && fake_timer_armed(retry));
        ASSERT_EQ(fake_timer_delay(retry), 250 * USEC_PER_MSEC);
        fake_timer_fire(event, retry);
        ASSERT_EQ(kernel.refused, 1);
        ASSERT_EQ(kernel.commits, 2);
        ASSERT_STREQ(reconcile_degraded(rc), "");
        ASSERT_EQ(reconcile_degraded_since(rc), 0);
        ASSERT_EQ(degraded_changes, 2);
        /* rewritten in place (a chain created again would have kept home's rules) */
        ASSERT_STREQ(fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, &elem), PUBLIC_IN);
        ASSERT_TRUE(elem);
        now = rules_of_eth0();
        ASSERT_STREQ(now, PUBLIC_ROWS);
        ASSERT_STREQ(link_changed, "Location LocationSource LocationReason LocationWanted");
        ASSERT_STREQ(location_of_eth0(), "public");
        ASSERT_STREQ(wanted_of_eth0(), "public");
        teardown();
}

TEST(firewall_gone_link_chains_go_with_the_commit)
{
        bool elem;

        setup();
        ASSERT_OK(firewall_start(fw));
        ASSERT_OK(reconcile_install(rc));
        ASSERT_TRUE(fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, NULL));

        links.n_links = 0;
        firewall_links_changed(fw, false);
        kernel.fail_next = 2;
        reconcile_schedule(rc);
        fake_loop_run(event);
        ASSERT_TRUE(fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, &elem) && elem);
        fake_timer_fire(event, fake_timer_of(rc));
        ASSERT_EQ(kernel.refused, 2);
        ASSERT_EQ(fake_timer_delay(fake_timer_of(rc)), 500 * USEC_PER_MSEC); /* doubled */
        ASSERT_TRUE(fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, NULL));
        fake_timer_fire(event, fake_timer_of(rc));
        ASSERT_STREQ(reconcile_degraded(rc), "");
        ASSERT_TRUE(!fake_kernel_chain(&kernel, 3, FW_DIRECTION_IN, &elem) && !elem);
        ASSERT_TRUE(!fake_kernel_chain(&kernel, 3, FW_DIRECTION_OUT, &elem) && !elem);
        /* the link is forgotten now; a later pass has nothing to remove */
        reconcile_schedule(rc);
        fake_loop_run(event);
        ASSERT_EQ(kernel.refused, 2);
        ASSERT_STREQ(reconcile_degraded(rc), "");
        teardown();
}
