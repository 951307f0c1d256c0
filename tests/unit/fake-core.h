/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The fake core of the unit tests: what roamd's stateful modules ask the rest of roamd (which
 * links exist, their names and bearers, roaming; which cgroups belong to whom; an app's
 * cgroups; the hour) answered from hand-made tables, through the same seams the real core
 * fills (StatsAccountOps, the firewall's app cgroups). Linking it also registers the test
 * `runs_unprivileged`: under meson the unit tests run as nobody (run-unprivileged.sh). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roamd-bearer.h"
#include "roamd-firewall-chain.h"
#include "roamd-stats-account.h"

typedef struct FakeLink {
        uint32_t ifindex;
        const char *name;
        Bearer bearer;
        bool roaming;
        bool gone; /* removed from the registry: its counts keep their old name */
} FakeLink;

typedef struct FakeCgroup {
        uint64_t id;
        unsigned level;
        const char *owner;  /* "app:ID", "user:UID", "system"; NULL: not known (yet) */
        const char *app_id; /* the app it belongs to, NULL none */
} FakeCgroup;

#define FAKE_MAX 16

typedef struct FakeCore {
        FakeLink links[FAKE_MAX];
        size_t n_links;
        FakeCgroup cgroups[FAKE_MAX];
        size_t n_cgroups;
        /* routing slots: a marked packet counted on oif went out through slot (mark >> 8)'s
         * link, like roamd-stats.c's link_name() with the default mark layout */
        uint32_t slots[FAKE_MAX];
        uint64_t now_usec;  /* the clock: CLOCK_REALTIME µs */
        unsigned questions; /* how often a module asked the core something */
} FakeCore;

FakeLink *fake_link_add(FakeCore *c, uint32_t ifindex, const char *name, Bearer bearer);
FakeLink *fake_link(FakeCore *c, uint32_t ifindex);
FakeCgroup *fake_cgroup_add(FakeCore *c, uint64_t id, unsigned level, const char *owner,
                            const char *app_id);
uint32_t fake_hour(const FakeCore *c);
void fake_advance(FakeCore *c, uint64_t usec);

/* The seams as the real adapters fill them. */
extern const StatsAccountOps fake_stats_ops;
bool fake_app_cgroup(void *userdata, const char *app_id, size_t k, unsigned *ret_level,
                     uint64_t *ret_id);
