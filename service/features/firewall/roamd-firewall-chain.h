/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What one link's firewall chain must hold (docs/firewall.md), from the model, the link's
 * location and the apps' cgroups (pure: no kernel, no manager). roamd-firewall.c builds the
 * chains with it, compares them with what the kernel has and hands what changed to
 * roamd-firewall-nft.c; tests/unit/test-firewall-chain.c checks the rules per location. */

#include <stdbool.h>
#include <stddef.h>

#include "roamd-config.h"
#include "roamd-firewall-conf.h"
#include "roamd-firewall-nft.h"

typedef struct FwChain {
        FwNftRule *rules;
        size_t n;
        FwAction final;
        char final_id[FW_NFT_ID_MAX];
} FwChain;

void fw_chain_done(FwChain *c);
bool fw_chain_equal(const FwChain *a, const FwChain *b);

/* The app's k-th cgroup (its level and id); false past the last one or for an app that does
 * not run. */
typedef bool (*fw_app_cgroup_t)(void *userdata, const char *app_id, size_t k, unsigned *ret_level,
                                uint64_t *ret_id);

/* Whether the built-in ssh rule (TCP 22 in) applies in location. */
bool fw_ssh_open(FirewallSsh ssh, const char *location);

/* The chain of direction dir of a link named ifname, of bearer, in location: the model's
 * rules that apply there in their order (an app's rule once per cgroup of the app, none while
 * it does not run), the built-in ssh rule inbound when ssh_open, then the location's default
 * (inbound) or accept (outbound). */
int fw_chain_build(const FwModel *m, const char *location, const char *ifname, Bearer bearer,
                   bool ssh_open, FwDirection dir, fw_app_cgroup_t app_cgroup, void *userdata,
                   FwChain *ret);
