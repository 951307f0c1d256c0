/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The wake gate in table inet roam (docs/wake.md): set wake_gate holds the cgroup IDs of
 * wake-listed apps still waiting for their turn; chain wake_gate (output, before the class
 * chains) refuses their new connections fast: TCP with a reset, the rest with ICMP
 * administratively prohibited, never a silent drop. Loopback stays open. */

#include <stdbool.h>
#include <stdint.h>

typedef struct NftTxn NftTxn;

/* The set and the chain, into a transaction that replaced the table. */
int nft_wake_gate_install(NftTxn *t);
/* One cgroup in or out of the set. */
int nft_wake_gate_elem(NftTxn *t, uint64_t cgroup_id, bool add);
