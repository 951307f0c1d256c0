/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The fake kernel of the firewall's tests: the firewall's chains and map elements of table
 * inet roam as the kernel holds them, changed only by a committed transaction. It stands in
 * at link time for roamd-firewall-nft.c (fw_nft_*() write into the transaction) and gives the
 * reconciler its transactions (fake_kernel_txn_ops). Like nf_tables it takes a transaction
 * whole or not at all: a rule flush of a chain that does not exist or a removal of a missing
 * element fails the commit (-ENOENT), a chain created again keeps its rules (the new ones are
 * appended), and a commit can be made to fail (the kernel said no: nothing changes). */

#include <stdbool.h>
#include <stddef.h>

#include "roamd-firewall-nft.h"
#include "roamd-reconcile.h"

#define FAKE_KERNEL_CHAINS 8
#define FAKE_KERNEL_RULES  16

typedef struct FakeChain {
        int ifindex;
        FwDirection dir;
        bool exists;
        bool elem; /* the map element sending the link's packets to it */
        size_t n;
        char rules[FAKE_KERNEL_RULES][FW_NFT_ID_MAX + 16]; /* "ID:ACTION", the final last */
} FakeChain;

typedef struct FakeTables {
        bool base; /* fw_input/fw_output and their maps */
        FakeChain chains[FAKE_KERNEL_CHAINS];
} FakeTables;

typedef struct FakeKernel {
        FakeTables tables;
        unsigned commits;   /* transactions taken */
        unsigned refused;   /* transactions refused */
        unsigned fail_next; /* the next N commits fail with fail_error */
        int fail_error;
} FakeKernel;

extern const ReconcileTxnOps fake_kernel_txn_ops; /* userdata: the FakeKernel */

/* Link ifindex's chain of direction dir as "ID:ACTION ID:ACTION ..." (NULL: no such chain),
 * and whether its map element is there. */
const char *fake_kernel_chain(FakeKernel *k, int ifindex, FwDirection dir, bool *ret_elem);
