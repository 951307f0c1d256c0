/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The packet mark layout, apart from the engine so the configuration parser can check it. */
#include <errno.h>

#include "roamd-nft-mark.h"

int nft_mark_mask_valid(uint32_t mask)
{
        uint32_t m;

        if (mask == 0)
                return -EINVAL;
        m = mask >> __builtin_ctz(mask);
        if ((m & (m + 1)) != 0) /* not contiguous */
                return -EINVAL;
        if (__builtin_popcount(mask) < 3 || __builtin_popcount(mask) > 7)
                return -ERANGE;
        return 0;
}

uint32_t nft_slot_vpn(uint32_t mask)
{
        return mask >> __builtin_ctz(mask);
}

uint32_t nft_slot_max(uint32_t mask)
{
        return nft_slot_vpn(mask) - 1;
}

uint32_t nft_slot_mark(uint32_t mask, uint32_t slot)
{
        return (slot << __builtin_ctz(mask)) & mask;
}

uint32_t nft_free_mask(uint32_t used, unsigned width)
{
        if (width < 3 || width > 7)
                return 0;
        for (int shift = 32 - (int)width; shift >= 0; shift--) {
                uint32_t m = (uint32_t)(((1ULL << width) - 1) << shift);
                if (!(m & used))
                        return m;
        }
        return 0;
}
