/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake-kernel.h"
#include "roam-macro.h"

struct NftTxn {
        FakeKernel *kernel;
        FakeTables staged; /* what the kernel holds once this commits */
        int error;         /* the first operation the kernel would refuse */
};

static int txn_begin(void *userdata, NftTxn **ret)
{
        NftTxn *t = calloc(1, sizeof(*t));

        if (!t)
                return -ENOMEM;
        t->kernel = userdata;
        t->staged = t->kernel->tables;
        *ret = t;
        return 0;
}

static int txn_commit(NftTxn *t)
{
        FakeKernel *k = t->kernel;

        if (k->fail_next > 0) {
                k->fail_next--;
                k->refused++;
                return k->fail_error;
        }
        if (t->error < 0) {
                k->refused++;
                return t->error;
        }
        k->tables = t->staged;
        k->commits++;
        return 0;
}

static void txn_free(NftTxn *t)
{
        free(t);
}

const ReconcileTxnOps fake_kernel_txn_ops = {
    .begin = txn_begin,
    .commit = txn_commit,
    .free = txn_free,
};

static FakeChain *chain_of(FakeTables *tb, int ifindex, FwDirection dir, bool add)
{
        FakeChain *free_slot = NULL;

        for (size_t i = 0; i < FAKE_KERNEL_CHAINS; i++) {
                FakeChain *c = &tb->chains[i];
                if ((c->exists || c->elem) && c->ifindex == ifindex && c->dir == dir)
                        return c;
                if (!c->exists && !c->elem && !free_slot)
                        free_slot = c;
        }
        if (!add || !free_slot)
                return NULL;
        *free_slot = (FakeChain){.ifindex = ifindex, .dir = dir};
        return free_slot;
}

static void refuse(NftTxn *t, int error)
{
        if (t->error == 0)
                t->error = error;
}

int fw_nft_install(NftTxn *t)
{
        /* the table was replaced: nothing of the old one is left */
        t->staged = (FakeTables){.base = true};
        return 0;
}

int fw_nft_put_link(NftTxn *t, int ifindex, FwDirection dir, const FwNftRule *rules, size_t n,
                    FwAction final, const char *final_id, bool exists)
{
        FakeChain *c = chain_of(&t->staged, ifindex, dir, true);

        if (!c)
                return -ENOBUFS;
        if (exists) {
                /* NFT_MSG_DELRULE on the chain: it must be there */
                if (!c->exists)
                        refuse(t, -ENOENT);
                c->n = 0;
        }
        /* NFT_MSG_NEWCHAIN of a chain that exists keeps its rules */
        c->exists = true;
        for (size_t i = 0; i <= n; i++) {
                if (c->n >= FAKE_KERNEL_RULES)
                        return -ENOBUFS;
                snprintf(c->rules[c->n++], sizeof(c->rules[0]), "%s:%s",
                         i < n ? rules[i].id : final_id,
                         fw_action_to_string(i < n ? rules[i].action : final));
        }
        return 0;
}

int fw_nft_link_elem(NftTxn *t, int ifindex, FwDirection dir, bool add)
{
        FakeChain *c = chain_of(&t->staged, ifindex, dir, add);

        if (!add && (!c || !c->elem))
                refuse(t, -ENOENT);
        else if (add && !c)
                return -ENOBUFS;
        if (c)
                c->elem = add;
        return 0;
}

int fw_nft_del_link(NftTxn *t, int ifindex, FwDirection dir)
{
        FakeChain *c = chain_of(&t->staged, ifindex, dir, false);

        if (!c || !c->exists) {
                refuse(t, -ENOENT);
                return 0;
        }
        if (c->elem)
                refuse(t, -EBUSY); /* a chain the map still jumps to */
        c->exists = false;
        c->n = 0;
        return 0;
}

int fw_nft_counters(FwNftCounter **ret, size_t *ret_n)
{
        *ret = NULL;
        *ret_n = 0;
        return 0;
}

const char *fake_kernel_chain(FakeKernel *k, int ifindex, FwDirection dir, bool *ret_elem)
{
        static char buf[FAKE_KERNEL_RULES * (FW_NFT_ID_MAX + 17)];
        FakeChain *c = chain_of(&k->tables, ifindex, dir, false);
        size_t pos = 0;

        if (ret_elem)
                *ret_elem = c && c->elem;
        if (!c || !c->exists)
                return NULL;
        buf[0] = 0;
        for (size_t i = 0; i < c->n; i++)
                pos += (size_t)snprintf(buf + pos, sizeof(buf) - pos, "%s%s", i ? " " : "",
                                        c->rules[i]);
        return buf;
}
