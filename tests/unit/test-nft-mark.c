/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "roam-macro.h"
#include "roamd-nft.h"
#include "test.h"

/* A free mask for roamd, given the bits other programs use (their defaults). */
static const struct {
        const char *who;
        uint32_t used;
        unsigned width;
        uint32_t want;
} rows[] = {
    {"nobody", 0, 7, 0xfe000000},
    {"Calico", 0xffff0000, 7, 0x0000fe00},
    {"Calico + kube-proxy", 0xffff0000 | 0x4000 | 0x8000, 7, 0x00003f80},
    {"Tailscale", 0x00ff0000, 7, 0xfe000000},
    {"Cilium + wg-quick", 0x00000f00 | 0x0000ca6c, 7, 0xfe000000},
    {"roamd's default clashes with a foreign bit", 0x01000000, 7, 0xfe000000},
    {"a foreign bit at the top", 0x80000000, 7, 0x7f000000},
    {"everything", 0xffffffff, 3, 0},
    {"all but three low bits", 0xfffffff8, 3, 0x00000007},
    {"width out of range", 0, 2, 0},
    {"width out of range", 0, 8, 0},
};

TEST(free_mask_table)
{
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                uint32_t got = nft_free_mask(rows[i].used, rows[i].width);
                if (got != rows[i].want)
                        TEST_FAIL("%s: used 0x%08x width %u: got 0x%08x, want 0x%08x", rows[i].who,
                                  rows[i].used, rows[i].width, got, rows[i].want);
                if (got && (nft_mark_mask_valid(got) < 0 || (got & rows[i].used)))
                        TEST_FAIL("%s: 0x%08x is not a valid free mask", rows[i].who, got);
        }
}
