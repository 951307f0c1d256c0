/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdio.h>
#include <unistd.h>

#include "fake-core.h"
#include "roam-macro.h"
#include "test.h"

FakeLink *fake_link_add(FakeCore *c, uint32_t ifindex, const char *name, Bearer bearer)
{
        if (c->n_links >= FAKE_MAX)
                TEST_FAIL("fake core: too many links");
        c->links[c->n_links] = (FakeLink){.ifindex = ifindex, .name = name, .bearer = bearer};
        return &c->links[c->n_links++];
}

FakeLink *fake_link(FakeCore *c, uint32_t ifindex)
{
        for (size_t i = 0; i < c->n_links; i++)
                if (c->links[i].ifindex == ifindex)
                        return &c->links[i];
        return NULL;
}

FakeCgroup *fake_cgroup_add(FakeCore *c, uint64_t id, unsigned level, const char *owner,
                            const char *app_id)
{
        if (c->n_cgroups >= FAKE_MAX)
                TEST_FAIL("fake core: too many cgroups");
        c->cgroups[c->n_cgroups] =
            (FakeCgroup){.id = id, .level = level, .owner = owner, .app_id = app_id};
        return &c->cgroups[c->n_cgroups++];
}

uint32_t fake_hour(const FakeCore *c)
{
        return (uint32_t)(c->now_usec / USEC_PER_SEC / 3600);
}

void fake_advance(FakeCore *c, uint64_t usec)
{
        c->now_usec += usec;
}

static const char *stats_owner(void *userdata, uint64_t cgroup)
{
        FakeCore *c = userdata;

        c->questions++;
        for (size_t i = 0; i < c->n_cgroups; i++)
                if (c->cgroups[i].id == cgroup)
                        return c->cgroups[i].owner;
        return NULL;
}

static bool stats_link_exists(void *userdata, uint32_t ifindex)
{
        FakeLink *l = fake_link(userdata, ifindex);
        return l && !l->gone;
}

static const char *stats_link_name(void *userdata, uint32_t ifindex, uint32_t mark,
                                   char buf[static 16])
{
        FakeCore *c = userdata;
        FakeLink *l;

        if (mark != 0 && (mark >> 8) < FAKE_MAX && c->slots[mark >> 8] != 0)
                ifindex = c->slots[mark >> 8];
        l = fake_link(c, ifindex);
        if (l && !l->gone)
                return l->name;
        snprintf(buf, 16, "if%u", (unsigned)ifindex);
        return buf;
}

static bool stats_roaming(void *userdata, const char *link)
{
        FakeCore *c = userdata;

        for (size_t i = 0; i < c->n_links; i++)
                if (streq(c->links[i].name, link))
                        return c->links[i].roaming;
        return false;
}

const StatsAccountOps fake_stats_ops = {
    .owner = stats_owner,
    .link_exists = stats_link_exists,
    .link_name = stats_link_name,
    .roaming = stats_roaming,
};

bool fake_app_cgroup(void *userdata, const char *app_id, size_t k, unsigned *ret_level,
                     uint64_t *ret_id)
{
        FakeCore *c = userdata;

        c->questions++;
        for (size_t i = 0; i < c->n_cgroups; i++) {
                if (!streq_ptr(c->cgroups[i].app_id, app_id))
                        continue;
                if (k-- > 0)
                        continue;
                *ret_level = c->cgroups[i].level;
                *ret_id = c->cgroups[i].id;
                return true;
        }
        return false;
}

/* meson runs the unit suite through run-unprivileged.sh, which says so in ROAM_TEST_UNPRIVILEGED:
 * then these tests must really have run without root. */
TEST(runs_unprivileged)
{
        if (!getenv("ROAM_TEST_UNPRIVILEGED"))
                return;
        ASSERT_TRUE(getuid() != 0);
        ASSERT_TRUE(geteuid() != 0);
        ASSERT_TRUE(getegid() != 0);
        ASSERT_EQ(getgroups(0, NULL), 0);
}
